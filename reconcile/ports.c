/* reconcile/ports.c - Service ports from the config; see ports.h.
 *
 * The table below mirrors kube/collector.c's receiver table, plus the two
 * columns only Services need (appProtocol, whether the parser declares a
 * targetPort). Receivers the table does not know are "generic": a port only
 * when the endpoint names one. Scrapers never listen; they are listed so
 * that an endpoint in their config (a scrape target) is not mistaken for a
 * listening port. Duplicating the rows is the price of not touching kube/;
 * a shared typed port list there would remove it.
 *
 * targetPort: every receiver with a row declares one (the e2e expectation
 * for otlp shows targetPort = port), generic receivers and the prometheus
 * exporter do not (spec 3.3), jaeger_query does (spec 3.3). health_check
 * is assumed not to: the spec does not say, and the API server defaults a
 * missing targetPort to the port, so the Service routes the same either
 * way. */
#include "reconcile/ports.h"

#include "reconcile/obj.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct proto_row {
    const char *name;
    int port;
    const char *proto, *app; /* "" when the reference leaves them empty */
} proto_row;

typedef enum { K_NONE, K_SINGLE, K_MULTI, K_PROM_RX, K_HEALTH, K_JQUERY, K_PROM_EX } kind_t;

typedef struct row {
    const char *type;
    kind_t kind;
    int port;
    const char *proto, *app;
    int target; /* the parser declares a targetPort */
    const proto_row *protocols;
} row;

static const proto_row otlp_p[] = {{"grpc", 4317, "", "grpc"}, {"http", 4318, "", "http"}, {0}};
static const proto_row jaeger_p[] = {{"grpc", 14250, "TCP", "grpc"},
                                     {"thrift_http", 14268, "TCP", "http"},
                                     {"thrift_compact", 6831, "UDP", ""},
                                     {"thrift_binary", 6832, "UDP", ""},
                                     {0}};
static const proto_row loki_p[] = {{"grpc", 9095, "", "grpc"}, {"http", 3100, "", "http"}, {0}};
static const proto_row sky_p[] = {{"grpc", 11800, "", "grpc"}, {"http", 12800, "", "http"}, {0}};

#define MULTI(t, p) {t, K_MULTI, 0, "", "", 1, p}
#define SINGLE(t, port, proto, app) {t, K_SINGLE, port, proto, app, 1, NULL}
#define NOPORT(t) {t, K_NONE, 0, "", "", 0, NULL}

static const row receivers[] = {
    MULTI("otlp", otlp_p), MULTI("jaeger", jaeger_p), MULTI("loki", loki_p), MULTI("skywalking", sky_p),
    SINGLE("awsxray", 2000, "UDP", ""), SINGLE("carbon", 2003, "", ""), SINGLE("collectd", 8081, "", ""),
    SINGLE("fluent_forward", 8006, "", ""), SINGLE("fluentforward", 8006, "", ""),
    SINGLE("influxdb", 8086, "", ""), SINGLE("sapm", 7276, "", ""), SINGLE("signalfx", 9943, "", ""),
    SINGLE("splunk_hec", 8088, "", ""), SINGLE("statsd", 8125, "UDP", ""), SINGLE("wavefront", 2003, "", ""),
    SINGLE("zipkin", 9411, "TCP", "http"), SINGLE("tcp_log", 0, "TCP", ""), SINGLE("tcplog", 0, "TCP", ""),
    SINGLE("udp_log", 0, "UDP", ""), SINGLE("udplog", 0, "UDP", ""),
    {"prometheus", K_PROM_RX, 0, "", "", 0, NULL},
    NOPORT("ssh_check"), NOPORT("sshcheck"), NOPORT("cloud_foundry"), NOPORT("cloudfoundry"),
    NOPORT("vcenter"), NOPORT("oracledb"), NOPORT("snmp"), NOPORT("googlecloudpubsub"), NOPORT("chrony"),
    NOPORT("jmx"), NOPORT("podman_stats"), NOPORT("pulsar"), NOPORT("docker_stats"), NOPORT("aerospike"),
    NOPORT("zookeeper"), NOPORT("prometheus_simple"), NOPORT("saphana"), NOPORT("riak"), NOPORT("redis"),
    NOPORT("rabbitmq"), NOPORT("purefb"), NOPORT("postgresql"), NOPORT("nsxt"), NOPORT("nginx"),
    NOPORT("mysql"), NOPORT("memcached"), NOPORT("http_check"), NOPORT("httpcheck"), NOPORT("haproxy"),
    NOPORT("flink_metrics"), NOPORT("flinkmetrics"), NOPORT("couchdb"), NOPORT("filelog"),
    NOPORT("kubelet_stats"), NOPORT("kubeletstats"), NOPORT("k8s_events"), NOPORT("k8s_cluster"),
    NOPORT("k8s_objects"), NOPORT("k8sobjects"),
};
static const row generic = {"", K_SINGLE, 0, "", "", 0, NULL}; /* port only if named */
static const row exporters[] = {{"prometheus", K_PROM_EX, 8888, "", "", 0, NULL}};
static const row extensions[] = {{"health_check", K_HEALTH, 13133, "", "", 0, NULL},
                                 {"jaeger_query", K_JQUERY, 16686, "", "", 1, NULL}};
