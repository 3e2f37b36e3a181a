/* kube/informer.c - LIST + WATCH for one resource; see informer.h.
 *
 * The map is a json-c object keyed "namespace/name": json-c's linkhash is
 * already linked in, and replacing a key releases the old value, which is
 * exactly the update we want (under the writer mutex). A relist builds a
 * fresh map outside the lock and swaps it in, so a 10,000-object list
 * holds the mutex for a pointer swap, not for the parse.
 *
 * Events are trimmed outside the lock too: the informer thread owns an
 * object until it is in the map.
 *
 * Memory (json-c spends about 800 bytes on every JSON object, whatever its
 * size), so that 10,000 namespaces and 1,000 Instrumentations stay well
 * under 50 MiB:
 *  - a Namespace is kept only when it carries *opentelemetry.io/
 *    annotations, and only those annotations: the engine reads nothing else
 *    of a namespace, and an absent namespace reads as one without them;
 *  - identical objects under an Instrumentation's or collector's spec (the
 *    defaulted per-language sections: images, resources) are stored once
 *    and shared by reference. Sharing changes reference counts of objects
 *    in the store, so it is done under the writer mutex. */
#include "kube/informer.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/store.h"
#include "kube/trim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BACKOFF_MIN_MS 200
#define BACKOFF_MAX_MS 30000
#define LIST_TIMEOUT_MS 60000
#define MAX_INTERNED 64
/* A watch that lasted this long, or delivered an event, worked: the next
 * reopen starts the backoff again from its minimum. Others (a server that
 * answers 200 and ends at once, 410 on every watch, garbage, drops) double
 * it, up to BACKOFF_MAX_MS. */
#define BACKOFF_RESET_S 10.0
/* Lists and events are parsed this deep (Go's decoder allows 10,000); an
 * object deeper than KUBE_INFORMER_MAX_OBJECT_DEPTH is then refused alone. */
#define PARSE_DEPTH 1024

const char *const kube_watch_error_names[KUBE_WATCH_NERRORS] = {
    "ended_early", "gone", "garbage", "stalled", "failed", "list_failed", "list_too_large", "list_too_many_pages",
    "too_deep"};

struct kube_informer {
    kube_informer_spec spec;
    kube_api *api;
    kube_prepare prep; /* by value: the caller's may be a temporary */
    kube_informer_opts o;
    pthread_mutex_t *wmu;
    kube_informer_ctl *ctl;
    void (*changed)(void *ud);
    void *ud;
    kube_logger log;
    pthread_t tid;
    bool started;
    json_object *map; /* under wmu */
    json_object **interned; /* under wmu: shared spec sections, one reference each */
    size_t ninterned;
    kube_api_conn *conn;
    char rv[128];
    char bad[160]; /* the last line that was not a watch event (a 200 answer's garbage), quoted; "" none */
    bool need_list, gone, missing;
    long backoff_ms;
    unsigned seed;
    atomic_bool synced;
    atomic_ulong restarts, relists, nobjects, lists;
    atomic_ulong errors[KUBE_WATCH_NERRORS];
    _Atomic double last_event;
    _Atomic double failing_since; /* CLOCK_MONOTONIC: no HTTP answer since then; 0: answering (apiclient.h) */
};

static void count_error(kube_informer *inf, int reason) { atomic_fetch_add(&inf->errors[reason], 1); }

/* The nesting of v (a scalar: 1), up to limit + 1. */
static int depth_of(json_object *v, int limit) {
    if (limit < 0) return 1;
    int d = 0;
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, c) {
            (void)k;
            int e = depth_of(c, limit - 1);
            if (e > d) d = e;
            if (d > limit) break;
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0, n = json_object_array_length(v); i < n && d <= limit; i++) {
            int e = depth_of(json_object_array_get_idx(v, i), limit - 1);
            if (e > d) d = e;
        }
    }
    return d + 1;
}

/* An object nested deeper than the collector admission parses is refused
 * alone (logged, counted): taking the whole list for unreadable kept every
 * replica not ready for as long as one such object existed. */
static bool too_deep(kube_informer *inf, json_object *o, const char *where) {
    if (depth_of(o, KUBE_INFORMER_MAX_OBJECT_DEPTH) <= KUBE_INFORMER_MAX_OBJECT_DEPTH) return false;
    const char *ns = kube_obj_str(o, "metadata.namespace"), *name = kube_obj_str(o, "metadata.name");
    kube_logf(&inf->log, KUBE_LOG_WARN, "%s %s: %s%s%s nested deeper than %d levels; skipped", where, inf->spec.name,
              ns ? ns : "", ns ? "/" : "", name ? name : "(no name)", KUBE_INFORMER_MAX_OBJECT_DEPTH);
    count_error(inf, KUBE_WATCH_TOO_DEEP);
    return true;
}

