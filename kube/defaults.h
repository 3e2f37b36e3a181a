/* kube/defaults.h - the defaulting the reference's own admission webhooks do
 * to Instrumentation and OpenTelemetryCollector objects (mutation.md 2.9,
 * reconcile.md 1.3), applied in memory when an object enters the store so
 * that objects written for the operator behave the same here. */
#ifndef KUBE_DEFAULTS_H
#define KUBE_DEFAULTS_H


#include <json-c/json.h>

/* Converts a v1alpha1 collector (config as a YAML string) to the v1beta1
 * shape and applies the config defaults, in place. Returns 0, or -1 with a
 * one-line reason (the object is then left as it was). */
int kube_default_collector(json_object *obj, char *err, size_t errlen);
#endif
