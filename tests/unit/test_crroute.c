/* tests/unit/test_crroute.c - server/cr_admission.c, the custom resources'
 * admission answers, on their own (no sockets, no authorizer): the route
 * table (every path, near misses), and exact answers through the codec:
 * an Instrumentation refused with the rule's message (403), one defaulted
 * (the patch, decoded), one validated (code 200), a collector's DELETE
 * allowed without a look at the object, an unknown operation the
 * reference's 400 with code 400, and a body that is no AdmissionReview
 * HTTP 400. */
#include "server/cr_admission.h"
#include "tests/unit/util.h"

#include <check.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

START_TEST(routes) {
    static const char *const want[CR_NROUTES] = {
        "/mutate-opentelemetry-io-v1beta1-opentelemetrycollector",
        "/validate-opentelemetry-io-v1beta1-opentelemetrycollector",
        "/mutate-opentelemetry-io-v1alpha1-instrumentation",
        "/validate-opentelemetry-io-v1alpha1-instrumentation",
        "/mutate-opentelemetry-io-v1alpha1-opampbridge",
        "/validate-opentelemetry-io-v1alpha1-opampbridge",
    };
    for (int r = 0; r < CR_NROUTES; r++) {
        ck_assert_str_eq(cr_admission_path(r), want[r]);
        ck_assert_int_eq(cr_admission_route(want[r], strlen(want[r])), r);
        /* a prefix, and the path with one byte more, are not routes */
        ck_assert_int_eq(cr_admission_route(want[r], strlen(want[r]) - 1), -1);
        char longer[128];
        snprintf(longer, sizeof longer, "%s/", want[r]);
        ck_assert_int_eq(cr_admission_route(longer, strlen(longer)), -1);
    }
    ck_assert_int_eq(cr_admission_route("/mutate-v1-pod", 14), -1);
    ck_assert_int_eq(cr_admission_route("", 0), -1);
}
END_TEST

/* Answers are longer than a Check message may be: a difference is printed
 * whole, then fails. */
static void same(const char *got, const char *want) {
    if (strcmp(got, want) != 0) fprintf(stderr, "got:  %s\nwant: %s\n", got, want);
    ck_assert_msg(strcmp(got, want) == 0, "the answer differs (printed above)");
}

static void handle(cr_route route, const char *body, cr_out *out) {
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    cr_env env = {.settings = &cfg, .review_budget = 1.0};
    json_tokener *tok = json_tokener_new();
    cr_admission_handle(&env, route, tok, body, strlen(body), out);
    json_tokener_free(tok);
    mutate_settings_free(&cfg);
}

#define REVIEW(op, kind, field, object)                                                                          \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","         \
    "\"operation\":\"" op "\",\"namespace\":\"ns\",\"kind\":{\"group\":\"opentelemetry.io\",\"version\":\"v1\"," \
    "\"kind\":\"" kind "\"},\"userInfo\":{\"username\":\"jane\"},\"" field "\":" object "}}"

#define INSTRUMENTATION(spec)                                                                             \
    "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"Instrumentation\",\"metadata\":{\"name\":\"i\"," \
    "\"namespace\":\"ns\"},\"spec\":" spec "}"

static void expect(cr_route route, const char *body, int status, const char *answer) {
    cr_out out;
    handle(route, body, &out);
    ck_assert_int_eq(out.r.status, status);
    same(out.r.body, answer);
    ck_assert_uint_eq(out.r.len, strlen(answer));
    review_out_free(&out.r);
}

START_TEST(instrumentation_refused) {
    expect(CR_VALIDATE_INSTRUMENTATION,
           REVIEW("CREATE", "Instrumentation", "object",
                  INSTRUMENTATION("{\"sampler\":{\"type\":\"traceidratio\",\"argument\":\"2\"}}")),
           200, 
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u1\",\"allowed\":false,\"status\":{\"code\":403,"
           "\"reason\":\"Forbidden\",\"message\":\"spec.sampler.argument should be in rage [0..1]: 2\"}}}");
}
END_TEST