static json_object *parse_deep(const char *text, size_t len) {
    json_tokener *tok = json_tokener_new_ex(PARSE_DEPTH);
    if (!tok) return NULL;
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    if (json_tokener_get_error(tok) != json_tokener_success) {
        json_object_put(o);
        o = NULL;
    }
    json_tokener_free(tok);
    return o;
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const char *accept_list(const kube_informer *inf) {
    return inf->spec.metadata_only ? "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
                                   : "application/json";
}

static const char *accept_watch(const kube_informer *inf) {
    return inf->spec.metadata_only ? "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
                                   : "application/json";
}

kube_informer *kube_informer_new(const kube_informer_spec *spec, kube_api *api, const kube_prepare *prep,
                                 const kube_informer_opts *o, pthread_mutex_t *writer_mu, kube_informer_ctl *ctl,
                                 void (*changed)(void *ud), void *ud, const kube_logger *log) {
    kube_informer *inf = xcalloc(1, sizeof *inf);
    inf->spec = *spec;
    inf->api = api;
    if (prep) inf->prep = *prep;
    inf->o = *o;
    inf->wmu = writer_mu;
    inf->ctl = ctl;
    inf->changed = changed;
    inf->ud = ud;
    if (log) inf->log = *log;
    inf->map = jnew_obj();
    inf->need_list = true;
    if (strcmp(spec->kind, "Namespace") != 0) inf->interned = xcalloc(MAX_INTERNED, sizeof *inf->interned);
    inf->seed = (unsigned)time(NULL) ^ (unsigned)(uintptr_t)inf;
    return inf;
}

/* Sleeps the backoff (interruptible by stop) and doubles it; jitter keeps
 * replicas from reconnecting in lockstep. */
static void backoff(kube_informer *inf) {
    long ms = inf->backoff_ms ? inf->backoff_ms : BACKOFF_MIN_MS;
    long wait = ms / 2 + (long)(rand_r(&inf->seed) % (unsigned)(ms / 2 + 1));
    inf->backoff_ms = ms * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : ms * 2;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += wait / 1000;
    ts.tv_nsec += (wait % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    pthread_mutex_lock(&inf->ctl->mu);
    while (!atomic_load(&inf->ctl->stop) && pthread_cond_timedwait(&inf->ctl->cv, &inf->ctl->mu, &ts) == 0) {
    }
    pthread_mutex_unlock(&inf->ctl->mu);
}


/* Keeps only the annotations the engine reads of a namespace; false when
 * none is left (the namespace is then not kept). */
static bool namespace_filter(json_object *o) {
    json_object *meta = kube_obj_get(o, "metadata"), *ann = kube_obj_get(meta, "annotations");
    json_object_object_del(meta, "labels");
    json_object_object_del(meta, "uid");
    if (!json_object_is_type(ann, json_type_object)) return false;
    char *drop[256];
    int nd = 0;
    json_object_object_foreach(ann, k, v) {
        (void)v;
        if (!strstr(k, "opentelemetry.io/") && nd < 256) drop[nd++] = k;
    }
    for (int i = 0; i < nd; i++) json_object_object_del(ann, drop[i]);
    return json_object_object_length(ann) > 0;
}

/* Replaces sections of obj's spec that equal an interned one by the
 * interned one. Call under the writer mutex. */
static void intern(kube_informer *inf, json_object *obj) {
    json_object *spec = kube_obj_get(obj, "spec");
    if (!json_object_is_type(spec, json_type_object)) return;
    const char *keys[64];
    int nk = 0;
    json_object_object_foreach(spec, k, v)
        if (json_object_is_type(v, json_type_object) && nk < 64) keys[nk++] = k;
    for (int i = 0; i < nk; i++) {
        json_object *v = kube_obj_get(spec, keys[i]);
        size_t j = 0;
        while (j < inf->ninterned && !json_object_equal(inf->interned[j], v)) j++;
        if (j < inf->ninterned) {
            if (inf->interned[j] != v) jset(spec, keys[i], json_object_get(inf->interned[j]));
        } else if (inf->ninterned < MAX_INTERNED) {
            inf->interned[inf->ninterned++] = json_object_get(v);
        }
    }
}

/* The trimmed object and its map key, or NULL when it is not kept (then
 * *absent says whether the key should leave the map: a namespace that lost
 * its last annotation). */
static json_object *prepare(kube_informer *inf, json_object *o, char *key, size_t keylen, bool *absent) {
    *absent = false;
    if (!json_object_is_type(o, json_type_object)) return NULL;
    /* PartialObjectMetadata and list items carry another kind or none. */
    jset(o, "kind", jnew_str(inf->spec.kind));
    if (inf->spec.metadata_only) jset(o, "apiVersion", jnew_str("v1"));
    json_object *meta = kube_obj_get(o, "metadata");
    if (json_object_is_type(meta, json_type_object)) json_object_object_del(meta, "managedFields");
    const char *ns = kube_obj_str(o, "metadata.namespace"), *name = kube_obj_str(o, "metadata.name");
    if (!name) return NULL;
    snprintf(key, keylen, "%s/%s", ns ? ns : "", name);
    if (!strcmp(inf->spec.kind, "Namespace") && !namespace_filter(o)) {
        *absent = true;
        return NULL;
    }
    char where[128];
    snprintf(where, sizeof where, "watch %s", inf->spec.name);
    return kube_trim_object(o, &inf->prep, "", where, &inf->log);
}

static void set_count(kube_informer *inf) {
    atomic_store(&inf->nobjects, (unsigned long)json_object_object_length(inf->map));
}

/* A map whose objects may share interned sections: released under the
 * writer mutex like everything the store may also hold. */
static void drop_map(kube_informer *inf, json_object *map) {
    pthread_mutex_lock(inf->wmu);
    json_object_put(map);
    pthread_mutex_unlock(inf->wmu);
}

/* LIST in pages into a new map, swapped in whole. The pages and their
 * bytes are bounded (an endless continue token or a 100 MB list grew the
 * process without limit): past either the list fails, and the last good
 * map stays in service. */
static int list(kube_informer *inf) {
    json_object *fresh = jnew_obj();
    char cont[2048] = "", path[4096], err[512], rv[128] = "";
    size_t used = 0;
    for (long page = 0;; page++) {
        if (page >= inf->o.list_max_pages) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: more than %ld pages; the list is given up (the last good "
                      "objects stay in service)", inf->spec.name, inf->o.list_max_pages);
            count_error(inf, KUBE_WATCH_LIST_TOO_MANY_PAGES);
            drop_map(inf, fresh);
            return -1;
        }
        snprintf(path, sizeof path, "%s?limit=%ld%s%s", inf->spec.path, inf->o.page_size, cont[0] ? "&continue=" : "",
                 cont);
        char *body = NULL;
        size_t blen = 0;
        kube_api_conn_limit_body(inf->conn, (size_t)inf->o.list_max_bytes - used);
        int st = kube_api_get(inf->conn, path, accept_list(inf), LIST_TIMEOUT_MS, &body, &blen, err, sizeof err);
        kube_api_conn_limit_body(inf->conn, 0);
        if (st < 0 && kube_api_conn_body_cut(inf->conn)) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: more than %ld bytes; the list is given up (the last good "
                      "objects stay in service)", inf->spec.name, inf->o.list_max_bytes);
            count_error(inf, KUBE_WATCH_LIST_TOO_LARGE);
            drop_map(inf, fresh);
            return -1;
        }
        used += blen;
        if (st == 404 && !cont[0]) {
            /* The CRD is not installed: nothing of that kind can exist, and
             * readiness should not wait for it. Listed again after the
             * backoff, so installing it later is noticed. */
            if (!inf->missing)
                kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: the resource does not exist on this server (CRD not "
                          "installed?); treated as empty", inf->spec.name);
            inf->missing = true;
            free(body);
            pthread_mutex_lock(inf->wmu);
            json_object *old = inf->map;
            inf->map = fresh;
            json_object_put(old);
            set_count(inf);
            pthread_mutex_unlock(inf->wmu);
            atomic_store(&inf->synced, true);
            inf->changed(inf->ud);
            return -1;
        }
        if (st != 200) {
            if (st < 0) kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: %s", inf->spec.name, err);
            else kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: HTTP %d: %.300s", inf->spec.name, st, body);
            count_error(inf, KUBE_WATCH_LIST_FAILED);
            free(body);
            drop_map(inf, fresh);
            return -1;
        }
        json_object *doc = parse_deep(body, blen);
        free(body);
        json_object *items = kube_obj_get(doc, "items");
        if (!json_object_is_type(items, json_type_array)) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: the answer is not a list", inf->spec.name);
            count_error(inf, KUBE_WATCH_LIST_FAILED);
            json_object_put(doc);
            drop_map(inf, fresh);
            return -1;
        }
        for (size_t i = 0; i < json_object_array_length(items); i++) {
            char key[512];
            bool absent;
            json_object *item = json_object_array_get_idx(items, i);
            if (too_deep(inf, item, "list")) continue;
            json_object *o = prepare(inf, item, key, sizeof key, &absent);
            if (!o) continue;
            /* One object at a time, so the defaulted sections it drops are
             * reused by the next one instead of fragmenting the heap. */
            if (inf->interned) {
                pthread_mutex_lock(inf->wmu);
                intern(inf, o);
                pthread_mutex_unlock(inf->wmu);
            }
            jset(fresh, key, o);
        }
        const char *r = kube_obj_str(doc, "metadata.resourceVersion"), *c = kube_obj_str(doc, "metadata.continue");
        if (r) snprintf(rv, sizeof rv, "%s", r);
        if (c && strlen(c) >= sizeof cont) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "list %s: a continue token of %zu bytes; the list is given up",
                      inf->spec.name, strlen(c));
            count_error(inf, KUBE_WATCH_LIST_FAILED);
            json_object_put(doc);
            drop_map(inf, fresh);
            return -1;
        }
        snprintf(cont, sizeof cont, "%s", c ? c : "");
        json_object_put(doc);
        if (!cont[0]) break;
    }
    pthread_mutex_lock(inf->wmu);
    json_object *old = inf->map;
    inf->map = fresh;
    json_object_put(old);
    set_count(inf);
    pthread_mutex_unlock(inf->wmu);
    snprintf(inf->rv, sizeof inf->rv, "%s", rv);
    if (inf->missing) kube_logf(&inf->log, KUBE_LOG_INFO, "list %s: the resource exists now", inf->spec.name);
    inf->missing = false;
    if (atomic_fetch_add(&inf->lists, 1) > 0) atomic_fetch_add(&inf->relists, 1);
    atomic_store(&inf->last_event, mono());
    atomic_store(&inf->synced, true);
    inf->need_list = false;
    inf->changed(inf->ud);
    return 0;
}