static const row none = NOPORT("");

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const row *lookup(const row *rows, size_t n, const row *fallback, const char *id) {
    const char *slash = strchr(id, '/');
    size_t len = slash ? (size_t)(slash - id) : strlen(id);
    for (size_t i = 0; i < n; i++)
        if (strlen(rows[i].type) == len && memcmp(rows[i].type, id, len) == 0) return &rows[i];
    return fallback;
}

/* First ":[0-9]+" as an int32; 0 when none (reference quirk kept, so these
 * agree with the container ports). */
static long port_of(const char *s) {
    if (!s) return 0;
    for (const char *p = s; (p = strchr(p, ':')) != NULL; p++) {
        long v = 0;
        if (p[1] < '0' || p[1] > '9') continue;
        for (const char *q = p + 1; *q >= '0' && *q <= '9'; q++) {
            if (v > (INT32_MAX - (*q - '0')) / 10) return 0;
            v = v * 10 + (*q - '0');
        }
        return v;
    }
    return 0;
}

static long endpoint_port(json_object *cfg) {
    const char *ep = reconcile_get_str(cfg, "endpoint");
    if (ep && *ep) return port_of(ep);
    return port_of(reconcile_get_str(cfg, "listen_address"));
}

static int alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* naming.PortName (reconcile.md 3.2). */
static void port_name(char out[32], const char *id, const char *suffix, long port) {
    char tmp[64];
    size_t n;
    snprintf(tmp, sizeof(tmp), "%s%s%s", id, suffix ? "-" : "", suffix ? suffix : "");
    n = strlen(id) + (suffix ? 1 + strlen(suffix) : 0);
    if (n > 15) goto fallback;
    for (size_t i = 0; i < n; i++)
        if (tmp[i] == '/' || tmp[i] == '_') tmp[i] = '-';
    if (n > 0) {
        if (!alnum(tmp[0]) || !alnum(tmp[n - 1])) goto fallback;
        for (size_t i = 1; i + 1 < n; i++)
            if (!alnum(tmp[i]) && tmp[i] != '-' && tmp[i] != '.') goto fallback;
    }
    memcpy(out, tmp, n + 1);
    return;
fallback:
    snprintf(out, 32, "port-%ld", port);
}

typedef struct sport {
    char name[32];
    const char *proto, *app;
    long port, target;
} sport;

typedef struct plist {
    sport *v;
    size_t n, cap;
} plist;

static int push(plist *l, const char *id, const char *suffix, long port, const char *proto, const char *app,
                int target) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sport *v = realloc(l->v, cap * sizeof(*v));
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    sport *p = &l->v[l->n++];
    port_name(p->name, id, suffix, port);
    p->proto = proto;
    p->app = app;
    p->port = port;
    p->target = target ? port : 0;
    return 0;
}

