/* tests/unit/test_bounds.c - the engine's bounds (mutate.h): a pod exactly
 * at a bound is handled as any other, one past it is left alone with a
 * warning naming the bound, a skip and res.limit; a pod that asks for
 * nothing is never refused, whatever its size. */
#include "base/sbuf.h"
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RESOURCES =
    "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
    "metadata: {name: inst, namespace: ns1}\n"
    "spec: {exporter: {endpoint: 'http://otel:4317'}}\n";

/* A pod in flow-style YAML: `containers` containers c0.., the first `env`
 * env entries each (E0..), `mounts` mounts each, `volumes` volumes, and
 * the annotations given (a flow-map body, without braces). */
static char *pod(size_t containers, size_t env, size_t mounts, size_t volumes, const char *annotations) {
    sbuf b = SBUF_INIT;
    sbuf_printf(&b, "{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: ns1, annotations: {%s}}, "
                    "spec: {containers: [", annotations);
    for (size_t c = 0; c < containers; c++) {
        sbuf_printf(&b, "%s{name: c%zu, image: 'app:1', env: [", c ? ", " : "", c);
        for (size_t e = 0; e < env; e++) sbuf_printf(&b, "%s{name: E%zu, value: v}", e ? ", " : "", e);
        sbuf_puts(&b, "], volumeMounts: [");
        for (size_t m = 0; m < mounts; m++) sbuf_printf(&b, "%s{name: v%zu, mountPath: /m%zu}", m ? ", " : "", m, m);
        sbuf_puts(&b, "]}");
    }
    sbuf_puts(&b, "], volumes: [");
    for (size_t v = 0; v < volumes; v++) sbuf_printf(&b, "%s{name: v%zu, emptyDir: {}}", v ? ", " : "", v);
    sbuf_puts(&b, "]}}");
    return sbuf_take(&b, NULL);
}

/* text (taken) with an init container of `env` env entries (I0..) added to
 * its spec: pod()'s text ends with the spec's and the pod's braces. */
static char *with_init(char *text, size_t env) {
    sbuf b = SBUF_INIT;
    size_t n = strlen(text);
    sbuf_add(&b, text, n - 2);
    sbuf_puts(&b, ", initContainers: [{name: init, image: 'init:1', env: [");
    for (size_t e = 0; e < env; e++) sbuf_printf(&b, "%s{name: I%zu, value: v}", e ? ", " : "", e);
    sbuf_puts(&b, "]}]}}");
    free(text);
    return sbuf_take(&b, NULL);
}

static const char *const JAVA = "instrumentation.opentelemetry.io/inject-java: 'true'";

/* Runs the engine on text (taken); with a warning the bound must refuse
 * the pod with exactly that text, without one Java must be injected. */
static void expect(const char *name, char *text, mutate_limit limit, const char *warning) {
    fx_resources(RESOURCES);
    fx_run *r = fx_mutate(name, text, "ns1");
    if (warning) {
        ck_assert_int_eq(r->res.limit, limit);
        ck_assert_str_eq(r->warnings, warning);
        ck_assert(r->res.skips & (1u << MUTATE_SKIP_LIMIT));
        ck_assert_int_eq((int)json_object_array_length(r->res.patch), 0);
        ck_assert_uint_eq(r->res.injected, 0);
    } else {
        ck_assert_int_eq(r->res.limit, MUTATE_LIMIT_NONE);
        ck_assert(!(r->res.skips & (1u << MUTATE_SKIP_LIMIT)));
        ck_assert_msg(r->res.injected & MUTATE_BIT(MUTATE_JAVA), "%s: not injected: %s", name, r->warnings);
    }
    fx_free(r);
    free(text);
}

START_TEST(containers_bound) {
    expect("containers at", pod(MUTATE_MAX_CONTAINERS, 0, 0, 0, JAVA), MUTATE_LIMIT_CONTAINERS, NULL);
    expect("containers past", pod(MUTATE_MAX_CONTAINERS + 1, 0, 0, 0, JAVA), MUTATE_LIMIT_CONTAINERS,
           "containers and init containers: 257, more than the 256 otel-webhook handles (bound containers); "
           "nothing injected");
}
END_TEST

