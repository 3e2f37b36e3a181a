/* server/metrics.h - the webhook's Prometheus metrics.
 *
 * Counters are process-wide relaxed atomics: a handful of increments per
 * request cost nothing next to a JSON parse, and they need no per-thread
 * merging. Label values come from fixed tables, so series stay bounded.
 * The exposition follows Prometheus' naming rules: base units, _total
 * counters, points in time as Unix *_timestamp_seconds gauges (never a
 * "seconds since" that changes on every scrape), no sentinel values (a
 * sample that is not known is left out), one label set per family. The
 * metrics tables of docs/metrics.md list every family; the server tests hold the two
 * to each other. */
#ifndef SERVER_METRICS_H
#define SERVER_METRICS_H

#include "kube/livesource.h"
#include "mutate/mutate.h"

#include <stddef.h>

typedef enum metrics_result {
    RESULT_MUTATED,   /* answered with a patch */
    RESULT_UNCHANGED, /* pod CREATE, nothing to inject */
    RESULT_IGNORED,   /* another kind or operation: allowed as is */
    RESULT_FAILED_OPEN, /* mutation failed: allowed without a patch */
    RESULT_REJECTED,  /* the request was not a valid AdmissionReview (HTTP 4xx) */
    METRICS_NRESULTS
} metrics_result;

typedef enum metrics_error {
    ERR_BAD_REQUEST,   /* 400 */
    ERR_TOO_LARGE,     /* 413 */
    ERR_METHOD,        /* 405 */
    ERR_NOT_FOUND,     /* 404 */
    ERR_INTERNAL,      /* a failure inside mutation (failed open) */
    ERR_SOURCE,        /* a resource file or folder failing (unreadable, too large, not parsing), each time */
    ERR_CERT_RELOAD,   /* a rotated certificate pair was refused */
    ERR_FRAMING,       /* an HTTP/1 request with conflicting Content-Length/Transfer-Encoding (400) */
    ERR_H2_BUDGET,     /* an HTTP/2 connection closed for holding more request bodies than allowed */
    ERR_H2_RESETS,     /* an HTTP/2 connection closed for resetting streams too fast (rapid reset) */
    ERR_INFLIGHT,      /* a request refused: the process held --max-inflight-bytes of requests (503, REFUSED_STREAM) */
    ERR_WRITE_STALL,   /* a connection closed: its client read nothing of the answer for --request-timeout */
    METRICS_NERRORS
} metrics_err;

/* The direction of a ConversionReview, by its desiredAPIVersion. */
typedef enum metrics_conversion {
    CONV_TO_V1BETA1,
    CONV_TO_V1ALPHA1,
    CONV_TO_OTHER, /* a version we do not serve: always a failure */
    METRICS_NCONV
} metrics_conversion;

void metrics_request(metrics_result r, double seconds);

/* Admissions of the operator's custom resources (server/cr_admission.c). */
typedef enum metrics_cr_kind { CR_KIND_COLLECTOR, CR_KIND_INSTRUMENTATION, CR_KIND_OPAMPBRIDGE, METRICS_CR_NKINDS } metrics_cr_kind;
typedef enum metrics_cr_op { CR_OP_CREATE, CR_OP_UPDATE, CR_OP_DELETE, CR_OP_CONNECT, CR_OP_OTHER, METRICS_CR_NOPS } metrics_cr_op;
typedef enum metrics_cr_result {
    CR_DEFAULTED, /* mutating: answered with a patch */
    CR_UNCHANGED, /* mutating: nothing to default */
    CR_ALLOWED,   /* validating: allowed */
    CR_DENIED,    /* either: refused, with a rule */
    CR_REJECTED,  /* not an AdmissionReview (HTTP 400), or an object that does not decode (code 400) */
    METRICS_CR_NRESULTS
} metrics_cr_result;
/* rule: the verdict's rule id when denied (one of the fixed set metrics.c
 * lists per kind; anything else counts as "other"), else NULL. */
void metrics_cr_admission(metrics_cr_kind kind, metrics_cr_op op, metrics_cr_result result, const char *rule,
                          double seconds);
extern const char *const metrics_cr_kinds[METRICS_CR_NKINDS];
extern const char *const metrics_cr_ops[METRICS_CR_NOPS];
extern const char *const metrics_cr_results[METRICS_CR_NRESULTS];
/* One ConversionReview answered (HTTP 200): its result, and the objects it
 * converted. */
void metrics_conversion_review(metrics_conversion dir, int failed, size_t objects);
void metrics_mutation(const mutate_result *res, int native_sidecar);
/* A loop's mutation cache before and after one request (mutate.h): the
 * differences are added to the process's counts, every loop's summed. */
void metrics_cache(const mutate_cache_stats *before, const mutate_cache_stats *after);
void metrics_error(metrics_err e);
/* Accepting paused for a moment: the process was out of file descriptors. */
void metrics_accept_paused(void);

typedef struct metrics_gauges {
    double cert_not_after;            /* Unix seconds; 0 when unknown (no sample) */
    size_t objects[8];                /* per kind, see metrics_kinds */
    int failing_files;
    int failing_dirs;
    double unreadable_since;          /* Unix seconds from which every read of the resources failed; 0: none */
    int ready;
    size_t inflight_bytes;            /* serve_inflight.c's total */
    /* Errors h2o answered itself before the handler ran (body over the
     * cap, broken chunked encoding), added to errors_total. */
    unsigned long h2o_errors[METRICS_NERRORS];
    /* The live cluster source; NULL when the webhook runs on files only. */
    const kube_live_stats *live;
} metrics_gauges;

extern const char *const metrics_kinds[8];
/* The reason label of otel_webhook_skips_total ("not_found", ...); also
 * what `inject --report` says. */
const char *metrics_skip_name(mutate_skip s);

/* Prometheus text exposition (malloc'ed). */
char *metrics_render(const metrics_gauges *g, size_t *len);
#endif
