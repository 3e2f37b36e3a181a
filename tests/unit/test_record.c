/* tests/unit/test_record.c - the otel-webhook/status record (mutate/record.h):
 * its exact text for each kind of change (env added and rewritten, a
 * command rewritten, a label overwritten, containers, init containers and
 * volumes added, the resources with their versions), the patch operation
 * that adds it, re-invocation through it, records the engine ignores, the
 * setting that turns it off, uninject, and staleness.
 *
 * Every case also goes through engine_fixture.c's checks: the record undoes
 * the injection exactly, and without it the engine still changes nothing. */
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include "base/json.h"
#include "base/sbuf.h"
#include "mutate/defaults.h"
#include "mutate/record.h"
#include "mutate/settings.h"

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INST "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n" \
                                "metadata: {name: inst, namespace: ns1, resourceVersion: '42', generation: 3}\n" \
                                "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n"

#define COLLECTOR "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n" \
                                     "metadata: {name: side, namespace: ns1, generation: 7}\n" \
                                     "spec:\n  mode: sidecar\n  image: 'otelcol:1'\n" \
                                     "  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n" \
                                     "    exporters: {debug: {}}\n" \
                                     "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"

#define POD(ann, containers)                                                                                           \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: " ann "\nspec:\n  containers:\n" containers

/* The record of the result, hashes checked for shape and replaced by "#"
 * (they follow the defaulted spec, which other tests pin). */
static char *record(fx_run *r) {
    const char *why;
    json_object *rec = mutate_record_read(r->res.pod, &why);
    ck_assert_msg(rec != NULL, "no record (%s)", why ? why : "none");
    json_object *uses = json_object_object_get(rec, "uses");
    for (size_t i = 0; uses && i < json_object_array_length(uses); i++) {
        json_object *u = json_object_array_get_idx(uses, i);
        const char *h = json_object_get_string(json_object_object_get(u, "hash"));
        ck_assert_msg(h && strlen(h) == 16, "hash %s", h ? h : "(none)");
        for (const char *p = h; *p; p++) ck_assert(isxdigit((unsigned char)*p));
        json_object_object_add(u, "hash", json_object_new_string("#"));
    }
    char *s = fx_json(rec);
    json_object_put(rec);
    return s;
}

