/* tests/unit/test_kube.c - the layered snapshot store and manifest folders
 * (kube/), the settings file (mutate/settings.c) and the defaulting objects
 * get as they enter the store (mutate/defaults.c, collector/defaults.c).
 *
 * Expectations are exact texts (stored objects as compact JSON, log lines,
 * error messages). Store objects are printed with jtext, which,
 * unlike json_object_to_json_string, writes nothing into the object. */
#include "base/alloc.h"
#include "base/jtext.h"

#include "collector/defaults.h"
#include "kube/file.h"
#include "kube/filesource.h"
#include "kube/log.h"
#include "kube/store.h"
#include "kube/yaml.h"
#include "mutate/defaults.h"
#include "mutate/mutate.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdarg.h>
#include <fcntl.h>
#include <ftw.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define EQ(got_expr, want)                                                                                             \
    do {                                                                                                               \
        char *got_ = (got_expr);                                                                                       \
        ck_assert_str_eq(got_, want);                                                                                  \
        free(got_);                                                                                                    \
    } while (0)

/* Compact JSON of a (possibly shared) object without touching it. */
static char *js(json_object *o) { return jtext(o, NULL); }

/* ---- store helpers ------------------------------------------------------ */

/* {"kind":K,"metadata":{"name":N,"namespace":NS,"labels":{"src":L}}} */
static json_object *mk(const char *kind, const char *ns, const char *name, const char *label) {
    json_object *o = json_object_new_object(), *m = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string(kind));
    json_object_object_add(m, "name", json_object_new_string(name));
    if (ns) json_object_object_add(m, "namespace", json_object_new_string(ns));
    if (label) {
        json_object *l = json_object_new_object();
        json_object_object_add(l, "src", json_object_new_string(label));
        json_object_object_add(m, "labels", l);
    }
    json_object_object_add(o, "metadata", m);
    return o;
}

static json_object **arr(size_t n, ...) {
    va_list ap;
    json_object **a = calloc(n ? n : 1, sizeof *a);
    va_start(ap, n);
    for (size_t i = 0; i < n; i++) a[i] = va_arg(ap, json_object *);
    va_end(ap);
    return a;
}

static const char *src_of(json_object *o) { return kube_obj_str(o, "metadata.labels.src"); }

/* kube_snapshot_each collector: "ns/name=src," for every object. */
typedef struct listing {
    char buf[1024];
} listing;

static void add_listing(void *arg, json_object *o) {
    listing *l = arg;
    const char *ns = kube_obj_str(o, "metadata.namespace"), *src = src_of(o);
    size_t n = strlen(l->buf);
    snprintf(l->buf + n, sizeof l->buf - n, "%s/%s=%s,", ns ? ns : "", kube_obj_str(o, "metadata.name"),
             src ? src : "");
}

static char *each_text(const kube_snapshot *s, const char *kind, const char *ns) {
    listing l = {""};
    kube_snapshot_each(s, kind, ns, add_listing, &l);
    return strdup(l.buf);
}

/* ---- store -------------------------------------------------------------- */

START_TEST(store_layers_get_each_count) {
    kube_store *st = kube_store_new();
    kube_store_set_layer(st, KUBE_LAYER_FILES,
                         arr(7, mk("Instrumentation", "b", "x", "files"), mk("Instrumentation", "a", "z", "files"),
                             mk("Instrumentation", "a", "y", "files"), mk("Instrumentation", "c", "a", "files"),
                             mk("Namespace", NULL, "a", "files"), mk("OpenTelemetryCollector", "a", "y", "files"),
                             mk("Secret", "a", "s", "files")),
                         7);
    kube_store_set_layer(st, KUBE_LAYER_LIVE,
                         arr(3, mk("Instrumentation", "a", "z", "live"), mk("Namespace", NULL, "a", "live"),
                             mk("Instrumentation", "a", "w", "live")),
                         3);
    kube_store_set_layer(st, KUBE_LAYER_INPUT, arr(1, mk("Instrumentation", "a", "z", "input")), 1);
    kube_view v = kube_store_acquire(st);
    ck_assert_int_ge(v.slot, 0);
    /* The highest layer wins for the same kind/namespace/name. */
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "Instrumentation", "a", "z")), "input");
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "Instrumentation", "a", "y")), "files");
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "Instrumentation", "a", "w")), "live");
    /* Same name, different kind or namespace: different objects. */
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "OpenTelemetryCollector", "a", "y")), "files");
    ck_assert_ptr_null(kube_snapshot_get(v.snap, "Instrumentation", "b", "y"));
    ck_assert_ptr_null(kube_snapshot_get(v.snap, "Instrumentation", "a", "nope"));
    ck_assert_ptr_null(kube_snapshot_get(v.snap, "Nope", "a", "y"));
    ck_assert_ptr_null(kube_snapshot_get(v.snap, NULL, "a", "y"));
    ck_assert_ptr_null(kube_snapshot_get(v.snap, "Instrumentation", "a", NULL));
    /* Cluster-scoped kinds are looked up with ns NULL. */
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "Namespace", NULL, "a")), "live");
    ck_assert_ptr_null(kube_snapshot_get(v.snap, "Namespace", NULL, "b"));
    /* Sorted by namespace, then name; merged across layers. */
    EQ(each_text(v.snap, "Instrumentation", NULL), "a/w=live,a/y=files,a/z=input,b/x=files,c/a=files,");
    EQ(each_text(v.snap, "Instrumentation", "a"), "a/w=live,a/y=files,a/z=input,");
    EQ(each_text(v.snap, "Instrumentation", "c"), "c/a=files,");
    EQ(each_text(v.snap, "Instrumentation", "aa"), "");
    EQ(each_text(v.snap, "Instrumentation", ""), "");
    EQ(each_text(v.snap, "Namespace", NULL), "/a=live,");
    EQ(each_text(v.snap, "OpenTelemetryCollector", NULL), "a/y=files,");
    EQ(each_text(v.snap, "ConfigMap", NULL), "");
    EQ(each_text(v.snap, "Z", NULL), "");
    ck_assert_uint_eq(kube_snapshot_count(v.snap, "Instrumentation"), 5);
    ck_assert_uint_eq(kube_snapshot_count(v.snap, "Namespace"), 1);
    ck_assert_uint_eq(kube_snapshot_count(v.snap, "Secret"), 1);
    ck_assert_uint_eq(kube_snapshot_count(v.snap, "ConfigMap"), 0);
    ck_assert_uint_eq(kube_snapshot_size(v.snap), 8);
    kube_store_release(st, &v);
    ck_assert_int_eq(v.slot, -1);
    ck_assert_ptr_null(v.snap);
    kube_store_release(st, &v); /* a second release is a no-op */

    /* Emptying the higher layers brings the lower layer's objects back. */
    kube_store_set_layer(st, KUBE_LAYER_INPUT, NULL, 0);
    kube_store_set_layer(st, KUBE_LAYER_LIVE, NULL, 0);
    v = kube_store_acquire(st);
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "Instrumentation", "a", "z")), "files");
    ck_assert_str_eq(src_of(kube_snapshot_get(v.snap, "Namespace", NULL, "a")), "files");
    ck_assert_ptr_null(kube_snapshot_get(v.snap, "Instrumentation", "a", "w"));
    ck_assert_uint_eq(kube_snapshot_size(v.snap), 7);
    kube_store_release(st, &v);
    kube_store_free(st);
}
END_TEST

START_TEST(store_skips_objects_without_kind_or_name) {
    kube_store *st = kube_store_new();
    json_object *nokind = mk("X", "a", "n", NULL), *noname = mk("ConfigMap", "a", "n", NULL);
    json_object_object_del(nokind, "kind");
    json_object_object_del(json_object_object_get(noname, "metadata"), "name");
    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(3, nokind, noname, mk("ConfigMap", "a", "ok", "f")), 3);
    kube_view v = kube_store_acquire(st);
    ck_assert_uint_eq(kube_snapshot_size(v.snap), 1);
    EQ(each_text(v.snap, "ConfigMap", NULL), "a/ok=f,");
    kube_store_release(st, &v);
    kube_store_free(st);
}
END_TEST

START_TEST(store_generation_and_loaded) {
    kube_store *st = kube_store_new();
    kube_view v = kube_store_acquire(st);
    uint64_t g0 = kube_snapshot_generation(v.snap);
    ck_assert_uint_eq(kube_snapshot_size(v.snap), 0);
    kube_store_release(st, &v);
    for (int l = 0; l < KUBE_NLAYERS; l++) ck_assert_int_eq(kube_store_layer_loaded(st, l), 0);

    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, mk("ConfigMap", "a", "b", NULL)), 1);
    ck_assert_int_eq(kube_store_layer_loaded(st, KUBE_LAYER_FILES), 1);
    ck_assert_int_eq(kube_store_layer_loaded(st, KUBE_LAYER_LIVE), 0);
    v = kube_store_acquire(st);
    ck_assert_uint_eq(kube_snapshot_generation(v.snap), g0 + 1);
    kube_store_release(st, &v);

    /* An empty layer still counts as loaded and still makes a generation. */
    kube_store_set_layer(st, KUBE_LAYER_LIVE, NULL, 0);
    ck_assert_int_eq(kube_store_layer_loaded(st, KUBE_LAYER_LIVE), 1);
    ck_assert_int_eq(kube_store_layer_loaded(st, KUBE_LAYER_INPUT), 0);
    v = kube_store_acquire(st);
    ck_assert_uint_eq(kube_snapshot_generation(v.snap), g0 + 2);
    kube_store_release(st, &v);

    /* Same content again: still a new generation. */
    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, mk("ConfigMap", "a", "b", NULL)), 1);
    v = kube_store_acquire(st);
    ck_assert_uint_eq(kube_snapshot_generation(v.snap), g0 + 3);
    kube_store_release(st, &v);
    kube_store_free(st);
}
END_TEST

/* Counts frees of objects tagged with count_frees(). */
static int freed;
static void on_free(json_object *o, void *ud) {
    (void)o;
    (void)ud;
    freed++;
}
static json_object *count_frees(json_object *o) {
    json_object_set_userdata(o, NULL, on_free);
    return o;
}

