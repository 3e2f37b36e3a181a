/* tests/unit/test_instvalidate.c - the Instrumentation and OpAMPBridge
 * webhooks' defaulting and validation (mutate/defaults.c,
 * mutate/inst_validate.c, mutate/opampbridge.c) against cr-admission.md
 * 4 and 5.2: every rule with its exact message, in order, and where we do
 * better than the reference (spec 8). */
#include "mutate/defaults.h"
#include "mutate/inst_validate.h"
#include "mutate/opampbridge.h"

#include "base/json.h"
#include "kube/yaml.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *yaml(const char *text) {
    kube_yaml_error ye;
    json_object *o = kube_yaml_parse_one(text, strlen(text), &ye);
    ck_assert_msg(o != NULL, "bad test YAML (line %d: %s):\n%s", ye.line, ye.msg, text);
    return o;
}

static json_object *inst(const char *spec) {
    char *t;
    if (asprintf(&t, "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                     "metadata: {name: i, namespace: ns}\nspec:\n%s",
                 spec) < 0)
        abort();
    json_object *o = yaml(t);
    free(t);
    return o;
}

typedef struct result {
    int rc;
    verdict v;
} result;

static mutate_settings settings;

static result run(const char *spec, verdict_op op) {
    json_object *o = inst(spec);
    char err[256] = "";
    ck_assert_msg(mutate_default_instrumentation(o, &settings, err, sizeof err) == 0, "%s", err);
    result r = {0, VERDICT_INIT};
    r.rc = mutate_validate_instrumentation(o, op, &settings, &r.v);
    json_object_put(o);
    return r;
}

/* spec: sampler set unless the case is about it, so that "sampler type not
 * set" does not hide what is checked. */
#define SAMPLER "  sampler: {type: always_on}\n"

static void refused(const char *spec, const char *rule, const char *msg) {
    result r = run(spec, VERDICT_CREATE);
    ck_assert_msg(r.rc == -1, "allowed: %s", spec);
    ck_assert_str_eq(r.v.rule, rule);
    ck_assert_str_eq(r.v.message, msg);
    verdict_free(&r.v);
}

/* Allowed with exactly the warnings listed (NULL-terminated). */
static void allowed(const char *spec, const char *const *warnings) {
    result r = run(spec, VERDICT_CREATE);
    ck_assert_msg(r.rc == 0, "refused (%s): %s", r.v.rule, r.v.message);
    size_t n = 0;
    while (warnings && warnings[n]) n++;
    ck_assert_uint_eq(r.v.nwarnings, n);
    for (size_t i = 0; i < n; i++) ck_assert_str_eq(r.v.warnings[i], warnings[i]);
    verdict_free(&r.v);
}

#define W(...) ((const char *const[]){__VA_ARGS__, NULL})

static void setup(void) { mutate_settings_init(&settings); }
static void teardown(void) { mutate_settings_free(&settings); }

START_TEST(sampler_rules) {
    allowed("  exporter: {endpoint: 'http://c:4317'}\n", W("sampler type not set"));
    allowed("  sampler: {type: traceidratio, argument: '0.25'}\n", NULL);
    allowed("  sampler: {type: parentbased_traceidratio}\n", NULL);
    allowed("  sampler: {type: traceidratio, argument: '1e-1'}\n", NULL);
    refused("  sampler: {type: traceidratio, argument: abc}\n", "sampler", "spec.sampler.argument is not a number: abc");
    refused("  sampler: {type: traceidratio, argument: ' 0.5'}\n", "sampler",
            "spec.sampler.argument is not a number:  0.5");
    refused("  sampler: {type: parentbased_traceidratio, argument: '1.5'}\n", "sampler",
            "spec.sampler.argument should be in rage [0..1]: 1.5");
    refused("  sampler: {type: traceidratio, argument: '-0.1'}\n", "sampler",
            "spec.sampler.argument should be in rage [0..1]: -0.1");
    /* spec 8.11: NaN is not in [0..1]. */
    refused("  sampler: {type: traceidratio, argument: NaN}\n", "sampler",
            "spec.sampler.argument should be in rage [0..1]: NaN");
    refused("  sampler: {type: traceidratio, argument: Inf}\n", "sampler",
            "spec.sampler.argument should be in rage [0..1]: Inf");
    for (const char *const *t = W("always_on", "always_off", "parentbased_always_on", "parentbased_always_off", "xray");
         *t; t++) {
        char spec[128];
        snprintf(spec, sizeof spec, "  sampler: {type: %s, argument: whatever}\n", *t);
        allowed(spec, NULL);
    }
    refused("  sampler: {type: sometimes}\n", "sampler", "spec.sampler.type is not valid: sometimes");
}
END_TEST

