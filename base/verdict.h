/* base/verdict.h - what a validation of a custom resource says: allowed or
 * refused (with the rule that refused it and its message), and warnings.
 *
 * One type for every admission check (collectors, Instrumentations,
 * OpAMPBridges), so the webhook answers, `otel-webhook validate` and
 * otel-reconcile print them one way. The rule is a short fixed id, never
 * user text: it is a metric label, so the set must stay bounded. */
#ifndef BASE_VERDICT_H
#define BASE_VERDICT_H

#include <stdbool.h>
#include <stddef.h>

/* What is being admitted. */
typedef enum verdict_op { VERDICT_CREATE, VERDICT_UPDATE, VERDICT_DELETE } verdict_op;

typedef struct verdict {
    const char *rule; /* NULL: allowed; else a static rule id ("sidecar", "ports", ...) */
    char *message;    /* malloc'ed, when refused */
    char **warnings;  /* malloc'ed, each malloc'ed, in the order found */
    size_t nwarnings;
    /* Set by the caller: every refusal is wanted, not only the first
     * (`otel-webhook validate`, which lists them as the API server lists a
     * schema's). The checks then go on past a refusal where the next ones
     * do not depend on it; the webhooks leave it false and answer the
     * first, as the reference does. */
    bool all;
    char **more; /* malloc'ed, each malloc'ed: the refusals after the first, in order, when all */
    size_t nmore;
} verdict;

#define VERDICT_INIT {NULL, NULL, NULL, 0, false, NULL, 0}

/* Refuses with rule and the formatted message; the first refusal wins
 * (later ones are ignored, or kept in more when all). Returns -1, for
 * `return verdict_deny(...)`. */
int verdict_deny(verdict *v, const char *rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void verdict_warn(verdict *v, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends text, taking it. */
void verdict_warn_take(verdict *v, char *text);
void verdict_free(verdict *v);

#endif
