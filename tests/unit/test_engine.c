/* tests/unit/test_engine.c - the mutation engine against the reference (spec).
 *
 * Expectations are complete and ordered: env lists, mounts, init containers
 * and volumes are compared as whole texts, because users (and upstream's
 * e2e asserts) compare them that way. */
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/sbuf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Instrumentation of Appendix A.1 (e2e instrumentation-java). */
static const char *const INST_JAVA =
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: java, namespace: ns1}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://deployment-collector:4318'}\n"
    "  propagators: [jaeger, b3]\n"
    "  env:\n"
    "  - {name: OTEL_TRACES_SAMPLER, value: always_on}\n"
    "  - {name: OTEL_EXPORTER_OTLP_PROTOCOL, value: http/protobuf}\n"
    "  - {name: OTEL_LOGS_EXPORTER, value: none}\n"
    "  java:\n"
    "    env:\n"
    "    - {name: OTEL_JAVAAGENT_DEBUG, value: 'true'}\n"
    "    - {name: OTEL_INSTRUMENTATION_JDBC_ENABLED, value: 'false'}\n";

/* A controller-made pod: generateName, ReplicaSet owner, pod-template-hash. */
#define RS_POD(annotations, containers)                                                                                \
    "apiVersion: v1\nkind: Pod\n"                                                                                      \
    "metadata:\n"                                                                                                      \
    "  generateName: my-java-7b5d8f6c9-\n"                                                                             \
    "  namespace: ns1\n"                                                                                               \
    "  labels: {app: my-java, pod-template-hash: 7b5d8f6c9}\n"                                                         \
    "  annotations: " annotations "\n"                                                                                 \
    "  ownerReferences:\n"                                                                                             \
    "  - {apiVersion: apps/v1, kind: ReplicaSet, name: my-java-7b5d8f6c9, uid: rs-uid, controller: true}\n"            \
    "spec:\n"                                                                                                          \
    "  containers:\n" containers

#define MYAPP                                                                                                          \
    "  - name: myapp\n"                                                                                                \
    "    image: ghcr.io/open-telemetry/opentelemetry-operator/e2e-test-app-java:main\n"                                \
    "    securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}\n"                            \
    "    volumeMounts:\n"                                                                                              \
    "    - {name: kube-api-access-x, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}\n"

static const char *const JAVA_ENV_A1 =
    "OTEL_NODE_IP<status.hostIP\n"
    "OTEL_POD_IP<status.podIP\n"
    "OTEL_JAVAAGENT_DEBUG=true\n"
    "OTEL_INSTRUMENTATION_JDBC_ENABLED=false\n"
    "OTEL_TRACES_SAMPLER=always_on\n"
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n"
    "OTEL_LOGS_EXPORTER=none\n"
    "JAVA_TOOL_OPTIONS= -javaagent:/otel-auto-instrumentation-java-myapp/javaagent.jar\n"
    "OTEL_SERVICE_NAME=my-java\n"
    "OTEL_EXPORTER_OTLP_ENDPOINT=http://deployment-collector:4318\n"
    "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
    "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
    "OTEL_PROPAGATORS=jaeger,b3\n"
    "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=myapp,k8s.deployment.name=my-java,k8s.namespace.name=ns1,"
    "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
    "k8s.replicaset.name=my-java-7b5d8f6c9,service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).myapp,"
    "service.namespace=ns1,service.version=main\n";

START_TEST(appendix_a1_java) {
    fx_resources(INST_JAVA);
    fx_run *r = fx_mutate("a1-java", RS_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", MYAPP), "ns1");
    ck_assert_str_eq(r->warnings, "");
    json_object *c = fx_container(r, "containers", "myapp");
    EQ(fx_env(c), JAVA_ENV_A1);
    EQ(fx_mounts(c), "kube-api-access-x:/var/run/secrets/kubernetes.io/serviceaccount:ro\n"
                     "opentelemetry-auto-instrumentation-java:/otel-auto-instrumentation-java-myapp\n");
    EQ(fx_names(r, "initContainers"), "opentelemetry-auto-instrumentation-java");
    EQ(fx_json(fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-java")),
       "{\"name\":\"opentelemetry-auto-instrumentation-java\","
       "\"image\":\"ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0\","
       "\"command\":[\"cp\",\"/javaagent.jar\",\"/otel-auto-instrumentation-java/javaagent.jar\"],"
       "\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"50m\",\"memory\":\"64Mi\"}},"
       "\"volumeMounts\":[{\"name\":\"opentelemetry-auto-instrumentation-java\",\"mountPath\":\"/otel-auto-instrumentation-java\"}],"
       "\"securityContext\":{\"allowPrivilegeEscalation\":false,\"capabilities\":{\"drop\":[\"ALL\"]}}}");
    EQ(fx_json(json_object_object_get(json_object_object_get(r->res.pod, "spec"), "volumes")),
       "[{\"name\":\"opentelemetry-auto-instrumentation-java\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}}]");
    /* No labels or annotations added. */
    EQ(fx_json(json_object_object_get(json_object_object_get(r->res.pod, "metadata"), "labels")),
       "{\"app\":\"my-java\",\"pod-template-hash\":\"7b5d8f6c9\"}");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA));
    fx_free(r);
}
END_TEST

/* Appendix A.2: the e2e smoke-sidecar collector. */
static const char *const COLLECTOR_A2 =
    "apiVersion: opentelemetry.io/v1beta1\n"
    "kind: OpenTelemetryCollector\n"
    "metadata: {name: sidecar-for-my-app, namespace: ns1}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  config:\n"
    "    receivers: {jaeger: {protocols: {grpc: {}}}}\n"
    "    exporters: {debug: {}}\n"
    "    service: {pipelines: {traces: {receivers: [jaeger], exporters: [debug]}}}\n"
    "  configmaps: [{name: example-config, mountpath: /tmp/example-config}]\n"
    "---\n"
    "apiVersion: apps/v1\nkind: ReplicaSet\n"
    "metadata:\n"
    "  name: my-deployment-with-sidecar-5d8f\n"
    "  namespace: ns1\n"
    "  uid: rs-uid\n"
    "  ownerReferences: [{kind: Deployment, name: my-deployment-with-sidecar, uid: dep-uid}]\n"
    "spec: {replicas: 1}\n";

#define SIDECAR_POD                                                                                                    \
    "apiVersion: v1\nkind: Pod\n"                                                                                      \
    "metadata:\n"                                                                                                      \
    "  generateName: my-deployment-with-sidecar-5d8f-\n"                                                               \
    "  labels: {app: my-pod-with-sidecar, pod-template-hash: 5d8f}\n"                                                  \
    "  annotations: {sidecar.opentelemetry.io/inject: 'true'}\n"                                                       \
    "  ownerReferences: [{kind: ReplicaSet, name: my-deployment-with-sidecar-5d8f, uid: rs-uid}]\n"                    \
    "spec:\n"                                                                                                          \
    "  containers:\n"                                                                                                  \
    "  - {name: myapp, image: jaegertracing/vertx-create-span:operator-e2e-tests}\n"