START_TEST(store_snapshot_isolation) {
    kube_store *st = kube_store_new();
    freed = 0;
    kube_store_set_layer(st, KUBE_LAYER_FILES,
                         arr(2, count_frees(mk("ConfigMap", "a", "one", "old")), mk("ConfigMap", "a", "two", "old")), 2);
    kube_view old = kube_store_acquire(st);
    uint64_t gold = kube_snapshot_generation(old.snap);
    json_object *o1 = kube_snapshot_get(old.snap, "ConfigMap", "a", "one");

    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, mk("ConfigMap", "a", "three", "new")), 1);
    ck_assert_int_eq(freed, 0); /* pinned by the old view */
    /* The old view still sees the old objects, intact (ASan checks the reads). */
    ck_assert_ptr_eq(kube_snapshot_get(old.snap, "ConfigMap", "a", "one"), o1);
    ck_assert_str_eq(src_of(o1), "old");
    EQ(each_text(old.snap, "ConfigMap", NULL), "a/one=old,a/two=old,");
    ck_assert_ptr_null(kube_snapshot_get(old.snap, "ConfigMap", "a", "three"));
    ck_assert_uint_eq(kube_snapshot_generation(old.snap), gold);

    kube_view cur = kube_store_acquire(st);
    ck_assert_int_ne(cur.slot, old.slot);
    ck_assert_uint_eq(kube_snapshot_generation(cur.snap), gold + 1);
    EQ(each_text(cur.snap, "ConfigMap", NULL), "a/three=new,");
    ck_assert_ptr_null(kube_snapshot_get(cur.snap, "ConfigMap", "a", "one"));
    kube_store_release(st, &cur);

    /* Released, but reclamation is the writer's job: freed on its next update. */
    EQ(each_text(old.snap, "ConfigMap", "a"), "a/one=old,a/two=old,");
    kube_store_release(st, &old);
    ck_assert_int_eq(freed, 0);
    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, mk("ConfigMap", "a", "four", "newer")), 1);
    ck_assert_int_eq(freed, 1);

    /* Unpinned snapshots go at once. */
    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, count_frees(mk("ConfigMap", "a", "five", NULL))), 1);
    ck_assert_int_eq(freed, 1);
    kube_store_set_layer(st, KUBE_LAYER_FILES, NULL, 0);
    ck_assert_int_eq(freed, 2);

    /* A snapshot still pinned when the store goes is freed with it (LSan). */
    kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, count_frees(mk("ConfigMap", "a", "six", NULL))), 1);
    kube_view pinned = kube_store_acquire(st);
    kube_store_set_layer(st, KUBE_LAYER_FILES, NULL, 0);
    ck_assert_int_eq(freed, 2);
    kube_store_release(st, &pinned);
    kube_store_free(st);
    ck_assert_int_eq(freed, 3);
}
END_TEST

/* Many views at once: every one gets its own slot and its own snapshot. */
START_TEST(store_many_views) {
    kube_store *st = kube_store_new();
    kube_view v[64];
    char name[16];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "g%d", i);
        kube_store_set_layer(st, KUBE_LAYER_FILES, arr(1, mk("ConfigMap", "a", "c", name)), 1);
        v[i] = kube_store_acquire(st);
        for (int j = 0; j < i; j++) ck_assert_int_ne(v[i].slot, v[j].slot);
    }
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "g%d", i);
        ck_assert_str_eq(src_of(kube_snapshot_get(v[i].snap, "ConfigMap", "a", "c")), name);
    }
    for (int i = 0; i < 64; i += 2) kube_store_release(st, &v[i]);
    kube_store_set_layer(st, KUBE_LAYER_FILES, NULL, 0);
    for (int i = 1; i < 64; i += 2) {
        snprintf(name, sizeof name, "g%d", i);
        ck_assert_str_eq(src_of(kube_snapshot_get(v[i].snap, "ConfigMap", "a", "c")), name);
        kube_store_release(st, &v[i]);
    }
    kube_store_free(st);
}
END_TEST

/* ---- store concurrency -------------------------------------------------- */

#define CC_READERS 4
#define CC_UPDATES 2000
#define CC_OBJS 8

typedef struct cc_shared {
    kube_store *st;
    atomic_bool stop;
    atomic_int ready;
    atomic_long reads, mixed, short_sets, went_back;
} cc_shared;

typedef struct cc_seen {
    const char *gen;
    int n, bad;
} cc_seen;

static void cc_check(void *arg, json_object *o) {
    cc_seen *s = arg;
    const char *g = kube_obj_str(o, "metadata.labels.gen");
    if (!g) { s->bad++; return; }
    if (!s->gen) s->gen = g;
    else if (strcmp(s->gen, g) != 0) s->bad++;
    s->n++;
}

static void *cc_reader(void *arg) {
    cc_shared *sh = arg;
    uint64_t last_gen = 0;
    bool announced = false;
    for (;;) {
        bool stopping = atomic_load(&sh->stop);
        kube_view v = kube_store_acquire(sh->st);
        uint64_t g = kube_snapshot_generation(v.snap);
        if (g < last_gen) atomic_fetch_add(&sh->went_back, 1);
        last_gen = g;
        cc_seen s = {NULL, 0, 0};
        kube_snapshot_each(v.snap, "ConfigMap", "default", cc_check, &s);
        /* The first snapshot may be the empty initial one. */
        if (s.n != 0 && s.n != CC_OBJS) atomic_fetch_add(&sh->short_sets, 1);
        if (s.bad) atomic_fetch_add(&sh->mixed, 1);
        /* Point lookups agree with the listing of the same view. */
        for (int i = 0; s.n && i < CC_OBJS; i++) {
            char name[16];
            snprintf(name, sizeof name, "c%d", i);
            json_object *o = kube_snapshot_get(v.snap, "ConfigMap", "default", name);
            const char *gl = o ? kube_obj_str(o, "metadata.labels.gen") : NULL;
            if (!gl || strcmp(gl, s.gen) != 0) atomic_fetch_add(&sh->mixed, 1);
        }
        if (s.n && kube_snapshot_size(v.snap) != CC_OBJS + 1) atomic_fetch_add(&sh->short_sets, 1);
        kube_store_release(sh->st, &v);
        atomic_fetch_add(&sh->reads, 1);
        if (!announced) {
            announced = true;
            atomic_fetch_add(&sh->ready, 1);
        }
        if (stopping) break; /* one full pass after the last update */
    }
    return NULL;
}

START_TEST(store_concurrent_readers) {
    cc_shared sh = {.st = kube_store_new()};
    pthread_t th[CC_READERS];
    for (int i = 0; i < CC_READERS; i++) ck_assert_int_eq(pthread_create(&th[i], NULL, cc_reader, &sh), 0);
    while (atomic_load(&sh.ready) < CC_READERS) sched_yield();
    char gen[16], name[16];
    for (int u = 1; u <= CC_UPDATES; u++) {
        snprintf(gen, sizeof gen, "%d", u);
        json_object **objs = calloc(CC_OBJS + 1, sizeof *objs);
        /* Written in reverse so the store has to sort. */
        for (int i = 0; i < CC_OBJS; i++) {
            snprintf(name, sizeof name, "c%d", CC_OBJS - 1 - i);
            json_object *o = mk("ConfigMap", "default", name, NULL);
            json_object *l = json_object_new_object();
            json_object_object_add(l, "gen", json_object_new_string(gen));
            json_object_object_add(json_object_object_get(o, "metadata"), "labels", l);
            objs[i] = o;
        }
        objs[CC_OBJS] = mk("Namespace", NULL, "default", NULL);
        /* Alternate layers: the merge must stay consistent too. */
        kube_store_set_layer(sh.st, u % 2 ? KUBE_LAYER_FILES : KUBE_LAYER_LIVE, objs, CC_OBJS + 1);
    }
    atomic_store(&sh.stop, true);
    for (int i = 0; i < CC_READERS; i++) pthread_join(th[i], NULL);
    ck_assert_int_eq(atomic_load(&sh.mixed), 0);
    ck_assert_int_eq(atomic_load(&sh.short_sets), 0);
    ck_assert_int_eq(atomic_load(&sh.went_back), 0);
    ck_assert_int_ge(atomic_load(&sh.reads), 2 * CC_READERS);
    kube_view v = kube_store_acquire(sh.st);
    ck_assert_uint_eq(kube_snapshot_size(v.snap), CC_OBJS + 1);
    /* The live layer (even updates) wins over files. */
    ck_assert_str_eq(kube_obj_str(kube_snapshot_get(v.snap, "ConfigMap", "default", "c0"), "metadata.labels.gen"),
                     "2000");
    kube_store_release(sh.st, &v);
    kube_store_free(sh.st);
}
END_TEST

/* ---- filesource helpers ------------------------------------------------- */

typedef struct logcap {
    int n;
    kube_log_level level[64];
    char *msg[64];
} logcap;

static void cap_fn(void *ud, kube_log_level level, const char *msg) {
    logcap *c = ud;
    if (c->n >= 64) return;
    c->level[c->n] = level;
    c->msg[c->n++] = strdup(msg);
}

static void cap_clear(logcap *c) {
    for (int i = 0; i < c->n; i++) free(c->msg[i]);
    c->n = 0;
}

/* Messages at level >= min joined by "\n". */
static char *cap_text(logcap *c, kube_log_level min) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int k = 0;
    for (int i = 0; i < c->n; i++)
        if (c->level[i] >= min) fprintf(f, "%s%s", k++ ? "\n" : "", c->msg[i]);
    fclose(f);
    return buf;
}

