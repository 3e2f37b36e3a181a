/* reconcile/obj.h - building Kubernetes objects as json-c trees.
 *
 * The renderer writes every object field by field in the order Go's structs
 * serialise them, because kube_yaml_emit writes keys in insertion order and
 * a stable, reference-like layout makes goldens readable and diffs small.
 * Go maps (labels, annotations, selectors, ConfigMap data) serialise sorted,
 * so reconcile_obj_sorted() gives those a sorted copy.
 *
 * Allocation failure: json-c constructors return NULL and every helper here
 * accepts and propagates NULL, so a builder can chain calls and check once
 * (reconcile_obj_oom, a per-thread flag) instead of after each field. The tree is then freed
 * whole. This trades a few wasted calls after an OOM for readable builders. */
#ifndef RECONCILE_OBJ_H
#define RECONCILE_OBJ_H

#include <json-c/json.h>
#include <stdint.h>

/* o[key] = v; takes v. Marks o failed when v is NULL (OOM). Returns v. */
json_object *reconcile_obj_set(json_object *o, const char *key, json_object *v);
/* o[key] = new string / int / bool / new object / new array. Return the value. */
json_object *reconcile_obj_str(json_object *o, const char *key, const char *s);
json_object *reconcile_obj_int(json_object *o, const char *key, int64_t v);
json_object *reconcile_obj_bool(json_object *o, const char *key, int v);
json_object *reconcile_obj_map(json_object *o, const char *key);
json_object *reconcile_obj_arr(json_object *o, const char *key);
/* Appends v (taken) to array a. Returns v. */
json_object *reconcile_obj_push(json_object *a, json_object *v);
/* o[key] = deep copy of v, when v is present and not null. */
void reconcile_obj_copy(json_object *o, const char *key, json_object *v);
/* Deep copy (NULL stays NULL). */
json_object *reconcile_obj_clone(json_object *v);
/* Deep copy of a map with its keys sorted bytewise (NULL if v is not a map). */
json_object *reconcile_obj_sorted(json_object *v);
/* True when some reconcile_obj_* call on this thread saw an allocation fail
 * since the last call; clears the flag. */
int reconcile_obj_oom(void);

/* Readers that treat a wrong JSON type as absent. */
json_object *reconcile_get(json_object *o, const char *key);
json_object *reconcile_get_map(json_object *o, const char *key);
json_object *reconcile_get_arr(json_object *o, const char *key);
const char *reconcile_get_str(json_object *o, const char *key); /* NULL if absent */
int reconcile_get_bool(json_object *o, const char *key);        /* false if absent */
/* 1 and *out when o[key] is an integer (or an integral double). */
int reconcile_get_int(json_object *o, const char *key, int64_t *out);
/* Non-empty map or non-empty array or non-empty string. */
int reconcile_nonempty(json_object *v);
#endif
