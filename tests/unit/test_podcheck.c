/* tests/unit/test_podcheck.c - pods with fields of the wrong type
 * (mutate/podcheck.c): every field the engine touches, corrupted one at a
 * time in a pod that asks for Java and the sidecar, is refused with the
 * exact warning, path and reason and no patch; the right types and the
 * nulls the API server accepts go through; a pod asking for nothing is
 * not looked at beyond metadata, annotations and spec. */
#include "base/sbuf.h"
#include "kube/yaml.h"
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const RESOURCES =
    "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
    "metadata: {name: inst, namespace: ns1}\n"
    "spec: {exporter: {endpoint: 'http://otel:4317'}}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
    "metadata: {name: side, namespace: ns1}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  config:\n"
    "    receivers: {otlp: {protocols: {grpc: {}}}}\n"
    "    exporters: {debug: {}}\n"
    "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"
    "---\n"
    "apiVersion: v1\nkind: Namespace\n"
    "metadata: {name: ns2, annotations: {instrumentation.opentelemetry.io/inject-java: ns1/inst}}\n";

/* Every field podcheck knows, right-typed. */
static const char *const POD =
    "apiVersion: v1\nkind: Pod\n"
    "metadata:\n"
    "  name: web\n"
    "  namespace: ns1\n"
    "  uid: pod-uid\n"
    "  annotations:\n"
    "    instrumentation.opentelemetry.io/inject-java: 'true'\n"
    "    sidecar.opentelemetry.io/inject: 'true'\n"
    "    resource.opentelemetry.io/team: shop\n"
    "  labels: {app: web}\n"
    "  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-5d8f, uid: rs-uid}]\n"
    "spec:\n"
    "  nodeName: node-1\n"
    "  shareProcessNamespace: true\n"
    "  containers:\n"
    "  - name: app\n"
    "    image: 'app:1'\n"
    "    imagePullPolicy: IfNotPresent\n"
    "    command: [java, -jar, app.jar]\n"
    "    env:\n"
    "    - {name: A, value: a}\n"
    "    - {name: B, valueFrom: {fieldRef: {fieldPath: metadata.name}}}\n"
    "    envFrom: [{configMapRef: {name: cm}}]\n"
    "    volumeMounts: [{name: data, mountPath: /data}]\n"
    "    securityContext: {runAsNonRoot: true}\n"
    "  initContainers:\n"
    "  - {name: init, image: 'init:1'}\n"
    "  volumes: [{name: data, emptyDir: {}}]\n";

/* ---- JSON pointers into a pod, to corrupt one field -------------------- */

/* The next token of ptr (at a '/') unescaped into tok; the rest in *rest. */
static void token(const char *ptr, char *tok, size_t cap, const char **rest) {
    size_t n = 0;
    const char *p = ptr + 1;
    for (; *p && *p != '/'; p++) {
        char c = *p;
        if (c == '~') c = *++p == '1' ? '/' : '~';
        ck_assert(n + 1 < cap);
        tok[n++] = c;
    }
    tok[n] = 0;
    *rest = p;
}

static json_object *child(json_object *o, const char *tok) {
    if (json_object_is_type(o, json_type_array)) return json_object_array_get_idx(o, (size_t)atoi(tok));
    json_object *v = NULL;
    json_object_object_get_ex(o, tok, &v);
    return v;
}

/* The value at ptr (NULL when missing or null); its parent in *parent. */
static json_object *resolve(json_object *root, const char *ptr, json_object **parent) {
    char tok[512];
    json_object *cur = root, *up = NULL;
    while (*ptr) {
        token(ptr, tok, sizeof tok, &ptr);
        up = cur;
        cur = child(cur, tok);
    }
    if (parent) *parent = up;
    return cur;
}

