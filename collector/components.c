/* collector/components.c - the component table, enabled IDs and the
 * endpoint parser; see components.h.
 *
 * Reference quirks kept on purpose, since conformance tests see them: the
 * prometheus exporter defaults to 8888 like the collector's own telemetry;
 * a receiver referenced by a pipeline but not defined still gets its
 * defaults written and its default port exposed. */
#include "collector/components.h"

#include "base/alloc.h"
#include "base/json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const collector_protocol_def otlp_protocols[] = {
    {"grpc", 4317, PROTO_NONE, "grpc"}, {"http", 4318, PROTO_NONE, "http"}, {NULL, 0, PROTO_NONE, ""}};
static const collector_protocol_def jaeger_protocols[] = {
    {"grpc", 14250, PROTO_TCP, "grpc"},      {"thrift_http", 14268, PROTO_TCP, "http"},
    {"thrift_compact", 6831, PROTO_UDP, ""}, {"thrift_binary", 6832, PROTO_UDP, ""},
    {NULL, 0, PROTO_NONE, ""}};
static const collector_protocol_def loki_protocols[] = {
    {"grpc", 9095, PROTO_NONE, "grpc"}, {"http", 3100, PROTO_NONE, "http"}, {NULL, 0, PROTO_NONE, ""}};
static const collector_protocol_def skywalking_protocols[] = {
    {"grpc", 11800, PROTO_NONE, "grpc"}, {"http", 12800, PROTO_NONE, "http"}, {NULL, 0, PROTO_NONE, ""}};

/* Every receiver with a row declares a targetPort (the e2e expectation for
 * otlp shows targetPort = port); generic receivers do not (spec 3.3). */
#define MULTI(t, p) {t, K_MULTI, 0, PROTO_NONE, "", 1, p}
#define SINGLE(t, port, proto, app) {t, K_SINGLE, port, proto, app, 1, NULL}
#define NOPORT(t) {t, K_NONE, 0, PROTO_NONE, "", 0, NULL}

/* reconcile.md 3.3. Both spellings are listed where the collector renamed a
 * component (tcp_log/tcplog); the reference registers both. */
static const collector_component_def receiver_defs[] = {
    MULTI("otlp", otlp_protocols),
    MULTI("jaeger", jaeger_protocols),
    MULTI("loki", loki_protocols),
    MULTI("skywalking", skywalking_protocols),
    SINGLE("awsxray", 2000, PROTO_UDP, ""),
    SINGLE("carbon", 2003, PROTO_NONE, ""),
    SINGLE("collectd", 8081, PROTO_NONE, ""),
    SINGLE("fluent_forward", 8006, PROTO_NONE, ""),
    SINGLE("fluentforward", 8006, PROTO_NONE, ""),
    SINGLE("influxdb", 8086, PROTO_NONE, ""),
    SINGLE("sapm", 7276, PROTO_NONE, ""),
    SINGLE("signalfx", 9943, PROTO_NONE, ""),
    SINGLE("splunk_hec", 8088, PROTO_NONE, ""),
    SINGLE("statsd", 8125, PROTO_UDP, ""),
    SINGLE("wavefront", 2003, PROTO_NONE, ""),
    SINGLE("zipkin", 9411, PROTO_TCP, "http"),
    SINGLE("tcp_log", 0, PROTO_TCP, ""),
    SINGLE("tcplog", 0, PROTO_TCP, ""),
    SINGLE("udp_log", 0, PROTO_UDP, ""),
    SINGLE("udplog", 0, PROTO_UDP, ""),
    {"prometheus", K_PROMETHEUS_RX, 0, PROTO_NONE, "", 0, NULL},
    /* Scrapers and cluster receivers: they dial out, never listen. Listed
     * so that an endpoint in their config (a scrape target) is not taken
     * for a listening port, as it would be for a generic receiver. */
    NOPORT("ssh_check"), NOPORT("sshcheck"), NOPORT("cloud_foundry"),
    NOPORT("cloudfoundry"), NOPORT("vcenter"), NOPORT("oracledb"), NOPORT("snmp"),
    NOPORT("googlecloudpubsub"), NOPORT("chrony"), NOPORT("jmx"),
    NOPORT("podman_stats"), NOPORT("pulsar"), NOPORT("docker_stats"),
    NOPORT("aerospike"), NOPORT("zookeeper"), NOPORT("prometheus_simple"),
    NOPORT("saphana"), NOPORT("riak"), NOPORT("redis"), NOPORT("rabbitmq"),
    NOPORT("purefb"), NOPORT("postgresql"), NOPORT("nsxt"), NOPORT("nginx"),
    NOPORT("mysql"), NOPORT("memcached"), NOPORT("http_check"), NOPORT("httpcheck"),
    NOPORT("haproxy"), NOPORT("flink_metrics"), NOPORT("flinkmetrics"),
    NOPORT("couchdb"), NOPORT("filelog"), NOPORT("kubelet_stats"),
    NOPORT("kubeletstats"), NOPORT("k8s_events"), NOPORT("k8s_cluster"),
    NOPORT("k8s_objects"), NOPORT("k8sobjects"),
};

