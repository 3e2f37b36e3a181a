/* mutate/opampbridge.h - the reference's OpAMPBridge (v1alpha1) defaulting
 * and validation (cr-admission.md 5.2). The operator's webhook serves them
 * whenever the OpAMPBridge CRD is installed, so ours does too; nothing here
 * reconciles bridges (no controller of ours runs them). Pure. */
#ifndef MUTATE_OPAMPBRIDGE_H
#define MUTATE_OPAMPBRIDGE_H

#include "base/verdict.h"

#include <json-c/json.h>
#include <stddef.h>

/* NULL when the fields read have the reference decoder's types, else a
 * malloc'ed "PATH: REASON" (base/shape.h). */
char *mutate_check_opampbridge_shape(json_object *obj);
/* upgradeStrategy, replicas and capabilities, in the reference's order. In
 * place; 0, or -1 with the reason in err (a field of the wrong type; the
 * object untouched). */
int mutate_default_opampbridge(json_object *obj, char *err, size_t errlen);
/* 0 allowed, -1 refused (DELETE is always allowed: spec 8.2). */
int mutate_validate_opampbridge(json_object *obj, verdict_op op, verdict *v);

#endif