/* Sets the value at ptr to the JSON text json, or removes it (json NULL). */
static void set_at(json_object *root, const char *ptr, const char *json) {
    const char *last = strrchr(ptr, '/');
    char parent_ptr[512], tok[512];
    snprintf(parent_ptr, sizeof parent_ptr, "%.*s", (int)(last - ptr), ptr);
    json_object *parent = resolve(root, parent_ptr, NULL);
    const char *rest;
    token(last, tok, sizeof tok, &rest);
    json_object *v = json ? json_tokener_parse(json) : NULL;
    ck_assert_msg(!json || v || !strcmp(json, "null"), "bad JSON in the test: %s", json);
    if (json_object_is_type(parent, json_type_array)) {
        ck_assert(json);
        json_object_array_put_idx(parent, (size_t)atoi(tok), v);
    } else if (json) {
        json_object_object_add(parent, tok, v);
    } else {
        json_object_object_del(parent, tok);
    }
}

/* POD (or text) with the value at ptr set to json (NULL: removed), as the
 * JSON text the fixture reads (JSON is YAML). */
static char *corrupted(const char *text, const char *ptr, const char *json) {
    kube_yaml_error ye;
    json_object *o = kube_yaml_parse_one(text, strlen(text), &ye);
    ck_assert_msg(o != NULL, "line %d: %s", ye.line, ye.msg);
    if (ptr) set_at(o, ptr, json);
    char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
    return s;
}

/* ---- the cases --------------------------------------------------------- */

typedef struct bad_case {
    const char *ptr;    /* the field corrupted */
    const char *json;   /* its new value; NULL removes it */
    const char *path;   /* what the engine names */
    const char *reason;
    bool holder;        /* invalid_at is the holding object (missing or null) */
    const char *at;     /* where invalid_at points, when not at ptr */
} bad_case;