/* No targetPort for the prometheus exporter (spec 3.3). */
static const collector_component_def exporter_defs[] = {
    {"prometheus", K_SINGLE, 8888, PROTO_NONE, "", 0, NULL},
};

/* jaeger_query declares a targetPort (spec 3.3). health_check is assumed
 * not to: the spec does not say, and the API server defaults a missing
 * targetPort to the port, so the Service routes the same either way. */
static const collector_component_def extension_defs[] = {
    {"health_check", K_HEALTH_CHECK, 13133, PROTO_NONE, "", 0, NULL},
    {"jaeger_query", K_JAEGER_QUERY, 16686, PROTO_NONE, "", 1, NULL},
};

static const collector_component_def generic_receiver = {"", K_GENERIC, 0, PROTO_NONE, "", 0, NULL};
static const collector_component_def no_component = NOPORT("");

static const struct section {
    collector_kind kind;
    const collector_component_def *defs;
    size_t ndefs;
    const collector_component_def *fallback; /* for types without a row */
} sections[] = {
    {COLLECTOR_RECEIVERS, receiver_defs, NELEM(receiver_defs), &generic_receiver},
    {COLLECTOR_EXPORTERS, exporter_defs, NELEM(exporter_defs), &no_component},
    {COLLECTOR_EXTENSIONS, extension_defs, NELEM(extension_defs), &no_component},
};

const collector_component_def *collector_component(collector_kind kind, const char *id) {
    const char *slash = strchr(id, '/');
    size_t n = slash ? (size_t)(slash - id) : strlen(id);
    for (size_t s = 0; s < NELEM(sections); s++) {
        if (sections[s].kind != kind) continue;
        for (size_t i = 0; i < sections[s].ndefs; i++)
            if (strlen(sections[s].defs[i].type) == n && memcmp(sections[s].defs[i].type, id, n) == 0)
                return &sections[s].defs[i];
        return sections[s].fallback;
    }
    return &no_component;
}

const collector_protocol_def *collector_protocol(const collector_component_def *d, const char *name) {
    for (const collector_protocol_def *p = d->protocols; p && p->name; p++)
        if (strcmp(p->name, name) == 0) return p;
    return NULL;
}

const char *collector_proto_name(collector_proto p) { return p == PROTO_UDP ? "UDP" : p == PROTO_TCP ? "TCP" : ""; }

const char *collector_kind_key(collector_kind kind) {
    switch (kind) {
    case COLLECTOR_RECEIVERS: return "receivers";
    case COLLECTOR_EXPORTERS: return "exporters";
    case COLLECTOR_EXTENSIONS: return "extensions";
    case COLLECTOR_PROCESSORS: return "processors";
    default: return "";
    }
}