#define JR "spec.sampler.argument is not a valid argument for sampler jaeger_remote: "

START_TEST(jaeger_remote_grammar) {
    allowed("  sampler: {type: jaeger_remote, argument: 'endpoint=http://jaeger-collector:14250/,"
            "initialSamplingRate=0.99,pollingIntervalMs=1000'}\n",
            NULL);
    allowed("  sampler: {type: jaeger_remote, argument: 'pollingIntervalMs=+5,color=blue'}\n", NULL);
    /* spec 8.10: accepted, as by our CRD. */
    allowed("  sampler: {type: parentbased_jaeger_remote, argument: 'endpoint=http://j:14250'}\n", NULL);
    refused("  sampler: {type: jaeger_remote, argument: 'endpoint'}\n", "sampler",
            JR "invalid argument: endpoint, the argument should be in the form of key=value");
    refused("  sampler: {type: jaeger_remote, argument: 'endpoint=http://j,'}\n", "sampler",
            JR "invalid argument: , the argument should be in the form of key=value");
    refused("  sampler: {type: jaeger_remote, argument: 'endpoint='}\n", "sampler", JR "endpoint cannot be empty");
    refused("  sampler: {type: jaeger_remote, argument: 'pollingIntervalMs=1s'}\n", "sampler",
            JR "invalid pollingIntervalMs: 1s");
    refused("  sampler: {type: jaeger_remote, argument: 'initialSamplingRate=high'}\n", "sampler",
            JR "invalid initialSamplingRate: high");
    refused("  sampler: {type: jaeger_remote, argument: 'initialSamplingRate=2'}\n", "sampler",
            JR "initialSamplingRate should be in rage [0..1]: 2");
    refused("  sampler: {type: parentbased_jaeger_remote, argument: 'x'}\n", "sampler",
            "spec.sampler.argument is not a valid argument for sampler parentbased_jaeger_remote: invalid argument: x, "
            "the argument should be in the form of key=value");
    /* spec 8.11: a negative interval is refused; '=' in a value (a query) is kept. */
    refused("  sampler: {type: jaeger_remote, argument: 'pollingIntervalMs=-5'}\n", "sampler",
            JR "invalid pollingIntervalMs: -5");
    allowed("  sampler: {type: jaeger_remote, argument: 'endpoint=http://j:5778/sampling?service=a'}\n", NULL);
    refused("  sampler: {type: jaeger_remote, argument: 'initialSamplingRate=nan'}\n", "sampler",
            JR "initialSamplingRate should be in rage [0..1]: nan");
}
END_TEST

START_TEST(volume_rules) {
    refused(SAMPLER "  java: {volumeLimitSize: 200Mi, volumeClaimTemplate: {spec: {}}}\n"
                    "  apacheHttpd: {volumeLimitSize: 1Gi, volumeClaimTemplate: {spec: {}}}\n",
            "volume",
            "spec.apachehttpd.volumeClaimTemplate and spec.apachehttpd.volumeSizeLimit cannot both be defined: unable "
            "to resolve volume size");
    refused(SAMPLER "  nodejs: {volumeLimitSize: 200Mi, volumeClaimTemplate: {spec: {}}}\n", "volume",
            "spec.nodejs.volumeClaimTemplate and spec.nodejs.volumeSizeLimit cannot both be defined: unable to resolve "
            "volume size");
    /* An empty template is none; the size alone is allowed, with rule 12's
     * deprecation warning in its order (python before go), advice included
     * (upstream's TestInstrumentationValidatingWebhook_DeprecationWarnings). */
    allowed(SAMPLER "  go: {volumeLimitSize: 200Mi, volumeClaimTemplate: {}}\n  python: {volumeLimitSize: 1Gi}\n",
            W("spec.python.volumeSizeLimit is deprecated and will be removed in a future release; use "
              "spec.python.volume.size instead",
              "spec.go.volumeSizeLimit is deprecated and will be removed in a future release; use spec.go.volume.size "
              "instead"));
    allowed(SAMPLER "  apacheHttpd: {volumeLimitSize: 1Gi}\n  nginx: {volumeLimitSize: 1Gi}\n",
            W("spec.apachehttpd.volumeSizeLimit is deprecated and will be removed in a future release; use "
              "spec.apachehttpd.volume.size instead",
              "spec.nginx.volumeSizeLimit is deprecated and will be removed in a future release; use "
              "spec.nginx.volume.size instead"));
}
END_TEST