static const bad_case BAD[] = {
    {"/metadata", "[]", "metadata", "expected an object, got a list", false, NULL},
    {"/metadata/name", "5", "metadata.name", "expected a string, got a number (quote it: \"5\")", false, NULL},
    {"/metadata/namespace", "true", "metadata.namespace", "expected a string, got a boolean (quote it: \"true\")",
     false, NULL},
    {"/metadata/uid", "{}", "metadata.uid", "expected a string, got an object", false, NULL},
    {"/metadata/annotations", "[\"a\"]", "metadata.annotations", "expected a map of strings, got a list", false, NULL},
    {"/metadata/annotations/instrumentation.opentelemetry.io~1inject-java", "true",
     "metadata.annotations.instrumentation.opentelemetry.io/inject-java",
     "expected a string, got a boolean (quote it: \"true\")", false, NULL},
    {"/metadata/annotations/resource.opentelemetry.io~1team", "1.5",
     "metadata.annotations.resource.opentelemetry.io/team", "expected a string, got a number (quote it)", false, NULL},
    {"/metadata/labels", "\"app=web\"", "metadata.labels", "expected a map of strings, got a string", false, NULL},
    {"/metadata/labels/app", "3", "metadata.labels.app", "expected a string, got a number (quote it: \"3\")", false, NULL},
    {"/metadata/labels/app", "[]", "metadata.labels.app", "expected a string, got a list", false, NULL},
    {"/metadata/ownerReferences", "{}", "metadata.ownerReferences", "expected a list, got an object", false, NULL},
    {"/metadata/ownerReferences/0", "\"web\"", "metadata.ownerReferences[0]", "expected an object, got a string",
     false, NULL},
    {"/metadata/ownerReferences/0", "null", "metadata.ownerReferences[0]", "expected an object, got null", true, NULL},
    {"/metadata/ownerReferences/0/kind", "1", "metadata.ownerReferences[0].kind",
     "expected a string, got a number (quote it: \"1\")", false, NULL},
    {"/metadata/ownerReferences/0/name", "[]", "metadata.ownerReferences[0].name", "expected a string, got a list",
     false, NULL},
    {"/metadata/ownerReferences/0/uid", "false", "metadata.ownerReferences[0].uid",
     "expected a string, got a boolean (quote it: \"false\")", false, NULL},
    {"/spec", "[]", "spec", "expected an object, got a list", false, NULL},
    {"/spec", NULL, "spec", "required, not set", true, NULL},
    {"/spec", "null", "spec", "required, not set", true, NULL},
    {"/spec/nodeName", "1", "spec.nodeName", "expected a string, got a number (quote it: \"1\")", false, NULL},
    {"/spec/shareProcessNamespace", "\"true\"", "spec.shareProcessNamespace", "expected a boolean, got a string",
     false, NULL},
    {"/spec/containers", "{\"name\":\"app\",\"image\":\"app:1\"}", "spec.containers", "expected a list, got an object",
     false, NULL},
    {"/spec/containers/0", "null", "spec.containers[0]", "expected an object, got null", true, NULL},
    {"/spec/containers/0", "\"app\"", "spec.containers[0]", "expected an object, got a string", false, NULL},
    {"/spec/containers/0/name", NULL, "spec.containers[0].name", "required, not set", true, NULL},
    {"/spec/containers/0/name", "null", "spec.containers[0].name", "required, not set", true, NULL},
    {"/spec/containers/0/name", "7", "spec.containers[0].name", "expected a string, got a number (quote it: \"7\")",
     false, NULL},
    {"/spec/containers/0/image", "1.0", "spec.containers[0].image", "expected a string, got a number (quote it)",
     false, NULL},
    {"/spec/containers/0/imagePullPolicy", "[]", "spec.containers[0].imagePullPolicy",
     "expected a string, got a list", false, NULL},
    {"/spec/containers/0/command", "\"java -jar app.jar\"", "spec.containers[0].command",
     "expected a list, got a string", false, NULL},
    {"/spec/containers/0/command/1", "3", "spec.containers[0].command[1]",
     "expected a string, got a number (quote it: \"3\")", false, NULL},
    {"/spec/containers/0/env", "{\"A\":\"a\"}", "spec.containers[0].env", "expected a list, got an object", false, NULL},
    {"/spec/containers/0/env/0", "\"A=a\"", "spec.containers[0].env[0]", "expected an object, got a string", false, NULL},
    {"/spec/containers/0/env/1", "null", "spec.containers[0].env[1]", "expected an object, got null", true, NULL},
    {"/spec/containers/0/env/0/name", NULL, "spec.containers[0].env[0].name", "required, not set", true, NULL},
    {"/spec/containers/0/env/1/name", "5", "spec.containers[0].env[1].name",
     "expected a string, got a number (quote it: \"5\")", false, NULL},
    {"/spec/containers/0/env/0/value", "8080", "spec.containers[0].env[0].value",
     "expected a string, got a number (quote it: \"8080\")", false, NULL},
    {"/spec/containers/0/env/0/value", "{}", "spec.containers[0].env[0].value", "expected a string, got an object",
     false, NULL},
    {"/spec/containers/0/env/1/valueFrom", "\"metadata.name\"", "spec.containers[0].env[1].valueFrom",
     "expected an object, got a string", false, NULL},
    {"/spec/containers/0/envFrom", "{}", "spec.containers[0].envFrom", "expected a list, got an object", false, NULL},
    {"/spec/containers/0/envFrom/0", "\"cm\"", "spec.containers[0].envFrom[0]", "expected an object, got a string",
     false, NULL},
    {"/spec/containers/0/volumeMounts", "\"data:/data\"", "spec.containers[0].volumeMounts",
     "expected a list, got a string", false, NULL},
    {"/spec/containers/0/volumeMounts/0", "[]", "spec.containers[0].volumeMounts[0]", "expected an object, got a list",
     false, NULL},
    {"/spec/containers/0/volumeMounts/0/name", NULL, "spec.containers[0].volumeMounts[0].name", "required, not set",
     true, NULL},
    {"/spec/containers/0/volumeMounts/0/mountPath", NULL, "spec.containers[0].volumeMounts[0].mountPath",
     "required, not set", true, NULL},
    {"/spec/containers/0/volumeMounts/0/mountPath", "1", "spec.containers[0].volumeMounts[0].mountPath",
     "expected a string, got a number (quote it: \"1\")", false, NULL},
    {"/spec/containers/0/securityContext", "true", "spec.containers[0].securityContext",
     "expected an object, got a boolean", false, NULL},
    {"/spec/initContainers", "{\"name\":\"init\"}", "spec.initContainers", "expected a list, got an object", false, NULL},
    {"/spec/initContainers/0/name", "null", "spec.initContainers[0].name", "required, not set", true, NULL},
    {"/spec/initContainers/0/env", "[1]", "spec.initContainers[0].env[0]", "expected an object, got a number", false,
     "/spec/initContainers/0/env/0"},
    {"/spec/initContainers/0/volumeMounts", "[{\"name\":\"data\"}]", "spec.initContainers[0].volumeMounts[0].mountPath",
     "required, not set", false, "/spec/initContainers/0/volumeMounts/0"},
    {"/spec/volumes", "{\"data\":{}}", "spec.volumes", "expected a list, got an object", false, NULL},
    {"/spec/volumes/0", "[]", "spec.volumes[0]", "expected an object, got a list", false, NULL},
    {"/spec/volumes/0/name", NULL, "spec.volumes[0].name", "required, not set", true, NULL},
    {"/spec/volumes/0/name", "false", "spec.volumes[0].name",
     "expected a string, got a boolean (quote it: \"false\")", false, NULL},
};

