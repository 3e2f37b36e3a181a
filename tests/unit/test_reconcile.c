/* tests/unit/test_reconcile.c - the otel-reconcile renderer as a library
 * (reconcile/): the config hash against the spec's verified examples and
 * Go's encoding rules, names and truncation, Service ports, RBAC rules,
 * and which objects each mode renders (reconcile.md 2 to 4). The exact YAML
 * of every object type is checked from the outside by reconcile_test.py.
 * Also run's ownership rule (owner.c): which objects are ours, and why not. */
#include "collector/config.h"

#include "base/json.h"
#include "collector/defaults.h"
#include "collector/naming.h"
#include "collector/ports.h"
#include "collector/probes.h"
#include "kube/yaml.h"
#include "reconcile/hash.h"
#include "reconcile/pass.h"
#include "reconcile/ports.h"
#include "reconcile/render.h"
#include "reconcile/stream.h"
#include "reconcile/ta_config.h"
#include "reconcile/targetallocator.h"
#include "reconcile/upgrade.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EQ(got_expr, want)                                                                                             \
    do {                                                                                                               \
        char *got_ = (got_expr);                                                                                       \
        ck_assert_ptr_nonnull(got_);                                                                                   \
        ck_assert_str_eq(got_, want);                                                                                  \
        free(got_);                                                                                                    \
    } while (0)

static char *hash_of(const char *config_json, int defaults) {
    json_object *c = tu_json(config_json);
    char h[RECONCILE_HASH_HEX], err[256] = "";
    if (defaults) ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), 0);
    ck_assert_msg(reconcile_config_hash(c, h, err, sizeof(err)) == 0, "%s", err);
    json_object_put(c);
    return strdup(h);
}

static char *go_json(const char *config_json) {
    json_object *c = tu_json(config_json);
    char err[256] = "";
    char *s = reconcile_config_json(c, err, sizeof(err));
    json_object_put(c);
    return s ? s : strdup(err);
}

/* ---- config hash (reconcile.md 2.3) --------------------------------------- */

START_TEST(hash_build_collector_base) {
    EQ(hash_of("{\"receivers\":{\"examplereceiver\":{\"endpoint\":\"0.0.0.0:12345\"}},\"exporters\":{\"debug\":null},"
               "\"service\":{\"pipelines\":{\"metrics\":{\"exporters\":[\"debug\"],\"receivers\":[\"examplereceiver\"]}}}}",
               0),
       "2d266e55025628659355f1271b689d6fb53648ef6cd5595831f5835d18e59a25");
}
END_TEST

#define VERSIONED(t)                                                                                                   \
    "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{},\"http\":{}}}},\"processors\":{\"batch\":{\"send_batch_size\":" \
    "10000,\"timeout\":\"" t "\"}},\"exporters\":{\"debug\":{}},\"service\":{\"pipelines\":{\"traces\":{\"receivers\":" \
    "[\"otlp\"],\"processors\":[\"batch\"],\"exporters\":[\"debug\"]}}}}"

START_TEST(hash_versioned_configmaps_after_defaults) {
    char *h;
    h = hash_of(VERSIONED("10s"), 1);
    ck_assert_str_eq(h, "5723ff27edf2be60d63b08071d96bb77e0643ba2922ff585d3a7990f47830c16");
    free(h);
    h = hash_of(VERSIONED("20s"), 1);
    ck_assert(strncmp(h, "dfcfaead", 8) == 0);
    free(h);
    h = hash_of(VERSIONED("30s"), 1);
    ck_assert(strncmp(h, "398edf51", 8) == 0);
    free(h);
}
END_TEST

START_TEST(hash_defaulting_is_idempotent) {
    /* A CR a reference webhook already defaulted hashes the same. */
    json_object *c = tu_json(VERSIONED("10s"));
    char err[256], h1[RECONCILE_HASH_HEX], h2[RECONCILE_HASH_HEX];
    ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), 0);
    ck_assert_int_eq(reconcile_config_hash(c, h1, err, sizeof(err)), 0);
    ck_assert_int_eq(collector_default_config(c, err, sizeof(err)), 0);
    ck_assert_int_eq(reconcile_config_hash(c, h2, err, sizeof(err)), 0);
    ck_assert_str_eq(h1, h2);
    json_object_put(c);
}
END_TEST

START_TEST(go_json_struct_order_and_omission) {
    /* Top level in struct order whatever the input order; unknown keys
     * dropped; optional sections omitted when null, kept when {}. */
    EQ(go_json("{\"service\":{\"pipelines\":{}},\"extensions\":{},\"processors\":null,\"zzz\":1,"
               "\"exporters\":{\"b\":1,\"a\":2},\"receivers\":{}}"),
       "{\"receivers\":{},\"exporters\":{\"a\":2,\"b\":1},\"extensions\":{},\"service\":{\"pipelines\":{}}}");
    /* Absent receivers/exporters are nil maps; no service gives null pipelines. */
    EQ(go_json("{}"), "{\"receivers\":null,\"exporters\":null,\"service\":{\"pipelines\":null}}");
    /* service: extensions omitted when empty, telemetry when null, unknown
     * keys dropped; pipelines sorted; pipeline fields in struct order with
     * empty processors omitted and absent lists null. */
    EQ(go_json("{\"receivers\":{},\"exporters\":{},\"service\":{\"x\":1,\"telemetry\":null,\"extensions\":[],"
               "\"pipelines\":{\"z\":{\"receivers\":[\"r\"],\"processors\":[]},\"a\":null}}}"),
       "{\"receivers\":{},\"exporters\":{},\"service\":{\"pipelines\":{\"a\":null,\"z\":{\"exporters\":null,"
       "\"receivers\":[\"r\"]}}}}");
    EQ(go_json("{\"receivers\":{},\"exporters\":{},\"connectors\":{\"c\":null},\"service\":{\"extensions\":[\"e\"],"
               "\"telemetry\":{\"logs\":{\"level\":\"debug\"}},\"pipelines\":{\"p\":{\"processors\":[\"b\"]}}}}"),
       "{\"receivers\":{},\"exporters\":{},\"connectors\":{\"c\":null},\"service\":{\"extensions\":[\"e\"],"
       "\"telemetry\":{\"logs\":{\"level\":\"debug\"}},\"pipelines\":{\"p\":{\"exporters\":null,\"processors\":[\"b\"],"
       "\"receivers\":null}}}}");
}
END_TEST

START_TEST(go_json_strings) {
    EQ(go_json("{\"receivers\":{\"a\":\"<b>&\\u2028\\u2029\\n\\t\\r\\b\\f\\u0001\\\"\\\\/é\"}}"),
       "{\"receivers\":{\"a\":\"\\u003cb\\u003e\\u0026\\u2028\\u2029\\n\\t\\r\\b\\f\\u0001\\\"\\\\/é\"},"
       "\"exporters\":null,\"service\":{\"pipelines\":null}}");
}
END_TEST

static char *number(const char *n) {
    char text[128], *s, *out;
    snprintf(text, sizeof(text), "{\"receivers\":{\"n\":%s}}", n);
    s = go_json(text);
    /* {"receivers":{"n":X},... */
    out = strndup(s + 18, strcspn(s + 18, "}"));
    free(s);
    return out;
}

START_TEST(go_json_numbers) {
    EQ(number("100"), "100");
    EQ(number("-7"), "-7");
    EQ(number("0"), "0");
    EQ(number("1.5"), "1.5");
    EQ(number("-2.25"), "-2.25");
    EQ(number("0.1"), "0.1");
    EQ(number("10.0"), "10");
    EQ(number("0.000001"), "0.000001");
    EQ(number("0.0000001"), "1e-7");
    EQ(number("1.5e-10"), "1.5e-10");
    EQ(number("1e20"), "100000000000000000000");
    EQ(number("1e21"), "1e+21");
    EQ(number("1.2345e25"), "1.2345e+25");
    /* float64 round trip through the API server */
    EQ(number("123456789012345678"), "123456789012345680");
    EQ(number("9007199254740993"), "9007199254740992");
}
END_TEST

START_TEST(go_json_non_finite_is_an_error) {
    /* YAML text cannot produce one (kube/yaml keeps .inf a string), a
     * json-c tree built in code can. */
    json_object *c = tu_json("{\"receivers\":{}}");
    json_object_object_add(json_object_object_get(c, "receivers"), "a", json_object_new_double(1.0 / 0.0));
    char err[256] = "", h[RECONCILE_HASH_HEX];
    ck_assert_int_eq(reconcile_config_hash(c, h, err, sizeof(err)), -1);
    ck_assert_str_eq(err, "spec.config holds a number JSON cannot represent (.inf or .nan)");
    json_object_put(c);
}
END_TEST

/* ---- names (reconcile.md 2.1.1) ------------------------------------------- */

static char *a60(void) {
    char *s = malloc(61);
    memset(s, 'a', 60);
    s[60] = 0;
    return s;
}

static char *rep(char c, int n, const char *suffix) {
    char *s = malloc((size_t)n + strlen(suffix) + 1);
    memset(s, c, (size_t)n);
    strcpy(s + n, suffix);
    return s;
}

