/* server/review.h - the AdmissionReview codec: body in, HTTP status and
 * response body out, plus what the log and metrics need to know. */
#ifndef SERVER_REVIEW_H
#define SERVER_REVIEW_H

#include "kube/store.h"
#include "mutate/mutate.h"
#include "server/metrics.h"

#include <json-c/json.h>
#include <stdbool.h>

struct kube_livesource;

typedef struct review_env {
    kube_store *store;
    const mutate_options *opt;
    /* With the live source (NULL without): missing owners, Secrets and
     * ConfigMaps are fetched within a budget, and with --native-sidecars
     * auto (opt_native set) the server's version picks the options. */
    struct kube_livesource *live;
    const mutate_options *opt_native;
    /* Tests only: parse the body as it came, managedFields included (the
     * review fuzzer checks that skimming them changes no answer). */
    bool no_skim;
} review_env;

typedef struct review_out {
    int status;          /* 200, or 400 for a body that is not an AdmissionReview */
    char *body;          /* the response body, NUL-terminated (len bytes before it) */
    size_t len;
    bool owned;          /* body is malloc'ed (review_out_free frees it) */
    metrics_result result;
    unsigned injected, skips;
    mutate_limit limit;  /* the bound a pod was past (failed open), or none */
    bool sidecar, native;
    size_t nwarnings;
    char uid[128], ns[128], pod[256];
    char first_warning[256];
    char error[512];     /* the 400 reason */
} review_out;

/* tok is the caller's (one per thread, reused). */
void review_handle(const review_env *env, json_tokener *tok, const char *body, size_t len, review_out *out);
/* The same, with the 200 answer's body (len + 1 bytes) taken from
 * alloc(ud, n), which cannot fail, instead of malloc: the server passes
 * its request's memory pool, so the body is never copied again. */
typedef void *(*review_alloc)(void *ud, size_t n);
void review_handle_into(const review_env *env, json_tokener *tok, const char *body, size_t len, review_out *out,
                        review_alloc alloc, void *ud);
void review_out_free(review_out *out);
#endif