static const char *const SIDECAR_ENV_A2 =
    "POD_NAME<metadata.name\n"
    "GOMEMLIMIT<<limits.memory\n"
    "GOMAXPROCS<<limits.cpu\n"
    "OTEL_CONFIG=receivers:\n"
    "  jaeger:\n"
    "    protocols:\n"
    "      grpc:\n"
    "        endpoint: 0.0.0.0:14250\n"
    "exporters:\n"
    "  debug: {}\n"
    "service:\n"
    "  telemetry:\n"
    "    metrics:\n"
    "      readers:\n"
    "        - pull:\n"
    "            exporter:\n"
    "              prometheus:\n"
    "                host: 0.0.0.0\n"
    "                port: 8888\n"
    "  pipelines:\n"
    "    traces:\n"
    "      exporters:\n"
    "        - debug\n"
    "      receivers:\n"
    "        - jaeger\n"
    "\n"
    "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
    "OTEL_RESOURCE_ATTRIBUTES_POD_UID<metadata.uid\n"
    "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
    "OTEL_RESOURCE_ATTRIBUTES=k8s.deployment.name=my-deployment-with-sidecar,k8s.deployment.uid=dep-uid,"
    "k8s.namespace.name=ns1,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),"
    "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),"
    "k8s.replicaset.name=my-deployment-with-sidecar-5d8f,k8s.replicaset.uid=rs-uid\n";

START_TEST(appendix_a2_sidecar_legacy) {
    fx_resources(COLLECTOR_A2);
    fx_run *r = fx_mutate("a2-sidecar", SIDECAR_POD, "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "containers"), "myapp,otc-container");
    json_object *c = fx_container(r, "containers", "otc-container");
    EQ(fx_env(c), SIDECAR_ENV_A2);
    EQ(fx_json(json_object_object_get(c, "args")), "[\"--config=env:OTEL_CONFIG\"]");
    EQ(fx_json(json_object_object_get(c, "image")),
       "\"ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.158.0\"");
    EQ(fx_json(json_object_object_get(c, "ports")),
       "[{\"name\":\"jaeger-grpc\",\"containerPort\":14250,\"protocol\":\"TCP\"},"
       "{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"}]");
    EQ(fx_mounts(c), "configmap-example-config:/var/conf/tmp/example-config/configmap-example-config\n");
    ck_assert_ptr_null(json_object_object_get(c, "livenessProbe"));
    ck_assert_ptr_null(json_object_object_get(c, "restartPolicy"));
    EQ(fx_json(json_object_object_get(json_object_object_get(r->res.pod, "spec"), "volumes")),
       "[{\"name\":\"configmap-example-config\",\"configMap\":{\"name\":\"example-config\"}}]");
    EQ(fx_json(json_object_object_get(json_object_object_get(json_object_object_get(r->res.pod, "metadata"), "labels"),
                                      "sidecar.opentelemetry.io/injected")),
       "\"ns1.sidecar-for-my-app\"");
    ck_assert(r->res.sidecar);
    ck_assert(r->res.asked);
    EQ(fx_into(r), "");
    fx_free(r);
}
END_TEST

START_TEST(sidecar_native) {
    fx_resources(COLLECTOR_A2);
    fx_options()->native_sidecars = true;
    fx_run *r = fx_mutate("sidecar-native",
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {sidecar.opentelemetry.io/inject: sidecar-for-my-app}\n"
                          "spec:\n  initContainers: [{name: setup, image: busybox}]\n  containers: [{name: app, image: app:1}]\n",
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "containers"), "app");
    EQ(fx_names(r, "initContainers"), "setup,otc-container");
    json_object *c = fx_container(r, "initContainers", "otc-container");
    EQ(fx_json(json_object_object_get(c, "restartPolicy")), "\"Always\"");
    fx_options()->native_sidecars = false;
    fx_free(r);
}
END_TEST

START_TEST(sidecar_probes_and_startup_copy) {
    fx_resources("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                 "metadata: {name: hc, namespace: ns1}\n"
                 "spec:\n  mode: sidecar\n  args: {feature-gates: x, log-level: debug}\n"
                 "  config:\n    receivers: {otlp: {protocols: {grpc: {}, http: {}}}}\n"
                 "    exporters: {debug: {}}\n    extensions: {health_check: {}}\n"
                 "    service: {extensions: [health_check], pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n");
    fx_options()->native_sidecars = true;
    fx_run *r = fx_mutate("sidecar-probes",
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {sidecar.opentelemetry.io/inject: 'true'}\n"
                          "spec:\n  containers: [{name: app, image: app:1}]\n",
                          "ns1");
    json_object *c = fx_container(r, "initContainers", "otc-container");
    EQ(fx_json(json_object_object_get(c, "args")),
       "[\"--feature-gates=x\",\"--log-level=debug\",\"--config=env:OTEL_CONFIG\"]");
    EQ(fx_json(json_object_object_get(c, "ports")),
       "[{\"name\":\"health-check\",\"containerPort\":13133,\"protocol\":\"TCP\"},"
       "{\"name\":\"metrics\",\"containerPort\":8888,\"protocol\":\"TCP\"},"
       "{\"name\":\"otlp-grpc\",\"containerPort\":4317,\"protocol\":\"TCP\"},"
       "{\"name\":\"otlp-http\",\"containerPort\":4318,\"protocol\":\"TCP\"}]");
    EQ(fx_json(json_object_object_get(c, "livenessProbe")), "{\"httpGet\":{\"path\":\"/\",\"port\":13133}}");
    ck_assert_ptr_nonnull(json_object_object_get(c, "startupProbe"));
    fx_options()->native_sidecars = false;
    fx_free(r);
}
END_TEST

START_TEST(sidecar_false_removes) {
    fx_run *r = fx_mutate("sidecar-false",
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {sidecar.opentelemetry.io/inject: 'false'}\n"
                          "spec:\n  containers: [{name: app, image: a}, {name: otc-container, image: c}]\n",
                          "ns1");
    EQ(fx_names(r, "containers"), "app");
    EQ(fx_json(r->res.patch), "[{\"op\":\"remove\",\"path\":\"/spec/containers/1\"}]");
    ck_assert(r->res.asked && !r->res.sidecar && !r->res.injected);
    fx_free(r);
}
END_TEST