START_TEST(names_table) {
    char *a = a60(), *w;
    EQ(collector_name("%s-collector", "simplest", NULL), "simplest-collector");
    EQ(collector_name("%s-collector-%s", "simplest", "5723ff27"), "simplest-collector-5723ff27");
    EQ(collector_name("%s-headless", "simplest-collector", NULL), "simplest-collector-headless");
    EQ(collector_name("%s-monitoring", "simplest-collector", NULL), "simplest-collector-monitoring");
    EQ(collector_name("%s-extension", "simplest-collector", NULL), "simplest-collector-extension");
    EQ(collector_name("%s-collector", "simplest-monitoring", NULL), "simplest-monitoring-collector");
    EQ(collector_name("%s-ingress", "simplest", NULL), "simplest-ingress");
    EQ(collector_name("%s-collector-networkpolicy", "simplest", NULL), "simplest-collector-networkpolicy");
    EQ(collector_name("%s-%s-cluster-role", "simplest", "obs"), "simplest-obs-cluster-role");
    EQ(collector_name("%s-%s-collector", "simplest", "obs"), "simplest-obs-collector");
    EQ(collector_name("%s-%s-route", "otlp-grpc", "simplest"), "otlp-grpc-simplest-route");
    EQ(collector_name("%s-%s-httproute", "simplest", "otlp-http"), "simplest-otlp-http-httproute");

    /* 60 x a */
    w = rep('a', 53, "-collector");
    EQ(collector_name("%s-collector", a, NULL), w);
    free(w);
    w = rep('a', 44, "-collector-5723ff27");
    EQ(collector_name("%s-collector-%s", a, "5723ff27"), w);
    free(w);
    {
        char *base = collector_name("%s-collector", a, NULL);
        w = rep('a', 53, "--headless"); /* the quirk: base cut to "aaa-" */
        EQ(collector_name("%s-headless", base, NULL), w);
        free(w);
        w = rep('a', 52, "-monitoring");
        EQ(collector_name("%s-monitoring", base, NULL), w);
        free(w);
        free(base);
    }
    /* A long name and namespace: the name is cut first, then dropped. */
    w = rep('a', 46, "-obs-cluster-role");
    {
        char *got = collector_name("%s-%s-cluster-role", a, "obs");
        ck_assert_str_eq(got, w);
        ck_assert_uint_eq(strlen(got), 63);
        free(got);
    }
    free(w);
    free(a);
}
END_TEST

START_TEST(names_truncate_rules) {
    const char *v1[] = {"ab"}, *v2[] = {"abc", "de"};
    /* Nothing to cut: only the trimming of non-alphanumerics at both ends. */
    EQ(collector_truncate("-%s-", 63, 1, v1), "ab");
    /* Excess 3 is taken from the first value, which is dropped (3 <= 3). */
    EQ(collector_truncate("%s.%s", 3, 2, v2), "de");
    /* Excess 2: first value cut to "a". */
    EQ(collector_truncate("%s.%s", 4, 2, v2), "a.de");
    /* Still too long after dropping every value: hard cut, no trimming. */
    EQ(collector_truncate("%s-0123456789", 5, 1, v1), "-0123");
}
END_TEST

START_TEST(names_dns) {
    char s1[] = "My.Name_x", s2[] = ".abc-", s3[] = "ABC", s4[] = "a\xc3\xa9z";
    collector_dns_name(s1);
    ck_assert_str_eq(s1, "my-name-x");
    collector_dns_name(s2);
    ck_assert_str_eq(s2, "aabca"); /* outside [a-z0-9] at either end: 'a' */
    collector_dns_name(s3);
    ck_assert_str_eq(s3, "abc");
    collector_dns_name(s4);
    ck_assert_str_eq(s4, "a-z");
}
END_TEST

/* ---- Service ports (reconcile.md 3.3, 3.5) -------------------------------- */

static char *sports(const char *config, int which, int route, const char *spec_ports) {
    json_object *c = tu_json(config), *sp = spec_ports ? tu_json(spec_ports) : NULL, *p;
    char err[256] = "", *s;
    p = reconcile_service_ports(c, which, route, sp, err, sizeof(err));
    s = p ? tu_str(p) : strdup(err);
    json_object_put(p);
    json_object_put(sp);
    json_object_put(c);
    return s;
}

#define RX COLLECTOR_RECEIVERS
#define EX COLLECTOR_EXPORTERS
#define EXT COLLECTOR_EXTENSIONS
#define PIPE(rx, ex) "\"service\":{\"pipelines\":{\"p\":{\"receivers\":[" rx "],\"exporters\":[" ex "]}}}"

START_TEST(service_ports_multi_protocol) {
    EQ(sports("{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null,\"http\":{\"endpoint\":\"0.0.0.0:5000\"}}}}," PIPE(
                  "\"otlp\"", "") "}",
              RX | EX, 0, NULL),
       "[{\"name\":\"otlp-grpc\",\"appProtocol\":\"grpc\",\"port\":4317,\"targetPort\":4317},"
       "{\"name\":\"otlp-http\",\"appProtocol\":\"http\",\"port\":5000,\"targetPort\":5000}]");
    EQ(sports("{\"receivers\":{\"jaeger\":{\"protocols\":{\"grpc\":null,\"thrift_http\":null,\"thrift_compact\":null,"
              "\"thrift_binary\":null}}}," PIPE("\"jaeger\"", "") "}",
              RX, 0, NULL),
       "[{\"name\":\"jaeger-grpc\",\"protocol\":\"TCP\",\"appProtocol\":\"grpc\",\"port\":14250,\"targetPort\":14250},"
       "{\"name\":\"port-14268\",\"protocol\":\"TCP\",\"appProtocol\":\"http\",\"port\":14268,\"targetPort\":14268},"
       "{\"name\":\"port-6831\",\"protocol\":\"UDP\",\"port\":6831,\"targetPort\":6831},"
       "{\"name\":\"port-6832\",\"protocol\":\"UDP\",\"port\":6832,\"targetPort\":6832}]");
    EQ(sports("{\"receivers\":{\"loki\":{\"protocols\":{\"grpc\":null,\"http\":null}},\"skywalking\":{\"protocols\":{"
              "\"grpc\":null,\"http\":null}}}," PIPE("\"loki\",\"skywalking\"", "") "}",
              RX, 0, NULL),
       "[{\"name\":\"loki-grpc\",\"appProtocol\":\"grpc\",\"port\":9095,\"targetPort\":9095},"
       "{\"name\":\"loki-http\",\"appProtocol\":\"http\",\"port\":3100,\"targetPort\":3100},"
       "{\"name\":\"skywalking-grpc\",\"appProtocol\":\"grpc\",\"port\":11800,\"targetPort\":11800},"
       "{\"name\":\"skywalking-http\",\"appProtocol\":\"http\",\"port\":12800,\"targetPort\":12800}]");
    /* route: grpc -> h2c */
    EQ(sports("{\"receivers\":{\"otlp/2\":{\"protocols\":{\"grpc\":null}}}," PIPE("\"otlp/2\"", "") "}", RX, 1, NULL),
       "[{\"name\":\"otlp-2-grpc\",\"appProtocol\":\"h2c\",\"port\":4317,\"targetPort\":4317}]");
    EQ(sports("{\"receivers\":{\"otlp\":{\"protocols\":{\"kafka\":null}}}," PIPE("\"otlp\"", "") "}", RX, 0, NULL),
       "unknown protocol set: kafka");
}
END_TEST

START_TEST(service_ports_single_and_generic) {
    EQ(sports("{\"receivers\":{\"zipkin\":null,\"statsd\":null,\"awsxray\":{\"endpoint\":\"0.0.0.0:2100\"},"
              "\"carbon\":null,\"splunk_hec/x\":null,\"mine\":{\"endpoint\":\"localhost:7777\"},\"nope\":{},"
              "\"k8s_cluster\":{\"endpoint\":\"http://a:1\"}}," PIPE(
                  "\"zipkin\",\"statsd\",\"awsxray\",\"carbon\",\"splunk_hec/x\",\"mine\",\"nope\",\"k8s_cluster\"",
                  "") "}",
              RX, 0, NULL),
       "[{\"name\":\"awsxray\",\"protocol\":\"UDP\",\"port\":2100,\"targetPort\":2100},"
       "{\"name\":\"carbon\",\"port\":2003,\"targetPort\":2003},"
       "{\"name\":\"mine\",\"port\":7777},"
       "{\"name\":\"splunk-hec-x\",\"port\":8088,\"targetPort\":8088},"
       "{\"name\":\"statsd\",\"protocol\":\"UDP\",\"port\":8125,\"targetPort\":8125},"
       "{\"name\":\"zipkin\",\"protocol\":\"TCP\",\"appProtocol\":\"http\",\"port\":9411,\"targetPort\":9411}]");
    EQ(sports("{\"receivers\":{\"tcp_log\":{}}," PIPE("\"tcp_log\"", "") "}", RX, 0, NULL),
       "receiver tcp_log: port should not be empty");
}
END_TEST

