/* tests/unit/test_annotations.c - misspelt annotation keys (mutate/annotations.c):
 * the exact warning for each shape of typo, pod and namespace, none for the
 * keys the engine reads, for resource.opentelemetry.io/ keys and for other
 * tools' keys, the bounds of the check, and its edit distance. */
#include "mutate/internal.h"
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include "base/sbuf.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const INST = "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                                "metadata: {name: inst, namespace: ns1}\n"
                                "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n";

/* A bare pod in ns1 with the annotations given (a flow-map body). */
static fx_run *mutate_with(const char *annotations) {
    char *pod = xasprintf("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: {%s}\n"
                          "spec:\n  containers: [{name: app, image: 'app:1'}]\n",
                          annotations);
    fx_run *r = fx_mutate("annotations", pod, "ns1");
    free(pod);
    return r;
}

#define UNKNOWN " is not one otel-webhook knows"

START_TEST(typo_shapes) {
    fx_resources(INST);
    static const struct {
        const char *key, *warning;
    } cases[] = {
        /* a swap of neighbours, a letter left out, one too many, case */
        {"instrumentation.opentelemetry.io/inject-jaav",
         "annotation instrumentation.opentelemetry.io/inject-jaav" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-java?"},
        {"instrumentation.opentelemetry.io/injectjava",
         "annotation instrumentation.opentelemetry.io/injectjava" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-java?"},
        {"instrumentation.opentelemetry.io/inject-pythonn",
         "annotation instrumentation.opentelemetry.io/inject-pythonn" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-python?"},
        {"instrumentation.opentelemetry.io/Inject-NodeJS",
         "annotation instrumentation.opentelemetry.io/Inject-NodeJS" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-nodejs?"},
        {"instrumentation.opentelemetry.io/inject-apache-httpdd",
         "annotation instrumentation.opentelemetry.io/inject-apache-httpdd" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-apache-httpd?"},
        {"instrumentation.opentelemetry.io/java-container-name",
         "annotation instrumentation.opentelemetry.io/java-container-name" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/java-container-names?"},
        {"instrumentation.opentelemetry.io/otel-python-platfrom",
         "annotation instrumentation.opentelemetry.io/otel-python-platfrom" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/otel-python-platform?"},
        {"sidecar.opentelemetry.io/injet",
         "annotation sidecar.opentelemetry.io/injet" UNKNOWN "; did you mean sidecar.opentelemetry.io/inject?"},
        /* a misspelt domain */
        {"instrumentations.opentelemetry.io/inject-java",
         "annotation instrumentations.opentelemetry.io/inject-java" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-java?"},
        {"instrumentation.opentelemtry.io/inject-jva",
         "annotation instrumentation.opentelemtry.io/inject-jva" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-java?"},
        {"sidecar.opentelemetry.oi/inject",
         "annotation sidecar.opentelemetry.oi/inject" UNKNOWN "; did you mean sidecar.opentelemetry.io/inject?"},
        {"resources.opentelemetry.io/service.name",
         "annotation resources.opentelemetry.io/service.name" UNKNOWN
         "; did you mean resource.opentelemetry.io/service.name?"},
        /* the right key under the other domain, Nginx's odd list, a language without inject- */
        {"sidecar.opentelemetry.io/inject-java",
         "annotation sidecar.opentelemetry.io/inject-java" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-java?"},
        {"instrumentation.opentelemetry.io/inject",
         "annotation instrumentation.opentelemetry.io/inject" UNKNOWN "; did you mean sidecar.opentelemetry.io/inject?"},
        {"instrumentation.opentelemetry.io/nginx-container-names",
         "annotation instrumentation.opentelemetry.io/nginx-container-names" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-nginx-container-names?"},
        {"instrumentation.opentelemetry.io/dotnet",
         "annotation instrumentation.opentelemetry.io/dotnet" UNKNOWN
         "; did you mean instrumentation.opentelemetry.io/inject-dotnet?"},
        /* nothing close: said, without a guess */
        {"instrumentation.opentelemetry.io/inject-ruby", "annotation instrumentation.opentelemetry.io/inject-ruby" UNKNOWN},
        {"sidecar.opentelemetry.io/config", "annotation sidecar.opentelemetry.io/config" UNKNOWN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char ann[256];
        snprintf(ann, sizeof ann, "'%s': 'true'", cases[i].key);
        fx_run *r = mutate_with(ann);
        ck_assert_msg(strcmp(r->warnings, cases[i].warning) == 0, "%s: %s", cases[i].key, r->warnings);
        ck_assert_uint_eq(r->res.skips, 1u << MUTATE_SKIP_UNKNOWN_ANNOTATION);
        ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
        fx_free(r);
    }
}
END_TEST

/* What must never be flagged: every key the engine reads (from its own
 * tables, so a key added there is covered), the reference's spellings of
 * spec 1.1, resource attributes, and other tools' keys, some with domains
 * as long as ours. */
START_TEST(known_and_foreign_keys_are_quiet) {
    fx_resources(INST);
    sbuf b = SBUF_INIT;
    for (int id = 0; id < MUTATE_NLANGS; id++) {
        char key[ANN_KEY_MAX];
        sbuf_printf(&b, "'%s': 'false', ", ann_lang_key(key, id, false));
        sbuf_printf(&b, "'%s': 'app', ", ann_lang_key(key, id, true));
    }
    for (int i = 0; i < ANN_NKEYS; i++)
        if (i != ANN_SIDECAR_INJECT) sbuf_printf(&b, "'%s': 'x', ", ann_keys[i]);
    /* Written again, plain: only those the loops above did not write (a
     * YAML map may not repeat a key). */
    static const char *const again[] = {"instrumentation.opentelemetry.io/inject-apache-httpd: 'false', ",
                                        "instrumentation.opentelemetry.io/apache-httpd-container-names: app, ",
                                        "instrumentation.opentelemetry.io/inject-nginx-container-names: app, ",
                                        "instrumentation.opentelemetry.io/sdk-container-names: app, ",
                                        "instrumentation.opentelemetry.io/otel-dotnet-auto-runtime: linux-x64, "};
    for (size_t i = 0; i < sizeof again / sizeof again[0]; i++) {
        char quoted[160];
        snprintf(quoted, sizeof quoted, "'%.*s'", (int)(strchr(again[i], ':') - again[i]), again[i]);
        if (!strstr(b.s ? b.s : "", quoted)) sbuf_puts(&b, again[i]);
    }
    sbuf_puts(&b, "resource.opentelemetry.io/service.name: shop, resource.opentelemetry.io/Any.Thing-at_all: x, "
                  "resource.opentelemetry.io/: x, "
                  "cluster-autoscaler.kubernetes.io/safe-to-evict: 'true', deployment.kubernetes.io/revision: '3', "
                  "traffic.sidecar.istio.io/includeInboundPorts: '8080', sidecar.istio.io/inject: 'false', "
                  "kubectl.kubernetes.io/restartedAt: x, opentelemetry.io/anything: x, instrumentation: x, "
                  "prometheus.io/scrape: 'true', a/b/c: d");
    char *ann = sbuf_take(&b, NULL);
    fx_run *r = mutate_with(ann);
    ck_assert_msg(strcmp(r->warnings, "") == 0, "%s", r->warnings);
    ck_assert_uint_eq(r->res.skips, 0);
    fx_free(r);
    free(ann);
    /* The sidecar key, alone (its value would ask for a collector). */
    r = mutate_with("sidecar.opentelemetry.io/inject: 'false'");
    ck_assert_str_eq(r->warnings, "");
    fx_free(r);
}
END_TEST

/* Namespace annotations are read too (spec 1.2), so they are checked too. */
START_TEST(namespace_annotations) {
    char res[1024];
    snprintf(res, sizeof res,
             "%s---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns1\n"
             "  annotations: {instrumentation.opentelemetry.io/inject-pyhton: 'true', "
             "instrumentation.opentelemetry.io/inject-sdk: 'true', resource.opentelemetry.io/team: x}\n",
             INST);
    fx_resources(res);
    fx_run *r = mutate_with("sidecar.opentelemetry.io/injcet: 'true'");
    ck_assert_str_eq(r->warnings,
                     "annotation sidecar.opentelemetry.io/injcet" UNKNOWN "; did you mean sidecar.opentelemetry.io/inject?\n"
                     "annotation instrumentation.opentelemetry.io/inject-pyhton of namespace ns1" UNKNOWN
                     "; did you mean instrumentation.opentelemetry.io/inject-python?");
    /* The namespace's correct inject-sdk still applies. */
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_SDK));
    ck_assert_uint_eq(r->res.skips, 1u << MUTATE_SKIP_UNKNOWN_ANNOTATION);
    fx_free(r);
}
END_TEST

/* A misspelt key next to correct ones: said first, the rest is injected. */
START_TEST(typo_beside_a_request) {
    fx_resources(INST);
    fx_run *r = mutate_with("instrumentation.opentelemetry.io/inject-java: 'true', "
                            "instrumentation.opentelemetry.io/container-name: app");
    ck_assert_str_eq(r->warnings, "annotation instrumentation.opentelemetry.io/container-name" UNKNOWN
                                  "; did you mean instrumentation.opentelemetry.io/container-names?");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA));
    fx_free(r);
}
END_TEST

/* Values of any type (inject from YAML: an unquoted true is a boolean):
 * the key is what is checked, once, and a known key is never flagged. */
START_TEST(values_of_other_types) {
    fx_resources(INST);
    static const char *const values[] = {"true", "1", "null", "{a: b}", "[x]", "''"};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        char ann[256];
        snprintf(ann, sizeof ann, "instrumentation.opentelemetry.io/inject-jaav: %s", values[i]);
        fx_run *r = mutate_with(ann);
        ck_assert_msg(strcmp(r->warnings, "annotation instrumentation.opentelemetry.io/inject-jaav" UNKNOWN
                                          "; did you mean instrumentation.opentelemetry.io/inject-java?") == 0,
                      "%s: %s", values[i], r->warnings);
        fx_free(r);
        snprintf(ann, sizeof ann, "instrumentation.opentelemetry.io/inject-java: %s", values[i]);
        r = mutate_with(ann);
        ck_assert_msg(!strstr(r->warnings, UNKNOWN), "%s: %s", values[i], r->warnings);
        fx_free(r);
    }
}
END_TEST

/* At most 8 keys are named; at most MUTATE_MAX_ANNOTATIONS keys per object
 * and keys of at most 128 bytes are looked at; a pod past a bound gets the
 * bound's warning alone. */
START_TEST(check_is_bounded) {
    fx_resources(INST);
    sbuf b = SBUF_INIT;
    for (int i = 0; i < 10; i++) sbuf_printf(&b, "%sinstrumentation.opentelemetry.io/x%d: a", i ? ", " : "", i);
    char *ann = sbuf_take(&b, NULL);
    fx_run *r = mutate_with(ann);
    ck_assert_str_eq(r->warnings, "annotation instrumentation.opentelemetry.io/x0" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x1" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x2" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x3" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x4" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x5" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x6" UNKNOWN "\n"
                                  "annotation instrumentation.opentelemetry.io/x7" UNKNOWN "\n"
                                  "and 2 more annotations otel-webhook does not know");
    fx_free(r);
    free(ann);

    /* A typo after MUTATE_MAX_ANNOTATIONS other keys is not looked at; one
     * place earlier, it is. */
    for (int before = MUTATE_MAX_ANNOTATIONS - 1; before <= MUTATE_MAX_ANNOTATIONS; before++) {
        for (int i = 0; i < before; i++) sbuf_printf(&b, "k%d: v, ", i);
        sbuf_puts(&b, "instrumentation.opentelemetry.io/inject-jvaa: 'true'");
        ann = sbuf_take(&b, NULL);
        r = mutate_with(ann);
        ck_assert_str_eq(r->warnings, before < MUTATE_MAX_ANNOTATIONS
                                          ? "annotation instrumentation.opentelemetry.io/inject-jvaa" UNKNOWN
                                            "; did you mean instrumentation.opentelemetry.io/inject-java?"
                                          : "");
        fx_free(r);
        free(ann);
    }

    /* Keys longer than 128 bytes, or holding a space, are no typo of ours. */
    char longkey[200];
    snprintf(longkey, sizeof longkey, "instrumentation.opentelemetry.io/inject-java-%0*d: 'true'", 90, 0);
    r = mutate_with(longkey);
    ck_assert_str_eq(r->warnings, "");
    fx_free(r);
    r = mutate_with("'instrumentation.opentelemetry.io/inject java': 'true'");
    ck_assert_str_eq(r->warnings, "");
    fx_free(r);

    /* Past a bound: that warning alone (docs/serve.md, Bounds). */
    sbuf_puts(&b, "instrumentation.opentelemetry.io/inject-java: 'true', instrumentation.opentelemetry.io/inject-jaav: x");
    for (int i = 0; i < MUTATE_MAX_ANNOTATIONS; i++) sbuf_printf(&b, ", k%d: v", i);
    ann = sbuf_take(&b, NULL);
    r = mutate_with(ann);
    ck_assert_str_eq(r->warnings, "annotations: 1026, more than the 1024 otel-webhook handles (bound annotations); "
                                  "nothing injected");
    fx_free(r);
    free(ann);
}
END_TEST

/* The banded distance with its cut-off against the whole matrix, on
 * random strings over a small alphabet (so that matches, swaps and case
 * pairs are frequent), deterministic. */
static unsigned full_osa(const char *a, size_t la, const char *b, size_t lb) {
    static unsigned d[131][131];
#define F(c) ((c) >= 'A' && (c) <= 'Z' ? (c) | 0x20 : (c))
    for (size_t i = 0; i <= la; i++) d[i][0] = (unsigned)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (unsigned)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            unsigned v = d[i - 1][j - 1] + (F(a[i - 1]) != F(b[j - 1]));
            if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && F(a[i - 1]) == F(b[j - 2]) && F(a[i - 2]) == F(b[j - 1]) && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
#undef F
    return d[la][lb];
}

START_TEST(edit_distance) {
    unsigned long seed = 12345;
    char a[129], b[129];
    for (int run = 0; run < 100000; run++) {
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        size_t la = (seed >> 33) % (run % 100 ? 10 : 129), lb = la;
        for (size_t i = 0; i < la; i++) {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            a[i] = "abAB-"[(seed >> 33) % 5];
        }
        /* b: a with a few random edits, or unrelated */
        memcpy(b, a, la);
        seed = seed * 6364136223846793005ul + 1442695040888963407ul;
        for (int e = (int)((seed >> 33) % 5); e > 0; e--) {
            seed = seed * 6364136223846793005ul + 1442695040888963407ul;
            size_t at = lb ? (seed >> 40) % (lb + 1) : 0;
            switch ((seed >> 33) % 4) {
            case 0: if (lb < 128) { memmove(b + at + 1, b + at, lb - at); b[at] = "abAB-"[(seed >> 50) % 5]; lb++; } break;
            case 1: if (at < lb) { memmove(b + at, b + at + 1, lb - at - 1); lb--; } break;
            case 2: if (at < lb) b[at] = "abAB-"[(seed >> 50) % 5]; break;
            default: if (at + 1 < lb) { char t = b[at]; b[at] = b[at + 1]; b[at + 1] = t; } break;
            }
        }
        unsigned k = (unsigned)(run % 4), want = full_osa(a, la, b, lb);
        if (want > k) want = k + 1;
        unsigned got = ann_edits(a, la, b, lb, k);
        ck_assert_msg(got == want, "'%.*s' '%.*s' k=%u: %u, want %u", (int)la, a, (int)lb, b, k, got, want);
    }
    /* Past 128 bytes: never a match. */
    char big[200];
    memset(big, 'a', sizeof big);
    ck_assert_uint_eq(ann_edits(big, 129, big, 129, 2), 3);
}
END_TEST

int main(void) {
    Suite *s = suite_create("annotations");
    TCase *tc = tcase_create("annotations");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, typo_shapes);
    tcase_add_test(tc, known_and_foreign_keys_are_quiet);
    tcase_add_test(tc, namespace_annotations);
    tcase_add_test(tc, typo_beside_a_request);
    tcase_add_test(tc, values_of_other_types);
    tcase_add_test(tc, check_is_bounded);
    tcase_add_test(tc, edit_distance);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