START_TEST(env_bounds) {
    expect("env at", pod(1, MUTATE_MAX_ENV, 0, 0, JAVA), MUTATE_LIMIT_ENV, NULL);
    expect("env past", pod(2, MUTATE_MAX_ENV + 1, 0, 0, JAVA), MUTATE_LIMIT_ENV,
           "env entries in container c0: 4097, more than the 4096 otel-webhook handles (bound env); nothing injected");
    expect("env total at", pod(4, MUTATE_MAX_ENV, 0, 0, JAVA), MUTATE_LIMIT_ENV_TOTAL, NULL);
    expect("env total past", pod(5, MUTATE_MAX_ENV, 0, 0, JAVA), MUTATE_LIMIT_ENV_TOTAL,
           "env entries in all containers: 20480, more than the 16384 otel-webhook handles (bound env_total); "
           "nothing injected");
    /* Init containers count: 4 x 4096 in the containers and one more in
     * an init container is one past (what fuzz_engine once got wrong). */
    expect("env total past with init", with_init(pod(4, MUTATE_MAX_ENV, 0, 0, JAVA), 1), MUTATE_LIMIT_ENV_TOTAL,
           "env entries in all containers: 16385, more than the 16384 otel-webhook handles (bound env_total); "
           "nothing injected");
    expect("env total at with init", with_init(pod(4, MUTATE_MAX_ENV - 1, 0, 0, JAVA), 4), MUTATE_LIMIT_ENV_TOTAL,
           NULL);
}
END_TEST

START_TEST(volume_bounds) {
    expect("mounts at", pod(4, 0, MUTATE_MAX_VOLUME_MOUNTS / 4, 0, JAVA), MUTATE_LIMIT_VOLUME_MOUNTS, NULL);
    expect("mounts past", pod(4, 0, MUTATE_MAX_VOLUME_MOUNTS / 4 + 1, 0, JAVA), MUTATE_LIMIT_VOLUME_MOUNTS,
           "volume mounts in all containers: 4100, more than the 4096 otel-webhook handles (bound volume_mounts); "
           "nothing injected");
    expect("volumes at", pod(1, 0, 0, MUTATE_MAX_VOLUMES, JAVA), MUTATE_LIMIT_VOLUMES, NULL);
    expect("volumes past", pod(1, 0, 0, MUTATE_MAX_VOLUMES + 1, JAVA), MUTATE_LIMIT_VOLUMES,
           "volumes: 1025, more than the 1024 otel-webhook handles (bound volumes); nothing injected");
}
END_TEST

/* Annotations: many of them, and names in a container list. */
static char *annotations(size_t extra, size_t names) {
    sbuf b = SBUF_INIT;
    sbuf_puts(&b, JAVA);
    for (size_t i = 0; i < extra; i++) sbuf_printf(&b, ", a%zu: x", i);
    if (names) {
        sbuf_puts(&b, ", instrumentation.opentelemetry.io/container-names: 'c0");
        for (size_t i = 1; i < names; i++) sbuf_printf(&b, ",n%zu", i);
        sbuf_puts(&b, "'");
    }
    return sbuf_take(&b, NULL);
}