START_TEST(service_ports_exporters_extensions) {
    const char *cfg = "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null}}},\"exporters\":{\"prometheus/dev\":{"
                      "\"endpoint\":\"0.0.0.0:9090\"},\"prometheus\":null,\"otlp\":{\"endpoint\":\"x:4317\"}},"
                      "\"extensions\":{\"health_check\":null,\"jaeger_query\":{\"grpc\":{\"endpoint\":\":16685\"}}},"
                      "\"service\":{\"extensions\":[\"health_check\",\"jaeger_query\",\"pprof\"],\"pipelines\":{\"p\":{"
                      "\"receivers\":[\"otlp\"],\"exporters\":[\"prometheus/dev\",\"prometheus\",\"otlp\"]}}}}";
    EQ(sports(cfg, EX, 0, NULL),
       "[{\"name\":\"prometheus\",\"port\":8888},{\"name\":\"prometheus-dev\",\"port\":9090}]");
    EQ(sports(cfg, EXT, 0, NULL),
       "[{\"name\":\"health-check\",\"port\":13133},"
       "{\"name\":\"jaeger-query\",\"port\":16686,\"targetPort\":16686},"
       "{\"name\":\"jaeger-query-2\",\"port\":16685,\"targetPort\":16685}]");
}
END_TEST

START_TEST(service_ports_ipv6_endpoints) {
    /* collector/components.c's endpoint parsing: the port after the last ':' of
     * host:port, a bracketed literal being the host (the reference: 1). */
    const char *cfg = "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\"[::1]:4317\"},"
                      "\"http\":{\"endpoint\":\"[::]:4319\"}}},\"zipkin\":{\"endpoint\":\"${env:POD_IP}:9412\"},"
                      "\"mine\":{\"endpoint\":\"http://[fd00::1]:7777/x\"},\"statsd\":{\"endpoint\":\":8126\"},"
                      "\"carbon\":{\"endpoint\":\"[::]:${env:PORT}\"},"
                      "\"prometheus\":{\"api_server\":{\"enabled\":true,\"server_config\":{\"endpoint\":\"[::]:9090\"}}}},"
                      "\"exporters\":{\"prometheus\":{\"endpoint\":\"[::]:9464\"}},"
                      "\"extensions\":{\"health_check\":{\"endpoint\":\"[::]:13134\"},"
                      "\"jaeger_query\":{\"http\":{\"endpoint\":\"[::1]:16687\"},\"grpc\":{\"endpoint\":\"[::1]:16685\"}}},"
                      "\"service\":{\"extensions\":[\"health_check\",\"jaeger_query\"],\"pipelines\":{\"p\":{"
                      "\"receivers\":[\"otlp\",\"zipkin\",\"mine\",\"statsd\",\"carbon\",\"prometheus\"],"
                      "\"exporters\":[\"prometheus\"]}}}}";
    EQ(sports(cfg, RX | EX, 0, NULL),
       "[{\"name\":\"carbon\",\"port\":2003,\"targetPort\":2003},"
       "{\"name\":\"mine\",\"port\":7777},"
       "{\"name\":\"otlp-grpc\",\"appProtocol\":\"grpc\",\"port\":4317,\"targetPort\":4317},"
       "{\"name\":\"otlp-http\",\"appProtocol\":\"http\",\"port\":4319,\"targetPort\":4319},"
       "{\"name\":\"prometheus\",\"port\":9090},"
       "{\"name\":\"prometheus\",\"port\":9464},"
       "{\"name\":\"statsd\",\"protocol\":\"UDP\",\"port\":8126,\"targetPort\":8126},"
       "{\"name\":\"zipkin\",\"protocol\":\"TCP\",\"appProtocol\":\"http\",\"port\":9412,\"targetPort\":9412}]");
    EQ(sports(cfg, EXT, 0, NULL),
       "[{\"name\":\"health-check\",\"port\":13134},"
       "{\"name\":\"jaeger-query\",\"port\":16687,\"targetPort\":16687},"
       "{\"name\":\"jaeger-query-2\",\"port\":16685,\"targetPort\":16685}]");
}
END_TEST

START_TEST(service_ports_spec_ports_merge) {
    const char *cfg = "{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":null,\"http\":null}},\"zipkin\":null},"
                      PIPE("\"otlp\",\"zipkin\"", "") "}";
    /* 4317/TCP clashes by number (empty protocol counts as TCP): dropped.
     * "zipkin" clashes by name: renamed port-9411. spec ports first, as
     * given, hostPort dropped; no re-sort. */
    EQ(sports(cfg, RX, 0,
              "[{\"name\":\"zz\",\"port\":4317,\"hostPort\":1},{\"name\":\"zipkin\",\"port\":1234,\"protocol\":\"UDP\"}]"),
       "[{\"name\":\"zz\",\"port\":4317},{\"name\":\"zipkin\",\"protocol\":\"UDP\",\"port\":1234},"
       "{\"name\":\"otlp-http\",\"appProtocol\":\"http\",\"port\":4318,\"targetPort\":4318},"
       "{\"name\":\"port-9411\",\"protocol\":\"TCP\",\"appProtocol\":\"http\",\"port\":9411,\"targetPort\":9411}]");
    /* rename blocked: dropped */
    EQ(sports(cfg, RX, 0, "[{\"name\":\"zipkin\",\"port\":1},{\"name\":\"port-9411\",\"port\":2}]"),
       "[{\"name\":\"zipkin\",\"port\":1},{\"name\":\"port-9411\",\"port\":2},"
       "{\"name\":\"otlp-grpc\",\"appProtocol\":\"grpc\",\"port\":4317,\"targetPort\":4317},"
       "{\"name\":\"otlp-http\",\"appProtocol\":\"http\",\"port\":4318,\"targetPort\":4318}]");
}
END_TEST

/* ---- render --------------------------------------------------------------- */

typedef struct rendered {
    reconcile_render_result r;
    int rc;
    char err[512];
} rendered;

static rendered *render_yaml(const char *yaml) {
    kube_yaml_error ye;
    json_object *o = kube_yaml_parse_one(yaml, strlen(yaml), &ye);
    rendered *x = calloc(1, sizeof(*x));
    reconcile_options opt;
    ck_assert_msg(o != NULL, "bad test YAML line %d: %s", ye.line, ye.msg);
    reconcile_options_default(&opt);
    x->rc = reconcile_render(o, "ns1", &opt, &x->r, x->err, sizeof(x->err));
    json_object_put(o);
    return x;
}

static void rendered_free(rendered *x) {
    reconcile_render_result_free(&x->r);
    free(x);
}

/* "Kind/name,Kind/name,..." */
static char *kinds(rendered *x) {
    char *s = strdup("");
    for (size_t i = 0; i < x->r.nobjs; i++) {
        char *n;
        json_object *o = x->r.objs[i];
        if (asprintf(&n, "%s%s%s/%s", s, i ? "," : "", jstr(o, "kind"),
                     jstr(jmap(o, "metadata"), "name")) < 0)
            abort();
        free(s);
        s = n;
    }
    return s;
}

static json_object *find(rendered *x, const char *kind) {
    for (size_t i = 0; i < x->r.nobjs; i++)
        if (strcmp(jstr(x->r.objs[i], "kind"), kind) == 0) return x->r.objs[i];
    return NULL;
}

static char *at(json_object *o, const char *path) {
    /* dotted path; numeric components index arrays */
    char *p = strdup(path), *save = NULL;
    for (char *tok = strtok_r(p, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save)) {
        if (json_object_is_type(o, json_type_array))
            o = json_object_array_get_idx(o, (size_t)atoi(tok));
        else
            o = jget(o, tok);
    }
    free(p);
    return o ? tu_str(o) : strdup("<none>");
}

#define CR(name, spec)                                                                                                 \
    "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata:\n  name: " name "\nspec:\n" spec
#define EMPTY_CONFIG                                                                                                   \
    "  config:\n    receivers: {}\n    exporters: {}\n    service:\n      pipelines: {}\n"

START_TEST(render_counts_per_mode) {
    rendered *x;
    x = render_yaml(CR("c", EMPTY_CONFIG));
    ck_assert_int_eq(x->rc, 0);
    EQ(kinds(x), "Deployment/c-collector,PodDisruptionBudget/c-collector,ConfigMap/c-collector-bd40e3c9,"
                 "ServiceAccount/c-collector,Service/c-collector-monitoring,NetworkPolicy/c-collector-networkpolicy");
    rendered_free(x);
    x = render_yaml(CR("c", "  mode: statefulset\n  networkPolicy: {enabled: false}\n" EMPTY_CONFIG));
    EQ(kinds(x), "StatefulSet/c-collector,PodDisruptionBudget/c-collector,ConfigMap/c-collector-bd40e3c9,"
                 "ServiceAccount/c-collector,Service/c-collector-monitoring");
    rendered_free(x);
    x = render_yaml(CR("c", "  mode: sidecar\n" EMPTY_CONFIG));
    EQ(kinds(x), "ConfigMap/c-collector-bd40e3c9,ServiceAccount/c-collector");
    rendered_free(x);
    x = render_yaml(CR("c", "  mode: daemonset\n  serviceAccount: mine\n" EMPTY_CONFIG));
    EQ(kinds(x), "DaemonSet/c-collector,ConfigMap/c-collector-bd40e3c9,Service/c-collector-monitoring,"
                 "NetworkPolicy/c-collector-networkpolicy");
    rendered_free(x);
    /* deployment, prometheus exporter, metrics on: 9 objects */
    x = render_yaml(CR("c", "  networkPolicy: {enabled: false}\n  observability: {metrics: {enableMetrics: true}}\n"
                            "  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n"
                            "    exporters: {prometheus: {endpoint: '0.0.0.0:9090'}}\n"
                            "    service: {pipelines: {metrics: {receivers: [otlp], exporters: [prometheus]}}}\n"));
    ck_assert_uint_eq(x->r.nobjs, 9);
    EQ(kinds(x), "Deployment/c-collector,PodDisruptionBudget/c-collector,ConfigMap/c-collector-129c16ea,"
                 "ServiceAccount/c-collector,Service/c-collector,Service/c-collector-headless,"
                 "Service/c-collector-monitoring,ServiceMonitor/c-collector,ServiceMonitor/c-monitoring-collector");
    EQ(at(find(x, "ServiceMonitor"), "spec.endpoints"), "[{\"port\":\"prometheus\"}]");
    rendered_free(x);
}
END_TEST

