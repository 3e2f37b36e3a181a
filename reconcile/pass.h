/* reconcile/pass.h - what the files of one `otel-reconcile run` pass share
 * (internal to reconcile/): the kinds it manages, the pass state, the
 * collector being reconciled, and the request and log plumbing.
 *
 *   run.c       the driver: the pass state, requests, the per-collector loop
 *   discover.c  what the cluster has: APIs, owned objects by owner
 *   compare.c   the "nothing changed" decision (compare.h, pure)
 *   diff.c      the changed fields a dry run prints (diff.h, pure)
 *   apply.c     server-side apply, recreate, prune, the sweep
 *   owner.c     whether an object is ours (before any write or delete)
 *   status.c    the collector's status subresource
 *   ta_run.c    the TargetAllocators, after the collectors
 *
 * The state is one struct passed to everything rather than file-level
 * globals, so a pass holds nothing once reconcile_run returns. */
#ifndef RECONCILE_PASS_H
#define RECONCILE_PASS_H

#include "kube/apiclient.h"
#include "reconcile/render.h"
#include "reconcile/run.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define RECONCILE_COLLECTORS_API "/apis/opentelemetry.io/v1beta1"

/* Kinds that exist only when an API is installed. A group missing from
 * GET /apis, or a LIST of the kind answering 404, makes the kind
 * unavailable for this pass: a collector that needs it fails with why. */
typedef enum {
    RECONCILE_NEED_NONE,
    RECONCILE_NEED_PROMETHEUS,
    RECONCILE_NEED_ROUTE,
    RECONCILE_NEED_GATEWAY,
    RECONCILE_NEED_TA,
    RECONCILE_NEED_CERT_MANAGER,
    RECONCILE_NNEEDS
} reconcile_need;

typedef struct reconcile_need_info {
    const char *group, *why;
} reconcile_need_info;

extern const reconcile_need_info reconcile_needs[RECONCILE_NNEEDS]; /* discover.c */

/* The apply rank of the workloads (Deployment, DaemonSet, StatefulSet):
 * the only kinds that are recreated, and whose status the collector's
 * status reads. */
#define RECONCILE_RANK_WORKLOAD 5

typedef struct reconcile_kind {
    const char *api_version, *kind, *plural;
    bool namespaced;
    int rank; /* apply order */
    reconcile_need need;
} reconcile_kind;

/* Every kind a collector may own, in apply order (discover.c). */
extern const reconcile_kind reconcile_kinds[];
extern const size_t reconcile_nkinds;

typedef struct reconcile_pass {
    kube_api_conn *conn;
    const reconcile_run_opts *o;
    reconcile_run_stats *st;
    bool have[RECONCILE_NNEEDS]; /* which optional APIs this cluster serves */
    json_object *live;  /* "plural/ns/name" -> the listed object's JSON text */
    json_object *owned; /* "uid:UID" | "cr:NS/NAME" -> array of live keys */
    json_object *crs;   /* "NS/NAME" -> true, every collector listed */
    json_object *cr_uids; /* uid -> true, the same collectors */
    bool sweep_failed;  /* a gone collector's RBAC could not be deleted */
    json_object *ta_owners; /* uid -> true: TargetAllocators owning listed objects */
    json_object *ta_uids;   /* uid -> true: every TargetAllocator listed */
    /* The run's budget (run.h): past one, st->cut is set and every later
     * request is refused. */
    long long deadline_ms; /* monotonic */
    long deletions;
} reconcile_pass;

typedef struct reconcile_collector {
    const char *ns, *name, *uid;
    json_object *cr;
    char error[1024];  /* first failure, for the condition */
    json_object *kept; /* listed keys that are desired: not pruned */
    json_object *workload_live; /* owned */
    json_object *workload_desired;
    json_object *workload_applied; /* owned: the apply's answer */
} reconcile_collector;

/* ---- run.c ---------------------------------------------------------- */

/* One line to the pass's log, when it has one. */
void reconcile_logf(reconcile_pass *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Records c's first failure (later ones are dropped: the condition says
 * what went wrong first). */
