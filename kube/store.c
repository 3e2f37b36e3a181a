/* kube/store.c - layered object store with lock-free snapshot reads.
 *
 * A snapshot is a sorted array of (kind, namespace, name, object) entries;
 * lookups are binary searches and a namespace listing is a contiguous run.
 * We rebuild the whole array on every layer update rather than keep a
 * mutable index: updates are rare (a file changed, a watch event) and the
 * rebuild for ~10k objects costs about a millisecond, while readers, which
 * are on every admission, get the simplest possible structure.
 *
 * Reclamation uses hazard slots: a reader claims a free slot, writes the
 * snapshot pointer it is about to use into it and re-checks that it is still
 * current; the writer frees a retired snapshot only when no slot holds it. */
#include "kube/store.h"

#include "base/alloc.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define NSLOTS 128

typedef struct entry {
    const char *kind, *ns, *name; /* point into obj */
    json_object *obj;
    int layer;
} entry;

struct kube_snapshot {
    entry *e;
    size_t n;
    uint64_t gen;
    kube_snapshot *next_retired;
};

typedef struct layer {
    json_object **objs;
    size_t n;
    bool loaded;
} layer;

struct kube_store {
    _Atomic(kube_snapshot *) cur;
    _Atomic(const kube_snapshot *) hazard[NSLOTS];
    atomic_bool claimed[NSLOTS];
    pthread_mutex_t wmu; /* writers only */
    layer layers[KUBE_NLAYERS];
    kube_snapshot *retired;
    uint64_t gen;
};

json_object *kube_obj_get(json_object *obj, const char *path) {
    char key[128];
    while (obj && *path) {
        const char *dot = strchr(path, '.');
        size_t n = dot ? (size_t)(dot - path) : strlen(path);
        if (n >= sizeof key || json_object_get_type(obj) != json_type_object) return NULL;
        memcpy(key, path, n);
        key[n] = 0;
        if (!json_object_object_get_ex(obj, key, &obj)) return NULL;
        path += n + (dot ? 1 : 0);
    }
    return obj;
}

const char *kube_obj_str(json_object *obj, const char *path) {
    json_object *v = kube_obj_get(obj, path);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static int cmp3(const char *ak, const char *an, const char *am, const char *bk, const char *bn, const char *bm) {
    int c = strcmp(ak, bk);
    if (c) return c;
    if ((c = strcmp(an, bn))) return c;
    return strcmp(am, bm);
}

static int entry_cmp(const void *x, const void *y) {
    const entry *a = x, *b = y;
    int c = cmp3(a->kind, a->ns, a->name, b->kind, b->ns, b->name);
    return c ? c : a->layer - b->layer;
}

static void snapshot_free(kube_snapshot *s) {
    if (!s) return;
    for (size_t i = 0; i < s->n; i++) json_object_put(s->e[i].obj);
    free(s->e);
    free(s);
}

static bool pinned(kube_store *st, const kube_snapshot *s) {
    for (int i = 0; i < NSLOTS; i++)
        if (atomic_load(&st->hazard[i]) == s) return true;
    return false;
}

static size_t reclaim(kube_store *st) {
    kube_snapshot **pp = &st->retired;
    size_t freed = 0;
    while (*pp) {
        kube_snapshot *s = *pp;
        if (pinned(st, s)) { pp = &s->next_retired; continue; }
        *pp = s->next_retired;
        snapshot_free(s);
        freed++;
    }
    return freed;
}

/* Builds the merged snapshot from all layers; called under wmu. */
static kube_snapshot *build(kube_store *st) {
    size_t total = 0;
    for (int l = 0; l < KUBE_NLAYERS; l++) total += st->layers[l].n;
    kube_snapshot *s = xcalloc(1, sizeof *s);
    s->e = xcalloc(total ? total : 1, sizeof *s->e);
    size_t n = 0;
    for (int l = 0; l < KUBE_NLAYERS; l++) {
        for (size_t i = 0; i < st->layers[l].n; i++) {
            json_object *o = st->layers[l].objs[i];
            const char *kind = kube_obj_str(o, "kind"), *name = kube_obj_str(o, "metadata.name");
            const char *ns = kube_obj_str(o, "metadata.namespace");
            if (!kind || !name) continue;
            s->e[n++] = (entry){kind, ns ? ns : "", name, o, l};
        }
    }
    qsort(s->e, n, sizeof *s->e, entry_cmp);
    /* Keep the highest layer of equal keys: the last one after sorting. */
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && cmp3(s->e[i].kind, s->e[i].ns, s->e[i].name, s->e[i + 1].kind, s->e[i + 1].ns,
                              s->e[i + 1].name) == 0)
            continue;
        s->e[w] = s->e[i];
        json_object_get(s->e[w].obj);
        w++;
    }
    s->n = w;
    s->gen = ++st->gen;
    return s;
}