START_TEST(render_hpa) {
    rendered *x;
    /* maxReplicas set: minReplicas defaults to replicas, CPU target to 90. */
    x = render_yaml(CR("c", "  replicas: 2\n  autoscaler: {maxReplicas: 5, metrics: [{type: Pods, pods:"
                            " {metric: {name: m}, target: {type: AverageValue, averageValue: 10}}}]}\n" EMPTY_CONFIG));
    ck_assert_int_eq(x->rc, 0);
    EQ(at(find(x, "HorizontalPodAutoscaler"), "spec"),
       "{\"scaleTargetRef\":{\"kind\":\"OpenTelemetryCollector\",\"name\":\"c\",\"apiVersion\":"
       "\"opentelemetry.io/v1beta1\"},\"minReplicas\":2,\"maxReplicas\":5,\"metrics\":[{\"type\":\"Resource\","
       "\"resource\":{\"name\":\"cpu\",\"target\":{\"type\":\"Utilization\",\"averageUtilization\":90}}},"
       "{\"type\":\"Pods\",\"pods\":{\"metric\":{\"name\":\"m\"},\"target\":{\"type\":\"AverageValue\","
       "\"averageValue\":10}}}]}");
    EQ(at(find(x, "Deployment"), "spec.replicas"), "2");
    rendered_free(x);
    /* Memory first, then CPU; replicas = max(minReplicas, replicas). */
    x = render_yaml(CR("c", "  autoscaler: {minReplicas: 3, maxReplicas: 5, targetCPUUtilization: 50,"
                            " targetMemoryUtilization: 60}\n" EMPTY_CONFIG));
    EQ(at(find(x, "HorizontalPodAutoscaler"), "spec.metrics.0.resource.name"), "\"memory\"");
    EQ(at(find(x, "HorizontalPodAutoscaler"), "spec.metrics.1.resource.target.averageUtilization"), "50");
    EQ(at(find(x, "Deployment"), "spec.replicas"), "3");
    rendered_free(x);
    /* No maxReplicas: no HPA and a warning instead of maxReplicas: 0. */
    x = render_yaml(CR("c", "  autoscaler: {}\n" EMPTY_CONFIG));
    ck_assert_int_eq(x->rc, 0);
    ck_assert_ptr_null(find(x, "HorizontalPodAutoscaler"));
    ck_assert_uint_eq(x->r.nwarnings, 1);
    ck_assert_str_eq(x->r.warnings[0], "spec.autoscaler.maxReplicas is not set: no HorizontalPodAutoscaler");
    rendered_free(x);
    /* v1alpha1 top-level bounds */
    x = render_yaml("apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata: {name: c}\n"
                    "spec:\n  maxReplicas: 4\n  config: |\n    receivers: {}\n    exporters: {}\n"
                    "    service: {pipelines: {}}\n");
    ck_assert_int_eq(x->rc, 0);
    EQ(at(find(x, "HorizontalPodAutoscaler"), "spec.maxReplicas"), "4");
    EQ(at(find(x, "ConfigMap"), "metadata.name"), "\"c-collector-bd40e3c9\"");
    rendered_free(x);
}
END_TEST

