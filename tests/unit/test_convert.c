/* tests/unit/test_convert.c - collector/convert.c against cr-admission.md
 * 6.2-6.4 and the fixes of 8.5 and 8.6: every mapping rule with exact
 * objects, round trips, the failure modes, and upstream's v1alpha1 e2e
 * collectors (tests/data/convert) there and back. */
#include "collector/convert.h"

#include "base/jtext.h"
#include "collector/config.h"
#include "collector/defaults.h"
#include "kube/yaml.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DATA "tests/data/convert/"
#define A "apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata: {name: c}\n"
#define B "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata: {name: c}\n"
#define HEAD_A "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"OpenTelemetryCollector\",\"metadata\":{\"name\":\"c\"}"
#define HEAD_B "{\"apiVersion\":\"opentelemetry.io/v1beta1\",\"kind\":\"OpenTelemetryCollector\",\"metadata\":{\"name\":\"c\"}"
#define EMPTY_CFG "{\"receivers\":{},\"exporters\":{},\"service\":{\"pipelines\":{}}}"
#define EMPTY_YAML "receivers: {}\\nexporters: {}\\nservice:\\n  pipelines: {}\\n"

#define EQ(got_expr, want)                                                                                             \
    do {                                                                                                               \
        char *got_ = (got_expr);                                                                                       \
        ck_assert_msg(got_ && strcmp(got_, want) == 0, "\n got: %s\nwant: %s", got_ ? got_ : "(null)", want);        \
        free(got_);                                                                                                    \
    } while (0)

static json_object *yaml(const char *text) {
    kube_yaml_error e;
    json_object *o = kube_yaml_parse_one(text, strlen(text), &e);
    ck_assert_msg(o != NULL, "bad test YAML: line %d: %s", e.line, e.msg);
    return o;
}

static char *js(json_object *o) { return o ? jtext(o, NULL) : NULL; }

/* The conversion of the YAML text to desired, as compact JSON text; NULL
 * with the error in err (when given) on failure. */
static char *conv_n(const char *text, const char *desired, collector_convert_notes *notes, char *err) {
    json_object *in = yaml(text);
    char e[512] = "";
    json_object *out = collector_convert(in, desired, notes, e, sizeof e);
    if (err) strcpy(err, e);
    char *s = js(out);
    json_object_put(out);
    json_object_put(in);
    return s;
}

static char *to_beta(const char *text) { return conv_n(text, COLLECTOR_CONVERT_V1BETA1, NULL, NULL); }
static char *to_alpha(const char *text) { return conv_n(text, COLLECTOR_CONVERT_V1ALPHA1, NULL, NULL); }

/* 6.2: the fields copied, the ones renamed, the deprecated bounds folded,
 * the target allocator's strategies and selectors, status. */
