/* tests/unit/test_collector.c - collector/ against reconcile.md 1.3, 2.5,
 * 3 and mutation.md 4.4-4.5 (port names, ports, defaults, probes, YAML). */
#include "collector/config.h"

#include "collector/defaults.h"
#include "collector/ports.h"
#include "collector/probes.h"
#include "kube/yaml.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/collector/"

static json_object *load(const char *file) {
    char *text = tu_read_file(file, NULL);
    json_object *o = tu_json(text);
    free(text);
    return o;
}

/* Container ports of config (JSON text) with spec.ports (JSON text or NULL),
 * compared as compact JSON text. */
static void check_ports(const char *config, const char *spec_ports, const char *want) {
    json_object *c = tu_json(config), *sp = spec_ports ? tu_json(spec_ports) : NULL;
    char err[256] = "";
    json_object *got = collector_container_ports(c, sp, err, sizeof(err));
    ck_assert_msg(got != NULL, "container ports failed: %s", err);
    char *s = tu_str(got);
    ck_assert_str_eq(s, want);
    free(s);
    json_object_put(got);
    json_object_put(sp);
    json_object_put(c);
}

static void check_ports_error(const char *config, const char *want_err) {
    json_object *c = tu_json(config);
    char err[256] = "";
    json_object *got = collector_container_ports(c, NULL, err, sizeof(err));
    ck_assert_ptr_null(got);
    ck_assert_str_eq(err, want_err);
    json_object_put(c);
}

/* A config whose only pipeline uses the given receivers and exporters. */
#define PIPE(rx, ex) \
    "\"service\":{\"pipelines\":{\"p\":{\"receivers\":[" rx "],\"exporters\":[" ex "]}}}"

#define METRICS "{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"}"

/* ---- port names (reconcile.md 3.2 examples) ---------------------------- */