START_TEST(render_errors) {
    static const struct {
        const char *yaml, *err;
    } cases[] = {
        /* What the admission webhook refuses, with its message
         * (collector/validate.c), and the CRD's own rules. */
        {CR("c", "  mode: job\n" EMPTY_CONFIG),
         "spec.mode: Unsupported value: \"job\": supported values: \"daemonset\", \"deployment\", \"sidecar\", "
         "\"statefulset\""},
        {CR("c", "  autoscaler: {maxReplicas: 0}\n" EMPTY_CONFIG),
         "spec.autoscaler.maxReplicas in body should be greater than or equal to 1"},
        {CR("c", "  replicas: 6\n  autoscaler: {maxReplicas: 5}\n" EMPTY_CONFIG),
         "the OpenTelemetry Spec autoscale configuration is incorrect, replicas must not be greater than maxReplicas"},
        {CR("c", "  autoscaler: {minReplicas: 6, maxReplicas: 5}\n" EMPTY_CONFIG),
         "the OpenTelemetry Spec autoscale configuration is incorrect, minReplicas must not be greater than "
         "maxReplicas"},
        {CR("c", "  mode: sidecar\n  ingress: {type: ingress}\n" EMPTY_CONFIG),
         "the OpenTelemetry Spec Ingress configuration is incorrect. Ingress can only be used in combination with "
         "the modes: deployment, daemonset, statefulset"},
        {CR("c", "  ingress: {type: ingress, ruleType: subdomain, hostname: '*'}\n" EMPTY_CONFIG),
         "a valid Ingress hostname has to be defined for subdomain ruleType"},
        {CR("c", "  targetAllocator: {enabled: true}\n" EMPTY_CONFIG),
         "the OpenTelemetry Collector mode is set to deployment, which does not support the target allocation "
         "deployment"},
        {CR("c", "  mode: sidecar\n  tolerations: [{key: k, operator: Exists}]\n" EMPTY_CONFIG),
         "the OpenTelemetry Collector mode is set to sidecar, which does not support the attribute 'tolerations'"},
        {CR("c", "  config:\n    receivers: {otlp: {protocols: {kafka: {}}}}\n    exporters: {}\n"
                 "    service: {pipelines: {p: {receivers: [otlp]}}}\n"),
         "unknown protocol set: kafka"},
        {CR("c", "  config:\n    receivers: {}\n    exporters: {}\n    service:\n      pipelines: {}\n"
                 "      telemetry: {metrics: {address: '0.0.0.0:${env:PORT}'}}\n"),
         "couldn't determine metrics port from configuration: 0.0.0.0:${env:PORT}"},
        {CR("c", "  mode: deployment\n"), "spec.config is missing"},
        {"apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata: {}\nspec:\n" EMPTY_CONFIG,
         "metadata.name is missing"},
        {"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
         "not an opentelemetry.io/v1beta1 or v1alpha1 OpenTelemetryCollector"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        rendered *x = render_yaml(cases[i].yaml);
        ck_assert_msg(x->rc == -1, "case %zu rendered", i);
        ck_assert_str_eq(x->err, cases[i].err);
        ck_assert_uint_eq(x->r.nobjs, 0);
        rendered_free(x);
    }
}
END_TEST

START_TEST(render_unmanaged_renders_nothing) {
    rendered *x = render_yaml(CR("c", "  managementState: unmanaged\n" EMPTY_CONFIG));
    ck_assert_int_eq(x->rc, 0);
    ck_assert_uint_eq(x->r.nobjs, 0);
    ck_assert_str_eq(x->r.warnings[0], "spec.managementState is unmanaged: nothing is rendered");
    rendered_free(x);
}
END_TEST

START_TEST(render_version_label) {
    static const struct {
        const char *image, *want;
    } cases[] = {
        {"", "latest"},
        {"otel/col", "latest"},
        {"otel/col:0.47.0", "0.47.0"},
        {"repo:1.2@sha256:abc", "1.2"},
        {"host:5000/otel:1.0", ""},
        {"host:5000/otel", "5000/otel"},
        {"a:b:c:d", "latest"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char yaml[512], want[128];
        rendered *x;
        snprintf(yaml, sizeof(yaml), CR("c", "  image: '%s'\n" EMPTY_CONFIG), cases[i].image);
        x = render_yaml(yaml);
        ck_assert_int_eq(x->rc, 0);
        snprintf(want, sizeof(want), "\"%s\"", cases[i].want);
        {
            json_object *l = jmap(jmap(find(x, "Deployment"), "metadata"), "labels");
            char *got = tu_str(jget(l, "app.kubernetes.io/version"));
            ck_assert_msg(strcmp(got, want) == 0, "image %s: %s", cases[i].image, got);
            free(got);
        }
        rendered_free(x);
    }
}
END_TEST

static char *rules_of(const char *config) {
    char yaml[4096];
    rendered *x;
    char *s;
    snprintf(yaml, sizeof(yaml), CR("c", "  config:\n%s"), config);
    x = render_yaml(yaml);
    ck_assert_msg(x->rc == 0, "%s", x->err);
    s = find(x, "ClusterRole") ? at(find(x, "ClusterRole"), "rules") : strdup("<none>");
    rendered_free(x);
    return s;
}

START_TEST(rbac_rules) {
    EQ(rules_of("    receivers: {kubeletstats: {}, k8s_events: {}}\n    exporters: {}\n"
                "    service: {pipelines: {p: {receivers: [kubeletstats, k8s_events]}}}\n"),
       "[{\"verbs\":[\"get\",\"list\",\"watch\"],\"apiGroups\":[\"\"],\"resources\":[\"events\"]},"
       "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes/stats\"]}]");
    EQ(rules_of("    receivers: {kubeletstats: {metrics: {k8s.pod.cpu_limit_utilization: {enabled: true}}}}\n"
                "    exporters: {}\n    service: {pipelines: {p: {receivers: [kubeletstats]}}}\n"),
       "[{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes/stats\"]},"
       "{\"verbs\":[\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes/proxy\"]}]");
    EQ(rules_of("    receivers: {k8sobjects: {objects: [{name: pods, mode: pull}, {name: events, mode: pull},"
                " {name: deployments, group: apps, mode: watch}, {name: x}]}}\n"
                "    exporters: {}\n    service: {pipelines: {p: {receivers: [k8sobjects]}}}\n"),
       "[{\"verbs\":[\"list\",\"get\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]},"
       "{\"verbs\":[\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"events\"]},"
       "{\"verbs\":[\"list\",\"watch\"],\"apiGroups\":[\"apps\"],\"resources\":[\"deployments\"]},"
       "{\"verbs\":[\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"x\"]}]");
    /* k8sattributes: replicasets once, nodes de-duplicated (the reference
     * repeats it per k8s.node entry). */
    EQ(rules_of("    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {}\n"
                "    processors: {k8sattributes: {extract: {metadata: [k8s.node.name, k8s.node.uid, service.name]}}}\n"
                "    service: {pipelines: {p: {receivers: [otlp], processors: [k8sattributes]}}}\n"),
       "[{\"verbs\":[\"get\",\"watch\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\",\"namespaces\"]},"
       "{\"verbs\":[\"get\",\"watch\",\"list\"],\"apiGroups\":[\"apps\"],\"resources\":[\"replicasets\"]},"
       "{\"verbs\":[\"get\",\"watch\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes\"]}]");
    EQ(rules_of("    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {}\n"
                "    processors: {resourcedetection: {detectors: [env, k8snode, openshift]}}\n"
                "    extensions: {k8s_observer: {observe_pods: true, observe_nodes: true}, k8s_leader_elector: {}}\n"
                "    service: {extensions: [k8s_observer, k8s_leader_elector],"
                " pipelines: {p: {receivers: [otlp], processors: [resourcedetection]}}}\n"),
       "[{\"verbs\":[\"get\",\"list\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes\"]},"
       "{\"verbs\":[\"get\",\"watch\",\"list\"],\"apiGroups\":[\"config.openshift.io\"],\"resources\":"
       "[\"infrastructures\",\"infrastructures/status\"]},"
       "{\"verbs\":[\"get\",\"list\",\"watch\",\"create\",\"update\",\"patch\",\"delete\"],\"apiGroups\":"
       "[\"coordination.k8s.io\"],\"resources\":[\"leases\"]},"
       "{\"verbs\":[\"list\",\"watch\"],\"apiGroups\":[\"\"],\"resources\":[\"pods\"]},"
       "{\"verbs\":[\"list\",\"watch\"],\"apiGroups\":[\"\"],\"resources\":[\"nodes\"]}]");
    /* Not enabled: nothing. */
    EQ(rules_of("    receivers: {k8s_events: {}, otlp: {protocols: {grpc: {}}}}\n    exporters: {}\n"
                "    service: {pipelines: {p: {receivers: [otlp]}}}\n"),
       "<none>");
}
END_TEST

START_TEST(rbac_order_is_stable) {
    /* Same components, declared and referenced in another order. */
    char *a = rules_of("    receivers: {k8s_events: {}, kubeletstats: {}, k8s_cluster: {}}\n    exporters: {}\n"
                       "    service: {pipelines: {a: {receivers: [k8s_events, kubeletstats]}, b: {receivers: [k8s_cluster]}}}\n");
    char *b = rules_of("    receivers: {k8s_cluster: {}, kubeletstats: {}, k8s_events: {}}\n    exporters: {}\n"
                       "    service: {pipelines: {b: {receivers: [k8s_cluster, kubeletstats]}, a: {receivers: [k8s_events]}}}\n");
    ck_assert_str_eq(a, b);
    free(a);
    free(b);
}
END_TEST

START_TEST(render_network_policy_keeps_udp) {
    rendered *x = render_yaml(CR("c", "  config:\n    receivers: {statsd: {}, jaeger: {protocols: {thrift_compact: {}}}}\n"
                                      "    exporters: {}\n    service: {pipelines: {p: {receivers: [statsd, jaeger]}}}\n"));
    ck_assert_int_eq(x->rc, 0);
    EQ(at(find(x, "NetworkPolicy"), "spec.ingress.0.ports"),
       "[{\"protocol\":\"TCP\",\"port\":8888},{\"protocol\":\"UDP\",\"port\":6831},"
       "{\"protocol\":\"UDP\",\"port\":8125}]");
    rendered_free(x);
}
END_TEST

START_TEST(render_prometheus_port_from_config) {
    rendered *x = render_yaml(CR("c", "  config:\n    receivers: {}\n    exporters: {}\n    service:\n"
                                      "      pipelines: {}\n      telemetry: {metrics: {address: '0.0.0.0:9999'}}\n"));
    json_object *ann;
    char *s;
    ck_assert_int_eq(x->rc, 0);
    ann = jmap(jmap(jmap(jmap(find(x, "Deployment"), "spec"),
                                                                "template"), "metadata"), "annotations");
    ck_assert_str_eq(jstr(ann, "prometheus.io/port"), "9999");
    s = at(find(x, "Service"), "spec.ports");
    ck_assert_str_eq(s, "[{\"name\":\"monitoring\",\"port\":9999}]");
    free(s);
    rendered_free(x);
}
END_TEST

START_TEST(render_odd_shapes) {
    /* Found by the robustness run: a null entry in a pipeline's receivers. */
    rendered *x = render_yaml(CR("c", "  config:\n    receivers: {}\n    exporters: {}\n"
                                      "    service: {pipelines: {p: {receivers: [null, 5, kubeletstats]}}}\n"));
    ck_assert_int_eq(x->rc, 0);
    EQ(at(find(x, "Deployment"), "spec.template.spec.containers.0.env.3.name"), "\"K8S_NODE_NAME\"");
    rendered_free(x);
}
END_TEST

START_TEST(render_ipv6_endpoints) {
    /* spec 7.11: the reference reads port 1 out of "[::1]:4317"; the port
     * parsing in collector/components.c does not. The ConfigMap keeps the
     * addresses as written. */
    rendered *x = render_yaml(CR("c", "  config:\n    receivers:\n      otlp: {protocols: {grpc: {endpoint: '[::]:4317'},"
                                      " http: {endpoint: '[fd00::1]:5318'}}}\n      zipkin: {endpoint: '[::1]:9412'}\n"
                                      "    exporters: {}\n    extensions: {health_check: {endpoint: '[::]:13134'}}\n"
                                      "    service: {extensions: [health_check], pipelines: {p: {receivers: [otlp, zipkin]}}}\n"));
    char *s;
    ck_assert_int_eq(x->rc, 0);
    EQ(at(find(x, "Deployment"), "spec.template.spec.containers.0.ports"),
       "[{\"name\":\"health-check\",\"containerPort\":13134,\"protocol\":\"TCP\"},"
       "{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"},"
       "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
       "{\"name\":\"otlp-http\",\"containerPort\":5318,\"protocol\":\"TCP\"},"
       "{\"name\":\"zipkin\",\"containerPort\":9412,\"protocol\":\"TCP\"}]");
    EQ(at(find(x, "Deployment"), "spec.template.spec.containers.0.livenessProbe.httpGet.port"), "13134");
    EQ(at(find(x, "Service"), "spec.ports.2"),
       "{\"name\":\"zipkin\",\"protocol\":\"TCP\",\"appProtocol\":\"http\",\"port\":9412,\"targetPort\":9412}");
    s = at(find(x, "ConfigMap"), "data");
    ck_assert_ptr_nonnull(strstr(s, "[fd00::1]:5318"));
    free(s);
    rendered_free(x);
}
END_TEST

START_TEST(render_ipv6_listen_address_default) {
    /* An empty endpoint defaults to 0.0.0.0 and the listen_address port:
     * the IPv6 one's, not the reference's 1, in the ConfigMap and the
     * container and Service ports alike. */
    rendered *x = render_yaml(CR("c", "  config:\n    receivers:\n"
                                      "      otlp: {protocols: {grpc: {listen_address: '[::1]:5317'}}}\n"
                                      "    exporters: {}\n"
                                      "    service: {pipelines: {p: {receivers: [otlp]}}}\n"));
    char *s;
    ck_assert_int_eq(x->rc, 0);
    EQ(at(find(x, "Deployment"), "spec.template.spec.containers.0.ports"),
       "[{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"},"
       "{\"name\":\"otlp-grpc\",\"containerPort\":5317,\"protocol\":\"TCP\"}]");
    EQ(at(find(x, "Service"), "spec.ports"),
       "[{\"name\":\"otlp-grpc\",\"appProtocol\":\"grpc\",\"port\":5317,\"targetPort\":5317}]");
    s = at(find(x, "ConfigMap"), "data");
    ck_assert_ptr_nonnull(strstr(s, "0.0.0.0:5317"));
    ck_assert_ptr_nonnull(strstr(s, "[::1]:5317"));
    free(s);
    rendered_free(x);
}
END_TEST