START_TEST(sidecar_selection_warnings) {
    fx_resources("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                 "metadata: {name: dep, namespace: ns1}\nspec: {mode: deployment, config: {receivers: {}, exporters: {}, service: {pipelines: {}}}}\n"
                 "---\napiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                 "metadata: {name: s1, namespace: ns2}\nspec: {mode: sidecar, config: {receivers: {}, exporters: {}, service: {pipelines: {}}}}\n"
                 "---\napiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                 "metadata: {name: s2, namespace: ns2}\nspec: {mode: sidecar, config: {receivers: {}, exporters: {}, service: {pipelines: {}}}}\n");
    static const struct {
        const char *value, *ns, *warning;
    } cases[] = {
        {"true", "ns1", "sidecar: no OpenTelemetryCollector in sidecar mode in namespace ns1; sidecar not injected"},
        {"true", "ns2", "sidecar: 2 OpenTelemetryCollectors in sidecar mode in namespace ns2, name one "
                        "(sidecar.opentelemetry.io/inject: <name>); sidecar not injected"},
        {"dep", "ns1", "sidecar: OpenTelemetryCollector ns1/dep has mode deployment, not sidecar; sidecar not injected"},
        {"nope", "ns1", "sidecar: OpenTelemetryCollector ns1/nope not found; sidecar not injected"},
        {"ns2/s2", "ns1", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char pod[512];
        snprintf(pod, sizeof pod,
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {sidecar.opentelemetry.io/inject: '%s'}\n"
                 "spec:\n  containers: [{name: app, image: a}]\n",
                 cases[i].value);
        fx_run *r = fx_mutate("sidecar-select", pod, cases[i].ns);
        ck_assert_str_eq(r->warnings, cases[i].warning);
        ck_assert_int_eq(r->res.sidecar, !*cases[i].warning);
        fx_free(r);
    }
}
END_TEST

/* Spec 7.11: a broken instrumentation reference no longer drops the sidecar. */
START_TEST(missing_instrumentation_keeps_sidecar) {
    fx_resources(COLLECTOR_A2);
    fx_run *r = fx_mutate("typo-keeps-sidecar",
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                          "  annotations: {sidecar.opentelemetry.io/inject: 'true', instrumentation.opentelemetry.io/inject-java: jva}\n"
                          "spec:\n  containers: [{name: app, image: a}]\n",
                          "ns1");
    ck_assert_str_eq(r->warnings, "inject-java: Instrumentation ns1/jva not found; Java not injected");
    ck_assert(r->res.sidecar);
    ck_assert_uint_eq(r->res.injected, 0);
    fx_free(r);
}
END_TEST

static const char *const INST_PLAIN = "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                                      "metadata: {name: inst, namespace: ns1}\n"
                                      "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n";

#define BARE_POD(ann, containers)                                                                                      \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: " ann "\nspec:\n  containers:\n" containers

START_TEST(nodejs_env) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("nodejs", BARE_POD("{instrumentation.opentelemetry.io/inject-nodejs: 'true'}",
                                             "  - name: app\n    image: node-app\n    env: [{name: NODE_OPTIONS, value: '--max-old-space-size=512'}]\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_env(fx_container(r, "containers", "app")),
       "OTEL_NODE_IP<status.hostIP\n"
       "OTEL_POD_IP<status.podIP\n"
       "NODE_OPTIONS=--max-old-space-size=512 --require /otel-auto-instrumentation-nodejs/autoinstrumentation.js\n"
       "OTEL_METRICS_EXPORTER=otlp\n"
       "OTEL_SERVICE_NAME=web\n"
       "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
       "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
       "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=app,k8s.namespace.name=ns1,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),"
       "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,"
       "service.namespace=ns1\n");
    EQ(fx_mounts(fx_container(r, "containers", "app")),
       "opentelemetry-auto-instrumentation-nodejs:/otel-auto-instrumentation-nodejs\n");
    EQ(fx_json(json_object_object_get(fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-nodejs"), "command")),
       "[\"cp\",\"-r\",\"/autoinstrumentation/.\",\"/otel-auto-instrumentation-nodejs\"]");
    fx_free(r);
}
END_TEST

static const char *const PY_ENV_TAIL =
    "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf\n"
    "OTEL_TRACES_EXPORTER=otlp\n"
    "OTEL_METRICS_EXPORTER=otlp\n"
    "OTEL_LOGS_EXPORTER=otlp\n"
    "OTEL_SERVICE_NAME=web\n"
    "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317\n"
    "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
    "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
    "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=app,k8s.namespace.name=ns1,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),"
    "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,"
    "service.namespace=ns1,service.version=3.12\n";

START_TEST(python_glibc_and_musl) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n"
                 "  python: {env: [{name: PY_LANG_VAR, value: x}]}\n");
    const char *platforms[] = {"", "musl"};
    for (int i = 0; i < 2; i++) {
        char pod[512];
        snprintf(pod, sizeof pod,
                 BARE_POD("{instrumentation.opentelemetry.io/inject-python: 'true'%s%s}",
                          "  - {name: app, image: 'python:3.12', env: [{name: PYTHONPATH, value: /app}]}\n"),
                 *platforms[i] ? ", instrumentation.opentelemetry.io/otel-python-platform: " : "", platforms[i]);
        fx_run *r = fx_mutate("python", pod, "ns1");
        ck_assert_str_eq(r->warnings, "");
        char want[2048];
        snprintf(want, sizeof want,
                 "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
                 "PYTHONPATH=/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation:/app:/otel-auto-instrumentation-python\n"
                 "PY_LANG_VAR=x\n%s",
                 PY_ENV_TAIL);
        EQ(fx_env(fx_container(r, "containers", "app")), want);
        EQ(fx_json(json_object_object_get(fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-python"), "command")),
           i ? "[\"cp\",\"-r\",\"/autoinstrumentation-musl/.\",\"/otel-auto-instrumentation-python\"]"
             : "[\"cp\",\"-r\",\"/autoinstrumentation/.\",\"/otel-auto-instrumentation-python\"]");
        fx_free(r);
    }
}
END_TEST

START_TEST(python_new_pythonpath_order) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("python-new", BARE_POD("{instrumentation.opentelemetry.io/inject-python: 'true'}",
                                                 "  - {name: app, image: 'python:3.12'}\n"),
                          "ns1");
    char want[2048];
    snprintf(want, sizeof want,
             "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
             "PYTHONPATH=/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation:/otel-auto-instrumentation-python\n%s",
             PY_ENV_TAIL);
    EQ(fx_env(fx_container(r, "containers", "app")), want);
    fx_free(r);
}
END_TEST

/* Spec 7.1: an unknown platform no longer yields an init container copying from "". */
START_TEST(python_bad_platform) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("python-alpine",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-python: 'true', "
                                   "instrumentation.opentelemetry.io/otel-python-platform: alpine}",
                                   "  - {name: app, image: 'python:3.12'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings,
                     "otel-python-platform: unsupported value \"alpine\" (expected glibc or musl); Python not injected");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_free(r);
}
END_TEST

START_TEST(python_entrypoint_mode) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("python-entrypoint",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-python: 'true', "
                                   "instrumentation.opentelemetry.io/python-mode: entrypoint, "
                                   "instrumentation.opentelemetry.io/container-names: 'app,worker'}",
                                   "  - {name: app, image: 'python:3.12', command: [python, app.py]}\n"
                                   "  - {name: worker, image: 'python:3.12'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "python-mode entrypoint: container worker has no command to prefix; using the PYTHONPATH hook");
    json_object *app = fx_container(r, "containers", "app");
    EQ(fx_json(json_object_object_get(app, "command")),
       "[\"/otel-auto-instrumentation-python/bin/opentelemetry-instrument\",\"python\",\"app.py\"]");
    char *env = fx_env(app);
    ck_assert_ptr_nonnull(strstr(env, "\nPYTHONPATH=/otel-auto-instrumentation-python\n"));
    free(env);
    env = fx_env(fx_container(r, "containers", "worker"));
    ck_assert_ptr_nonnull(strstr(env, "PYTHONPATH=/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation:"));
    free(env);
    fx_free(r);
}
END_TEST

START_TEST(sdk_only) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n"
                 "  sampler: {type: parentbased_traceidratio, argument: '0.25'}\n"
                 "  resource: {addK8sUIDAttributes: true, resourceAttributes: {team: checkout}}\n");
    fx_run *r = fx_mutate("sdk", BARE_POD("{instrumentation.opentelemetry.io/inject-sdk: 'true'}",
                                          "  - {name: app, image: 'registry.example:5000/app@sha256:abcd'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_env(fx_container(r, "containers", "app")),
       "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
       "OTEL_SERVICE_NAME=web\n"
       "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_UID<metadata.uid\n"
       "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
       "OTEL_TRACES_SAMPLER=parentbased_traceidratio\n"
       "OTEL_TRACES_SAMPLER_ARG=0.25\n"
       "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=app,k8s.namespace.name=ns1,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),"
       "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),"
       "service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,service.namespace=ns1,"
       "service.version=sha256:abcd,team=checkout\n");
    ck_assert_ptr_null(json_object_object_get(json_object_object_get(r->res.pod, "spec"), "initContainers"));
    ck_assert_ptr_null(json_object_object_get(json_object_object_get(r->res.pod, "spec"), "volumes"));
    EQ(fx_into(r), "sdk:app");
    fx_free(r);
}
END_TEST

/* Upstream's TestSDKInjection (internal/instrumentation/sdk_test.go), cases
 * "SDK env vars not defined" and "Resource attribute from CRD": the same
 * Instrumentations, ReplicaSet and pods, and upstream's expected env after
 * the two IP variables its SDK-only flow prepends (injectCommonEnvVar; the
 * unit test calls the next step alone). In the second, every Kubernetes
 * attribute of spec.resource.resourceAttributes and its service.version
 * give way to what the pod says (service.version=latest, from app:latest):
 * spec 3.7, later steps override earlier ones. */
START_TEST(upstream_sdk_injection) {
    fx_resources("apiVersion: apps/v1\nkind: ReplicaSet\n"
                 "metadata:\n  name: my-replicaset\n  namespace: project1\n  uid: rsuid\n"
                 "  ownerReferences: [{kind: Deployment, apiVersion: apps/v1, name: my-deployment, uid: depuid}]\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: plain, namespace: project1}\n"
                 "spec:\n  exporter: {endpoint: 'https://collector:4317'}\n"
                 "  resource: {addK8sUIDAttributes: true, resourceAttributes: {foo: hidden}}\n"
                 "  propagators: [b3, jaeger]\n  sampler: {type: parentbased_traceidratio, argument: '0.25'}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: crd, namespace: project1}\n"
                 "spec:\n  exporter: {endpoint: 'https://collector:4317'}\n"
                 "  resource:\n    addK8sUIDAttributes: true\n    resourceAttributes:\n"
                 "      k8s.container.name: explicit-container\n      k8s.deployment.name: explicit-deployment\n"
                 "      k8s.deployment.uid: explicit-deployment-uid\n      k8s.namespace.name: explicit-ns\n"
                 "      k8s.node.name: explicit-node\n      k8s.pod.name: explicit-pod\n"
                 "      k8s.pod.uid: explicit-pod-uid\n      k8s.replicaset.name: explicit-replicaset\n"
                 "      k8s.replicaset.uid: explicit-replicaset-uid\n      service.instance.id: explicit-id\n"
                 "      service.version: explicit-version\n"
                 "  propagators: [b3, jaeger]\n  sampler: {type: parentbased_traceidratio, argument: '0.25'}\n");
#define UPSTREAM_POD(labels, annotations, image, node)                                                                 \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  namespace: project1\n  name: app\n  uid: pod-uid\n"                       \
    "  ownerReferences: [{kind: ReplicaSet, name: my-replicaset, uid: rsuid, apiVersion: apps/v1}]\n" labels           \
    "  annotations: {" annotations "}\n"                                                                              \
    "spec:\n" node "  containers: [{name: application-name, image: '" image "'}]\n"
    fx_run *r = fx_mutate("upstream-sdk-env-not-defined",
                          UPSTREAM_POD("  labels: {app.kubernetes.io/name: app-name, app.kubernetes.io/version: v1}\n",
                                       "instrumentation.opentelemetry.io/inject-sdk: plain, resource.opentelemetry.io/foo: bar",
                                       "app:v1@sha256:232a180dbcbcfa7250917507f3827d88a9ae89bb1cdd8fe3ac4db7b764ebb25a", ""),
                          "project1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_env(fx_container(r, "containers", "application-name")),
       "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
       "OTEL_SERVICE_NAME=my-deployment\n"
       "OTEL_EXPORTER_OTLP_ENDPOINT=https://collector:4317\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
       "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
       "OTEL_PROPAGATORS=b3,jaeger\n"
       "OTEL_TRACES_SAMPLER=parentbased_traceidratio\n"
       "OTEL_TRACES_SAMPLER_ARG=0.25\n"
       "OTEL_RESOURCE_ATTRIBUTES=foo=bar,k8s.container.name=application-name,k8s.deployment.name=my-deployment,"
       "k8s.deployment.uid=depuid,k8s.namespace.name=project1,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),"
       "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=pod-uid,k8s.replicaset.name=my-replicaset,"
       "k8s.replicaset.uid=rsuid,service.instance.id=project1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).application-name,"
       "service.namespace=project1,"
       "service.version=v1@sha256:232a180dbcbcfa7250917507f3827d88a9ae89bb1cdd8fe3ac4db7b764ebb25a\n");
    fx_free(r);
    r = fx_mutate("upstream-resource-attribute-from-crd", UPSTREAM_POD("", "instrumentation.opentelemetry.io/inject-sdk: crd", "app:latest", "  nodeName: node-name\n"),
                  "project1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_env(fx_container(r, "containers", "application-name")),
       "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
       "OTEL_SERVICE_NAME=my-deployment\n"
       "OTEL_EXPORTER_OTLP_ENDPOINT=https://collector:4317\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
       "OTEL_PROPAGATORS=b3,jaeger\n"
       "OTEL_TRACES_SAMPLER=parentbased_traceidratio\n"
       "OTEL_TRACES_SAMPLER_ARG=0.25\n"
       "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=application-name,k8s.deployment.name=my-deployment,"
       "k8s.deployment.uid=depuid,k8s.namespace.name=project1,k8s.node.name=node-name,"
       "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),k8s.pod.uid=pod-uid,k8s.replicaset.name=my-replicaset,"
       "k8s.replicaset.uid=rsuid,service.instance.id=project1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).application-name,"
       "service.namespace=project1,service.version=latest\n");
    fx_free(r);
    /* Without a version from the pod (an image without a tag), the
     * Instrumentation's stays, as in the reference (it sets only a
     * non-empty one). */
    r = fx_mutate("crd-version-kept", UPSTREAM_POD("", "instrumentation.opentelemetry.io/inject-sdk: crd", "app", "  nodeName: node-name\n"), "project1");
    char *env = fx_env(fx_container(r, "containers", "application-name"));
    ck_assert_ptr_nonnull(strstr(env, ",service.namespace=project1,service.version=explicit-version\n"));
    free(env);
    fx_free(r);
#undef UPSTREAM_POD
}
END_TEST

/* Spec 1.2, through its effect on which Instrumentation is used. */
START_TEST(namespace_precedence) {
    fx_resources("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns1\n"
                 "  annotations: {instrumentation.opentelemetry.io/inject-sdk: other}\n"
                 "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns2\n"
                 "  annotations: {instrumentation.opentelemetry.io/inject-sdk: 'false'}\n"
                 "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns3\n"
                 "  annotations: {instrumentation.opentelemetry.io/inject-sdk: 'true'}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: other, namespace: ns1}\nspec: {exporter: {endpoint: 'http://other:4317'}}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: mine, namespace: ns1}\nspec: {exporter: {endpoint: 'http://mine:4317'}}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: only, namespace: ns2}\nspec: {exporter: {endpoint: 'http://only:4317'}}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: only, namespace: ns3}\nspec: {exporter: {endpoint: 'http://ns3:4317'}}\n");
    static const struct {
        const char *pod_value, *ns, *endpoint; /* NULL endpoint: not injected */
    } cases[] = {
        {NULL, "ns1", "http://other:4317"},   /* P empty: N */
        {"true", "ns1", "http://other:4317"}, /* P true, N a name: N wins */
        {"mine", "ns1", "http://mine:4317"},  /* P a name wins */
        {"false", "ns1", NULL},               /* P false wins */
        {"true", "ns2", "http://only:4317"},  /* P true, N false: P */
        {NULL, "ns2", NULL},                  /* N false alone */
        {"TRUE", "ns3", "http://ns3:4317"},   /* case-insensitive true */
        {"ns2/only", "ns3", "http://only:4317"}, /* cross-namespace reference */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char pod[512];
        snprintf(pod, sizeof pod, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {%s%s%s}\n"
                 "spec:\n  containers: [{name: app, image: a}]\n",
                 cases[i].pod_value ? "instrumentation.opentelemetry.io/inject-sdk: '" : "",
                 cases[i].pod_value ? cases[i].pod_value : "", cases[i].pod_value ? "'" : "");
        fx_run *r = fx_mutate("precedence", pod, cases[i].ns);
        ck_assert_str_eq(r->warnings, "");
        char *env = fx_env(fx_container(r, "containers", "app"));
        if (cases[i].endpoint) {
            char want[128];
            snprintf(want, sizeof want, "OTEL_EXPORTER_OTLP_ENDPOINT=%s\n", cases[i].endpoint);
            ck_assert_msg(strstr(env, want), "case %zu: %s", i, env);
        } else {
            ck_assert_msg(!*env, "case %zu: %s", i, env);
        }
        free(env);
        fx_free(r);
    }
}
END_TEST

START_TEST(multi_container_lists_and_order) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("multi",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                   "instrumentation.opentelemetry.io/inject-python: 'true', "
                                   "instrumentation.opentelemetry.io/java-container-names: 'b, a', "
                                   "instrumentation.opentelemetry.io/python-container-names: c}",
                                   "  - {name: a, image: 'a:1'}\n  - {name: b, image: 'b:1'}\n  - {name: c, image: 'c:1'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "initContainers"), "opentelemetry-auto-instrumentation-java,opentelemetry-auto-instrumentation-python");
    EQ(fx_names(r, "volumes"), "opentelemetry-auto-instrumentation-java,opentelemetry-auto-instrumentation-python");
    EQ(fx_mounts(fx_container(r, "containers", "b")), "opentelemetry-auto-instrumentation-java:/otel-auto-instrumentation-java-b\n");
    EQ(fx_mounts(fx_container(r, "containers", "c")), "opentelemetry-auto-instrumentation-python:/otel-auto-instrumentation-python\n");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA) | MUTATE_BIT(MUTATE_PYTHON));
    EQ(fx_into(r), "java:b,a python:c"); /* in the order injected: the list's */
    ck_assert(r->res.asked);
    fx_free(r);
}
END_TEST