/* One watch event line. Returns nonzero to end the stream. */
static int on_line(void *ud, char *line, size_t len) {
    kube_informer *inf = ud;
    if (atomic_load(&inf->ctl->stop)) return 1;
    json_object *ev = parse_deep(line, len);
    const char *type = kube_obj_str(ev, "type");
    json_object *obj = kube_obj_get(ev, "object");
    int stop = 0;
    if (!type || !json_object_is_type(obj, json_type_object)) {
        /* A non-200 body (a Status) also lands here. */
        if (kube_obj_get(ev, "code") && json_object_get_int(kube_obj_get(ev, "code")) == 410) inf->gone = true;
        else snprintf(inf->bad, sizeof inf->bad, "\"%.*s%s\"", len > 100 ? 100 : (int)len, line, len > 100 ? "..." : "");
        stop = 1;
    } else if (!strcmp(type, "ERROR")) {
        int code = json_object_get_int(kube_obj_get(obj, "code"));
        if (code == 410) inf->gone = true;
        else kube_logf(&inf->log, KUBE_LOG_WARN, "watch %s: error event %d: %s", inf->spec.name, code,
                       kube_obj_str(obj, "message") ? kube_obj_str(obj, "message") : "");
        stop = 1;
    } else {
        const char *rv = kube_obj_str(obj, "metadata.resourceVersion");
        if (rv) snprintf(inf->rv, sizeof inf->rv, "%s", rv);
        inf->backoff_ms = 0; /* the stream works: it delivers events (bookmarks too) */
        bool deep = strcmp(type, "DELETED") != 0 && too_deep(inf, obj, "watch");
        if (!deep && (!strcmp(type, "ADDED") || !strcmp(type, "MODIFIED") || !strcmp(type, "DELETED"))) {
            char key[512] = "";
            bool del = !strcmp(type, "DELETED"), absent;
            json_object *o = prepare(inf, obj, key, sizeof key, &absent);
            if (absent) del = true;
            if (o || (del && key[0])) {
                pthread_mutex_lock(inf->wmu);
                if (del) {
                    json_object_object_del(inf->map, key);
                } else {
                    if (inf->interned) intern(inf, o);
                    jset(inf->map, key, o);
                }
                set_count(inf);
                pthread_mutex_unlock(inf->wmu);
                if (del) json_object_put(o);
                atomic_store(&inf->last_event, mono());
                inf->changed(inf->ud);
            }
        }
    }
    json_object_put(ev);
    return stop;
}

