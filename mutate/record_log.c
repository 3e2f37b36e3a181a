/* mutate/record_log.c - the status record (record.h) written from the patch
 * diff's log (patch.c) instead of a second comparison of the two pods.
 *
 * The diff has already found every difference; its log gives, per
 * operation, the pairs of nodes it stood on (the container, its env list,
 * the entry). The record's layout is the one record.c's comparison
 * defines, and this file writes the same bytes: names added to the lists,
 * per container the env names and mount paths added and the original
 * entries rewritten, the other fields changed as their original values, in
 * the order the comparison would meet them. The text is written directly,
 * with no json-c tree for the record.
 *
 * Only what the engine does is handled: elements added, members added,
 * replaced or removed, entries edited in place. Anything else (an element
 * removed or replaced whole, a name changed, duplicate names, which the
 * comparison pairs by first occurrence) returns false and record.c compares
 * the pods as before. Builds with MUTATE_SELF_CHECK (the sanitizer and
 * valgrind builds every test suite runs) compute both and abort when they
 * differ. */
#include "mutate/internal.h"

#include "base/jtext.h"
#include "base/versions.h"
#include "mutate/record.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_OF(x) #x
#define TEXT_OF_VALUE(x) TEXT_OF(x)
#define RECORD_VERSION_TEXT TEXT_OF_VALUE(MUTATE_RECORD_VERSION) /* "1", as printf writes it */

/* The room of a request's lists and name sets: they nearly always fit in
 * one array on the stack, taken a piece at a time (a list that grows
 * takes a piece twice its size and leaves the old one), so that a record
 * costs no allocation for them; what does not fit goes to the heap. */
#define POOL_SLOTS 512
typedef struct pool {
    size_t used;
    const void *v[POOL_SLOTS];
} pool;

static const void **pool_take(pool *m, size_t n, bool *heap) {
    if (n <= POOL_SLOTS - m->used) {
        *heap = false;
        m->used += n;
        return &m->v[m->used - n];
    }
    *heap = true;
    return xmalloc(sizeof(void *) * n);
}

typedef struct plist {
    const void **v;
    size_t n, cap;
    bool heap;
} plist;

static void plist_push(pool *m, plist *l, const void *p) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 8;
        if (l->heap) {
            l->v = xrealloc(l->v, sizeof *l->v * cap);
        } else {
            const void **v = pool_take(m, cap, &l->heap);
            if (l->n) memcpy(v, l->v, sizeof *v * l->n);
            l->v = v;
        }
        l->cap = cap;
    }
    l->v[l->n++] = p;
}

static void plist_free(plist *l) {
    if (l->heap) free(l->v);
}

/* One pending unset or was of an object, in the order the comparison's
 * delta would create it: key (owned), value the original (was) or unset. */
typedef struct pend {
    char *key;
    json_object *val;
    bool unset;
} pend;

typedef struct pends {
    pend *v;
    size_t n, cap;
} pends;

static void pends_push(pends *l, char *key, json_object *val, bool unset) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 8;
        l->v = xrealloc(l->v, sizeof *l->v * l->cap);
    }
    l->v[l->n++] = (pend){key, val, unset};
}

static void pends_free(pends *l) {
    for (size_t i = 0; i < l->n; i++) free(l->v[i].key);
    free(l->v);
}

static const char *name_of(json_object *e, const char *key) {
    json_object *s = jw_member(e, key);
    return json_object_is_type(s, json_type_string) ? json_object_get_string(s) : NULL;
}

/* The names of a list's elements under key: a small open-addressing set,
 * linear in the list. */
typedef struct nameset {
    const char **slot;
    size_t mask;
    bool heap;
} nameset;

/* Eight bytes a step (FNV-1a's step on words), then mixed so that the low
 * bits the mask keeps depend on every byte. */