START_TEST(alpha_to_beta_fields) {
    EQ(to_beta(A "spec:\n"
                 "  mode: daemonset\n  managementState: managed\n  replicas: 2\n  image: img\n  serviceName: svc\n"
                 "  upgradeStrategy: none\n  minReplicas: 2\n  maxReplicas: 5\n"
                 "  autoscaler: {maxReplicas: 9, targetMemoryUtilization: 60}\n"
                 "  updateStrategy: {type: RollingUpdate, rollingUpdate: {maxUnavailable: 2}}\n"
                 "  deploymentUpdateStrategy: {type: Recreate}\n"
                 "  ports: [{name: p, port: 1234, hostPort: 80}]\n  livenessProbe: {periodSeconds: 5}\n"
                 "  ingress: {type: route, route: {termination: edge}}\n"
                 "  observability: {metrics: {enableMetrics: true, DisablePrometheusAnnotations: true}}\n"
                 "  targetAllocator:\n    enabled: true\n    allocationStrategy: least-weighted\n"
                 "    filterStrategy: other\n    observability: {metrics: {DisablePrometheusAnnotations: false}}\n"
                 "    prometheusCR:\n      enabled: true\n      scrapeInterval: 1m\n      denyFSAccessThroughSMs: true\n"
                 "      podMonitorSelector: {team: a}\n"
                 "  config: '{receivers: {}, exporters: {}, service: {pipelines: {}}}'\n"
                 "status:\n  version: 0.90.0\n  image: img\n  scale: {replicas: 2, selector: a=b, statusReplicas: 1/2}\n"
                 "  messages: [m]\n  replicas: 2\n"),
       HEAD_B ",\"spec\":{\"mode\":\"daemonset\",\"managementState\":\"managed\",\"replicas\":2,\"image\":\"img\","
              "\"serviceName\":\"svc\",\"upgradeStrategy\":\"none\","
              "\"autoscaler\":{\"maxReplicas\":9,\"targetMemoryUtilization\":60,\"minReplicas\":2},"
              "\"daemonSetUpdateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxUnavailable\":2}},"
              "\"deploymentUpdateStrategy\":{\"type\":\"Recreate\"},"
              "\"ports\":[{\"name\":\"p\",\"port\":1234,\"hostPort\":80}],\"livenessProbe\":{\"periodSeconds\":5},"
              "\"ingress\":{\"type\":\"route\",\"route\":{\"termination\":\"edge\"}},"
              "\"observability\":{\"metrics\":{\"enableMetrics\":true,\"disablePrometheusAnnotations\":true}},"
              "\"targetAllocator\":{\"enabled\":true,\"allocationStrategy\":\"least-weighted\","
              "\"observability\":{\"metrics\":{\"disablePrometheusAnnotations\":false}},"
              "\"prometheusCR\":{\"enabled\":true,\"scrapeInterval\":\"1m\",\"denyFSAccessThroughSMs\":true,"
              "\"podMonitorSelector\":{\"matchLabels\":{\"team\":\"a\"}},\"serviceMonitorSelector\":{}}},"
              "\"config\":" EMPTY_CFG "},"
              "\"status\":{\"version\":\"0.90.0\",\"image\":\"img\","
              "\"scale\":{\"replicas\":2,\"selector\":\"a=b\",\"statusReplicas\":\"1/2\"}}}");
    /* The deprecated bounds alone make the autoscaler; nothing makes none. */
    EQ(to_beta(A "spec:\n  maxReplicas: 3\n  config: ''\n"),
       HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG ",\"autoscaler\":{\"maxReplicas\":3}}}");
    EQ(to_beta(A "spec:\n  minReplicas: 1\n  autoscaler: {minReplicas: 2}\n  config: ''\n"),
       HEAD_B ",\"spec\":{\"autoscaler\":{\"minReplicas\":2},\"config\":" EMPTY_CFG "}}");
    /* Strategies: the three known allocation strategies map one to one,
     * filterStrategy keeps relabel-config only. */
    EQ(to_beta(A "spec:\n  targetAllocator: {allocationStrategy: per-node, filterStrategy: relabel-config}\n"
                 "  config: ''\n"),
       HEAD_B ",\"spec\":{\"targetAllocator\":{\"allocationStrategy\":\"per-node\",\"filterStrategy\":"
              "\"relabel-config\"},\"config\":" EMPTY_CFG "}}");
    EQ(to_beta(A "spec:\n  targetAllocator: {allocationStrategy: round-robin, filterStrategy: ''}\n  config: ''\n"),
       HEAD_B ",\"spec\":{\"targetAllocator\":{},\"config\":" EMPTY_CFG "}}");
    /* No empty structures added: no spec.targetAllocator, ingress, ... */
    EQ(to_beta(A "spec: {config: ''}\n"), HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG "}}");
    /* No spec, no config: the config both versions require. */
    EQ(to_beta(A), HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG "}}");
    /* Fields neither version names pass (the schemas keep them). */
    EQ(to_beta(A "spec: {config: '', hostPID: true}\n"),
       HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG ",\"hostPID\":true}}");
}
END_TEST

/* 6.4, string -> structure: the fixed shape, anchors expanded, unknown keys
 * dropped, list items as strings, the required sections made {}. */
START_TEST(config_string_to_structure) {
    EQ(to_beta(A "spec:\n  config: |\n"
                 "    receivers:\n      otlp: &p\n        protocols: {grpc: {}}\n      zipkin: *p\n"
                 "    exporters: {debug: null}\n    processors:\n    connectors: {c: {}}\n    extensions: {e: {}}\n"
                 "    unknown: {x: 1}\n"
                 "    service:\n      unknown: 1\n      extensions: [e, 5, ~]\n"
                 "      telemetry: {metrics: {level: basic}}\n"
                 "      pipelines:\n        traces: {receivers: [otlp, zipkin], exporters: [debug], unknown: [a]}\n"
                 "        metrics:\n"),
       HEAD_B ",\"spec\":{\"config\":{\"receivers\":{\"otlp\":{\"protocols\":{\"grpc\":{}}},"
              "\"zipkin\":{\"protocols\":{\"grpc\":{}}}},\"exporters\":{\"debug\":null},"
              "\"connectors\":{\"c\":{}},\"extensions\":{\"e\":{}},"
              "\"service\":{\"extensions\":[\"e\",\"5\",\"\"],\"telemetry\":{\"metrics\":{\"level\":\"basic\"}},"
              "\"pipelines\":{\"traces\":{\"exporters\":[\"debug\"],\"receivers\":[\"otlp\",\"zipkin\"]},"
              "\"metrics\":null}}}}}");
    /* null, "", a document of other keys: the empty config. */
    static const char *const empties[] = {"'null'", "''", "'foo: bar'", "'---'", "'~'"};
    for (size_t i = 0; i < sizeof empties / sizeof *empties; i++) {
        char text[256];
        collector_convert_notes n;
        snprintf(text, sizeof text, A "spec:\n  config: %s\n", empties[i]);
        EQ(conv_n(text, COLLECTOR_CONVERT_V1BETA1, &n, NULL), HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG "}}");
        ck_assert_str_eq(n.config, "");
    }
    /* Integral floats are integers (the reference's float64s). */
    EQ(to_beta(A "spec:\n  config: 'receivers: {r: {a: 8192.0, b: 1.5}}'\n"),
       HEAD_B ",\"spec\":{\"config\":{\"receivers\":{\"r\":{\"a\":8192,\"b\":1.5}},\"exporters\":{},"
              "\"service\":{\"pipelines\":{}}}}}");
    /* The first document, as the reference's decoder reads. */
    EQ(to_beta(A "spec:\n  config: \"receivers: {a: {}}\\n---\\nreceivers: {b: {}}\\n\"\n"),
       HEAD_B ",\"spec\":{\"config\":{\"receivers\":{\"a\":{}},\"exporters\":{},\"service\":{\"pipelines\":{}}}}}");
}
END_TEST

