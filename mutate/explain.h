/* mutate/explain.h - why a pod is, or is not, injected: the text of
 * `otel-webhook explain` for one pod. Pure, like the engine it runs. */
#ifndef MUTATE_EXPLAIN_H
#define MUTATE_EXPLAIN_H

#include "mutate/mutate.h"

/* Lines, each indented by two spaces and ending in a newline (malloc'ed):
 * the annotations that decide (pod or namespace, and which one won), the
 * collector and each Instrumentation that would be used with its version,
 * every container and init container with what it would get or why not,
 * the engine's warnings (missing or ambiguous resources, skipped
 * containers, misspelt keys), and the status record: none, current or
 * stale (with what changed). A pod that carries a record is explained as
 * it was before the injection, against the resources of req. */
char *mutate_explain(const mutate_request *req);

#endif