START_TEST(instrumentation_validated) {
    expect(CR_VALIDATE_INSTRUMENTATION,
           REVIEW("CREATE", "Instrumentation", "object",
                  INSTRUMENTATION("{\"exporter\":{\"endpoint\":\"http://c:4317\"}}")),
           200, 
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u1\",\"allowed\":true,\"status\":{\"code\":200},"
           "\"warnings\":[\"sampler type not set\"]}}");
}
END_TEST

START_TEST(instrumentation_defaulted) {
    cr_out out;
    handle(CR_MUTATE_INSTRUMENTATION,
           REVIEW("CREATE", "Instrumentation", "object", INSTRUMENTATION("{\"exporter\":{\"endpoint\":\"http://c:4317\"}}")),
           &out);
    ck_assert_int_eq(out.r.status, 200);
    static const char head[] = "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":"
                               "{\"uid\":\"u1\",\"allowed\":true,\"patchType\":\"JSONPatch\",\"patch\":\"";
    ck_assert_int_eq(strncmp(out.r.body, head, strlen(head)), 0);
    ck_assert_str_eq(out.r.body + out.r.len - 3, "\"}}");
    /* Only what the defaulting adds (the default images are the settings'
     * and change with each release; test_instvalidate holds the values). */
    const char *b64 = out.r.body + strlen(head);
    int n = (int)(out.r.len - strlen(head) - 3);
    unsigned char *text = malloc((size_t)n + 1);
    int len = EVP_DecodeBlock(text, (const unsigned char *)b64, n);
    ck_assert_int_ge(len, 0);
    while (n && b64[n - 1] == '=') n--, len--;
    text[len] = 0;
    json_object *ops = tu_json((const char *)text);
    static const char *const paths[] = {"/metadata/annotations", "/spec/java", "/spec/nodejs", "/spec/python",
                                        "/spec/dotnet", "/spec/go", "/spec/apacheHttpd", "/spec/nginx"};
    ck_assert_uint_eq(json_object_array_length(ops), sizeof paths / sizeof *paths);
    for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
        json_object *op = json_object_array_get_idx(ops, i), *v;
        ck_assert(json_object_object_get_ex(op, "op", &v));
        ck_assert_str_eq(json_object_get_string(v), "add");
        ck_assert(json_object_object_get_ex(op, "path", &v));
        ck_assert_str_eq(json_object_get_string(v), paths[i]);
    }
    json_object_put(ops);
    free(text);
    review_out_free(&out.r);
}
END_TEST

START_TEST(collector_delete_allowed) {
    expect(CR_VALIDATE_COLLECTOR, REVIEW("DELETE", "OpenTelemetryCollector", "oldObject", "{\"spec\":7}"), 200, 
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u1\",\"allowed\":true,\"status\":{\"code\":200}}}");
}
END_TEST

START_TEST(unknown_operation) {
    expect(CR_VALIDATE_COLLECTOR,
           REVIEW("PATCH", "OpenTelemetryCollector", "object",
                  "{\"apiVersion\":\"opentelemetry.io/v1beta1\",\"kind\":\"OpenTelemetryCollector\",\"metadata\":"
                  "{\"name\":\"c\",\"namespace\":\"ns\"},\"spec\":{}}"),
           200, 
           "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":\"u1\",\"allowed\":false,\"status\":{\"code\":400,"
           "\"message\":\"unknown operation \\\"PATCH\\\"\"}}}");
}
END_TEST

START_TEST(not_a_review) {
    expect(CR_MUTATE_OPAMPBRIDGE, "{\"apiVersion\":\"v1\"}", 400, "{\"error\":\"unsupported apiVersion \\\"v1\\\": expected admission.k8s.io/v1\"}\n");
}
END_TEST

int main(void) {
    Suite *s = suite_create("crroute");
    TCase *tc = tcase_create("answers");
    tcase_add_test(tc, routes);
    tcase_add_test(tc, instrumentation_refused);
    tcase_add_test(tc, instrumentation_validated);
    tcase_add_test(tc, instrumentation_defaulted);
    tcase_add_test(tc, collector_delete_allowed);
    tcase_add_test(tc, unknown_operation);
    tcase_add_test(tc, not_a_review);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
