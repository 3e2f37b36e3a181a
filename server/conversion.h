/* server/conversion.h - the ConversionReview codec of POST /convert
 * (apiextensions.k8s.io v1 and v1beta1, cr-admission.md 6.1): body in,
 * HTTP status and body out, plus what the log and metrics need. */
#ifndef SERVER_CONVERSION_H
#define SERVER_CONVERSION_H

#include "server/metrics.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Bodies nest deeper than pods: the tokener /convert parses with. */
#define CONVERSION_MAX_DEPTH 256

/* One review's budget (docs/serve.md, "Bounds"), over all its objects: past one
 * the review fails whole, with the limit named in result.message.
 * Objects per review; the answer's bytes (each object is written into it
 * as soon as it is converted, its tree freed); and, shared by every
 * spec.config read as YAML, alias copies' bytes and the memory estimate
 * of kube/yaml.h (its base plus its per-byte share of the whole body). */
#define CONVERSION_MAX_OBJECTS 10000
#define CONVERSION_MAX_ANSWER ((size_t)32 << 20)
#define CONVERSION_YAML_ALIAS_BYTES ((size_t)16 << 20)
#define CONVERSION_YAML_MEMORY_BASE ((size_t)64 << 20)
#define CONVERSION_YAML_MEMORY_PER_BYTE 16

typedef struct conversion_out {
    int status;   /* 200, or 400 for a body that is not a ConversionReview */
    char *body;   /* malloc'ed response body */
    size_t len;
    bool failed;  /* 200 with result Failure */
    metrics_conversion direction;
    size_t nobjects;   /* objects converted (0 when failed) */
    size_t nnotes;     /* objects converted with something to say (convert.h notes) */
    char first_note[800];
    char uid[128];
    char desired[128];
    char message[640]; /* the Failure message, or the 400 reason */
} conversion_out;

/* tok is the caller's (made with CONVERSION_MAX_DEPTH, reused). max_tree:
 * the memory the body's JSON tree may take (--max-tree-bytes; 0: none); a body whose bound
 * (jfast_cost_bound) passes it is not parsed, and fails whole with
 * result Failure. conversion_handle has no budget. */
void conversion_handle(json_tokener *tok, const char *body, size_t len, conversion_out *out);
void conversion_handle_within(json_tokener *tok, size_t max_tree, const char *body, size_t len, conversion_out *out);
void conversion_out_free(conversion_out *out);

#endif