static uint64_t name_hash(const char *s) {
    size_t n = strlen(s);
    uint64_t h = 14695981039346656037ull ^ n, w;
    for (; n >= 8; s += 8, n -= 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 32;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* False when an element is unnamed or a name comes twice. */
static bool nameset_build(pool *m, nameset *ns, json_object *arr, const char *key) {
    size_t n = jlen(arr), cap = 16;
    while (cap < 2 * n) cap *= 2;
    ns->slot = (const char **)pool_take(m, cap, &ns->heap);
    memset(ns->slot, 0, sizeof *ns->slot * cap);
    ns->mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        const char *s = name_of(json_object_array_get_idx(arr, i), key);
        if (!s) return false;
        for (size_t j = name_hash(s) & ns->mask;; j = (j + 1) & ns->mask) {
            if (!ns->slot[j]) { ns->slot[j] = s; break; }
            if (!strcmp(ns->slot[j], s)) return false;
        }
    }
    return true;
}

static bool nameset_has(const nameset *ns, const char *s) {
    for (size_t j = name_hash(s) & ns->mask; ns->slot[j]; j = (j + 1) & ns->mask)
        if (!strcmp(ns->slot[j], s)) return true;
    return false;
}

static void nameset_free(nameset *ns) {
    if (ns->heap) free(ns->slot);
}


/* One existing container the injection changed (an `into` entry). */
typedef struct group {
    json_object *b;
    const char *name;
    bool init, env_unset, mounts_unset, mounts_checked;
    nameset env_names; /* the original env's, once an entry is added or edited */
    plist env, env_was, mounts;
    pends changed, removed;
    const char *last_key;  /* the member whose original is already kept */
    json_object *last_was; /* the env entry already kept */
} group;

/* The original env's name sets names_unique built, kept for env_change
 * (the first few; the others are built again if an entry is added). */
#define KEPT_ENVS 8

typedef struct rlog {
    pool *m;
    struct {
        json_object *env;
        nameset ns;
    } envs[KEPT_ENVS];
    size_t nenvs;
    /* The member names last found to be spec, LISTS, env, volumeMounts:
     * the operations stand on the same members one after the other (the
     * spec, one container's env), named by the same pointer. */
    const char *k_spec, *k_list[3], *k_env, *k_mounts;
    plist names[3];
    plist img[2]; /* per container list: name, image, name, image, ... */
    group *g;
    size_t ng, gcap;
    pends lab_changed, lab_removed, spec_changed, spec_removed;
    bool lab_whole, list_unset[3];
    const char *spec_last;
} rlog;

static const char *const LISTS[3] = {"containers", "initContainers", "volumes"};

/* Whether k is the literal lit: the first byte tells most keys apart
 * without a call. */
static inline bool is(const char *k, const char *lit) { return k[0] == lit[0] && strcmp(k, lit) == 0; }

/* is(), first against the pointer last found to be lit (in *hit). */
static inline bool is_memo(const char **hit, const char *k, const char *lit) {
    if (k == *hit) return true;
    if (!is(k, lit)) return false;
    *hit = k;
    return true;
}


/* prefix + "/" + key, escaped per RFC 6901. */
static char *pointer(const char *prefix, const char *key) {
    sbuf p = SBUF_INIT;
    sbuf_puts(&p, prefix);
    mutate_pointer_push(&p, key);
    return sbuf_take(&p, NULL);
}

/* How many elements of arr carry name under key (stops at two). */
static int count_named(json_object *arr, const char *key, const char *name) {
    int c = 0;
    for (size_t i = 0, n = jlen(arr); i < n && c < 2; i++) {
        const char *s = name_of(json_object_array_get_idx(arr, i), key);
        if (s && !strcmp(s, name)) c++;
    }
    return c;
}


/* The images object: the containers' then the init containers', a name
 * set twice keeping its first place with the last image (json-c's add). */
static void image_set(pool *m, plist *names, plist *vals, const char *name, const char *img) {
    for (size_t i = 0; i < names->n; i++)
        if (!strcmp(names->v[i], name)) {
            vals->v[i] = img;
            return;
        }
    plist_push(m, names, name);
    plist_push(m, vals, img);
}

static bool list_add(rlog *r, int l, json_object *e, json_object *orig_arr) {
    const char *name = name_of(e, "name");
    if (!name) return true; /* the comparison passes over unnamed elements */
    if (orig_arr && count_named(orig_arr, "name", name)) return false;
    plist_push(r->m, &r->names[l], name);
    const char *img = l < 2 ? name_of(e, "image") : NULL;
    if (img) {
        plist_push(r->m, &r->img[l], name);
        plist_push(r->m, &r->img[l], img);
    }
    return true;
}

/* A member of an object the comparison walks key by key (the spec, a
 * container): added, replaced, removed, or changed inside. */
static void member_change(const patch_change *c, unsigned d, const char *prefix, pends *changed, pends *removed,
                          const char **last) {
    const char *k = c->key[d];
    if (c->depth > d) {
        if (*last && !strcmp(*last, k)) return;
        *last = k;
        pends_push(changed, prefix ? pointer(prefix, k) : xstrdup(k), c->a[d], false);
        return;
    }
    *last = NULL;
    char *key = prefix ? pointer(prefix, k) : xstrdup(k);
    if (c->op == 'a') pends_push(changed, key, NULL, true);
    else if (c->op == 'r') pends_push(changed, key, c->a[d], false);
    else pends_push(removed, key, c->a[d], false);
}

/* The names of oenv, the original env of g's container: NULL when one is
 * missing or comes twice. */
static const nameset *env_names(rlog *r, group *g, json_object *oenv) {
    for (size_t i = 0; i < r->nenvs; i++)
        if (r->envs[i].env == oenv) return &r->envs[i].ns;
    if (!g->env_names.slot && !nameset_build(r->m, &g->env_names, oenv, "name")) return NULL;
    return &g->env_names;
}

static bool env_change(rlog *r, group *g, const patch_change *c) {
    pool *m = r->m;
    if (c->depth == 4) {
        if (c->op != 'a') return false;
        json_object *env = c->b[4];
        if (json_object_is_type(env, json_type_array))
            for (size_t i = 0; i < jlen(env); i++) {
                const char *s = name_of(json_object_array_get_idx(env, i), "name");
                if (!s) return false;
                plist_push(m, &g->env, s);
            }
        g->env_unset = true;
        return true;
    }
    json_object *oenv = c->a[4];
    if (!json_object_is_type(oenv, json_type_array)) return false;
    const nameset *names = env_names(r, g, oenv);
    if (!names) return false;
    if (c->depth == 5) {
        const char *s = name_of(c->b[5], "name");
        if (c->op != 'a' || !s || nameset_has(names, s)) return false;
        plist_push(m, &g->env, s);
        return true;
    }
    if (c->key[6] && is(c->key[6], "name")) return false;
    if (c->a[5] != g->last_was) plist_push(m, &g->env_was, c->a[5]);
    g->last_was = c->a[5];
    return true;
}

static bool mounts_change(pool *m, group *g, const patch_change *c) {
    if (c->depth == 4) {
        if (c->op != 'a') return false;
        json_object *ms = c->b[4];
        if (json_object_is_type(ms, json_type_array))
            for (size_t i = 0; i < jlen(ms); i++) {
                const char *s = name_of(json_object_array_get_idx(ms, i), "mountPath");
                if (!s) return false;
                plist_push(m, &g->mounts, s);
            }
        g->mounts_unset = true;
        return true;
    }
    if (c->depth != 5 || c->op != 'a') return false;
    json_object *om = c->a[4];
    if (!json_object_is_type(om, json_type_array)) return false;
    if (!g->mounts_checked) {
        for (size_t i = 0; i < jlen(om); i++)
            if (!name_of(json_object_array_get_idx(om, i), "mountPath")) return false;
        g->mounts_checked = true;
    }
    const char *s = name_of(c->b[5], "mountPath");
    if (!s || count_named(om, "mountPath", s)) return false;
    plist_push(m, &g->mounts, s);
    return true;
}

static group *group_for(rlog *r, const patch_change *c, bool init) {
    if (r->ng && r->g[r->ng - 1].b == c->b[3]) return &r->g[r->ng - 1];
    json_object *a = c->a[3], *b = c->b[3];
    const char *name = name_of(b, "name");
    if (!json_object_is_type(a, json_type_object) || !name) return NULL;
    if (r->ng == r->gcap) {
        r->gcap = r->gcap ? 2 * r->gcap : 4;
        r->g = xrealloc(r->g, sizeof *r->g * r->gcap);
    }
    group *g = &r->g[r->ng++];
    memset(g, 0, sizeof *g);
    g->b = b;
    g->name = name;
    g->init = init;
    return g;
}

/* Which of LISTS k is, or -1. */
static int list_of(rlog *r, const char *k) {
    switch (k[0]) {
    case 'c': return is_memo(&r->k_list[0], k, LISTS[0]) ? 0 : -1;
    case 'i': return is_memo(&r->k_list[1], k, LISTS[1]) ? 1 : -1;
    case 'v': return is_memo(&r->k_list[2], k, LISTS[2]) ? 2 : -1;
    default: return -1;
    }
}

static bool spec_change(rlog *r, const patch_change *c) {
    int l = list_of(r, c->key[2]);
    if (l < 0) {
        member_change(c, 2, "/spec", &r->spec_changed, &r->spec_removed, &r->spec_last);
        return true;
    }
    r->spec_last = NULL;
    if (c->depth == 2) {
        if (c->op != 'a') return false;
        r->list_unset[l] = true;
        json_object *arr = c->b[2];
        if (json_object_is_type(arr, json_type_array))
            for (size_t i = 0; i < jlen(arr); i++) list_add(r, l, json_object_array_get_idx(arr, i), NULL);
        return true;
    }
    if (c->depth == 3) return c->op == 'a' && list_add(r, l, c->b[3], c->a[2]);
    if (l == 2) return true; /* inside a volume: the comparison lists names only */
    group *g = group_for(r, c, l == 1);
    if (!g) return false;
    const char *k = c->key[4];
    if (!k || is(k, "name")) return false;
    if (is_memo(&r->k_env, k, "env")) return env_change(r, g, c);
    if (is_memo(&r->k_mounts, k, "volumeMounts")) return mounts_change(r->m, g, c);
    member_change(c, 4, NULL, &g->changed, &g->removed, &g->last_key);
    return true;
}

static bool take(rlog *r, const patch_change *c) {
    if (c->depth < 2 || !c->key[1] || !c->key[2]) return false;
    if (is_memo(&r->k_spec, c->key[1], "spec")) return spec_change(r, c);
    if (!is(c->key[1], "metadata") || !is(c->key[2], "labels")) return false;
    if (c->depth == 2) {
        if (c->op != 'a') return false;
        r->lab_whole = true;
        return true;
    }
    if (c->depth != 3) return false;
    char *key = pointer("/metadata/labels", c->key[3]);
    if (c->op == 'a') pends_push(&r->lab_changed, key, NULL, true);
    else if (c->op == 'r') pends_push(&r->lab_changed, key, c->a[3], false);
    else pends_push(&r->lab_removed, key, c->a[3], false);
    return true;
}

/* ---- the text ------------------------------------------------------------- */

/* The record's keys are literals, written as they are: QK("env") is the
 * text ,"env": (the comma left out before a first member) and its length. */
#define QK(k) ",\"" k "\":", sizeof(",\"" k "\":") - 1
static const struct {
    const char *q;
    size_t n;
} LIST_KEYS[3] = {{QK("containers")}, {QK("initContainers")}, {QK("volumes")}};

static void key(sbuf *o, bool *first, const char *qk, size_t n) {
    size_t skip = *first;
    *first = false;
    sbuf_add(o, qk + skip, n - skip);
}

static void strings(sbuf *o, bool *first, const char *qk, size_t n, const plist *l) {
    if (!l->n) return;
    key(o, first, qk, n);
    sbuf_putc(o, '[');
    for (size_t i = 0; i < l->n; i++) {
        if (i) sbuf_putc(o, ',');
        jtext_string(o, l->v[i], strlen(l->v[i]));
    }
    sbuf_putc(o, ']');
}

/* The unset list and the was object of pending entries, in the order
 * their first entry created them. */
typedef struct uw {
    pool *m;
    plist unset, wkey, wval;
    char first; /* 0, 'u' or 'w' */
} uw;

static void uw_add(uw *u, const pend *p) {
    if (!u->first) u->first = p->unset ? 'u' : 'w';
    if (p->unset) plist_push(u->m, &u->unset, p->key);
    else {
        plist_push(u->m, &u->wkey, p->key);
        plist_push(u->m, &u->wval, p->val);
    }
}

static void uw_adds(uw *u, const pends *l) {
    for (size_t i = 0; i < l->n; i++) uw_add(u, &l->v[i]);
}

static void uw_was(sbuf *o, bool *first, const uw *u) {
    if (!u->wkey.n) return;
    key(o, first, QK("was"));
    sbuf_putc(o, '{');
    for (size_t i = 0; i < u->wkey.n; i++) {
        if (i) sbuf_putc(o, ',');
        jtext_string(o, u->wkey.v[i], strlen(u->wkey.v[i]));
        sbuf_putc(o, ':');
        jtext_append(o, (json_object *)u->wval.v[i]);
    }
    sbuf_putc(o, '}');
}

static void uw_write(sbuf *o, bool *first, const uw *u) {
    if (u->first == 'u') {
        strings(o, first, QK("unset"), &u->unset);
        uw_was(o, first, u);
    } else if (u->first == 'w') {
        uw_was(o, first, u);
        strings(o, first, QK("unset"), &u->unset);
    }
}

static void uw_free(uw *u) {
    plist_free(&u->unset);
    plist_free(&u->wkey);
    plist_free(&u->wval);
}

static void group_write(sbuf *o, pool *m, const group *g) {
    sbuf_lit(o, "{\"name\":");
    jtext_string(o, g->name, strlen(g->name));
    bool first = false;
    if (g->init) sbuf_lit(o, ",\"init\":true");
    strings(o, &first, QK("env"), &g->env);
    if (g->env_was.n) {
        key(o, &first, QK("envWas"));
        sbuf_putc(o, '[');
        for (size_t i = 0; i < g->env_was.n; i++) {
            if (i) sbuf_putc(o, ',');
            jtext_append(o, (json_object *)g->env_was.v[i]);
        }
        sbuf_putc(o, ']');
    }
    strings(o, &first, QK("volumeMounts"), &g->mounts);
    uw u = {.m = m};
    pend env = {"env", NULL, true}, mounts = {"volumeMounts", NULL, true};
    if (g->env_unset) uw_add(&u, &env);
    if (g->mounts_unset) uw_add(&u, &mounts);
    uw_adds(&u, &g->changed);
    uw_adds(&u, &g->removed);
    uw_write(o, &first, &u);
    uw_free(&u);
    sbuf_putc(o, '}');
}

static void rlog_free(rlog *r) {
    for (int i = 0; i < 3; i++) plist_free(&r->names[i]);
    plist_free(&r->img[0]);
    plist_free(&r->img[1]);
    for (size_t i = 0; i < r->ng; i++) {
        group *g = &r->g[i];
        plist_free(&g->env);
        plist_free(&g->env_was);
        plist_free(&g->mounts);
        nameset_free(&g->env_names);
        pends_free(&g->changed);
        pends_free(&g->removed);
    }
    free(r->g);
    for (size_t i = 0; i < r->nenvs; i++) nameset_free(&r->envs[i].ns);
    pends_free(&r->lab_changed);
    pends_free(&r->lab_removed);
    pends_free(&r->spec_changed);
    pends_free(&r->spec_removed);
}

/* Names unique within each container list: the comparison pairs a
 * container with the first original of its name. */
static bool names_unique(rlog *r, json_object *const lists[2]) {
    for (int l = 0; l < 2; l++) {
        json_object *arr = lists[l];
        for (size_t i = 0; i < jlen(arr); i++) {
            json_object *e = json_object_array_get_idx(arr, i), *env, *mounts;
            const char *name = name_of(e, "name");
            for (size_t j = 0; name && j < i; j++) {
                const char *other = name_of(json_object_array_get_idx(arr, j), "name");
                if (other && !strcmp(other, name)) return false;
            }
            /* An untouched container is compared too: duplicate env names
             * there give the comparison's pairing of first occurrences. */
            if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "env", &env) &&
                json_object_is_type(env, json_type_array)) {
                nameset ns;
                size_t used = r->m->used;
                bool unique = nameset_build(r->m, &ns, env, "name");
                if (unique && r->nenvs < KEPT_ENVS) {
                    r->envs[r->nenvs].env = env;
                    r->envs[r->nenvs++].ns = ns;
                } else {
                    nameset_free(&ns);
                    r->m->used = used; /* given back: nothing else took room since */
                }
                if (!unique) return false;
            }
            /* And a mount without a path makes it keep the whole list. */
            if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, "volumeMounts", &mounts) &&
                json_object_is_type(mounts, json_type_array))
                for (size_t k = 0; k < jlen(mounts); k++)
                    if (!name_of(json_object_array_get_idx(mounts, k), "mountPath")) return false;
        }
    }
    return true;
}

