/* collector/ports.h - the ports a collector config implies (reconcile.md
 * 3.2-3.5, mutation.md 4.4): what each enabled component exposes, the
 * container ports of the collector container, and the telemetry port. */
#ifndef COLLECTOR_PORTS_H
#define COLLECTOR_PORTS_H

#include "collector/components.h"

#include <json-c/json.h>
#include <stddef.h>

/* Room for a port name: naming.PortName gives at most 15 characters, or
 * "port-<n>" for an int32 n. */
#define COLLECTOR_PORT_NAME_BUF 32

/* A port a component's parser declares. The strings are static; "" is how
 * the reference leaves a field unset. */
typedef struct collector_port {
    char name[COLLECTOR_PORT_NAME_BUF]; /* PortName(id[-protocol], port) */
    int port;                           /* 1..INT32_MAX */
    const char *protocol;               /* "TCP", "UDP" or "" */
    const char *app_protocol;           /* "grpc", "http" or "" */
    int target_port;                    /* = port when declared, else 0 */
} collector_port;

typedef struct collector_ports {
    collector_port *v;
    size_t n, cap;
} collector_ports;

/* The ports of the enabled components of the kinds in `which`
 * (COLLECTOR_* bits), as the table and the (defaulted) config give them:
 * neither validated, de-duplicated nor sorted. Order: receivers by first
 * mention across pipelines, then exporters, then extensions; a
 * multi-protocol receiver's ports in the order of its protocols map.
 * Returns 0 with *out filled (release with collector_ports_free), or -1
 * with *out empty and a reason in err when receivers are asked for and one
 * cannot be built (an unknown protocols key, a portless tcp_log/udp_log;
 * the reference fails the whole build on these). */
int collector_component_ports(json_object *config, unsigned which, collector_ports *out, char *err,
                              size_t errlen);
void collector_ports_free(collector_ports *ports);

/* The collector container's ports (reconcile.md 3.4) from the (defaulted)
 * config and spec.ports (may be NULL): a new array of {name, containerPort,
 * protocol, hostPort?} sorted by name, or NULL with a reason in err. */
json_object *collector_container_ports(json_object *config, json_object *spec_ports, char *err, size_t errlen);

/* The telemetry (metrics) port (reconcile.md 3.3), or -1 with a reason in
 * err when the config names one that cannot be used. */
int collector_metrics_port(json_object *config, char *err, size_t errlen);

#endif
