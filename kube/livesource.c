/* kube/livesource.c - informers into the live layer, on-demand lookups,
 * the server version; see livesource.h.
 *
 * Threads: three informers, one publisher, one version checker, all
 * blocking on libcurl or a condition variable; none of them ever runs on
 * an h2o loop. The admission threads only read snapshots and, for the few
 * kinds we do not watch, make bounded GETs on their own connection.
 *
 * Why a per-thread cache rather than a shared one: a shared cache would
 * need its objects reference-counted across threads (json-c counts are not
 * atomic) or copied on every hit; a per-thread one needs no lock at all.
 * The price is one miss per thread for a ReplicaSet whose pods arrive on
 * different loops, which the short TTL makes cheap anyway. */
#include "kube/livesource.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/informer.h"
#include "kube/trim.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CACHE_N 128
#define CACHE_TTL_FOUND 10.0   /* seconds */
#define CACHE_TTL_MISSING 3.0
#define VERSION_RETRY_MAX_S 30 /* a failed GET /version is retried sooner than a good one */
#define META_ACCEPT "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"

const char *const kube_lookup_names[KUBE_LOOKUP_NRESULTS] = {"cached", "found", "not_found", "error", "timeout",
                                                            "budget_spent"};
const char *const kube_review_names[KUBE_REVIEW_NRESULTS] = {"allowed", "denied", "error"};
const double kube_lookup_bounds[KUBE_LOOKUP_NBUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5};

static const kube_informer_spec specs[KUBE_LIVE_NRES] = {
    {"namespaces", "Namespace", "/api/v1/namespaces", true},
    {"instrumentations", "Instrumentation", "/apis/opentelemetry.io/v1alpha1/instrumentations", false},
    {"opentelemetrycollectors", "OpenTelemetryCollector", "/apis/opentelemetry.io/v1beta1/opentelemetrycollectors",
     false},
};

struct kube_livesource {
    kube_store *store;
    kube_api *api;
    kube_prepare prep; /* by value: the caller's may be a temporary */
    pthread_mutex_t *wmu;
    kube_live_opts o;
    kube_logger log;
    kube_informer_ctl ctl;
    kube_informer *inf[KUBE_LIVE_NRES];
    pthread_t pub_tid, ver_tid;
    bool pub_started, ver_started;
    pthread_mutex_t pmu; /* dirty, last_pub */
    pthread_cond_t pcv;
    bool dirty;
    double last_pub;
    atomic_int native;
    atomic_ulong publishes;
    atomic_bool ready; /* published once every informer had listed */
    atomic_ulong lookups[KUBE_LOOKUP_NRESULTS], buckets[KUBE_LOOKUP_NBUCKETS + 1];
    atomic_ullong lookup_ns;
    atomic_ulong reviews[KUBE_REVIEW_NRESULTS];
    pthread_key_t key;
};

typedef struct centry {
    char key[600];
    json_object *obj; /* NULL: known not to exist */
    double expires;
    uint64_t used;
    bool set;
} centry;

typedef struct kube_live_thread {
    kube_api_conn *conn;
    centry c[CACHE_N];
    uint64_t tick;
    json_object **deferred; /* evicted during the current admission */
    size_t ndeferred, capdeferred;
} kube_live_thread;

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct timespec abs_in(double seconds) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    long ns = (long)(seconds * 1e9);
    ts.tv_sec += ns / 1000000000L;
    ts.tv_nsec += ns % 1000000000L;
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    return ts;
}

static void thread_free(void *p) {
    kube_live_thread *t = p;
    if (!t) return;
    kube_api_conn_free(t->conn);
    for (int i = 0; i < CACHE_N; i++) json_object_put(t->c[i].obj);
    for (size_t i = 0; i < t->ndeferred; i++) json_object_put(t->deferred[i]);
    free(t->deferred);
    free(t);
}

static void on_changed(void *ud) {
    kube_livesource *ls = ud;
    pthread_mutex_lock(&ls->pmu);
    ls->dirty = true;
    pthread_cond_signal(&ls->pcv);
    pthread_mutex_unlock(&ls->pmu);
}