/* Every reopen of a watch goes through the backoff: a server that
 * answers 200 and ends at once was asked again with no pause, 2,600 times
 * a second. Every reopen but a normal end (the server's timeoutSeconds) is
 * logged and counted (restarts, and errors by reason). */
static void *run(void *arg) {
    kube_informer *inf = arg;
    inf->conn = kube_api_conn_new(inf->api, &inf->ctl->stop);
    if (inf->conn) kube_api_conn_set_health(inf->conn, &inf->failing_since);
    while (inf->conn && !atomic_load(&inf->ctl->stop)) {
        if (inf->need_list) {
            if (list(inf) != 0) {
                backoff(inf);
                continue;
            }
        }
        char path[4096], err[512];
        snprintf(path, sizeof path, "%s?watch=1&allowWatchBookmarks=true&resourceVersion=%s&timeoutSeconds=%ld",
                 inf->spec.path, inf->rv, inf->o.watch_timeout_s);
        inf->gone = false;
        inf->bad[0] = 0;
        double t0 = mono();
        int st = kube_api_stream(inf->conn, path, accept_watch(inf), inf->o.idle_timeout_s, on_line, inf, err,
                                 sizeof err);
        if (atomic_load(&inf->ctl->stop)) break;
        double lasted = mono() - t0;
        if (lasted >= BACKOFF_RESET_S) inf->backoff_ms = 0;
        if (inf->gone || st == 410) {
            kube_logf(&inf->log, KUBE_LOG_INFO, "watch %s: resourceVersion %s is gone; listing again", inf->spec.name,
                      inf->rv);
            atomic_fetch_add(&inf->restarts, 1);
            count_error(inf, KUBE_WATCH_GONE);
            inf->need_list = true;
            backoff(inf);
            continue;
        }
        if (st == 200 && inf->bad[0]) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "watch %s: not a watch event: %s; reconnecting", inf->spec.name,
                      inf->bad);
            count_error(inf, KUBE_WATCH_GARBAGE);
        } else if (st == 200 && lasted + 1 >= (double)inf->o.watch_timeout_s) {
            inf->backoff_ms = 0; /* the server's timeoutSeconds: a normal end */
            backoff(inf);
            continue;
        } else if (st == 200) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "watch %s: the server ended the watch after %.1f s (%ld s asked); "
                      "reconnecting", inf->spec.name, lasted, inf->o.watch_timeout_s);
            count_error(inf, KUBE_WATCH_ENDED_EARLY);
        } else if (st < 0) {
            kube_logf(&inf->log, KUBE_LOG_WARN, "watch %s: %s; reconnecting", inf->spec.name, err);
            count_error(inf, kube_api_conn_stalled(inf->conn) ? KUBE_WATCH_STALLED : KUBE_WATCH_FAILED);
        } else {
            kube_logf(&inf->log, KUBE_LOG_WARN, "watch %s: HTTP %d; reconnecting", inf->spec.name, st);
            count_error(inf, KUBE_WATCH_FAILED);
        }
        atomic_fetch_add(&inf->restarts, 1);
        backoff(inf);
    }
    kube_api_conn_free(inf->conn);
    inf->conn = NULL;
    return NULL;
}

