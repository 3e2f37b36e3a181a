/* base/quantity.h - Kubernetes resource quantities ("500m", "1.5Gi",
 * "2e3") read strictly by the API server's grammar, for the checks that
 * need a quantity's value (the autoscaler's Pods targets). */
#ifndef BASE_QUANTITY_H
#define BASE_QUANTITY_H

#include <json-c/json.h>
#include <stdbool.h>

/* The value of s, or false when s is not a quantity (hex, "inf", a unit
 * Kubernetes does not have, trailing text). A long double holds every
 * integral quantity up to 2^64 exactly, which is all callers ask about. */
bool quantity_parse(const char *s, long double *out);
/* A JSON value as Kubernetes reads an int-or-string quantity: a number, or
 * a string that parses. */
bool quantity_of(json_object *v, long double *out);

#endif