static const char *last_op(fx_run *r) {
    size_t n = json_object_array_length(r->res.patch);
    ck_assert_uint_gt(n, 0);
    return json_object_to_json_string_ext(json_object_array_get_idx(r->res.patch, n - 1),
                                          JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

START_TEST(java_rewrites_and_adds) {
    fx_resources(INST);
    fx_run *r = fx_mutate("record-java",
                          POD("{instrumentation.opentelemetry.io/inject-java: 'true'}",
                              "  - name: app\n    image: 'a:1'\n"
                              "    env: [{name: JAVA_TOOL_OPTIONS, value: '-Xmx1g'}, {name: KEEP, value: k}]\n"
                              "    volumeMounts: [{name: data, mountPath: /data}]\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(record(r), "{\"v\":1,\"engine\":\"0.1.0\",\"initContainers\":[\"opentelemetry-auto-instrumentation-java\"],"
       "\"volumes\":[\"opentelemetry-auto-instrumentation-java\"],"
       "\"into\":[{\"name\":\"app\",\"env\":[\"OTEL_NODE_IP\",\"OTEL_POD_IP\",\"OTEL_SERVICE_NAME\","
       "\"OTEL_EXPORTER_OTLP_ENDPOINT\",\"OTEL_RESOURCE_ATTRIBUTES_POD_NAME\",\"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME\","
       "\"OTEL_RESOURCE_ATTRIBUTES\"],\"envWas\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"-Xmx1g\"}],"
       "\"volumeMounts\":[\"/otel-auto-instrumentation-java-app\"]}],"
       "\"unset\":[\"/spec/initContainers\",\"/spec/volumes\"],"
       "\"uses\":[{\"kind\":\"Instrumentation\",\"language\":\"java\",\"namespace\":\"ns1\",\"name\":\"inst\","
       "\"resourceVersion\":\"42\",\"generation\":3,\"hash\":\"#\"}],"
       "\"images\":{\"opentelemetry-auto-instrumentation-java\":"
       "\"ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0\"}}");
    fx_free(r);
}
END_TEST

/* Repeated env names (the API server accepts them, with a warning): names
 * cannot say which entry was which, so the record keeps the whole original
 * env and uninject gives it back as it was (the fixture checks the round
 * trip). */
START_TEST(repeated_env_names) {
    fx_resources(INST);
    fx_run *r = fx_mutate("record-env-repeated",
                          POD("{instrumentation.opentelemetry.io/inject-java: 'true'}",
                              "  - name: app\n"
                              "    env: [{name: JAVA_TOOL_OPTIONS, value: '-Xmx1g'}, {name: JAVA_TOOL_OPTIONS, value: "
                              "'-Xms1g'}, {name: A, value: '1'}, {name: A, value: '2'}]\n"),
                          "ns1");
    char *rec = record(r);
    ck_assert_msg(strstr(rec, "\"was\":{\"env\":[{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"-Xmx1g\"},"
                              "{\"name\":\"JAVA_TOOL_OPTIONS\",\"value\":\"-Xms1g\"},{\"name\":\"A\",\"value\":\"1\"},"
                              "{\"name\":\"A\",\"value\":\"2\"}]}") != NULL,
                  "%s", rec);
    ck_assert_ptr_null(strstr(rec, "envWas"));
    free(rec);
    fx_free(r);
}
END_TEST

START_TEST(python_command_and_sidecar_label) {
    fx_resources(INST "---\n" COLLECTOR);
    fx_run *r = fx_mutate("record-python",
                          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n"
                          "  labels: {sidecar.opentelemetry.io/injected: old}\n"
                          "  annotations: {instrumentation.opentelemetry.io/inject-python: 'true', "
                          "instrumentation.opentelemetry.io/python-mode: entrypoint, sidecar.opentelemetry.io/inject: 'true'}\n"
                          "spec:\n  containers:\n  - {name: app, image: 'python:3.12', command: [python, app.py]}\n",
                          "ns1");
    EQ(record(r), "{\"v\":1,\"engine\":\"0.1.0\",\"containers\":[\"otc-container\"],"
       "\"initContainers\":[\"opentelemetry-auto-instrumentation-python\"],"
       "\"volumes\":[\"opentelemetry-auto-instrumentation-python\"],"
       "\"into\":[{\"name\":\"app\",\"env\":[\"OTEL_NODE_IP\",\"OTEL_POD_IP\",\"PYTHONPATH\","
       "\"OTEL_EXPORTER_OTLP_PROTOCOL\",\"OTEL_TRACES_EXPORTER\",\"OTEL_METRICS_EXPORTER\",\"OTEL_LOGS_EXPORTER\","
       "\"OTEL_SERVICE_NAME\",\"OTEL_EXPORTER_OTLP_ENDPOINT\",\"OTEL_RESOURCE_ATTRIBUTES_POD_NAME\","
       "\"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME\",\"OTEL_RESOURCE_ATTRIBUTES\"],"
       "\"volumeMounts\":[\"/otel-auto-instrumentation-python\"],\"unset\":[\"env\",\"volumeMounts\"],"
       "\"was\":{\"command\":[\"python\",\"app.py\"]}}],"
       "\"was\":{\"/metadata/labels/sidecar.opentelemetry.io~1injected\":\"old\"},"
       "\"unset\":[\"/spec/initContainers\",\"/spec/volumes\"],"
       "\"uses\":[{\"kind\":\"OpenTelemetryCollector\",\"namespace\":\"ns1\",\"name\":\"side\",\"generation\":7,"
       "\"hash\":\"#\"},{\"kind\":\"Instrumentation\",\"language\":\"python\",\"namespace\":\"ns1\",\"name\":\"inst\","
       "\"resourceVersion\":\"42\",\"generation\":3,\"hash\":\"#\"}],"
       "\"images\":{\"otc-container\":\"otelcol:1\",\"opentelemetry-auto-instrumentation-python\":"
       "\"ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-python:0.64b0\"}}");
    fx_free(r);
}
END_TEST


/* The operation that adds the record: into the pod's annotations, or the
 * annotations themselves when the opt-in came from the namespace. */
START_TEST(patch_operation) {
    fx_resources(INST);
    fx_run *r = fx_mutate("record-op", POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", "  - {name: app}\n"), "ns1");
    char *rec = record(r);
    ck_assert_ptr_nonnull(strstr(last_op(r), "{\"op\":\"add\",\"path\":\"/metadata/annotations/otel-webhook~1status\",\"value\":\"{\\\"v\\\":1,"));
    free(rec);
    fx_free(r);
    fx_resources(INST "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns1\n"
                 "  annotations: {instrumentation.opentelemetry.io/inject-java: 'true'}\n");
    r = fx_mutate("record-op-ns", "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: app}]\n", "ns1");
    ck_assert_ptr_nonnull(strstr(last_op(r), "{\"op\":\"add\",\"path\":\"/metadata/annotations\",\"value\":{\"otel-webhook/status\":\"{"));
    rec = record(r);
    ck_assert_ptr_nonnull(strstr(rec, "\"unset\":[\"/spec/initContainers\",\"/spec/volumes\",\"/metadata/annotations\"]"));
    free(rec);
    fx_free(r);
}
END_TEST

/* A second admission of an injected pod (reinvocationPolicy IfNeeded)
 * reads the record and changes nothing. */
START_TEST(reinvocation) {
    fx_resources(INST "---\n" COLLECTOR);
    fx_run *r = fx_mutate("record-first", POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                              "sidecar.opentelemetry.io/inject: 'true'}", "  - {name: app}\n"), "ns1");
    char *json = fx_json(r->res.pod);
    fx_run *again = fx_mutate("record-again", json, "ns1");
    ck_assert_uint_eq(json_object_array_length(again->res.patch), 0);
    ck_assert_uint_eq(again->res.skips, 1u << MUTATE_SKIP_ALREADY_INSTRUMENTED);
    ck_assert_str_eq(again->warnings, "");
    free(json);
    fx_free(again);
    fx_free(r);
}
END_TEST

/* Records the engine cannot trust are ignored, and the pod is injected:
 * the new record replaces the old value (which uninject puts back), with a
 * warning; a malformed pod is refused with that one reason alone. */
START_TEST(ignored_records) {
    fx_resources(INST);
    fx_run *r = fx_mutate("record-garbage", POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                                "otel-webhook/status: 'not json'}", "  - {name: app}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "otel-webhook/status: not a JSON object; replaced by this injection's record");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA));
    char *rec = record(r);
    ck_assert_ptr_nonnull(strstr(rec, "\"was\":{\"/metadata/annotations/otel-webhook~1status\":\"not json\"}"));
    free(rec);
    fx_free(r);
    r = fx_mutate("record-version", POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                        "otel-webhook/status: '{\"v\":2}'}", "  - {name: app}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "otel-webhook/status: a record version this engine does not know; "
                                  "replaced by this injection's record");
    fx_free(r);
    r = fx_mutate("record-gone", POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                     "otel-webhook/status: '{\"v\":1,\"initContainers\":[\"opentelemetry-auto-instrumentation-java\"]}'}",
                                     "  - {name: app}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "otel-webhook/status: the record names the init container "
                                  "opentelemetry-auto-instrumentation-java, which the pod does not have; "
                                  "replaced by this injection's record");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA));
    fx_free(r);
    r = fx_mutate("record-malformed", POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                          "otel-webhook/status: '{\"v\":1,\"containers\":[\"gone\"]}'}",
                                          "  - {image: a}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "spec.containers[0].name: required, not set; nothing injected");
    fx_free(r);
}
END_TEST

/* status-record: false gives the reference's patch: no annotation. */
START_TEST(record_off) {
    fx_resources(INST);
    fx_options()->record = false;
    fx_run *r = fx_mutate("record-off", POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", "  - {name: app}\n"), "ns1");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA));
    char *patch = fx_json(r->res.patch);
    ck_assert_ptr_null(strstr(patch, "otel-webhook"));
    free(patch);
    EQ(fx_json(json_object_object_get(json_object_object_get(r->res.pod, "metadata"), "annotations")),
       "{\"instrumentation.opentelemetry.io/inject-java\":\"true\"}");
    fx_free(r);
}
END_TEST

/* Uninject refuses a pod that lost what its record names. */
START_TEST(uninject_refuses_changed_pod) {
    fx_resources(INST);
    fx_run *r = fx_mutate("record-changed", POD("{instrumentation.opentelemetry.io/inject-java: 'true'}", "  - {name: app}\n"), "ns1");
    const char *why;
    json_object *rec = mutate_record_read(r->res.pod, &why), *pod = NULL;
    pod = jcopy(r->res.pod);
    json_object_object_del(json_object_object_get(pod, "spec"), "initContainers");
    char err[256];
    ck_assert_ptr_null(mutate_uninject(pod, rec, err, sizeof err));
    ck_assert_str_eq(err, "the record names the init container opentelemetry-auto-instrumentation-java, which the pod does not have");
    json_object_put(pod);
    json_object_put(rec);
    fx_free(r);
}
END_TEST

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Elements taken out are put back in one merge per list (issue 25: one
 * insert each, at the front, moved the whole list every time: 20,000 took
 * 4.2 s of CPU in the release build, 40,000 20.6 s). mutate_uninject is
 * called directly: mutate_record_read's budget would refuse a record this
 * long before it got there. */
START_TEST(uninject_put_back_in_one_pass) {
    enum { N = 40000 };
    sbuf b = SBUF_INIT;
    sbuf_puts(&b, "{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[");
    for (int i = 0; i < N; i++)
        sbuf_printf(&b, "%s{\"list\":\"volumes\",\"at\":0,\"value\":{\"name\":\"otel-auto-secret-%d\"}}", i ? "," : "", i);
    sbuf_puts(&b, "]}");
    json_object *rec = json_tokener_parse(b.s);
    sbuf_free(&b);
    json_object *pod = json_tokener_parse("{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"name\":\"app\"},"
                                          "{\"name\":\"otc-container\"}],\"volumes\":[{\"name\":\"mine\"}]}}");
    ck_assert_ptr_nonnull(rec);
    double t0 = cpu_seconds();
    char err[256] = "";
    json_object *back = mutate_uninject(pod, rec, err, sizeof err);
    double spent = cpu_seconds() - t0;
    ck_assert_msg(back != NULL, "%s", err);
    json_object *vols = json_object_object_get(json_object_object_get(back, "spec"), "volumes");
    ck_assert_uint_eq(json_object_array_length(vols), N + 1);
    /* All at one place: in the record's order there, the pod's own after. */
    ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(vols, 0), "name")),
                     "otel-auto-secret-0");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(vols, N - 1), "name")),
                     "otel-auto-secret-39999");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(json_object_array_get_idx(vols, N), "name")), "mine");
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(json_object_object_get(back, "spec"), "containers")), 1);
    /* Valgrind's own slowdown is not the engine's: timed elsewhere only. */
    const char *pre = getenv("LD_PRELOAD");
    if (!pre || !strstr(pre, "vgpreload")) ck_assert_msg(spent < 2.0, "%d elements put back in %.2f s", N, spent);
    json_object_put(back);
    json_object_put(pod);
    json_object_put(rec);
}
END_TEST