bool record_text_from_log(json_object *orig, const mutate_result *res, const patch_log *log, sbuf *o) {
    json_object *spec = jmap(orig, "spec");
    if (!spec) return false;
    json_object *cl[2] = {jarr(spec, "containers"), jarr(spec, "initContainers")};
    if (jlen(cl[0]) > 64 || jlen(cl[1]) > 64) return false;
    pool m;
    m.used = 0;
    rlog r;
    memset(&r, 0, sizeof r);
    r.m = &m;
    bool ok = names_unique(&r, cl);
    for (size_t i = 0; i < log->n && ok; i++) ok = take(&r, &log->v[i]);
    if (!ok) {
        rlog_free(&r);
        return false;
    }

    /* What the annotation itself adds (mutate_record_apply does the same
     * on the compared record): into the record's unset or was, or new
     * keys after the rest. */
    uw rest = {.m = &m};
    uw_adds(&rest, &r.lab_changed);
    uw_adds(&rest, &r.lab_removed);
    pend whole = {"/metadata/labels", NULL, true};
    if (r.lab_whole) uw_add(&rest, &whole);
    uw_adds(&rest, &r.spec_changed);
    uw_adds(&rest, &r.spec_removed);
    pend lists[3] = {{"/spec/containers", NULL, true}, {"/spec/initContainers", NULL, true}, {"/spec/volumes", NULL, true}};
    for (int l = 0; l < 3; l++)
        if (r.list_unset[l]) uw_add(&rest, &lists[l]);
    bool had_unset = rest.unset.n > 0, had_was = rest.wkey.n > 0;
    json_object *om, *oa, *old;
    pend extra = {NULL, NULL, true};
    if (!json_object_object_get_ex(orig, "metadata", &om)) extra.key = "/metadata";
    else if (!json_object_is_type(om, json_type_object)) extra = (pend){"/metadata", NULL, false};
    else if (!json_object_object_get_ex(om, "annotations", &oa)) extra.key = "/metadata/annotations";
    else if (!json_object_is_type(oa, json_type_object)) extra = (pend){"/metadata/annotations", NULL, false};
    else if (json_object_object_get_ex(oa, MUTATE_RECORD_KEY, &old))
        extra = (pend){"/metadata/annotations/otel-webhook~1status", old, false};
    bool extra_new = false;
    if (extra.key) {
        /* Into the record's own unset/was when the rest made one, else a
         * new key at the end (lazy creation on the record). */
        extra_new = extra.unset ? !had_unset : !had_was;
        if (!extra_new) {
            if (extra.unset) plist_push(&m, &rest.unset, extra.key);
            else {
                plist_push(&m, &rest.wkey, extra.key);
                plist_push(&m, &rest.wval, extra.val);
            }
        }
    }

    bool first = false;
    sbuf_lit(o, "{\"v\":" RECORD_VERSION_TEXT ",\"engine\":");
    jtext_string(o, OTEL_WEBHOOK_VERSION, sizeof OTEL_WEBHOOK_VERSION - 1);
    for (int l = 0; l < 3; l++) strings(o, &first, LIST_KEYS[l].q, LIST_KEYS[l].n, &r.names[l]);
    bool any = false;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r.ng; i++) {
            if (r.g[i].init != (pass == 0)) continue;
            if (!any) sbuf_lit(o, ",\"into\":[");
            else sbuf_putc(o, ',');
            any = true;
            group_write(o, &m, &r.g[i]);
        }
    if (any) sbuf_putc(o, ']');
    uw_write(o, &first, &rest);
    if (res->uses) {
        key(o, &first, QK("uses"));
        jtext_append(o, res->uses);
    }
    plist iname = {0}, ival = {0};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i + 1 < r.img[l].n; i += 2) image_set(&m, &iname, &ival, r.img[l].v[i], r.img[l].v[i + 1]);
    if (iname.n) {
        key(o, &first, QK("images"));
        sbuf_putc(o, '{');
        for (size_t i = 0; i < iname.n; i++) {
            if (i) sbuf_putc(o, ',');
            jtext_string(o, iname.v[i], strlen(iname.v[i]));
            sbuf_putc(o, ':');
            jtext_string(o, ival.v[i], strlen(ival.v[i]));
        }
        sbuf_putc(o, '}');
    }
    plist_free(&iname);
    plist_free(&ival);
    if (extra_new) {
        uw e = {.m = &m};
        uw_add(&e, &extra);
        uw_write(o, &first, &e);
        uw_free(&e);
    }
    sbuf_putc(o, '}');
    uw_free(&rest);
    rlog_free(&r);
    return true;
}
