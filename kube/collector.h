/* kube/collector.h - what an OpenTelemetryCollector's config implies:
 * the persisted defaults the reference's webhook writes into spec.config,
 * the ports its components expose (the one component table, with what
 * container and Service ports need), the container ports and probes derived
 * from it, and its YAML rendering. Pure functions over json-c; shared by
 * the sidecar injector (mutate/) and the reconcile job (reconcile/).
 * Reference: ../shared/spec/reconcile.md sections 1.3, 2.5, 3 and
 * mutation.md section 4.4-4.5. */
#ifndef KUBE_COLLECTOR_H
#define KUBE_COLLECTOR_H

#include <json-c/json.h>
#include <stddef.h>

/* Applies reconcile.md 1.3 (telemetry reader, endpoint defaults) to config
 * in place. Idempotent. Returns 0, or -1 with a one-line reason in err. */
int kube_collector_default_config(json_object *config, char *err, size_t errlen);

/* Container ports for the collector container (reconcile.md 3.4), given the
 * (defaulted) spec.config and spec.ports (may be NULL). Returns a new json
 * array of {name, containerPort, protocol?, hostPort?} sorted by name, or
 * NULL with err filled on a build error (e.g. unknown protocol). */
json_object *kube_collector_container_ports(json_object *config, json_object *spec_ports,
                                            char *err, size_t errlen);

/* The kinds of component, as a bit set for kube_collector_component_ports. */
enum {
    KUBE_COLLECTOR_RECEIVERS = 1,
    KUBE_COLLECTOR_EXPORTERS = 2,
    KUBE_COLLECTOR_EXTENSIONS = 4,
    KUBE_COLLECTOR_ALL = 7,
};

/* Room for a port name: naming.PortName gives at most 15 characters, or
 * "port-<n>" for an int32 n. */
#define KUBE_COLLECTOR_PORT_NAME_BUF 32

/* A port a component's parser declares (reconcile.md 3.2-3.3). The strings
 * are static; "" is how the reference leaves a field unset. */
typedef struct kube_collector_port {
    char name[KUBE_COLLECTOR_PORT_NAME_BUF]; /* PortName(id[-protocol], port) */
    int port;                                /* 1..INT32_MAX */
    const char *protocol;                    /* "TCP", "UDP" or "" */
    const char *app_protocol;                /* "grpc", "http" or "" */
    int target_port;                         /* = port when declared, else 0 */
} kube_collector_port;

typedef struct kube_collector_ports {
    kube_collector_port *v; /* n entries; cap is the allocation */
    size_t n, cap;
} kube_collector_ports;

/* The ports of the enabled components (reconcile.md 3.1) of the kinds in
 * `which` (KUBE_COLLECTOR_* bits), as the component table and the
 * (defaulted) config give them: neither validated, de-duplicated nor
 * sorted. Order: receivers by first mention across pipelines, then
 * exporters, then extensions (service.extensions order); a multi-protocol
 * receiver's ports in the order of its protocols map. Returns 0 with *out
 * filled (release with kube_collector_ports_free), or -1 with *out empty
 * and err set: out of memory, or a build error of a receiver when
 * receivers are asked for (an unknown protocols key, a portless
 * tcp_log/udp_log). */
int kube_collector_component_ports(json_object *config, unsigned which, kube_collector_ports *out,
                                   char *err, size_t errlen);
void kube_collector_ports_free(kube_collector_ports *ports);

/* The port an endpoint string names: the digits after the last ':' of its
 * host:port, a bracketed IPv6 literal being part of the host ("[::1]:4317"
 * gives 4317), a "scheme://" prefix and a "/path", "?query" or "#fragment"
 * suffix ignored. 0 when there is none, it is not numeric (an env-var
 * port), 0 or over INT32_MAX: the callers then use the component's
 * default port. Shared by the container and Service ports, the probes and
 * the defaulting. */
int kube_collector_endpoint_port(const char *endpoint);

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