/* mutate_record_check from the inside: what a record may name and put back. */
START_TEST(record_check_fields) {
    json_object *pod = json_tokener_parse(
        "{\"metadata\":{\"name\":\"p\",\"labels\":{\"app\":\"x\"}},\"spec\":{\"containers\":[{\"name\":\"app\","
        "\"command\":[\"/otel-auto-instrumentation-python/bin/opentelemetry-instrument\",\"python\",\"app.py\"],"
        "\"env\":[{\"name\":\"OTEL_SERVICE_NAME\",\"value\":\"p\"},{\"name\":\"MINE\",\"value\":\"1\"}]},"
        "{\"name\":\"otc-container\",\"image\":\"col:1\"}],\"volumes\":[{\"name\":\"data\"}]}}");
    static const struct {
        const char *rec, *err;
    } cases[] = {
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"images\":{\"otc-container\":\"col:1\"}}", NULL},
        {"{\"v\":1,\"containers\":[\"otc-container\",\"otc-container\"]}", "the record's containers names otc-container twice"},
        {"{\"v\":1,\"into\":[{\"name\":\"app\",\"env\":[\"MINE\"]}]}",
         "the record's into[0].env[0]: MINE is not a variable otel-webhook sets"},
        {"{\"v\":1,\"into\":[{\"name\":\"app\",\"env\":[\"OTEL_SERVICE_NAME\",\"MINE\"]}]}", NULL},
        {"{\"v\":1,\"into\":[{\"name\":\"app\",\"env\":[\"OTEL_SERVICE_NAME\"],\"was\":{\"command\":[\"python\",\"app.py\"]}}]}", NULL},
        {"{\"v\":1,\"into\":[{\"name\":\"app\",\"env\":[\"OTEL_SERVICE_NAME\"],\"was\":{\"command\":[\"sh\"]}}]}",
         "the record's into[0].was.command is not the container's command without the Python launcher in front"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"volumes\":[\"data\"]}", NULL},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"unset\":[\"/spec/shareProcessNamespace\"]}",
         "the record's unset[0]: /spec/shareProcessNamespace without the Go container it is for"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"was\":{\"/metadata/labels/sidecar.opentelemetry.io~1injected\":\"x\"}}", NULL},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"was\":{\"/spec/hostIPC\":true}}",
         "the record's was./spec/hostIPC: not a field otel-webhook changes, or not to that; uninject never sets it"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"containers\",\"at\":0,\"value\":"
         "{\"name\":\"otc-container\",\"securityContext\":{\"capabilities\":{\"add\":[\"SYS_ADMIN\"]}}}}]}",
         "the record's removed[0].value: a container with securityContext.capabilities.add; uninject never adds one"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"containers\",\"at\":0,\"value\":"
         "{\"name\":\"otc-container\",\"ports\":[{\"containerPort\":1,\"hostPort\":1}]}}]}",
         "the record's removed[0].value: a container with a hostPort; uninject never adds one"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"volumes\",\"at\":0,\"value\":{\"name\":\"kernel-debug\"}},"
         "{\"list\":\"volumes\",\"at\":1,\"value\":{\"name\":\"kernel-debug\"}}]}",
         "the record's removed puts volumes/kernel-debug back twice"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"initContainers\",\"at\":0,\"value\":"
         "{\"name\":\"otc-container\",\"securityContext\":{\"runAsUser\":10001,\"capabilities\":{\"drop\":[\"ALL\"]},"
         "\"seccompProfile\":{\"type\":\"RuntimeDefault\"}}}}]}", NULL},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"initContainers\",\"at\":0,\"value\":"
         "{\"name\":\"otc-container\",\"securityContext\":{\"seccompProfile\":{\"type\":\"Unconfined\"}}}}]}",
         "the record's removed[0].value: a container with securityContext.seccompProfile Unconfined; uninject never adds one"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"containers\",\"at\":0,\"value\":"
         "{\"name\":\"opentelemetry-auto-instrumentation\"}}]}",
         "the record's removed[0].value: opentelemetry-auto-instrumentation is not a container otel-webhook takes out"},
        {"{\"v\":1,\"containers\":[\"otc-container\"],\"removed\":[{\"list\":\"serviceAccount\",\"at\":0,\"value\":{\"name\":\"x\"}}]}",
         "the record's removed[0].list is not a list otel-webhook takes elements from"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_object *rec = json_tokener_parse(cases[i].rec);
        char err[320] = "";
        bool ok = mutate_record_check(pod, rec, err, sizeof err);
        if (cases[i].err) ck_assert_msg(!ok && !strcmp(err, cases[i].err), "%s: %s", cases[i].rec, ok ? "accepted" : err);
        else ck_assert_msg(ok, "%s: %s", cases[i].rec, err);
        json_object_put(rec);
    }
    json_object_put(pod);
}
END_TEST