START_TEST(port_names_otlp) {
    check_ports("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null,\"http\":null}}},"
                PIPE("\"otlp\"", "") "}",
                NULL,
                "[" METRICS ","
                "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-http\",\"containerPort\":4318,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(port_names_otlp2) {
    check_ports("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{}}},"
                "\"otlp/2\":{\"protocols\":{\"grpc\":{\"endpoint\":\"0.0.0.0:5317\"}}}},"
                PIPE("\"otlp\",\"otlp/2\"", "") "}",
                NULL,
                "[" METRICS ","
                "{\"name\":\"otlp-2-grpc\",\"containerPort\":5317,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(port_names_jaeger_all_protocols) {
    /* jaeger-thrift_http is 18 characters: port-<n>. */
    check_ports("{\"receivers\":{\"jaeger\":{\"protocols\":{\"grpc\":null,\"thrift_http\":null,"
                "\"thrift_compact\":null,\"thrift_binary\":{\"endpoint\":\"0.0.0.0:6832\"}}}},"
                PIPE("\"jaeger\"", "") "}",
                NULL,
                "[{\"name\":\"jaeger-grpc\",\"containerPort\":14250,\"protocol\":\"TCP\"},"
                METRICS ","
                "{\"name\":\"port-14268\",\"containerPort\":14268,\"protocol\":\"TCP\"},"
                "{\"name\":\"port-6831\",\"containerPort\":6831,\"protocol\":\"UDP\"},"
                "{\"name\":\"port-6832\",\"containerPort\":6832,\"protocol\":\"UDP\"}]");
}
END_TEST

START_TEST(port_names_15_chars_kept) {
    check_ports("{\"receivers\":{\"skywalking\":{\"protocols\":{\"grpc\":{},\"http\":{}}}},"
                PIPE("\"skywalking\"", "") "}",
                NULL,
                "[" METRICS ","
                "{\"name\":\"skywalking-grpc\",\"containerPort\":11800,\"protocol\":\"TCP\"},"
                "{\"name\":\"skywalking-http\",\"containerPort\":12800,\"protocol\":\"TCP\"}]");
    /* one character more is over the limit */
    check_ports("{\"receivers\":{\"skywalking/\":{\"protocols\":{\"grpc\":{}}}},"
                PIPE("\"skywalking/\"", "") "}",
                NULL,
                "[" METRICS ",{\"name\":\"port-11800\",\"containerPort\":11800,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(port_names_underscore_and_slash) {
    check_ports("{\"receivers\":{},\"exporters\":{\"prometheus/dev\":{\"endpoint\":\"0.0.0.0:9464\"}},"
                "\"extensions\":{\"health_check\":{}},"
                "\"service\":{\"extensions\":[\"health_check\"],"
                "\"pipelines\":{\"m\":{\"receivers\":[],\"exporters\":[\"prometheus/dev\"]}}}}",
                NULL,
                "[{\"name\":\"health-check\",\"containerPort\":13133,\"protocol\":\"TCP\"},"
                METRICS ","
                "{\"name\":\"prometheus-dev\",\"containerPort\":9464,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(port_names_invalid_dropped) {
    /* "Upper" passes PortName's regexp but not IsValidPortName (uppercase);
     * "bad." fails the regexp and becomes port-<n>. */
    check_ports("{\"receivers\":{\"Upper\":{\"endpoint\":\":1234\"},\"bad.\":{\"endpoint\":\":1235\"},"
                "\"we!rd\":{\"endpoint\":\":1236\"},\"big\":{\"endpoint\":\":70000\"}},"
                PIPE("\"Upper\",\"bad.\",\"we!rd\",\"big\"", "") "}",
                NULL,
                "[" METRICS ",{\"name\":\"port-1235\",\"containerPort\":1235,\"protocol\":\"TCP\"},"
                "{\"name\":\"port-1236\",\"containerPort\":1236,\"protocol\":\"TCP\"}]");
}
END_TEST

/* ---- known components ---------------------------------------------------- */

START_TEST(ports_single_receivers) {
    check_ports("{\"receivers\":{\"zipkin\":{},\"statsd\":{\"endpoint\":\"0.0.0.0:9125\"},"
                "\"awsxray\":null,\"fluent_forward\":{\"endpoint\":\"localhost\"}},"
                PIPE("\"zipkin\",\"statsd\",\"awsxray\",\"fluent_forward\"", "") "}",
                NULL,
                "[{\"name\":\"awsxray\",\"containerPort\":2000,\"protocol\":\"UDP\"},"
                "{\"name\":\"fluent-forward\",\"containerPort\":8006,\"protocol\":\"TCP\"},"
                METRICS ","
                "{\"name\":\"statsd\",\"containerPort\":9125,\"protocol\":\"UDP\"},"
                "{\"name\":\"zipkin\",\"containerPort\":9411,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(ports_prometheus_exporter_collides_with_metrics) {
    check_ports("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{}}}},\"exporters\":{\"prometheus\":{}},"
                PIPE("\"otlp\"", "\"prometheus\"") "}",
                NULL,
                "[" METRICS ","
                "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                "{\"name\":\"prometheus\",\"containerPort\":8888,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(ports_extensions) {
    check_ports("{\"receivers\":{},\"exporters\":{},"
                "\"extensions\":{\"health_check\":{\"endpoint\":\"0.0.0.0:8080\"},"
                "\"jaeger_query\":{\"http\":{\"endpoint\":\"0.0.0.0:16686\"},"
                "\"grpc\":{\"endpoint\":\"0.0.0.0:16685\"}},"
                "\"jaeger_query/same\":{\"grpc\":{\"endpoint\":\"0.0.0.0:16686\"}},"
                "\"pprof\":{\"endpoint\":\"0.0.0.0:1777\"},\"zpages\":{}},"
                "\"service\":{\"extensions\":[\"health_check\",\"jaeger_query\",\"pprof\",\"zpages\"],"
                "\"pipelines\":{}}}",
                NULL,
                "[{\"name\":\"health-check\",\"containerPort\":8080,\"protocol\":\"TCP\"},"
                "{\"name\":\"jaeger-query\",\"containerPort\":16686,\"protocol\":\"TCP\"},"
                "{\"name\":\"jaeger-query-2\",\"containerPort\":16685,\"protocol\":\"TCP\"},"
                METRICS "]");
}
END_TEST

START_TEST(ports_generic_and_never_exposed) {
    check_ports("{\"receivers\":{\"custom/a\":{\"endpoint\":\"0.0.0.0:7777\"},"
                "\"custom\":{\"listen_address\":\"0.0.0.0:7778\"},"
                "\"noport\":{\"endpoint\":\"localhost\"},"
                "\"nginx\":{\"endpoint\":\"http://localhost:80/status\"},"
                "\"k8s_cluster\":{\"endpoint\":\":81\"},\"filelog\":{},"
                "\"prometheus\":{\"api_server\":{\"enabled\":false,"
                "\"server_config\":{\"endpoint\":\"0.0.0.0:9090\"}}}},"
                PIPE("\"custom/a\",\"custom\",\"noport\",\"nginx\",\"k8s_cluster\",\"filelog\","
                     "\"prometheus\"", "") "}",
                NULL,
                "[{\"name\":\"custom\",\"containerPort\":7778,\"protocol\":\"TCP\"},"
                "{\"name\":\"custom-a\",\"containerPort\":7777,\"protocol\":\"TCP\"},"
                METRICS "]");
}
END_TEST

START_TEST(ports_prometheus_receiver_api_server) {
    check_ports("{\"receivers\":{\"prometheus/x\":{\"api_server\":{\"enabled\":true,"
                "\"server_config\":{\"endpoint\":\"0.0.0.0:9090\"}}}},"
                PIPE("\"prometheus/x\"", "") "}",
                NULL,
                "[" METRICS ",{\"name\":\"prometheus-x\",\"containerPort\":9090,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(ports_only_enabled_components) {
    /* Defined-but-unused components contribute nothing; a pipeline entry
     * with no definition still gets the default port, as in the reference. */
    check_ports("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{}}},\"zipkin\":{}},"
                "\"extensions\":{\"health_check\":{}},"
                PIPE("\"statsd\"", "") "}",
                NULL,
                "[" METRICS ",{\"name\":\"statsd\",\"containerPort\":8125,\"protocol\":\"UDP\"}]");
}
END_TEST

START_TEST(ports_endpoint_extraction_quirks) {
    /* The port after the last ':' of host:port: env-var hosts work, IPv6
     * literals give their port (not the reference's 1, spec 7.11), an
     * env-var port or ":0" falls back to the default. */
    check_ports("{\"receivers\":{\"otlp\":{\"protocols\":{"
                "\"grpc\":{\"endpoint\":\"${env:MY_POD_IP}:5317\"},"
                "\"http\":{\"endpoint\":\"0.0.0.0:${env:PORT}\"}}},"
                "\"otlp/v6\":{\"protocols\":{\"grpc\":{\"endpoint\":\"[::1]:4317\"},"
                "\"http\":{\"endpoint\":\"host:0\"}}}},"
                PIPE("\"otlp\",\"otlp/v6\"", "") "}",
                NULL,
                "[" METRICS ","
                "{\"name\":\"otlp-grpc\",\"containerPort\":5317,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-http\",\"containerPort\":4318,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-v6-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-v6-http\",\"containerPort\":4318,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(endpoint_port_parsing) {
    /* The port after the last ':' of host:port, brackets honoured. */
    ck_assert_int_eq(collector_endpoint_port("[::1]:4317"), 4317);
    ck_assert_int_eq(collector_endpoint_port("[::]:4317"), 4317);
    ck_assert_int_eq(collector_endpoint_port("0.0.0.0:4317"), 4317);
    ck_assert_int_eq(collector_endpoint_port(":4317"), 4317);
    ck_assert_int_eq(collector_endpoint_port("${env:POD_IP}:4317"), 4317);
    ck_assert_int_eq(collector_endpoint_port("[fd00::1]:5318"), 5318);
    ck_assert_int_eq(collector_endpoint_port("http://[fd00::1]:9411"), 9411);
    ck_assert_int_eq(collector_endpoint_port("http://[fd00::1]:9411/api/v2"), 9411);
    ck_assert_int_eq(collector_endpoint_port("http://0.0.0.0:9411"), 9411);
    ck_assert_int_eq(collector_endpoint_port("localhost:4317/v1"), 4317);
    ck_assert_int_eq(collector_endpoint_port("localhost:4317?next=http://x:1"), 4317);
    /* As before: trailing text after the digits is ignored. */
    ck_assert_int_eq(collector_endpoint_port("0.0.0.0:4317x"), 4317);
    /* As before: an env-var port or an unparsable value has no port, and
     * the caller uses the default. */
    ck_assert_int_eq(collector_endpoint_port("0.0.0.0:${env:PORT}"), 0);
    ck_assert_int_eq(collector_endpoint_port("${env:POD_IP}:${env:PORT}"), 0);
    ck_assert_int_eq(collector_endpoint_port("[::1]"), 0);
    ck_assert_int_eq(collector_endpoint_port("[::1]:"), 0);
    ck_assert_int_eq(collector_endpoint_port("[::]:${env:PORT}"), 0);
    ck_assert_int_eq(collector_endpoint_port("0.0.0.0"), 0);
    ck_assert_int_eq(collector_endpoint_port("host:"), 0);
    ck_assert_int_eq(collector_endpoint_port("host:abc"), 0);
    ck_assert_int_eq(collector_endpoint_port("host:0"), 0);
    ck_assert_int_eq(collector_endpoint_port("host:99999999999"), 0);
    ck_assert_int_eq(collector_endpoint_port("host:2147483647"), 2147483647);
    ck_assert_int_eq(collector_endpoint_port("host:2147483648"), 0);
    ck_assert_int_eq(collector_endpoint_port(""), 0);
    ck_assert_int_eq(collector_endpoint_port(NULL), 0);
}
END_TEST

START_TEST(ports_ipv6_endpoints) {
    /* The sidecar's container ports and probes read the same parser. */
    json_object *spec = tu_json(
        "{\"config\":{\"receivers\":{"
        "\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\"[::1]:4317\"},"
        "\"http\":{\"endpoint\":\"[::]:4319\"}}},"
        "\"zipkin\":{\"endpoint\":\"${env:POD_IP}:9412\"},"
        "\"statsd\":{\"endpoint\":\":8126\"},"
        "\"jaeger\":{\"protocols\":{\"grpc\":{\"endpoint\":\"0.0.0.0:14251\"},"
        "\"thrift_http\":{\"endpoint\":\"[::]:${env:PORT}\"}}}},"
        "\"extensions\":{\"health_check\":{\"endpoint\":\"[::]:13134\"},"
        "\"jaeger_query\":{\"http\":{\"endpoint\":\"[::1]:16687\"},"
        "\"grpc\":{\"endpoint\":\"[::1]:16685\"}}},"
        "\"service\":{\"extensions\":[\"health_check\",\"jaeger_query\"],"
        "\"pipelines\":{\"p\":{\"receivers\":[\"otlp\",\"zipkin\",\"statsd\",\"jaeger\"]}}}}}");
    json_object *config = json_object_object_get(spec, "config"), *ports, *l = NULL;
    char err[256] = "", *s;
    ports = collector_container_ports(config, NULL, err, sizeof(err));
    ck_assert_msg(ports != NULL, "%s", err);
    s = tu_str(ports);
    ck_assert_str_eq(s, "[{\"name\":\"health-check\",\"containerPort\":13134,\"protocol\":\"TCP\"},"
                        "{\"name\":\"jaeger-grpc\",\"containerPort\":14251,\"protocol\":\"TCP\"},"
                        "{\"name\":\"jaeger-query\",\"containerPort\":16687,\"protocol\":\"TCP\"},"
                        "{\"name\":\"jaeger-query-2\",\"containerPort\":16685,\"protocol\":\"TCP\"},"
                        METRICS ","
                        "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                        "{\"name\":\"otlp-http\",\"containerPort\":4319,\"protocol\":\"TCP\"},"
                        "{\"name\":\"port-14268\",\"containerPort\":14268,\"protocol\":\"TCP\"},"
                        "{\"name\":\"statsd\",\"containerPort\":8126,\"protocol\":\"UDP\"},"
                        "{\"name\":\"zipkin\",\"containerPort\":9412,\"protocol\":\"TCP\"}]");
    free(s);
    json_object_put(ports);
    collector_probes(spec, &l, NULL, NULL);
    ck_assert_ptr_nonnull(l);
    s = tu_str(l);
    ck_assert_str_eq(s, "{\"httpGet\":{\"path\":\"/\",\"port\":13134}}");
    free(s);
    json_object_put(l);
    json_object_put(spec);
}
END_TEST

START_TEST(defaults_ipv6_listen_address) {
    /* An empty endpoint takes the listen_address port: IPv6 included. */
    json_object *c = tu_json("{\"receivers\":{\"otlp\":{\"protocols\":{"
                             "\"grpc\":{\"listen_address\":\"[::1]:5317\"}}}},"
                             PIPE("\"otlp\"", "") "}");
    char err[256] = "";
    ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), 0);
    ck_assert_str_eq(json_object_get_string(json_object_object_get(
                         json_object_object_get(json_object_object_get(json_object_object_get(
                             json_object_object_get(c, "receivers"), "otlp"), "protocols"), "grpc"),
                         "endpoint")),
                     "0.0.0.0:5317");
    json_object_put(c);
}
END_TEST

START_TEST(component_ports_columns) {
    /* The typed view: unsorted, unvalidated, with the Service columns. */
    json_object *c = tu_json("{\"receivers\":{\"otlp\":{\"protocols\":{\"http\":{\"endpoint\":\"[::]:4319\"},"
                             "\"grpc\":null}},\"zipkin\":{},\"myrx\":{\"endpoint\":\"h:70000\"},"
                             "\"awsxray\":{}},"
                             "\"exporters\":{\"prometheus\":{}},\"extensions\":{\"health_check\":{},"
                             "\"jaeger_query\":{}},"
                             "\"service\":{\"extensions\":[\"jaeger_query\",\"health_check\"],"
                             "\"pipelines\":{\"p\":{\"receivers\":[\"otlp\",\"zipkin\",\"myrx\",\"awsxray\"],"
                             "\"exporters\":[\"prometheus\"]}}}}");
    static const struct {
        const char *name;
        int port;
        const char *proto, *app;
        int target;
    } want[] = {
        {"otlp-http", 4319, "", "http", 4319}, {"otlp-grpc", 4317, "", "grpc", 4317},
        {"zipkin", 9411, "TCP", "http", 9411}, {"myrx", 70000, "", "", 0},
        {"awsxray", 2000, "UDP", "", 2000},    {"prometheus", 8888, "", "", 0},
        {"jaeger-query", 16686, "", "", 16686}, {"health-check", 13133, "", "", 0},
    };
    collector_ports l;
    char err[256] = "";
    ck_assert_int_eq(collector_component_ports(c, COLLECTOR_LISTENERS, &l, err, sizeof(err)), 0);
    ck_assert_uint_eq(l.n, sizeof(want) / sizeof(want[0]));
    for (size_t i = 0; i < l.n; i++) {
        ck_assert_str_eq(l.v[i].name, want[i].name);
        ck_assert_int_eq(l.v[i].port, want[i].port);
        ck_assert_str_eq(l.v[i].protocol, want[i].proto);
        ck_assert_str_eq(l.v[i].app_protocol, want[i].app);
        ck_assert_int_eq(l.v[i].target_port, want[i].target);
    }
    collector_ports_free(&l);
    /* Only the kinds asked for; a receiver's build error is not an
     * extension Service's. */
    ck_assert_int_eq(collector_component_ports(c, COLLECTOR_EXPORTERS, &l, err, sizeof(err)), 0);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.v[0].name, "prometheus");
    collector_ports_free(&l);
    json_object_put(c);
    c = tu_json("{\"receivers\":{\"tcp_log\":{}},\"extensions\":{\"health_check\":{}},"
                "\"service\":{\"extensions\":[\"health_check\"],\"pipelines\":{\"p\":{\"receivers\":[\"tcp_log\"]}}}}");
    ck_assert_int_eq(collector_component_ports(c, COLLECTOR_LISTENERS, &l, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "receiver tcp_log: port should not be empty");
    ck_assert_ptr_null(l.v);
    ck_assert_uint_eq(l.n, 0);
    ck_assert_int_eq(collector_component_ports(c, COLLECTOR_EXTENSIONS, &l, err, sizeof(err)), 0);
    ck_assert_uint_eq(l.n, 1);
    ck_assert_str_eq(l.v[0].name, "health-check");
    collector_ports_free(&l);
    json_object_put(c);
}
END_TEST

START_TEST(ports_tcplog_udplog) {
    check_ports("{\"receivers\":{\"tcp_log\":{\"listen_address\":\"0.0.0.0:54525\"},"
                "\"udplog/x\":{\"listen_address\":\"0.0.0.0:54526\"}},"
                PIPE("\"tcp_log\",\"udplog/x\"", "") "}",
                NULL,
                "[" METRICS ","
                "{\"name\":\"tcp-log\",\"containerPort\":54525,\"protocol\":\"TCP\"},"
                "{\"name\":\"udplog-x\",\"containerPort\":54526,\"protocol\":\"UDP\"}]");
    check_ports_error("{\"receivers\":{\"tcp_log\":{}}," PIPE("\"tcp_log\"", "") "}",
                      "receiver tcp_log: port should not be empty");
}
END_TEST

START_TEST(ports_unknown_protocol) {
    check_ports_error("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{},\"websocket\":{}}}},"
                      PIPE("\"otlp\"", "") "}",
                      "unknown protocol set: websocket");
}
END_TEST

START_TEST(ports_sidecar_appendix_a2) {
    json_object *spec = load(DATA "sidecar-a2.json");
    json_object *config = json_object_object_get(spec, "config");
    const char *want = "[{\"name\":\"jaeger-grpc\",\"containerPort\":14250,\"protocol\":\"TCP\"},"
                       "{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"}]";
    char err[256] = "";
    for (int pass = 0; pass < 2; pass++) {
        json_object *ports = collector_container_ports(
            config, json_object_object_get(spec, "ports"), err, sizeof(err));
        ck_assert_msg(ports != NULL, "%s", err);
        char *s = tu_str(ports);
        ck_assert_str_eq(s, want);
        free(s);
        json_object_put(ports);
        /* same answer once the webhook defaults are in */
        ck_assert_int_eq(collector_default_config(config, err, sizeof(err)), 0);
    }
    json_object *l = (json_object *)1, *r = (json_object *)1, *st = (json_object *)1;
    collector_probes(spec, &l, &r, &st);
    ck_assert_ptr_null(l);
    ck_assert_ptr_null(r);
    ck_assert_ptr_null(st);
    json_object_put(spec);
}
END_TEST

/* ---- spec.ports (reconcile.md 3.4 step 4) -------------------------------- */

#define OTLP_BOTH \
    "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{},\"http\":{}}}}," PIPE("\"otlp\"", "") "}"

START_TEST(spec_ports_merge) {
    check_ports(OTLP_BOTH,
                "[{\"name\":\"otlp-grpc\",\"port\":9999,\"protocol\":\"TCP\"},"
                "{\"name\":\"custom-http\",\"port\":4318},"
                "{\"name\":\"custom-http\",\"port\":5000,\"hostPort\":5000},"
                "{\"name\":\"syslog\",\"port\":8888,\"protocol\":\"UDP\"}]",
                /* otlp-grpc renamed (name clash), otlp-http dropped (4318/TCP
                 * clash, absent protocol = TCP), duplicate spec name renamed,
                 * metrics kept (8888/UDP is another port). */
                "[{\"name\":\"custom-http\",\"containerPort\":4318,\"protocol\":\"TCP\"},"
                METRICS ","
                "{\"name\":\"otlp-grpc\",\"containerPort\":9999,\"protocol\":\"TCP\"},"
                "{\"name\":\"port-4317\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                "{\"name\":\"port-5000\",\"containerPort\":5000,\"protocol\":\"TCP\",\"hostPort\":5000},"
                "{\"name\":\"syslog\",\"containerPort\":8888,\"protocol\":\"UDP\"}]");
}
END_TEST

START_TEST(spec_ports_rename_blocked_drops) {
    check_ports(OTLP_BOTH,
                "[{\"name\":\"otlp-grpc\",\"port\":1},{\"name\":\"port-4317\",\"port\":2},"
                "{\"name\":\"metrics\",\"port\":9090}]",
                "[{\"name\":\"metrics\",\"containerPort\":9090,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-grpc\",\"containerPort\":1,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-http\",\"containerPort\":4318,\"protocol\":\"TCP\"},"
                "{\"name\":\"port-4317\",\"containerPort\":2,\"protocol\":\"TCP\"},"
                "{\"name\":\"port-8888\",\"containerPort\":8888,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(spec_ports_duplicate_names) {
    /* the third port's fallback name is taken by the second: dropped */
    check_ports("{}",
                "[{\"name\":\"a\",\"port\":1},{\"name\":\"port-2\",\"port\":3},"
                "{\"name\":\"a\",\"port\":2},{\"port\":4,\"protocol\":\"SCTP\"}]",
                "[{\"containerPort\":4,\"protocol\":\"SCTP\"},"
                "{\"name\":\"a\",\"containerPort\":1,\"protocol\":\"TCP\"},"
                METRICS ","
                "{\"name\":\"port-2\",\"containerPort\":3,\"protocol\":\"TCP\"}]");
}
END_TEST

START_TEST(spec_ports_empty_is_ignored) {
    check_ports(OTLP_BOTH, "[]",
                "[" METRICS ","
                "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                "{\"name\":\"otlp-http\",\"containerPort\":4318,\"protocol\":\"TCP\"}]");
}
END_TEST

/* ---- metrics port (reconcile.md 3.3) -------------------------------------- */

static void check_metrics(const char *telemetry, int want, const char *want_err) {
    char buf[1024], err[256] = "";
    snprintf(buf, sizeof(buf), "{\"service\":{\"telemetry\":%s}}", telemetry);
    json_object *c = tu_json(buf);
    ck_assert_int_eq(collector_metrics_port(c, err, sizeof(err)), want);
    if (want_err) ck_assert_str_eq(err, want_err);
    json_object_put(c);
}

START_TEST(metrics_port_sources) {
    check_metrics("null", 8888, NULL);
    check_metrics("{\"metrics\":{\"address\":\"0.0.0.0:9999\"}}", 9999, NULL);
    check_metrics("{\"metrics\":{\"address\":\"localhost\"}}", 8888, NULL);
    check_metrics("{\"metrics\":{\"address\":\"${env:POD_IP}\"}}", 8888, NULL);
    check_metrics("{\"metrics\":{\"address\":\"${env:POD_IP}:7070\"}}", 7070, NULL);
    check_metrics("{\"metrics\":{\"readers\":[{\"periodic\":{}},"
                  "{\"pull\":{\"exporter\":{\"prometheus\":{\"host\":\"0.0.0.0\",\"port\":9090}}}}]}}",
                  9090, NULL);
    check_metrics("{\"metrics\":{\"readers\":[{\"pull\":{\"exporter\":{\"prometheus\":{}}}}]}}", 8888,
                  NULL);
    /* readers win over an address */
    check_metrics("{\"metrics\":{\"address\":\":1111\",\"readers\":"
                  "[{\"pull\":{\"exporter\":{\"prometheus\":{\"port\":2222}}}}]}}",
                  2222, NULL);
    check_metrics("{\"metrics\":{\"address\":\"0.0.0.0:${env:PORT}\"}}", -1,
                  "couldn't determine metrics port from configuration: 0.0.0.0:${env:PORT}");
    check_metrics("{\"metrics\":{\"address\":\"0.0.0.0:99999999999\"}}", -1,
                  "couldn't determine metrics port from configuration: 0.0.0.0:99999999999");
    check_metrics("{\"metrics\":{\"readers\":[{\"pull\":{\"exporter\":{\"prometheus\":{\"port\":70000}}}}]}}",
                  -1, "invalid prometheus metrics port: 70000");
    /* errors stay on one line */
    check_metrics("{\"metrics\":{\"address\":\"a\\nb:${env:X}\"}}", -1,
                  "couldn't determine metrics port from configuration: a b:${env:X}");
}
END_TEST

START_TEST(metrics_port_in_container_ports) {
    check_ports("{\"receivers\":{},\"service\":{\"telemetry\":{\"metrics\":{\"address\":\":9100\"}},"
                "\"pipelines\":{}}}",
                NULL, "[{\"name\":\"metrics\",\"containerPort\":9100,\"protocol\":\"TCP\"}]");
    check_ports("{\"service\":{\"telemetry\":{\"metrics\":{\"readers\":"
                "[{\"pull\":{\"exporter\":{\"prometheus\":{\"port\":9464}}}}]}}}}",
                NULL, "[{\"name\":\"metrics\",\"containerPort\":9464,\"protocol\":\"TCP\"}]");
    /* As the reference's container: an undeterminable port falls back to 8888. */
    check_ports("{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\":${env:P}\"}}}}", NULL,
                "[{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"}]");
}
END_TEST

/* ---- defaulting (reconcile.md 1.3) ---------------------------------------- */

START_TEST(defaults_typical_config) {
    json_object *c = load(DATA "typical.json"), *want = load(DATA "typical.defaulted.json");
    char err[256] = "";
    char *w = tu_str(want);
    ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), 0);
    char *once = tu_str(c);
    ck_assert_str_eq(once, w);
    /* idempotent */
    ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), 0);
    char *twice = tu_str(c);
    ck_assert_str_eq(twice, w);
    /* and the ports it implies */
    json_object *ports = collector_container_ports(c, NULL, err, sizeof(err));
    ck_assert_ptr_nonnull(ports);
    char *p = tu_str(ports);
    ck_assert_str_eq(p, "[{\"name\":\"health-check\",\"containerPort\":13133,\"protocol\":\"TCP\"},"
                        "{\"name\":\"jaeger-query\",\"containerPort\":16686,\"protocol\":\"TCP\"},"
                        "{\"name\":\"jaeger-query-2\",\"containerPort\":16685,\"protocol\":\"TCP\"},"
                        METRICS ","
                        "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
                        "{\"name\":\"otlp-http\",\"containerPort\":4318,\"protocol\":\"TCP\"},"
                        "{\"name\":\"port-6831\",\"containerPort\":6831,\"protocol\":\"UDP\"},"
                        "{\"name\":\"prometheus\",\"containerPort\":8888,\"protocol\":\"TCP\"},"
                        "{\"name\":\"zipkin\",\"containerPort\":9411,\"protocol\":\"TCP\"}]");
    free(p);
    free(once);
    free(twice);
    free(w);
    json_object_put(ports);
    json_object_put(want);
    json_object_put(c);
}
END_TEST

static void check_defaults(const char *in, const char *want) {
    json_object *c = tu_json(in);
    char err[256] = "";
    ck_assert_msg(collector_default_config(c, err, sizeof(err)) == 0, "%s", err);
    char *s = tu_str(c);
    ck_assert_str_eq(s, want);
    free(s);
    json_object_put(c);
}

#define READER "{\"pull\":{\"exporter\":{\"prometheus\":{\"host\":\"0.0.0.0\",\"port\":8888}}}}"

START_TEST(defaults_telemetry) {
    /* merged into existing telemetry/metrics maps */
    check_defaults("{\"service\":{\"telemetry\":{\"logs\":{\"level\":\"debug\"},"
                   "\"metrics\":{\"level\":\"detailed\",\"readers\":[]}}}}",
                   "{\"service\":{\"telemetry\":{\"logs\":{\"level\":\"debug\"},"
                   "\"metrics\":{\"level\":\"detailed\",\"readers\":[" READER "]}}}}");
    check_defaults("{\"service\":{\"telemetry\":{\"metrics\":null}}}",
                   "{\"service\":{\"telemetry\":{\"metrics\":{\"readers\":[" READER "]}}}}");
    /* an address or readers: left alone */
    check_defaults("{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\"0.0.0.0:9999\"}}}}",
                   "{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\"0.0.0.0:9999\"}}}}");
    check_defaults("{\"service\":{\"telemetry\":{\"metrics\":{\"readers\":[{\"periodic\":{}}]}}}}",
                   "{\"service\":{\"telemetry\":{\"metrics\":{\"readers\":[{\"periodic\":{}}]}}}}");
    /* a shape we do not understand is not overwritten */
    check_defaults("{\"service\":{\"telemetry\":\"none\"}}", "{\"service\":{\"telemetry\":\"none\"}}");
}
END_TEST

START_TEST(defaults_endpoints) {
    check_defaults(
        "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\"\"},"
        "\"http\":{\"listen_address\":\"0.0.0.0:5555\"}}},"
        "\"otlp/keep\":{\"protocols\":{\"grpc\":{\"endpoint\":\"localhost:4317\"},"
        "\"http\":{\"endpoint\":\"localhost\"}}},"
        "\"otlp/none\":null,\"zipkin\":{\"endpoint\":\"9412\"},\"tcp_log\":{},\"custom\":{},"
        "\"nginx\":{}},"
        "\"exporters\":{\"prometheus\":null,\"otlp\":{}},"
        "\"extensions\":{\"health_check\":{\"path\":\"\",\"endpoint\":\":8080\"},"
        "\"jaeger_query\":{\"http\":{\"endpoint\":\"localhost:1\"}},\"pprof\":null},"
        "\"service\":{\"extensions\":[\"health_check\",\"jaeger_query\",\"pprof\"],"
        "\"telemetry\":{\"metrics\":{\"address\":\":8888\"}},"
        "\"pipelines\":{\"t\":{\"receivers\":[\"otlp\",\"otlp/keep\",\"otlp/none\",\"zipkin\","
        "\"tcp_log\",\"custom\",\"nginx\",\"carbon\"],\"exporters\":[\"prometheus\",\"otlp\"]}}}}",
        "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\"0.0.0.0:4317\"},"
        "\"http\":{\"listen_address\":\"0.0.0.0:5555\",\"endpoint\":\"0.0.0.0:5555\"}}},"
        "\"otlp/keep\":{\"protocols\":{\"grpc\":{\"endpoint\":\"localhost:4317\"},"
        "\"http\":{\"endpoint\":\"localhost\"}}},"
        "\"otlp/none\":{\"protocols\":{}},\"zipkin\":{\"endpoint\":\"0.0.0.0:9412\"},\"tcp_log\":{},\"custom\":{},"
        "\"nginx\":{},\"carbon\":{\"endpoint\":\"0.0.0.0:2003\"}},"
        "\"exporters\":{\"prometheus\":{\"endpoint\":\"0.0.0.0:8888\"},\"otlp\":{}},"
        "\"extensions\":{\"health_check\":{\"path\":\"/\",\"endpoint\":\"0.0.0.0:8080\"},"
        "\"jaeger_query\":{\"http\":{\"endpoint\":\"localhost:1\"}},\"pprof\":null},"
        "\"service\":{\"extensions\":[\"health_check\",\"jaeger_query\",\"pprof\"],"
        "\"telemetry\":{\"metrics\":{\"address\":\":8888\"}},"
        "\"pipelines\":{\"t\":{\"receivers\":[\"otlp\",\"otlp/keep\",\"otlp/none\",\"zipkin\","
        "\"tcp_log\",\"custom\",\"nginx\",\"carbon\"],\"exporters\":[\"prometheus\",\"otlp\"]}}}}");
}
END_TEST

START_TEST(defaults_disabled_components_untouched) {
    /* nothing enabled: only the telemetry reader is added */
    check_defaults("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null}}},"
                   "\"extensions\":{\"health_check\":null},\"service\":{\"pipelines\":{}}}",
                   "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null}}},"
                   "\"extensions\":{\"health_check\":null},\"service\":{\"pipelines\":{},"
                   "\"telemetry\":{\"metrics\":{\"readers\":[" READER "]}}}}");
}
END_TEST

START_TEST(defaults_unknown_protocol_is_an_error) {
    const char *in = "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null,\"websocket\":{}}}},"
                     PIPE("\"otlp\"", "") "}";
    json_object *c = tu_json(in);
    char *before = tu_str(c), err[256] = "";
    ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "unknown protocol set: websocket");
    char *after = tu_str(c);
    ck_assert_str_eq(after, before); /* nothing half-applied */
    free(before);
    free(after);
    json_object_put(c);

    json_object *arr = tu_json("[]");
    ck_assert_int_eq(collector_default_config(arr, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "config is not an object");
    ck_assert_int_eq(collector_default_config(NULL, err, sizeof(err)), -1);
    json_object_put(arr);
}
END_TEST

/* ---- probes (reconcile.md 2.5.4) ----------------------------------------- */

static void probes_str(const char *spec, char **l, char **r, char **s) {
    json_object *sp = tu_json(spec), *lo, *ro, *so;
    collector_probes(sp, &lo, &ro, &so);
    *l = lo ? tu_str(lo) : NULL;
    *r = ro ? tu_str(ro) : NULL;
    *s = so ? tu_str(so) : NULL;
    json_object_put(lo);
    json_object_put(ro);
    json_object_put(so);
    json_object_put(sp);
}

START_TEST(probes_defaults) {
    char *l, *r, *s;
    probes_str("{\"config\":{\"extensions\":{\"health_check\":null},"
               "\"service\":{\"extensions\":[\"health_check\"]}}}",
               &l, &r, &s);
    const char *want = "{\"httpGet\":{\"path\":\"/\",\"port\":13133}}";
    ck_assert_str_eq(l, want);
    ck_assert_str_eq(r, want);
    ck_assert_str_eq(s, want);
    free(l);
    free(r);
    free(s);
}
END_TEST

START_TEST(probes_overrides) {
    char *l, *r, *s;
    probes_str("{\"config\":{\"extensions\":{\"health_check/x\":{\"endpoint\":\"0.0.0.0:8080\","
               "\"path\":\"/health/status\"}},\"service\":{\"extensions\":[\"pprof\",\"health_check/x\"]}},"
               "\"livenessProbe\":{\"initialDelaySeconds\":10,\"periodSeconds\":5,\"failureThreshold\":3,"
               "\"successThreshold\":1,\"timeoutSeconds\":2,\"terminationGracePeriodSeconds\":30},"
               "\"readinessProbe\":{},"
               "\"startupProbe\":{\"failureThreshold\":30,\"periodSeconds\":0,"
               "\"terminationGracePeriodSeconds\":0,\"timeoutSeconds\":\"x\"}}",
               &l, &r, &s);
    ck_assert_str_eq(l, "{\"httpGet\":{\"path\":\"/health/status\",\"port\":8080},"
                        "\"initialDelaySeconds\":10,\"timeoutSeconds\":2,\"periodSeconds\":5,"
                        "\"successThreshold\":1,\"failureThreshold\":3,"
                        "\"terminationGracePeriodSeconds\":30}");
    ck_assert_str_eq(r, "{\"httpGet\":{\"path\":\"/health/status\",\"port\":8080}}");
    ck_assert_str_eq(s, "{\"httpGet\":{\"path\":\"/health/status\",\"port\":8080},"
                        "\"failureThreshold\":30,\"terminationGracePeriodSeconds\":0}");
    free(l);
    free(r);
    free(s);
}
END_TEST

START_TEST(probes_absent) {
    static const char *const specs[] = {
        /* defined but not enabled */
        "{\"config\":{\"extensions\":{\"health_check\":{}},\"service\":{\"extensions\":[\"pprof\"]}}}",
        /* no extensions map */
        "{\"config\":{\"service\":{\"extensions\":[\"health_check\"]}}}",
        "{\"config\":null}",
        "{}",
        "[]",
    };
    for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
        char *l, *r, *s;
        probes_str(specs[i], &l, &r, &s);
        ck_assert_ptr_null(l);
        ck_assert_ptr_null(r);
        ck_assert_ptr_null(s);
    }
    /* NULL out-pointers are allowed */
    json_object *sp = tu_json("{\"config\":{\"extensions\":{},\"service\":{\"extensions\":[\"health_check\"]}}}");
    json_object *lo;
    collector_probes(sp, &lo, NULL, NULL);
    ck_assert_ptr_nonnull(lo);
    json_object_put(lo);
    json_object_put(sp);
}
END_TEST

/* ---- YAML ------------------------------------------------------------------ */

START_TEST(yaml_key_order) {
    json_object *in = load(DATA "realistic.json"), *ordered = load(DATA "realistic.ordered.json");
    char *before = tu_str(in);
    char *got = collector_config_yaml(in);
    static const kube_yaml_style goccy = {2, 0, KUBE_YAML_QUOTE_GO_YAML, 0};
    char *want = kube_yaml_emit_style(ordered, &goccy);
    ck_assert_ptr_nonnull(got);
    ck_assert_ptr_nonnull(want);
    ck_assert_str_eq(got, want);
    /* and the exact text, as the reference (goccy/go-yaml) writes it:
     * 0.0.0.0:4317 plain (managed-reconcile/02-assert.yaml) */
    char *text = tu_read_file(DATA "realistic.yaml", NULL);
    ck_assert_str_eq(got, text);
    free(text);
    char *after = tu_str(in);
    ck_assert_str_eq(after, before); /* input untouched */
    free(got);
    free(want);
    free(before);
    free(after);
    json_object_put(in);
    json_object_put(ordered);
}
END_TEST

START_TEST(yaml_odd_inputs) {
    char *s = collector_config_yaml(NULL);
    ck_assert_ptr_nonnull(s);
    free(s);
    json_object *o = tu_json("[{\"b\":1,\"a\":2},\"x\",null]");
    s = collector_config_yaml(o);
    json_object *want = tu_json("[{\"a\":2,\"b\":1},\"x\",null]");
    char *w = kube_yaml_emit(want);
    ck_assert_str_eq(s, w);
    free(s);
    free(w);
    json_object_put(want);
    json_object_put(o);
}
END_TEST

START_TEST(yaml_depth_limit) {
    /* Hostile nesting is refused instead of recursing without bound. */
    json_object *root = json_object_new_object(), *o = root;
    for (int i = 0; i < 1500; i++) {
        json_object *c = json_object_new_array();
        json_object *m = json_object_new_object();
        json_object_array_add(c, m);
        json_object_object_add(o, "k", c);
        o = m;
    }
    ck_assert_ptr_null(collector_config_yaml(root));
    /* freeing the tree recursion is json-c's; keep it shallow enough */
    json_object_put(root);
}
END_TEST

/* ---- robustness: nothing crashes on arbitrary shapes ---------------------- */

static void run_all(json_object *config, json_object *spec) {
    char err[64];
    json_object *p = collector_container_ports(config, json_object_object_get(spec, "ports"),
                                                     err, sizeof(err));
    json_object_put(p);
    (void)collector_metrics_port(config, err, sizeof(err));
    json_object *l, *r, *s;
    collector_probes(spec, &l, &r, &s);
    json_object_put(l);
    json_object_put(r);
    json_object_put(s);
    free(collector_config_yaml(config));
    (void)collector_default_config(config, err, sizeof(err));
    (void)collector_default_config(config, err, 1); /* tiny buffer */
    p = collector_container_ports(config, NULL, NULL, 0);
    json_object_put(p);
}

START_TEST(robust_fixed_shapes) {
    static const char *const configs[] = {
        NULL, "[]", "{}",
        "{\"receivers\":1,\"exporters\":[],\"extensions\":\"x\",\"service\":1}",
        "{\"service\":{\"pipelines\":[1,2]}}",
        "{\"service\":{\"pipelines\":{\"a\":1,\"b\":null,\"c\":{\"receivers\":\"otlp\"}}}}",
        "{\"service\":{\"pipelines\":{\"a\":{\"receivers\":[1,null,{},\"otlp\",\"otlp\"]}},"
        "\"extensions\":{\"a\":1}},\"receivers\":{\"otlp\":{\"protocols\":[1]}}}",
        "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":1,\"http\":\"x\"}},\"zipkin\":1,"
        "\"jaeger\":[]},\"exporters\":{\"prometheus\":\"x\"},\"extensions\":{\"health_check\":1,"
        "\"jaeger_query\":{\"http\":1,\"grpc\":1}},\"service\":{\"extensions\":[\"health_check\","
        "\"jaeger_query\",7],\"telemetry\":{\"metrics\":{\"address\":5,\"readers\":{}}},"
        "\"pipelines\":{\"p\":{\"receivers\":[\"otlp\",\"zipkin\",\"jaeger\",\"\",\"/\"],"
        "\"exporters\":[\"prometheus\"]}}}}",
        "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\":\"},\"http\":"
        "{\"endpoint\":\":99999999999999999999\"}}}},\"service\":{\"telemetry\":{\"metrics\":"
        "{\"readers\":[1,{\"pull\":1},{\"pull\":{\"exporter\":{\"prometheus\":{\"port\":\"x\"}}}}]}},"
        "\"pipelines\":{\"p\":{\"receivers\":[\"otlp\"]}}}}",
        "{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\":${\\n}\"}}}}",
        "{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\":${}\"}}}}",
        "{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\"}\"}}}}",
        "{\"service\":{\"telemetry\":{\"metrics\":{\"address\":\":\"}}}}",
    };
    static const char *const specs[] = {
        NULL,
        "{\"ports\":[1,null,{\"port\":\"x\"},{\"name\":1,\"port\":1e3},{\"port\":99999999999},"
        "{\"name\":\"a\",\"port\":5,\"hostPort\":\"x\",\"protocol\":7},{\"name\":\"a\",\"port\":5}],"
        "\"livenessProbe\":1,\"readinessProbe\":{\"periodSeconds\":1e9,\"initialDelaySeconds\":"
        "99999999999},\"config\":{\"extensions\":{\"health_check\":[]},\"service\":{\"extensions\":"
        "[\"health_check\"]}}}",
        "{\"ports\":{},\"config\":1}",
    };
    for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++)
        for (size_t j = 0; j < sizeof(specs) / sizeof(specs[0]); j++) {
            json_object *c = configs[i] ? tu_json(configs[i]) : NULL;
            json_object *s = specs[j] ? tu_json(specs[j]) : NULL;
            run_all(c, s);
            json_object_put(c);
            json_object_put(s);
        }
    /* scalars as the whole config or spec */
    json_object *scalars[] = {json_object_new_int(1), json_object_new_string("x"),
                              json_object_new_boolean(1), json_object_new_double(1.5)};
    for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
        run_all(scalars[i], scalars[i]);
        json_object_put(scalars[i]);
    }
}
END_TEST

/* Random trees over the vocabulary the code looks for, so that the walks
 * reach deep into the config with every type at every position. */
static unsigned long rng_state = 42;
static unsigned rnd(unsigned n) {
    rng_state = rng_state * 6364136223846793005UL + 1442695040888963407UL;
    return (unsigned)((rng_state >> 33) % n);
}

static const char *const vocab[] = {
    "receivers", "exporters", "extensions", "service", "pipelines", "telemetry", "metrics",
    "readers", "pull", "exporter", "prometheus", "port", "address", "endpoint",
    "listen_address", "protocols", "grpc", "http", "thrift_compact", "otlp", "otlp/2",
    "jaeger", "zipkin", "tcp_log", "health_check", "jaeger_query", "path", "api_server",
    "enabled", "server_config", "config", "ports", "livenessProbe", "name", "hostPort",
    "protocol", "periodSeconds", "terminationGracePeriodSeconds"};
#define NVOCAB (sizeof(vocab) / sizeof(vocab[0]))

static json_object *rand_tree(int depth) {
    static const char *const strs[] = {"", ":", ":4317", "0.0.0.0:1", "${env:X}:${env:Y}",
                                       "otlp", "health_check", "jaeger", "UDP", "TCP"};
    switch (depth > 5 ? rnd(4) : rnd(7)) {
    case 0: return NULL;
    case 1: return json_object_new_int((int)rnd(70000) - 2);
    case 2: return json_object_new_string(strs[rnd(sizeof(strs) / sizeof(strs[0]))]);
    case 3: return json_object_new_boolean(rnd(2));
    case 4: case 5: {
        json_object *o = json_object_new_object();
        for (unsigned i = rnd(5); i > 0; i--)
            json_object_object_add(o, vocab[rnd(NVOCAB)], rand_tree(depth + 1));
        return o;
    }
    default: {
        json_object *a = json_object_new_array();
        for (unsigned i = rnd(4); i > 0; i--)
            json_object_array_add(a, rnd(2) ? json_object_new_string(vocab[rnd(NVOCAB)])
                                            : rand_tree(depth + 1));
        return a;
    }
    }
}

START_TEST(robust_random_trees) {
    for (int i = 0; i < 3000; i++) {
        json_object *c = rand_tree(0), *s = rand_tree(0);
        run_all(c, s);
        json_object_put(c);
        json_object_put(s);
    }
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("collector");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, port_names_otlp);
    tcase_add_test(tc, port_names_otlp2);
    tcase_add_test(tc, port_names_jaeger_all_protocols);
    tcase_add_test(tc, port_names_15_chars_kept);
    tcase_add_test(tc, port_names_underscore_and_slash);
    tcase_add_test(tc, port_names_invalid_dropped);
    tcase_add_test(tc, ports_single_receivers);
    tcase_add_test(tc, ports_prometheus_exporter_collides_with_metrics);
    tcase_add_test(tc, ports_extensions);
    tcase_add_test(tc, ports_generic_and_never_exposed);
    tcase_add_test(tc, ports_prometheus_receiver_api_server);
    tcase_add_test(tc, ports_only_enabled_components);
    tcase_add_test(tc, ports_endpoint_extraction_quirks);
    tcase_add_test(tc, endpoint_port_parsing);
    tcase_add_test(tc, ports_ipv6_endpoints);
    tcase_add_test(tc, defaults_ipv6_listen_address);
    tcase_add_test(tc, component_ports_columns);
    tcase_add_test(tc, ports_tcplog_udplog);
    tcase_add_test(tc, ports_unknown_protocol);
    tcase_add_test(tc, ports_sidecar_appendix_a2);
    tcase_add_test(tc, spec_ports_merge);
    tcase_add_test(tc, spec_ports_rename_blocked_drops);
    tcase_add_test(tc, spec_ports_duplicate_names);
    tcase_add_test(tc, spec_ports_empty_is_ignored);
    tcase_add_test(tc, metrics_port_sources);
    tcase_add_test(tc, metrics_port_in_container_ports);
    tcase_add_test(tc, defaults_typical_config);
    tcase_add_test(tc, defaults_telemetry);
    tcase_add_test(tc, defaults_endpoints);
    tcase_add_test(tc, defaults_disabled_components_untouched);
    tcase_add_test(tc, defaults_unknown_protocol_is_an_error);
    tcase_add_test(tc, probes_defaults);
    tcase_add_test(tc, probes_overrides);
    tcase_add_test(tc, probes_absent);
    tcase_add_test(tc, yaml_key_order);
    tcase_add_test(tc, yaml_odd_inputs);
    tcase_add_test(tc, yaml_depth_limit);
    tcase_add_test(tc, robust_fixed_shapes);
    tcase_add_test(tc, robust_random_trees);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return tu_run(suite());
}