kube_livesource *kube_livesource_new(kube_store *store, kube_api *api, const kube_prepare *prep,
                                     pthread_mutex_t *writer_mu, const kube_live_opts *o, const kube_logger *log) {
    kube_livesource *ls = xcalloc(1, sizeof *ls);
    ls->store = store;
    ls->api = api;
    if (prep) ls->prep = *prep;
    ls->wmu = writer_mu;
    ls->o = *o;
    if (ls->o.watch_timeout_s <= 0) ls->o.watch_timeout_s = 300;
    if (ls->o.idle_timeout_s <= 0) ls->o.idle_timeout_s = 120;
    if (ls->o.lookup_budget_ms <= 0) ls->o.lookup_budget_ms = 200;
    if (log) ls->log = *log;
    atomic_init(&ls->ctl.stop, false);
    pthread_mutex_init(&ls->ctl.mu, NULL);
    pthread_cond_init(&ls->ctl.cv, NULL);
    pthread_mutex_init(&ls->pmu, NULL);
    pthread_cond_init(&ls->pcv, NULL);
    atomic_init(&ls->native, -1);
    pthread_key_create(&ls->key, thread_free);
    if (ls->o.list_max_pages <= 0) ls->o.list_max_pages = KUBE_LIVE_LIST_MAX_PAGES;
    if (ls->o.list_max_bytes <= 0) ls->o.list_max_bytes = KUBE_LIVE_LIST_MAX_BYTES;
    kube_informer_opts io = {ls->o.watch_timeout_s, ls->o.idle_timeout_s, 500, ls->o.list_max_pages,
                             ls->o.list_max_bytes};
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        ls->inf[i] = kube_informer_new(&specs[i], api, &ls->prep, &io, writer_mu, &ls->ctl, on_changed, ls, &ls->log);
    return ls;
}

static bool all_synced(kube_livesource *ls) {
    for (int i = 0; i < KUBE_LIVE_NRES; i++) {
        kube_informer_stats st;
        kube_informer_stats_get(ls->inf[i], &st);
        if (!st.synced) return false;
    }
    return true;
}

static void publish(kube_livesource *ls) {
    json_object **objs = NULL;
    size_t n = 0, cap = 0;
    /* Read before collecting: what we publish then holds every list. */
    bool synced = all_synced(ls);
    base_release_begin();
    pthread_mutex_lock(ls->wmu);
    for (int i = 0; i < KUBE_LIVE_NRES; i++) kube_informer_collect(ls->inf[i], &objs, &n, &cap);
    kube_store_set_layer(ls->store, KUBE_LAYER_LIVE, objs, n);
    pthread_mutex_unlock(ls->wmu);
    base_release_end(true);
    atomic_fetch_add(&ls->publishes, 1);
    if (synced) atomic_store(&ls->ready, true);
}

static void *publisher(void *arg) {
    kube_livesource *ls = arg;
    pthread_mutex_lock(&ls->pmu);
    while (!atomic_load(&ls->ctl.stop)) {
        if (!ls->dirty) {
            pthread_cond_wait(&ls->pcv, &ls->pmu);
            continue;
        }
        double wait = ls->last_pub + KUBE_LIVE_COALESCE_MS / 1000.0 - mono();
        if (wait > 0) {
            /* Still inside the last publication's window: let the burst
             * gather, then publish it whole. */
            struct timespec ts = abs_in(wait);
            pthread_cond_timedwait(&ls->pcv, &ls->pmu, &ts);
            continue;
        }
        ls->dirty = false;
        pthread_mutex_unlock(&ls->pmu);
        publish(ls);
        pthread_mutex_lock(&ls->pmu);
        ls->last_pub = mono();
    }
    pthread_mutex_unlock(&ls->pmu);
    return NULL;
}

/* "1", "29+" -> 1.29; the gitVersion when major/minor are empty. */
static int parse_version(json_object *v, int *major, int *minor) {
    const char *ma = kube_obj_str(v, "major"), *mi = kube_obj_str(v, "minor"), *git = kube_obj_str(v, "gitVersion");
    if (ma && mi && *ma && *mi) {
        *major = atoi(ma);
        *minor = atoi(mi);
        return *major > 0 ? 0 : -1;
    }
    if (git && sscanf(git, "v%d.%d", major, minor) == 2) return 0;
    return -1;
}

