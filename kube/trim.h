/* kube/trim.h - what one Kubernetes object becomes when it enters the store,
 * whatever its source (manifest files, the API server's watches, on-demand
 * GETs).
 *
 * Kept kinds: Namespace (metadata with annotations), Instrumentation and
 * OpenTelemetryCollector (whole, then prepared by the caller), Secret and ConfigMap (metadata and the names of their keys: a
 * value never survives the parse buffer), and the owner kinds Deployment,
 * ReplicaSet, StatefulSet, DaemonSet, Job, CronJob (metadata only). One
 * function for every source so that a file and a watch event for the same
 * object give the same store entry. */
#ifndef KUBE_TRIM_H
#define KUBE_TRIM_H

#include "kube/log.h"

#include <json-c/json.h>

/* What the owner of a source does to an Instrumentation or an
 * OpenTelemetryCollector as it enters the store: the operator's defaulting,
 * which is not Kubernetes plumbing and so is handed in. fn returns 0, or -1
 * with a one-line reason, which is logged (the object is kept as it came).
 * A NULL kube_prepare keeps objects as they came. */
typedef struct kube_prepare {
    int (*fn)(void *ud, const char *kind, json_object *obj, char *err, size_t errlen);
    void *ud;
} kube_prepare;

/* Returns a new object (refcount 1, shares nothing with doc) or NULL when
 * the object is skipped (not an object, no kind or name, a kind we do not
 * use). default_ns is the namespace of namespaced objects that name none;
 * where ("FILE:LINE", "watch instrumentations") prefixes log messages.
 * kind: List is not expanded here (see kube_manifest_objects). */
json_object *kube_trim_object(json_object *doc, const kube_prepare *prep, const char *default_ns, const char *where,
                              const kube_logger *log);

/* True for the kinds kept as metadata-only owners. */
int kube_is_owner_kind(const char *kind);
#endif
