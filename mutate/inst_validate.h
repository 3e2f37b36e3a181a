/* mutate/inst_validate.h - the reference's Instrumentation validation
 * (cr-admission.md 4.2-4.4), for the validating webhook and
 * `otel-webhook validate`. Pure: the settings give the default images the
 * unupgradable-version check compares with. */
#ifndef MUTATE_INST_VALIDATE_H
#define MUTATE_INST_VALIDATE_H

#include "base/verdict.h"
#include "mutate/settings.h"

#include <json-c/json.h>

/* Validates obj, an Instrumentation, for op: CREATE, UPDATE and DELETE run
 * the same checks, as in the reference (4.2). Fills *v (VERDICT_INIT
 * before); returns 0 when allowed, -1 when refused. */
int mutate_validate_instrumentation(json_object *obj, verdict_op op, const mutate_settings *s, verdict *v);

#endif