START_TEST(annotation_bounds) {
    char *a = annotations(MUTATE_MAX_ANNOTATIONS - 1, 0);
    expect("annotations at", pod(1, 0, 0, 0, a), MUTATE_LIMIT_ANNOTATIONS, NULL);
    free(a);
    a = annotations(MUTATE_MAX_ANNOTATIONS, 0);
    expect("annotations past", pod(1, 0, 0, 0, a), MUTATE_LIMIT_ANNOTATIONS,
           "annotations: 1025, more than the 1024 otel-webhook handles (bound annotations); nothing injected");
    free(a);
    a = annotations(0, MUTATE_MAX_CONTAINER_NAMES);
    fx_resources(RESOURCES);
    char *text = pod(1, 0, 0, 0, a);
    fx_run *r = fx_mutate("names at", text, "ns1");
    /* At the bound the list is used: c0 instrumented. */
    ck_assert_int_eq(r->res.limit, MUTATE_LIMIT_NONE);
    ck_assert(r->res.injected & MUTATE_BIT(MUTATE_JAVA));
    ck_assert_ptr_nonnull(fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-java"));
    fx_free(r);
    free(text);
    free(a);
    a = annotations(0, MUTATE_MAX_CONTAINER_NAMES + 1);
    expect("names past", pod(1, 0, 0, 0, a), MUTATE_LIMIT_CONTAINER_NAMES,
           "names in the pod annotation instrumentation.opentelemetry.io/container-names: 257, more than the 256 "
           "otel-webhook handles (bound container_names); nothing injected");
    free(a);
}
END_TEST

START_TEST(resource_attribute_bound) {
    for (size_t n = MUTATE_MAX_RESOURCE_ATTRIBUTES; n <= MUTATE_MAX_RESOURCE_ATTRIBUTES + 1; n++) {
        sbuf b = SBUF_INIT;
        sbuf_printf(&b, "{apiVersion: v1, kind: Pod, metadata: {name: web, namespace: ns1, annotations: {%s}}, "
                        "spec: {containers: [{name: app, image: 'app:1', env: [{name: OTEL_RESOURCE_ATTRIBUTES, "
                        "value: 'k0=v",
                    JAVA);
        for (size_t i = 1; i < n; i++) sbuf_printf(&b, ",k%zu=v", i);
        sbuf_puts(&b, "'}]}]}}");
        expect(n == MUTATE_MAX_RESOURCE_ATTRIBUTES ? "attributes at" : "attributes past", sbuf_take(&b, NULL),
               MUTATE_LIMIT_RESOURCE_ATTRIBUTES,
               n == MUTATE_MAX_RESOURCE_ATTRIBUTES
                   ? NULL
                   : "OTEL_RESOURCE_ATTRIBUTES items in container app: 1025, more than the 1024 otel-webhook "
                     "handles (bound resource_attributes); nothing injected");
    }
}
END_TEST

/* A pod nothing asks for is not looked at: no bound, no warning, no patch. */
START_TEST(unasked_pods_are_free) {
    fx_resources(RESOURCES);
    char *text = pod(MUTATE_MAX_CONTAINERS + 1, 20, 0, 0, "a: b");
    fx_run *r = fx_mutate("unasked", text, "ns1");
    ck_assert_int_eq(r->res.limit, MUTATE_LIMIT_NONE);
    ck_assert_uint_eq(r->res.nwarnings, 0);
    ck_assert_uint_eq(r->res.skips, 0);
    ck_assert_int_eq((int)json_object_array_length(r->res.patch), 0);
    fx_free(r);
    free(text);
}
END_TEST

START_TEST(limit_names) {
    ck_assert_str_eq(mutate_limit_name(MUTATE_LIMIT_ENV), "env");
    ck_assert_uint_eq(mutate_limit_max(MUTATE_LIMIT_ENV), MUTATE_MAX_ENV);
    ck_assert_str_eq(mutate_limit_name(MUTATE_LIMIT_RESOURCE_ATTRIBUTES), "resource_attributes");
    ck_assert_str_eq(mutate_limit_name(MUTATE_NLIMITS), "?");
}
END_TEST

int main(void) {
    Suite *s = suite_create("bounds");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, containers_bound);
    tcase_add_test(tc, env_bounds);
    tcase_add_test(tc, volume_bounds);
    tcase_add_test(tc, annotation_bounds);
    tcase_add_test(tc, resource_attribute_bound);
    tcase_add_test(tc, unasked_pods_are_free);
    tcase_add_test(tc, limit_names);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
