/* mutate/mutate.h - the pure pod mutation engine.
 *
 * A pod, its namespace and a read-only view of the cluster's resources go in;
 * the mutated pod, the RFC 6902 patch that produces it, and human warnings
 * come out. The engine does no I/O and keeps no globals: every lookup goes
 * through the kube_reader callbacks, so the same code serves the HTTPS
 * webhook (store snapshots, API lookups with a budget) and the offline
 * `otel-webhook inject` command (files).
 *
 * Reference behaviour: the OpenTelemetry Operator v0.158.0's pod webhook
 * (upstream internal/webhook/podmutation/webhookhandler.go,
 * internal/instrumentation/ and pkg/sidecar/). Deliberate differences are
 * listed in docs/compat.md.
 *
 * Threading: mutate_pod() is reentrant. Objects handed out by a source are
 * shared with other threads, so the engine only reads them and copies what
 * it inserts into the pod (json-c reference counts are not atomic). A
 * request's cache (mutate_cache) is its thread's own state, passed in by
 * the caller; results share objects with it. */
#ifndef MUTATE_H
#define MUTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <json-c/json.h>

#include "kube/reader.h"

/* Languages in the order the reference applies them (spec 2.0). */
typedef enum mutate_lang_id {
    MUTATE_JAVA,
    MUTATE_NODEJS,
    MUTATE_PYTHON,
    MUTATE_DOTNET,
    MUTATE_GO,
    MUTATE_APACHE,
    MUTATE_NGINX,
    MUTATE_SDK,
    MUTATE_NLANGS
} mutate_lang_id;

#define MUTATE_BIT(l) (1u << (l))

typedef enum mutate_python_mode {
    MUTATE_PYTHON_PYTHONPATH, /* the reference's sitecustomize hook */
    MUTATE_PYTHON_ENTRYPOINT  /* prefix the command with opentelemetry-instrument */
} mutate_python_mode;

typedef struct mutate_options {
    unsigned enabled;            /* MUTATE_BIT set of languages the operator enables */
    unsigned implemented;        /* languages this build can inject; others warn */
    bool multi_instrumentation;  /* spec 1.6 step 3 (default true) */
    bool native_sidecars;        /* collector as restartPolicy: Always init container */
    mutate_python_mode python_mode;
    const char *collector_image; /* default for collectors without spec.image */
    /* "NAME=value" proxy settings copied into the collector sidecar (spec 4.3). */
    const char *const *proxy_env;
    size_t nproxy_env;
    /* Write the otel-webhook/status record (mutate/record.h) on every pod
     * changed (default true; the reference writes none, docs/compat.md). */
    bool record;
} mutate_options;

/* Fills o with the reference defaults (spec 0.1). */
void mutate_options_init(mutate_options *o);

/* What one thread's mutations keep between requests (mutate/cache.c):
 * the collector sidecar's parts, built once per collector version and
 * options instead of once per pod, and what an Instrumentation gives every
 * pod per language (its env entries, volume, init containers), once per
 * Instrumentation version. Owned by the caller, one per thread (the
 * server: one per event loop): the objects in it are json-c's, whose
 * reference counts are not atomic, so a cache, and the results of the
 * requests given it, are used on one thread only. At most `entries`
 * collectors (0: MUTATE_CACHE_ENTRIES) and about max_bytes of them (0:
 * MUTATE_CACHE_BYTES) are kept, the least recently used evicted first,
 * and as many Instrumentation parts in a table of their own. */
typedef struct mutate_cache mutate_cache;
#define MUTATE_CACHE_ENTRIES 32
#define MUTATE_CACHE_BYTES (8u << 20)
mutate_cache *mutate_cache_new(size_t entries, size_t max_bytes);
void mutate_cache_free(mutate_cache *c);
typedef struct mutate_cache_stats {
    size_t entries, bytes;                 /* held now */
    unsigned long hits, misses, evictions; /* since mutate_cache_new */
    /* The Instrumentations' parts (per language), in their own table of
     * as many entries and bytes. */
    size_t inst_entries, inst_bytes;
    unsigned long inst_hits, inst_misses, inst_evictions;
} mutate_cache_stats;
void mutate_cache_get_stats(const mutate_cache *c, mutate_cache_stats *st);

typedef struct mutate_request {
    json_object *pod;       /* borrowed, never modified */
    const char *namespace;  /* the admission request's namespace */
    json_object *ns;        /* the Namespace object, or NULL */
    const kube_reader *src;
    const mutate_options *opt;
    /* The patch wanted as text only (res->patch_text): the operations are
     * written as the diff finds them and no json-c array of them is built
     * (res->patch stays empty), nor the mutated pod kept (res->pod NULL
     * once mutate_pod returns). The admission server's way. */
    bool patch_text;
    /* This thread's cache, or NULL: everything is built for this request
     * (the patch is the same byte for byte either way). */
    mutate_cache *cache;
} mutate_request;