/* The value invalid_at must be: the corrupted one, or what holds it. */
static json_object *expected_at(fx_run *r, const bad_case *c) {
    json_object *parent = NULL, *v = resolve(r->pod, c->at ? c->at : c->ptr, &parent);
    return c->holder ? parent : v;
}

static void expect_refused(fx_run *r, const char *path, const char *reason, const char *what) {
    char want[1024];
    snprintf(want, sizeof want, "%s: %s; nothing injected", path, reason);
    ck_assert_msg(r->res.nwarnings == 1, "%s: %zu warnings: %s", what, r->res.nwarnings, r->warnings);
    ck_assert_msg(!strcmp(r->warnings, want), "%s: warning\n  got  %s\n  want %s", what, r->warnings, want);
    ck_assert_str_eq(r->res.invalid_path, path);
    ck_assert_str_eq(r->res.invalid_reason, reason);
    ck_assert_uint_eq(r->res.skips, 1u << MUTATE_SKIP_MALFORMED);
    ck_assert_int_eq(r->res.limit, MUTATE_LIMIT_NONE);
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    ck_assert_uint_eq(r->res.injected, 0);
    ck_assert(!r->res.sidecar);
    ck_assert_ptr_eq(r->res.pod, r->pod); /* the request itself, untouched */
}

START_TEST(every_field_wrong_type) {
    fx_resources(RESOURCES);
    const bad_case *c = &BAD[_i];
    char *text = corrupted(POD, c->ptr, c->json);
    fx_run *r = fx_mutate("podcheck-bad", text, "ns1");
    char what[256];
    snprintf(what, sizeof what, "%s = %s", c->ptr, c->json ? c->json : "(removed)");
    expect_refused(r, c->path, c->reason, what);
    ck_assert_msg(r->res.invalid_at == expected_at(r, c) && r->res.invalid_at, "%s: invalid_at", what);
    fx_free(r);
    free(text);
}
END_TEST

static void expect_injected(const char *name, char *text, const char *ns) {
    fx_run *r = fx_mutate(name, text, ns);
    ck_assert_msg(r->res.invalid_path == NULL, "%s: refused: %s", name, r->warnings);
    ck_assert_ptr_null(r->res.invalid_reason);
    ck_assert_ptr_null(r->res.invalid_at);
    ck_assert_msg(r->res.injected & MUTATE_BIT(MUTATE_JAVA), "%s: Java not injected: %s", name, r->warnings);
    ck_assert(!(r->res.skips & (1u << MUTATE_SKIP_MALFORMED)));
    fx_free(r);
    free(text);
}