static char *joined(char **v, int n) {
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(v[i]) + 1;
    char *s = calloc(1, len);
    for (int i = 0; i < n; i++) {
        if (i) strcat(s, "\n");
        strcat(s, v[i]);
    }
    mutate_strings_free(v, n > 0 ? (size_t)n : 0);
    return s;
}

/* Stale: the Instrumentation changed, its image changed, it is gone, or
 * another one would be chosen now. */
START_TEST(staleness) {
    fx_resources(INST "---\n" COLLECTOR);
    fx_run *r = fx_mutate("record-stale", POD("{instrumentation.opentelemetry.io/inject-java: 'true', "
                                              "sidecar.opentelemetry.io/inject: 'true'}", "  - {name: app}\n"), "ns1");
    char **why;
    ck_assert_int_eq(fx_stale(r->res.pod, "ns1", &why), 0);
    free(why);
    ck_assert_int_eq(fx_stale(r->pod, "ns1", &why), -1);
    ck_assert_ptr_null(why);

    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: inst, namespace: ns1, resourceVersion: '50', generation: 4}\n"
                 "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n  java: {image: 'java:9'}\n"
                 "---\n" COLLECTOR);
    int n = fx_stale(r->res.pod, "ns1", &why);
    EQ(joined(why, n), "Instrumentation ns1/inst (java) changed since the injection (generation 3, now generation 4)\n"
                       "image of opentelemetry-auto-instrumentation-java: "
                       "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0, now java:9");

    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: other, namespace: ns1}\nspec:\n  exporter: {endpoint: 'http://otel:4317'}\n");
    n = fx_stale(r->res.pod, "ns1", &why);
    EQ(joined(why, n), "OpenTelemetryCollector ns1/side would not be injected now\n"
                       "Instrumentation ns1/inst (java) would be Instrumentation ns1/other (java) now");

    fx_resources(COLLECTOR);
    n = fx_stale(r->res.pod, "ns1", &why);
    EQ(joined(why, n), "Instrumentation ns1/inst (java) would not be injected now");
    fx_free(r);
}
END_TEST