START_TEST(init_container_target) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("init-target",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                   "instrumentation.opentelemetry.io/container-names: 'app,migrate'}",
                                   "  - {name: app, image: 'a:1'}\n"
                                   "  initContainers:\n  - {name: setup, image: 's:1'}\n  - {name: migrate, image: 'm:1', "
                                   "securityContext: {runAsUser: 1000}}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    /* Inserted right before the first target, which is the init container. */
    EQ(fx_names(r, "initContainers"), "setup,opentelemetry-auto-instrumentation-java,migrate");
    EQ(fx_json(json_object_object_get(fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-java"),
                                      "securityContext")),
       "{\"runAsUser\":1000}");
    EQ(fx_mounts(fx_container(r, "initContainers", "migrate")),
       "opentelemetry-auto-instrumentation-java:/otel-auto-instrumentation-java-migrate\n");
    EQ(fx_into(r), "java:migrate,app"); /* init containers first */
    fx_free(r);
}
END_TEST

START_TEST(container_name_validation) {
    fx_resources(INST_PLAIN);
    static const struct {
        const char *ann, *warning;
    } cases[] = {
        {"instrumentation.opentelemetry.io/container-names: 'a.b'",
         "container-names: invalid characters in \"a.b\" (expected names separated by commas); nothing instrumented"},
        {"instrumentation.opentelemetry.io/java-container-names: 'a,b,a,b', instrumentation.opentelemetry.io/inject-sdk: 'true', "
         "instrumentation.opentelemetry.io/sdk-container-names: c",
         "duplicated container names detected: [a b]; nothing instrumented"},
        {"instrumentation.opentelemetry.io/java-container-names: a, instrumentation.opentelemetry.io/inject-sdk: 'true'",
         "incorrect instrumentation configuration - please provide container names for all instrumentations; nothing instrumented"},
        {"instrumentation.opentelemetry.io/java-container-names: 'a,zz'", "inject-java: no container named zz in the pod"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char pod[1024];
        snprintf(pod, sizeof pod,
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                 "  annotations: {instrumentation.opentelemetry.io/inject-java: 'true', %s}\n"
                 "spec:\n  containers: [{name: a, image: a}, {name: b, image: b}, {name: c, image: c}]\n",
                 cases[i].ann);
        fx_run *r = fx_mutate("names", pod, "ns1");
        ck_assert_str_eq(r->warnings, cases[i].warning);
        fx_free(r);
    }
}
END_TEST

/* Every name of a list is looked up, also once the pod's containers are
 * all targeted (docs/compat.md: a missing one is said, and counted), from
 * the pod's list or the namespace's. */
START_TEST(container_list_names_a_missing_container) {
    char res[1024];
    snprintf(res, sizeof res,
             "%s---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns2\n"
             "  annotations: {instrumentation.opentelemetry.io/container-names: 'app,gone'}\n"
             "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
             "metadata: {name: inst, namespace: ns2}\nspec: {exporter: {endpoint: 'http://otel:4317'}}\n",
             INST_PLAIN);
    fx_resources(res);
    static const struct {
        const char *ann, *ns, *warning;
    } cases[] = {
        {"{instrumentation.opentelemetry.io/inject-java: 'true', instrumentation.opentelemetry.io/container-names: "
         "'app,nope'}",
         "ns1", "inject-java: no container named nope in the pod"},
        {"{instrumentation.opentelemetry.io/inject-java: 'true'}", "ns2", "inject-java: no container named gone in the pod"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char pod[512];
        snprintf(pod, sizeof pod, BARE_POD("%s", "  - {name: app, image: 'a:1'}\n"), cases[i].ann);
        fx_run *r = fx_mutate("missing-container", pod, cases[i].ns);
        ck_assert_str_eq(r->warnings, cases[i].warning);
        ck_assert_uint_eq(r->res.skips, 1u << MUTATE_SKIP_UNKNOWN_CONTAINER);
        ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA));
        EQ(fx_mounts(fx_container(r, "containers", "app")),
           "opentelemetry-auto-instrumentation-java:/otel-auto-instrumentation-java-app\n");
        fx_free(r);
    }
}
END_TEST