/* 6.4 step 2 and 8.6: a config that does not read is the empty config, never
 * a failure; the text is kept in an annotation and the reason handed back. */
START_TEST(config_unreadable) {
    static const struct {
        const char *config, *note;
    } cases[] = {
        {"'@@@'", "spec.config line 1: found character that cannot start any token"},
        {"'- a'", "spec.config is not a map"},
        {"'receivers: [a]'", "spec.config.receivers: expected a map, got a list"},
        {"'exporters: 1'", "spec.config.exporters: expected a map, got a number"},
        {"'service: []'", "spec.config.service: expected a map, got a list"},
        {"'service: {extensions: {a: 1}}'", "spec.config.service.extensions: expected a list, got an object"},
        {"'service: {telemetry: x}'", "spec.config.service.telemetry: expected a map, got a string"},
        {"'service: {pipelines: [a]}'", "spec.config.service.pipelines: expected a map, got a list"},
        {"'service: {pipelines: {t: 1}}'", "spec.config.service.pipelines.t: expected a map, got a number"},
        {"'service: {pipelines: {t: {receivers: [[a]]}}}'",
         "spec.config.service.pipelines.t.receivers[0]: expected a string, got a list"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[256], want[512];
        collector_convert_notes n;
        snprintf(text, sizeof text, A "spec:\n  config: %s\n", cases[i].config);
        json_object *in = yaml(text);
        const char *raw = json_object_get_string(json_object_object_get(json_object_object_get(in, "spec"), "config"));
        json_object *o = json_object_new_object();
        json_object_object_add(o, COLLECTOR_CONVERT_CONFIG, json_object_new_string(raw));
        char *ann = js(o);
        json_object_put(o);
        snprintf(want, sizeof want,
                 "{\"apiVersion\":\"opentelemetry.io/v1beta1\",\"kind\":\"OpenTelemetryCollector\","
                 "\"metadata\":{\"name\":\"c\",\"annotations\":%s},\"spec\":{\"config\":" EMPTY_CFG "}}",
                 ann);
        free(ann);
        json_object_put(in);
        EQ(conv_n(text, COLLECTOR_CONVERT_V1BETA1, &n, NULL), want);
        ck_assert_str_eq(n.config, cases[i].note);
    }
    /* The way back gives the text while the config is still the empty one
     * it became; once anything changed it, the config's YAML, and the text
     * is history. */
    EQ(to_alpha("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                "metadata: {name: c, annotations: {otel-webhook/v1alpha1-config: '@@@'}}\nspec:\n  config: " EMPTY_CFG
                "\n"),
       "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"OpenTelemetryCollector\",\"metadata\":{\"name\":\"c\","
       "\"annotations\":{\"otel-webhook/v1alpha1-config\":\"@@@\"}},\"spec\":{\"config\":\"@@@\"}}");
    EQ(to_alpha("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                "metadata: {name: c, annotations: {otel-webhook/v1alpha1-config: '@@@'}}\n"
                "spec:\n  config: {receivers: {r: {}}, exporters: {}, service: {pipelines: {}}}\n"),
       HEAD_A ",\"spec\":{\"config\":\"receivers:\\n  r: {}\\n"
       "exporters: {}\\nservice:\\n  pipelines: {}\\n\"}}");
    /* A config that reads again drops the stale text. */
    EQ(to_beta("apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\n"
               "metadata: {name: c, annotations: {otel-webhook/v1alpha1-config: '@@@'}}\nspec: {config: ''}\n"),
       HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG "}}");
    /* Past COLLECTOR_CONVERT_CONFIG_MAX the text is not kept, and the note
     * says so. */
    size_t big = COLLECTOR_CONVERT_CONFIG_MAX + 1;
    char *text = malloc(big + 128);
    int at = sprintf(text, A "spec:\n  config: '@");
    memset(text + at, 'x', big - 1);
    strcpy(text + at + big - 1, "'\n");
    collector_convert_notes n;
    EQ(conv_n(text, COLLECTOR_CONVERT_V1BETA1, &n, NULL), HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG "}}");
    ck_assert_str_eq(n.config, "spec.config line 1: found character that cannot start any token (the text, 65537 "
                               "bytes, is over 65536: not kept)");
    free(text);
}
END_TEST

/* 6.3 and 8.5: the way back, with what v1alpha1 cannot hold in the fields
 * annotation (keys sorted); serviceName and denyFSAccessThroughSMs mapped. */
START_TEST(beta_to_alpha_fields) {
    EQ(to_alpha(B "spec:\n  mode: statefulset\n  serviceName: s\n  command: [/otelcol]\n  configVersions: 5\n"
                  "  networkPolicy: {enabled: false}\n  daemonSetUpdateStrategy: {type: OnDelete}\n"
                  "  autoscaler: {minReplicas: 1, maxReplicas: 4}\n"
                  "  observability: {metrics: {enableMetrics: true, disablePrometheusAnnotations: true, "
                  "extraLabels: {a: b}}}\n"
                  "  targetAllocator:\n    enabled: true\n    mtls: {enabled: true}\n"
                  "    prometheusCR:\n      enabled: true\n      denyFSAccessThroughSMs: true\n"
                  "      evaluationInterval: 1m\n"
                  "      podMonitorSelector: {matchLabels: {team: a}, matchExpressions: [{key: x, operator: Exists}]}\n"
                  "  config: " EMPTY_CFG "\n"
                  "status:\n  version: 0.158.0\n  conditions: [{type: Ready, status: 'True'}]\n  observedGeneration: 3\n"),
       "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"OpenTelemetryCollector\",\"metadata\":{\"name\":\"c\","
       "\"annotations\":{\"otel-webhook/v1beta1-fields\":\"{\\\"spec\\\":{\\\"command\\\":[\\\"/otelcol\\\"],"
       "\\\"configVersions\\\":5,\\\"networkPolicy\\\":{\\\"enabled\\\":false},"
       "\\\"observability\\\":{\\\"metrics\\\":{\\\"extraLabels\\\":{\\\"a\\\":\\\"b\\\"}}},"
       "\\\"targetAllocator\\\":{\\\"mtls\\\":{\\\"enabled\\\":true},\\\"prometheusCR\\\":{"
       "\\\"evaluationInterval\\\":\\\"1m\\\",\\\"podMonitorSelector\\\":{\\\"matchExpressions\\\":[{\\\"key\\\":"
       "\\\"x\\\",\\\"operator\\\":\\\"Exists\\\"}]},\\\"serviceMonitorSelector\\\":null}}},"
       "\\\"status\\\":{\\\"conditions\\\":[{\\\"status\\\":\\\"True\\\",\\\"type\\\":\\\"Ready\\\"}],"
       "\\\"observedGeneration\\\":3}}\"}},"
       "\"spec\":{\"mode\":\"statefulset\",\"serviceName\":\"s\",\"updateStrategy\":{\"type\":\"OnDelete\"},"
       "\"autoscaler\":{\"minReplicas\":1,\"maxReplicas\":4},"
       "\"observability\":{\"metrics\":{\"enableMetrics\":true,\"DisablePrometheusAnnotations\":true}},"
       "\"targetAllocator\":{\"enabled\":true,\"prometheusCR\":{\"enabled\":true,\"denyFSAccessThroughSMs\":true,"
       "\"podMonitorSelector\":{\"team\":\"a\"}}},\"config\":\"" EMPTY_YAML "\"},"
       "\"status\":{\"version\":\"0.158.0\"}}");
    /* Nothing to keep: no annotation, and a stale one is dropped. */
    EQ(to_alpha("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                "metadata: {name: c, annotations: {otel-webhook/v1beta1-fields: '{}'}}\nspec: {config: " EMPTY_CFG "}\n"),
       HEAD_A ",\"spec\":{\"config\":\"" EMPTY_YAML "\"}}");
    /* No config: the empty one's YAML (v1alpha1 requires it). */
    EQ(to_alpha(B "spec: {mode: sidecar}\n"), HEAD_A ",\"spec\":{\"mode\":\"sidecar\",\"config\":\"" EMPTY_YAML "\"}}");
}
END_TEST

/* 6.4, structure -> string: order, indent, sequences under their key,
 * integral floats, sorted maps, {} and null. */
START_TEST(config_structure_to_string) {
    EQ(to_alpha(B "spec:\n  config:\n"
                  "    service: {pipelines: {t: {receivers: [r], processors: [p], exporters: [e]}}, "
                  "telemetry: {metrics: {readers: [{pull: {exporter: {prometheus: {host: 0.0.0.0, port: 8888.0}}}}]}},"
                  " extensions: [x]}\n"
                  "    extensions: {x: {}}\n    connectors: {c: null}\n    processors: {p: {b: 2, a: 1.5}}\n"
                  "    exporters: {e: null}\n    receivers: {r: {}}\n"),
       HEAD_A ",\"spec\":{\"config\":\"receivers:\\n  r: {}\\nexporters:\\n  e: null\\nprocessors:\\n  p:\\n"
              "    a: 1.5\\n    b: 2\\nconnectors:\\n  c: null\\nextensions:\\n  x: {}\\nservice:\\n  extensions:\\n"
              "    - x\\n  telemetry:\\n    metrics:\\n      readers:\\n        - pull:\\n            exporter:\\n"
              "              prometheus:\\n                host: 0.0.0.0\\n                port: 8888\\n"
              "  pipelines:\\n    t:\\n      exporters:\\n        - e\\n      processors:\\n        - p\\n"
              "      receivers:\\n        - r\\n\"}}");
}
END_TEST

/* Every selector shape there and back, v1beta1 -> v1alpha1 -> v1beta1. */
START_TEST(selectors_round_trip) {
    static const char *const sels[] = {
        "",                                                                    /* absent: selects nothing */
        "podMonitorSelector: {}, serviceMonitorSelector: {}, ",                /* select all */
        "podMonitorSelector: {matchLabels: {a: b}}, ",                         /* labels */
        "podMonitorSelector: {matchExpressions: [{key: k, operator: Exists}]}, ", /* expressions only */
        "podMonitorSelector: {matchLabels: {a: b}, matchExpressions: [{key: k, operator: Exists}]}, ",
    };
    for (size_t i = 0; i < sizeof sels / sizeof *sels; i++) {
        char text[512];
        snprintf(text, sizeof text, B "spec:\n  targetAllocator: {prometheusCR: {%senabled: true}}\n  config: " EMPTY_CFG "\n",
                 sels[i]);
        char *alpha = to_alpha(text);
        ck_assert_ptr_nonnull(alpha);
        char *back = to_beta(alpha);
        json_object *want = yaml(text), *got = tu_json(back);
        ck_assert_msg(json_object_equal(want, got), "%s\n-> %s\n-> %s", text, alpha, back);
        json_object_put(want);
        json_object_put(got);
        free(alpha);
        free(back);
    }
    /* A v1alpha1 edit of the labels wins over "there was none". */
    EQ(to_beta("apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata:\n  name: c\n"
               "  annotations: {otel-webhook/v1beta1-fields: "
               "'{\"spec\":{\"targetAllocator\":{\"prometheusCR\":{\"podMonitorSelector\":null}}}}'}\n"
               "spec:\n  targetAllocator: {prometheusCR: {podMonitorSelector: {a: b}}}\n  config: ''\n"),
       HEAD_B ",\"spec\":{\"targetAllocator\":{\"prometheusCR\":{\"podMonitorSelector\":{\"matchLabels\":{\"a\":\"b\"}},"
              "\"serviceMonitorSelector\":{}}},\"config\":" EMPTY_CFG "}}");
}
END_TEST

/* A v1beta1 collector with every field v1alpha1 lacks survives the round
 * trip; what the v1alpha1 object says wins over the annotation. */
START_TEST(round_trip_lossless) {
    const char *full =
        "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
        "metadata: {name: c, namespace: obs, annotations: {team: a}}\n"
          "spec:\n  mode: statefulset\n  replicas: 2\n  serviceName: full-svc\n  command: [/otelcol]\n"
          "  configVersions: 5\n  networkPolicy: {enabled: false}\n  readinessProbe: {periodSeconds: 3}\n"
          "  startupProbe: {failureThreshold: 9}\n  httpRoute: {enabled: true, gateway: g}\n"
          "  dnsPolicy: ClusterFirst\n  hostPID: true\n  hostUsers: false\n  hostAliases: [{ip: 1.2.3.4}]\n"
          "  podDnsConfig: {nameservers: [1.1.1.1]}\n  ipFamilies: [IPv4]\n  ipFamilyPolicy: SingleStack\n"
          "  sessionAffinity: ClientIP\n  sessionAffinityConfig: {clientIP: {timeoutSeconds: 5}}\n"
          "  persistentVolumeClaimRetentionPolicy: {whenDeleted: Delete}\n  podManagementPolicy: Parallel\n"
          "  daemonSetUpdateStrategy: {type: OnDelete}\n  autoscaler: {minReplicas: 1, maxReplicas: 4}\n"
          "  observability: {metrics: {enableMetrics: true, disablePrometheusAnnotations: true, extraLabels: {a: b}}}\n"
          "  targetAllocator:\n    enabled: true\n    allocationStrategy: per-node\n    filterStrategy: relabel-config\n"
          "    collectorNotReadyGracePeriod: 45s\n    collectorTargetReloadInterval: 10s\n"
          "    allowInsecureAuthSecrets: true\n    mtls: {enabled: true}\n"
          "    prometheusCR:\n      enabled: true\n      scrapeInterval: 30s\n      denyFSAccessThroughSMs: true\n"
          "      allowNamespaces: [a]\n      denyNamespaces: [b]\n      secretNamespaces: [c]\n"
          "      evaluationInterval: 1m\n      scrapeProtocols: [PrometheusProto]\n"
          "      podMonitorNamespaceSelector: {}\n      serviceMonitorNamespaceSelector: {matchLabels: {x: y}}\n"
          "      scrapeConfigSelector: {}\n      scrapeConfigNamespaceSelector: {}\n      probeSelector: {}\n"
          "      probeNamespaceSelector: {}\n"
          "      podMonitorSelector: {matchLabels: {team: a}, matchExpressions: [{key: x, operator: Exists}]}\n"
          "  config:\n    receivers: {otlp: {protocols: {grpc: {endpoint: '0.0.0.0:4317'}}}}\n"
          "    processors: {batch: {send_batch_size: 8192}}\n    exporters: {debug: null}\n"
          "    service: {telemetry: {metrics: {level: detailed}}, pipelines: {traces: {receivers: [otlp], "
          "processors: [batch], exporters: [debug]}}}\n"
          "status:\n  version: 0.158.0\n  scale: {replicas: 2, selector: a=b, statusReplicas: 2/2}\n"
          "  conditions: [{type: Ready, status: 'True'}]\n  observedGeneration: 3\n";
    char *alpha = to_alpha(full);
    ck_assert_ptr_nonnull(alpha);
    char *back = to_beta(alpha);
    json_object *want = yaml(full), *got = tu_json(back);
    ck_assert_msg(json_object_equal(want, got), "\n got: %s\nwant: %s", back, full);
    json_object_put(want);
    json_object_put(got);
    free(back);
    /* The v1alpha1 object edited: its fields win, the rest come back. */
    json_object *a = tu_json(alpha);
    json_object *spec = json_object_object_get(a, "spec");
    json_object_object_add(spec, "replicas", json_object_new_int(7));
    json_object_object_add(spec, "configVersions", json_object_new_int(1)); /* an unknown field to v1alpha1 */
    char *edited = js(a);
    char *b2 = to_beta(edited);
    json_object *o = tu_json(b2), *bs = json_object_object_get(o, "spec");
    ck_assert_int_eq(json_object_get_int(json_object_object_get(bs, "replicas")), 7);
    ck_assert_int_eq(json_object_get_int(json_object_object_get(bs, "configVersions")), 1);
    EQ(js(json_object_object_get(bs, "networkPolicy")), "{\"enabled\":false}");
    /* Consumed: the annotation does not reach v1beta1. */
    EQ(js(json_object_object_get(o, "metadata")), "{\"name\":\"c\",\"namespace\":\"obs\",\"annotations\":{\"team\":\"a\"}}");
    json_object_put(o);
    json_object_put(a);
    free(b2);
    free(edited);
    free(alpha);
}
END_TEST

/* Input the reference's decoder refuses, the same version, other kinds;
 * the one failure of the conversion itself (6.4). */
START_TEST(failures) {
    static const struct {
        const char *text, *desired, *err;
    } cases[] = {
        {B "spec: {config: {}}\n", COLLECTOR_CONVERT_V1BETA1,
         "already opentelemetry.io/v1beta1: converting to the same version is not allowed"},
        {A "spec: {config: ''}\n", "opentelemetry.io/v2", "desired version \"opentelemetry.io/v2\": expected "
                                                          "opentelemetry.io/v1alpha1 or opentelemetry.io/v1beta1"},
        {"apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: i}\n", COLLECTOR_CONVERT_V1BETA1,
         "not an opentelemetry.io/v1alpha1 or opentelemetry.io/v1beta1 OpenTelemetryCollector (apiVersion "
         "\"opentelemetry.io/v1alpha1\", kind \"Instrumentation\")"},
        {"[1]", COLLECTOR_CONVERT_V1BETA1, "expected an object, got a list"},
        {A "spec: x\n", COLLECTOR_CONVERT_V1BETA1, "spec: expected an object, got a string"},
        {"apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\nmetadata: 1\n", COLLECTOR_CONVERT_V1BETA1,
         "metadata: expected an object, got a number"},
        {A "spec: {config: {}}\n", COLLECTOR_CONVERT_V1BETA1, "spec.config: expected a string, got an object"},
        {A "spec: {maxReplicas: '3'}\n", COLLECTOR_CONVERT_V1BETA1, "spec.maxReplicas: expected an integer, got a string"},
        {A "spec: {targetAllocator: [1]}\n", COLLECTOR_CONVERT_V1BETA1,
         "spec.targetAllocator: expected an object, got a list"},
        {A "spec: {targetAllocator: {prometheusCR: {podMonitorSelector: [a]}}}\n", COLLECTOR_CONVERT_V1BETA1,
         "spec.targetAllocator.prometheusCR.podMonitorSelector: expected an object, got a list"},
        {A "spec: {observability: {metrics: 1}}\n", COLLECTOR_CONVERT_V1BETA1,
         "spec.observability.metrics: expected an object, got a number"},
        {A "status: []\n", COLLECTOR_CONVERT_V1BETA1, "status: expected an object, got a list"},
        {B "spec: {config: []}\n", COLLECTOR_CONVERT_V1ALPHA1, "spec.config: expected an object, got a list"},
        {B "spec: {config: {receivers: []}}\n", COLLECTOR_CONVERT_V1ALPHA1,
         "spec.config.receivers: expected a map, got a list"},
        {B "spec: {config: {service: {pipelines: {t: {exporters: x}}}}}\n", COLLECTOR_CONVERT_V1ALPHA1,
         "spec.config.service.pipelines.t.exporters: expected a list, got a string"},
        {B "spec: {targetAllocator: {prometheusCR: {serviceMonitorSelector: {matchLabels: [a]}}}}\n",
         COLLECTOR_CONVERT_V1ALPHA1,
         "spec.targetAllocator.prometheusCR.serviceMonitorSelector.matchLabels: expected an object, got a list"},
        {B "spec: {targetAllocator: {observability: 1}}\n", COLLECTOR_CONVERT_V1ALPHA1,
         "spec.targetAllocator.observability: expected an object, got a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char err[512];
        char *s = conv_n(cases[i].text, cases[i].desired, NULL, err);
        ck_assert_msg(s == NULL, "%s: converted to %s", cases[i].text, s);
        ck_assert_str_eq(err, cases[i].err);
    }
    /* Nesting past the YAML writer's depth: the failure the reference
     * has (failed to convert to v1alpha1: <encoder error>). */
    json_object *o = yaml(B "spec: {config: {}}\n"), *r = json_object_new_object(), *cur = r;
    for (int d = 0; d < COLLECTOR_YAML_MAX_DEPTH + 5; d++) {
        json_object *n = json_object_new_object();
        json_object_object_add(cur, "x", n);
        cur = n;
    }
    json_object_object_add(json_object_object_get(json_object_object_get(o, "spec"), "config"), "receivers", r);
    char err[256];
    ck_assert_ptr_null(collector_convert(o, COLLECTOR_CONVERT_V1ALPHA1, NULL, err, sizeof err));
    ck_assert_str_eq(err, "failed to convert to v1alpha1: spec.config nests deeper than 1000 levels");
    json_object_put(o);
    /* A fields annotation that is not a JSON object: dropped, said. */
    collector_convert_notes n;
    EQ(conv_n("apiVersion: opentelemetry.io/v1alpha1\nkind: OpenTelemetryCollector\n"
              "metadata: {name: c, annotations: {otel-webhook/v1beta1-fields: '[1'}}\nspec: {config: ''}\n",
              COLLECTOR_CONVERT_V1BETA1, &n, NULL),
       HEAD_B ",\"spec\":{\"config\":" EMPTY_CFG "}}");
    ck_assert_str_eq(n.fields, "metadata.annotations.otel-webhook/v1beta1-fields: not a JSON object; the fields it "
                               "kept are lost");
}
END_TEST

/* The lines of FILE, one compact JSON object each. */
static json_object **lines(const char *file, size_t *n) {
    char *text = tu_read_file(file, NULL), *save = NULL;
    json_object **v = NULL;
    *n = 0;
    for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        v = realloc(v, (*n + 1) * sizeof *v);
        v[(*n)++] = tu_json(l);
    }
    free(text);
    return v;
}

static void check_same(json_object *want, json_object *got, const char *what) {
    char *w = js(want), *g = js(got);
    ck_assert_msg(strcmp(w, g) == 0, "%s\n got: %s\nwant: %s", what, g, w);
    free(w);
    free(g);
}

/* Upstream's v1alpha1 e2e collectors: to v1beta1, back, and to v1beta1
 * again, each step exactly as tests/data/convert says. */
/* A budget shared by conversions: a config past it fails the object (not
 * the empty config of an unreadable text), and so does a v1alpha1 config
 * whose YAML would pass what is left of the answer. */
START_TEST(budgeted) {
    collector_convert_budget b = {.yaml = {.what = "the review", .memory = 1 << 20, .alias_bytes = 100}};
    char err[512];
    json_object *alpha = json_tokener_parse(
        "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"OpenTelemetryCollector\",\"metadata\":{\"name\":\"a\"},"
        "\"spec\":{\"config\":\"receivers:\\n  a: &a xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\n  b: [*a, *a, *a]\\n\"}}");
    json_object *c = collector_convert_budgeted(alpha, COLLECTOR_CONVERT_V1BETA1, NULL, &b, err, sizeof err);
    ck_assert_ptr_null(c);
    ck_assert_str_eq(err, "spec.config line 3: the review: alias expansion exceeds the limit of 100 bytes");
    ck_assert_int_eq(b.exceeded, 1);
    /* without a budget: converted */
    c = collector_convert(alpha, COLLECTOR_CONVERT_V1BETA1, NULL, err, sizeof err);
    ck_assert_ptr_nonnull(c);
    json_object *beta = c;
    collector_convert_budget w = {.yaml = {.what = "the review", .memory = 1 << 20, .alias_bytes = 1 << 20},
                                  .yaml_bytes = 40};
    c = collector_convert_budgeted(beta, COLLECTOR_CONVERT_V1ALPHA1, NULL, &w, err, sizeof err);
    ck_assert_ptr_null(c);
    ck_assert_str_eq(err, "failed to convert to v1alpha1: spec.config as YAML takes more than the 40 bytes left of "
                          "the review's answer limit");
    ck_assert_int_eq(w.exceeded, 1);
    w.yaml_bytes = 4096;
    w.exceeded = 0;
    c = collector_convert_budgeted(beta, COLLECTOR_CONVERT_V1ALPHA1, NULL, &w, err, sizeof err);
    ck_assert_ptr_nonnull(c);
    json_object_put(c);
    json_object_put(beta);
    json_object_put(alpha);
}
END_TEST

START_TEST(upstream_fixtures) {
    static const char *const names[] = {"autoscale", "conversion-webhook-invalid-config", "daemonset-features",
                                        "targetallocator-features", "upgrade-test"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        char path[256];
        snprintf(path, sizeof path, DATA "upstream-%s.yaml", names[i]);
        char *text = tu_read_file(path, NULL);
        kube_yaml_doc *docs;
        size_t nd, nb, na;
        kube_yaml_error e;
        ck_assert_int_eq(kube_yaml_parse(text, strlen(text), &docs, &nd, &e), 0);
        snprintf(path, sizeof path, DATA "upstream-%s.v1beta1.jsonl", names[i]);
        json_object **beta = lines(path, &nb);
        snprintf(path, sizeof path, DATA "upstream-%s.back.jsonl", names[i]);
        json_object **back = lines(path, &na);
        ck_assert_uint_eq(nd, nb);
        ck_assert_uint_eq(nd, na);
        for (size_t d = 0; d < nd; d++) {
            char err[256];
            json_object *b = collector_convert(docs[d].obj, COLLECTOR_CONVERT_V1BETA1, NULL, err, sizeof err);
            ck_assert_msg(b != NULL, "%s: %s", names[i], err);
            check_same(beta[d], b, names[i]);
            json_object *a = collector_convert(b, COLLECTOR_CONVERT_V1ALPHA1, NULL, err, sizeof err);
            ck_assert_msg(a != NULL, "%s: %s", names[i], err);
            check_same(back[d], a, names[i]);
            /* Fields the annotation brings back come last: equal, not in
             * the same order. */
            json_object *b2 = collector_convert(a, COLLECTOR_CONVERT_V1BETA1, NULL, err, sizeof err);
            ck_assert_msg(json_object_equal(beta[d], b2), "%s: the way back and forth differs", names[i]);
            json_object_put(b);
            json_object_put(a);
            json_object_put(b2);
            json_object_put(beta[d]);
            json_object_put(back[d]);
        }
        free(beta);
        free(back);
        kube_yaml_docs_free(docs, nd);
        free(text);
    }
}
END_TEST

/* tests/e2e/conversion-webhook-invalid-config: config "null", converted,
 * defaulted as the webhook does, read back as v1alpha1: exactly the
 * fixture's assertion. */
START_TEST(invalid_config_fixture) {
    char *text = tu_read_file(DATA "upstream-conversion-webhook-invalid-config.yaml", NULL);
    char *assert = tu_read_file(DATA "upstream-conversion-webhook-invalid-config.assert.yaml", NULL);
    json_object *in = yaml(text), *want = yaml(assert), *b, *a;
    char err[256];
    collector_convert_notes n;
    ck_assert_ptr_nonnull(b = collector_convert(in, COLLECTOR_CONVERT_V1BETA1, &n, err, sizeof err));
    ck_assert_str_eq(n.config, "");
    json_object *cfg = json_object_object_get(json_object_object_get(b, "spec"), "config");
    ck_assert_int_eq(collector_default_config(cfg, err, sizeof err), 0);
    ck_assert_ptr_nonnull(a = collector_convert(b, COLLECTOR_CONVERT_V1ALPHA1, NULL, err, sizeof err));
    check_same(want, a, "conversion-webhook-invalid-config");
    json_object_put(in);
    json_object_put(want);
    json_object_put(b);
    json_object_put(a);
    free(text);
    free(assert);
}
END_TEST

/* The store's and render's use (collector_default): the same conversion,
 * then the webhook's defaulting (cr-admission.md 2.2; the v1alpha1
 * maxReplicas filled minReplicas and the CPU target), a config that does
 * not read an error there. */
START_TEST(defaulting_converts) {
    char err[256] = "";
    json_object *o = yaml(A "spec:\n  updateStrategy: {type: OnDelete}\n  maxReplicas: 2\n"
                            "  config: 'receivers: {zipkin: {}}\n\n    exporters: {debug: {}}\n\n"
                            "    service: {pipelines: {t: {receivers: [zipkin], exporters: [debug]}}}'\n");
    ck_assert_int_eq(collector_default(o, err, sizeof err), 0);
    collector_drop_derived(o);
    EQ(js(o), "{\"metadata\":{\"name\":\"c\"},\"apiVersion\":\"opentelemetry.io/v1beta1\","
              "\"kind\":\"OpenTelemetryCollector\",\"spec\":{\"daemonSetUpdateStrategy\":{\"type\":\"OnDelete\"},\"config\":{\"receivers\":"
                     "{\"zipkin\":{\"endpoint\":\"0.0.0.0:9411\"}},\"exporters\":{\"debug\":{}},\"service\":"
                     "{\"pipelines\":{\"t\":{\"exporters\":[\"debug\"],\"receivers\":[\"zipkin\"]}},\"telemetry\":"
                     "{\"metrics\":{\"readers\":[{\"pull\":{\"exporter\":{\"prometheus\":{\"host\":\"0.0.0.0\","
                     "\"port\":8888}}}}]}}}},\"autoscaler\":{\"maxReplicas\":2,\"minReplicas\":1,"
                     "\"targetCPUUtilization\":90},\"mode\":\"deployment\",\"upgradeStrategy\":\"automatic\","
                     "\"replicas\":1,\"managementState\":\"managed\",\"networkPolicy\":{\"enabled\":true}}}");
    json_object_put(o);
    o = yaml(A "spec: {config: 'receivers: [a]'}\n");
    char *before = js(o);
    ck_assert_int_eq(collector_default(o, err, sizeof err), -1);
    ck_assert_str_eq(err, "spec.config.receivers: expected a map, got a list");
    EQ(js(o), before);
    free(before);
    json_object_put(o);
}
END_TEST

int main(void) {
    Suite *s = suite_create("convert");
    TCase *tc = tcase_create("convert");
    tcase_add_test(tc, alpha_to_beta_fields);
    tcase_add_test(tc, config_string_to_structure);
    tcase_add_test(tc, config_unreadable);
    tcase_add_test(tc, beta_to_alpha_fields);
    tcase_add_test(tc, config_structure_to_string);
    tcase_add_test(tc, selectors_round_trip);
    tcase_add_test(tc, round_trip_lossless);
    tcase_add_test(tc, failures);
    tcase_add_test(tc, upstream_fixtures);
    tcase_add_test(tc, invalid_config_fixture);
    tcase_add_test(tc, defaulting_converts);
    tcase_add_test(tc, budgeted);
    tcase_set_timeout(tc, 60);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