static char *tmpdir(void) {
    char *d = strdup("/tmp/test-kube-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(d));
    return d;
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

static void rmtree(char *d) {
    nftw(d, rm_one, 16, FTW_DEPTH | FTW_PHYS);
    free(d);
}

static char *pjoin(const char *dir, const char *name) {
    char *p = NULL;
    ck_assert_int_ge(asprintf(&p, "%s/%s", dir, name), 0);
    return p;
}

/* Writes name in dir and sets its mtime to the given second (explicit, so
 * two writes within one clock tick still look different). */
static void put(const char *dir, const char *name, const char *text, time_t mtime) {
    char *p = pjoin(dir, name);
    FILE *f = fopen(p, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    struct timespec ts[2] = {{mtime, 0}, {mtime, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, p, ts, 0), 0);
    free(p);
}

typedef struct fsfx {
    char *dir;
    mutate_settings cfg;
    kube_store *st;
    kube_filesource *fs;
    logcap log;
    kube_logger lg;
    kube_view v;
} fsfx;

static void fs_open(fsfx *x, const char *default_ns) {
    memset(x, 0, sizeof *x);
    x->dir = tmpdir();
    mutate_settings_init(&x->cfg);
    x->st = kube_store_new();
    x->lg = (kube_logger){cap_fn, &x->log};
    const char *dirs[] = {x->dir};
    x->fs = kube_filesource_new(x->st, &MUTATE_PREPARE(&x->cfg), dirs, 1, default_ns, &x->lg);
    x->v.slot = -1;
}

/* Polls, then pins the current snapshot in x->v. */
static int fs_poll(fsfx *x, int *failing) {
    kube_store_release(x->st, &x->v);
    int rc = kube_filesource_poll(x->fs, failing);
    x->v = kube_store_acquire(x->st);
    return rc;
}

static json_object *fs_get(fsfx *x, const char *kind, const char *ns, const char *name) {
    return kube_snapshot_get(x->v.snap, kind, ns, name);
}

static void fs_close(fsfx *x) {
    kube_store_release(x->st, &x->v);
    kube_filesource_free(x->fs);
    kube_store_free(x->st);
    mutate_settings_free(&x->cfg);
    cap_clear(&x->log);
    rmtree(x->dir);
}

#define INST(name) "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: " name "}\nspec: {}\n"
#define CM(name, ns) "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: " name ", namespace: " ns "}\ndata: {k: v}\n"

/* ---- filesource --------------------------------------------------------- */

START_TEST(fs_file_selection) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", INST("a"), 1000);
    put(x.dir, "b.yml", INST("b"), 1000);
    put(x.dir, "c.json", "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"Instrumentation\","
                         "\"metadata\":{\"name\":\"c\"},\"spec\":{}}\n", 1000);
    put(x.dir, "d.txt", INST("d"), 1000);
    put(x.dir, "e.yaml.bak", INST("e"), 1000);
    put(x.dir, "f.YAML", INST("f"), 1000);
    put(x.dir, ".g.yaml", INST("g"), 1000);
    put(x.dir, "..h.yaml", INST("h"), 1000);
    put(x.dir, "yaml", INST("i"), 1000);
    put(x.dir, ".yaml", INST("j"), 1000);
    /* A folder with a manifest-like name and the kubelet's ..data. */
    char *sub = pjoin(x.dir, "k.yaml");
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    put(sub, "l.yaml", INST("l"), 1000);
    free(sub);
    char *data = pjoin(x.dir, "..data");
    ck_assert_int_eq(mkdir(data, 0700), 0);
    put(data, "m.yaml", INST("m"), 1000);
    free(data);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a=,default/b=,default/c=,");
    ck_assert_uint_eq(kube_snapshot_size(x.v.snap), 3);
    EQ(cap_text(&x.log, KUBE_LOG_INFO), "");
    ck_assert_int_eq(kube_store_layer_loaded(x.st, KUBE_LAYER_FILES), 1);
    fs_close(&x);
}
END_TEST

START_TEST(fs_multi_document_list_and_unknown_kinds) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "all.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team, annotations: {a: b}}\n"   /* line 1 */
        "---\n"
        "apiVersion: v1\nkind: List\nitems:\n"                                             /* line 5 */
        "- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm, namespace: team}, data: {x: y}}\n"
        "- {apiVersion: v1, kind: Service, metadata: {name: svc, namespace: team}}\n"
        "- {apiVersion: v1, kind: List, items: [{kind: ConfigMap, metadata: {name: nested}}]}\n"
        "---\n"
        "---\n"
        "# only a comment\n"
        "---\n"
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: cr}\n" /* line 15 */
        "---\n"
        "kind: ConfigMap\nmetadata: {namespace: team}\n"                                   /* line 19 */
        "---\n"
        "- not an object\n"                                                                /* line 22 */
        "---\n" INST("last"),
        1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "default/nested=,team/cm=,");
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/last=,");
    ck_assert_ptr_nonnull(fs_get(&x, "Namespace", NULL, "team"));
    ck_assert_uint_eq(kube_snapshot_size(x.v.snap), 4);
    /* Namespaces keep their annotations (namespace-level opt-in). */
    EQ(js(fs_get(&x, "Namespace", NULL, "team")),
       "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team\",\"annotations\":{\"a\":\"b\"}}}");
    char *p = pjoin(x.dir, "all.yaml"), want[2048];
    snprintf(want, sizeof want,
             "%s:5: kind Service is not used; skipped\n"
             "%s:15: kind ClusterRole is not used; skipped\n"
             "%s:19: object without kind or metadata.name; skipped\n"
             "%s:22: not an object; skipped",
             p, p, p, p);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    free(p);
    fs_close(&x);
}
END_TEST

START_TEST(fs_secret_and_configmap_keep_keys_only) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "s.yaml",
        "apiVersion: v1\nkind: Secret\n"
        "metadata:\n"
        "  name: creds\n"
        "  uid: s-uid\n"
        "  labels: {app: web}\n"
        "  annotations:\n"
        "    kubectl.kubernetes.io/last-applied-configuration: '{\"data\":{\"password\":\"c3VwZXJzZWNyZXQ=\"}}'\n"
        "type: Opaque\n"
        "data: {password: c3VwZXJzZWNyZXQ=, ca.crt: Q0VSVA==}\n"
        "stringData: {token: plain-text-token-value}\n"
        "---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cfg, namespace: other}\n"
        "data: {app.properties: 'secret=cm-value-1'}\n"
        "binaryData: {blob: YmxvYg==}\n",
        1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    char *s = js(fs_get(&x, "Secret", "default", "creds"));
    ck_assert_ptr_null(strstr(s, "c3VwZXJzZWNyZXQ="));
    ck_assert_ptr_null(strstr(s, "Q0VSVA=="));
    ck_assert_ptr_null(strstr(s, "plain-text-token-value"));
    ck_assert_str_eq(s, "{\"apiVersion\":\"v1\",\"kind\":\"Secret\","
                        "\"metadata\":{\"name\":\"creds\",\"namespace\":\"default\",\"uid\":\"s-uid\","
                        "\"labels\":{\"app\":\"web\"}},"
                        "\"keys\":[\"password\",\"ca.crt\",\"token\"]}");
    free(s);
    s = js(fs_get(&x, "ConfigMap", "other", "cfg"));
    ck_assert_ptr_null(strstr(s, "cm-value-1"));
    ck_assert_ptr_null(strstr(s, "YmxvYg=="));
    ck_assert_str_eq(s, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
                        "\"metadata\":{\"name\":\"cfg\",\"namespace\":\"other\"},"
                        "\"keys\":[\"app.properties\",\"blob\"]}");
    free(s);
    fs_close(&x);
}
END_TEST

START_TEST(fs_owner_kinds_keep_metadata_only) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "owners.yaml",
        "apiVersion: apps/v1\nkind: Deployment\n"
        "metadata:\n"
        "  name: web\n"
        "  namespace: shop\n"
        "  uid: d-uid\n"
        "  labels: {app: web}\n"
        "  annotations: {deployment.kubernetes.io/revision: '3'}\n"
        "  generation: 7\n"
        "spec:\n"
        "  replicas: 2\n"
        "  template: {spec: {containers: [{name: c, image: i, env: [{name: PASSWORD, value: hunter2}]}]}}\n"
        "status: {replicas: 2}\n"
        "---\n"
        "apiVersion: apps/v1\nkind: ReplicaSet\n"
        "metadata:\n"
        "  name: web-5d8f\n"
        "  namespace: shop\n"
        "  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d-uid, controller: true}]\n"
        "spec: {replicas: 2}\n"
        "---\n"
        "{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: ss}, spec: {}}\n"
        "---\n"
        "{apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds}, spec: {}}\n"
        "---\n"
        "{apiVersion: batch/v1, kind: Job, metadata: {name: job}, spec: {}}\n"
        "---\n"
        "{apiVersion: batch/v1, kind: CronJob, metadata: {name: cj}, spec: {}}\n",
        1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    EQ(js(fs_get(&x, "Deployment", "shop", "web")),
       "{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"metadata\":{\"name\":\"web\",\"namespace\":\"shop\","
       "\"uid\":\"d-uid\",\"labels\":{\"app\":\"web\"}}}");
    EQ(js(fs_get(&x, "ReplicaSet", "shop", "web-5d8f")),
       "{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\",\"metadata\":{\"name\":\"web-5d8f\",\"namespace\":\"shop\","
       "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"Deployment\",\"name\":\"web\",\"uid\":\"d-uid\","
       "\"controller\":true}]}}");
    EQ(js(fs_get(&x, "StatefulSet", "default", "ss")),
       "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"metadata\":{\"name\":\"ss\",\"namespace\":\"default\"}}");
    ck_assert_ptr_nonnull(fs_get(&x, "DaemonSet", "default", "ds"));
    ck_assert_ptr_nonnull(fs_get(&x, "Job", "default", "job"));
    ck_assert_ptr_nonnull(fs_get(&x, "CronJob", "default", "cj"));
    ck_assert_uint_eq(kube_snapshot_size(x.v.snap), 6);
    fs_close(&x);
}
END_TEST