static void *version_main(void *arg) {
    kube_livesource *ls = arg;
    kube_api_conn *conn = kube_api_conn_new(ls->api, &ls->ctl.stop);
    double retry = 1;
    while (conn && !atomic_load(&ls->ctl.stop)) {
        char *body = NULL, err[512];
        int st = kube_api_get(conn, "/version", NULL, 5000, &body, NULL, err, sizeof err);
        json_object *v = st == 200 ? json_tokener_parse(body) : NULL;
        int major = 0, minor = 0;
        double again = retry;
        retry = retry * 2 > VERSION_RETRY_MAX_S ? VERSION_RETRY_MAX_S : retry * 2;
        if (v && parse_version(v, &major, &minor) == 0) {
            int native = major > 1 || (major == 1 && minor >= 29);
            if (atomic_exchange(&ls->native, native) != native)
                kube_logf(&ls->log, KUBE_LOG_INFO, "Kubernetes %d.%d: native sidecars %s", major, minor,
                          native ? "on" : "off");
            again = KUBE_LIVE_VERSION_EVERY_S;
            retry = 1;
        } else if (st < 0) {
            kube_logf(&ls->log, KUBE_LOG_WARN, "GET /version: %s", err);
        } else {
            kube_logf(&ls->log, KUBE_LOG_WARN, "GET /version: HTTP %d", st);
        }
        json_object_put(v);
        free(body);
        struct timespec ts = abs_in(again);
        pthread_mutex_lock(&ls->ctl.mu);
        while (!atomic_load(&ls->ctl.stop) && pthread_cond_timedwait(&ls->ctl.cv, &ls->ctl.mu, &ts) == 0) {
        }
        pthread_mutex_unlock(&ls->ctl.mu);
    }
    kube_api_conn_free(conn);
    return NULL;
}

int kube_livesource_start(kube_livesource *ls) {
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        if (!ls->inf[i] || kube_informer_start(ls->inf[i]) != 0) return -1;
    if (pthread_create(&ls->pub_tid, NULL, publisher, ls) != 0) return -1;
    ls->pub_started = true;
    if (ls->o.check_version) {
        if (pthread_create(&ls->ver_tid, NULL, version_main, ls) != 0) return -1;
        ls->ver_started = true;
    }
    return 0;
}

void kube_livesource_stop(kube_livesource *ls) {
    if (!ls) return;
    atomic_store(&ls->ctl.stop, true);
    pthread_mutex_lock(&ls->ctl.mu);
    pthread_cond_broadcast(&ls->ctl.cv);
    pthread_mutex_unlock(&ls->ctl.mu);
    pthread_mutex_lock(&ls->pmu);
    pthread_cond_broadcast(&ls->pcv);
    pthread_mutex_unlock(&ls->pmu);
    for (int i = 0; i < KUBE_LIVE_NRES; i++) kube_informer_join(ls->inf[i]);
    if (ls->pub_started) pthread_join(ls->pub_tid, NULL);
    if (ls->ver_started) pthread_join(ls->ver_tid, NULL);
    ls->pub_started = ls->ver_started = false;
}

void kube_livesource_free(kube_livesource *ls) {
    if (!ls) return;
    kube_livesource_stop(ls);
    /* The informers' maps hold references to objects the store also holds. */
    pthread_mutex_lock(ls->wmu);
    for (int i = 0; i < KUBE_LIVE_NRES; i++) kube_informer_free(ls->inf[i]);
    pthread_mutex_unlock(ls->wmu);
    /* This thread's cache, if it made lookups (tests do). */
    thread_free(pthread_getspecific(ls->key));
    pthread_setspecific(ls->key, NULL);
    pthread_key_delete(ls->key);
    pthread_mutex_destroy(&ls->ctl.mu);
    pthread_cond_destroy(&ls->ctl.cv);
    pthread_mutex_destroy(&ls->pmu);
    pthread_cond_destroy(&ls->pcv);
    kube_api_free(ls->api);
    free(ls);
}