/* Why (part of) a pod was left alone; bounded set for metrics labels. */
typedef enum mutate_skip {
    MUTATE_SKIP_ALREADY_INSTRUMENTED,
    MUTATE_SKIP_NOT_FOUND,        /* named Instrumentation/collector missing */
    MUTATE_SKIP_AMBIGUOUS,        /* none or several to choose from */
    MUTATE_SKIP_DISABLED,         /* language disabled or not implemented */
    MUTATE_SKIP_INVALID,          /* annotation or resource invalid */
    MUTATE_SKIP_CONTAINER,        /* a target container was skipped */
    MUTATE_SKIP_LOOKUP,           /* a lookup could not be answered */
    MUTATE_SKIP_LIMIT,            /* the pod is past a bound (mutate_limit) */
    MUTATE_SKIP_UNKNOWN_CONTAINER, /* a container list names a container the pod lacks */
    MUTATE_SKIP_UNKNOWN_ANNOTATION, /* a key like ours is none the engine reads (misspelt) */
    MUTATE_SKIP_MALFORMED,        /* the pod is not what core/v1 allows (invalid_path) */
    MUTATE_NSKIPS
} mutate_skip;

/* What one admission may cost is bounded: every pass over a pod is linear
 * (or n log n) in what it walks, and what it walks is bounded here, so the
 * largest body the server accepts answers within the admission budget and
 * far below the container's memory limit. A pod past a bound is left
 * alone: mutate_pod returns -1, the warning names the bound, res->limit
 * says which. Kubernetes sets none of these limits itself (mutation runs
 * before its validation); real pods stay far below them. */
typedef enum mutate_limit {
    MUTATE_LIMIT_NONE,
    MUTATE_LIMIT_CONTAINERS,      /* containers + initContainers of the pod */
    MUTATE_LIMIT_ENV,             /* env entries of one container */
    MUTATE_LIMIT_ENV_TOTAL,       /* env entries of all containers and init containers */
    MUTATE_LIMIT_VOLUME_MOUNTS,   /* volumeMounts of all containers and init containers */
    MUTATE_LIMIT_VOLUMES,         /* spec.volumes */
    MUTATE_LIMIT_ANNOTATIONS,     /* metadata.annotations of the pod */
    MUTATE_LIMIT_CONTAINER_NAMES, /* names in one *container-names annotation */
    MUTATE_LIMIT_RESOURCE_ATTRIBUTES, /* items of a container's OTEL_RESOURCE_ATTRIBUTES */
    /* The review's JSON tree would pass the server's memory budget of one
     * request (--max-tree-bytes): found by the server while it reads the
     * body (server/review.c), never by mutate_pod, which never sees the
     * pod; its maximum is the server's, not a constant here. */
    MUTATE_LIMIT_TREE_BYTES,
    MUTATE_NLIMITS
} mutate_limit;

#define MUTATE_MAX_CONTAINERS 256
#define MUTATE_MAX_ENV 4096
#define MUTATE_MAX_ENV_TOTAL 16384
#define MUTATE_MAX_VOLUME_MOUNTS 4096
#define MUTATE_MAX_VOLUMES 1024
#define MUTATE_MAX_ANNOTATIONS 1024
#define MUTATE_MAX_CONTAINER_NAMES 256
#define MUTATE_MAX_RESOURCE_ATTRIBUTES 1024

/* The name of a bound for metrics labels ("env", ...) and its value. */
const char *mutate_limit_name(mutate_limit l);
size_t mutate_limit_max(mutate_limit l);

typedef struct mutate_result {
    json_object *pod;     /* the mutated pod (owned; shares unchanged parts with the input); NULL with patch_text */
    json_object *patch;   /* owned JSON array of RFC 6902 operations; empty when no change */
    size_t nops;          /* operations in the patch (0: no change) */
    char *patch_text;     /* with req->patch_text and nops: the patch's JSON text (owned) */
    size_t patch_len;
    char **warnings;      /* owned; short human sentences */
    size_t nwarnings;
    unsigned injected;    /* MUTATE_BIT set of languages injected */
    /* By language, the names of the containers it went into, in the order
     * injected (owned): for `inject --report`. */
    char **into[MUTATE_NLANGS];
    size_t ninto[MUTATE_NLANGS];
    bool asked;           /* an annotation asked for a language or the sidecar (or its removal) */
    bool sidecar;         /* collector sidecar injected */
    bool record_compared; /* the status record written by comparing the pods (it may copy any member) */
    unsigned skips;       /* bit set of 1u << mutate_skip */
    mutate_limit limit;   /* the bound the pod is past, or MUTATE_LIMIT_NONE */
    /* A field the engine reads or writes holds what core/v1 does not allow
     * (containers as a map, an env value that is a number): the field's
     * path from the pod ("spec.containers[0].env[2].value") and the reason
     * ("expected a string, got a number (quote it: \"8080\")"), both owned;
     * and the offending value, or the object holding it when it is missing
     * or null, borrowed from req->pod (for callers that map it back to a
     * line). All NULL otherwise. The warning is "PATH: REASON; nothing
     * injected". */
    char *invalid_path;
    char *invalid_reason;
    json_object *invalid_at;
    /* The Instrumentations and the collector injected from, in order
     * (owned array of {kind, language, namespace, name, resourceVersion,
     * generation, hash}): what the status record names. */
    json_object *uses;
} mutate_result;

/* Returns 0 with res filled, or -1 when the input is not a pod object, is
 * malformed (invalid_path) or is past a bound (limit); res->warnings then
 * holds the one reason and nothing is injected. res is always safe to free. */
int mutate_pod(const mutate_request *req, mutate_result *res);
void mutate_result_free(mutate_result *res);

/* Name of a language as used in annotations ("java", "apache-httpd", ...). */
const char *mutate_lang_name(mutate_lang_id id);

/* The diff that turns a into b as RFC 6902 operations appended to ops.
 * Unchanged subtrees shared by pointer are skipped without a walk. */
void mutate_patch_diff(json_object *a, json_object *b, json_object *ops);

#endif