START_TEST(fs_default_namespace) {
    fsfx x;
    fs_open(&x, "team-a");
    put(x.dir, "r.yaml",
        INST("i1") "---\n" CM("c1", "''") "---\n"
        "{apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs}}\n"
        "---\n{apiVersion: v1, kind: Secret, metadata: {name: s, namespace: explicit}}\n"
        "---\n{apiVersion: v1, kind: Namespace, metadata: {name: team-a}}\n"
        "---\n{apiVersion: opentelemetry.io/v1beta1, kind: OpenTelemetryCollector, metadata: {name: col},"
        " spec: {config: {receivers: {otlp: {protocols: {grpc: {}}}}, exporters: {debug: {}},"
        " service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}}}\n",
        1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    ck_assert_str_eq(kube_obj_str(fs_get(&x, "Instrumentation", "team-a", "i1"), "metadata.namespace"), "team-a");
    ck_assert_str_eq(kube_obj_str(fs_get(&x, "ConfigMap", "team-a", "c1"), "metadata.namespace"), "team-a");
    ck_assert_str_eq(kube_obj_str(fs_get(&x, "ReplicaSet", "team-a", "rs"), "metadata.namespace"), "team-a");
    ck_assert_str_eq(kube_obj_str(fs_get(&x, "OpenTelemetryCollector", "team-a", "col"), "metadata.namespace"),
                     "team-a");
    ck_assert_ptr_nonnull(fs_get(&x, "Secret", "explicit", "s"));
    /* Cluster-scoped: no namespace added. */
    EQ(js(fs_get(&x, "Namespace", NULL, "team-a")),
       "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\"}}");
    ck_assert_uint_eq(kube_snapshot_size(x.v.snap), 6);
    fs_close(&x);
}
END_TEST

START_TEST(fs_instrumentation_defaulted) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "i.yaml",
        "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
        "metadata: {name: inst, namespace: apps}\n"
        "spec:\n"
        "  exporter: {endpoint: 'http://collector:4318'}\n"
        "  python: {image: my/python:1}\n",
        1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    json_object *o = fs_get(&x, "Instrumentation", "apps", "inst");
    ck_assert_ptr_nonnull(o);
    ck_assert_str_eq(kube_obj_str(o, "spec.java.image"),
                     "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0");
    EQ(js(kube_obj_get(o, "spec.java.resources")),
       "{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}}");
    ck_assert_str_eq(kube_obj_str(o, "spec.python.image"), "my/python:1");
    ck_assert_str_eq(kube_obj_str(o, "spec.exporter.endpoint"), "http://collector:4318");
    ck_assert_str_eq(kube_obj_str(o, "spec.nginx.configFile"), "/etc/nginx/nginx.conf");
    fs_close(&x);
}
END_TEST

START_TEST(fs_instrumentation_defaults_follow_config) {
    fsfx x;
    fs_open(&x, NULL);
    free(x.cfg.images[MUTATE_JAVA]);
    x.cfg.images[MUTATE_JAVA] = strdup("registry.local/java:9");
    put(x.dir, "i.yaml", INST("inst"), 1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    ck_assert_str_eq(kube_obj_str(fs_get(&x, "Instrumentation", "default", "inst"), "spec.java.image"),
                     "registry.local/java:9");
    fs_close(&x);
}
END_TEST

START_TEST(fs_v1alpha1_collector_converted_and_defaulted) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "col.yaml",
        "apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\n"
        "metadata: {name: side, namespace: apps}\n"
        "spec:\n"
        "  mode: sidecar\n"
        "  config: |\n"
        "    receivers:\n"
        "      otlp:\n"
        "        protocols:\n"
        "          grpc:\n"
        "    exporters:\n"
        "      debug: {}\n"
        "    service:\n"
        "      pipelines:\n"
        "        traces: {receivers: [otlp], exporters: [debug]}\n"
        "---\n"
        "apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\n"
        "metadata: {name: broken, namespace: apps}\n"
        "spec:\n"
        "  config: 'a: [1'\n",
        1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    json_object *o = fs_get(&x, "OpenTelemetryCollector", "apps", "side");
    ck_assert_ptr_nonnull(o);
    EQ(js(kube_obj_get(o, "spec.config")),
       "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\"0.0.0.0:4317\"}}}},"
       "\"exporters\":{\"debug\":{}},"
       /* a pipeline's lists in the reference's struct order (collector/convert.c) */
       "\"service\":{\"pipelines\":{\"traces\":{\"exporters\":[\"debug\"],\"receivers\":[\"otlp\"]}},"
       "\"telemetry\":{\"metrics\":{\"readers\":[{\"pull\":{\"exporter\":{\"prometheus\":"
       "{\"host\":\"0.0.0.0\",\"port\":8888}}}}]}}}}");
    EQ(js(json_object_object_get(o, "@containerPorts")),
       "[{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"},"
       "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"}]");
    ck_assert_ptr_nonnull(json_object_object_get(o, "@configYaml"));
    /* A collector whose config cannot be read is kept as written, with a warning. */
    json_object *b = fs_get(&x, "OpenTelemetryCollector", "apps", "broken");
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(kube_obj_str(b, "spec.config"), "a: [1");
    char *p = pjoin(x.dir, "col.yaml"), want[1024];
    /* libyaml places an unexpected end of input on the line after the text. */
    snprintf(want, sizeof want,
             "%s:17: OpenTelemetryCollector apps/broken: spec.config line 2: did not find expected ',' or ']'", p);
    char *w = cap_text(&x.log, KUBE_LOG_WARN);
    ck_assert_str_eq(w, want);
    free(p);
    free(w);
    fs_close(&x);
}
END_TEST

START_TEST(fs_poll_change_detection) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", CM("a", "ns1"), 1000);
    put(x.dir, "b.yaml", CM("b", "ns1"), 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    uint64_t g = kube_snapshot_generation(x.v.snap);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 0);
    ck_assert_uint_eq(kube_snapshot_generation(x.v.snap), g);
    /* Same size, same content, new mtime: re-read and republished. */
    put(x.dir, "a.yaml", CM("a", "ns1"), 1001);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_uint_eq(kube_snapshot_generation(x.v.snap), g + 1);
    /* Same size, same mtime, different content: the stat cannot tell. */
    put(x.dir, "a.yaml", CM("z", "ns1"), 1001);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    /* Changed content and mtime. */
    put(x.dir, "a.yaml", CM("c", "ns1"), 1002);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/b=,ns1/c=,");
    /* A new file. */
    put(x.dir, "d.yml", CM("d", "ns1"), 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/b=,ns1/c=,ns1/d=,");
    /* A removed file drops its objects. */
    char *p = pjoin(x.dir, "b.yaml");
    ck_assert_int_eq(unlink(p), 0);
    free(p);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/c=,ns1/d=,");
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 0);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");
    fs_close(&x);
}
END_TEST

START_TEST(fs_broken_file_keeps_last_good) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", CM("a", "ns1") "---\n" CM("a2", "ns1"), 1000);
    put(x.dir, "j.json", "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"j\",\"namespace\":\"ns1\"}}", 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);

    put(x.dir, "a.yaml", CM("b", "ns1") "---\nkind: ConfigMap\nmetadata: [unclosed\n", 1001);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/a=,ns1/a2=,ns1/j=,");
    char *p = pjoin(x.dir, "a.yaml"), want[1024];
    snprintf(want, sizeof want,
             "%s:8: did not find expected ',' or ']' (the last good content stays in service)", p);
    EQ(cap_text(&x.log, KUBE_LOG_ERROR), want);
    cap_clear(&x.log);
    /* Still failing, unchanged: nothing new, no repeated message. */
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 1);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");

    /* Another file breaks: JSON errors carry a line too. */
    put(x.dir, "j.json", "{\"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"j\"}\n} trailing\n", 1001);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 2);
    char *pj = pjoin(x.dir, "j.json");
    snprintf(want, sizeof want,
             "%s:3: unexpected data after the JSON value (the last good content stays in service)", pj);
    EQ(cap_text(&x.log, KUBE_LOG_ERROR), want);
    cap_clear(&x.log);
    put(x.dir, "j.json", "{\"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"j\"}\n", 1002);
    ck_assert_int_eq(fs_poll(&x, &failing), 0); /* truncated: see fs_truncated_json_message */
    ck_assert_int_eq(failing, 2);
    cap_clear(&x.log);
    free(pj);

    /* Other files' changes are still published while one fails. */
    put(x.dir, "c.yaml", CM("c", "ns1"), 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 2);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/a=,ns1/a2=,ns1/c=,ns1/j=,");

    /* Fixed: the new content replaces the last good one. */
    put(x.dir, "a.yaml", CM("fixed", "ns1"), 1003);
    put(x.dir, "j.json", "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"j2\",\"namespace\":\"ns1\"}}", 1003);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/c=,ns1/fixed=,ns1/j2=,");

    /* A file that never parsed contributes nothing and is counted. */
    put(x.dir, "new.yaml", "a: b: c\n", 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 1);
    /* Removing a failing file clears its failure. */
    char *pn = pjoin(x.dir, "new.yaml");
    ck_assert_int_eq(unlink(pn), 0);
    free(pn);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    free(p);
    fs_close(&x);
}
END_TEST

/* A folder that cannot be read on the first poll: there is no last good
 * content to keep, so the poll fails (a start-up error for serve and
 * inject) and publishes nothing; said once, not on every poll. */
START_TEST(fs_missing_folder) {
    fsfx x;
    fs_open(&x, NULL);
    kube_filesource_free(x.fs);
    put(x.dir, "a.yaml", CM("a", "ns1"), 1000);
    char *gone = pjoin(x.dir, "nope");
    const char *dirs[] = {gone, x.dir};
    x.fs = kube_filesource_new(x.st, &MUTATE_PREPARE(&x.cfg), dirs, 2, NULL, &x.lg);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), -1);
    ck_assert_int_eq(failing, 1);
    ck_assert_int_eq(kube_store_layer_loaded(x.st, KUBE_LAYER_FILES), 0);
    ck_assert_uint_eq(kube_snapshot_size(x.v.snap), 0);
    char want[1024];
    snprintf(want, sizeof want, "%s: cannot read the folder: No such file or directory", gone);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    cap_clear(&x.log);
    ck_assert_int_eq(fs_poll(&x, &failing), -1);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");
    /* It appears: both folders are published, and the recovery is said. */
    ck_assert_int_eq(mkdir(gone, 0700), 0);
    put(gone, "b.yaml", CM("b", "ns1"), 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/a=,ns1/b=,");
    snprintf(want, sizeof want, "%s: the folder can be read again", gone);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    free(gone);
    fs_close(&x);
}
END_TEST