bool kube_livesource_synced(kube_livesource *ls) { return atomic_load(&ls->ready); }

double kube_livesource_silence(kube_livesource *ls) {
    double now = mono(), worst = 0;
    for (int i = 0; i < KUBE_LIVE_NRES; i++) {
        kube_informer_stats s;
        kube_informer_stats_get(ls->inf[i], &s);
        if (s.failing_since > 0 && now - s.failing_since > worst) worst = now - s.failing_since;
    }
    return worst;
}

int kube_livesource_native_sidecars(kube_livesource *ls) { return atomic_load(&ls->native); }

void kube_livesource_stats(kube_livesource *ls, kube_live_stats *st) {
    memset(st, 0, sizeof *st);
    /* The informers keep monotonic times (what their timeouts need); the
     * metric is a Unix timestamp, so the age is taken back from now. */
    double now = mono();
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    double unix_now = (double)rt.tv_sec + (double)rt.tv_nsec / 1e9;
    for (int i = 0; i < KUBE_LIVE_NRES; i++) {
        kube_informer_stats s;
        kube_informer_stats_get(ls->inf[i], &s);
        st->res[i].name = s.name;
        st->res[i].synced = s.synced;
        st->res[i].restarts = s.restarts;
        st->res[i].relists = s.relists;
        st->res[i].objects = s.objects;
        memcpy(st->res[i].errors, s.errors, sizeof s.errors);
        st->res[i].last_event_unix = s.last_event > 0 ? unix_now - (now - s.last_event) : 0;
    }
    for (int i = 0; i < KUBE_LOOKUP_NRESULTS; i++) st->lookups[i] = atomic_load(&ls->lookups[i]);
    for (int i = 0; i <= KUBE_LOOKUP_NBUCKETS; i++) st->lookup_buckets[i] = atomic_load(&ls->buckets[i]);
    st->lookup_seconds = (double)atomic_load(&ls->lookup_ns) / 1e9;
    st->publishes = atomic_load(&ls->publishes);
    st->native_sidecars = atomic_load(&ls->native);
    for (int i = 0; i < KUBE_REVIEW_NRESULTS; i++) st->reviews[i] = atomic_load(&ls->reviews[i]);
}

/* ---- on-demand lookups ---- */

static const struct { const char *kind, *prefix, *plural; } demand[] = {
    {"ReplicaSet", "/apis/apps/v1", "replicasets"}, {"Deployment", "/apis/apps/v1", "deployments"},
    {"StatefulSet", "/apis/apps/v1", "statefulsets"}, {"DaemonSet", "/apis/apps/v1", "daemonsets"},
    {"Job", "/apis/batch/v1", "jobs"},            {"CronJob", "/apis/batch/v1", "cronjobs"},
    {"Secret", "/api/v1", "secrets"},             {"ConfigMap", "/api/v1", "configmaps"},
};

/* Object names are DNS subdomains: anything else cannot exist, and
 * checking keeps user-controlled text (owner references, secret names) out
 * of request paths. */
static bool valid_name(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n == 0 || n > 253) return false;
    for (size_t i = 0; i < n; i++)
        if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '-' && s[i] != '.') return false;
    return true;
}

static kube_live_thread *thread_state(kube_livesource *ls) {
    kube_live_thread *t = pthread_getspecific(ls->key);
    if (t) return t;
    t = xcalloc(1, sizeof *t);
    if (!(t->conn = kube_api_conn_new(ls->api, &ls->ctl.stop))) {
        free(t);
        return NULL;
    }
    pthread_setspecific(ls->key, t);
    return t;
}

static void defer_put(kube_live_thread *t, json_object *o) {
    if (!o) return;
    if (t->ndeferred == t->capdeferred) {
        size_t c = t->capdeferred ? t->capdeferred * 2 : 8;
        json_object **v = xrealloc(t->deferred, sizeof *v * c);
        t->deferred = v;
        t->capdeferred = c;
    }
    t->deferred[t->ndeferred++] = o;
}

