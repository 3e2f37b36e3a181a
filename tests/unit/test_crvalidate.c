/* tests/unit/test_crvalidate.c - the OpenTelemetryCollector webhook's
 * defaulting and validation (collector/defaults.c, collector/validate.c)
 * against cr-admission.md 2 and 3: every step of the defaulting with the
 * object it gives, every rule with its exact message, the order of the
 * rules, and where we do better than the reference (spec 8). */
#include "collector/defaults.h"
#include "collector/shape.h"
#include "collector/validate.h"

#include "base/json.h"
#include "kube/yaml.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CFG                                                                                                        \
    "  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {debug: {}}\n"                       \
    "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"

static json_object *yaml(const char *text) {
    kube_yaml_error ye;
    json_object *o = kube_yaml_parse_one(text, strlen(text), &ye);
    ck_assert_msg(o != NULL, "bad test YAML (line %d: %s):\n%s", ye.line, ye.msg, text);
    return o;
}

/* A collector with spec lines (and CFG unless they hold a config). */
static json_object *cr(const char *spec) {
    char *t;
    if (asprintf(&t, "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                     "metadata: {name: c, namespace: ns}\nspec:\n%s%s",
                 spec, strstr(spec, "  config:") ? "" : CFG) < 0)
        abort();
    json_object *o = yaml(t);
    free(t);
    return o;
}

/* ---- a fake authorizer ---------------------------------------------------- */

/* "user verb group/resource" or "user verb url" lines that are allowed;
 * "*" as the user allows everyone. fail makes every question an error. */
typedef struct fake_authz {
    const char *const *allow;
    const char *fail;
    const char *fail_for; /* fail only for users starting with this */
    int asked;
    char last_groups[256];
} fake_authz;

static int fake_allowed(void *ud, const collector_subject *who, const char *verb, const char *group,
                        const char *resource, const char *path, char *err, size_t errlen) {
    fake_authz *f = ud;
    f->asked++;
    f->last_groups[0] = 0;
    for (size_t i = 0; i < who->ngroups; i++) {
        strncat(f->last_groups, who->groups[i], sizeof f->last_groups - strlen(f->last_groups) - 2);
        strcat(f->last_groups, ",");
    }
    if (f->fail && (!f->fail_for || !strncmp(who->user, f->fail_for, strlen(f->fail_for)))) {
        snprintf(err, errlen, "%s", f->fail);
        return -1;
    }
    char what[512];
    if (resource) snprintf(what, sizeof what, "%s %s/%s", verb, group, resource);
    else snprintf(what, sizeof what, "%s %s", verb, path);
    for (const char *const *a = f->allow; a && *a; a++) {
        char line[600];
        snprintf(line, sizeof line, "%s %s", who->user, what);
        if (!strcmp(*a, line)) return 1;
        snprintf(line, sizeof line, "* %s", what);
        if (!strcmp(*a, line)) return 1;
    }
    return 0;
}

/* ---- running the webhook's steps --------------------------------------------- */

typedef struct result {
    int rc;
    verdict v;
} result;

static result validate_opts(json_object *o, json_object *old, verdict_op op, const collector_validate_opts *vo) {
    result r = {0, VERDICT_INIT};
    char err[512] = "";
    ck_assert_msg(collector_default_spec(o, err, sizeof err) == 0, "defaulting failed: %s", err);
    if (old) ck_assert_msg(collector_default_spec(old, err, sizeof err) == 0, "defaulting old failed: %s", err);
    r.rc = collector_validate(o, old, op, vo, &r.v);
    return r;
}

static result validate(const char *spec) {
    collector_validate_opts vo = {.cert_manager = 1};
    json_object *o = cr(spec);
    result r = validate_opts(o, NULL, VERDICT_CREATE, &vo);
    json_object_put(o);
    return r;
}

static void refused(const char *spec, const char *rule, const char *msg) {
    result r = validate(spec);
    ck_assert_msg(r.rc == -1, "allowed: %s", spec);
    ck_assert_str_eq(r.v.message, msg);
    ck_assert_str_eq(r.v.rule, rule);
    verdict_free(&r.v);
}

static void allowed(const char *spec) {
    result r = validate(spec);
    ck_assert_msg(r.rc == 0, "refused (%s): %s\n%s", r.v.rule, r.v.message, spec);
    ck_assert_uint_eq(r.v.nwarnings, 0);
    verdict_free(&r.v);
}

static void warned(const char *spec, const char *warning) {
    result r = validate(spec);
    ck_assert_msg(r.rc == 0, "refused (%s): %s", r.v.rule, r.v.message);
    ck_assert_uint_eq(r.v.nwarnings, 1);
    ck_assert_str_eq(r.v.warnings[0], warning);
    verdict_free(&r.v);
}

#define M "the OpenTelemetry Collector mode is set to "

/* ---- defaulting (2.2, 2.3) ------------------------------------------------- */

static void defaults_to(const char *in, const char *want_spec) {
    json_object *o = yaml(in);
    char err[512] = "";
    ck_assert_msg(collector_default_spec(o, err, sizeof err) == 0, "%s", err);
    char *got = tu_str(jget(o, "spec"));
    ck_assert_str_eq(got, want_spec);
    /* idempotent */
    ck_assert_int_eq(collector_default_spec(o, err, sizeof err), 0);
    char *again = tu_str(jget(o, "spec"));
    ck_assert_str_eq(again, want_spec);
    free(got);
    free(again);
    json_object_put(o);
}

#define READER "{\"metrics\":{\"readers\":[{\"pull\":{\"exporter\":{\"prometheus\":{\"host\":\"0.0.0.0\",\"port\":8888}}}}]}}"

