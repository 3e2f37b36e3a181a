/* collector/components.h - the components of a collector config: which
 * ones are enabled, what each kind of component listens on by default,
 * and the port an endpoint string names (reconcile.md 3.1-3.3).
 *
 * The reference dispatches on a registry of Go "parsers" keyed by component
 * type (the part of the ID before '/'). We keep the same idea as three const
 * tables (receivers, exporters, extensions) whose rows say what kind of
 * component it is, its default port, its transport, and the two columns
 * only Services need (appProtocol, whether the parser declares a
 * targetPort). Adding a component is adding a row. This is the one copy of
 * the table: defaulting, container and Service ports, probes and RBAC all
 * read it, so they always agree.
 *
 * Input shape. The config is whatever a user (or a fuzzer) wrote, so
 * nothing is assumed: a value of the wrong JSON type is treated as absent. */
#ifndef COLLECTOR_COMPONENTS_H
#define COLLECTOR_COMPONENTS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* The kinds of component, as bits. */
typedef enum collector_kind {
    COLLECTOR_RECEIVERS = 1,
    COLLECTOR_EXPORTERS = 2,
    COLLECTOR_EXTENSIONS = 4,
    COLLECTOR_PROCESSORS = 8,
    COLLECTOR_LISTENERS = 7, /* the kinds that may listen on a port */
} collector_kind;

/* The config key of a kind ("receivers", ...); kind is one bit. */
const char *collector_kind_key(collector_kind kind);

/* The enabled IDs of one kind: named by a pipeline (receivers, processors,
 * exporters) or by service.extensions, each once, in order of first
 * mention. The strings are borrowed from config, which must not lose its
 * pipelines or service.extensions while they are used (defaulting edits
 * only the component maps). Linear in the size of the lists. */
typedef struct collector_ids {
    const char **v;
    size_t n;
} collector_ids;
void collector_enabled(json_object *config, collector_kind kind, collector_ids *out);
void collector_ids_free(collector_ids *ids);

/* True when a receiver of type t1 or t2 (the ID before '/') is enabled. */
bool collector_receiver_enabled(json_object *config, const char *t1, const char *t2);

/* The port an endpoint string names: the digits after the last ':' of its
 * host:port, a bracketed IPv6 literal being part of the host ("[::1]:4317"
 * gives 4317; the reference reads 1, spec 7.11), a "scheme://" prefix and a
 * "/path", "?query" or "#fragment" suffix ignored. 0 when there is none, it
 * is not numeric (an env-var port), 0 or over INT32_MAX: callers then use
 * the component's default port. */
int collector_endpoint_port(const char *endpoint);
/* Port of a single-endpoint component config: `endpoint`, or
 * `listen_address` when the endpoint is empty (a non-empty endpoint without
 * a port does not fall back; neither does the reference). */
int collector_config_port(json_object *cfg);

/* ---- the table (collector/ only) ---------------------------------------- */

/* Transport of a port. The reference leaves most ports without a protocol
 * (Kubernetes then defaults to TCP). */
typedef enum { PROTO_NONE, PROTO_TCP, PROTO_UDP } collector_proto;

typedef struct collector_protocol_def {
    const char *name; /* key under protocols: */
    int port;         /* default port */
    collector_proto proto;
    const char *app;  /* appProtocol, "" = none */
} collector_protocol_def;

typedef enum {
    K_NONE,          /* exposes nothing, has no defaults */
    K_GENERIC,       /* unknown receiver: a port only if the endpoint names one */
    K_SINGLE,        /* one port, `port` by default; 0 means it must be given */
    K_MULTI,         /* one port per protocols.<p> entry */
    K_PROMETHEUS_RX, /* the prometheus receiver: only its api_server */
    K_HEALTH_CHECK,  /* endpoint port plus the probes' path */
    K_JAEGER_QUERY   /* http.endpoint, plus grpc.endpoint when it differs */
} collector_component_kind;

typedef struct collector_component_def {
    const char *type;
    collector_component_kind kind;
    int port;
    collector_proto proto;
    const char *app;    /* appProtocol of the port; K_MULTI: per protocol */
    int target;         /* declares targetPort (= port), every port of it */
    const collector_protocol_def *protocols; /* K_MULTI only; ends with a NULL name */
} collector_component_def;

/* The row for a component ID of a kind (one of COLLECTOR_LISTENERS); a
 * type without a row is a generic receiver, or a portless exporter or
 * extension. */
const collector_component_def *collector_component(collector_kind kind, const char *id);
const collector_protocol_def *collector_protocol(const collector_component_def *d, const char *name);
/* "TCP", "UDP" or "". */
const char *collector_proto_name(collector_proto p);

#define COLLECTOR_DEFAULT_HOST "0.0.0.0"
#define COLLECTOR_METRICS_PORT 8888
#define COLLECTOR_HEALTH_CHECK_PORT 13133

#endif