START_TEST(exporter_warnings) {
    allowed(SAMPLER "  exporter: {endpoint: 'https://c:4317'}\n", W("exporter is using https:// but exporter.tls is unset"));
    /* spec 8.11: the scheme in any case. */
    allowed(SAMPLER "  exporter: {endpoint: 'HTTPS://c:4317'}\n", W("exporter is using https:// but exporter.tls is unset"));
    allowed(SAMPLER "  exporter: {endpoint: 'http://c:4317', tls: {ca_file: ca.crt}}\n",
            W("exporter.tls is configured but exporter.endpoint is not enabling TLS with https://"));
    allowed(SAMPLER "  exporter: {endpoint: 'https://c:4317', tls: {key_file: k}}\n",
            W("both exporter.tls.key and exporter.tls.cert mut be set"));
    allowed(SAMPLER "  exporter: {tls: {cert_file: c}}\n",
            W("both exporter.tls.key and exporter.tls.cert mut be set",
              "exporter.tls is configured but exporter.endpoint is not enabling TLS with https://"));
    allowed(SAMPLER "  exporter: {endpoint: 'https://c:4317', tls: {cert_file: c, key_file: k}}\n", NULL);
}
END_TEST

START_TEST(appendix_a4) {
    refused("  sampler: {type: traceidratio, argument: '1.5'}\n  exporter: {endpoint: 'https://c:4317'}\n", "sampler",
            "spec.sampler.argument should be in rage [0..1]: 1.5");
    result r = run("  sampler: {type: traceidratio, argument: '1.5'}\n  exporter: {endpoint: 'https://c:4317'}\n",
                   VERDICT_CREATE);
    ck_assert_uint_eq(r.v.nwarnings, 0); /* the sampler check comes before the exporter's */
    verdict_free(&r.v);
    allowed("  sampler: {type: traceidratio, argument: '0.25'}\n  exporter: {endpoint: 'https://c:4317'}\n",
            W("exporter is using https:// but exporter.tls is unset"));
}
END_TEST

#define JAVA_MSG(img)                                                                                              \
    "Instrumentation ns/i: java image " img " is at a version that cannot be automatically upgraded. Java "       \
    "instrumentation 2.0.0 contains breaking HTTP semantic convention changes. See "                             \
    "https://opentelemetry.io/blog/2023/http-conventions-declared-stable/ for a general description of the "       \
    "changes. To upgrade, manually set the image on this Instrumentation resource to 2.0.0 or higher."
#define REPO "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-"

