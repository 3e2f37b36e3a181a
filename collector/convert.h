/* collector/convert.h - OpenTelemetryCollector opentelemetry.io/v1alpha1 <->
 * v1beta1 (cr-admission.md 6.2-6.4): the one conversion, used by the
 * webhook's /convert, by the store and by otel-reconcile render.
 *
 * Pure: objects in, new objects out, nothing shared with the input.
 *
 * Trade-offs against the reference (docs/compat.md, "Conversion"):
 * - Round trips keep what v1alpha1 cannot hold. v1beta1 -> v1alpha1 puts
 *   every spec and status field v1alpha1 has no place for (networkPolicy,
 *   readinessProbe, mTLS, matchExpressions, conditions, fields unknown to
 *   us, ...) into the annotation COLLECTOR_CONVERT_FIELDS as compact JSON;
 *   v1alpha1 -> v1beta1 puts them back wherever the v1alpha1 object does
 *   not say otherwise, and removes the annotation. spec.serviceName and
 *   prometheusCR.denyFSAccessThroughSMs, which both versions have, are
 *   mapped (the reference drops them).
 * - v1alpha1 -> v1beta1 never fails on a config string: one that does not
 *   read as a collector config becomes the empty config, as in the
 *   reference, but the text is kept in COLLECTOR_CONVERT_CONFIG (up to
 *   COLLECTOR_CONVERT_CONFIG_MAX bytes) and the reason is handed back, so
 *   it is neither lost from storage nor silent. While the config is still
 *   exactly that empty one, v1beta1 -> v1alpha1 gives the text back; once it
 *   changed, the text is left out of the v1alpha1 object (and so of what a
 *   v1alpha1 write stores).
 * - The output holds what the input held: no empty structures are added
 *   (the reference serialises whole Go structs: targetAllocator, ingress,
 *   observability, ... as {}), except spec.config, which both versions
 *   require, and the v1beta1 monitor selectors of a v1alpha1 prometheusCR,
 *   whose absence means "select all" there and "select nothing" in
 *   v1beta1.
 * - Input of the wrong type where the conversion reads (spec, targetAllocator,
 *   a v1beta1 config section, ...) is refused with the field's path: the
 *   reference's decoder refuses it before converting. */
#ifndef COLLECTOR_CONVERT_H
#define COLLECTOR_CONVERT_H

#include "kube/yaml.h"

#include <json-c/json.h>
#include <stddef.h>

#define COLLECTOR_CONVERT_V1ALPHA1 "opentelemetry.io/v1alpha1"
#define COLLECTOR_CONVERT_V1BETA1 "opentelemetry.io/v1beta1"
/* The v1beta1 fields a v1alpha1 object carries for the way back. */
#define COLLECTOR_CONVERT_FIELDS "otel-webhook/v1beta1-fields"
/* A v1alpha1 config string that did not read, kept next to the empty config
 * that replaced it. */
#define COLLECTOR_CONVERT_CONFIG "otel-webhook/v1alpha1-config"
#define COLLECTOR_CONVERT_CONFIG_MAX 65536

/* What a conversion that succeeded wants said (a log line, a render error):
 * empty strings when there is nothing. */
typedef struct collector_convert_notes {
    /* The v1alpha1 config did not read and was replaced by the empty config:
     * "spec.config line 2: did not find expected node content",
     * "spec.config is not a map", "spec.config.receivers: expected a map,
     * got a list", ... */
    char config[384];
    /* The COLLECTOR_CONVERT_FIELDS annotation was not a JSON object and was
     * dropped: its fields are lost. */
    char fields[160];
} collector_convert_notes;

/* v1alpha1 -> v1beta1. NULL only for input of the wrong type, with the
 * reason ("spec.targetAllocator: expected an object, got a string") in
 * err; notes may be NULL. */
json_object *collector_convert_to_v1beta1(json_object *alpha, collector_convert_notes *notes, char *err,
                                          size_t errlen);

/* v1beta1 -> v1alpha1. NULL for input of the wrong type, or "failed to
 * convert to v1alpha1: ..." when the config cannot be written as YAML (the
 * failure the reference has: here, nesting past COLLECTOR_YAML_MAX_DEPTH). */
json_object *collector_convert_to_v1alpha1(json_object *beta, char *err, size_t errlen);

/* Either of the above, by obj's apiVersion and the desired one (both
 * "opentelemetry.io/<version>"); obj must be an OpenTelemetryCollector.
 * Converting to the version obj already has is refused, as the reference
 * does. */
json_object *collector_convert(json_object *obj, const char *desired, collector_convert_notes *notes, char *err,
                               size_t errlen);

/* A budget shared by the conversions of one ConversionReview, so that the
 * review as a whole is bounded, not each object alone: every spec.config
 * read charges yaml (kube/yaml.h), and each v1alpha1 config written may
 * take at most yaml_bytes (0: no limit). Crossing either fails the object
 * (never the empty config of an unreadable text) with the limit named in
 * err, and sets exceeded. */
typedef struct collector_convert_budget {
    kube_yaml_budget yaml;
    size_t yaml_bytes;
    int exceeded;
} collector_convert_budget;

/* collector_convert, charging budget (may be NULL). */
json_object *collector_convert_budgeted(json_object *obj, const char *desired, collector_convert_notes *notes,
                                        collector_convert_budget *budget, char *err, size_t errlen);

/* The v1alpha1 config string read into the reference's config shape (6.4),
 * receivers, exporters and service.pipelines made {} when absent: a new
 * object, or NULL with the reason in err (prefixed "spec.config"). */
json_object *collector_convert_config_from_yaml(const char *text, size_t len, char *err, size_t errlen);

#endif
