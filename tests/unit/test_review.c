/* tests/unit/test_review.c - server/review.c, the AdmissionReview codec, on
 * its own (no sockets): the exact HTTP 400 body and log reason for each
 * body that is not an AdmissionReview, the exact 200 answer to a review
 * that is not a pod CREATE (allowed, untouched, the uid and apiVersion
 * echoed), to a pod CREATE injected with Java (the patch's exact base64),
 * to one asking for an Instrumentation that does not exist (fail open, the
 * warning), and base64 itself. */
#include "kube/filesource.h"
#include "kube/store.h"
#include "mutate/defaults.h"
#include "server/review.h"
#include "tests/unit/util.h"

#include <check.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char RESOURCES[] = "apiVersion: opentelemetry.io/v1alpha1\n"
                                "kind: Instrumentation\n"
                                "metadata: {name: java-inst, namespace: default}\n"
                                "spec:\n"
                                "  exporter: {endpoint: 'http://collector:4318'}\n"
                                "  java: {image: 'ghcr.io/example/java:1'}\n";

static kube_store *store;
static mutate_settings cfg;

static void setup(void) {
    mutate_settings_init(&cfg);
    store = kube_store_new();
    json_object **objs = NULL;
    size_t n = 0;
    char err[512];
    if (kube_manifest_objects("test-review.yaml", RESOURCES, strlen(RESOURCES), &MUTATE_PREPARE(&cfg), "default", NULL,
                              &objs, &n, err, sizeof err) != 0)
        ck_abort_msg("resources: %s", err);
    kube_store_set_layer(store, KUBE_LAYER_FILES, objs, n);
}

static void teardown(void) {
    kube_store_free(store);
    mutate_settings_free(&cfg);
}

/* The answer to body: its status, body text and the log's reason. */
static void handle(const char *body, review_out *out) {
    review_env env = {.store = store, .opt = &cfg.opt};
    json_tokener *tok = json_tokener_new();
    review_handle(&env, tok, NULL, body, body ? strlen(body) : 0, out);
    json_tokener_free(tok);
}

static void expect_400(const char *body, const char *answer, const char *reason) {
    review_out out;
    handle(body, &out);
    ck_assert_int_eq(out.status, 400);
    ck_assert_str_eq(out.body, answer);
    ck_assert_uint_eq(out.len, strlen(answer));
    ck_assert_str_eq(out.error, reason);
    ck_assert_int_eq(out.result, RESULT_REJECTED);
    review_out_free(&out);
}

START_TEST(not_a_review_is_400) {
    expect_400("", "{\"error\":\"empty request body\"}\n", "empty request body");
    expect_400("[1]", "{\"error\":\"expected an AdmissionReview object\"}\n", "expected an AdmissionReview object");
    expect_400("{\"apiVersion\":", "{\"error\":\"invalid JSON: the body ends in the middle of a value\"}\n",
               "invalid JSON: the body ends in the middle of a value");
    expect_400("{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\"}",
               "{\"error\":\"unsupported apiVersion \\\"admission.k8s.io/v1beta1\\\": expected admission.k8s.io/v1\"}\n",
               "unsupported apiVersion \"admission.k8s.io/v1beta1\": expected admission.k8s.io/v1");
    expect_400("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Review\"}",
               "{\"error\":\"unsupported kind \\\"Review\\\": expected AdmissionReview\"}\n",
               "unsupported kind \"Review\": expected AdmissionReview");
    expect_400("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":[]}",
               "{\"error\":\"the AdmissionReview has no request\"}\n", "the AdmissionReview has no request");
    expect_400("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"\"}}",
               "{\"error\":\"request.uid is missing\"}\n", "request.uid is missing");
}
END_TEST

static void expect_200(const char *body, const char *answer) {
    review_out out;
    handle(body, &out);
    ck_assert_int_eq(out.status, 200);
    ck_assert_str_eq(out.body, answer);
    ck_assert_uint_eq(out.len, strlen(answer));
    review_out_free(&out);
}

