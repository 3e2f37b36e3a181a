/* reconcile/run.h - `otel-reconcile run`: one reconcile pass of every
 * OpenTelemetryCollector against the API server, meant to be started by a
 * CronJob. Everything it knows comes from the cluster at the start of the
 * pass (no state between runs, no finalizers), so any run converges alone.
 *
 * The renderer (render.h) gives the desired objects; this file lists what
 * exists, applies what differs with server-side apply, prunes what a
 * collector no longer wants and writes the collector's status. */
#ifndef RECONCILE_RUN_H
#define RECONCILE_RUN_H

#include "kube/apiclient.h"

#include <stddef.h>
#include <stdio.h>

#define RECONCILE_FIELD_MANAGER "otel-reconcile"
/* On cluster-scoped objects (no ownerReference possible): "NS/NAME" of the
 * collector, because the instance label is truncated and not unique. */
#define RECONCILE_OWNER_ANNOTATION "otel-reconcile/collector"
/* Beside it: the collector's uid, so that a collector deleted and created
 * again under the same name does not inherit (or get swept into) the old
 * one's objects, and a TargetAllocator of the same name never matches. */
#define RECONCILE_OWNER_UID_ANNOTATION "otel-reconcile/collector-uid"
/* On every applied object: a digest of what was applied last, so that a
 * field dropped from the desired object is noticed (a subset comparison
 * alone would not see a removal). */
#define RECONCILE_HASH_ANNOTATION "otel-reconcile/applied"

typedef struct reconcile_run_opts {
    const char *ns; /* only collectors of this namespace (NULL: all) */
    int dry_run;    /* read, compare and report; write nothing */
    FILE *log;      /* one line per write or problem */
    const char *target_allocator_image; /* NULL: the default */
    /* What one run may spend (0: the default). Past any of them the run
     * stops before the next request and reconcile_run returns 3. */
    long max_deletions;   /* DELETEs (would-be ones with dry_run): 100 */
    long deadline_ms;     /* the whole run: 100 s */
    long max_list_pages;  /* pages of one LIST: 1000 */
    size_t max_list_bytes; /* answer bytes of one LIST, all pages: 64 MiB */
} reconcile_run_opts;

#define RECONCILE_DEFAULT_MAX_DELETIONS 100
#define RECONCILE_DEFAULT_DEADLINE_MS 100000L
#define RECONCILE_DEFAULT_MAX_LIST_PAGES 1000
#define RECONCILE_DEFAULT_MAX_LIST_BYTES ((size_t)64 << 20)

typedef struct reconcile_run_stats {
    size_t collectors; /* listed (unmanaged included) */
    size_t unmanaged;
    size_t applied;    /* PATCHes of objects (or would-be, with dry_run) */
    size_t unchanged;  /* desired objects already as wanted */
    size_t pruned;
    size_t recreated;  /* deleted to change an immutable field, then applied */
    size_t statuses;   /* status writes */
    size_t failed;     /* collectors with a render, apply or prune error */
    size_t requests;   /* every API request of the pass */
    size_t allocators; /* TargetAllocators listed */
    size_t collisions; /* objects of our names that are not ours: left alone */
    char cut[256];     /* why the run was cut short ("" when it was not) */
} reconcile_run_stats;

/* One pass. Returns 0 when every collector reconciled, 1 when some failed
 * (the others were still reconciled; a name collision is a failure), 2
 * when nothing could be done (the collectors or an owned kind could not be
 * listed), 3 when a limit of o cut the run short (st->cut says which; it
 * wins over 1 and 2), with the reason logged. */
int reconcile_run(kube_api *api, const reconcile_run_opts *o, reconcile_run_stats *st);
#endif
