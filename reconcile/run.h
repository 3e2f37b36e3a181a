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
/* On every applied object: a digest of what was applied last, so that a
 * field dropped from the desired object is noticed (a subset comparison
 * alone would not see a removal). */
#define RECONCILE_HASH_ANNOTATION "otel-reconcile/applied"

typedef struct reconcile_run_opts {
    const char *ns; /* only collectors of this namespace (NULL: all) */
    int dry_run;    /* read, compare and report; write nothing */
    FILE *log;      /* one line per write or problem */
    const char *target_allocator_image; /* NULL: the default */
} reconcile_run_opts;

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
} reconcile_run_stats;

/* One pass. Returns 0 when every collector reconciled, 1 when some failed
 * (the others were still reconciled), 2 when nothing could be done (the
 * collectors or an owned kind could not be listed), with the reason
 * logged. */
int reconcile_run(kube_api *api, const reconcile_run_opts *o, reconcile_run_stats *st);
#endif