START_TEST(not_a_pod_create_is_allowed_untouched) {
    expect_200("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-1\","
               "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"ConfigMap\"},\"operation\":\"CREATE\","
               "\"namespace\":\"default\",\"object\":{\"metadata\":{\"name\":\"c\"}}}}",
               "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u-1\",\"allowed\":true}}");
    expect_200("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-2\","
               "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"UPDATE\","
               "\"namespace\":\"default\",\"object\":{\"metadata\":{\"name\":\"p\"}}}}",
               "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u-2\",\"allowed\":true}}");
}
END_TEST

static const char POD_REVIEW[] =
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-3\","
    "\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"namespace\":\"default\","
    "\"object\":{\"metadata\":{\"name\":\"app\",\"namespace\":\"default\",\"annotations\":"
    "{\"instrumentation.opentelemetry.io/inject-java\":\"%s\"}},"
    "\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"app:1\"}]}}}}";

static const char JAVA_PATCH[] =
    "[{\"op\":\"add\",\"path\":\"/spec/containers/0/volumeMounts\",\"value\":[{\"name\":\"opentelemetry-auto-instr"
    "umentation-java\",\"mountPath\":\"/otel-auto-instrumentation-java-app\"}]},{\"op\":\"add\",\"path\":\"/spec/"
    "containers/0/env\",\"value\":[{\"name\":\"OTEL_NODE_IP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.h"
    "ostIP\"}}},{\"name\":\"OTEL_POD_IP\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\"status.podIP\"}}},{\"name\":\""
    "JAVA_TOOL_OPTIONS\",\"value\":\" -javaagent:/otel-auto-instrumentation-java-app/javaagent.jar\"},{\"na"
    "me\":\"OTEL_SERVICE_NAME\",\"value\":\"app\"},{\"name\":\"OTEL_EXPORTER_OTLP_ENDPOINT\",\"value\":\"http://col"
    "lector:4318\"},{\"name\":\"OTEL_RESOURCE_ATTRIBUTES_POD_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPath\":\""
    "metadata.name\"}}},{\"name\":\"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME\",\"valueFrom\":{\"fieldRef\":{\"fieldPa"
    "th\":\"spec.nodeName\"}}},{\"name\":\"OTEL_RESOURCE_ATTRIBUTES\",\"value\":\"k8s.container.name=app,k8s.na"
    "mespace.name=default,k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RES"
    "OURCE_ATTRIBUTES_POD_NAME),service.instance.id=default.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,"
    "service.namespace=default,service.version=1\"}]},{\"op\":\"add\",\"path\":\"/spec/volumes\",\"value\":[{\"na"
    "me\":\"opentelemetry-auto-instrumentation-java\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}}]},{\"op\":\"add\",\"p"
    "ath\":\"/spec/initContainers\",\"value\":[{\"name\":\"opentelemetry-auto-instrumentation-java\",\"image\":\""
    "ghcr.io/example/java:1\",\"command\":[\"cp\",\"/javaagent.jar\",\"/otel-auto-instrumentation-java/javaag"
    "ent.jar\"],\"resources\":{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"50m\",\"memory\""
    ":\"64Mi\"}},\"volumeMounts\":[{\"name\":\"opentelemetry-auto-instrumentation-java\",\"mountPath\":\"/otel-a"
    "uto-instrumentation-java\"}]}]},{\"op\":\"add\",\"path\":\"/metadata/annotations/otel-webhook~1status\",\""
    "value\":\"{\\\"v\\\":1,\\\"engine\\\":\\\"0.1.0\\\",\\\"initContainers\\\":[\\\"opentelemetry-auto-instrumentation-j"
    "ava\\\"],\\\"volumes\\\":[\\\"opentelemetry-auto-instrumentation-java\\\"],\\\"into\\\":[{\\\"name\\\":\\\"app\\\",\\\"e"
    "nv\\\":[\\\"OTEL_NODE_IP\\\",\\\"OTEL_POD_IP\\\",\\\"JAVA_TOOL_OPTIONS\\\",\\\"OTEL_SERVICE_NAME\\\",\\\"OTEL_EXPORT"
    "ER_OTLP_ENDPOINT\\\",\\\"OTEL_RESOURCE_ATTRIBUTES_POD_NAME\\\",\\\"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME\\\","
    "\\\"OTEL_RESOURCE_ATTRIBUTES\\\"],\\\"volumeMounts\\\":[\\\"/otel-auto-instrumentation-java-app\\\"],\\\"unset"
    "\\\":[\\\"env\\\",\\\"volumeMounts\\\"]}],\\\"unset\\\":[\\\"/spec/initContainers\\\",\\\"/spec/volumes\\\"],\\\"uses\\\":"
    "[{\\\"kind\\\":\\\"Instrumentation\\\",\\\"language\\\":\\\"java\\\",\\\"namespace\\\":\\\"default\\\",\\\"name\\\":\\\"java-i"
    "nst\\\",\\\"hash\\\":\\\"39aa6a4b2bfae9e1\\\"}],\\\"images\\\":{\\\"opentelemetry-auto-instrumentation-java\\\":\\\""
    "ghcr.io/example/java:1\\\"}}\"}]";