START_TEST(non_multi_mode_dedupes) {
    fx_resources(INST_PLAIN);
    fx_options()->multi_instrumentation = false;
    fx_run *r = fx_mutate("non-multi",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                   "instrumentation.opentelemetry.io/container-names: 'a,a'}",
                                   "  - {name: a, image: 'a:1'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "container-names lists [a] more than once; each container is instrumented once");
    EQ(fx_mounts(fx_container(r, "containers", "a")), "opentelemetry-auto-instrumentation-java:/otel-auto-instrumentation-java-a\n");
    fx_options()->multi_instrumentation = true;
    fx_free(r);
}
END_TEST

START_TEST(instrumentation_selection_warnings) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("none", BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", "  - {name: a, image: a}\n"), "ns9");
    ck_assert_str_eq(r->warnings, "inject-java: no Instrumentation in namespace ns9; Java not injected");
    fx_free(r);
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: xa, namespace: ns1}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: xb, namespace: ns1}\n");
    r = fx_mutate("ambiguous", BARE_POD("{instrumentation.opentelemetry.io/inject-nodejs: 'true'}", "  - {name: a, image: a}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "inject-nodejs: 2 Instrumentations in namespace ns1, name one (inject-nodejs: <name>); NodeJS not injected");
    fx_free(r);
    fx_options()->implemented &= ~MUTATE_BIT(MUTATE_DOTNET);
    r = fx_mutate("not-built", BARE_POD("{instrumentation.opentelemetry.io/inject-dotnet: x}", "  - {name: a, image: a}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "inject-dotnet: .NET auto instrumentation is not available in this version of otel-webhook; not injected");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_options()->implemented = ~0u;
    fx_free(r);
    fx_options()->enabled &= ~MUTATE_BIT(MUTATE_NODEJS);
    r = fx_mutate("disabled", BARE_POD("{instrumentation.opentelemetry.io/inject-nodejs: xa}", "  - {name: a, image: a}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "support for NodeJS auto instrumentation is not enabled");
    fx_options()->enabled |= MUTATE_BIT(MUTATE_NODEJS);
    fx_free(r);
}
END_TEST

/* Spec 7.9: all targets skipped -> no init container, no volume. */
START_TEST(value_from_skips_container) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("java-valuefrom",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}",
                                   "  - name: a\n    image: a\n    env:\n    - {name: JAVA_TOOL_OPTIONS, valueFrom: {configMapKeyRef: {name: c, key: k}}}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "inject-java: container a skipped: JAVA_TOOL_OPTIONS is set with valueFrom\n"
                                  "inject-java: every target container was skipped; no init container added");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_free(r);
}
END_TEST

START_TEST(existing_resource_attributes) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("ora-existing",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-sdk: 'true', resource.opentelemetry.io/team: a}",
                                   "  - name: app\n    image: 'a:2'\n    env:\n"
                                   "    - {name: OTEL_RESOURCE_ATTRIBUTES, value: 'k8s.pod.name=fixed,service.version=9'}\n"
                                   "    - {name: OTHER, value: x}\n"),
                          "ns1");
    EQ(fx_env(fx_container(r, "containers", "app")),
       "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\nOTHER=x\n"
       "OTEL_SERVICE_NAME=app\n" /* spec 3.4: the user's k8s.pod.name keeps the pod name out of the map */
       "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
       "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
       "OTEL_RESOURCE_ATTRIBUTES=k8s.pod.name=fixed,service.version=9,k8s.container.name=app,k8s.namespace.name=ns1,"
       "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,"
       "service.namespace=ns1,team=a\n");
    fx_free(r);
    r = fx_mutate("ora-valuefrom",
                  BARE_POD("{instrumentation.opentelemetry.io/inject-sdk: 'true'}",
                           "  - name: app\n    image: a\n    env:\n"
                           "    - {name: OTEL_RESOURCE_ATTRIBUTES, valueFrom: {configMapKeyRef: {name: c, key: k}}}\n"),
                  "ns1");
    ck_assert_str_eq(r->warnings, "inject-sdk: OTEL_RESOURCE_ATTRIBUTES of container app comes from valueFrom; "
                                  "Kubernetes attributes not added");
    char *env = fx_env(fx_container(r, "containers", "app"));
    ck_assert_ptr_nonnull(strstr(env, "OTEL_RESOURCE_ATTRIBUTES?\n"));
    free(env);
    fx_free(r);
}
END_TEST