static kube_filesource_status fs_status(fsfx *x) {
    kube_filesource_status st;
    kube_filesource_get_status(x->fs, &st);
    return st;
}

/* The issue's outage: the folder is renamed away between two polls (a sync
 * tool swapping folders). Its objects stay in service, the failure is said
 * once and counted, the failure's start is kept while it lasts, and
 * changes made meanwhile are picked up when the folder is back. */
START_TEST(fs_folder_renamed_away_keeps_last_good) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", INST("a"), 1000);
    put(x.dir, "b.yaml", CM("b", "ns1"), 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    uint64_t g = kube_snapshot_generation(x.v.snap);
    kube_filesource_status st = fs_status(&x);
    ck_assert_int_eq(st.failing_dirs + st.failing_files + st.new_failures, 0);
    ck_assert(st.unreadable_since == 0);

    char *away = xasprintf("%s.away", x.dir);
    ck_assert_int_eq(rename(x.dir, away), 0);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 1);
    ck_assert_uint_eq(kube_snapshot_generation(x.v.snap), g);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a=,");
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/b=,");
    st = fs_status(&x);
    ck_assert_int_eq(st.failing_dirs, 1);
    ck_assert_int_eq(st.failing_files, 0);
    ck_assert_int_eq(st.new_failures, 1);
    ck_assert(st.unreadable_since > 0);
    double since = st.unreadable_since;
    char want[1024];
    snprintf(want, sizeof want,
             "%s: cannot read the folder: No such file or directory (the last good content of its files stays in service)",
             x.dir);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    cap_clear(&x.log);

    /* Still away: nothing said, nothing counted, the same start. */
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    st = fs_status(&x);
    ck_assert_int_eq(st.failing_dirs, 1);
    ck_assert_int_eq(st.new_failures, 0);
    ck_assert(st.unreadable_since == since);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");

    /* Back, with a change made while away and a file removed. */
    put(away, "a.yaml", INST("a2"), 1001);
    char *b = pjoin(away, "b.yaml");
    ck_assert_int_eq(unlink(b), 0);
    free(b);
    ck_assert_int_eq(rename(away, x.dir), 0);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a2=,");
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "");
    st = fs_status(&x);
    ck_assert_int_eq(st.failing_dirs + st.failing_files + st.new_failures, 0);
    ck_assert(st.unreadable_since == 0);
    snprintf(want, sizeof want, "%s: the folder can be read again", x.dir);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    free(away);
    fs_close(&x);
}
END_TEST

/* Files that cannot be stat'ed (a symlink loop) or read (/proc/self/mem
 * answers EIO at offset 0) keep their last good objects and are retried on
 * every poll, whatever their stat says; said once per reason. */
START_TEST(fs_unreadable_file_keeps_last_good) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", INST("a"), 1000);
    put(x.dir, "b.yaml", INST("b"), 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    char *a = pjoin(x.dir, "a.yaml"), *b = pjoin(x.dir, "b.yaml"), want[2048];
    ck_assert_int_eq(unlink(a), 0);
    ck_assert_int_eq(symlink("/proc/self/mem/x", a), 0); /* ENOTDIR: a symlink loop is skipped instead (below) */
    ck_assert_int_eq(unlink(b), 0);
    ck_assert_int_eq(symlink("/proc/self/mem", b), 0);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 2);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a=,default/b=,");
    /* In readdir's order, which is the file system's. */
    char w1[1024], w2[1024];
    snprintf(w1, sizeof w1, "%s: cannot read: Not a directory (the last good content stays in service)", a);
    snprintf(w2, sizeof w2, "%s: cannot read: Input/output error (the last good content stays in service)", b);
    char *got = cap_text(&x.log, KUBE_LOG_DEBUG), *ab = xasprintf("%s\n%s", w1, w2), *ba = xasprintf("%s\n%s", w2, w1);
    ck_assert_msg(!strcmp(got, ab) || !strcmp(got, ba), "got %s", got);
    free(got);
    free(ab);
    free(ba);
    kube_filesource_status st = fs_status(&x);
    ck_assert_int_eq(st.failing_files, 2);
    ck_assert_int_eq(st.new_failures, 2);
    ck_assert(st.unreadable_since > 0);
    cap_clear(&x.log);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(fs_status(&x).new_failures, 0);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");

    /* a is fixed, with the same stat it would have had: read anyway. */
    ck_assert_int_eq(unlink(a), 0);
    put(x.dir, "a.yaml", INST("a2"), 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 1);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a2=,default/b=,");
    snprintf(want, sizeof want, "%s: recovered, its current content is in service", a);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    ck_assert(fs_status(&x).unreadable_since > 0); /* b still cannot be read */
    cap_clear(&x.log);
    ck_assert_int_eq(unlink(b), 0);
    put(x.dir, "b.yaml", INST("b2"), 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    ck_assert(fs_status(&x).unreadable_since == 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a2=,default/b2=,");
    free(a);
    free(b);
    fs_close(&x);
}
END_TEST

/* A folder of more than KUBE_FILESOURCE_PACE_STATS files is listed again
 * when its own stat changes (a file added) or on kube_filesource_recheck,
 * not on every poll: a file rewritten in place waits for its turn. */
START_TEST(fs_large_folder_paced) {
    fsfx x;
    fs_open(&x, NULL);
    char name[64], text[256];
    for (int i = 0; i <= KUBE_FILESOURCE_PACE_STATS; i++) {
        snprintf(name, sizeof name, "i%05d.yaml", i);
        snprintf(text, sizeof text, INST("i%d"), i);
        put(x.dir, name, text, 1000);
    }
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_uint_eq(kube_snapshot_count(x.v.snap, "Instrumentation"), KUBE_FILESOURCE_PACE_STATS + 1);
    put(x.dir, "i00005.yaml", INST("changed"), 2000); /* in place: the folder's stat is the same */
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_ptr_null(fs_get(&x, "Instrumentation", "default", "changed"));
    kube_filesource_recheck(x.fs);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_ptr_nonnull(fs_get(&x, "Instrumentation", "default", "changed"));
    ck_assert_ptr_null(fs_get(&x, "Instrumentation", "default", "i5"));
    put(x.dir, "new.yaml", INST("new"), 3000); /* a file added: the folder changed */
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_ptr_nonnull(fs_get(&x, "Instrumentation", "default", "new"));
    ck_assert_uint_eq(kube_snapshot_count(x.v.snap, "Instrumentation"), KUBE_FILESOURCE_PACE_STATS + 2);
    fs_close(&x);
}
END_TEST

/* A symlink loop has no content either, like a dangling symlink: its
 * objects go, one warning says so (not one per poll), nothing counts as
 * failing; fixed, it is read again. It was a read error retried every
 * second, which made the replica not ready after --resources-grace. */
START_TEST(fs_symlink_loop_is_skipped) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", INST("a"), 1000);
    put(x.dir, "b.yaml", INST("b"), 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    char *a = pjoin(x.dir, "a.yaml"), want[2048];
    ck_assert_int_eq(unlink(a), 0);
    ck_assert_int_eq(symlink("a.yaml", a), 0);
    cap_clear(&x.log);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/b=,");
    snprintf(want, sizeof want, "%s: symlink loop; skipped", a);
    EQ(cap_text(&x.log, KUBE_LOG_WARN), want);
    kube_filesource_status st = fs_status(&x);
    ck_assert_int_eq(st.failing_files, 0);
    ck_assert_int_eq(st.new_failures, 0);
    ck_assert(st.unreadable_since == 0);
    cap_clear(&x.log);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");
    ck_assert_int_eq(unlink(a), 0);
    put(x.dir, "a.yaml", INST("a2"), 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a2=,default/b=,");
    free(a);
    fs_close(&x);
}
END_TEST

/* A symlink whose target is gone (the kubelet leaves one for a moment when
 * a key leaves a ConfigMap) has no content: its objects go, quietly. */
START_TEST(fs_dangling_symlink_is_gone) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "real.yaml", INST("a"), 1000);
    char *link = pjoin(x.dir, "a.yaml"), *real = pjoin(x.dir, "real.txt"), *yreal = pjoin(x.dir, "real.yaml");
    ck_assert_int_eq(rename(yreal, real), 0);
    ck_assert_int_eq(symlink("real.txt", link), 0);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a=,");
    ck_assert_int_eq(unlink(real), 0);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "");
    EQ(cap_text(&x.log, KUBE_LOG_INFO), "");
    ck_assert(fs_status(&x).unreadable_since == 0);
    free(link);
    free(real);
    free(yreal);
    fs_close(&x);
}
END_TEST

/* Lowers the soft RLIMIT_NOFILE so that exactly `spare` descriptors can
 * still be opened, polls, and restores the limit before anything is
 * asserted (a failed assertion must not leave the suite without files). */
static int poll_with_spare_fds(fsfx *x, int spare, int *failing) {
    struct rlimit old, low;
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    int lowest = dup(0); /* the lowest free descriptor */
    ck_assert_int_ge(lowest, 0);
    close(lowest);
    low = old;
    low.rlim_cur = (rlim_t)(lowest + spare);
    kube_store_release(x->st, &x->v);
    int set = setrlimit(RLIMIT_NOFILE, &low);
    int rc = kube_filesource_poll(x->fs, failing);
    setrlimit(RLIMIT_NOFILE, &old);
    ck_assert_int_eq(set, 0);
    x->v = kube_store_acquire(x->st);
    return rc;
}

/* EMFILE, the issue's first cause: with no descriptor left the folder
 * cannot be opened; with one, the folder can but a changed file cannot.
 * Either way the last good objects stay, and both recover. */