/* The nulls the API server reads as absent (or "" for a map value or a
 * string item) go through, where a number at the same place is refused:
 * no field of the table takes a number. */
START_TEST(nulls_pass_numbers_do_not) {
    static const char *const optional[] = {
        "/metadata/name", "/metadata/namespace", "/metadata/uid", "/metadata/labels", "/metadata/labels/app",
        "/metadata/annotations/resource.opentelemetry.io~1team", "/metadata/ownerReferences",
        "/metadata/ownerReferences/0/kind", "/spec/nodeName", "/spec/shareProcessNamespace", "/spec/initContainers",
        "/spec/volumes", "/spec/containers/0/image", "/spec/containers/0/imagePullPolicy", "/spec/containers/0/command",
        "/spec/containers/0/command/1", "/spec/containers/0/env", "/spec/containers/0/env/0/value",
        "/spec/containers/0/env/1/valueFrom", "/spec/containers/0/envFrom", "/spec/containers/0/volumeMounts",
        "/spec/containers/0/securityContext",
    };
    fx_resources(RESOURCES);
    for (size_t i = 0; i < sizeof optional / sizeof *optional; i++) {
        expect_injected(optional[i], corrupted(POD, optional[i], "null"), "ns1");
        char *text = corrupted(POD, optional[i], "1");
        fx_run *r = fx_mutate(optional[i], text, "ns1");
        ck_assert_msg(r->res.invalid_path && !json_object_array_length(r->res.patch), "%s = 1: not refused",
                      optional[i]);
        fx_free(r);
        free(text);
    }
}
END_TEST

/* The line between what is checked and what is not: the fields the engine
 * touches are, the others are the API server's business. The pod of the
 * table, right-typed, gets everything it asks for without a word. */
START_TEST(only_what_the_engine_touches) {
    fx_resources(RESOURCES);
    char *text = corrupted(POD, NULL, NULL);
    fx_run *r = fx_mutate("podcheck-ok", text, "ns1");
    ck_assert_str_eq(r->warnings, "");
    ck_assert(r->res.sidecar && (r->res.injected & MUTATE_BIT(MUTATE_JAVA)));
    fx_free(r);
    free(text);
    expect_injected("no metadata.uid", corrupted(POD, "/metadata/uid", NULL), "ns1");
    expect_injected("shareProcessNamespace false", corrupted(POD, "/spec/shareProcessNamespace", "false"), "ns1");
    expect_injected("ports", corrupted(POD, "/spec/containers/0/ports", "\"8080\""), "ns1");
    expect_injected("args", corrupted(POD, "/spec/containers/0/args", "{}"), "ns1");
    expect_injected("resources", corrupted(POD, "/spec/containers/0/resources", "[]"), "ns1");
    text = corrupted(POD, "/spec/containers/0/command", "{}");
    r = fx_mutate("command", text, "ns1");
    expect_refused(r, "spec.containers[0].command", "expected a list, got an object", "command");
    fx_free(r);
    free(text);
}
END_TEST

/* The two reports of issue 12, as `inject` saw them: with `containers:`
 * written as a map the app container was replaced by the collector (which
 * then got the Java agent); with `env:` as a map the user's variables were
 * dropped. */
START_TEST(repro_containers_map_with_sidecar) {
    fx_resources(RESOURCES);
    fx_run *r = fx_mutate("containers-map",
                          "apiVersion: v1\nkind: Pod\n"
                          "metadata:\n  name: web\n  annotations:\n"
                          "    instrumentation.opentelemetry.io/inject-java: 'true'\n"
                          "    sidecar.opentelemetry.io/inject: 'true'\n"
                          "spec:\n  containers:\n    name: app\n    image: 'app:1'\n",
                          "ns1");
    expect_refused(r, "spec.containers", "expected a list, got an object", "containers map");
    fx_free(r);
}
END_TEST

