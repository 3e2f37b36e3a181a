/* kube/source.h - a mutate_source answering from a store snapshot.
 *
 * Files are authoritative for what people write as manifests
 * (Instrumentation, OpenTelemetryCollector, Namespace): absent means not
 * found. For Secrets and ConfigMaps, a namespace in which the snapshot holds
 * none of that kind at all is "unknown" rather than "not found", so that
 * offline runs without those manifests do not drop a language for a missing
 * exporter certificate. Owner kinds answer "not found", which makes the
 * engine fall back to the pod-template-hash rule silently. */
#ifndef KUBE_SOURCE_H
#define KUBE_SOURCE_H

#include "kube/store.h"
#include "mutate/mutate.h"

void kube_source_snapshot(mutate_source *src, const kube_snapshot *snap);
#endif