START_TEST(defaults_appendix_a1) {
    /* A.1: the minimal CREATE. Steps 1, 2, 4, 9, 10, then the config. */
    defaults_to("kind: OpenTelemetryCollector\nspec: {config: {receivers: {otlp: {protocols: {grpc: {}}}}, "
                "exporters: {debug: {}}, service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}}\n",
                "{\"config\":{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":\"0.0.0.0:4317\"}}}},"
                "\"exporters\":{\"debug\":{}},\"service\":{\"pipelines\":{\"traces\":{\"receivers\":[\"otlp\"],"
                "\"exporters\":[\"debug\"]}},\"telemetry\":" READER "}},"
                "\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                "\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
}
END_TEST

START_TEST(defaults_each_step) {
    /* Set values are kept; empty strings count as unset (steps 1, 2, 9). */
    defaults_to("spec: {mode: sidecar, upgradeStrategy: none, replicas: 3, managementState: unmanaged,"
                " networkPolicy: {enabled: false}}\n",
                "{\"mode\":\"sidecar\",\"upgradeStrategy\":\"none\",\"replicas\":3,\"managementState\":\"unmanaged\","
                "\"networkPolicy\":{\"enabled\":false}}");
    defaults_to("spec: {mode: '', upgradeStrategy: '', managementState: ''}\n",
                "{\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\",\"managementState\":\"managed\","
                "\"replicas\":1,\"networkPolicy\":{\"enabled\":true}}");
    /* Step 5: the allocator's replicas only when it is enabled. */
    defaults_to("spec: {replicas: 2, targetAllocator: {enabled: true}}\n",
                "{\"replicas\":2,\"targetAllocator\":{\"enabled\":true,\"replicas\":1},\"mode\":\"deployment\","
                "\"upgradeStrategy\":\"automatic\",\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
    defaults_to("spec: {replicas: 2, targetAllocator: {enabled: false}}\n",
                "{\"replicas\":2,\"targetAllocator\":{\"enabled\":false},\"mode\":\"deployment\","
                "\"upgradeStrategy\":\"automatic\",\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
    /* Step 6: with maxReplicas, minReplicas from replicas (after step 4),
     * CPU 90 unless a target is set; without maxReplicas nothing. */
    defaults_to("spec: {autoscaler: {maxReplicas: 5}}\n",
                "{\"autoscaler\":{\"maxReplicas\":5,\"minReplicas\":1,\"targetCPUUtilization\":90},"
                "\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                "\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
    defaults_to("spec: {replicas: 3, autoscaler: {maxReplicas: 5, targetMemoryUtilization: 70}}\n",
                "{\"replicas\":3,\"autoscaler\":{\"maxReplicas\":5,\"targetMemoryUtilization\":70,\"minReplicas\":3},"
                "\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\",\"managementState\":\"managed\","
                "\"networkPolicy\":{\"enabled\":true}}");
    defaults_to("spec: {autoscaler: {minReplicas: 2}}\n",
                "{\"autoscaler\":{\"minReplicas\":2},\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\","
                "\"replicas\":1,\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
    /* Steps 7, 8. */
    defaults_to("spec: {ingress: {type: route}}\n",
                "{\"ingress\":{\"type\":\"route\",\"route\":{\"termination\":\"edge\"}},\"mode\":\"deployment\","
                "\"upgradeStrategy\":\"automatic\",\"replicas\":1,\"managementState\":\"managed\","
                "\"networkPolicy\":{\"enabled\":true}}");
    defaults_to("spec: {ingress: {type: ingress}}\n",
                "{\"ingress\":{\"type\":\"ingress\",\"ruleType\":\"path\"},\"mode\":\"deployment\","
                "\"upgradeStrategy\":\"automatic\",\"replicas\":1,\"managementState\":\"managed\","
                "\"networkPolicy\":{\"enabled\":true}}");
    defaults_to("spec: {ingress: {type: ingress, ruleType: subdomain}, networkPolicy: {}}\n",
                "{\"ingress\":{\"type\":\"ingress\",\"ruleType\":\"subdomain\"},\"networkPolicy\":{\"enabled\":true},"
                "\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                "\"managementState\":\"managed\"}");
}
END_TEST

START_TEST(defaults_config_unit_example) {
    /* 2.3's example: null protocols get their endpoints, debug: null stays,
     * headers survive, an explicit endpoint is kept. */
    defaults_to("spec:\n  mode: sidecar\n  config:\n    receivers: {otlp: {protocols: {grpc: null, http: null}}}\n"
                "    exporters: {debug: null}\n"
                "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n",
                "{\"mode\":\"sidecar\",\"config\":{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"endpoint\":"
                "\"0.0.0.0:4317\"},\"http\":{\"endpoint\":\"0.0.0.0:4318\"}}}},\"exporters\":{\"debug\":null},"
                "\"service\":{\"pipelines\":{\"traces\":{\"receivers\":[\"otlp\"],\"exporters\":[\"debug\"]}},"
                "\"telemetry\":" READER "}},\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                "\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
    defaults_to("spec:\n  mode: sidecar\n  config:\n    receivers: {otlp: {protocols: {grpc: {headers: {example: another}},"
                " http: {endpoint: '0.0.0.0:4000'}}}}\n"
                "    service: {telemetry: {metrics: {address: ':9999'}}, pipelines: {t: {receivers: [otlp]}}}\n",
                "{\"mode\":\"sidecar\",\"config\":{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{\"headers\":"
                "{\"example\":\"another\"},\"endpoint\":\"0.0.0.0:4317\"},\"http\":{\"endpoint\":\"0.0.0.0:4000\"}}}},"
                "\"service\":{\"telemetry\":{\"metrics\":{\"address\":\":9999\"}},\"pipelines\":{\"t\":{\"receivers\":"
                "[\"otlp\"]}}}},\"upgradeStrategy\":\"automatic\",\"replicas\":1,\"managementState\":\"managed\","
                "\"networkPolicy\":{\"enabled\":true}}");
    /* Endpoint rule: ":4317" and "4317" get the host; a host alone is kept
     * (8.13); a receiver with no protocols key gets protocols: {}. */
    defaults_to("spec:\n  mode: sidecar\n  config:\n    receivers: {zipkin: {endpoint: '9412'}, "
                "statsd: {endpoint: myhost}, otlp: {}}\n"
                "    service: {telemetry: {metrics: {readers: [{periodic: {}}]}}, pipelines: {t: {receivers: [zipkin, "
                "statsd, otlp]}}}\n",
                "{\"mode\":\"sidecar\",\"config\":{\"receivers\":{\"zipkin\":{\"endpoint\":\"0.0.0.0:9412\"},"
                "\"statsd\":{\"endpoint\":\"myhost\"},\"otlp\":{\"protocols\":{}}},\"service\":{\"telemetry\":"
                "{\"metrics\":{\"readers\":[{\"periodic\":{}}]}},\"pipelines\":{\"t\":{\"receivers\":[\"zipkin\","
                "\"statsd\",\"otlp\"]}}}},\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                "\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
}
END_TEST

/* Walks a '/'-separated path of map keys. */
static json_object *at(json_object *o, const char *path) {
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *save = NULL, *k = strtok_r(buf, "/", &save); k && o; k = strtok_r(NULL, "/", &save)) o = jget(o, k);
    return o;
}

/* 2.3's table, every row: each component that has a default endpoint gets
 * it (multi-protocol receivers per protocol present), health_check its
 * path too, jaeger_query's grpc only when set; the components the table
 * leaves out are not touched. */
START_TEST(defaults_endpoint_table) {
    json_object *o = yaml("spec:\n  config:\n    receivers:\n"
                          "      otlp: {protocols: {grpc: {}, http: {}}}\n"
                          "      jaeger: {protocols: {grpc: {}, thrift_http: {}, thrift_compact: {}, thrift_binary: {}}}\n"
                          "      loki: {protocols: {grpc: {}, http: {}}}\n"
                          "      skywalking: {protocols: {grpc: {}, http: {}}}\n"
                          "      awsxray: {}\n      carbon: {}\n      collectd: {}\n      fluent_forward: {}\n"
                          "      fluentforward: {}\n      influxdb: {}\n      sapm: {}\n      signalfx: {}\n"
                          "      splunk_hec: {}\n      statsd: {}\n      wavefront: {}\n      zipkin: {}\n"
                          "      tcplog: {listen_address: '0.0.0.0:54525'}\n      udplog: {listen_address: '0.0.0.0:54526'}\n"
                          "      kubeletstats: {}\n      k8s_cluster: {}\n      prometheus: {config: {scrape_configs: []}}\n"
                          "      mystery: {}\n"
                          "    exporters: {prometheus: {}, debug: {}, otlp: {endpoint: 'x:4317'}}\n"
                          "    extensions: {health_check: {}, jaeger_query: {http: {}}, pprof: {}}\n"
                          "    service:\n      extensions: [health_check, jaeger_query, pprof]\n      pipelines:\n"
                          "        traces: {receivers: [otlp, jaeger, skywalking, awsxray, zipkin, sapm, mystery], "
                          "exporters: [debug, otlp]}\n"
                          "        metrics: {receivers: [carbon, collectd, influxdb, signalfx, splunk_hec, statsd, "
                          "wavefront, kubeletstats, k8s_cluster, prometheus], exporters: [prometheus]}\n"
                          "        logs: {receivers: [loki, fluent_forward, fluentforward, tcplog, udplog], "
                          "exporters: [debug]}\n");
    char err[512] = "";
    ck_assert_msg(collector_default_spec(o, err, sizeof err) == 0, "%s", err);
    json_object *c = at(o, "spec/config");
    static const char *const want[][2] = {
        {"receivers/otlp/protocols/grpc/endpoint", "0.0.0.0:4317"},
        {"receivers/otlp/protocols/http/endpoint", "0.0.0.0:4318"},
        {"receivers/jaeger/protocols/grpc/endpoint", "0.0.0.0:14250"},
        {"receivers/jaeger/protocols/thrift_http/endpoint", "0.0.0.0:14268"},
        {"receivers/jaeger/protocols/thrift_compact/endpoint", "0.0.0.0:6831"},
        {"receivers/jaeger/protocols/thrift_binary/endpoint", "0.0.0.0:6832"},
        {"receivers/loki/protocols/grpc/endpoint", "0.0.0.0:9095"},
        {"receivers/loki/protocols/http/endpoint", "0.0.0.0:3100"},
        {"receivers/skywalking/protocols/grpc/endpoint", "0.0.0.0:11800"},
        {"receivers/skywalking/protocols/http/endpoint", "0.0.0.0:12800"},
        {"receivers/awsxray/endpoint", "0.0.0.0:2000"},
        {"receivers/carbon/endpoint", "0.0.0.0:2003"},
        {"receivers/collectd/endpoint", "0.0.0.0:8081"},
        {"receivers/fluent_forward/endpoint", "0.0.0.0:8006"},
        {"receivers/fluentforward/endpoint", "0.0.0.0:8006"},
        {"receivers/influxdb/endpoint", "0.0.0.0:8086"},
        {"receivers/sapm/endpoint", "0.0.0.0:7276"},
        {"receivers/signalfx/endpoint", "0.0.0.0:9943"},
        {"receivers/splunk_hec/endpoint", "0.0.0.0:8088"},
        {"receivers/statsd/endpoint", "0.0.0.0:8125"},
        {"receivers/wavefront/endpoint", "0.0.0.0:2003"},
        {"receivers/zipkin/endpoint", "0.0.0.0:9411"},
        {"exporters/prometheus/endpoint", "0.0.0.0:8888"},
        {"exporters/otlp/endpoint", "x:4317"},
        {"extensions/health_check/endpoint", "0.0.0.0:13133"},
        {"extensions/health_check/path", "/"},
        {"extensions/jaeger_query/http/endpoint", "0.0.0.0:16686"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const char *got = json_object_get_string(at(c, want[i][0]));
        ck_assert_msg(got && !strcmp(got, want[i][1]), "%s: %s, want %s", want[i][0], got ? got : "(absent)",
                      want[i][1]);
    }
    ck_assert_ptr_null(at(c, "extensions/jaeger_query/grpc"));
    static const char *const untouched[][2] = {
        {"receivers/tcplog", "{\"listen_address\":\"0.0.0.0:54525\"}"},
        {"receivers/udplog", "{\"listen_address\":\"0.0.0.0:54526\"}"},
        {"receivers/kubeletstats", "{}"},
        {"receivers/k8s_cluster", "{}"},
        {"receivers/prometheus", "{\"config\":{\"scrape_configs\":[]}}"},
        {"receivers/mystery", "{}"},
        {"exporters/debug", "{}"},
        {"extensions/pprof", "{}"},
    };
    for (size_t i = 0; i < sizeof untouched / sizeof untouched[0]; i++) {
        char *got = tu_str(at(c, untouched[i][0]));
        ck_assert_msg(!strcmp(got, untouched[i][1]), "%s: %s", untouched[i][0], got);
        free(got);
    }
    json_object_put(o);
    /* health_check: only an empty host is filled in; a path is kept;
     * jaeger_query's grpc endpoint is completed only when it is set; an
     * empty readers list gets the reader (2.3.1 step 2). */
    defaults_to("spec:\n  mode: sidecar\n  config:\n    receivers: {}\n"
                "    extensions: {health_check: {endpoint: ':13134', path: /h}, jaeger_query: {grpc: {endpoint: ':16685'}}}\n"
                "    service: {extensions: [health_check, jaeger_query], telemetry: {metrics: {readers: []}}, "
                "pipelines: {}}\n",
                "{\"mode\":\"sidecar\",\"config\":{\"receivers\":{},\"extensions\":{\"health_check\":{\"endpoint\":"
                "\"0.0.0.0:13134\",\"path\":\"/h\"},\"jaeger_query\":{\"grpc\":{\"endpoint\":\"0.0.0.0:16685\"},"
                "\"http\":{\"endpoint\":\"0.0.0.0:16686\"}}},\"service\":{\"extensions\":[\"health_check\","
                "\"jaeger_query\"],\"telemetry\":" READER ",\"pipelines\":{}}},"
                "\"upgradeStrategy\":\"automatic\",\"replicas\":1,\"managementState\":\"managed\","
                "\"networkPolicy\":{\"enabled\":true}}");
}
END_TEST

static void default_fails(const char *in, const char *want) {
    json_object *o = yaml(in);
    char *before = tu_str(o), err[512] = "";
    ck_assert_int_eq(collector_default_spec(o, err, sizeof err), -1);
    ck_assert_str_eq(err, want);
    char *after = tu_str(o);
    ck_assert_str_eq(after, before); /* nothing half-applied */
    free(before);
    free(after);
    json_object_put(o);
}

START_TEST(defaults_refusals) {
    default_fails("spec: {config: {receivers: {otlp: {protocols: {kafka: {}}}}, service: {pipelines: {t: {receivers: "
                  "[otlp]}}}}}\n",
                  "unknown protocol set: kafka");
    default_fails("spec: {config: {receivers: {otlp: x}, service: {pipelines: {t: {receivers: [otlp]}}}}}\n",
                  "receivers.otlp: expected a map, got a string");
    default_fails("spec: {config: {receivers: {otlp: {protocols: [grpc]}}, service: {pipelines: {t: {receivers: "
                  "[otlp]}}}}}\n",
                  "receivers.otlp.protocols: expected a map, got a list");
    default_fails("spec: {config: {receivers: {otlp: {protocols: {grpc: {endpoint: 4317}}}}, service: {pipelines: "
                  "{t: {receivers: [otlp]}}}}}\n",
                  "receivers.otlp.protocols.grpc.endpoint: expected a string, got a number");
    default_fails("spec: {config: {extensions: {health_check: {endpoint: true}}, service: {extensions: "
                  "[health_check]}}}\n",
                  "extensions.health_check.endpoint: expected a string, got a boolean");
    default_fails("spec: {config: {receivers: [otlp]}}\n", "receivers: expected a map, got a list");
    /* The decode: fields of the wrong type are refused, never defaulted over. */
    default_fails("spec: {replicas: '3'}\n", "spec.replicas: expected an integer, got a string");
    default_fails("spec: {mode: 1}\n", "spec.mode: expected a string, got a number (quote it: \"1\")");
    default_fails("spec: {autoscaler: {metrics: [{type: Pods, pods: {target: {type: Value, value: lots}}}]}}\n",
                  "spec.autoscaler.metrics[0].pods.target.value: \"lots\" is not a quantity");
    default_fails("spec: []\n", "spec: expected an object, got a list");
    default_fails("metadata: {labels: {a: 1}}\nspec: {}\n", "metadata.labels.a: expected a string, got a number (quote "
                                                            "it: \"1\")");
    /* Disabled components are not looked at. */
    defaults_to("spec: {mode: sidecar, config: {receivers: {otlp: x}, service: {telemetry: {metrics: {address: "
                "':1'}}}}}\n",
                "{\"mode\":\"sidecar\",\"config\":{\"receivers\":{\"otlp\":\"x\"},\"service\":{\"telemetry\":"
                "{\"metrics\":{\"address\":\":1\"}}}},\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                "\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
}
END_TEST

START_TEST(defaults_store_and_v1alpha1) {
    /* collector_default (the store's, render's): v1alpha1's string config
     * and top-level bounds become the v1beta1 shape (collector/convert.h:
     * the conversion gives a config without exporters an empty map, spec
     * 6.4), then the same steps. */
    json_object *o = yaml("apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata: {name: c}\n"
                          "spec:\n  maxReplicas: 4\n  config: |\n    receivers: {zipkin: {}}\n"
                          "    service: {pipelines: {t: {receivers: [zipkin]}}}\n");
    char err[256] = "";
    ck_assert_int_eq(collector_default(o, err, sizeof err), 0);
    collector_drop_derived(o);
    char *s = tu_str(jget(o, "spec"));
    ck_assert_str_eq(s, "{\"config\":{\"receivers\":{\"zipkin\":{\"endpoint\":\"0.0.0.0:9411\"}},"
                        "\"exporters\":{},\"service\":"
                        "{\"pipelines\":{\"t\":{\"receivers\":[\"zipkin\"]}},\"telemetry\":" READER "}},"
                        "\"autoscaler\":{\"maxReplicas\":4,\"minReplicas\":1,\"targetCPUUtilization\":90},"
                        "\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                        "\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}");
    free(s);
    json_object_put(o);
}
END_TEST

/* ---- validation: the rules in order (3.2) -------------------------------- */

START_TEST(rule1_null_objects) {
    warned("  config:\n    receivers: {otlp: {protocols: {grpc: {}}}, jaeger: null}\n    processors: {batch: null}\n"
           "    exporters: {debug: {}, otlp: {tls: null, headers: [null]}}\n    connectors: {count: null}\n"
           "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n",
           "Collector config spec.config has null objects: connectors.count:, exporters.otlp.tls:, processors.batch:, "
           "receivers.jaeger:. For compatibility with other tooling, such as kustomize and kubectl edit, it is "
           "recommended to use empty objects e.g. batch: {}.");
}
END_TEST

START_TEST(rules2_to_7_mode) {
    refused("  mode: deployment\n  volumeClaimTemplates: [{metadata: {name: x}}]\n", "statefulset_only",
            M "deployment, which does not support the attribute 'volumeClaimTemplates'");
    refused("  mode: daemonset\n  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain}\n", "statefulset_only",
            M "daemonset, which does not support the attribute 'persistentVolumeClaimRetentionPolicy'");
    allowed("  mode: statefulset\n  volumeClaimTemplates: [{metadata: {name: x}}]\n"
            "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain}\n");
    allowed("  mode: deployment\n  volumeClaimTemplates: []\n");
    refused("  mode: sidecar\n  tolerations: [{key: k}]\n", "sidecar",
            M "sidecar, which does not support the attribute 'tolerations'");
    refused("  mode: sidecar\n  priorityClassName: high\n", "sidecar",
            M "sidecar, which does not support the attribute 'priorityClassName'");
    refused("  mode: sidecar\n  affinity: {}\n", "sidecar", M "sidecar, which does not support the attribute 'affinity'");
    refused("  mode: sidecar\n  additionalContainers: [{name: x}]\n", "sidecar",
            M "sidecar, which does not support the attribute 'AdditionalContainers'");
    allowed("  mode: sidecar\n  tolerations: []\n  priorityClassName: ''\n  additionalContainers: []\n");
    allowed("  mode: deployment\n  tolerations: [{key: k}]\n  priorityClassName: high\n  affinity: {}\n");
    /* Order: rule 2 before rule 4. */
    refused("  mode: sidecar\n  tolerations: [{key: k}]\n  volumeClaimTemplates: [{}]\n", "statefulset_only",
            M "sidecar, which does not support the attribute 'volumeClaimTemplates'");
}
END_TEST

#define PROM "the OpenTelemetry Spec Prometheus configuration is incorrect, "
#define TA_SS "  mode: statefulset\n  targetAllocator: {enabled: true}\n"
#define PIPE_PROM "    exporters: {debug: {}}\n    service: {pipelines: {m: {receivers: [otlp], exporters: [debug]}}}\n"

START_TEST(rule8_target_allocator) {
    refused("  targetAllocator: {enabled: true}\n", "target_allocator",
            M "deployment, which does not support the target allocation deployment");
    refused("  mode: sidecar\n  targetAllocator: {enabled: true}\n", "target_allocator",
            M "sidecar, which does not support the target allocation deployment");
    refused("  mode: daemonset\n  targetAllocator: {enabled: true}\n", "target_allocator",
            M "daemonset, which must be used with target allocation strategy per-node ");
    refused("  mode: statefulset\n  targetAllocator: {enabled: true, allocationStrategy: per-node}\n",
            "target_allocator",
            "target allocation strategy per-node is only supported in OpenTelemetry Collector mode daemonset");
    /* The prometheus receiver (steps 4, 5). */
    refused(TA_SS "  config:\n    exporters: {debug: {}}\n    service: {pipelines: {}}\n", "target_allocator",
            PROM "no receivers available as part of the configuration");
    /* The defaulting refuses receivers that are not a map first; validate
     * alone (an object nobody defaulted) says this. */
    json_object *raw = cr(TA_SS "  config:\n    receivers: [x]\n    service: {pipelines: {}}\n");
    verdict rv = VERDICT_INIT;
    collector_validate_opts rvo = {.cert_manager = 1};
    ck_assert_int_eq(collector_validate(raw, NULL, VERDICT_CREATE, &rvo, &rv), -1);
    ck_assert_str_eq(rv.message, PROM "receivers property in the configuration doesn't contain valid receivers");
    verdict_free(&rv);
    json_object_put(raw);
    refused(TA_SS "  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM, "target_allocator",
            PROM "no prometheus available as part of the configuration");
    refused(TA_SS "  config:\n    receivers: {prometheus/b: {}, prometheus/a: {}, otlp: {protocols: {grpc: {}}}}\n"
                  PIPE_PROM,
            "target_allocator",
            PROM "the target allocator requires a receiver named exactly \"prometheus\", but only named instances "
                 "were found: prometheus/a, prometheus/b; rename one of them to \"prometheus\"");
    refused(TA_SS "  config:\n    receivers: {prometheus: null, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM,
            "target_allocator", PROM "prometheus property in the configuration doesn't contain valid prometheus");
    /* The receiver need not be in a pipeline, nor have a config (steps 5, 6). */
    allowed(TA_SS "  config:\n    receivers: {prometheus: {}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM);
    /* Scrape configs (step 7). */
    refused(TA_SS "  config:\n    receivers: {prometheus: {config: []}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM,
            "target_allocator",
            PROM "prometheusConfig property in the configuration doesn't contain valid prometheusConfig");
    refused(TA_SS "  config:\n    receivers: {prometheus: {config: {}}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM,
            "target_allocator", PROM "no scrape_configs available as part of the configuration");
    refused(TA_SS "  config:\n    receivers: {prometheus: {config: {scrape_configs: {}}}, otlp: {protocols: {grpc: "
                  "{}}}}\n" PIPE_PROM,
            "target_allocator", PROM "scrape_configs must be a list in the config");
    refused(TA_SS "  config:\n    receivers: {prometheus: {config: {scrape_configs: [x]}}, otlp: {protocols: {grpc: "
                  "{}}}}\n" PIPE_PROM,
            "target_allocator", PROM "scrape_config property in the configuration doesn't contain valid scrape_config");
    refused(TA_SS "  config:\n    receivers: {prometheus: {config: {scrape_configs: []}}, otlp: {protocols: {grpc: "
                  "{}}}}\n" PIPE_PROM,
            "target_allocator",
            PROM "either at least one scrape config needs to be defined or PrometheusCR needs to be enabled");
    allowed(TA_SS "  config:\n    receivers: {prometheus: {config: {scrape_configs: [{job_name: x}]}}, otlp: "
                  "{protocols: {grpc: {}}}}\n" PIPE_PROM);
    /* With prometheusCR the scrape configs are not looked at. */
    allowed("  mode: statefulset\n  targetAllocator: {enabled: true, prometheusCR: {enabled: true}}\n"
            "  config:\n    receivers: {prometheus: {config: {}}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM);
    allowed("  mode: daemonset\n  targetAllocator: {enabled: true, allocationStrategy: per-node}\n"
            "  config:\n    receivers: {prometheus: {}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM);
}
END_TEST

#define TA_OK TA_SS "  config:\n    receivers: {prometheus: {}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM

static void mtls_case(const char *mtls, int cert_manager, const char *want) {
    char *spec;
    if (asprintf(&spec, "  mode: statefulset\n  targetAllocator: {enabled: true, mtls: %s}\n"
                        "  config:\n    receivers: {prometheus: {}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM,
                 mtls) < 0)
        abort();
    collector_validate_opts vo = {.cert_manager = cert_manager};
    json_object *o = cr(spec);
    result r = validate_opts(o, NULL, VERDICT_CREATE, &vo);
    if (want) {
        ck_assert_int_eq(r.rc, -1);
        ck_assert_str_eq(r.v.message, want);
        ck_assert_str_eq(r.v.rule, "mtls");
    } else {
        ck_assert_msg(r.rc == 0, "%s", r.v.message);
    }
    verdict_free(&r.v);
    json_object_put(o);
    free(spec);
}

START_TEST(rule8_mtls) {
    const char *no_cm = "mTLS is enabled with useCertManager but cert-manager is not available; install cert-manager "
                        "and restart the operator, or set useCertManager to false";
    mtls_case("{enabled: true}", 0, no_cm);
    mtls_case("{enabled: true, useCertManager: true}", 0, no_cm);
    mtls_case("{enabled: true}", 1, NULL);
    mtls_case("{enabled: true}", -1, NULL); /* not known: not checked */
    mtls_case("{enabled: false}", 0, NULL);
    mtls_case("{enabled: true, useCertManager: false}", 1,
              "mTLS is enabled with useCertManager set to false; tls.serverCertificate and tls.clientCertificate must "
              "both be set");
    mtls_case("{enabled: true, useCertManager: false, tls: {serverCertificate: {}}}", 1,
              "mTLS is enabled with useCertManager set to false; tls.serverCertificate and tls.clientCertificate must "
              "both be set");
    mtls_case("{enabled: true, useCertManager: false, tls: {serverCertificate: {}, clientCertificate: {}}}", 1,
              "mTLS is enabled with useCertManager set to false; tls.certificateAuthorityCertificate must be set");
    mtls_case("{enabled: true, useCertManager: false, tls: {serverCertificate: {}, clientCertificate: {},"
              " certificateAuthorityCertificate: {}}}",
              1, "tls.certificateAuthorityCertificate must set exactly one of secret or configMap");
    mtls_case("{enabled: true, useCertManager: false, tls: {serverCertificate: {}, clientCertificate: {},"
              " certificateAuthorityCertificate: {secret: {}, configMap: {}}}}",
              1, "tls.certificateAuthorityCertificate must set exactly one of secret or configMap");
    mtls_case("{enabled: true, useCertManager: false, tls: {serverCertificate: {}, clientCertificate: {},"
              " certificateAuthorityCertificate: {configMap: {name: ca}}}}",
              0, NULL);
}
END_TEST

#define PORTS_PREFIX "the OpenTelemetry Spec Ports configuration is incorrect, "

START_TEST(rule9_spec_ports) {
    refused("  ports: [{name: a-very-long-port-name, port: 8080}]\n", "ports",
            PORTS_PREFIX "port name 'a-very-long-port-name' errors: [must be no more than 15 characters], num '8080' "
                         "errors: []");
    refused("  ports: [{name: Web_1, port: 8080}]\n", "ports",
            PORTS_PREFIX "port name 'Web_1' errors: [must contain only alpha-numeric characters (a-z, 0-9), and hyphens "
                         "(-)], num '8080' errors: []");
    refused("  ports: [{name: '1234', port: 8080}]\n", "ports",
            PORTS_PREFIX "port name '1234' errors: [must contain at least one letter (a-z)], num '8080' errors: []");
    refused("  ports: [{name: a--b, port: 8080}]\n", "ports",
            PORTS_PREFIX "port name 'a--b' errors: [must not contain consecutive hyphens], num '8080' errors: []");
    refused("  ports: [{name: -ab, port: 8080}]\n", "ports",
            PORTS_PREFIX "port name '-ab' errors: [must not begin or end with a hyphen], num '8080' errors: []");
    refused("  ports: [{name: web, port: 70000}]\n", "ports",
            PORTS_PREFIX "port name 'web' errors: [], num '70000' errors: [must be between 1 and 65535, inclusive]");
    refused("  ports: [{port: 0}]\n", "ports",
            PORTS_PREFIX "port name '' errors: [must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-) "
                         "must contain at least one letter (a-z)], num '0' errors: [must be between 1 and 65535, "
                         "inclusive]");
    refused("  ports: [{name: ok, port: 1}, {name: --x-, port: 1}]\n", "ports",
            PORTS_PREFIX "port name '--x-' errors: [must not contain consecutive hyphens must not begin or end with a "
                         "hyphen], num '1' errors: []");
    allowed("  ports: [{name: web, port: 65535}, {name: a1-b2, port: 1}]\n");
}
END_TEST

#define CFG_INVALID "the OpenTelemetry config is incorrect. "

START_TEST(rule10_config_ports) {
    refused("  config:\n    receivers: {tcplog: {}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {logs: {receivers: [tcplog], exporters: [debug]}}}\n",
            "config_ports", CFG_INVALID "The port numbers are invalid: receiver tcplog: port should not be empty");
    refused("  config:\n    receivers: {otlp/A: {protocols: {grpc: {}}}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {t: {receivers: [otlp/A], exporters: [debug]}}}\n",
            "config_ports",
            CFG_INVALID "The port name 'otlp-A-grpc' errors: [must contain only alpha-numeric characters (a-z, 0-9), "
                        "and hyphens (-)], num '4317' errors: []");
    refused("  config:\n    receivers: {zipkin: {endpoint: '0.0.0.0:65536'}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {t: {receivers: [zipkin], exporters: [debug]}}}\n",
            "config_ports",
            CFG_INVALID "The port name 'zipkin' errors: [], num '65536' errors: [must be between 1 and 65535, "
                        "inclusive]");
    /* Port 0 and negative ports are no ports: the default is used and
     * nothing said, as upstream's "port validation - zero port currently
     * not validated" cases expect (spec 3.4). */
    allowed("  config:\n    receivers: {otlp: {protocols: {grpc: {endpoint: '0.0.0.0:0'}}}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {t: {receivers: [otlp], exporters: [debug]}}}\n");
    allowed("  config:\n    receivers: {otlp: {protocols: {grpc: {endpoint: '0.0.0.0:-1'}}}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {t: {receivers: [otlp], exporters: [debug]}}}\n");
    allowed("  config:\n    receivers: {zipkin: {endpoint: ':-1'}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {t: {receivers: [zipkin], exporters: [debug]}}}\n");
    /* An env-var port is not a number: allowed, as in the reference. */
    allowed("  config:\n    receivers: {zipkin: {endpoint: '0.0.0.0:${env:PORT}'}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {t: {receivers: [zipkin], exporters: [debug]}}}\n");
}
END_TEST

#define AUTO "the OpenTelemetry Spec autoscale configuration is incorrect, "

START_TEST(rules11_12_autoscaler) {
    refused("  autoscaler: {minReplicas: 2}\n", "autoscaler", "spec.maxReplica must be set when spec.minReplica is set");
    refused("  replicas: 5\n  autoscaler: {maxReplicas: 3}\n", "autoscaler", AUTO "replicas must not be greater than maxReplicas");
    refused("  autoscaler: {minReplicas: 4, maxReplicas: 3}\n", "autoscaler",
            AUTO "minReplicas must not be greater than maxReplicas");
    refused("  autoscaler: {maxReplicas: 3, behavior: {scaleDown: {stabilizationWindowSeconds: 3601}}}\n", "autoscaler",
            AUTO "scaleDown.stabilizationWindowSeconds should be >=0 and <=3600");
    refused("  autoscaler: {maxReplicas: 3, behavior: {scaleUp: {stabilizationWindowSeconds: -1}}}\n", "autoscaler",
            AUTO "scaleUp.stabilizationWindowSeconds should be >=0 and <=3600");
    refused("  autoscaler: {maxReplicas: 3, metrics: [{type: Resource}]}\n", "autoscaler",
            AUTO "metric type unsupported. Expected metric of source type Pod");
    refused("  autoscaler: {maxReplicas: 3, metrics: [{type: Pods, pods: {target: {type: AverageValue, averageValue: "
            "500m}}}]}\n",
            "autoscaler", AUTO "average value should be greater than 0");
    refused("  autoscaler: {maxReplicas: 3, metrics: [{type: Pods, pods: {target: {type: Value, value: '0'}}}]}\n",
            "autoscaler", AUTO "value should be greater than 0");
    refused("  autoscaler: {maxReplicas: 3, metrics: [{type: Pods, pods: {target: {type: Utilization}}}]}\n",
            "autoscaler", AUTO "invalid pods target type");
    /* spec 8.12: messages, not a panic. */
    refused("  autoscaler: {maxReplicas: 3, metrics: [{type: Pods}]}\n", "autoscaler", AUTO "invalid pods target type");
    refused("  autoscaler: {maxReplicas: 3, metrics: [{type: Pods, pods: {target: {type: AverageValue}}}]}\n",
            "autoscaler", AUTO "average value should be greater than 0");
    allowed("  autoscaler: {maxReplicas: 3, behavior: {scaleUp: {stabilizationWindowSeconds: 3600}}, metrics: [{type: "
            "Pods, pods: {target: {type: AverageValue, averageValue: 1k}}}, {type: Pods, pods: {target: {type: Value, "
            "value: 2}}}]}\n");
    /* spec 8.1: rules after the autoscaler still run. */
    refused("  mode: sidecar\n  autoscaler: {maxReplicas: 3}\n  ingress: {type: ingress}\n", "ingress",
            "the OpenTelemetry Spec Ingress configuration is incorrect. Ingress can only be used in combination with "
            "the modes: deployment, daemonset, statefulset");
}
END_TEST

START_TEST(rules13_to_16) {
    refused("  mode: sidecar\n  ingress: {type: ingress}\n", "ingress",
            "the OpenTelemetry Spec Ingress configuration is incorrect. Ingress can only be used in combination with "
            "the modes: deployment, daemonset, statefulset");
    refused("  ingress: {type: ingress, ruleType: subdomain}\n", "ingress",
            "a valid Ingress hostname has to be defined for subdomain ruleType");
    refused("  ingress: {type: route, ruleType: subdomain, hostname: '*'}\n", "ingress",
            "a valid Ingress hostname has to be defined for subdomain ruleType");
    allowed("  ingress: {type: ingress, ruleType: subdomain, hostname: example.com}\n");
    /* Without an ingress type too, as the reference and upstream's test
     * "missing ingress hostname for subdomain ruleType"; a Route or an
     * HTTPRoute in sidecar mode is said (spec 8.20). */
    refused("  ingress: {ruleType: subdomain}\n", "ingress",
            "a valid Ingress hostname has to be defined for subdomain ruleType");
    warned("  mode: sidecar\n  ingress: {type: route}\n",
           "spec.ingress is ignored: the OpenTelemetry Collector mode is set to sidecar, which has no Service for a "
           "Route");
    warned("  mode: sidecar\n  httpRoute: {enabled: true, gateway: gw}\n",
           "spec.httpRoute is ignored: the OpenTelemetry Collector mode is set to sidecar, which has no Service for an "
           "HTTPRoute");
    refused("  mode: deployment\n  daemonSetUpdateStrategy: {type: RollingUpdate}\n", "update_strategy",
            M "deployment, which does not support the attribute 'updateStrategy'");
    refused("  mode: daemonset\n  deploymentUpdateStrategy: {type: Recreate}\n", "update_strategy",
            M "daemonset, which does not support the attribute 'deploymentUpdateStrategy'");
    allowed("  mode: daemonset\n  daemonSetUpdateStrategy: {type: RollingUpdate}\n  deploymentUpdateStrategy: {}\n");
}
END_TEST

static result with_opts(const char *spec, const collector_validate_opts *vo) {
    json_object *o = cr(spec);
    result r = validate_opts(o, NULL, VERDICT_CREATE, vo);
    json_object_put(o);
    return r;
}

START_TEST(rule17_fips) {
    collector_validate_opts vo = {.cert_manager = 1,
                                  .fips_disabled = "receiver.otlp, exporter.debug,processor.batch,extension.pprof"};
    result r = with_opts("  config:\n    receivers: {otlp: {protocols: {grpc: {}}}, otlp/2: {protocols: {grpc: {}}},"
                         " zipkin: {}}\n    processors: {batch: null}\n    exporters: {debug: {}}\n"
                         "    extensions: {pprof: {}}\n    service: {extensions: [pprof], pipelines: {traces: "
                         "{receivers: [zipkin, otlp/2, otlp], processors: [batch], exporters: [debug]}}}\n",
                         &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.rule, "fips");
    ck_assert_str_eq(r.v.message, "the collector configuration contains not FIPS compliant components: [otlp debug "
                                  "batch pprof]. Please remove it from the config");
    /* spec 8.17: the warnings found before stay. */
    ck_assert_uint_eq(r.v.nwarnings, 1);
    verdict_free(&r.v);
    r = with_opts("", &(collector_validate_opts){.cert_manager = 1, .fips_disabled = "receiver.jaeger"});
    ck_assert_int_eq(r.rc, 0);
    verdict_free(&r.v);
    /* The reference's default, "uppercase", names nothing. */
    r = with_opts("", &(collector_validate_opts){.cert_manager = 1, .fips_disabled = "uppercase"});
    ck_assert_int_eq(r.rc, 0);
    verdict_free(&r.v);
}
END_TEST

#define K8S_EVENTS                                                                                                 \
    "  config:\n    receivers: {k8s_events: {}}\n    exporters: {debug: {}}\n"                                     \
    "    service: {pipelines: {logs: {receivers: [k8s_events], exporters: [debug]}}}\n"

START_TEST(rule18_rbac) {
    const char *groups[] = {"dev"};
    collector_subject user = {"jane", "u-1", groups, 1, NULL};
    /* The user lacks get and watch on events; so does the collector's
     * ServiceAccount. */
    fake_authz f = {.allow = (const char *const[]){"jane list /events", NULL}};
    collector_access acc = {fake_allowed, &f};
    collector_validate_opts vo = {.cert_manager = 1, .access = &acc, .user = &user};
    result r = with_opts(K8S_EVENTS, &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.rule, "rbac");
    ck_assert_str_eq(r.v.message, "user \"jane\" is not allowed to create a collector whose config would grant "
                                  "permissions they do not hold: missing the following rules for jane - events: "
                                  "[get,watch]");
    verdict_free(&r.v);
    /* The user holds them: allowed, three questions (one per item). */
    f = (fake_authz){.allow = (const char *const[]){"jane get /events", "jane list /events", "jane watch /events", NULL}};
    r = with_opts(K8S_EVENTS, &vo);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(f.asked, 3);
    verdict_free(&r.v);
    /* The ServiceAccount holds what the user lacks: not an escalation; it
     * is asked with the groups every ServiceAccount has (spec 8.16). */
    f = (fake_authz){.allow = (const char *const[]){"system:serviceaccount:ns:c-collector get /events",
                                                    "system:serviceaccount:ns:c-collector list /events",
                                                    "system:serviceaccount:ns:c-collector watch /events", NULL}};
    r = with_opts(K8S_EVENTS, &vo);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_str_eq(f.last_groups, "system:serviceaccounts,system:serviceaccounts:ns,system:authenticated,");
    verdict_free(&r.v);
    /* spec.serviceAccount names the account; entries come out sorted. */
    f = (fake_authz){.allow = (const char *const[]){"mine-sa get /nodes", NULL}};
    r = with_opts("  serviceAccount: mine\n  config:\n    receivers: {k8s_events: {}, kubeletstats: {}}\n"
                  "    processors: {k8sattributes: {}}\n    exporters: {debug: {}}\n"
                  "    service: {pipelines: {logs: {receivers: [kubeletstats, k8s_events], processors: "
                  "[k8sattributes], exporters: [debug]}}}\n",
                  &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.message, "user \"jane\" is not allowed to create a collector whose config would grant "
                                  "permissions they do not hold: missing the following rules for jane - apps/replicasets: "
                                  "[get,watch,list]; missing the following rules for jane - events: [get,list,watch]; "
                                  "missing the following rules for jane - namespaces: [get,watch,list]; missing the "
                                  "following rules for jane - nodes/stats: [get]; missing the following rules for jane "
                                  "- pods: [get,watch,list]");
    verdict_free(&r.v);
    /* The authorizer cannot be asked: refused (the registration fails closed). */
    f = (fake_authz){.fail = "timeout"};
    r = with_opts(K8S_EVENTS, &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.message, "unable to check RBAC privilege escalation for user \"jane\": timeout");
    verdict_free(&r.v);
    /* No rules needed, no authorizer or no user: not asked. */
    f = (fake_authz){.fail = "asked"};
    r = with_opts("", &vo);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_int_eq(f.asked, 0);
    verdict_free(&r.v);
    vo.user = NULL;
    r = with_opts(K8S_EVENTS, &vo);
    ck_assert_int_eq(r.rc, 0);
    verdict_free(&r.v);
    /* A user name is quoted the Go way. */
    collector_subject odd = {"a\"b\\c", NULL, NULL, 0, NULL};
    vo.user = &odd;
    f = (fake_authz){.fail = "x"};
    r = with_opts(K8S_EVENTS, &vo);
    ck_assert_str_eq(r.v.message, "unable to check RBAC privilege escalation for user \"a\\\"b\\\\c\": x");
    verdict_free(&r.v);
}
END_TEST

START_TEST(rule18_sa_check_error) {
    /* The user lacks the rules; the ServiceAccount cannot be asked. */
    collector_subject user = {"jane", NULL, NULL, 0, NULL};
    fake_authz f = {.fail = "503 Service Unavailable", .fail_for = "system:serviceaccount:"};
    collector_access acc = {fake_allowed, &f};
    collector_validate_opts vo = {.cert_manager = 1, .access = &acc, .user = &user};
    result r = with_opts(K8S_EVENTS, &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.rule, "rbac");
    ck_assert_str_eq(r.v.message, "unable to check existing SA RBAC permissions: 503 Service Unavailable");
    ck_assert_int_eq(f.asked, 4); /* three for the user, the first for the account */
    verdict_free(&r.v);
}
END_TEST

START_TEST(ta_service_account_warnings) {
    fake_authz f = {.allow = (const char *const[]){
                        "* * monitoring.coreos.com/servicemonitors", "* * monitoring.coreos.com/podmonitors",
                        "* get /nodes", "* list /nodes", "* watch /nodes", "* get /nodes/metrics",
                        "* list /nodes/metrics", "* watch /nodes/metrics", "* get /services", "* list /services",
                        "* watch /services", "* get /endpoints", "* list /endpoints", "* watch /endpoints",
                        "* get /pods", "* list /pods", "* watch /pods", "* get /namespaces", "* list /namespaces",
                        "* watch /namespaces", "* get /configmaps", "* get discovery.k8s.io/endpointslices",
                        "* list discovery.k8s.io/endpointslices", "* watch discovery.k8s.io/endpointslices",
                        "* get networking.k8s.io/ingresses", "* get /metrics", "* get /api", "* get /apis",
                        "* get /apis/*", NULL}};
    collector_access acc = {fake_allowed, &f};
    collector_validate_opts vo = {.cert_manager = 1, .access = &acc};
    json_object *o = yaml("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                          "metadata: {name: adm-warning, namespace: test-ns}\nspec:\n  mode: statefulset\n"
                          "  targetAllocator: {enabled: true, prometheusCR: {enabled: true}}\n"
                          "  config:\n    receivers: {prometheus: {}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM);
    result r = validate_opts(o, NULL, VERDICT_CREATE, &vo);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_uint_eq(r.v.nwarnings, 2);
    ck_assert_str_eq(r.v.warnings[0], "missing the following rules for system:serviceaccount:test-ns:adm-warning-"
                                      "targetallocator - networking.k8s.io/ingresses: [list,watch]");
    ck_assert_str_eq(r.v.warnings[1], "missing the following rules for system:serviceaccount:test-ns:adm-warning-"
                                      "targetallocator - nonResourceURL: /api/*: [get]");
    verdict_free(&r.v);
    json_object_put(o);
    f = (fake_authz){.fail = "connection refused"};
    o = cr("  mode: statefulset\n  targetAllocator: {enabled: true, serviceAccount: ta, prometheusCR: {enabled: true}}\n"
           "  config:\n    receivers: {prometheus: {}, otlp: {protocols: {grpc: {}}}}\n" PIPE_PROM);
    r = validate_opts(o, NULL, VERDICT_CREATE, &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.rule, "target_allocator_rbac");
    ck_assert_str_eq(r.v.message, "unable to check rbac rules connection refused");
    verdict_free(&r.v);
    json_object_put(o);
}
END_TEST

/* spec 8.6: a v1alpha1 config that did not read (its text in the
 * annotation, the empty config in its place) is refused, before or after
 * the defaulting; not once the config changed, nor when the text reads. */
START_TEST(unread_v1alpha1_config) {
    const char *hdr = "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                      "metadata: {name: c, namespace: ns, annotations: {otel-webhook/v1alpha1-config: '%s'}}\n"
                      "spec:\n  config: {receivers: {}, exporters: {}, service: {pipelines: {}}%s}\n";
    const char *msg = "spec.config.receivers: expected a map, got a list; written through v1alpha1, this config would be "
                      "stored as an empty one (the text is in the annotation otel-webhook/v1alpha1-config)";
    char *t;
    ck_assert_int_ge(asprintf(&t, hdr, "receivers: [a]", ""), 0);
    json_object *o = yaml(t);
    free(t);
    verdict v = VERDICT_INIT;
    ck_assert_int_eq(collector_check_unread_config(o, &v), -1);
    ck_assert_str_eq(v.rule, "config");
    ck_assert_str_eq(v.message, msg);
    verdict_free(&v);
    result r = validate_opts(o, NULL, VERDICT_CREATE, &(collector_validate_opts){.cert_manager = 1});
    ck_assert_int_eq(r.rc, -1); /* defaulted first: still the empty config */
    ck_assert_str_eq(r.v.message, msg);
    verdict_free(&r.v);
    r = validate_opts(o, NULL, VERDICT_DELETE, &(collector_validate_opts){.cert_manager = 1});
    ck_assert_int_eq(r.rc, 0);
    verdict_free(&r.v);
    json_object_put(o);
    /* A config written since, or a text that reads: allowed. */
    ck_assert_int_ge(asprintf(&t, hdr, "@@@", ", processors: {batch: {}}"), 0);
    o = yaml(t);
    free(t);
    v = (verdict)VERDICT_INIT;
    ck_assert_int_eq(collector_check_unread_config(o, &v), 0);
    verdict_free(&v);
    json_object_put(o);
    ck_assert_int_ge(asprintf(&t, hdr, "receivers: {}", ""), 0);
    o = yaml(t);
    free(t);
    v = (verdict)VERDICT_INIT;
    ck_assert_int_eq(collector_check_unread_config(o, &v), 0);
    verdict_free(&v);
    json_object_put(o);
}
END_TEST

START_TEST(update_and_delete) {
    collector_validate_opts vo = {.cert_manager = 1};
    json_object *old = cr("  mode: daemonset\n"), *neu = cr("  mode: deployment\n");
    result r = validate_opts(neu, old, VERDICT_UPDATE, &vo);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.rule, "mode_change");
    ck_assert_str_eq(r.v.message, M "daemonset, which does not support modification");
    ck_assert_uint_eq(r.v.nwarnings, 0);
    verdict_free(&r.v);
    json_object_put(old);
    json_object_put(neu);
    /* spec 8.8: a stored object without a mode is a deployment. */
    old = cr("  replicas: 1\n");
    json_object_object_del(jget(old, "spec"), "mode");
    neu = cr("  replicas: 2\n");
    verdict v = VERDICT_INIT;
    char err[64];
    ck_assert_int_eq(collector_default_spec(neu, err, sizeof err), 0);
    ck_assert_int_eq(collector_validate(neu, old, VERDICT_UPDATE, &vo, &v), 0);
    verdict_free(&v);
    json_object_put(old);
    json_object_put(neu);
    /* spec 8.2: a delete is never refused, whatever the stored object. */
    old = cr("  mode: sidecar\n  tolerations: [{key: k}]\n");
    ck_assert_int_eq(collector_validate(old, NULL, VERDICT_DELETE, &vo, &v), 0);
    ck_assert_ptr_null(v.rule);
    json_object_put(old);
}
END_TEST

START_TEST(schema_rules_offline) {
    collector_validate_opts vo = {.cert_manager = 1, .schema = true};
    static const struct {
        const char *spec, *msg;
    } cases[] = {
        {"  mode: job\n", "spec.mode: Unsupported value: \"job\": supported values: \"daemonset\", \"deployment\", "
                          "\"sidecar\", \"statefulset\""},
        {"  upgradeStrategy: sometimes\n", "spec.upgradeStrategy: Unsupported value: \"sometimes\": supported values: "
                                           "\"automatic\", \"none\""},
        {"  ingress: {type: gateway}\n", "spec.ingress.type: Unsupported value: \"gateway\": supported values: "
                                         "\"ingress\", \"route\""},
        {"  targetAllocator: {allocationStrategy: random}\n",
         "spec.targetAllocator.allocationStrategy: Unsupported value: \"random\": supported values: \"least-weighted\", "
         "\"consistent-hashing\", \"per-node\""},
        {"  autoscaler: {maxReplicas: 0}\n", "spec.autoscaler.maxReplicas in body should be greater than or equal to 1"},
        {"  autoscaler: {minReplicas: 0, maxReplicas: 2}\n",
         "spec.autoscaler.minReplicas in body should be greater than or equal to 1"},
        {"  configVersions: 0\n", "spec.configVersions in body should be greater than or equal to 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        result r = with_opts(cases[i].spec, &vo);
        ck_assert_msg(r.rc == -1, "case %zu allowed", i);
        ck_assert_str_eq(r.v.rule, "schema");
        ck_assert_str_eq(r.v.message, cases[i].msg);
        verdict_free(&r.v);
    }
    /* Without schema (the webhook: the API server applied it), only the webhook's rules. */
    vo.schema = false;
    result r = with_opts("  autoscaler: {maxReplicas: 2, targetCPUUtilization: 0}\n", &vo);
    ck_assert_int_eq(r.rc, 0);
    verdict_free(&r.v);
}
END_TEST

START_TEST(shape_refused_by_validate) {
    /* validate on an object nobody defaulted still reads nothing misread. */
    json_object *o = cr("  replicas: many\n");
    collector_validate_opts vo = {.cert_manager = 1};
    verdict v = VERDICT_INIT;
    ck_assert_int_eq(collector_validate(o, NULL, VERDICT_CREATE, &vo, &v), -1);
    ck_assert_str_eq(v.rule, "shape");
    ck_assert_str_eq(v.message, "spec.replicas: expected an integer, got a string");
    verdict_free(&v);
    json_object_put(o);
}
END_TEST

START_TEST(build_warnings) {
    json_object *o = cr("  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {debug: {}}\n"
                        "    service:\n      telemetry: {metrics: {address: '0.0.0.0:${env:P}'}}\n"
                        "      pipelines: {t: {receivers: [otlp], exporters: [debug]}}\n");
    char err[64];
    ck_assert_int_eq(collector_default_spec(o, err, sizeof err), 0);
    verdict v = VERDICT_INIT;
    collector_build_warnings(o, &v);
    ck_assert_uint_eq(v.nwarnings, 1);
    ck_assert_str_eq(v.warnings[0], "couldn't determine metrics port from configuration: 0.0.0.0:${env:P}");
    verdict_free(&v);
    json_object_put(o);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("crvalidate");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, defaults_appendix_a1);
    tcase_add_test(tc, defaults_each_step);
    tcase_add_test(tc, defaults_config_unit_example);
    tcase_add_test(tc, defaults_endpoint_table);
    tcase_add_test(tc, defaults_refusals);
    tcase_add_test(tc, defaults_store_and_v1alpha1);
    tcase_add_test(tc, rule1_null_objects);
    tcase_add_test(tc, rules2_to_7_mode);
    tcase_add_test(tc, rule8_target_allocator);
    tcase_add_test(tc, rule8_mtls);
    tcase_add_test(tc, rule9_spec_ports);
    tcase_add_test(tc, rule10_config_ports);
    tcase_add_test(tc, rules11_12_autoscaler);
    tcase_add_test(tc, rules13_to_16);
    tcase_add_test(tc, rule17_fips);
    tcase_add_test(tc, rule18_rbac);
    tcase_add_test(tc, rule18_sa_check_error);
    tcase_add_test(tc, ta_service_account_warnings);
    tcase_add_test(tc, unread_v1alpha1_config);
    tcase_add_test(tc, update_and_delete);
    tcase_add_test(tc, schema_rules_offline);
    tcase_add_test(tc, shape_refused_by_validate);
    tcase_add_test(tc, build_warnings);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return tu_run(suite());
}