START_TEST(repro_env_map) {
    fx_resources(RESOURCES);
    fx_run *r = fx_mutate("env-map",
                          "apiVersion: v1\nkind: Pod\n"
                          "metadata:\n  name: web\n  annotations: {instrumentation.opentelemetry.io/inject-java: 'true'}\n"
                          "spec:\n  containers:\n  - name: app\n    image: 'app:1'\n"
                          "    env:\n      DB_HOST: db\n      DB_PORT: '5432'\n",
                          "ns1");
    expect_refused(r, "spec.containers[0].env", "expected a list, got an object", "env map");
    fx_free(r);
}
END_TEST

/* YAML's unquoted true is a boolean: before, the pod silently asked for
 * nothing; now it is told to quote it, for the sidecar key too. */
START_TEST(unquoted_opt_in) {
    fx_resources(RESOURCES);
    fx_run *r = fx_mutate("unquoted-java",
                          "apiVersion: v1\nkind: Pod\n"
                          "metadata:\n  name: web\n  annotations: {instrumentation.opentelemetry.io/inject-java: true}\n"
                          "spec:\n  containers: [{name: app, image: 'app:1'}]\n",
                          "ns1");
    expect_refused(r, "metadata.annotations.instrumentation.opentelemetry.io/inject-java",
                   "expected a string, got a boolean (quote it: \"true\")", "unquoted java");
    fx_free(r);
    r = fx_mutate("unquoted-sidecar",
                  "apiVersion: v1\nkind: Pod\n"
                  "metadata:\n  name: web\n  annotations: {sidecar.opentelemetry.io/inject: no}\n"
                  "spec:\n  containers: [{name: app, image: 'app:1'}]\n",
                  "ns1");
    expect_refused(r, "metadata.annotations.sidecar.opentelemetry.io/inject",
                   "expected a string, got a boolean (quote it: \"false\")", "unquoted sidecar");
    fx_free(r);
}
END_TEST

/* A pod asking for nothing is not walked: its env map is the API server's
 * to refuse. The same pod asking for Java (here through its namespace) is
 * refused. Metadata, annotations and spec are looked at whatever the pod
 * asks, since the opt-in test reads them. */
START_TEST(unasked_pods_are_not_checked) {
    fx_resources(RESOURCES);
    static const char *const env_map =
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  labels: [app]\n"
        "spec:\n  containers:\n  - name: app\n    env: {A: a}\n";
    fx_run *r = fx_mutate("unasked", env_map, "ns1");
    ck_assert_str_eq(r->warnings, "");
    ck_assert_ptr_null(r->res.invalid_path);
    ck_assert_uint_eq(r->res.skips, 0);
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_free(r);
    r = fx_mutate("asked-by-namespace", env_map, "ns2");
    expect_refused(r, "metadata.labels", "expected a map of strings, got a list", "asked by namespace");
    fx_free(r);

    static const char *const shapes[][3] = {
        {"apiVersion: v1\nkind: Pod\nmetadata: [web]\nspec: {containers: [{name: app}]}\n", "metadata",
         "expected an object, got a list"},
        {"apiVersion: v1\nkind: Pod\nmetadata: {name: web, annotations: [a]}\nspec: {containers: [{name: app}]}\n",
         "metadata.annotations", "expected a map of strings, got a list"},
        {"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: [containers]\n", "spec",
         "expected an object, got a list"},
        {"apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n", "spec", "required, not set"},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++) {
        r = fx_mutate("shape", shapes[i][0], "ns1");
        expect_refused(r, shapes[i][1], shapes[i][2], shapes[i][0]);
        fx_free(r);
    }
    /* Null metadata and annotations are absent: nothing asked, nothing said. */
    r = fx_mutate("null-metadata", "apiVersion: v1\nkind: Pod\nmetadata: ~\nspec: {containers: [{name: app}]}\n", "ns1");
    ck_assert_str_eq(r->warnings, "");
    ck_assert_ptr_null(r->res.invalid_path);
    fx_free(r);
}
END_TEST