/* -1 build error (err set), -2 OOM. */
static int component(const row *d, const char *id, json_object *cfg, plist *out, char *err, size_t errlen) {
    long p;
    switch (d->kind) {
    case K_SINGLE:
        if ((p = endpoint_port(cfg)) == 0) p = d->port;
        if (p == 0) {
            if (d == &generic) return 0;
            snprintf(err, errlen, "receiver %s: port should not be empty", id);
            return -1;
        }
        return push(out, id, NULL, p, d->proto, d->app, d->target) ? -2 : 0;
    case K_MULTI: {
        json_object *protocols = reconcile_get_map(cfg, "protocols");
        if (!protocols) return 0;
        json_object_object_foreach(protocols, name, v) {
            const proto_row *pr = d->protocols;
            while (pr->name && strcmp(pr->name, name) != 0) pr++;
            if (!pr->name) {
                snprintf(err, errlen, "unknown protocol set: %s", name);
                return -1;
            }
            if ((p = endpoint_port(v)) == 0) p = pr->port;
            if (push(out, id, name, p, pr->proto, pr->app, 1)) return -2;
        }
        return 0;
    }
    case K_PROM_RX: {
        json_object *api = reconcile_get_map(cfg, "api_server");
        if (!reconcile_get_bool(api, "enabled")) return 0;
        p = port_of(reconcile_get_str(reconcile_get_map(api, "server_config"), "endpoint"));
        return p > 0 && push(out, id, NULL, p, "", "", 0) ? -2 : 0;
    }
    case K_PROM_EX:
    case K_HEALTH:
        if ((p = endpoint_port(cfg)) == 0) p = d->port;
        return push(out, id, NULL, p, "", "", d->target) ? -2 : 0;
    case K_JQUERY: {
        long grpc = port_of(reconcile_get_str(reconcile_get_map(cfg, "grpc"), "endpoint"));
        if ((p = port_of(reconcile_get_str(reconcile_get_map(cfg, "http"), "endpoint"))) == 0) p = d->port;
        if (push(out, id, NULL, p, "", "", 1)) return -2;
        if (grpc > 0 && grpc != p && push(out, id, "2", grpc, "", "", 1)) return -2;
        return 0;
    }
    default:
        return 0;
    }
}

static int name_cmp(const void *a, const void *b) {
    return strcmp(((const sport *)a)->name, ((const sport *)b)->name);
}

/* IDs of a kind, each once, in order of first mention. */
static int collect(json_object *config, const char *kind, const row *rows, size_t nrows, const row *fallback,
                   plist *out, char *err, size_t errlen) {
    json_object *service = reconcile_get_map(config, "service");
    json_object *section = reconcile_get_map(config, kind);
    json_object *seen = json_object_new_object();
    int rc = 0;
    if (!seen) return -2;
#define ONE(idv)                                                                                                   \
    do {                                                                                                           \
        const char *id_ = json_object_get_string(idv);                                                             \
        if (!json_object_is_type(idv, json_type_string) || json_object_object_get_ex(seen, id_, NULL)) break;      \
        json_object_object_add(seen, id_, NULL);                                                                   \
        rc = component(lookup(rows, nrows, fallback, id_), id_, reconcile_get(section, id_), out, err, errlen);  \
    } while (0)
    if (strcmp(kind, "extensions") == 0) {
        json_object *list = reconcile_get_arr(service, "extensions");
        for (size_t i = 0; list && i < json_object_array_length(list) && rc == 0; i++)
            ONE(json_object_array_get_idx(list, i));
    } else {
        json_object *pipes = reconcile_get_map(service, "pipelines");
        if (pipes) {
            json_object_object_foreach(pipes, pname, p) {
                json_object *list = reconcile_get_arr(p, kind);
                (void)pname;
                for (size_t i = 0; list && i < json_object_array_length(list) && rc == 0; i++)
                    ONE(json_object_array_get_idx(list, i));
                if (rc) break;
            }
        }
    }
#undef ONE
    json_object_put(seen);
    return rc;
}