START_TEST(unupgradable_versions) {
    allowed(SAMPLER "  java: {image: '" REPO "java:1.33.0'}\n", W(JAVA_MSG(REPO "java:1.33.0")));
    allowed(SAMPLER "  java: {image: '" REPO "java:v1.9'}\n", W(JAVA_MSG(REPO "java:v1.9")));
    allowed(SAMPLER "  dotnet: {image: '" REPO "dotnet:1.2.0'}\n",
            W("Instrumentation ns/i: dotnet image " REPO "dotnet:1.2.0 is at a version that cannot be automatically "
              "upgraded. .NET instrumentation 1.3.0 contains breaking HTTP semantic convention changes. See "
              "https://opentelemetry.io/blog/2023/http-conventions-declared-stable/ for a general description of the "
              "changes. To upgrade, manually set the image on this Instrumentation resource to 1.3.0 or higher."));
    /* Past the blocked version, another repository, or a tag that is not a version: nothing. */
    allowed(SAMPLER "  java: {image: '" REPO "java:2.0.0'}\n", NULL);
    allowed(SAMPLER "  java: {image: 'example.com/java:1.0.0'}\n", NULL);
    allowed(SAMPLER "  java: {image: '" REPO "java:latest'}\n", NULL);
    allowed(SAMPLER "  java: {image: 'registry:5000/java'}\n", NULL);
    /* Java's default is set to an old one: the upgrade would not cross 2.0.0. */
    free(settings.images[MUTATE_JAVA]);
    settings.images[MUTATE_JAVA] = strdup(REPO "java:1.34.0");
    allowed(SAMPLER "  java: {image: '" REPO "java:1.33.0'}\n", NULL);
}
END_TEST

START_TEST(delete_and_shape) {
    /* A delete is checked like a create, warnings included, as the
     * reference and upstream's tests (ValidateDelete) have it. */
    result r = run("  sampler: {type: sometimes}\n", VERDICT_DELETE);
    ck_assert_int_eq(r.rc, -1);
    ck_assert_str_eq(r.v.message, "spec.sampler.type is not valid: sometimes");
    verdict_free(&r.v);
    r = run("", VERDICT_DELETE);
    ck_assert_int_eq(r.rc, 0);
    ck_assert_uint_eq(r.v.nwarnings, 1);
    ck_assert_str_eq(r.v.warnings[0], "sampler type not set");
    verdict_free(&r.v);
    json_object *o = inst("  sampler: {type: 1}\n");
    char err[256] = "";
    ck_assert_int_eq(mutate_default_instrumentation(o, &settings, err, sizeof err), -1);
    ck_assert_str_eq(err, "spec.sampler.type: expected a string, got a number (quote it: \"1\")");
    r = (result){0, VERDICT_INIT};
    ck_assert_int_eq(mutate_validate_instrumentation(o, VERDICT_CREATE, &settings, &r.v), -1);
    ck_assert_str_eq(r.v.rule, "shape");
    verdict_free(&r.v);
    json_object_put(o);
    o = inst("  java: {resources: {limits: {cpu: 2}}}\n");
    ck_assert_int_eq(mutate_default_instrumentation(o, &settings, err, sizeof err), -1);
    ck_assert_str_eq(err, "spec.java.resources.limits.cpu: expected a string, got a number (quote it: \"2\")");
    json_object_put(o);
}
END_TEST

START_TEST(defaults_annotations) {
    /* 4.1: the default image annotations are written when absent, and
     * never overwritten (spec 8.22). */
    json_object *o = inst("  java: {image: mine}\n");
    json_object *ann = jobj_at(jobj_at(o, "metadata"), "annotations");
    jset_str(ann, "instrumentation.opentelemetry.io/default-auto-instrumentation-java-image", "old/default:1");
    char err[64];
    ck_assert_int_eq(mutate_default_instrumentation(o, &settings, err, sizeof err), 0);
    ck_assert_str_eq(jstr(ann, "instrumentation.opentelemetry.io/default-auto-instrumentation-java-image"),
                     "old/default:1");
    ck_assert_str_eq(jstr(ann, "instrumentation.opentelemetry.io/default-auto-instrumentation-nodejs-image"),
                     REPO "nodejs:0.78.0");
    ck_assert_str_eq(jstr(jmap(jmap(o, "spec"), "java"), "image"), "mine");
    json_object_put(o);
}
END_TEST

/* ---- OpAMPBridge (5.2) ----------------------------------------------------- */

static json_object *bridge(const char *spec) {
    char *t;
    if (asprintf(&t, "apiVersion: opentelemetry.io/v1alpha1\nkind: OpAMPBridge\nmetadata: {name: b}\nspec:\n%s", spec) <
        0)
        abort();
    json_object *o = yaml(t);
    free(t);
    return o;
}