START_TEST(fs_emfile_keeps_last_good) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", INST("a"), 1000);
    put(x.dir, "b.yaml", INST("b"), 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    char want[1024];

    ck_assert_int_eq(poll_with_spare_fds(&x, 0, &failing), 0);
    ck_assert_int_eq(failing, 1);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a=,default/b=,");
    snprintf(want, sizeof want,
             "%s: cannot read the folder: Too many open files (the last good content of its files stays in service)",
             x.dir);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    ck_assert(fs_status(&x).unreadable_since > 0);
    cap_clear(&x.log);

    /* One descriptor: the folder is listed, the changed a.yaml cannot be
     * opened (b.yaml, unchanged, is not opened at all). */
    put(x.dir, "a.yaml", INST("a2"), 1001);
    ck_assert_int_eq(poll_with_spare_fds(&x, 1, &failing), 0);
    ck_assert_int_eq(failing, 1);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a=,default/b=,");
    char *a = pjoin(x.dir, "a.yaml");
    snprintf(want, sizeof want,
             "%s: cannot read: Too many open files (the last good content stays in service)\n"
             "%s: the folder can be read again",
             a, x.dir);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    kube_filesource_status st = fs_status(&x);
    ck_assert_int_eq(st.failing_dirs, 0);
    ck_assert_int_eq(st.failing_files, 1);
    ck_assert(st.unreadable_since > 0);
    cap_clear(&x.log);

    /* Descriptors again: a.yaml is read although its stat did not change. */
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/a2=,default/b=,");
    snprintf(want, sizeof want, "%s: recovered, its current content is in service", a);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    ck_assert(fs_status(&x).unreadable_since == 0);
    free(a);
    fs_close(&x);
}
END_TEST

/* Writes a valid ConfigMap manifest of exactly size bytes (a comment
 * pads it). */
static void put_sized(const char *dir, const char *name, const char *cm_name, size_t size, time_t mtime) {
    char head[256];
    int hl = snprintf(head, sizeof head, CM("%s", "ns1") "#", cm_name);
    ck_assert_uint_ge(size, (size_t)hl + 1);
    char *text = malloc(size + 1);
    memcpy(text, head, (size_t)hl);
    memset(text + hl, 'x', size - (size_t)hl - 1);
    text[size - 1] = '\n';
    text[size] = 0;
    put(dir, name, text, mtime);
    free(text);
}

/* The size cap: a file over KUBE_FILESOURCE_MAX_FILE_BYTES is refused
 * before it is read, like a file that does not parse: its last good
 * content stays, it is not retried until it changes, and it does not
 * count as a read error (readiness). */
START_TEST(fs_size_cap) {
    fsfx x;
    fs_open(&x, NULL);
    put_sized(x.dir, "a.yaml", "at-cap", KUBE_FILESOURCE_MAX_FILE_BYTES, 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/at-cap=,");

    put_sized(x.dir, "a.yaml", "over", KUBE_FILESOURCE_MAX_FILE_BYTES + 1, 1001);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/at-cap=,");
    char *a = pjoin(x.dir, "a.yaml"), want[1024];
    snprintf(want, sizeof want,
             "%s: 1048577 bytes, larger than the 1048576 bytes a resource file may have "
             "(the last good content stays in service)",
             a);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    kube_filesource_status st = fs_status(&x);
    ck_assert_int_eq(st.failing_files, 1);
    ck_assert_int_eq(st.new_failures, 1);
    ck_assert(st.unreadable_since == 0);
    cap_clear(&x.log);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");

    /* A new file over the cap contributes nothing. */
    put_sized(x.dir, "big.yaml", "big", 5 * KUBE_FILESOURCE_MAX_FILE_BYTES, 1000);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    ck_assert_int_eq(failing, 2);
    cap_clear(&x.log);

    put(x.dir, "a.yaml", CM("small", "ns1"), 1002);
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/small=,");
    snprintf(want, sizeof want, "%s: recovered, its current content is in service", a);
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), want);
    free(a);
    fs_close(&x);
}
END_TEST

/* What a replaced file cost is given back even when a reader pinned the
 * snapshot that held it during the update: the next poll reclaims it (the
 * objects are freed then, not at the next change, which may never come). */
START_TEST(fs_replaced_content_freed_after_pinned_snapshot) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "a.yaml", CM("old", "ns1"), 1000);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    kube_view reader = kube_store_acquire(x.st);
    json_object *old = kube_snapshot_get(reader.snap, "ConfigMap", "ns1", "old");
    ck_assert_ptr_nonnull(old);
    json_object_get(old); /* single-threaded test: ours to count */
    put(x.dir, "a.yaml", CM("new", "ns1"), 1001);
    ck_assert_int_eq(fs_poll(&x, NULL), 1);
    EQ(each_text(x.v.snap, "ConfigMap", NULL), "ns1/new=,");
    kube_store_release(x.st, &reader);
    ck_assert_int_eq(fs_poll(&x, NULL), 0);
    /* Ours was the last reference left. */
    ck_assert_int_eq(json_object_put(old), 1);
    fs_close(&x);
}
END_TEST

/* Regression: with no manifest file at all (an empty folder, the usual
 * first start) the poll once called qsort(NULL, 0, ...), undefined
 * behaviour that UBSan (halt_on_error) turned into a crash of the sanitized
 * server. An empty folder is published once, as loaded and empty. */
START_TEST(fs_empty_folder_publishes_once) {
    fsfx x;
    fs_open(&x, NULL);
    ck_assert_int_eq(kube_store_layer_loaded(x.st, KUBE_LAYER_FILES), 0);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    ck_assert_int_eq(kube_store_layer_loaded(x.st, KUBE_LAYER_FILES), 1);
    ck_assert_int_eq(fs_poll(&x, NULL), 0);
    fs_close(&x);
}
END_TEST

/* Regression: a truncated or empty .json file was once reported with
 * json-c's state name as the reason ("FILE:3: continue"), because
 * json_tokener_parse_ex() answers json_tokener_continue for input that ends
 * early. It is "unexpected end of data". */
START_TEST(fs_truncated_json_message) {
    fsfx x;
    fs_open(&x, NULL);
    put(x.dir, "j.json", "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"j\",\"namespace\":\"ns1\"}}", 1000);
    put(x.dir, "empty.json", "", 1000);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 1);
    char *pe = pjoin(x.dir, "empty.json"), *pj = pjoin(x.dir, "j.json"), want[1024];
    snprintf(want, sizeof want, "%s:1: unexpected end of data (the last good content stays in service)", pe);
    EQ(cap_text(&x.log, KUBE_LOG_ERROR), want);
    cap_clear(&x.log);
    put(x.dir, "j.json", "{\"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"j\"\n", 1001);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    snprintf(want, sizeof want, "%s:3: unexpected end of data (the last good content stays in service)", pj);
    EQ(cap_text(&x.log, KUBE_LOG_ERROR), want);
    free(pe);
    free(pj);
    fs_close(&x);
}
END_TEST

/* The kubelet's ConfigMap volume: NAME -> ..data/NAME, ..data -> ..TIMESTAMP,
 * updated by writing a new timestamped folder and renaming a new ..data
 * symlink over the old one. */
static void kubelet_publish(const char *dir, const char *ts, const char *name, const char *text) {
    char *tsdir = pjoin(dir, ts);
    ck_assert_int_eq(mkdir(tsdir, 0700), 0);
    put(tsdir, name, text, 1000); /* same mtime every time on purpose */
    free(tsdir);
    char *tmp = pjoin(dir, "..data_tmp"), *data = pjoin(dir, "..data");
    ck_assert_int_eq(symlink(ts, tmp), 0);
    ck_assert_int_eq(rename(tmp, data), 0);
    free(tmp);
    free(data);
}

START_TEST(fs_kubelet_rotation) {
    fsfx x;
    fs_open(&x, NULL);
    kubelet_publish(x.dir, "..2024_01_01_00_00_00.1", "inst.yaml", INST("one"));
    char *link = pjoin(x.dir, "inst.yaml");
    ck_assert_int_eq(symlink("..data/inst.yaml", link), 0);
    free(link);
    int failing = -1;
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/one=,");
    ck_assert_int_eq(fs_poll(&x, &failing), 0);

    kubelet_publish(x.dir, "..2024_01_01_00_01_00.2", "inst.yaml", INST("two"));
    ck_assert_int_eq(fs_poll(&x, &failing), 1);
    ck_assert_int_eq(failing, 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/two=,");
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    /* The kubelet then deletes the old folder; nothing changes for us. */
    char *old = pjoin(x.dir, "..2024_01_01_00_00_00.1/inst.yaml");
    ck_assert_int_eq(unlink(old), 0);
    old[strlen(old) - strlen("/inst.yaml")] = 0;
    ck_assert_int_eq(rmdir(old), 0);
    free(old);
    ck_assert_int_eq(fs_poll(&x, &failing), 0);
    EQ(each_text(x.v.snap, "Instrumentation", NULL), "default/two=,");
    EQ(cap_text(&x.log, KUBE_LOG_DEBUG), "");
    fs_close(&x);
}
END_TEST

/* kube_manifest_objects directly: what `inject` uses. */
START_TEST(manifest_objects_errors_append_nothing) {
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    json_object **objs = NULL;
    size_t n = 0;
    char err[512] = "";
    const char *good = CM("a", "ns1");
    ck_assert_int_eq(kube_manifest_objects("x.yaml", good, strlen(good), &MUTATE_PREPARE(&cfg), "d", NULL, &objs, &n, err, sizeof err), 0);
    ck_assert_uint_eq(n, 1);
    const char *bad = CM("b", "ns1") "---\n" "a: [\n";
    ck_assert_int_eq(kube_manifest_objects("y.yaml", bad, strlen(bad), &MUTATE_PREPARE(&cfg), "d", NULL, &objs, &n, err, sizeof err), -1);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(err, "y.yaml:7: did not find expected node content"); /* libyaml: the end of input */
    const char *badj = "[1,\n2,,]";
    ck_assert_int_eq(kube_manifest_objects("z.json", badj, strlen(badj), &MUTATE_PREPARE(&cfg), "d", NULL, &objs, &n, err, sizeof err), -1);
    ck_assert_str_eq(err, "z.json:2: unexpected character");
    ck_assert_uint_eq(n, 1);
    json_object_put(objs[0]);
    free(objs);
    mutate_settings_free(&cfg);
}
END_TEST

/* ---- config ------------------------------------------------------------- */

typedef struct cfgfx {
    char *dir, *path;
    mutate_settings c;
    char err[512];
} cfgfx;

static int cfg_load(cfgfx *x, const char *text) {
    x->dir = tmpdir();
    x->path = pjoin(x->dir, "config.yaml");
    put(x->dir, "config.yaml", text, 1000);
    mutate_settings_init(&x->c);
    x->err[0] = 0;
    size_t len;
    char *t = kube_read_file(x->path, &len);
    ck_assert_ptr_nonnull(t);
    int rc = mutate_settings_parse(&x->c, x->path, t, len, x->err, sizeof x->err);
    free(t);
    return rc;
}

static void cfg_done(cfgfx *x) {
    mutate_settings_free(&x->c);
    free(x->path);
    rmtree(x->dir);
}

static void cfg_error(const char *text, const char *want_fmt) {
    cfgfx x;
    ck_assert_int_eq(cfg_load(&x, text), -1);
    char want[1024];
    snprintf(want, sizeof want, want_fmt, x.path);
    ck_assert_str_eq(x.err, want);
    cfg_done(&x);
}

#define ALL_LANGS_BUT_GO (~0u & ~MUTATE_BIT(MUTATE_GO))

START_TEST(config_defaults_and_empty_file) {
    mutate_settings c;
    mutate_settings_init(&c);
    ck_assert_uint_eq(c.opt.enabled, ALL_LANGS_BUT_GO);
    ck_assert(c.opt.multi_instrumentation);
    ck_assert(!c.opt.native_sidecars);
    ck_assert_int_eq(c.native_sidecars, MUTATE_AUTO);
    ck_assert_int_eq(c.opt.python_mode, MUTATE_PYTHON_PYTHONPATH);
    ck_assert_str_eq(c.collector_image,
                     "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.158.0");
    ck_assert_ptr_eq(c.opt.collector_image, c.collector_image);
    ck_assert_str_eq(c.images[MUTATE_JAVA], "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0");
    ck_assert_str_eq(c.images[MUTATE_NGINX],
                     "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-apache-httpd:1.0.4");
    ck_assert_ptr_null(c.images[MUTATE_SDK]);
    mutate_settings_free(&c);

    const char *empties[] = {"", "\n", "# nothing but a comment\n", "---\n"};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        cfgfx x;
        ck_assert_msg(cfg_load(&x, empties[i]) == 0, "%zu: %s", i, x.err);
        ck_assert_uint_eq(x.c.opt.enabled, ALL_LANGS_BUT_GO);
        ck_assert_int_eq(x.c.native_sidecars, MUTATE_AUTO);
        ck_assert_str_eq(x.c.images[MUTATE_PYTHON],
                         "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-python:0.64b0");
        cfg_done(&x);
    }
}
END_TEST