/* Bounds come first: they only count, so a pod past one is refused
 * without the walk. */
START_TEST(bounds_before_types) {
    fx_resources(RESOURCES);
    sbuf b = SBUF_INIT;
    sbuf_puts(&b, "{apiVersion: v1, kind: Pod, metadata: {name: web, annotations: "
                  "{instrumentation.opentelemetry.io/inject-java: 'true'}}, spec: {containers: [{name: c0, env: {A: a}}");
    for (int i = 1; i <= MUTATE_MAX_CONTAINERS; i++) sbuf_printf(&b, ", {name: c%d}", i);
    sbuf_puts(&b, "]}}");
    char *text = sbuf_take(&b, NULL);
    fx_run *r = fx_mutate("bound-and-type", text, "ns1");
    ck_assert_int_eq(r->res.limit, MUTATE_LIMIT_CONTAINERS);
    ck_assert_ptr_null(r->res.invalid_path);
    ck_assert_uint_eq(r->res.nwarnings, 1);
    fx_free(r);
    free(text);
    /* Within the bound, the same pod is refused for its env. */
    r = fx_mutate("type-within-bounds",
                  "{apiVersion: v1, kind: Pod, metadata: {name: web, annotations: "
                  "{instrumentation.opentelemetry.io/inject-java: 'true'}}, spec: {containers: [{name: c0, env: {A: a}}]}}",
                  "ns1");
    expect_refused(r, "spec.containers[0].env", "expected a list, got an object", "within bounds");
    fx_free(r);
}
END_TEST

/* A key past 320 bytes is cut, at a character boundary, in the path. */
START_TEST(long_keys_are_cut) {
    fx_resources(RESOURCES);
    sbuf k = SBUF_INIT;
    sbuf_putc(&k, 'x');
    for (int i = 0; i < 200; i++) sbuf_puts(&k, "\xc3\xa9");
    char *key = sbuf_take(&k, NULL);
    sbuf b = SBUF_INIT;
    sbuf_printf(&b, "{apiVersion: v1, kind: Pod, metadata: {name: web, annotations: "
                    "{instrumentation.opentelemetry.io/inject-java: 'true'}, labels: {'%s': 1}}, "
                    "spec: {containers: [{name: app}]}}", key);
    char *text = sbuf_take(&b, NULL);
    fx_run *r = fx_mutate("long-key", text, "ns1");
    /* 'x' and 159 two-byte characters: 319 bytes, the next one would pass 320. */
    sbuf p = SBUF_INIT;
    sbuf_puts(&p, "metadata.labels.x");
    for (int i = 0; i < 159; i++) sbuf_puts(&p, "\xc3\xa9");
    sbuf_puts(&p, "...");
    char *path = sbuf_take(&p, NULL);
    expect_refused(r, path, "expected a string, got a number (quote it: \"1\")", "long key");
    fx_free(r);
    free(path);
    free(text);
    free(key);
}
END_TEST

int main(void) {
    Suite *s = suite_create("podcheck");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_loop_test(tc, every_field_wrong_type, 0, (int)(sizeof BAD / sizeof *BAD));
    tcase_add_test(tc, nulls_pass_numbers_do_not);
    tcase_add_test(tc, only_what_the_engine_touches);
    tcase_add_test(tc, repro_containers_map_with_sidecar);
    tcase_add_test(tc, repro_env_map);
    tcase_add_test(tc, unquoted_opt_in);
    tcase_add_test(tc, unasked_pods_are_not_checked);
    tcase_add_test(tc, bounds_before_types);
    tcase_add_test(tc, long_keys_are_cut);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
