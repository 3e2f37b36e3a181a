/* tests/unit/test_conversion.c - server/conversion.c, the ConversionReview
 * codec of POST /convert, on its own (no sockets): the exact HTTP 400 body
 * and reason for each body that is not a ConversionReview, the exact 200
 * answer to a v1alpha1 collector converted to v1beta1 in both review
 * versions (kind and apiVersion echoed, the uid byte for byte), an empty
 * batch, and the Failure of a desiredAPIVersion nothing converts to. */
#include "server/conversion.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void handle(const char *body, conversion_out *out) {
    json_tokener *tok = json_tokener_new_ex(CONVERSION_MAX_DEPTH);
    conversion_handle(tok, body, strlen(body), out);
    json_tokener_free(tok);
}

static void expect_400(const char *body, const char *reason) {
    conversion_out out;
    handle(body, &out);
    char answer[800];
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(reason));
    snprintf(answer, sizeof answer, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    ck_assert_int_eq(out.status, 400);
    ck_assert_str_eq(out.body, answer);
    ck_assert_uint_eq(out.len, strlen(answer));
    ck_assert_str_eq(out.message, reason);
    conversion_out_free(&out);
}

#define REVIEW(api, request) "{\"apiVersion\":\"" api "\",\"kind\":\"ConversionReview\",\"request\":" request "}"

START_TEST(not_a_conversion_review_is_400) {
    expect_400("", "empty request body");
    expect_400("[]", "expected a ConversionReview object");
    expect_400("{\"kind\":", "invalid JSON: the body ends in the middle of a value");
    expect_400(REVIEW("apiextensions.k8s.io/v2", "{}"),
               "unsupported apiVersion \"apiextensions.k8s.io/v2\": expected apiextensions.k8s.io/v1 or "
               "apiextensions.k8s.io/v1beta1");
    expect_400("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{}}",
               "unsupported kind \"AdmissionReview\": expected ConversionReview");
    expect_400("{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":\"ConversionReview\"}",
               "the ConversionReview has no request");
    expect_400(REVIEW("apiextensions.k8s.io/v1", "{\"desiredAPIVersion\":\"opentelemetry.io/v1beta1\",\"objects\":[]}"),
               "request.uid is missing");
    expect_400(REVIEW("apiextensions.k8s.io/v1", "{\"uid\":\"u\",\"desiredAPIVersion\":1,\"objects\":[]}"),
               "request.desiredAPIVersion: expected a string");
    expect_400(REVIEW("apiextensions.k8s.io/v1", "{\"uid\":\"u\",\"desiredAPIVersion\":\"opentelemetry.io/v1beta1\","
                                                 "\"objects\":{}}"),
               "request.objects: expected a list");
}
END_TEST

static const char COLLECTOR[] =
    "{\"apiVersion\":\"opentelemetry.io/v1alpha1\",\"kind\":\"OpenTelemetryCollector\","
    "\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},"
    "\"spec\":{\"mode\":\"deployment\",\"config\":\"receivers:\\n  otlp: {}\\nexporters:\\n  debug: {}\\n"
    "service:\\n  pipelines:\\n    traces: {receivers: [otlp], exporters: [debug]}\\n\"}}";

static void expect_200(const char *body, const char *answer, bool failed, size_t nobjects) {
    conversion_out out;
    handle(body, &out);
    ck_assert_int_eq(out.status, 200);
    ck_assert_str_eq(out.body, answer);
    ck_assert_uint_eq(out.len, strlen(answer));
    ck_assert_int_eq(out.failed, failed);
    ck_assert_uint_eq(out.nobjects, nobjects);
    conversion_out_free(&out);
}

START_TEST(collector_converted) {
    char body[2048];
    snprintf(body, sizeof body,
             REVIEW("apiextensions.k8s.io/v1", "{\"uid\":\"u-1\",\"desiredAPIVersion\":\"opentelemetry.io/v1beta1\","
                                               "\"objects\":[%s]}"),
             COLLECTOR);
    expect_200(body,
               "{\"kind\":\"ConversionReview\",\"apiVersion\":\"apiextensions.k8s.io/v1\",\"response\":{\"uid\":\"u-1\","
               "\"convertedObjects\":[{\"apiVersion\":\"opentelemetry.io/v1beta1\",\"kind\":\"OpenTelemetryCollector\","
               "\"metadata\":{\"name\":\"c\",\"namespace\":\"default\"},\"spec\":{\"mode\":\"deployment\","
               "\"config\":{\"receivers\":{\"otlp\":{}},\"exporters\":{\"debug\":{}},\"service\":{\"pipelines\":"
               "{\"traces\":{\"exporters\":[\"debug\"],\"receivers\":[\"otlp\"]}}}}}}],"
               "\"result\":{\"metadata\":{},\"status\":\"Success\"}}}",
               false, 1);
    snprintf(body, sizeof body,
             REVIEW("apiextensions.k8s.io/v1beta1", "{\"uid\":\"u-2\",\"desiredAPIVersion\":\"opentelemetry.io/v1beta1\","
                                                    "\"objects\":[]}"));
    expect_200(body,
               "{\"kind\":\"ConversionReview\",\"apiVersion\":\"apiextensions.k8s.io/v1beta1\",\"response\":"
               "{\"uid\":\"u-2\",\"convertedObjects\":[],\"result\":{\"metadata\":{},\"status\":\"Success\"}}}",
               false, 0);
}
END_TEST

START_TEST(unknown_desired_version_fails_whole) {
    char body[2048];
    snprintf(body, sizeof body,
             REVIEW("apiextensions.k8s.io/v1", "{\"uid\":\"u-3\",\"desiredAPIVersion\":\"opentelemetry.io/v2\","
                                               "\"objects\":[%s]}"),
             COLLECTOR);
    expect_200(body,
               "{\"kind\":\"ConversionReview\",\"apiVersion\":\"apiextensions.k8s.io/v1\",\"response\":{\"uid\":\"u-3\","
               "\"convertedObjects\":null,\"result\":{\"metadata\":{},\"status\":\"Failure\",\"message\":"
               "\"request.desiredAPIVersion \\\"opentelemetry.io/v2\\\": expected opentelemetry.io/v1alpha1 or "
               "opentelemetry.io/v1beta1\"}}}",
               true, 0);
}
END_TEST

int main(void) {
    Suite *s = suite_create("conversion");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, not_a_conversion_review_is_400);
    tcase_add_test(tc, collector_converted);
    tcase_add_test(tc, unknown_desired_version_fails_whole);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