/* The digest is of the spec as stored, taken before our own defaulting: a
 * new default image (an upgrade of otel-webhook, another settings file)
 * leaves it as it is, a change of the stored spec does not. */
static char *prepared_hash(const char *json, const char *java_image) {
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    free(cfg.images[MUTATE_JAVA]);
    cfg.images[MUTATE_JAVA] = strdup(java_image);
    json_object *o = json_tokener_parse(json);
    char err[256];
    ck_assert_int_eq(mutate_prepare_resource(&cfg, "Instrumentation", o, err, sizeof err), 0);
    json_object *java = json_object_object_get(json_object_object_get(o, "spec"), "java");
    ck_assert_str_eq(json_object_get_string(json_object_object_get(java, "image")), java_image); /* defaulted */
    char *h = strdup(json_object_get_string(json_object_object_get(o, MUTATE_SPEC_HASH)));
    json_object_put(o);
    mutate_settings_free(&cfg);
    return h;
}

START_TEST(hash_of_the_stored_spec) {
    const char *inst = "{\"kind\":\"Instrumentation\",\"metadata\":{\"name\":\"i\"},"
                       "\"spec\":{\"exporter\":{\"endpoint\":\"http://otel:4317\"}}}";
    const char *changed = "{\"kind\":\"Instrumentation\",\"metadata\":{\"name\":\"i\"},"
                          "\"spec\":{\"exporter\":{\"endpoint\":\"http://otel:4318\"}}}";
    char *a = prepared_hash(inst, "java:1"), *b = prepared_hash(inst, "java:2"), *c = prepared_hash(changed, "java:1");
    char want[17];
    json_object *o = json_tokener_parse(inst);
    mutate_spec_hash(json_object_object_get(o, "spec"), want);
    json_object_put(o);
    ck_assert_str_eq(a, want);
    ck_assert_str_eq(b, want);
    ck_assert_str_ne(c, want);
    free(a);
    free(b);
    free(c);
}
END_TEST

int main(void) {
    Suite *s = suite_create("record");
    TCase *tc = tcase_create("record");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, java_rewrites_and_adds);
    tcase_add_test(tc, repeated_env_names);
    tcase_add_test(tc, python_command_and_sidecar_label);
    tcase_add_test(tc, patch_operation);
    tcase_add_test(tc, reinvocation);
    tcase_add_test(tc, ignored_records);
    tcase_add_test(tc, record_off);
    tcase_add_test(tc, uninject_refuses_changed_pod);
    tcase_add_test(tc, uninject_put_back_in_one_pass);
    tcase_add_test(tc, record_check_fields);
    tcase_add_test(tc, staleness);
    tcase_add_test(tc, hash_of_the_stored_spec);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
