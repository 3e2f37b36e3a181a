/* collector/defaults.h - the defaulting the reference's collector webhook
 * persists (reconcile.md 1.3), applied in memory: to spec.config alone, or
 * to a whole OpenTelemetryCollector as it enters the webhook's store. */
#ifndef COLLECTOR_DEFAULTS_H
#define COLLECTOR_DEFAULTS_H

#include <json-c/json.h>
#include <stddef.h>

/* Fills the telemetry reader and the enabled components' endpoints into
 * config, in place. Idempotent. Returns 0, or -1 with a one-line reason in
 * err (an unknown protocols key), config then untouched. */
int collector_default_config(json_object *config, char *err, size_t errlen);

/* What one collector may hold, so that building its ports, Services,
 * NetworkPolicy and sidecar stays cheap (some of those passes compare
 * every port with every other): enabled components per kind, spec.ports,
 * spec.volumes and spec.configmaps together. The CRD sets no such limits;
 * real collectors stay far below them. */
#define COLLECTOR_MAX_COMPONENTS 1024
#define COLLECTOR_MAX_PORTS 1024
#define COLLECTOR_MAX_VOLUMES 1024

/* Converts a v1alpha1 collector (config as a YAML string) to v1beta1
 * (collector/convert.h; a config string it cannot read is an error here,
 * not the conversion's empty config), checks the bounds above, defaults its config, and stores under the COLLECTOR_DERIVED_* keys
 * what every admission would otherwise recompute: the config YAML and the
 * container ports (or the reason they cannot be built). In place; returns
 * 0, or -1 with a one-line reason, the object then left as it came. */
int collector_default(json_object *collector, char *err, size_t errlen);

/* '@' cannot start a Kubernetes field name, so these never collide with
 * real fields; anything that writes the object back (render) drops them
 * with collector_drop_derived. */
#define COLLECTOR_DERIVED_YAML "@configYaml"
#define COLLECTOR_DERIVED_PORTS "@containerPorts"
#define COLLECTOR_DERIVED_ERROR "@portsError"
void collector_drop_derived(json_object *collector);

#endif