kube_store *kube_store_new(void) {
    kube_store *st = xcalloc(1, sizeof *st);
    pthread_mutex_init(&st->wmu, NULL);
    atomic_store(&st->cur, build(st));
    return st;
}

void kube_store_free(kube_store *st) {
    if (!st) return;
    snapshot_free(atomic_load(&st->cur));
    while (st->retired) {
        kube_snapshot *s = st->retired;
        st->retired = s->next_retired;
        snapshot_free(s);
    }
    for (int l = 0; l < KUBE_NLAYERS; l++) {
        for (size_t i = 0; i < st->layers[l].n; i++) json_object_put(st->layers[l].objs[i]);
        free(st->layers[l].objs);
    }
    pthread_mutex_destroy(&st->wmu);
    free(st);
}

void kube_store_set_layer(kube_store *st, int layer, json_object **objs, size_t n) {
    pthread_mutex_lock(&st->wmu);
    struct layer *L = &st->layers[layer];
    json_object **old = L->objs;
    size_t oldn = L->n;
    L->objs = objs;
    L->n = n;
    L->loaded = true;
    kube_snapshot *s = build(st);
    kube_snapshot *prev = atomic_exchange(&st->cur, s);
    prev->next_retired = st->retired;
    st->retired = prev;
    reclaim(st);
    /* The layer's own references go last: the new snapshot holds its own. */
    for (size_t i = 0; i < oldn; i++) json_object_put(old[i]);
    free(old);
    pthread_mutex_unlock(&st->wmu);
}

size_t kube_store_reclaim(kube_store *st) {
    pthread_mutex_lock(&st->wmu);
    size_t freed = reclaim(st);
    pthread_mutex_unlock(&st->wmu);
    return freed;
}

int kube_store_layer_loaded(kube_store *st, int layer) {
    pthread_mutex_lock(&st->wmu);
    int r = st->layers[layer].loaded;
    pthread_mutex_unlock(&st->wmu);
    return r;
}

kube_view kube_store_acquire(kube_store *st) {
    static _Thread_local unsigned hint;
    for (unsigned spins = 0;; spins++) {
        unsigned i = (hint + spins) % NSLOTS;
        bool f = false;
        if (!atomic_compare_exchange_strong(&st->claimed[i], &f, true)) {
            if (spins % NSLOTS == NSLOTS - 1) sched_yield();
            continue;
        }
        hint = i;
        kube_snapshot *s;
        do {
            s = atomic_load(&st->cur);
            atomic_store(&st->hazard[i], s);
        } while (atomic_load(&st->cur) != s);
        return (kube_view){s, (int)i};
    }
}

void kube_store_release(kube_store *st, kube_view *v) {
    if (v->slot < 0) return;
    atomic_store(&st->hazard[v->slot], NULL);
    atomic_store(&st->claimed[v->slot], false);
    v->slot = -1;
    v->snap = NULL;
}

static size_t lower_bound(const kube_snapshot *s, const char *kind, const char *ns, const char *name) {
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp3(s->e[mid].kind, s->e[mid].ns, s->e[mid].name, kind, ns, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

json_object *kube_snapshot_get(const kube_snapshot *s, const char *kind, const char *ns, const char *name) {
    if (!s || !kind || !name) return NULL;
    if (!ns) ns = "";
    size_t i = lower_bound(s, kind, ns, name);
    if (i < s->n && cmp3(s->e[i].kind, s->e[i].ns, s->e[i].name, kind, ns, name) == 0) return s->e[i].obj;
    return NULL;
}

void kube_snapshot_each(const kube_snapshot *s, const char *kind, const char *ns,
                        void (*fn)(void *arg, json_object *obj), void *arg) {
    if (!s || !kind) return;
    size_t i = lower_bound(s, kind, ns ? ns : "", "");
    for (; i < s->n && strcmp(s->e[i].kind, kind) == 0; i++) {
        if (ns && strcmp(s->e[i].ns, ns) != 0) break;
        fn(arg, s->e[i].obj);
    }
}

size_t kube_snapshot_count(const kube_snapshot *s, const char *kind) {
    size_t i = lower_bound(s, kind, "", ""), n = 0;
    for (; i < s->n && strcmp(s->e[i].kind, kind) == 0; i++) n++;
    return n;
}

size_t kube_snapshot_size(const kube_snapshot *s) { return s->n; }
uint64_t kube_snapshot_generation(const kube_snapshot *s) { return s->gen; }
