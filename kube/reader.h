/* kube/reader.h - read-only lookups of cluster objects, as the engines see
 * them, and the one reader answering from a store snapshot.
 *
 * The interface is a callback table so that one engine serves every
 * source: a store snapshot (files, `inject`), the live API server with
 * on-demand GETs under a budget (kube/livesource.h), tests.
 *
 * The snapshot reader: files are authoritative for what people write as
 * manifests (Instrumentation, OpenTelemetryCollector, Namespace): absent
 * means not found. For Secrets and ConfigMaps, a namespace in which the
 * snapshot holds none of that kind at all is "unknown" rather than "not
 * found", so that offline runs without those manifests do not drop a
 * language for a missing exporter certificate. Owner kinds answer "not
 * found", which makes the engine fall back to the pod-template-hash rule
 * silently. */
#ifndef KUBE_READER_H
#define KUBE_READER_H

#include "kube/store.h"

#include <json-c/json.h>

typedef enum kube_found {
    KUBE_FOUND,
    KUBE_NOT_FOUND,
    KUBE_UNKNOWN /* the reader could not tell (timeout, budget spent, error) */
} kube_found;

/* kinds are Kubernetes kind names ("Instrumentation", "ReplicaSet", ...). */
typedef struct kube_reader {
    void *ud;
    /* *out is borrowed and valid until the reader's owner releases it (for
     * the engine: the whole mutate_pod() call). */
    kube_found (*get)(void *ud, const char *kind, const char *ns, const char *name, json_object **out);
    /* Calls fn for every object of kind in ns; returns KUBE_FOUND when the
     * listing is complete, KUBE_UNKNOWN when the reader could not list. */
    kube_found (*each)(void *ud, const char *kind, const char *ns, void (*fn)(void *arg, json_object *obj),
                       void *arg);
} kube_reader;

/* A reader over snap (borrowed: it must outlive the reader's use). */
void kube_reader_snapshot(kube_reader *r, const kube_snapshot *snap);
#endif