/* ---- upgrade routines, in memory (reconcile.md 5.6) ----------------------- */

static char *upgraded(const char *config_json, int want_rc) {
    json_object *c = tu_json(config_json);
    ck_assert_int_eq(reconcile_upgrade_config(c), want_rc);
    char *s = strdup(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(c);
    return s;
}

#define TEL(m) "{\"service\":{\"telemetry\":{\"metrics\":" m "}}}"
#define READER(h, p) "{\"pull\":{\"exporter\":{\"prometheus\":{\"host\":\"" h "\",\"port\":" #p "}}}}"

START_TEST(upgrade_address_becomes_reader) {
    EQ(upgraded(TEL("{\"address\":\"0.0.0.0:9999\"}"), 1), TEL("{\"readers\":[" READER("0.0.0.0", 9999) "]}"));
    EQ(upgraded(TEL("{\"address\":\":8888\",\"level\":\"detailed\"}"), 1),
       TEL("{\"level\":\"detailed\",\"readers\":[" READER("0.0.0.0", 8888) "]}"));
    EQ(upgraded(TEL("{\"address\":\"[::]:8888\"}"), 1), TEL("{\"readers\":[" READER("::", 8888) "]}"));
    EQ(upgraded(TEL("{\"address\":\"${env:MY_POD_IP}:8888\"}"), 1),
       TEL("{\"readers\":[" READER("${env:MY_POD_IP}", 8888) "]}"));
    /* an equal reader is not added twice; another one stays first */
    EQ(upgraded(TEL("{\"address\":\"0.0.0.0:8888\",\"readers\":[" READER("0.0.0.0", 8888) "]}"), 1),
       TEL("{\"readers\":[" READER("0.0.0.0", 8888) "]}"));
    EQ(upgraded(TEL("{\"address\":\"0.0.0.0:9090\",\"readers\":[" READER("0.0.0.0", 8888) "]}"), 1),
       TEL("{\"readers\":[" READER("0.0.0.0", 8888) "," READER("0.0.0.0", 9090) "]}"));
}
END_TEST

START_TEST(upgrade_leaves_what_it_cannot_read) {
    EQ(upgraded(TEL("{\"address\":\"\"}"), 0), TEL("{}"));
    EQ(upgraded(TEL("{\"address\":\"localhost\"}"), 0), TEL("{\"address\":\"localhost\"}"));
    EQ(upgraded(TEL("{\"address\":\"0.0.0.0:${env:PORT}\"}"), 0), TEL("{\"address\":\"0.0.0.0:${env:PORT}\"}"));
    EQ(upgraded(TEL("{\"address\":\"::1:8888\"}"), 0), TEL("{\"address\":\"::1:8888\"}"));
    EQ(upgraded(TEL("{\"address\":\"0.0.0.0:70000\"}"), 0), TEL("{\"address\":\"0.0.0.0:70000\"}"));
    EQ(upgraded(TEL("{\"address\":\"0.0.0.0:1\",\"readers\":{}}"), 0), TEL("{\"address\":\"0.0.0.0:1\",\"readers\":{}}"));
    EQ(upgraded("{\"receivers\":{}}", 0), "{\"receivers\":{}}");
}
END_TEST

START_TEST(upgrade_status_version) {
    ck_assert_int_lt(reconcile_version_cmp("0.110.0", "0.158.0"), 0);
    ck_assert_int_lt(reconcile_version_cmp("0.99.0", "0.158.0"), 0);
    ck_assert_int_eq(reconcile_version_cmp("v0.158.0", "0.158.0"), 0);
    ck_assert_int_gt(reconcile_version_cmp("1.0.0", "0.158.0"), 0);
    ck_assert_int_gt(reconcile_version_cmp("0.158.1", "0.158.0"), 0);
    ck_assert_str_eq(reconcile_status_version(NULL, "0.158.0"), "0.158.0");
    ck_assert_str_eq(reconcile_status_version("", "0.158.0"), "0.158.0");
    ck_assert_str_eq(reconcile_status_version("0.110.0", "0.158.0"), "0.158.0");
    ck_assert_str_eq(reconcile_status_version("0.200.0", "0.158.0"), "0.200.0");
}
END_TEST

START_TEST(render_upgrades_the_telemetry_address) {
    rendered *x = render_yaml("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                              "metadata: {name: old, namespace: obs}\n"
                              "spec:\n  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n"
                              "    exporters: {debug: {}}\n"
                              "    service:\n      telemetry: {metrics: {address: '0.0.0.0:9100'}}\n"
                              "      pipelines: {t: {receivers: [otlp], exporters: [debug]}}\n");
    char *data;
    ck_assert_int_eq(x->rc, 0);
    data = at(find(x, "ConfigMap"), "data");
    ck_assert_ptr_null(strstr(data, "address"));
    ck_assert_ptr_nonnull(strstr(data, "port: 9100"));
    free(data);
    ck_assert_uint_eq(x->r.nwarnings, 1);
    ck_assert_str_eq(x->r.warnings[0], "service.telemetry.metrics.address is deprecated: rendered as a prometheus pull "
                                       "reader");
    rendered_free(x);
}
END_TEST

START_TEST(render_target_allocator_by_label) {
    /* An existing allocator named by the label: no CR, the receiver points
     * at that allocator's Service. */
    rendered *x = render_yaml("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                              "metadata: {name: c, labels: {opentelemetry.io/target-allocator: shared}}\n"
                              "spec:\n  mode: daemonset\n  targetAllocator: {enabled: true, allocationStrategy: per-node, mtls: {}}\n"
                              "  config:\n    receivers: {prometheus: {config: {scrape_configs: [{job_name: self}]}}}\n"
                              "    exporters: {debug: {}}\n"
                              "    service: {pipelines: {m: {receivers: [prometheus], exporters: [debug]}}}\n");
    char *data;
    ck_assert_int_eq(x->rc, 0);
    ck_assert_ptr_null(find(x, "TargetAllocator"));
    data = at(find(x, "ConfigMap"), "data");
    ck_assert_ptr_nonnull(strstr(data, "endpoint: http://shared-targetallocator:80"));
    ck_assert_ptr_null(strstr(data, "scrape_configs"));
    free(data);
    ck_assert_uint_eq(x->r.nwarnings, 0);
    rendered_free(x);
    /* The label alone, without spec.targetAllocator (targetallocator-label/
     * 01-add-ta-label.yaml): the receiver is rewritten all the same. */
    x = render_yaml("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                    "metadata: {name: c, labels: {opentelemetry.io/target-allocator: shared}}\n"
                    "spec:\n  mode: statefulset\n"
                    "  config:\n    receivers: {prometheus: {config: {scrape_configs: []}}}\n"
                    "    exporters: {debug: {}}\n"
                    "    service: {pipelines: {m: {receivers: [prometheus], exporters: [debug]}}}\n");
    ck_assert_int_eq(x->rc, 0);
    ck_assert_ptr_null(find(x, "TargetAllocator"));
    ck_assert_ptr_nonnull(strstr(jstr(jmap(find(x, "ConfigMap"), "data"), "collector.yaml"),
                                 "\n    prometheus:\n        config: {}\n        target_allocator:\n"
                                 "            collector_id: ${POD_NAME}\n"
                                 "            endpoint: http://shared-targetallocator:80\n"
                                 "            interval: 30s\n"));
    rendered_free(x);
}
END_TEST

/* ---- the Target Allocator's config (targetallocator.md 6) ------------- */

START_TEST(ta_go_durations) {
    static const char *const cases[][2] = {{"30s", "30s"}, {"2m", "2m0s"}, {"1h", "1h0m0s"}, {"1.5s", "1.5s"},
                                           {"90s", "1m30s"}, {"300ms", "300ms"}, {"0", "0s"}, {"0s", "0s"},
                                           {"1h30m15.25s", "1h30m15.25s"}, {"1500us", "1.5ms"}, {"-5s", "-5s"},
                                           {"2ns", "2ns"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) EQ(reconcile_go_duration_normal(cases[i][0]), cases[i][1]);
    static const char *const bad[] = {"", "s", "10", "1x", "1.s5", "--1s"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) ck_assert_ptr_null(reconcile_go_duration_normal(bad[i]));
}
END_TEST

/* yaml.v2's natural key order (6.5 item 2). */
START_TEST(ta_yaml_v2_key_order) {
    json_object *o = tu_json("{\"b\":1,\"a10\":1,\"a2\":1,\"B\":1,\"_z\":1,\"a\":1,\"a-b\":1,\"a02\":1}");
    json_object *s = reconcile_yaml_v2_sorted(o);
    EQ(tu_str(s), "{\"_z\":1,\"B\":1,\"a\":1,\"a-b\":1,\"a2\":1,\"a02\":1,\"a10\":1,\"b\":1}");
    json_object_put(s);
    json_object_put(o);
}
END_TEST

static char *ta_text(const char *ta_json, const char *collector_json, char *err) {
    json_object *ta = tu_json(ta_json), *col = collector_json ? tu_json(collector_json) : NULL;
    reconcile_ta_config_in in = {.spec = json_object_object_get(ta, "spec"), .collector = col,
                                 .collector_ns = "default"};
    char *t = reconcile_ta_config_text(&in, err, 256);
    json_object_put(ta);
    json_object_put(col);
    return t;
}

/* 6.6's worked examples, byte for byte. */
START_TEST(ta_config_worked_examples) {
    char err[256] = "";
    EQ(ta_text("{\"spec\":{\"allocationStrategy\":\"consistent-hashing\",\"filterStrategy\":\"relabel-config\"}}",
               "{\"metadata\":{\"name\":\"my-instance\"},\"spec\":{\"config\":{\"receivers\":{\"prometheus\":"
               "{\"config\":{\"scrape_configs\":[{\"job_name\":\"otel-collector\",\"scrape_interval\":\"10s\","
               "\"static_configs\":[{\"targets\":[\"0.0.0.0:8888\",\"0.0.0.0:9999\"]}]}]}}}}}}",
               err),
       "allocation_strategy: consistent-hashing\ncollector_selector:\n  matchlabels:\n"
       "    app.kubernetes.io/component: opentelemetry-collector\n    app.kubernetes.io/instance: default.my-instance\n"
       "    app.kubernetes.io/managed-by: opentelemetry-operator\n    app.kubernetes.io/part-of: opentelemetry\n"
       "  matchexpressions: []\nconfig:\n  scrape_configs:\n  - job_name: otel-collector\n    scrape_interval: 10s\n"
       "    static_configs:\n    - targets:\n      - 0.0.0.0:8888\n      - 0.0.0.0:9999\nfilter_strategy: relabel-config\n");
    EQ(ta_text("{\"spec\":null}", NULL, err),
       "allocation_strategy: consistent-hashing\ncollector_selector: null\nfilter_strategy: \"\"\n");
    /* https with mTLS, ":8443" plain */
    EQ(ta_text("{\"spec\":{\"mtls\":{\"enabled\":true},\"filterStrategy\":\"relabel-config\"}}", NULL, err),
       "allocation_strategy: consistent-hashing\ncollector_selector: null\nfilter_strategy: relabel-config\nhttps:\n"
       "  ca_file_path: /tls/ca.crt\n  enabled: true\n  listen_addr: :8443\n  tls_cert_file_path: /tls/tls.crt\n"
       "  tls_key_file_path: /tls/tls.key\n");
    /* the collector's errors (6.2) */
    ck_assert_ptr_null(ta_text("{\"spec\":{}}", "{\"spec\":{\"config\":{\"receivers\":{\"prometheus/a\":{},"
                                                  "\"prometheus/b\":{}}}}}", err));
    ck_assert_str_eq(err, "the target allocator requires a receiver named exactly \"prometheus\", but only named "
                          "instances were found: prometheus/a, prometheus/b; rename one of them to \"prometheus\"");
    ck_assert_ptr_null(ta_text("{\"spec\":{}}", "{\"spec\":{\"config\":{\"receivers\":{\"otlp\":{}}}}}", err));
    ck_assert_str_eq(err, "no prometheus available as part of the configuration");
    ck_assert_ptr_null(ta_text("{\"spec\":{}}", "{\"spec\":{\"config\":{}}}", err));
    ck_assert_str_eq(err, "no receivers available as part of the configuration");
    ck_assert_ptr_null(ta_text("{\"spec\":{}}", "{\"spec\":{\"config\":{\"receivers\":{\"prometheus\":{\"config\":{}}}}}}", err));
    ck_assert_str_eq(err, "no scrape_configs available as part of the configuration");
    ck_assert_ptr_null(ta_text("{\"spec\":{\"collectorNotReadyGracePeriod\":\"soon\"}}", NULL, err));
    ck_assert_str_eq(err, "spec.collectorNotReadyGracePeriod: not a duration: \"soon\"");
}
END_TEST

/* 15.4: the webhooks' mTLS checks, in order, with their messages. */
START_TEST(ta_mtls_checks) {
    static const char *const cases[][2] = {
        {"{\"enabled\":false}", ""},
        {"{\"enabled\":true,\"useCertManager\":true}", ""},
        {"{\"enabled\":true,\"useCertManager\":false,\"tls\":{\"serverCertificate\":{}}}",
         "mTLS is enabled with useCertManager set to false; tls.serverCertificate and tls.clientCertificate must both "
         "be set"},
        {"{\"enabled\":true,\"useCertManager\":false,\"tls\":{\"serverCertificate\":{},\"clientCertificate\":{}}}",
         "mTLS is enabled with useCertManager set to false; tls.certificateAuthorityCertificate must be set"},
        {"{\"enabled\":true,\"useCertManager\":false,\"tls\":{\"serverCertificate\":{},\"clientCertificate\":{},"
         "\"certificateAuthorityCertificate\":{\"secret\":{},\"configMap\":{}}}}",
         "tls.certificateAuthorityCertificate must set exactly one of secret or configMap"},
        {"{\"enabled\":true,\"useCertManager\":false,\"tls\":{\"serverCertificate\":{},\"clientCertificate\":{},"
         "\"certificateAuthorityCertificate\":{\"secret\":{\"name\":\"ca\"}}}}",
         ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_object *m = tu_json(cases[i][0]);
        char err[256] = "";
        int rc = reconcile_ta_mtls_check(m, 1, err, sizeof err);
        ck_assert_int_eq(rc, cases[i][1][0] ? -1 : 0);
        ck_assert_str_eq(err, cases[i][1]);
        json_object_put(m);
    }
    json_object *m = tu_json("{\"enabled\":true,\"useCertManager\":true}");
    char err[256] = "";
    ck_assert_int_eq(reconcile_ta_mtls_check(m, 0, err, sizeof err), -1);
    ck_assert_str_eq(err, "mTLS is enabled with useCertManager but cert-manager is not available; install cert-manager "
                          "and restart the operator, or set useCertManager to false");
    json_object_put(m);
}
END_TEST

/* 3.4: the owner first, then the one label; two labels are an error. */
START_TEST(ta_bound_collector) {
    json_object *cols = tu_json("[{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\",\"labels\":"
                                "{\"opentelemetry.io/target-allocator\":\"t\"}}},{\"metadata\":{\"name\":\"b\","
                                "\"namespace\":\"m\",\"labels\":{\"opentelemetry.io/target-allocator\":\"t\"}}},"
                                "{\"metadata\":{\"name\":\"o\",\"namespace\":\"n\"}}]");
    json_object *t = tu_json("{\"metadata\":{\"name\":\"t\",\"namespace\":\"n\"}}");
    char err[256];
    json_object *c = reconcile_ta_bound_collector(t, cols, err, sizeof err);
    ck_assert_ptr_nonnull(c);
    ck_assert_str_eq(jstr(jmap(c, "metadata"), "name"), "a");
    json_object_put(t);
    t = tu_json("{\"metadata\":{\"name\":\"t\",\"namespace\":\"n\",\"ownerReferences\":[{\"kind\":"
                "\"OpenTelemetryCollector\",\"name\":\"o\"}]}}");
    c = reconcile_ta_bound_collector(t, cols, err, sizeof err);
    ck_assert_str_eq(jstr(jmap(c, "metadata"), "name"), "o");
    json_object_put(t);
    t = tu_json("{\"metadata\":{\"name\":\"t\"}}");
    ck_assert_ptr_null(reconcile_ta_bound_collector(t, cols, err, sizeof err));
    ck_assert_str_eq(err, "found multiple OpenTelemetry collectors annotated with the same Target Allocator: /t");
    json_object_put(t);
    json_object_put(cols);
}
END_TEST

/* tests/e2e/managed-reconcile/02-*: the ConfigMap text is the reference's
 * byte for byte, defaulted endpoints plain (goccy/go-yaml quotes no
 * host:port). */
START_TEST(render_configmap_text_as_reference) {
    rendered *x = render_yaml(CR("simplest", "  managementState: managed\n  config:\n    receivers:\n"
                                             "      otlp:\n        protocols:\n          grpc: {}\n          http: {}\n"
                                             "    exporters:\n      debug: {}\n\n    service:\n      pipelines:\n"
                                             "        traces:\n          receivers: [otlp]\n          exporters: [debug]\n"));
    ck_assert_int_eq(x->rc, 0);
    json_object *cm = find(x, "ConfigMap");
    ck_assert_ptr_nonnull(cm);
    ck_assert_str_eq(jstr(jmap(cm, "data"), "collector.yaml"),
                     "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: 0.0.0.0:4317\n"
                     "      http:\n        endpoint: 0.0.0.0:4318\nexporters:\n  debug: {}\nservice:\n"
                     "  telemetry:\n    metrics:\n      readers:\n        - pull:\n            exporter:\n"
                     "              prometheus:\n                host: 0.0.0.0\n                port: 8888\n"
                     "  pipelines:\n    traces:\n      exporters:\n        - debug\n      receivers:\n        - otlp\n");
    rendered_free(x);
}
END_TEST

/* tests/e2e/conversion-webhook-invalid-config: a v1alpha1 collector with
 * config "null" converts to the empty config and is rendered: a
 * Deployment with otc-container, the defaulted empty config mounted. */
START_TEST(render_v1alpha1_null_config) {
    rendered *x = render_yaml("apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\n"
                              "metadata:\n  name: invalid-config-collector\nspec:\n  mode: deployment\n"
                              "  config: \"null\"\n");
    ck_assert_msg(x->rc == 0, "%s", x->err);
    json_object *d = find(x, "Deployment");
    ck_assert_ptr_nonnull(d);
    ck_assert_str_eq(jstr(jmap(d, "metadata"), "name"), "invalid-config-collector-collector");
    EQ(at(d, "spec.template.spec.containers.0.name"), "\"otc-container\"");
    ck_assert_str_eq(jstr(jmap(find(x, "ConfigMap"), "data"), "collector.yaml"),
                     "receivers: {}\nexporters: {}\nservice:\n  telemetry:\n    metrics:\n      readers:\n"
                     "        - pull:\n            exporter:\n              prometheus:\n"
                     "                host: 0.0.0.0\n                port: 8888\n  pipelines: {}\n");
    ck_assert_uint_eq(x->r.nwarnings, 0);
    rendered_free(x);
}
END_TEST

/* owner.c: an object is ours by the owner's uid, never by its name. */
START_TEST(owner_is_ours_by_uid) {
    const reconcile_kind *dep = reconcile_kind_of("apps/v1", "Deployment");
    const reconcile_kind *role = reconcile_kind_of("rbac.authorization.k8s.io/v1", "ClusterRole");
    ck_assert_ptr_nonnull(dep);
    ck_assert_ptr_nonnull(role);
    const struct {
        const reconcile_kind *k;
        const char *obj, *why; /* why NULL: ours */
    } cases[] = {
        {dep, "{\"metadata\":{\"ownerReferences\":[{\"kind\":\"OpenTelemetryCollector\",\"name\":\"api\","
              "\"uid\":\"U1\",\"controller\":true}]}}", NULL},
        /* the uid decides, not the kind or name it says */
        {dep, "{\"metadata\":{\"ownerReferences\":[{\"kind\":\"OpenTelemetryCollector\",\"name\":\"api\","
              "\"uid\":\"U0\",\"controller\":true}]}}",
         "its controller is OpenTelemetryCollector api (uid U0), not this one (uid U1)"},
        {dep, "{\"metadata\":{\"ownerReferences\":[{\"kind\":\"Rollout\",\"name\":\"api\",\"uid\":\"R\","
              "\"controller\":true}]}}", "its controller is Rollout api (uid R), not this one (uid U1)"},
        /* an ownerReference that is not the controller proves nothing */
        {dep, "{\"metadata\":{\"ownerReferences\":[{\"uid\":\"U1\"}]}}", "it has no controller ownerReference"},
        {dep, "{\"metadata\":{\"name\":\"api-collector\"}}", "it has no controller ownerReference"},
        {role, "{\"metadata\":{\"labels\":{\"app.kubernetes.io/managed-by\":\"opentelemetry-operator\"},"
               "\"annotations\":{\"otel-reconcile/collector\":\"prod/api\",\"otel-reconcile/collector-uid\":\"U1\"}}}",
         NULL},
        {role, "{\"metadata\":{\"annotations\":{\"otel-reconcile/collector\":\"prod/api\","
               "\"otel-reconcile/collector-uid\":\"U1\"}}}",
         "it lacks the label app.kubernetes.io/managed-by=opentelemetry-operator"},
        {role, "{\"metadata\":{\"labels\":{\"app.kubernetes.io/managed-by\":\"opentelemetry-operator\"}}}",
         "it has no otel-reconcile/collector annotation"},
        {role, "{\"metadata\":{\"labels\":{\"app.kubernetes.io/managed-by\":\"opentelemetry-operator\"},"
               "\"annotations\":{\"otel-reconcile/collector\":\"prod/web\",\"otel-reconcile/collector-uid\":\"U1\"}}}",
         "its otel-reconcile/collector annotation names prod/web"},
        {role, "{\"metadata\":{\"labels\":{\"app.kubernetes.io/managed-by\":\"opentelemetry-operator\"},"
               "\"annotations\":{\"otel-reconcile/collector\":\"prod/api\"}}}",
         "it has no otel-reconcile/collector-uid annotation"},
        {role, "{\"metadata\":{\"labels\":{\"app.kubernetes.io/managed-by\":\"opentelemetry-operator\"},"
               "\"annotations\":{\"otel-reconcile/collector\":\"prod/api\",\"otel-reconcile/collector-uid\":\"U0\"}}}",
         "its otel-reconcile/collector-uid annotation is U0, not this collector's U1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *o = json_tokener_parse(cases[i].obj);
        char why[512] = "";
        ck_assert_ptr_nonnull(o);
        bool ours = reconcile_owner_is_ours(cases[i].k, o, "prod", "api", "U1", why, sizeof why);
        ck_assert_msg(ours == !cases[i].why, "case %zu: ours=%d (%s)", i, ours, why);
        if (cases[i].why) ck_assert_str_eq(why, cases[i].why);
        json_object_put(o);
    }
}
END_TEST

START_TEST(stream_one_bad_does_not_hide_others) {
    const char *text = CR("a", EMPTY_CONFIG) "---\n" CR("b", "  mode: job\n" EMPTY_CONFIG)
        "---\nkind: [unclosed\n---\n" CR("c", "  mode: sidecar\n" EMPTY_CONFIG);
    char *out = NULL, *diag = NULL;
    size_t outn = 0, diagn = 0;
    FILE *fo = open_memstream(&out, &outn), *fd = open_memstream(&diag, &diagn);
    reconcile_options opt;
    reconcile_stream_stats st;
    reconcile_options_default(&opt);
    reconcile_render_stream("in.yaml", text, strlen(text), "ns", &opt, fo, fd, &st);
    fclose(fo);
    fclose(fd);
    ck_assert_uint_eq(st.collectors, 2);
    ck_assert_uint_eq(st.failed, 2);
    ck_assert_uint_eq(st.objects, 8);
    ck_assert_str_eq(diag, "in.yaml:12: b: spec.mode: Unsupported value: \"job\": supported values: \"daemonset\", "
                           "\"deployment\", \"sidecar\", \"statefulset\"\n"
                           "in.yaml:24: did not find expected ',' or ']'\n");
    ck_assert_ptr_nonnull(strstr(out, "name: c-collector-bd40e3c9"));
    free(out);
    free(diag);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("reconcile");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hash_build_collector_base);
    tcase_add_test(tc, hash_versioned_configmaps_after_defaults);
    tcase_add_test(tc, hash_defaulting_is_idempotent);
    tcase_add_test(tc, go_json_struct_order_and_omission);
    tcase_add_test(tc, go_json_strings);
    tcase_add_test(tc, go_json_numbers);
    tcase_add_test(tc, go_json_non_finite_is_an_error);
    tcase_add_test(tc, names_table);
    tcase_add_test(tc, names_truncate_rules);
    tcase_add_test(tc, names_dns);
    tcase_add_test(tc, service_ports_multi_protocol);
    tcase_add_test(tc, service_ports_single_and_generic);
    tcase_add_test(tc, service_ports_exporters_extensions);
    tcase_add_test(tc, service_ports_spec_ports_merge);
    tcase_add_test(tc, service_ports_ipv6_endpoints);
    tcase_add_test(tc, render_counts_per_mode);
    tcase_add_test(tc, render_hpa);
    tcase_add_test(tc, render_errors);
    tcase_add_test(tc, render_unmanaged_renders_nothing);
    tcase_add_test(tc, render_version_label);
    tcase_add_test(tc, rbac_rules);
    tcase_add_test(tc, rbac_order_is_stable);
    tcase_add_test(tc, render_network_policy_keeps_udp);
    tcase_add_test(tc, render_prometheus_port_from_config);
    tcase_add_test(tc, render_odd_shapes);
    tcase_add_test(tc, render_ipv6_endpoints);
    tcase_add_test(tc, render_ipv6_listen_address_default);
    tcase_add_test(tc, upgrade_address_becomes_reader);
    tcase_add_test(tc, upgrade_leaves_what_it_cannot_read);
    tcase_add_test(tc, upgrade_status_version);
    tcase_add_test(tc, render_upgrades_the_telemetry_address);
    tcase_add_test(tc, render_target_allocator_by_label);
    tcase_add_test(tc, ta_go_durations);
    tcase_add_test(tc, ta_yaml_v2_key_order);
    tcase_add_test(tc, ta_config_worked_examples);
    tcase_add_test(tc, ta_bound_collector);
    tcase_add_test(tc, ta_mtls_checks);
    tcase_add_test(tc, render_configmap_text_as_reference);
    tcase_add_test(tc, render_v1alpha1_null_config);
    tcase_add_test(tc, stream_one_bad_does_not_hide_others);
    tcase_add_test(tc, owner_is_ours_by_uid);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return tu_run(suite());
}
