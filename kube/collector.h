/* kube/collector.h - what an OpenTelemetryCollector's config implies:
 * the persisted defaults the reference's webhook writes into spec.config,
 * the container ports and probes derived from it, and its YAML rendering.
 * Pure functions over json-c; shared by the sidecar injector (mutate/) and
 * the reconcile job (reconcile/). Reference: ../shared/spec/reconcile.md
 * sections 1.3, 2.5, 3 and mutation.md section 4.4-4.5. */
#ifndef KUBE_COLLECTOR_H
#define KUBE_COLLECTOR_H

#include <json-c/json.h>

/* Applies reconcile.md 1.3 (telemetry reader, endpoint defaults) to config
 * in place. Idempotent. Returns 0, or -1 with a one-line reason in err. */
int kube_collector_default_config(json_object *config, char *err, size_t errlen);

/* Container ports for the collector container (reconcile.md 3.4), given the
 * (defaulted) spec.config and spec.ports (may be NULL). Returns a new json
 * array of {name, containerPort, protocol?, hostPort?} sorted by name, or
 * NULL with err filled on a build error (e.g. unknown protocol). */
json_object *kube_collector_container_ports(json_object *config, json_object *spec_ports,
                                            char *err, size_t errlen);

/* The telemetry (metrics) port (reconcile.md 3.3). -1 with err on error. */
int kube_collector_metrics_port(json_object *config, char *err, size_t errlen);

/* Probes from an enabled health_check extension (reconcile.md 2.5.4):
 * sets *liveness, *readiness, *startup to new objects (with spec overrides
 * from spec.livenessProbe/readinessProbe/startupProbe applied), or NULL
 * each when there is no enabled health_check. spec is the collector spec. */
void kube_collector_probes(json_object *spec, json_object **liveness, json_object **readiness,
                           json_object **startup);

/* YAML of spec.config as the reference serialises it into OTEL_CONFIG and
 * the ConfigMap: top-level keys in struct order (receivers, exporters,
 * processors, connectors, extensions, service; in service: extensions,
 * telemetry, pipelines; in a pipeline: exporters, processors, receivers),
 * every other map sorted by key. Returns malloc'ed text. */
char *kube_collector_config_yaml(json_object *config);

/* Keys under which kube_default_collector() stores, in the collector object
 * itself, what every admission would otherwise recompute: the config YAML
 * and the container ports (or the reason they cannot be built). '@' cannot
 * start a Kubernetes field name, so these never collide with real fields. */
#define KUBE_COLLECTOR_DERIVED_YAML "@configYaml"
#define KUBE_COLLECTOR_DERIVED_PORTS "@containerPorts"
#define KUBE_COLLECTOR_DERIVED_ERROR "@portsError"

#endif