/* Spec 7.5: two languages in one container write the helpers once. */
START_TEST(two_languages_one_container) {
    fx_resources(INST_PLAIN);
    fx_options()->multi_instrumentation = false;
    fx_run *r = fx_mutate("two-langs",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true', instrumentation.opentelemetry.io/inject-nodejs: 'true'}",
                                   "  - {name: app, image: 'a:1'}\n"),
                          "ns1");
    char *env = fx_env(fx_container(r, "containers", "app"));
    const char *first = strstr(env, "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<");
    ck_assert_ptr_nonnull(first);
    ck_assert_ptr_null(strstr(first + 1, "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<"));
    ck_assert_ptr_null(strstr(strstr(env, "k8s.pod.name=") + 1, "k8s.pod.name="));
    free(env);
    EQ(fx_names(r, "initContainers"), "opentelemetry-auto-instrumentation-java,opentelemetry-auto-instrumentation-nodejs");
    fx_options()->multi_instrumentation = true;
    fx_free(r);
}
END_TEST

START_TEST(exporter_tls) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  exporter:\n    endpoint: 'https://otel:4317'\n"
                 "    tls: {secretName: my.certs, configMapName: ca, ca_file: ca.crt, cert_file: tls.crt, key_file: /abs/tls.key}\n"
                 "---\napiVersion: v1\nkind: Secret\nmetadata: {name: my.certs, namespace: ns1}\ndata: {tls.crt: c2VjcmV0}\n"
                 "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: ca, namespace: ns1}\ndata: {ca.crt: x}\n");
    fx_run *r = fx_mutate("tls", BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", "  - {name: app, image: 'a:1'}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "");
    char *env = fx_env(fx_container(r, "containers", "app"));
    ck_assert_ptr_nonnull(strstr(env, "OTEL_EXPORTER_OTLP_ENDPOINT=https://otel:4317\n"
                                      "OTEL_EXPORTER_OTLP_CERTIFICATE=/otel-auto-instrumentation-configmap-ca/ca.crt\n"
                                      "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=/otel-auto-instrumentation-secret-my.certs/tls.crt\n"
                                      "OTEL_EXPORTER_OTLP_CLIENT_KEY=/abs/tls.key\n"));
    free(env);
    EQ(fx_mounts(fx_container(r, "containers", "app")),
       "opentelemetry-auto-instrumentation-java:/otel-auto-instrumentation-java-app\n"
       "otel-auto-secret-my-certs:/otel-auto-instrumentation-secret-my.certs:ro\n"
       "otel-auto-configmap-ca:/otel-auto-instrumentation-configmap-ca:ro\n");
    EQ(fx_json(json_object_object_get(json_object_object_get(r->res.pod, "spec"), "volumes")),
       "[{\"name\":\"otel-auto-secret-my-certs\",\"secret\":{\"secretName\":\"my.certs\"}},"
       "{\"name\":\"otel-auto-configmap-ca\",\"configMap\":{\"name\":\"ca\"}},"
       "{\"name\":\"opentelemetry-auto-instrumentation-java\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}}]");
    fx_free(r);
    /* The secret's value never enters the store. */
    fx_resources("apiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: ns1}\ndata: {password: c2VjcmV0}\n"
                 "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: inst, namespace: ns1}\n"
                 "spec: {exporter: {tls: {secretName: missing, ca_file: ca.crt}}}\n");
    r = fx_mutate("tls-missing", BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", "  - {name: app, image: 'a:1'}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "inject-java: secret ns1/missing with the exporter's certificates does not exist; Java not injected");
    fx_free(r);
}
END_TEST

/* sdk_configure looks up the variables it may add in one pass over the
 * container's env (env_find_many): the answers must be those of one scan
 * per name. Duplicates resolve to the first entry, an entry whose "name"
 * is not its first member still counts, names sharing a prefix or a length
 * do not, a lone OTEL_TRACES_SAMPLER_ARG keeps the sampler out, and what
 * sdk_common_env added before (the IPs, the Instrumentation's env) is seen. */