void reconcile_collector_fail(reconcile_collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One request, counted; the status, or -1 with err. *resp is always set
 * (NULL on -1) and parsed into *json when json is given and the body is a
 * JSON object. */
int reconcile_request(reconcile_pass *r, const char *method, const char *path, const char *ctype, const char *body,
                      char **resp, json_object **json, char *err, size_t errlen);
/* "CODE: message of the Status body" for a failed request. */
void reconcile_describe(char *err, size_t errlen, int code, const char *body);
/* False once the run is cut short (a limit of run.h passed; the deadline
 * is checked here). */
bool reconcile_alive(reconcile_pass *r);
/* Cuts the run short (the first reason wins; logged). */
void reconcile_cut(reconcile_pass *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* GET path, answered 200 with a JSON object: that object; NULL with err
 * (described) otherwise. */
json_object *reconcile_get_json(reconcile_pass *r, const char *path, char *err, size_t errlen);

/* ---- discover.c ----------------------------------------------------- */

const reconcile_kind *reconcile_kind_of(const char *api_version, const char *kind);
/* /api/v1[/namespaces/NS]/PLURAL or /apis/G/V[/namespaces/NS]/PLURAL. */
void reconcile_collection_path(char *out, size_t n, const reconcile_kind *k, const char *ns);
/* GET /apis: fills r->have. 0, or -1 with err. */
int reconcile_discover(reconcile_pass *r, char *err, size_t errlen);
/* Appends every collector (of r->o->ns, or all) to the array crs. 0; or,
 * with err, the HTTP status that failed it, or -1 when no answer came. */
int reconcile_list_collectors(reconcile_pass *r, json_object *crs, char *err, size_t errlen);
/* Calls each(r, item, into) for every item of a paged LIST of path that is
 * a namespaced api_version/kind with a uid (others are skipped and said).
 * 0, or the failing HTTP status (-1: no answer) with err. */
typedef void (*reconcile_each_fn)(reconcile_pass *r, json_object *item, void *ctx);
int reconcile_list(reconcile_pass *r, const char *path, const char *api_version, const char *kind, json_object *into,
                   reconcile_each_fn each, char *err, size_t errlen);
/* LISTs every owned kind into r->live and r->owned. 0, or -1 with err. */
int reconcile_list_owned(reconcile_pass *r, char *err, size_t errlen);
/* The listed object under key, parsed (the caller puts it), or NULL. */
json_object *reconcile_live_get(reconcile_pass *r, const char *key);
/* Fails c when the TargetAllocator its label names is not there (or when it
 * generates one and the CRD is missing); the one it names otherwise (the
 * caller puts it), NULL without a label. */
json_object *reconcile_check_target_allocator(reconcile_pass *r, reconcile_collector *c);

/* ---- apply.c -------------------------------------------------------- */

/* Applies the desired objects in apply order. */
void reconcile_apply_objects(reconcile_pass *r, reconcile_collector *c, json_object **objs, size_t n);
/* Deletes what c owns and no longer wants. */
void reconcile_prune(reconcile_pass *r, reconcile_collector *c);
/* Deletes the cluster-scoped objects of collectors that are gone. */
void reconcile_sweep(reconcile_pass *r);
/* Deletes the listed object under key ("plural/ns/name"); a failure fails
 * c (NULL: counted as a failed sweep). */
void reconcile_remove_live(reconcile_pass *r, reconcile_collector *c, const char *key);

/* ---- owner.c -------------------------------------------------------- */

/* Whether obj, of kind k, is ours for the collector (or TargetAllocator)
 * ns/name of uid; why says what is missing when it is not. */
bool reconcile_owner_is_ours(const reconcile_kind *k, json_object *obj, const char *ns, const char *name,
                             const char *uid, char *why, size_t whylen);
/* The uid of the collector or TargetAllocator obj says it belongs to
 * (*allocator: a TargetAllocator), NULL when it names none. */
const char *reconcile_owner_uid(const reconcile_kind *k, json_object *obj, bool *allocator);

/* ---- ta_run.c ------------------------------------------------------- */

/* Every TargetAllocator: rendered with the collector it belongs to (crs:
 * every collector listed), applied, pruned, its status written; then the
 * objects of allocators that are gone deleted. */
void reconcile_run_target_allocators(reconcile_pass *r, json_object *crs, const reconcile_options *opt);

/* ---- status.c ------------------------------------------------------- */

/* Writes c's status when it differs from the live one. rr: the render
 * (NULL or not rendered: no scale); mode: spec.mode. */
void reconcile_write_status(reconcile_pass *r, reconcile_collector *c, const reconcile_render_result *rr,
                            bool rendered, const char *mode);
/* What every status write shares (the collector's and a TargetAllocator's):
 * st completed with the Ready condition (c's error, or rr's warnings in its
 * message) and observedGeneration, then merge-patched to path (the status
 * subresource) unless the live status already holds it, lastTransitionTime
 * kept while the condition's status stays. what prefixes the object in log
 * lines ("TargetAllocator " or ""). Takes st. */
void reconcile_status_send(reconcile_pass *r, reconcile_collector *c, const reconcile_render_result *rr,
                           json_object *st, const char *path, const char *what);
#endif
