/* mutate/defaults.h - the defaulting the reference's admission webhooks do
 * to the resources the engine reads (mutation.md 2.9, reconcile.md 1.3),
 * applied in memory when an object enters the store, so that objects
 * written for the operator behave the same here. */
#ifndef MUTATE_DEFAULTS_H
#define MUTATE_DEFAULTS_H

#include "kube/trim.h"
#include "mutate/settings.h"

#include <json-c/json.h>

/* Fills default images (from s), resources and per-language settings into
 * obj, an Instrumentation, in place. */
void mutate_default_instrumentation(json_object *obj, const mutate_settings *s);

/* The store's preparation step (kube/trim.h) for Instrumentations (the
 * above) and OpenTelemetryCollectors (the collector's own defaulting; a
 * collector it refuses keeps the reason under COLLECTOR_DERIVED_ERROR);
 * settings is a const mutate_settings *, which must outlive every source
 * it is given to. MUTATE_PREPARE(&settings) is the kube_prepare. */
int mutate_prepare_resource(void *settings, const char *kind, json_object *obj, char *err, size_t errlen);
#define MUTATE_PREPARE(settings) ((kube_prepare){mutate_prepare_resource, (void *)(settings)})
#endif
