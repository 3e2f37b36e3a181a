/* server/cr_admission.h - the operator's admission webhooks for its own
 * custom resources, at the operator's paths (cr-admission.md 1): defaulting
 * (a JSON Patch) and validation of OpenTelemetryCollectors (v1beta1),
 * Instrumentations and OpAMPBridges (v1alpha1).
 *
 * The decisions are the pure modules' (collector/defaults.h,
 * collector/validate.h, mutate/defaults.h, mutate/inst_validate.h,
 * mutate/opampbridge.h); this file is the AdmissionReview answer around
 * them, through server/review.c's codec. Unlike the pod webhook, which
 * fails open, these answer what the reference answers: a refusal is
 * allowed: false (code 403), an object that does not decode code 400, and
 * the registration's failurePolicy Fail refuses the write when we cannot
 * answer at all. */
#ifndef SERVER_CR_ADMISSION_H
#define SERVER_CR_ADMISSION_H

#include "base/verdict.h"
#include "mutate/settings.h"
#include "server/metrics.h"
#include "server/review.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

struct kube_livesource;

typedef enum cr_route {
    CR_MUTATE_COLLECTOR,
    CR_VALIDATE_COLLECTOR,
    CR_MUTATE_INSTRUMENTATION,
    CR_VALIDATE_INSTRUMENTATION,
    CR_MUTATE_OPAMPBRIDGE,
    CR_VALIDATE_OPAMPBRIDGE,
    CR_NROUTES
} cr_route;

/* The path route is served at: "/mutate-opentelemetry-io-v1beta1-
 * opentelemetrycollector", ... */
const char *cr_admission_path(cr_route route);
/* The route served at path (len bytes), or -1. */
int cr_admission_route(const char *path, size_t len);

/* What the answers depend on besides the request. */
typedef struct cr_env {
    const mutate_settings *settings;  /* default images, fips-disabled-components */
    struct kube_livesource *live;     /* the authorizer; NULL: the RBAC checks are not made */
    double review_budget;             /* seconds the access reviews of one admission may take */
    /* Set (with live): the RBAC checks are made but no review is sent;
     * each fails with this reason, which refuses the write as an API
     * server that does not answer would (serve_cr.c: the workers' queue is
     * full, or the server is shutting down). */
    const char *no_reviews;
    /* The memory budget of one review's JSON tree (--max-tree-bytes; 0:
     * none): past it, refused with code 413 (a DELETE allowed). */
    size_t max_tree;
} cr_env;

/* One admission's answer, and what the log and metrics say about it. */
typedef struct cr_out {
    review_out r;                /* the HTTP status and body; uid and the 400 reason */
    metrics_cr_kind kind;
    metrics_cr_op op;
    metrics_cr_result result;
    const char *rule;            /* when denied; "tree_bytes" when refused past max_tree */
    bool dry_run;
    size_t nwarnings;
    char ns[128], name[256], user[256];
    char message[512];           /* the refusal, for the log */
} cr_out;

/* The validating webhook's decision, for it and `otel-webhook validate`:
 * obj validated as op (of old, for UPDATE). Offline (`validate`), obj is
 * defaulted first, as the mutating webhook would have (a copy; the
 * defaulting's refusal is rule "defaulting"); the webhook (as_received)
 * validates what the API server sent, which its mutating webhooks have
 * defaulted, as the reference does and its tests expect (an OpAMPBridge
 * without capabilities is refused there, though the defaulting adds one).
 * collector: the collector checks' options (authorizer, user, schema;
 * NULL: none of them, the FIPS list from settings). 0 allowed, -1
 * refused; *v VERDICT_INIT before. */
typedef struct cr_check {
    metrics_cr_kind kind;
    const mutate_settings *settings;
    const struct collector_validate_opts *collector;
    bool as_received;
} cr_check;
int cr_admission_verdict(const cr_check *c, json_object *obj, json_object *old, verdict_op op, verdict *v);

/* tok is the caller's (one per thread). Answers into out (free with
 * review_out_free(&out->r)). */
void cr_admission_handle(const cr_env *env, cr_route route, json_tokener *tok, const char *body, size_t len,
                         cr_out *out);

#endif
