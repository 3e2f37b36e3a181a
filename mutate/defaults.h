/* mutate/defaults.h - the reference's Instrumentation defaulting
 * (cr-admission.md 4.1): what the mutating webhook answers as a patch, and
 * the same applied in memory when an object enters the store (with the
 * collector's, collector/defaults.h), so that objects written without the
 * webhook behave the same here. */
#ifndef MUTATE_DEFAULTS_H
#define MUTATE_DEFAULTS_H

#include "kube/trim.h"
#include "mutate/settings.h"

#include <json-c/json.h>
#include <stddef.h>

/* The annotation recording the default image an Instrumentation was given
 * for a language (the operator's upgrade routine reads it). */
#define MUTATE_DEFAULT_IMAGE_ANNOTATION_FMT "instrumentation.opentelemetry.io/default-auto-instrumentation-%s-image"

/* NULL when the fields defaulting and validation read have the types the
 * reference's decoder wants, else a malloc'ed "PATH: REASON"
 * (base/shape.h). */
char *mutate_check_instrumentation_shape(json_object *obj);

/* Fills default images (from s), resources, Apache's and Nginx's settings
 * and the default-image annotations into obj, an Instrumentation, in
 * place. Returns 0, or -1 with the reason in err when a field has the
 * wrong type (the object is then untouched). Idempotent. */
int mutate_default_instrumentation(json_object *obj, const mutate_settings *s, char *err, size_t errlen);

/* The store's preparation step (kube/trim.h) for Instrumentations (the
 * above) and OpenTelemetryCollectors (the collector's own defaulting; a
 * collector it refuses keeps the reason under COLLECTOR_DERIVED_ERROR);
 * settings is a const mutate_settings *, which must outlive every source
 * it is given to. MUTATE_PREPARE(&settings) is the kube_prepare. */
int mutate_prepare_resource(void *settings, const char *kind, json_object *obj, char *err, size_t errlen);
#define MUTATE_PREPARE(settings) ((kube_prepare){mutate_prepare_resource, (void *)(settings)})
#endif
