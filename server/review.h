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
    /* Tests only: parse the body as it came, managedFields and every
     * member the pod route leaves out included (the review fuzzer checks
     * that leaving them out changes no answer). */
    bool no_skim;
    /* The memory budget of one review's JSON tree (--max-tree-bytes; 0:
     * none): a pod review past it is answered allowed, unpatched, with a
     * warning (limit MUTATE_LIMIT_TREE_BYTES), its tree never built. */
    size_t max_tree;
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

/* tok and cache are the caller's (one per thread, reused); cache may be
 * NULL (mutate_request.cache). */
void review_handle(const review_env *env, json_tokener *tok, mutate_cache *cache, const char *body, size_t len,
                   review_out *out);
/* The same, with the 200 answer's body (len + 1 bytes) taken from
 * alloc(ud, n), which cannot fail, instead of malloc: the server passes
 * its request's memory pool, so the body is never copied again. */
typedef void *(*review_alloc)(void *ud, size_t n);
void review_handle_into(const review_env *env, json_tokener *tok, mutate_cache *cache, const char *body, size_t len,
                        review_out *out, review_alloc alloc, void *ud);
void review_out_free(review_out *out);

/* ---- the codec, for every admission handler ------------------------------ */

/* The request's uid, as the bytes it came as: a JSON string may hold
 * \u0000, and the API server matches the answer's uid byte for byte. */
typedef struct review_uid {
    const char *s;
    size_t len;
} review_uid;

/* An AdmissionReview request, decoded. Everything is borrowed from root,
 * which rq owns; absent fields are NULL. */
typedef struct review_request {
    json_object *root;
    const char *api_version; /* as received: the answer echoes it */
    review_uid uid;
    json_object *req;        /* request */
    const char *operation, *sub_resource, *ns, *name;
    const char *kind, *group, *version; /* request.kind */
    json_object *object, *old_object;
    bool dry_run;
    json_object *user_info;  /* {username, uid, groups, extra} */
    /* The body's tree would pass the budget: root is only what the answer
     * and the log need (apiVersion, kind, the request's uid, operation,
     * subResource, namespace, name, dryRun, kind, userInfo.username, and
     * object's and oldObject's metadata names), read without the tree;
     * object and oldObject hold nothing else. */
    bool over;
} review_request;

/* Parses body as an AdmissionReview admission.k8s.io/v1 with a request and
 * a uid (out->uid set for the log). 0 with *rq filled (release with
 * review_request_free), or -1 with out holding the 400 answer. The tree
 * is charged against budget bytes (0: none) as it is read (base/jfast.h);
 * past it, rq->over. */
int review_decode(json_tokener *tok, size_t budget, const char *body, size_t len, review_request *rq, review_out *out);
/* "the WHAT would take more than the BUDGET bytes of memory otel-webhook
 * gives one request OUTCOME" (malloc'ed): the one sentence of every
 * route's answer to a body past the budget. */
char *review_over_message(const char *what, size_t budget, const char *outcome);
void review_request_free(review_request *rq);

/* One answer: response.allowed, a status when code is not 0, a patch
 * (patch_b64: base64 of RFC 6902 text; or patch, the text itself, encoded
 * while the answer is written) and warnings, each with warning_prefix
 * (NULL: none). Into out->body (malloc'ed), status 200. */
typedef struct review_answer {
    bool allowed;
    int code;
    const char *reason, *message;
    const char *patch_b64;
    const char *patch;
    size_t patch_len;
    char *const *warnings;
    size_t nwarnings;
    const char *warning_prefix;
} review_answer;
void review_respond(review_out *out, const review_request *rq, const review_answer *a);
/* Base64 of len bytes (malloc'ed). */
char *review_base64(const char *in, size_t len);
#endif