START_TEST(opampbridge_defaults) {
    json_object *o = bridge("  endpoint: ws://server\n");
    char err[128] = "";
    ck_assert_int_eq(mutate_default_opampbridge(o, err, sizeof err), 0);
    char *s = tu_str(jget(o, "spec"));
    ck_assert_str_eq(s, "{\"endpoint\":\"ws://server\",\"upgradeStrategy\":\"automatic\",\"replicas\":1,"
                        "\"capabilities\":{\"ReportsStatus\":true}}");
    free(s);
    json_object_put(o);
    /* An explicit false is forced to true, as the reference does and its
     * test "enable ReportsStatus capability if not enabled already" expects. */
    o = bridge("  upgradeStrategy: none\n  replicas: 1\n  capabilities: {ReportsStatus: false, AcceptsRemoteConfig: true}\n");
    ck_assert_int_eq(mutate_default_opampbridge(o, err, sizeof err), 0);
    s = tu_str(jget(o, "spec"));
    ck_assert_str_eq(s, "{\"upgradeStrategy\":\"none\",\"replicas\":1,\"capabilities\":{\"ReportsStatus\":true,"
                        "\"AcceptsRemoteConfig\":true}}");
    free(s);
    json_object_put(o);
    o = bridge("  replicas: two\n");
    ck_assert_int_eq(mutate_default_opampbridge(o, err, sizeof err), -1);
    ck_assert_str_eq(err, "spec.replicas: expected an integer, got a string");
    json_object_put(o);
}
END_TEST

static void bridge_refused(const char *spec, const char *rule, const char *msg) {
    json_object *o = bridge(spec);
    char err[128] = "";
    ck_assert_int_eq(mutate_default_opampbridge(o, err, sizeof err), 0);
    verdict v = VERDICT_INIT;
    if (msg) {
        ck_assert_int_eq(mutate_validate_opampbridge(o, VERDICT_CREATE, &v), -1);
        ck_assert_str_eq(v.rule, rule);
        ck_assert_str_eq(v.message, msg);
    } else {
        ck_assert_msg(mutate_validate_opampbridge(o, VERDICT_CREATE, &v) == 0, "%s", v.message);
    }
    verdict_free(&v);
    ck_assert_int_eq(mutate_validate_opampbridge(o, VERDICT_DELETE, &v), 0);
    json_object_put(o);
}

START_TEST(opampbridge_rules) {
    bridge_refused("  endpoint: '  '\n", "endpoint", "the OpAMP server endpoint is not specified");
    bridge_refused("  endpoint: ws://s\n  tls: {insecure: true, insecure_skip_verify: true}\n", "tls",
                   "tls.insecure and tls.insecure_skip_verify cannot both be true");
    bridge_refused("  endpoint: ws://s\n  ports: [{name: Web, port: 80}]\n", "ports",
                   "the OpAMPBridge Spec Ports configuration is incorrect, port name 'Web' errors: [must contain only "
                   "alpha-numeric characters (a-z, 0-9), and hyphens (-)], num '80' errors: []");
    bridge_refused("  endpoint: ws://s\n  replicas: 2\n", "replicas", "replica count must not be greater than 1");
    bridge_refused("  endpoint: ws://s\n  tls: {insecure: true}\n  ports: [{name: web, port: 80}]\n", NULL, NULL);
    /* Not defaulted (an object straight from a client): capabilities empty. */
    json_object *o = bridge("  endpoint: ws://s\n  capabilities: {}\n");
    verdict v = VERDICT_INIT;
    ck_assert_int_eq(mutate_validate_opampbridge(o, VERDICT_CREATE, &v), -1);
    ck_assert_str_eq(v.message, "the capabilities supported by OpAMP Bridge are not specified");
    verdict_free(&v);
    json_object_put(o);
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("instvalidate");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, sampler_rules);
    tcase_add_test(tc, jaeger_remote_grammar);
    tcase_add_test(tc, volume_rules);
    tcase_add_test(tc, exporter_warnings);
    tcase_add_test(tc, appendix_a4);
    tcase_add_test(tc, unupgradable_versions);
    tcase_add_test(tc, delete_and_shape);
    tcase_add_test(tc, defaults_annotations);
    tcase_add_test(tc, opampbridge_defaults);
    tcase_add_test(tc, opampbridge_rules);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return tu_run(suite());
}