START_TEST(sdk_env_checks_one_pass) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  exporter:\n    endpoint: 'https://otel:4317'\n"
                 "    tls: {ca_file: /ca.crt, cert_file: /tls.crt, key_file: /tls.key}\n"
                 "  propagators: [b3]\n"
                 "  sampler: {type: always_on, argument: '1'}\n"
                 "  env: [{name: OTEL_EXPORTER_OTLP_CLIENT_KEY, value: from-inst}, {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: inst}]\n"
                 "  resource: {addK8sUIDAttributes: true}\n");
    fx_run *r = fx_mutate("one-pass",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-sdk: 'true'}",
                                   "  - name: app\n    image: 'a:1'\n    env:\n"
                                   "    - {name: OTEL_RESOURCE_ATTRIBUTES, value: 'x=1'}\n"
                                   "    - {name: OTEL_RESOURCE_ATTRIBUTES, value: 'y=2'}\n"
                                   "    - {value: mine, name: OTEL_SERVICE_NAME}\n"
                                   "    - {name: OTEL_PROPAGATORSX, value: p}\n"
                                   "    - {name: OTEL_PROPAGATOR, value: p}\n"
                                   "    - {name: OTEL_TRACES_SAMPLER_ARG, value: '0.5'}\n"
                                   "    - {name: OTEL_RESOURCE_ATTRIBUTES_POD_UID, value: u}\n"
                                   "    - {name: OTEL_RESOURCE_ATTRIBUTES_NODE_NAMF, value: 'n'}\n"
                                   "    - {name: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, value: first}\n"
                                   "    - {name: OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE, value: second}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_env(fx_container(r, "containers", "app")),
       "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
       "OTEL_RESOURCE_ATTRIBUTES=y=2\n" /* the first one is written to and moved to the end */
       "OTEL_SERVICE_NAME=mine\n"
       "OTEL_PROPAGATORSX=p\nOTEL_PROPAGATOR=p\n"
       "OTEL_TRACES_SAMPLER_ARG=0.5\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_UID=u\n"
       "OTEL_RESOURCE_ATTRIBUTES_NODE_NAMF=n\n"
       "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=first\n"
       "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=second\n"
       "OTEL_EXPORTER_OTLP_CLIENT_KEY=from-inst\n"
       "OTEL_EXPORTER_OTLP_ENDPOINT=inst\n"
       "OTEL_EXPORTER_OTLP_CERTIFICATE=/ca.crt\n"
       "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"
       "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"
       "OTEL_PROPAGATORS=b3\n"
       "OTEL_RESOURCE_ATTRIBUTES=x=1,k8s.container.name=app,k8s.namespace.name=ns1,"
       "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
       "k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,"
       "service.namespace=ns1,service.version=1\n");
    fx_free(r);
}
END_TEST

/* The Instrumentation's env lists are shared in one scan of the container's
 * env each: an entry is added when no entry of its name is there yet, the
 * ones added before it counted (a repeated name in a list comes in once,
 * the first), an entry without a name never, and spec.env's OTEL_POD_IP
 * not at all, the container's own IP entry being about to go first. Lists
 * of distinct names are read from the cached part's names, the others
 * entry by entry: each kind for spec.env and for spec.java.env. */
START_TEST(instrumentation_env_shared_once) {
    static const char *const envs[2][2] = {
        {"[{name: A, value: '1'}, {name: A, value: '2'}, {value: noname}, {name: OTEL_POD_IP, value: x}, "
         "{name: B, value: b}, {name: D, value: d}, {name: D, value: d2}]",
         "[{name: B, value: jb}, {name: C, value: c}]"},
        {"[{name: A, value: '1'}, {name: OTEL_POD_IP, value: x}, {name: B, value: b}, {name: D, value: d}]",
         "[{name: B, value: jb}, {name: C, value: c}, {name: C, value: c2}, {value: noname}]"},
    };
    for (int v = 0; v < 2; v++) {
        char *inst = xasprintf("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                               "metadata: {name: inst, namespace: ns1}\n"
                               "spec:\n  env: %s\n  java: {env: %s}\n", envs[v][0], envs[v][1]);
        fx_resources(inst);
        free(inst);
        for (int bare = 0; bare < 2; bare++) {
            /* The pod's own A, or none. */
            fx_run *r = fx_mutate(bare ? "env-shared-once-bare" : "env-shared-once",
                                  bare ? BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}",
                                                  "  - {name: app, image: 'a:1'}\n")
                                       : BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}",
                                                  "  - {name: app, image: 'a:1', env: [{name: A, value: pod}]}\n"),
                                  "ns1");
            ck_assert_str_eq(r->warnings, "");
            char *env = fx_env(fx_container(r, "containers", "app")), *cut = strstr(env, "JAVA_TOOL_OPTIONS=");
            ck_assert_ptr_nonnull(cut);
            *cut = 0;
            EQ(strdup(env), bare ? "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\nB=jb\nC=c\nA=1\nD=d\n"
                                 : "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\nA=pod\nB=jb\nC=c\nD=d\n");
            free(env);
            fx_free(r);
        }
    }
}
END_TEST

/* The attribute map owns what came from reused buffers (non-string
 * scalars of spec.resource.resourceAttributes, the image's version) and
 * borrows the rest; a dozen keys are sorted in place, more by qsort: both
 * give the same bytewise order. */
START_TEST(resource_map_values_and_order) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  resource: {resourceAttributes: {n: 1, f: 2.5, b: true, s: str, B: 'no'}}\n");
    for (int many = 0; many < 2; many++) {
        sbuf ann = SBUF_INIT;
        sbuf_puts(&ann, "{instrumentation.opentelemetry.io/inject-sdk: 'true'");
        for (int i = 0; i < (many ? 40 : 3); i++)
            sbuf_printf(&ann, ", resource.opentelemetry.io/%c%d: v%d", "zaMk"[i % 4], 39 - i, i);
        sbuf_puts(&ann, "}");
        char *pod = xasprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: %s\nspec:\n  containers:\n"
                              "  - {name: app, image: 'reg:5000/app:v1.2'}\n", ann.s);
        fx_run *r = fx_mutate(many ? "map-many" : "map-few", pod, "ns1");
        ck_assert_str_eq(r->warnings, "");
        char *env = fx_env(fx_container(r, "containers", "app"));
        const char *ora = strstr(env, "OTEL_RESOURCE_ATTRIBUTES=");
        ck_assert_ptr_nonnull(ora);
        EQ(xstrdup(ora), (many ? "OTEL_RESOURCE_ATTRIBUTES=B=no,M1=v38,M13=v26,M17=v22,M21=v18,M25=v14,M29=v10,M33=v6,M37=v2,M5=v34,M9=v30,"
                          "a10=v29,a14=v25,a18=v21,a2=v37,a22=v17,a26=v13,a30=v9,a34=v5,a38=v1,a6=v33,b=true,f=2.5,k0=v39,"
                          "k12=v27,k16=v23,k20=v19,k24=v15,k28=v11,k32=v7,k36=v3,k4=v35,k8=v31,k8s.container.name=app,"
                          "k8s.namespace.name=ns1,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),"
                          "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),n=1,s=str,"
                          "service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,service.namespace=ns1,"
                          "service.version=v1.2,z11=v28,z15=v24,z19=v20,z23=v16,z27=v12,z3=v36,z31=v8,z35=v4,z39=v0,z7=v32\n" : "OTEL_RESOURCE_ATTRIBUTES=B=no,M37=v2,a38=v1,b=true,f=2.5,k8s.container.name=app,k8s.namespace.name=ns1,"
                          "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
                          "n=1,s=str,service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,service.namespace=ns1,"
                          "service.version=v1.2,z39=v0\n"));
        free(env);
        free(pod);
        sbuf_free(&ann);
        fx_free(r);
    }
}
END_TEST

START_TEST(java_extensions_and_existing_options) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  imagePullPolicy: IfNotPresent\n  java:\n    image: 'java:1'\n"
                 "    volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}\n"
                 "    extensions: [{image: 'ext:1', dir: /ext}]\n");
    fx_run *r = fx_mutate("java-ext",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-java: 'true'}",
                                   "  - {name: app, image: 'a:1', env: [{name: JAVA_TOOL_OPTIONS, value: '-Xmx1g'}]}\n"),
                          "ns1");
    char *env = fx_env(fx_container(r, "containers", "app"));
    ck_assert_ptr_nonnull(strstr(env, "JAVA_TOOL_OPTIONS=-Xmx1g -javaagent:/otel-auto-instrumentation-java-app/javaagent.jar "
                                      "-Dotel.javaagent.extensions=/otel-auto-instrumentation-java-app/extensions\n"));
    free(env);
    EQ(fx_names(r, "initContainers"), "opentelemetry-auto-instrumentation-java,opentelemetry-auto-instrumentation-extension-0");
    json_object *ext = fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-extension-0");
    EQ(fx_json(json_object_object_get(ext, "command")),
       "[\"cp\",\"-r\",\"/ext/.\",\"/otel-auto-instrumentation-java/extensions\"]");
    ck_assert_ptr_null(json_object_object_get(ext, "imagePullPolicy"));
    EQ(fx_json(json_object_object_get(fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-java"),
                                      "imagePullPolicy")),
       "\"IfNotPresent\"");
    EQ(fx_json(json_object_object_get(json_object_object_get(r->res.pod, "spec"), "volumes")),
       "[{\"name\":\"opentelemetry-auto-instrumentation-java\",\"ephemeral\":{\"volumeClaimTemplate\":"
       "{\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}}}]");
    fx_free(r);
}
END_TEST

