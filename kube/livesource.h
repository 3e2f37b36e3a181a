/* kube/livesource.h - the API server as a store layer (KUBE_LAYER_LIVE),
 * plus the on-demand lookups an admission may make.
 *
 * Three informers (Namespaces as PartialObjectMetadata, Instrumentations
 * v1alpha1, OpenTelemetryCollectors v1beta1) run on their own threads; a
 * publisher thread merges their maps into one array for the live layer.
 * Bursts are coalesced: a change is published at once when the last
 * publication is more than KUBE_LIVE_COALESCE_MS old, otherwise at that
 * mark, so 10,000 namespaces arriving at start cost a few rebuilds, not
 * 10,000. Live objects win over files for the same kind/namespace/name
 * (the store's layer order).
 *
 * Owner kinds (ReplicaSet, Job, ...), Secrets and ConfigMaps are not
 * watched (a cluster has far too many, and the webhook needs a handful):
 * the admission thread GETs them (metadata only) through its own
 * connection, with a small per-thread cache (positive and negative, short
 * TTL) and a per-admission budget; when the budget is spent the lookup
 * answers KUBE_UNKNOWN and the engine falls back (pod-template-hash rule,
 * a warning). Objects fetched on demand belong to that thread and never
 * enter the shared store.
 *
 * With --native-sidecars auto a background thread reads GET /version at
 * start and every KUBE_LIVE_VERSION_EVERY_S; 1.29 or newer turns native
 * sidecars on. */
#ifndef KUBE_LIVESOURCE_H
#define KUBE_LIVESOURCE_H

#include "kube/apiclient.h"
#include "kube/informer.h"
#include "kube/log.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "kube/trim.h"

#include <pthread.h>
#include <stdbool.h>

#define KUBE_LIVE_COALESCE_MS 50
#define KUBE_LIVE_VERSION_EVERY_S 300
#define KUBE_LIVE_NRES 3
/* A LIST's bounds: 1,000 pages of 500 objects, 32 MiB of JSON (10,000
 * annotated namespaces as metadata are about 3 MiB). Past either the LIST
 * fails (logged, counted) and is tried again after the backoff; the last
 * good objects stay in service. */
#define KUBE_LIVE_LIST_MAX_PAGES 1000
#define KUBE_LIVE_LIST_MAX_BYTES (32L << 20)

typedef struct kube_livesource kube_livesource;

typedef struct kube_live_opts {
    long watch_timeout_s;  /* server-side timeoutSeconds of a watch (default 300) */
    long idle_timeout_s;   /* reopen a watch silent this long (default 120) */
    long lookup_budget_ms; /* on-demand GETs per admission, in all (default 200) */
    long list_max_pages;   /* a LIST of more pages fails (default KUBE_LIVE_LIST_MAX_PAGES) */
    long list_max_bytes;   /* a LIST of more bytes fails (default KUBE_LIVE_LIST_MAX_BYTES) */
    bool check_version;    /* --native-sidecars auto */
} kube_live_opts;

/* Takes ownership of api. writer_mu must be held by every other writer of
 * the store around kube_store_set_layer() (store.h: reference counts are
 * only touched by writers; the live objects are also in the informers'
 * maps). */
kube_livesource *kube_livesource_new(kube_store *store, kube_api *api, const kube_prepare *prep,
                                     pthread_mutex_t *writer_mu, const kube_live_opts *o, const kube_logger *log);
int kube_livesource_start(kube_livesource *ls);
/* Stops and joins every thread (within about a second). */
void kube_livesource_stop(kube_livesource *ls);
void kube_livesource_free(kube_livesource *ls);

/* Every informer has listed at least once and the result is published. */
bool kube_livesource_synced(kube_livesource *ls);
/* The longest time any informer's requests have had no HTTP answer at all
 * (refused, unreachable, timed out; a watch open with 200 is an answer,
 * quiet or not, and so is any status); 0 while all are answered. For
 * --stale-grace. */
double kube_livesource_silence(kube_livesource *ls);
/* 1 when the server is 1.29 or newer, 0 when older, -1 not known yet. */
int kube_livesource_native_sidecars(kube_livesource *ls);

/* Per-admission lookups. kube_live_begin fills src for one mutate_pod()
 * call on the calling thread; kube_live_end releases what the call
 * borrowed. */
typedef struct kube_live_req {
    kube_livesource *ls;
    const kube_snapshot *snap;
    double deadline;        /* CLOCK_MONOTONIC seconds */
    struct kube_live_thread *t;
} kube_live_req;
void kube_live_begin(kube_live_req *r, kube_livesource *ls, const kube_snapshot *snap, kube_reader *src);
void kube_live_end(kube_live_req *r);

/* Outcomes of on-demand lookups. */
enum { KUBE_LOOKUP_CACHED, KUBE_LOOKUP_FOUND, KUBE_LOOKUP_NOT_FOUND, KUBE_LOOKUP_ERROR, KUBE_LOOKUP_TIMEOUT,
       KUBE_LOOKUP_BUDGET, KUBE_LOOKUP_NRESULTS };
extern const char *const kube_lookup_names[KUBE_LOOKUP_NRESULTS];
#define KUBE_LOOKUP_NBUCKETS 9
extern const double kube_lookup_bounds[KUBE_LOOKUP_NBUCKETS];

/* Outcomes of access reviews. */
enum { KUBE_REVIEW_ALLOWED, KUBE_REVIEW_DENIED, KUBE_REVIEW_ERROR, KUBE_REVIEW_NRESULTS };
extern const char *const kube_review_names[KUBE_REVIEW_NRESULTS];

/* Asks the API server whether spec's subject may do what it names: POSTs
 * a SubjectAccessReview with spec ({user, groups, uid, extra,
 * resourceAttributes | nonResourceAttributes}, borrowed) on the calling
 * thread's connection, answered before deadline (CLOCK_MONOTONIC
 * seconds). 1 allowed, 0 not allowed (or explicitly denied), -1 with the
 * reason in err when there is no answer. For the collector admission's
 * privilege-escalation check (collector/validate.h). */
int kube_livesource_access_review(kube_livesource *ls, json_object *spec, double deadline, char *err, size_t errlen);

typedef struct kube_live_stats {
    struct {
        const char *name;
        bool synced;
        unsigned long restarts, relists, objects;
        unsigned long errors[KUBE_WATCH_NERRORS]; /* informer.h's reasons */
        double last_event_unix; /* Unix seconds of the last change seen; 0 when nothing yet */
    } res[KUBE_LIVE_NRES];
    unsigned long lookups[KUBE_LOOKUP_NRESULTS];
    unsigned long lookup_buckets[KUBE_LOOKUP_NBUCKETS + 1]; /* GETs sent, by duration */
    double lookup_seconds;
    unsigned long publishes;
    int native_sidecars;
    unsigned long reviews[KUBE_REVIEW_NRESULTS];
} kube_live_stats;
void kube_livesource_stats(kube_livesource *ls, kube_live_stats *st);
#endif