START_TEST(config_operator_keys) {
    cfgfx x;
    int rc = cfg_load(&x,
                      "# operator config\n"
                      "enable-java-auto-instrumentation: false\n"
                      "enable-go-auto-instrumentation: true\n"
                      "enable-apache-httpd-instrumentation: 'false'\n"
                      "enable-nginx-auto-instrumentation: \"false\"\n"
                      "auto-instrumentation-java-image: registry.local/java:1\n"
                      "auto-instrumentation-node-js-image: registry.local/node:2\n"
                      "auto-instrumentation-dot-net-image: registry.local/dotnet:3\n"
                      "collector-image: registry.local/collector:4\n"
                      "enable-multi-instrumentation: false\n"
                      "native-sidecars: on\n"
                      "python-mode: entrypoint\n"
                      "fips-disabled-components: receiver.otlp,exporter.debug\n");
    ck_assert_msg(rc == 0, "%s", x.err);
    ck_assert_str_eq(x.c.fips_disabled, "receiver.otlp,exporter.debug");
    ck_assert_uint_eq(x.c.opt.enabled, (ALL_LANGS_BUT_GO & ~MUTATE_BIT(MUTATE_JAVA) & ~MUTATE_BIT(MUTATE_APACHE) &
                                         ~MUTATE_BIT(MUTATE_NGINX)) | MUTATE_BIT(MUTATE_GO));
    ck_assert_str_eq(x.c.images[MUTATE_JAVA], "registry.local/java:1");
    ck_assert_str_eq(x.c.images[MUTATE_NODEJS], "registry.local/node:2");
    ck_assert_str_eq(x.c.images[MUTATE_DOTNET], "registry.local/dotnet:3");
    ck_assert_str_eq(x.c.images[MUTATE_PYTHON],
                     "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-python:0.64b0");
    ck_assert_str_eq(x.c.collector_image, "registry.local/collector:4");
    ck_assert_ptr_eq(x.c.opt.collector_image, x.c.collector_image);
    ck_assert(!x.c.opt.multi_instrumentation);
    ck_assert_int_eq(x.c.native_sidecars, MUTATE_ON);
    ck_assert_int_eq(x.c.opt.python_mode, MUTATE_PYTHON_ENTRYPOINT);
    cfg_done(&x);
}
END_TEST

START_TEST(config_native_sidecars_values) {
    static const struct {
        const char *text;
        mutate_tristate want;
    } cases[] = {
        {"native-sidecars: on\n", MUTATE_ON},        {"native-sidecars: off\n", MUTATE_OFF},
        {"native-sidecars: 'on'\n", MUTATE_ON},      {"native-sidecars: \"off\"\n", MUTATE_OFF},
        {"native-sidecars: auto\n", MUTATE_AUTO},    {"native-sidecars: true\n", MUTATE_ON},
        {"native-sidecars: false\n", MUTATE_OFF},
        {"python-mode: pythonpath\nnative-sidecars: off\n", MUTATE_OFF},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        cfgfx x;
        ck_assert_msg(cfg_load(&x, cases[i].text) == 0, "%s: %s", cases[i].text, x.err);
        ck_assert_msg(x.c.native_sidecars == cases[i].want, "%s: got %d", cases[i].text, x.c.native_sidecars);
        cfg_done(&x);
    }
    /* A key given twice is refused, as go-yaml v3 refuses it. */
    cfgfx x;
    ck_assert_int_ne(cfg_load(&x, "native-sidecars: on\nnative-sidecars: auto\n"), 0);
    ck_assert_msg(strstr(x.err, "config.yaml:2: mapping key \"native-sidecars\" already defined at line 1"), "%s", x.err);
    cfg_done(&x);
}
END_TEST

START_TEST(config_errors) {
    cfg_error("collector-image: x\nx: 1\n", "%s:2: unknown setting \"x\"");
    cfg_error("# c\n\nenable-java-auto-instrumentation: maybe\n", "%s:3: enable-java-auto-instrumentation: expected true or false");
    cfg_error("enable-multi-instrumentation: 1\n", "%s:1: enable-multi-instrumentation: expected true or false");
    cfg_error("enable-nodejs-auto-instrumentation: true\n", "%s:1: unknown setting \"enable-nodejs-auto-instrumentation\"");
    cfg_error("python-mode: pythonpath\nnative-sidecars: sometimes\n", "%s:2: native-sidecars: expected auto, on or off");
    cfg_error("native-sidecars: 1\n", "%s:1: native-sidecars: expected auto, on or off");
    cfg_error("python-mode: venv\n", "%s:1: python-mode: expected pythonpath or entrypoint");
    cfg_error("collector-image: ''\n", "%s:1: collector-image: expected an image reference");
    cfg_error("auto-instrumentation-java-image: [a]\n", "%s:1: auto-instrumentation-java-image: expected an image reference");
    cfg_error("auto-instrumentation-sdk-image: x\n", "%s:1: unknown setting \"auto-instrumentation-sdk-image\"");
    cfg_error("fips-disabled-components: [receiver.otlp]\n", "%s:1: fips-disabled-components: expected a "
                                                             "comma-separated list");
    cfg_error("- a\n- b\n", "%s:1: expected a map of settings");
    cfg_error("a: [\n", "%s:2: did not find expected node content");
    cfg_error("collector-image: a\n---\ncollector-image: b\n", "%s:3: expected one document");
}
END_TEST

/* ---- defaults ----------------------------------------------------------- */

#define IMG "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-"
/* The resources field is created before the image is set, so it comes first. */
#define RES(field, req_cpu, req_mem)                                                                                   \
    "\"" field "\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"" req_cpu              \
    "\",\"memory\":\"" req_mem "\"}}"