START_TEST(owner_walk_job_cronjob_and_annotations) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: inst, namespace: ns1}\n"
                 "spec: {resource: {addK8sUIDAttributes: true}}\n"
                 "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: my-cron-job-2901\n  namespace: ns1\n"
                 "  ownerReferences: [{kind: CronJob, name: my-cron-job, uid: cj-uid}]\n");
    fx_run *r = fx_mutate("cronjob",
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  generateName: my-cron-job-2901-\n"
                          "  annotations: {instrumentation.opentelemetry.io/inject-sdk: 'true', "
                          "resource.opentelemetry.io/service.version: '7', resource.opentelemetry.io/service.namespace: shop}\n"
                          "  ownerReferences: [{kind: Job, name: my-cron-job-2901, uid: job-uid}]\n"
                          "spec:\n  nodeName: node-1\n  containers: [{name: app, image: 'a:1'}]\n",
                          "ns1");
    char *env = fx_env(fx_container(r, "containers", "app"));
    ck_assert_ptr_nonnull(strstr(env, "OTEL_SERVICE_NAME=my-cron-job\n"));
    ck_assert_ptr_null(strstr(env, "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME"));
    ck_assert_ptr_nonnull(strstr(env, "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=app,k8s.cronjob.name=my-cron-job,"
                                      "k8s.cronjob.uid=cj-uid,k8s.job.name=my-cron-job-2901,k8s.job.uid=job-uid,"
                                      "k8s.namespace.name=ns1,k8s.node.name=node-1,k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
                                      "k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),"
                                      "service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,"
                                      "service.namespace=shop,service.version=7\n"));
    free(env);
    fx_free(r);
}
END_TEST

/* Spec 7.16: fields the engine does not know are not touched. */
START_TEST(unknown_fields_survive) {
    fx_resources(INST_PLAIN);
    fx_run *r = fx_mutate("unknown-fields",
                          BARE_POD("{instrumentation.opentelemetry.io/inject-sdk: 'true'}",
                                   "  - {name: app, image: a, futureField: {x: 1}}\n"
                                   "  resourceClaims: [{name: gpu}]\n  someFutureSpec: true\n"),
                          "ns1");
    char *patch = fx_json(r->res.patch);
    ck_assert_ptr_null(strstr(patch, "future"));
    ck_assert_ptr_null(strstr(patch, "resourceClaims"));
    ck_assert_ptr_null(strstr(patch, "Future"));
    free(patch);
    EQ(fx_json(json_object_object_get(fx_container(r, "containers", "app"), "futureField")), "{\"x\":1}");
    fx_free(r);
}
END_TEST

START_TEST(not_a_pod) {
    fx_run *r = fx_mutate("not-a-pod", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n", "ns1");
    ck_assert_str_eq(r->warnings, "spec: required, not set; nothing injected");
    ck_assert_str_eq(r->res.invalid_path, "spec");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_free(r);
    /* A pod asking for nothing, and one asking for no language. */
    r = fx_mutate("asks-nothing", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a}]}\n", "ns1");
    ck_assert(!r->res.asked);
    fx_free(r);
    r = fx_mutate("asks-false",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {instrumentation.opentelemetry.io/inject-java: "
                  "'false'}\nspec: {containers: [{name: a}]}\n",
                  "ns1");
    ck_assert(!r->res.asked);
    fx_free(r);
}
END_TEST

/* JSON pointer tokens (RFC 6901) with a '~' or a '/' at every offset of
 * keys up to five words long, and with one of each: the diff's
 * word-at-a-time test must find them wherever they fall, and its path is
 * the one a byte-at-a-time escape gives. */
START_TEST(pointer_tokens_escaped_at_every_offset) {
    char key[48];
    for (int kind = 0; kind < 3; kind++)
        for (size_t n = 1; n <= 40; n++)
            for (size_t at = 0; at < n; at++) {
                memset(key, 'x', n);
                key[n] = 0;
                if (kind < 2) key[at] = kind ? '/' : '~';
                else key[n - 1 - at] = '/', key[at] = '~';
                sbuf want = SBUF_INIT;
                sbuf_puts(&want, "/metadata/labels/");
                for (size_t i = 0; i < n; i++)
                    if (key[i] == '~') sbuf_puts(&want, "~0");
                    else if (key[i] == '/') sbuf_puts(&want, "~1");
                    else sbuf_putc(&want, key[i]);
                json_object *a = jnew_obj(), *b = jnew_obj(), *ops = jnew_arr();
                jset_obj(jset_obj(a, "metadata"), "labels");
                jset(jset_obj(jset_obj(b, "metadata"), "labels"), key, jnew_str("v"));
                mutate_patch_diff(a, b, ops);
                ck_assert_uint_eq(json_object_array_length(ops), 1);
                json_object *path = json_object_object_get(json_object_array_get_idx(ops, 0), "path");
                ck_assert_msg(strcmp(json_object_get_string(path), want.s) == 0, "key %s: path %s, want %s", key,
                              json_object_get_string(path), want.s);
                sbuf_free(&want);
                json_object_put(a);
                json_object_put(b);
                json_object_put(ops);
            }
}
END_TEST

int main(void) {
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, appendix_a1_java);
    tcase_add_test(tc, appendix_a2_sidecar_legacy);
    tcase_add_test(tc, sidecar_native);
    tcase_add_test(tc, sidecar_probes_and_startup_copy);
    tcase_add_test(tc, sidecar_false_removes);
    tcase_add_test(tc, sidecar_selection_warnings);
    tcase_add_test(tc, missing_instrumentation_keeps_sidecar);
    tcase_add_test(tc, nodejs_env);
    tcase_add_test(tc, python_glibc_and_musl);
    tcase_add_test(tc, python_new_pythonpath_order);
    tcase_add_test(tc, python_bad_platform);
    tcase_add_test(tc, python_entrypoint_mode);
    tcase_add_test(tc, sdk_only);
    tcase_add_test(tc, upstream_sdk_injection);
    tcase_add_test(tc, namespace_precedence);
    tcase_add_test(tc, multi_container_lists_and_order);
    tcase_add_test(tc, init_container_target);
    tcase_add_test(tc, container_name_validation);
    tcase_add_test(tc, container_list_names_a_missing_container);
    tcase_add_test(tc, non_multi_mode_dedupes);
    tcase_add_test(tc, instrumentation_selection_warnings);
    tcase_add_test(tc, value_from_skips_container);
    tcase_add_test(tc, existing_resource_attributes);
    tcase_add_test(tc, two_languages_one_container);
    tcase_add_test(tc, exporter_tls);
    tcase_add_test(tc, java_extensions_and_existing_options);
    tcase_add_test(tc, owner_walk_job_cronjob_and_annotations);
    tcase_add_test(tc, unknown_fields_survive);
    tcase_add_test(tc, not_a_pod);
    tcase_add_test(tc, sdk_env_checks_one_pass);
    tcase_add_test(tc, instrumentation_env_shared_once);
    tcase_add_test(tc, resource_map_values_and_order);
    tcase_add_test(tc, pointer_tokens_escaped_at_every_offset);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