static void cache_put(kube_live_thread *t, const char *key, json_object *obj, double ttl) {
    centry *slot = NULL;
    double now = mono();
    for (int i = 0; i < CACHE_N && !slot; i++)
        if (t->c[i].set && !strcmp(t->c[i].key, key)) slot = &t->c[i];
    for (int i = 0; i < CACHE_N && !slot; i++)
        if (!t->c[i].set || t->c[i].expires < now) slot = &t->c[i];
    if (!slot) {
        slot = &t->c[0];
        for (int i = 1; i < CACHE_N; i++)
            if (t->c[i].used < slot->used) slot = &t->c[i];
    }
    /* The old object may have been handed to this admission already. */
    defer_put(t, slot->obj);
    snprintf(slot->key, sizeof slot->key, "%s", key);
    slot->obj = obj;
    slot->expires = now + ttl;
    slot->used = ++t->tick;
    slot->set = true;
}

static void count(kube_livesource *ls, int what) { atomic_fetch_add_explicit(&ls->lookups[what], 1, memory_order_relaxed); }

static kube_found on_demand(kube_live_req *r, int d, const char *ns, const char *name, json_object **out) {
    kube_livesource *ls = r->ls;
    if (!valid_name(ns) || !valid_name(name)) return KUBE_NOT_FOUND;
    char key[600];
    snprintf(key, sizeof key, "%s/%s/%s", demand[d].kind, ns, name);
    kube_live_thread *t = r->t ? r->t : (r->t = thread_state(ls));
    if (!t) return KUBE_UNKNOWN;
    double now = mono();
    for (int i = 0; i < CACHE_N; i++) {
        centry *e = &t->c[i];
        if (!e->set || e->expires < now || strcmp(e->key, key)) continue;
        e->used = ++t->tick;
        count(ls, KUBE_LOOKUP_CACHED);
        *out = e->obj;
        return e->obj ? KUBE_FOUND : KUBE_NOT_FOUND;
    }
    long left_ms = (long)((r->deadline - now) * 1000);
    if (left_ms < 1) {
        count(ls, KUBE_LOOKUP_BUDGET);
        return KUBE_UNKNOWN;
    }
    char path[800], err[512], *body = NULL;
    snprintf(path, sizeof path, "%s/namespaces/%s/%s/%s", demand[d].prefix, ns, demand[d].plural, name);
    int st = kube_api_get(t->conn, path, META_ACCEPT, left_ms, &body, NULL, err, sizeof err);
    double dt = mono() - now;
    size_t b = 0;
    while (b < KUBE_LOOKUP_NBUCKETS && dt > kube_lookup_bounds[b]) b++;
    atomic_fetch_add_explicit(&ls->buckets[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ls->lookup_ns, (unsigned long long)(dt * 1e9), memory_order_relaxed);
    kube_found res = KUBE_UNKNOWN;
    if (st == 200) {
        json_object *doc = json_tokener_parse(body);
        if (json_object_is_type(doc, json_type_object)) {
            jset(doc, "kind", jnew_str(demand[d].kind));
            json_object *o = kube_trim_object(doc, &ls->prep, ns, "lookup", &ls->log);
            if (o) {
                cache_put(t, key, o, CACHE_TTL_FOUND);
                *out = o;
                res = KUBE_FOUND;
                count(ls, KUBE_LOOKUP_FOUND);
            }
        }
        json_object_put(doc);
        if (res != KUBE_FOUND) count(ls, KUBE_LOOKUP_ERROR);
    } else if (st == 404) {
        cache_put(t, key, NULL, CACHE_TTL_MISSING);
        res = KUBE_NOT_FOUND;
        count(ls, KUBE_LOOKUP_NOT_FOUND);
    } else if (st < 0 && mono() >= r->deadline - 0.002) {
        count(ls, KUBE_LOOKUP_TIMEOUT);
        kube_logf(&ls->log, KUBE_LOG_WARN, "GET %s: no answer within the admission's lookup budget", path);
    } else {
        count(ls, KUBE_LOOKUP_ERROR);
        if (st < 0) kube_logf(&ls->log, KUBE_LOG_WARN, "GET %s: %s", path, err);
        else kube_logf(&ls->log, KUBE_LOG_WARN, "GET %s: HTTP %d", path, st);
    }
    free(body);
    return res;
}

static kube_found live_get(void *ud, const char *kind, const char *ns, const char *name, json_object **out) {
    kube_live_req *r = ud;
    bool cluster = !strcmp(kind, "Namespace");
    *out = kube_snapshot_get(r->snap, kind, cluster ? NULL : ns, name);
    if (*out) return KUBE_FOUND;
    for (size_t d = 0; d < sizeof demand / sizeof demand[0]; d++)
        if (!strcmp(kind, demand[d].kind)) return on_demand(r, (int)d, ns, name, out);
    /* Watched kinds: the snapshot is the answer. */
    return KUBE_NOT_FOUND;
}

static kube_found live_each(void *ud, const char *kind, const char *ns, void (*fn)(void *arg, json_object *obj),
                               void *arg) {
    kube_live_req *r = ud;
    kube_snapshot_each(r->snap, kind, ns, fn, arg);
    return KUBE_FOUND;
}

void kube_live_begin(kube_live_req *r, kube_livesource *ls, const kube_snapshot *snap, kube_reader *src) {
    r->ls = ls;
    r->snap = snap;
    r->deadline = mono() + (double)ls->o.lookup_budget_ms / 1000.0;
    r->t = pthread_getspecific(ls->key);
    src->ud = r;
    src->get = live_get;
    src->each = live_each;
}

void kube_live_end(kube_live_req *r) {
    kube_live_thread *t = r->t;
    if (!t) return;
    for (size_t i = 0; i < t->ndeferred; i++) json_object_put(t->deferred[i]);
    t->ndeferred = 0;
}

/* ---- access reviews ---- */

#define SAR_PATH "/apis/authorization.k8s.io/v1/subjectaccessreviews"

int kube_livesource_access_review(kube_livesource *ls, json_object *spec, double deadline, char *err, size_t errlen) {
    kube_live_thread *t = thread_state(ls);
    if (!t) {
        atomic_fetch_add_explicit(&ls->reviews[KUBE_REVIEW_ERROR], 1, memory_order_relaxed);
        snprintf(err, errlen, "cannot connect to the API server");
        return -1;
    }
    long left_ms = (long)((deadline - mono()) * 1000);
    if (left_ms < 1) {
        atomic_fetch_add_explicit(&ls->reviews[KUBE_REVIEW_ERROR], 1, memory_order_relaxed);
        snprintf(err, errlen, "no answer within the admission's budget");
        return -1;
    }
    json_object *review = jnew_obj();
    jset_str(review, "apiVersion", "authorization.k8s.io/v1");
    jset_str(review, "kind", "SubjectAccessReview");
    jset(review, "spec", json_object_get(spec));
    const char *text = json_object_to_json_string_ext(review, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    char *body = NULL, cerr[512] = "";
    int st = kube_api_request(t->conn, "POST", SAR_PATH, NULL, "application/json", text, strlen(text), left_ms, &body,
                              NULL, cerr, sizeof cerr);
    json_object_put(review);
    json_object *doc = st == 200 || st == 201 ? json_tokener_parse(body) : NULL;
    json_object *status = jmap(doc, "status");
    int rc = -1;
    if (status) {
        rc = jbool(status, "allowed") && !jbool(status, "denied") ? 1 : 0;
    } else if (st < 0) {
        snprintf(err, errlen, "%s", mono() >= deadline - 0.002 ? "no answer within the admission's budget" : cerr);
    } else {
        json_object *e = body ? json_tokener_parse(body) : NULL;
        const char *msg = jstr(e, "message");
        snprintf(err, errlen, "POST %s: HTTP %d%s%s", SAR_PATH, st, msg ? ": " : "", msg ? msg : "");
        json_object_put(e);
    }
    atomic_fetch_add_explicit(&ls->reviews[rc == 1 ? KUBE_REVIEW_ALLOWED : rc == 0 ? KUBE_REVIEW_DENIED : KUBE_REVIEW_ERROR],
                              1, memory_order_relaxed);
    if (rc < 0) kube_logf(&ls->log, KUBE_LOG_WARN, "SubjectAccessReview: %s", err);
    json_object_put(doc);
    free(body);
    return rc;
}