START_TEST(defaults_empty_instrumentation) {
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    json_object *o = tu_json("{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"Instrumentation\","
                             "\"metadata\":{\"name\":\"i\"},\"spec\":{}}");
    ck_assert_int_eq(mutate_default_instrumentation(o, &cfg, NULL, 0), 0);
    /* The default images are recorded, for the operator's upgrade routine. */
    EQ(js(kube_obj_get(o, "metadata")),
       "{\"name\":\"i\",\"annotations\":{"
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-java-image\":\"" IMG "java:2.30.0\","
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-nodejs-image\":\"" IMG "nodejs:0.78.0\","
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-python-image\":\"" IMG "python:0.64b0\","
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-dotnet-image\":\"" IMG "dotnet:1.16.0\","
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-go-image\":"
       "\"ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go:v0.24.0\","
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-apache-httpd-image\":\"" IMG "apache-httpd:1.0.4\","
       "\"instrumentation.opentelemetry.io/default-auto-instrumentation-nginx-image\":\"" IMG "apache-httpd:1.0.4\"}}");
    EQ(js(kube_obj_get(o, "spec")),
       "{"
       "\"java\":{" RES("resources", "50m", "64Mi") ",\"image\":\"" IMG "java:2.30.0\"},"
       "\"nodejs\":{" RES("resourceRequirements", "50m", "128Mi") ",\"image\":\"" IMG "nodejs:0.78.0\"},"
       "\"python\":{" RES("resourceRequirements", "50m", "64Mi") ",\"image\":\"" IMG "python:0.64b0\"},"
       "\"dotnet\":{" RES("resourceRequirements", "50m", "128Mi") ",\"image\":\"" IMG "dotnet:1.16.0\"},"
       "\"go\":{" RES("resourceRequirements", "50m", "64Mi") ","
       "\"image\":\"ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go:v0.24.0\"},"
       "\"apacheHttpd\":{" RES("resourceRequirements", "1m", "128Mi") ",\"image\":\"" IMG "apache-httpd:1.0.4\","
       "\"version\":\"2.4\",\"configPath\":\"/usr/local/apache2/conf\"},"
       "\"nginx\":{" RES("resourceRequirements", "1m", "128Mi") ",\"image\":\"" IMG "apache-httpd:1.0.4\","
       "\"configFile\":\"/etc/nginx/nginx.conf\"}}");
    /* Idempotent. */
    char *once = js(o);
    ck_assert_int_eq(mutate_default_instrumentation(o, &cfg, NULL, 0), 0);
    EQ(js(o), once);
    free(once);
    json_object_put(o);

    /* No spec at all, or a spec that is not a map: the same defaults. */
    json_object *a = tu_json("{\"kind\":\"Instrumentation\"}"), *b = tu_json("{\"kind\":\"Instrumentation\",\"spec\":null}");
    ck_assert_int_eq(mutate_default_instrumentation(a, &cfg, NULL, 0), 0);
    ck_assert_int_eq(mutate_default_instrumentation(b, &cfg, NULL, 0), 0);
    char *sa = js(json_object_object_get(a, "spec")), *sb = js(json_object_object_get(b, "spec"));
    ck_assert_str_eq(sa, sb);
    ck_assert_ptr_nonnull(strstr(sa, "\"image\":\"" IMG "apache-httpd:1.0.4\",\"configFile\":\"/etc/nginx/nginx.conf\"}}"));
    free(sa);
    free(sb);
    json_object_put(a);
    json_object_put(b);
    /* Not an object: left alone. */
    json_object *s = json_object_new_string("x");
    ck_assert_int_eq(mutate_default_instrumentation(s, &cfg, NULL, 0), 0);
    ck_assert_str_eq(json_object_get_string(s), "x");
    json_object_put(s);
    mutate_settings_free(&cfg);
}
END_TEST

START_TEST(defaults_keep_user_values) {
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    json_object *o = tu_json(
        "{\"kind\":\"Instrumentation\",\"spec\":{"
        "\"java\":{\"image\":\"my/java:1\",\"resources\":{\"limits\":{\"cpu\":\"2\"}},\"env\":[{\"name\":\"A\",\"value\":\"b\"}]},"
        "\"nodejs\":{\"resourceRequirements\":{\"requests\":{\"memory\":\"1Gi\"}}},"
        "\"python\":{\"image\":\"\",\"resourceRequirements\":{\"limits\":{},\"requests\":null}},"
        "\"dotnet\":{\"resources\":{\"limits\":{\"cpu\":\"9\"}}},"
        "\"apacheHttpd\":{\"version\":\"2.2\",\"configPath\":\"\"},"
        "\"nginx\":{\"configFile\":\"/opt/nginx.conf\",\"image\":\"my/nginx\"}}}");
    ck_assert_int_eq(mutate_default_instrumentation(o, &cfg, NULL, 0), 0);
    /* Set fields stay; absent (or null) siblings are filled; an empty image is defaulted. */
    EQ(js(kube_obj_get(o, "spec.java")),
       "{\"image\":\"my/java:1\",\"resources\":{\"limits\":{\"cpu\":\"2\"},\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}},"
       "\"env\":[{\"name\":\"A\",\"value\":\"b\"}]}");
    EQ(js(kube_obj_get(o, "spec.nodejs")),
       "{\"resourceRequirements\":{\"requests\":{\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"}},"
       "\"image\":\"" IMG "nodejs:0.78.0\"}");
    EQ(js(kube_obj_get(o, "spec.python")),
       "{\"image\":\"" IMG "python:0.64b0\",\"resourceRequirements\":{\"limits\":{},"
       "\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}}}");
    /* .NET reads resourceRequirements: a "resources" field is not its resources. */
    EQ(js(kube_obj_get(o, "spec.dotnet")),
       "{\"resources\":{\"limits\":{\"cpu\":\"9\"}}," RES("resourceRequirements", "50m", "128Mi") ","
       "\"image\":\"" IMG "dotnet:1.16.0\"}");
    EQ(js(kube_obj_get(o, "spec.apacheHttpd")),
       "{\"version\":\"2.2\",\"configPath\":\"/usr/local/apache2/conf\","
       RES("resourceRequirements", "1m", "128Mi") ",\"image\":\"" IMG "apache-httpd:1.0.4\"}");
    EQ(js(kube_obj_get(o, "spec.nginx")),
       "{\"configFile\":\"/opt/nginx.conf\",\"image\":\"my/nginx\"," RES("resourceRequirements", "1m", "128Mi") "}");
    json_object_put(o);
    mutate_settings_free(&cfg);
}
END_TEST

START_TEST(defaults_collector) {
    char err[256] = "";
    json_object *o = tu_json("{\"kind\":\"OpenTelemetryCollector\",\"spec\":{\"config\":"
                             "\"receivers:\\n  zipkin:\\nexporters:\\n  debug:\\n"
                             "service:\\n  pipelines:\\n    traces: {receivers: [zipkin], exporters: [debug]}\\n\"}}");
    ck_assert_int_eq(collector_default(o, err, sizeof err), 0);
    EQ(js(kube_obj_get(o, "spec.config.receivers")), "{\"zipkin\":{\"endpoint\":\"0.0.0.0:9411\"}}");
    EQ(js(json_object_object_get(o, "@containerPorts")),
       "[{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"},"
       "{\"name\":\"zipkin\",\"containerPort\":9411,\"protocol\":\"TCP\"}]");
    json_object_put(o);

    static const struct {
        const char *json, *err;
    } bad[] = {
        {"{\"kind\":\"OpenTelemetryCollector\"}", "spec is missing"},
        {"{\"spec\":{}}", "spec.config is missing"},
        {"{\"spec\":{\"config\":null}}", "spec.config is missing"},
        {"{\"spec\":{\"config\":[1]}}", "spec.config is not a map"},
        {"{\"spec\":{\"config\":\"- a\\n\"}}", "spec.config is not a map"},
        {"{\"spec\":{\"config\":\"a: [\\n\"}}", "spec.config line 2: did not find expected node content"},
        {"{\"spec\":{\"config\":{\"receivers\":{\"otlp\":{\"protocols\":{\"bogus\":{}}}},"
         "\"service\":{\"pipelines\":{\"t\":{\"receivers\":[\"otlp\"]}}}}}}",
         "unknown protocol set: bogus"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        json_object *b = tu_json(bad[i].json);
        err[0] = 0;
        ck_assert_int_eq(collector_default(b, err, sizeof err), -1);
        ck_assert_str_eq(err, bad[i].err);
        json_object_put(b);
    }
}
END_TEST

/* collector_default leaves a failed object as it came, a v1alpha1 config
 * string included (a half-converted spec.config was a bug once). */
START_TEST(defaults_collector_failure_leaves_object) {
    static const char *const cases[] = {
        "{\"spec\":{\"config\":\"- a\\n\"}}",
        "{\"spec\":{\"config\":\"receivers:\\n  otlp:\\n    protocols:\\n      bogus: {}\\n"
        "service:\\n  pipelines:\\n    traces:\\n      receivers: [otlp]\\n\"}}",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_object *o = tu_json(cases[i]);
        char *before = js(o), err[256];
        ck_assert_int_eq(collector_default(o, err, sizeof err), -1);
        EQ(js(o), before);
        free(before);
        json_object_put(o);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("kube");
    TCase *tc = tcase_create("store");
    tcase_add_test(tc, store_layers_get_each_count);
    tcase_add_test(tc, store_skips_objects_without_kind_or_name);
    tcase_add_test(tc, store_generation_and_loaded);
    tcase_add_test(tc, store_snapshot_isolation);
    tcase_add_test(tc, store_many_views);
    tcase_add_test(tc, store_concurrent_readers);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    tc = tcase_create("filesource");
    tcase_add_test(tc, fs_file_selection);
    tcase_add_test(tc, fs_empty_folder_publishes_once);
    tcase_add_test(tc, fs_truncated_json_message);
    tcase_add_test(tc, fs_multi_document_list_and_unknown_kinds);
    tcase_add_test(tc, fs_secret_and_configmap_keep_keys_only);
    tcase_add_test(tc, fs_owner_kinds_keep_metadata_only);
    tcase_add_test(tc, fs_default_namespace);
    tcase_add_test(tc, fs_instrumentation_defaulted);
    tcase_add_test(tc, fs_instrumentation_defaults_follow_config);
    tcase_add_test(tc, fs_v1alpha1_collector_converted_and_defaulted);
    tcase_add_test(tc, fs_poll_change_detection);
    tcase_add_test(tc, fs_broken_file_keeps_last_good);
    tcase_add_test(tc, fs_missing_folder);
    tcase_add_test(tc, fs_folder_renamed_away_keeps_last_good);
    tcase_add_test(tc, fs_unreadable_file_keeps_last_good);
    tcase_add_test(tc, fs_dangling_symlink_is_gone);
    tcase_add_test(tc, fs_symlink_loop_is_skipped);
    tcase_add_test(tc, fs_large_folder_paced);
    tcase_add_test(tc, fs_emfile_keeps_last_good);
    tcase_add_test(tc, fs_size_cap);
    tcase_add_test(tc, fs_replaced_content_freed_after_pinned_snapshot);
    tcase_add_test(tc, fs_kubelet_rotation);
    tcase_add_test(tc, manifest_objects_errors_append_nothing);
    suite_add_tcase(s, tc);
    tc = tcase_create("config");
    tcase_add_test(tc, config_defaults_and_empty_file);
    tcase_add_test(tc, config_operator_keys);
    tcase_add_test(tc, config_native_sidecars_values);
    tcase_add_test(tc, config_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("defaults");
    tcase_add_test(tc, defaults_empty_instrumentation);
    tcase_add_test(tc, defaults_keep_user_values);
    tcase_add_test(tc, defaults_collector);
    tcase_add_test(tc, defaults_collector_failure_leaves_object);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