int kube_informer_start(kube_informer *inf) {
    if (pthread_create(&inf->tid, NULL, run, inf) != 0) return -1;
    inf->started = true;
    return 0;
}

void kube_informer_join(kube_informer *inf) {
    if (inf && inf->started) pthread_join(inf->tid, NULL);
    if (inf) inf->started = false;
}

void kube_informer_free(kube_informer *inf) {
    if (!inf) return;
    kube_informer_join(inf);
    json_object_put(inf->map);
    for (size_t i = 0; i < inf->ninterned; i++) json_object_put(inf->interned[i]);
    free(inf->interned);
    free(inf);
}

void kube_informer_collect(kube_informer *inf, json_object ***objs, size_t *n, size_t *cap) {
    size_t need = *n + (size_t)json_object_object_length(inf->map);
    if (need > *cap) {
        size_t c = *cap ? *cap : 64;
        while (c < need) c *= 2;
        json_object **v = xrealloc(*objs, sizeof *v * c);
        *objs = v;
        *cap = c;
    }
    json_object_object_foreach(inf->map, k, v) {
        (void)k;
        (*objs)[(*n)++] = json_object_get(v);
    }
}

void kube_informer_stats_get(kube_informer *inf, kube_informer_stats *st) {
    st->name = inf->spec.name;
    st->synced = atomic_load(&inf->synced);
    st->restarts = atomic_load(&inf->restarts);
    st->relists = atomic_load(&inf->relists);
    st->objects = atomic_load(&inf->nobjects);
    st->last_event = atomic_load(&inf->last_event);
    st->failing_since = atomic_load(&inf->failing_since);
    for (int i = 0; i < KUBE_WATCH_NERRORS; i++) st->errors[i] = atomic_load(&inf->errors[i]);
}
