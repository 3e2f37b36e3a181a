/* collector/defaults.h - the reference's collector defaulting
 * (cr-admission.md 2.2, 2.3): what the mutating webhook answers as a patch,
 * and the same applied in memory to every collector the store reads and
 * otel-reconcile renders, so that an object written without the webhook
 * behaves as one written through it. */
#ifndef COLLECTOR_DEFAULTS_H
#define COLLECTOR_DEFAULTS_H

#include <json-c/json.h>
#include <stddef.h>

/* Fills the telemetry reader and the enabled components' endpoints into
 * config, in place. Idempotent. Returns 0, or -1 with a one-line reason in
 * err (an unknown protocols key), config then untouched. */
int collector_default_config(json_object *config, char *err, size_t errlen);

/* The mutating webhook's defaulting of a v1beta1 collector, in the
 * reference's order: mode, upgradeStrategy, replicas, the target
 * allocator's replicas, the autoscaler's minReplicas and CPU target,
 * ingress termination and ruleType, managementState, networkPolicy, then
 * the config. In place; returns 0, or -1 with a one-line reason in err (a
 * field of the wrong type, collector/shape.h; the config's defaulting
 * failed), the object then untouched. Idempotent. */
int collector_default_spec(json_object *collector, char *err, size_t errlen);

/* What one collector may hold, so that building its ports, Services,
 * NetworkPolicy and sidecar stays cheap (some of those passes compare
 * every port with every other): enabled components per kind, spec.ports,
 * spec.volumes and spec.configmaps together. The CRD sets no such limits;
 * real collectors stay far below them. */
#define COLLECTOR_MAX_COMPONENTS 1024
#define COLLECTOR_MAX_PORTS 1024
#define COLLECTOR_MAX_VOLUMES 1024

/* The bounds above for collector (v1beta1 shape): 0, or -1 with the reason
 * ("spec.config: 20000 receivers in pipelines, more than the 1024
 * otel-webhook handles"). */
int collector_check_bounds(json_object *collector, char *err, size_t errlen);

/* Converts a v1alpha1 collector (config as a YAML string) to v1beta1
 * (collector/convert.h; a config string it cannot read is an error here,
 * not the conversion's empty config), checks the bounds above, applies
 * collector_default_spec, and stores under the COLLECTOR_DERIVED_* keys
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