/* ---------------------------------------------------------------------------
 * Enabled IDs (reconcile.md 3.1).
 */

typedef struct idset {
    collector_ids *ids;
    size_t cap;
    json_object *seen; /* a json-c object as a hash set, once the list is long */
} idset;

/* Few IDs is the rule: a scan beats hashing until a list is this long. */
#define SCAN_MAX 16

static void add_id(idset *s, const char *id) {
    collector_ids *l = s->ids;
    if (l->n < SCAN_MAX) {
        for (size_t i = 0; i < l->n; i++)
            if (strcmp(l->v[i], id) == 0) return;
    } else {
        if (!s->seen) {
            s->seen = jnew_obj();
            for (size_t i = 0; i < l->n; i++) jset(s->seen, l->v[i], NULL);
        }
        if (json_object_object_get_ex(s->seen, id, NULL)) return;
        jset(s->seen, id, NULL);
    }
    l->v = xgrow(l->v, &s->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = id;
}

static void add_array(idset *s, json_object *arr) {
    size_t n = jlen(arr);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (json_object_is_type(e, json_type_string)) add_id(s, json_object_get_string(e));
    }
}

void collector_enabled(json_object *config, collector_kind kind, collector_ids *out) {
    json_object *service = jmap(config, "service"), *pipelines = jmap(service, "pipelines");
    idset s = {out, 0, NULL};
    memset(out, 0, sizeof *out);
    if (kind == COLLECTOR_EXTENSIONS) {
        add_array(&s, jget(service, "extensions"));
    } else if (pipelines) {
        const char *key = collector_kind_key(kind);
        json_object_object_foreach(pipelines, name, p) {
            (void)name;
            add_array(&s, jget(p, key));
        }
    }
    json_object_put(s.seen);
}

void collector_ids_free(collector_ids *ids) {
    free(ids->v);
    ids->v = NULL;
    ids->n = 0;
}

bool collector_receiver_enabled(json_object *config, const char *t1, const char *t2) {
    collector_ids ids;
    bool found = false;
    collector_enabled(config, COLLECTOR_RECEIVERS, &ids);
    for (size_t i = 0; i < ids.n && !found; i++) {
        size_t tl = strcspn(ids.v[i], "/");
        found = (strlen(t1) == tl && strncmp(ids.v[i], t1, tl) == 0) ||
                (strlen(t2) == tl && strncmp(ids.v[i], t2, tl) == 0);
    }
    collector_ids_free(&ids);
    return found;
}

/* ---------------------------------------------------------------------------
 * Endpoints.
 */

static int is_alnum(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* Text after the digits is ignored, as the reference's ":[0-9]+" does. An
 * env-var host works ("${env:POD_IP}:4317"); a '[' without its ']' is an
 * ordinary character. */
int collector_endpoint_port(const char *s) {
    const char *p, *colon = NULL;
    long v = 0;
    if (!s) return 0;
    /* scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) (RFC 3986) */
    for (p = s; is_alnum((unsigned char)*p) || *p == '+' || *p == '-' || *p == '.'; p++) {}
    if (p > s && strncmp(p, "://", 3) == 0) s = p + 3;
    for (p = s; *p && *p != '/' && *p != '?' && *p != '#'; p++) {
        const char *close;
        if (*p == '[' && (close = strchr(p + 1, ']')) != NULL)
            p = close; /* a literal's colons are not the port's */
        else if (*p == ':')
            colon = p;
    }
    if (!colon) return 0;
    for (const char *q = colon + 1; *q >= '0' && *q <= '9'; q++) {
        int d = *q - '0';
        if (v > (INT32_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    return (int)v;
}

int collector_config_port(json_object *cfg) {
    const char *ep = jstr(cfg, "endpoint");
    if (ep && *ep) return collector_endpoint_port(ep);
    ep = jstr(cfg, "listen_address");
    if (ep && *ep) return collector_endpoint_port(ep);
    return 0;
}