/* The patch of an answer, base64-decoded (malloc'ed). */
static char *answer_patch(const char *body) {
    const char *p = strstr(body, "\"patch\":\"");
    ck_assert_ptr_nonnull(p);
    p += 9;
    const char *end = strchr(p, '"');
    size_t n = (size_t)(end - p);
    unsigned char *out = malloc(n + 1);
    int len = EVP_DecodeBlock(out, (const unsigned char *)p, (int)n);
    ck_assert_int_ge(len, 0);
    while (n && p[n - 1] == '=') n--, len--; /* EVP_DecodeBlock counts padding */
    out[len] = 0;
    return (char *)out;
}

START_TEST(pod_create_is_injected) {
    char body[sizeof POD_REVIEW + 64];
    snprintf(body, sizeof body, POD_REVIEW, "java-inst");
    review_out out;
    handle(body, &out);
    ck_assert_int_eq(out.status, 200);
    static const char head[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
                               "\"response\":{\"uid\":\"u-3\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"";
    ck_assert_int_eq(strncmp(out.body, head, strlen(head)), 0);
    ck_assert_str_eq(out.body + out.len - 3, "\"}}");
    char *patch = answer_patch(out.body);
    ck_assert_str_eq(patch, JAVA_PATCH);
    free(patch);
    ck_assert_int_eq(out.result, RESULT_MUTATED);
    ck_assert_uint_eq(out.injected, 1);
    ck_assert_str_eq(out.uid, "u-3");
    ck_assert_str_eq(out.ns, "default");
    ck_assert_str_eq(out.pod, "app");
    review_out_free(&out);
}
END_TEST

START_TEST(missing_instrumentation_fails_open) {
    char body[sizeof POD_REVIEW + 64];
    snprintf(body, sizeof body, POD_REVIEW, "nowhere");
    review_out out;
    handle(body, &out);
    ck_assert_int_eq(out.status, 200);
    ck_assert_str_eq(out.body, "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":"
                               "{\"uid\":\"u-3\",\"allowed\":true,\"warnings\":[\"otel-webhook: inject-java: "
                               "Instrumentation default/nowhere not found; Java not injected\"]}}");
    ck_assert_uint_eq(out.nwarnings, 1);
    ck_assert_str_eq(out.first_warning, "inject-java: Instrumentation default/nowhere not found; Java not injected");
    review_out_free(&out);
}
END_TEST

START_TEST(base64_vectors) {
    /* RFC 4648, section 10. */
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const want[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++) {
        char *b = review_base64(in[i], strlen(in[i]));
        ck_assert_str_eq(b, want[i]);
        free(b);
    }
}
END_TEST

int main(void) {
    Suite *s = suite_create("review");
    TCase *tc = tcase_create("codec");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, not_a_review_is_400);
    tcase_add_test(tc, not_a_pod_create_is_allowed_untouched);
    tcase_add_test(tc, pod_create_is_injected);
    tcase_add_test(tc, missing_instrumentation_fails_open);
    tcase_add_test(tc, base64_vectors);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