static json_object *port_json(const char *name, const char *proto, const char *app, long port, long target) {
    json_object *o = json_object_new_object();
    if (name && *name) reconcile_obj_str(o, "name", name);
    if (proto && *proto) reconcile_obj_str(o, "protocol", proto);
    if (app && *app) reconcile_obj_str(o, "appProtocol", app);
    reconcile_obj_int(o, "port", port);
    if (target) reconcile_obj_int(o, "targetPort", target);
    return o;
}

static int spec_has_name(json_object *spec_ports, const char *name) {
    for (size_t j = 0; j < json_object_array_length(spec_ports); j++) {
        const char *sn = reconcile_get_str(json_object_array_get_idx(spec_ports, j), "name");
        if (sn && strcmp(sn, name) == 0) return 1;
    }
    return 0;
}

json_object *reconcile_service_ports(json_object *config, int which, int route, json_object *spec_ports,
                                     char *err, size_t errlen) {
    plist l = {0};
    json_object *out = NULL;
    int rc = 0;
    if (which & RECONCILE_PORTS_RECEIVERS)
        rc = collect(config, "receivers", receivers, NELEM(receivers), &generic, &l, err, errlen);
    if (!rc && (which & RECONCILE_PORTS_EXPORTERS))
        rc = collect(config, "exporters", exporters, NELEM(exporters), &none, &l, err, errlen);
    if (!rc && (which & RECONCILE_PORTS_EXTENSIONS))
        rc = collect(config, "extensions", extensions, NELEM(extensions), &none, &l, err, errlen);
    if (rc == -1) goto out;
    if (rc) goto oom;
    if (l.n) qsort(l.v, l.n, sizeof(sport), name_cmp);
    if (!(out = json_object_new_array())) goto oom;
    if (!json_object_is_type(spec_ports, json_type_array)) spec_ports = NULL;
    if (spec_ports) {
        for (size_t j = 0; j < json_object_array_length(spec_ports); j++) {
            json_object *sp = json_object_array_get_idx(spec_ports, j), *c = json_object_new_object();
            if (!json_object_is_type(sp, json_type_object)) {
                json_object_put(c);
                continue;
            }
            static const char *const keys[] = {"name", "protocol", "appProtocol", "port", "targetPort", "nodePort"};
            for (size_t k = 0; k < NELEM(keys); k++) reconcile_obj_copy(c, keys[k], reconcile_get(sp, keys[k]));
            reconcile_obj_push(out, c);
        }
    }
    for (size_t i = 0; i < l.n; i++) {
        sport *p = &l.v[i];
        const char *app = route && strcmp(p->app, "grpc") == 0 ? "h2c" : p->app;
        int drop = 0;
        for (size_t j = 0; spec_ports && j < json_object_array_length(spec_ports) && !drop; j++) {
            json_object *sp = json_object_array_get_idx(spec_ports, j);
            const char *sproto = reconcile_get_str(sp, "protocol");
            int64_t num;
            if (!reconcile_get_int(sp, "port", &num)) continue;
            drop = num == p->port && strcmp(sproto && *sproto ? sproto : "TCP", *p->proto ? p->proto : "TCP") == 0;
        }
        if (drop) continue;
        if (spec_ports && spec_has_name(spec_ports, p->name)) {
            char fb[32];
            snprintf(fb, sizeof(fb), "port-%ld", p->port);
            if (spec_has_name(spec_ports, fb)) continue;
            memcpy(p->name, fb, sizeof(fb));
        }
        reconcile_obj_push(out, port_json(p->name, p->proto, app, p->port, p->target));
    }
    if (reconcile_obj_oom()) goto oom;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
    json_object_put(out);
    out = NULL;
out:
    free(l.v);
    return out;
}
