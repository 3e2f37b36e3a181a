/* kube/informer.h - one resource kept up to date from the API server:
 * LIST, then WATCH from the list's resourceVersion with bookmarks and a
 * server-side timeoutSeconds, on its own thread.
 *
 * 410 Gone (as a status or as an ERROR event) relists; a dropped, refused,
 * stalled, garbled or early-ended stream is reopened from the last
 * resourceVersion seen. Every reopen and relist waits a capped exponential
 * backoff with jitter (reset once a watch has lasted 10 s), so neither a
 * flapping nor a hostile API server is hammered by every replica at once;
 * each one but a watch's normal end is logged and counted. LISTs are
 * bounded in pages and bytes; objects nested deeper than the collector
 * admission parses are refused one by one.
 *
 * Objects are trimmed and prepared by kube_trim_object() and kept in the
 * informer's own map. The maps' objects are also in the store, whose
 * reference counting is not atomic: every change to a map, and every
 * collection of it for publishing, happens under the writer mutex given at
 * creation, the same mutex every other store writer holds. */
#ifndef KUBE_INFORMER_H
#define KUBE_INFORMER_H

#include "kube/apiclient.h"
#include "kube/log.h"
#include "kube/trim.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct kube_informer kube_informer;

typedef struct kube_informer_spec {
    const char *name;     /* metrics label and log field: "namespaces" */
    const char *kind;     /* kind given to every object: "Namespace" */
    const char *path;     /* collection path: "/api/v1/namespaces" */
    bool metadata_only;   /* ask for PartialObjectMetadata (much smaller) */
} kube_informer_spec;

/* Shared by the informers of one source: the stop flag and the condition
 * their backoff sleeps wait on. */
typedef struct kube_informer_ctl {
    atomic_bool stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
} kube_informer_ctl;

typedef struct kube_informer_opts {
    long watch_timeout_s; /* timeoutSeconds asked of the server */
    long idle_timeout_s;  /* a watch with no complete event (nor bookmark) this long is reopened */
    long page_size;       /* LIST limit */
    long list_max_pages;  /* a LIST of more pages fails */
    long list_max_bytes;  /* a LIST of more bytes (all pages, decompressed) fails */
} kube_informer_opts;

/* An object nested deeper than this is refused alone, with a warning: what
 * the collector admission's parse takes (json-c's default depth, 32, for
 * the AdmissionReview, whose object sits at the third level). */
#define KUBE_INFORMER_MAX_OBJECT_DEPTH 30

/* Why a watch was reopened or a list given up (errors_total's reason). */
enum { KUBE_WATCH_ENDED_EARLY, KUBE_WATCH_GONE, KUBE_WATCH_GARBAGE, KUBE_WATCH_STALLED, KUBE_WATCH_FAILED,
       KUBE_WATCH_LIST_FAILED, KUBE_WATCH_LIST_TOO_LARGE, KUBE_WATCH_LIST_TOO_MANY_PAGES, KUBE_WATCH_TOO_DEEP,
       KUBE_WATCH_NERRORS };
extern const char *const kube_watch_error_names[KUBE_WATCH_NERRORS];

/* changed(ud) is called (from the informer thread, without locks held)
 * after the map changed. */
kube_informer *kube_informer_new(const kube_informer_spec *spec, kube_api *api, const kube_prepare *prep,
                                 const kube_informer_opts *o, pthread_mutex_t *writer_mu, kube_informer_ctl *ctl,
                                 void (*changed)(void *ud), void *ud, const kube_logger *log);
int kube_informer_start(kube_informer *inf);
/* Joins the thread; set ctl->stop and broadcast ctl->cv first. */
void kube_informer_join(kube_informer *inf);
void kube_informer_free(kube_informer *inf);

/* Appends a new reference to every object to *objs (grown as needed).
 * Call with the writer mutex held. */
void kube_informer_collect(kube_informer *inf, json_object ***objs, size_t *n, size_t *cap);

typedef struct kube_informer_stats {
    const char *name;
    bool synced;               /* listed at least once */
    unsigned long restarts;    /* watches reopened after an error, drop or stall */
    unsigned long relists;     /* LISTs after the first (410 Gone, errors) */
    unsigned long objects;
    double last_event;         /* CLOCK_MONOTONIC seconds of the last change; 0: none */
    double failing_since;      /* CLOCK_MONOTONIC seconds since which nothing got an HTTP answer; 0: answering */
    unsigned long errors[KUBE_WATCH_NERRORS];
} kube_informer_stats;
void kube_informer_stats_get(kube_informer *inf, kube_informer_stats *st);
#endif
