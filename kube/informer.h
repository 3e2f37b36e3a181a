/* kube/informer.h - one resource kept up to date from the API server:
 * LIST, then WATCH from the list's resourceVersion with bookmarks and a
 * server-side timeoutSeconds, on its own thread.
 *
 * 410 Gone (as a status or as an ERROR event) relists; a dropped, refused
 * or stalled stream is reopened from the last resourceVersion seen after a
 * capped exponential backoff with jitter (reset by the next success), so a
 * flapping API server is not hammered by every replica at once.
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
    long idle_timeout_s;  /* a watch silent this long (no event, no bookmark) is reopened */
    long page_size;       /* LIST limit */
} kube_informer_opts;

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
} kube_informer_stats;
void kube_informer_stats_get(kube_informer *inf, kube_informer_stats *st);
#endif
