/* reconcile/compare.h - the local "nothing changed" decision of
 * `otel-reconcile run`, and the checks that turn an apply into a recreate.
 *
 * Pure: json-c objects and text in, booleans and strings out; no I/O and
 * nothing kept between calls, so every rule here is unit tested
 * (tests/unit/test_compare.c). compare.c says why the rules are what they are. */
#ifndef RECONCILE_COMPARE_H
#define RECONCILE_COMPARE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Every field of want has the same value in have: fields only have has
 * are ignored, a null, empty map or empty list in want matches anything
 * (an absent field included), arrays match element by element in order
 * and must be of the same length, and strings below a "requests" or
 * "limits" key are resource quantities compared by value. */
bool reconcile_subset(json_object *want, json_object *have);

/* One field where want and have differ by reconcile_subset's rules: its
 * path (spec.template.spec.containers[0].image,
 * metadata.labels["app.kubernetes.io/name"]), have's value there (NULL:
 * absent) and want's (NULL: an element have's list has past want's end). */
typedef void (*reconcile_diff_fn)(void *ud, const char *path, json_object *have, json_object *want);
/* Calls fn for every difference, in want's key order (a list's surplus
 * elements after its common ones); the number of differences, 0 exactly
 * when reconcile_subset(want, have). A differing subtree is one call at its
 * root when have has none there or another type there. */
size_t reconcile_diff(json_object *want, json_object *have, reconcile_diff_fn fn, void *ud);

/* A Kubernetes resource quantity ("500m", "1Gi", "1e3", "0.5"; s not
 * NULL) as a number in *out; false when s is not one. */
bool reconcile_quantity(const char *s, long double *out);

/* o as compact JSON text (json-c's writer, '/' not escaped); owned by o,
 * valid until o changes or is put. */
const char *reconcile_json_text(json_object *o);

#define RECONCILE_DIGEST_SIZE 17 /* 16 hex digits and the NUL */
/* The first 16 hex digits of sha256 of reconcile_json_text(o). */
void reconcile_digest(json_object *o, char out[RECONCILE_DIGEST_SIZE]);
/* Sets metadata.annotations[RECONCILE_HASH_ANNOTATION] of obj to the
 * digest of obj as it was before (obj has a metadata map). A live object
 * carries it when it was applied from exactly this desired object. */
void reconcile_stamp_digest(json_object *obj);

/* Why the live workload cannot take the desired one by an apply: a field
 * the API server refuses to change. NULL when it can (or live is NULL or
 * has no spec). When a reason is returned, *orphan says how the old object
 * is deleted: true (Orphan: its pods wait for the new object) for a
 * StatefulSet whose serviceName or volumeClaimTemplates changed, false
 * (Background) for a changed selector. Otherwise *orphan means nothing. */
const char *reconcile_immutable_change(json_object *desired, json_object *live, bool *orphan);

/* True when the answer (code, body) to an apply is the API server's
 * refusal to change immutable fields and nothing else: a 422 whose every
 * cause (or, without causes, its message) says so. */
bool reconcile_immutable_refusal(int code, const char *body);
#endif
