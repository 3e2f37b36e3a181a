/* tests/fuzz/fuzz_engine.c - libFuzzer target for the mutation engine.
 *
 * The first input byte b picks how the rest becomes pods:
 *   b % 3 == 0  the rest is JSON (json_tokener), used as the pod;
 *   b % 3 == 1  the rest is split on '\n' into fields that fill a pod of a
 *               fixed shape (annotations, containers, env, images; see
 *               shaped_pod below);
 *   b % 3 == 2  the rest is YAML (kube_yaml_parse, handed exactly the input
 *               bytes so overreads show), every document used as a pod.
 * (b / 3) % 3 picks the request namespace (default, other, void) and
 * (b / 9) % 2 the Python mode.
 *
 * Every pod is mutated with multi-instrumentation and native sidecars both
 * on and off, against a fixed store built once from RESOURCES, and these
 * must hold (abort() otherwise):
 *   - the patch is an array of {op: add|remove|replace, path: "/..."} with
 *     a value for add/replace, no path equal to /spec or /metadata;
 *   - jtext(patch) parses back to an object equal to the patch;
 *   - applying the patch to the input pod (an independent RFC 6902 applier
 *     below) yields the result pod;
 *   - mutating the result pod again gives an empty patch (idempotency);
 *   - the same request through the mutation cache (one for the whole run,
 *     as a server loop keeps one, so what an earlier input left in it is
 *     served to later ones) gives the same return, patch and warnings;
 *   - malformed pods (mutate/podcheck.c): the engine refuses a pod as
 *     malformed (invalid_path) exactly when the independent reading of
 *     core/v1's types below (pod_well_typed) says so: always for a wrong
 *     metadata, annotations or spec, and for the other fields when the
 *     pod asks for something and is within the bounds; a refusal is rc -1,
 *     no patch, one warning "PATH: REASON; nothing injected" and the
 *     malformed skip alone; a pod that asks and is mutated comes out well
 *     typed too;
 *   - a mutation that succeeds never met a value of the wrong type in any
 *     reader of base/json.h: built with -DBASE_JSON_TRAP, every such read is
 *     reported to this target, so "podcheck passed, yet the engine took a
 *     wrong type for absent" is a failure, not a silent skip.
 *
 * Inputs whose pod holds a NaN are skipped: NaN is not JSON, the API server
 * never sends it, and it is unequal to itself, which would fail every
 * equality above for reasons that are not the engine's. Strings that are not
 * valid UTF-8 are kept (the engine must cope with them), but since
 * jtext writes such bytes as U+FFFD on purpose, the text check
 * applies only to patches that are valid UTF-8. Strings that are not
 * valid UTF-8 are kept (the engine must cope), but jtext writes
 * such bytes as U+FFFD on purpose, so the text-equality check only applies
 * to patches that are valid UTF-8.
 *
 * A pod whose metadata is absent or null and that gets the sidecar (a
 * namespace-level sidecar.opentelemetry.io/inject) gets its label as "add"
 * or "replace /metadata": valid JSON Patch that loses nothing, and the one
 * op on /metadata allowed (admission requests always carry metadata).
 *
 * `make test` replays the seeds (tests/fuzz/corpus) and every input that
 * once failed (tests/fuzz/crashes/engine) once. */
#include "base/json.h"
#include "base/jtext.h"

#include "kube/filesource.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "kube/yaml.h"
#include "mutate/defaults.h"
#include "mutate/mutate.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char RESOURCES[] =
    "apiVersion: v1\nkind: Namespace\n"
    "metadata:\n"
    "  name: other\n"
    "  annotations:\n"
    "    instrumentation.opentelemetry.io/inject-python: 'true'\n"
    "    instrumentation.opentelemetry.io/container-names: app\n"
    "    sidecar.opentelemetry.io/inject: side-other\n"
    "---\n"
    "apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: inst, namespace: default}\n"
    "spec:\n"
    "  exporter:\n"
    "    endpoint: https://otel-collector.default.svc:4317\n"
    "    tls:\n"
    "      secretName: otel-tls\n"
    "      configMapName: otel-ca\n"
    "      ca_file: ca.crt\n"
    "      cert_file: tls.crt\n"
    "      key_file: tls.key\n"
    "  propagators: [tracecontext, baggage, b3, xray]\n"
    "  sampler: {type: parentbased_traceidratio, argument: '0.25'}\n"
    "  resource:\n"
    "    addK8sUIDAttributes: true\n"
    "    resourceAttributes: {environment: dev, team: core, service.namespace: shop}\n"
    "  defaults: {useLabelsForResourceAttributes: true}\n"
    "  imagePullPolicy: IfNotPresent\n"
    "  initContainerSecurityContext: {runAsNonRoot: true, allowPrivilegeEscalation: false}\n"
    "  env:\n"
    "  - {name: OTEL_EXPORTER_OTLP_TIMEOUT, value: '20'}\n"
    "  - name: OTEL_SECRET_TOKEN\n"
    "    valueFrom: {secretKeyRef: {name: token, key: value}}\n"
    "  java:\n"
    "    env: [{name: OTEL_JAVAAGENT_DEBUG, value: 'true'}]\n"
    "    extensions:\n"
    "    - {image: 'example.com/ext-one:1.0', dir: /ext}\n"
    "    - {image: 'example.com/ext-two:2.0', dir: /extensions}\n"
    "    volumeClaimTemplate:\n"
    "      metadata: {labels: {purpose: agent}}\n"
    "      spec:\n"
    "        accessModes: [ReadWriteOnce]\n"
    "        resources: {requests: {storage: 1Gi}}\n"
    "  nodejs:\n"
    "    volumeLimitSize: 500Mi\n"
    "    env: [{name: NODE_OPTIONS, value: --max-old-space-size=512}]\n"
    "  python:\n"
    "    env:\n"
    "    - {name: OTEL_PYTHON_LOG_CORRELATION, value: 'true'}\n"
    "    - {name: PYTHONPATH, value: /opt/custom}\n"
    "  dotnet: {env: [{name: OTEL_DOTNET_AUTO_TRACES_ENABLED, value: 'true'}]}\n"
    "  go: {securityContext: {privileged: true, runAsUser: 0}}\n"
    "  apacheHttpd: {attrs: [{name: ApacheModuleOtelMaxQueueSize, value: '4096'}]}\n"
    "  nginx: {attrs: [{name: NginxModuleOtelMaxQueueSize, value: '4096'}]}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: second, namespace: default}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://otel-collector:4318'}\n"
    "  propagators: [jaeger]\n"
    "  sampler: {type: always_on}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: inst-other, namespace: other}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://collector.other:4318'}\n"
    "  resource: {resourceAttributes: {k8s.cluster.name: fuzz}}\n"
    "  python: {image: 'example.com/python-agent:9'}\n"
    "  java: {volumeLimitSize: 300Mi}\n"
    "---\n"
    "apiVersion: v1\nkind: Secret\n"
    "metadata: {name: otel-tls, namespace: default}\n"
    "data: {tls.crt: Y2VydA==, tls.key: a2V5}\n"
    "---\n"
    "apiVersion: v1\nkind: ConfigMap\n"
    "metadata: {name: otel-ca, namespace: default}\n"
    "data: {ca.crt: ca}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1beta1\n"
    "kind: OpenTelemetryCollector\n"
    "metadata: {name: sidecar, namespace: default}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  image: 'example.com/collector:1'\n"
    "  env: [{name: GOGC, value: '80'}]\n"
    "  resources: {limits: {cpu: 200m, memory: 128Mi}}\n"
    "  ports: [{name: custom, port: 9999}]\n"
    "  volumeMounts: [{name: extra-vol, mountPath: /extra}]\n"
    "  volumes: [{name: extra-vol, emptyDir: {}}]\n"
    "  configmaps: [{name: collector-extra, mountpath: /etc/extra}]\n"
    "  livenessProbe: {initialDelaySeconds: 5}\n"
    "  config:\n"
    "    receivers:\n"
    "      otlp: {protocols: {grpc: {}, http: {}}}\n"
    "      jaeger: {protocols: {thrift_compact: {}}}\n"
    "    processors: {batch: {}}\n"
    "    exporters: {debug: {}, otlp: {endpoint: 'tempo:4317'}}\n"
    "    extensions: {health_check: {}, pprof: {}}\n"
    "    service:\n"
    "      extensions: [health_check, pprof]\n"
    "      pipelines:\n"
    "        traces: {receivers: [otlp, jaeger], processors: [batch], exporters: [debug, otlp]}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1beta1\n"
    "kind: OpenTelemetryCollector\n"
    "metadata: {name: deploy, namespace: default}\n"
    "spec:\n"
    "  mode: deployment\n"
    "  config:\n"
    "    receivers: {otlp: {protocols: {grpc: {}}}}\n"
    "    exporters: {debug: {}}\n"
    "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: OpenTelemetryCollector\n"
    "metadata: {name: side-other, namespace: other}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  config: |\n"
    "    receivers:\n"
    "      zipkin:\n"
    "    exporters:\n"
    "      debug:\n"
    "    service:\n"
    "      pipelines:\n"
    "        traces: {receivers: [zipkin], exporters: [debug]}\n"
    "---\n"
    "apiVersion: apps/v1\nkind: ReplicaSet\n"
    "metadata:\n"
    "  name: web-7b5d8f6c9\n"
    "  namespace: default\n"
    "  uid: rs-uid\n"
    "  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: dep-uid, controller: true}]\n"
    "---\n"
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default, uid: dep-uid}\n"
    "---\n"
    "apiVersion: batch/v1\nkind: Job\n"
    "metadata:\n"
    "  name: nightly-28000000\n"
    "  namespace: other\n"
    "  uid: job-uid\n"
    "  ownerReferences: [{apiVersion: batch/v1, kind: CronJob, name: nightly, uid: cj-uid}]\n"
    "---\n"
    "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: other, uid: cj-uid}\n";

static kube_store *store;
static mutate_settings cfg;
static mutate_cache *cache;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    mutate_settings_init(&cfg);
    store = kube_store_new();
    json_object **objs = NULL;
    size_t n = 0;
    char err[512];
    if (kube_manifest_objects("fuzz-resources.yaml", RESOURCES, strlen(RESOURCES), &MUTATE_PREPARE(&cfg), "default", NULL, &objs, &n,
                              err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_engine: resources: %s\n", err);
        abort();
    }
    kube_store_set_layer(store, KUBE_LAYER_FILES, objs, n);
    cache = mutate_cache_new(0, 0);
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static json_object *get(json_object *o, const char *k) {
    json_object *v = NULL;
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static bool has_nan(json_object *v, int depth) {
    if (depth > 2000) return false;
    switch (json_object_get_type(v)) {
    case json_type_double: return isnan(json_object_get_double(v));
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (has_nan(json_object_array_get_idx(v, i), depth + 1)) return true;
        return false;
    case json_type_object: {
        json_object_object_foreach(v, k, val) {
            (void)k;
            if (has_nan(val, depth + 1)) return true;
        }
        return false;
    }
    default: return false;
    }
}

/* True when every string and key in v is valid UTF-8 (no overlong forms,
 * no surrogates, nothing above U+10FFFF); written independently of
 * utf8_len on purpose. */
static bool utf8_ok(const char *p, size_t n) {
    static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)p[i];
        if (c < 0x80) { i++; continue; }
        /* F5..FF never start a sequence (they would pass 0x10FFFF, or are not UTF-8 at all). */
        size_t len = c >= 0xF5 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
        if (!len || len > n - i) return false;
        uint32_t cp = c & (0xFF >> (len + 1));
        for (size_t k = 1; k < len; k++) {
            if (((unsigned char)p[i + k] & 0xC0) != 0x80) return false;
            cp = (cp << 6) | ((unsigned char)p[i + k] & 0x3F);
        }
        if (cp < min[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

static bool all_utf8(json_object *v, int depth) {
    if (depth > 2000) return true;
    switch (json_object_get_type(v)) {
    case json_type_string: return utf8_ok(json_object_get_string(v), (size_t)json_object_get_string_len(v));
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (!all_utf8(json_object_array_get_idx(v, i), depth + 1)) return false;
        return true;
    case json_type_object: {
        json_object_object_foreach(v, k, val) {
            if (!utf8_ok(k, strlen(k)) || !all_utf8(val, depth + 1)) return false;
        }
        return true;
    }
    default: return true;
    }
}

static const char *context_pod;
static const char *context_what;

__attribute__((noreturn)) static void violation(const char *what, json_object *patch, const char *detail) {
    fprintf(stderr, "\nfuzz_engine: invariant violated: %s (%s)\n", what, context_what);
    if (detail) fprintf(stderr, "detail: %s\n", detail);
    if (context_pod) fprintf(stderr, "pod: %s\n", context_pod);
    if (patch) {
        char *t = jtext(patch, NULL);
        fprintf(stderr, "patch: %s\n", t);
        free(t);
    }
    abort();
}

/* ---- an independent RFC 6902 applier (add, remove, replace) -------------- */

/* Next reference token of ptr (after its leading '/'), unescaped into tok. */
static const char *next_token(const char *p, char *tok, size_t cap) {
    size_t n = 0;
    p++; /* '/' */
    while (*p && *p != '/') {
        char c = *p++;
        if (c == '~') {
            if (*p == '0') c = '~';
            else if (*p == '1') c = '/';
            else return NULL;
            p++;
        }
        if (n + 1 >= cap) return NULL;
        tok[n++] = c;
    }
    tok[n] = 0;
    return p;
}

static bool parse_index(const char *tok, size_t *out) {
    if (!*tok || (tok[0] == '0' && tok[1])) return false;
    size_t v = 0;
    for (const char *p = tok; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + (size_t)(*p - '0');
        if (v > (1u << 30)) return false;
    }
    *out = v;
    return true;
}

static void array_insert(json_object *arr, size_t idx, json_object *v) {
    size_t n = json_object_array_length(arr);
    json_object *tmp = json_object_new_array();
    for (size_t i = idx; i < n; i++) json_object_array_add(tmp, json_object_get(json_object_array_get_idx(arr, i)));
    if (idx < n) json_object_array_del_idx(arr, idx, n - idx);
    json_object_array_add(arr, v);
    for (size_t i = 0; i < n - idx; i++) json_object_array_add(arr, json_object_get(json_object_array_get_idx(tmp, i)));
    json_object_put(tmp);
}

/* Applies one op to *doc; returns false when the op does not apply. */
static bool apply_op(json_object **doc, const char *op, const char *path, json_object *value) {
    char tok[4096];
    json_object *parent = NULL, *cur = *doc;
    const char *p = path;
    if (!*p) return false; /* whole-document ops are not expected */
    /* Walk to the parent of the last token. */
    for (;;) {
        const char *nx = next_token(p, tok, sizeof tok);
        if (!nx) return false;
        if (!*nx) break;
        json_object *child = NULL;
        if (json_object_is_type(cur, json_type_object)) {
            if (!json_object_object_get_ex(cur, tok, &child)) return false;
        } else if (json_object_is_type(cur, json_type_array)) {
            size_t i;
            if (!parse_index(tok, &i) || i >= json_object_array_length(cur)) return false;
            child = json_object_array_get_idx(cur, i);
        } else {
            return false;
        }
        cur = child;
        p = nx;
    }
    parent = cur;
    json_object *copy = NULL;
    if (value) copy = jcopy(value);
    bool add = !strcmp(op, "add"), rem = !strcmp(op, "remove"), rep = !strcmp(op, "replace");
    if (json_object_is_type(parent, json_type_object)) {
        bool exists = json_object_object_get_ex(parent, tok, NULL);
        if ((rem || rep) && !exists) goto fail;
        if (rem) json_object_object_del(parent, tok);
        else json_object_object_add(parent, tok, copy);
        return true;
    }
    if (json_object_is_type(parent, json_type_array)) {
        size_t n = json_object_array_length(parent), i;
        if (add && !strcmp(tok, "-")) {
            json_object_array_add(parent, copy);
            return true;
        }
        if (!parse_index(tok, &i)) goto fail;
        if (add) {
            if (i > n) goto fail;
            array_insert(parent, i, copy);
            return true;
        }
        if (i >= n) goto fail;
        if (rem) {
            json_object_array_del_idx(parent, i, 1);
            return true;
        }
        json_object_array_put_idx(parent, i, copy);
        return true;
    }
fail:
    json_object_put(copy);
    return false;
}

/* ---- invariants ---------------------------------------------------------- */

static void check_patch(json_object *pod_in, const mutate_result *res) {
    json_object *patch = res->patch;
    if (!json_object_is_type(patch, json_type_array)) violation("patch is not an array", NULL, NULL);
    size_t n = json_object_array_length(patch);
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(patch, i);
        if (!json_object_is_type(o, json_type_object)) violation("patch op is not an object", patch, NULL);
        json_object *op = get(o, "op"), *path = get(o, "path");
        if (!json_object_is_type(op, json_type_string) || !json_object_is_type(path, json_type_string))
            violation("patch op without op or path", patch, NULL);
        const char *ops = json_object_get_string(op), *ps = json_object_get_string(path);
        if (strcmp(ops, "add") && strcmp(ops, "remove") && strcmp(ops, "replace"))
            violation("patch op is not add/remove/replace", patch, ops);
        if (ps[0] != '/') violation("patch path does not start with /", patch, ps);
        /* A pod without metadata (absent or null) may get it whole: there
         * is nothing in it to lose. */
        bool new_metadata = (!strcmp(ops, "add") || !strcmp(ops, "replace")) && !strcmp(ps, "/metadata") &&
                            !get(pod_in, "metadata");
        if (!strcmp(ps, "/spec") || (!strcmp(ps, "/metadata") && !new_metadata))
            violation("patch path is /spec or /metadata", patch, ps);
        if (strcmp(ops, "remove") && !json_object_object_get_ex(o, "value", NULL))
            violation("add/replace without a value", patch, ps);
    }
    /* Our serialisation reads back as the same patch. */
    size_t len = 0;
    char *text = jtext(patch, &len);
    if (strlen(text) != len) violation("jtext length mismatch", patch, NULL);
    json_tokener *tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH * 8);
    json_object *back = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    if (e != json_tokener_success || end != len) violation("patch text does not parse", patch, text);
    /* Bytes that are not UTF-8 are written as U+FFFD on purpose (the output
     * must be valid JSON whatever came in); only then may the text differ. */
    if (!json_object_equal(back, patch) && all_utf8(patch, 0))
        violation("patch text parses to a different patch", patch, text);
    json_object_put(back);
    free(text);

    /* Applying the patch to the request pod gives the result pod. */
    json_object *doc = NULL;
    if (json_object_deep_copy(pod_in, &doc, NULL) != 0) abort();
    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_array_get_idx(patch, i);
        json_object *v = NULL;
        json_object_object_get_ex(o, "value", &v);
        if (!apply_op(&doc, json_object_get_string(get(o, "op")), json_object_get_string(get(o, "path")), v)) {
            char d[64];
            snprintf(d, sizeof d, "op #%zu does not apply", i);
            json_object_put(doc);
            violation("patch does not apply to the pod", patch, d);
        }
    }
    if (!json_object_equal(doc, res->pod)) {
        char *got = jtext(doc, NULL), *want = jtext(res->pod, NULL);
        fprintf(stderr, "applied: %s\nresult:  %s\n", got, want);
        free(got);
        free(want);
        violation("patched pod differs from the result pod", patch, NULL);
    }
    json_object_put(doc);
}

static const char *const NAMESPACES[] = {"default", "other", "void"};

/* ---- wrong-type reads, reported by base/json.c (-DBASE_JSON_TRAP) -------- */

static size_t trap_hits;
static char trap_first[256];

static void on_trap(json_object *holder, const char *key, json_object *value) {
    if (!trap_hits++)
        snprintf(trap_first, sizeof trap_first, "%.100s of %s read, found %s", key ? key : "(length)",
                 json_type_to_name(json_object_get_type(holder)), json_type_to_name(json_object_get_type(value)));
}

static int mutate_trapped(const mutate_request *req, mutate_result *res) {
    trap_hits = 0;
    base_json_trap = on_trap;
    int rc = mutate_pod(req, res);
    base_json_trap = NULL;
    return rc;
}

/* ---- core/v1's types for what the engine touches, read independently ---- */

static bool is(json_object *v, json_type t) { return json_object_get_type(v) == t; }
/* An optional field: absent, null, or of type t. */
static bool opt(json_object *o, const char *k, json_type t) { return !get(o, k) || is(get(o, k), t); }
static bool req_str(json_object *o, const char *k) { return is(get(o, k), json_type_string); }

static bool string_map(json_object *m) {
    if (!m) return true;
    if (!is(m, json_type_object)) return false;
    json_object_object_foreach(m, k, v) {
        (void)k;
        if (v && !is(v, json_type_string)) return false;
    }
    return true;
}

static bool strings(json_object *l) {
    if (!l) return true;
    if (!is(l, json_type_array)) return false;
    for (size_t i = 0; i < json_object_array_length(l); i++) {
        json_object *e = json_object_array_get_idx(l, i);
        if (e && !is(e, json_type_string)) return false;
    }
    return true;
}

/* Absent, null, or a list of objects each passing item. */
static bool objects(json_object *l, bool (*item)(json_object *)) {
    if (!l) return true;
    if (!is(l, json_type_array)) return false;
    for (size_t i = 0; i < json_object_array_length(l); i++) {
        json_object *e = json_object_array_get_idx(l, i);
        if (!is(e, json_type_object) || (item && !item(e))) return false;
    }
    return true;
}

static bool env_var_ok(json_object *e) {
    return req_str(e, "name") && opt(e, "value", json_type_string) && opt(e, "valueFrom", json_type_object);
}
static bool mount_ok(json_object *m) { return req_str(m, "name") && req_str(m, "mountPath"); }
static bool named_ok(json_object *v) { return req_str(v, "name"); }
static bool owner_ok(json_object *r) {
    return opt(r, "kind", json_type_string) && opt(r, "name", json_type_string) && opt(r, "uid", json_type_string);
}
static bool container_ok(json_object *c) {
    return req_str(c, "name") && opt(c, "image", json_type_string) && opt(c, "imagePullPolicy", json_type_string) &&
           strings(get(c, "command")) && objects(get(c, "env"), env_var_ok) && objects(get(c, "envFrom"), NULL) &&
           objects(get(c, "volumeMounts"), mount_ok) && opt(c, "securityContext", json_type_object);
}

/* What the engine checks before the opt-in test: metadata, its
 * annotations, spec. */
static bool pod_shape_ok(json_object *pod) {
    json_object *meta = get(pod, "metadata");
    return opt(pod, "metadata", json_type_object) && opt(meta, "annotations", json_type_object) &&
           is(get(pod, "spec"), json_type_object);
}

static bool pod_well_typed(json_object *pod) {
    json_object *meta = get(pod, "metadata"), *spec = get(pod, "spec");
    return pod_shape_ok(pod) && opt(meta, "name", json_type_string) && opt(meta, "namespace", json_type_string) &&
           opt(meta, "uid", json_type_string) && string_map(get(meta, "annotations")) &&
           string_map(get(meta, "labels")) && objects(get(meta, "ownerReferences"), owner_ok) &&
           objects(get(spec, "containers"), container_ok) && objects(get(spec, "initContainers"), container_ok) &&
           objects(get(spec, "volumes"), named_ok) && opt(spec, "nodeName", json_type_string) &&
           opt(spec, "shareProcessNamespace", json_type_boolean);
}

/* Does the pod ask for anything, by the precedence of spec 1.2 (pod and
 * namespace values), an opt-in annotation of the pod that is not a string
 * counting as asking? */
static const char *resolved(json_object *pod, json_object *ns, const char *key, bool *odd) {
    json_object *pv = get(get(get(pod, "metadata"), "annotations"), key);
    json_object *nv = get(get(get(ns, "metadata"), "annotations"), key);
    const char *p = is(pv, json_type_string) ? json_object_get_string(pv) : "";
    const char *n = is(nv, json_type_string) ? json_object_get_string(nv) : "";
    *odd = pv && !is(pv, json_type_string);
    if (!*n) return p;
    if (!*p || (!strcasecmp(p, "true") && strcasecmp(n, "false"))) return n;
    return p;
}

static bool engine_asks(json_object *pod, json_object *ns) {
    static const char *const langs[] = {"java", "nodejs", "python", "dotnet", "go", "apache-httpd", "nginx", "sdk"};
    bool odd;
    if (*resolved(pod, ns, "sidecar.opentelemetry.io/inject", &odd) || odd) return true;
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++) {
        char key[96];
        snprintf(key, sizeof key, "instrumentation.opentelemetry.io/inject-%s", langs[i]);
        const char *v = resolved(pod, ns, key, &odd);
        if ((*v && strcasecmp(v, "false")) || odd) return true;
    }
    return false;
}

/* The malformed-pod invariants of one mutation (see the top of the file). */
static void check_malformed(json_object *pod, json_object *ns, int rc, const mutate_result *res) {
    if (!json_object_is_type(pod, json_type_object)) return; /* "not a pod", without a path */
    bool asks = engine_asks(pod, ns);
    bool want = !pod_shape_ok(pod) || (asks && res->limit == MUTATE_LIMIT_NONE && !pod_well_typed(pod));
    if (want && !res->invalid_path) violation("a malformed pod is not refused as malformed", NULL, NULL);
    if (!want && res->invalid_path) violation("a well-typed pod is refused as malformed", NULL, res->warnings[0]);
    if (res->invalid_path) {
        char *w = NULL;
        if (asprintf(&w, "%s: %s; nothing injected", res->invalid_path, res->invalid_reason) < 0) abort();
        if (rc != -1 || res->nwarnings != 1 || strcmp(res->warnings[0], w) || !res->invalid_at ||
            res->skips != 1u << MUTATE_SKIP_MALFORMED || json_object_array_length(res->patch) ||
            (strncmp(res->invalid_reason, "expected ", 9) && strcmp(res->invalid_reason, "required, not set")))
            violation("a malformed refusal is not rc -1, no patch, one warning PATH: REASON", NULL, w);
        free(w);
    }
    if (rc == 0 && trap_hits) violation("the engine read a value of the wrong type", res->patch, trap_first);
    if (rc == 0 && asks && !pod_well_typed(res->pod)) violation("the mutated pod is not well typed", res->patch, NULL);
}

/* Set by the scaling mode (see scale_pod): the one bound the pod was grown
 * to, and whether it is past it. */
static mutate_limit scaled_limit;
static bool scaled_past;

/* Does an annotation of the pod or its namespace ask the engine for anything? */
static bool pod_asks(json_object *pod, json_object *ns) {
    json_object *lists[2] = {get(get(pod, "metadata"), "annotations"), get(get(ns, "metadata"), "annotations")};
    for (int l = 0; l < 2; l++) {
        if (!json_object_is_type(lists[l], json_type_object)) continue;
        json_object_object_foreach(lists[l], k, v) {
            const char *sv = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
            if (!strcmp(k, "sidecar.opentelemetry.io/inject") && *sv) return true;
            if (!strncmp(k, "instrumentation.opentelemetry.io/inject-", 40) && !strstr(k, "container-names") && *sv &&
                strcasecmp(sv, "false"))
                return true;
        }
    }
    return false;
}

/* The request again through the cache: what it answered without. */
static void check_cached(const mutate_request *req, int rc, const mutate_result *want) {
    mutate_request creq = *req;
    creq.cache = cache;
    mutate_result got;
    int crc = mutate_pod(&creq, &got);
    char *a = jtext(want->patch, NULL), *b = jtext(got.patch, NULL);
    if (crc != rc || strcmp(a, b) != 0) {
        fprintf(stderr, "without the cache: %s\n", a);
        violation("the cache changes the patch", got.patch, NULL);
    }
    bool same = got.nwarnings == want->nwarnings && got.skips == want->skips && got.injected == want->injected &&
                got.sidecar == want->sidecar;
    for (size_t i = 0; same && i < got.nwarnings; i++) same = strcmp(got.warnings[i], want->warnings[i]) == 0;
    if (!same) violation("the cache changes the warnings or the result", NULL, got.nwarnings ? got.warnings[0] : NULL);
    free(a);
    free(b);
    mutate_result_free(&got);
}

static void run_pod(json_object *pod, uint8_t sel) {
    if (has_nan(pod, 0)) return;
    char *podtext = jtext(pod, NULL);
    context_pod = podtext;
    const char *ns = NAMESPACES[(sel / 3) % 3];
    kube_view v = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, v.snap);
    for (int variant = 0; variant < 4; variant++) {
        mutate_options opt = cfg.opt;
        opt.multi_instrumentation = variant & 1;
        opt.native_sidecars = (variant >> 1) & 1;
        opt.python_mode = (sel / 9) % 2 ? MUTATE_PYTHON_ENTRYPOINT : MUTATE_PYTHON_PYTHONPATH;
        static char what[128];
        snprintf(what, sizeof what, "ns=%s multi=%d native=%d python_mode=%d", ns, opt.multi_instrumentation,
                 opt.native_sidecars, (int)opt.python_mode);
        context_what = what;
        mutate_request req = {.pod = pod, .namespace = ns, .src = &src, .opt = &opt};
        req.ns = kube_snapshot_get(v.snap, "Namespace", NULL, ns);
        mutate_result res;
        int rc = mutate_trapped(&req, &res);
        check_malformed(pod, req.ns, rc, &res);
        check_cached(&req, rc, &res);
        /* The bounds: a pod grown past one is refused for exactly that one
         * when it asks for something, and never otherwise. */
        if (scaled_limit != MUTATE_LIMIT_NONE) {
            bool want = scaled_past && pod_asks(pod, req.ns);
            if (want && res.limit != scaled_limit) violation("a pod past a bound is not refused for it", NULL,
                                                             mutate_limit_name(scaled_limit));
            if (!want && res.limit != MUTATE_LIMIT_NONE) violation("a pod within the bounds is refused", NULL,
                                                                   mutate_limit_name(res.limit));
        }
        if (res.limit != MUTATE_LIMIT_NONE) {
            char tag[64];
            snprintf(tag, sizeof tag, "(bound %s)", mutate_limit_name(res.limit));
            if (rc == 0 || !(res.skips & (1u << MUTATE_SKIP_LIMIT)) || res.nwarnings != 1 ||
                !strstr(res.warnings[0], tag))
                violation("a refusal for a bound is not rc -1 with one warning naming it", NULL, tag);
        }
        if (rc != 0) {
            if (!json_object_is_type(res.patch, json_type_array) || json_object_array_length(res.patch) != 0)
                violation("a rejected pod has a non-empty patch", res.patch, NULL);
            if (res.nwarnings == 0) violation("a rejected pod has no warning", NULL, NULL);
            mutate_result_free(&res);
            continue;
        }
        if (!res.pod) violation("no result pod", NULL, NULL);
#ifdef FUZZ_ENGINE_DEBUG /* -DFUZZ_ENGINE_DEBUG: what each run did, for checking seeds */
        fprintf(stderr, "[%s] injected=%#x sidecar=%d ops=%zu\n", what, res.injected, res.sidecar,
                json_object_array_length(res.patch));
        for (size_t w = 0; w < res.nwarnings; w++) fprintf(stderr, "  warning: %s\n", res.warnings[w]);
#endif
        check_patch(pod, &res);
        /* Idempotency: the API server may call the webhook again. */
        mutate_result again;
        req.pod = res.pod;
        int rc2 = mutate_trapped(&req, &again);
        check_malformed(res.pod, req.ns, rc2, &again);
        /* What was added can take a pod just within a bound past it: the
         * second admission then changes nothing and says why. */
        if (rc2 != 0 && again.limit == MUTATE_LIMIT_NONE) violation("the result pod is rejected", NULL, NULL);
        if (json_object_array_length(again.patch) != 0) {
            char *first = jtext(res.patch, NULL);
            fprintf(stderr, "first patch: %s\n", first);
            free(first);
            violation("not idempotent: the second patch is not empty", again.patch, NULL);
        }
        mutate_result_free(&again);
        mutate_result_free(&res);
    }
    kube_store_release(store, &v);
    context_pod = NULL;
    free(podtext);
}

/* ---- mode (b): a pod of fixed shape from '\n'-separated fields ----------- */

static const char *const ANN_KEYS[] = {
    "instrumentation.opentelemetry.io/inject-java",
    "instrumentation.opentelemetry.io/inject-nodejs",
    "instrumentation.opentelemetry.io/inject-python",
    "instrumentation.opentelemetry.io/inject-dotnet",
    "instrumentation.opentelemetry.io/inject-go",
    "instrumentation.opentelemetry.io/inject-apache-httpd",
    "instrumentation.opentelemetry.io/inject-nginx",
    "instrumentation.opentelemetry.io/inject-sdk",
    "instrumentation.opentelemetry.io/container-names",
    "instrumentation.opentelemetry.io/java-container-names",
    "instrumentation.opentelemetry.io/nodejs-container-names",
    "instrumentation.opentelemetry.io/python-container-names",
    "instrumentation.opentelemetry.io/dotnet-container-names",
    "instrumentation.opentelemetry.io/go-container-names",
    "instrumentation.opentelemetry.io/apache-httpd-container-names",
    "instrumentation.opentelemetry.io/inject-nginx-container-names",
    "instrumentation.opentelemetry.io/sdk-container-names",
    "instrumentation.opentelemetry.io/otel-python-platform",
    "instrumentation.opentelemetry.io/python-mode",
    "instrumentation.opentelemetry.io/otel-dotnet-auto-runtime",
    "instrumentation.opentelemetry.io/otel-go-auto-target-exe",
    "sidecar.opentelemetry.io/inject",
    "resource.opentelemetry.io/service.name",
    "resource.opentelemetry.io/service.version",
    "resource.opentelemetry.io/service.namespace",
    "resource.opentelemetry.io/service.instance.id",
    "resource.opentelemetry.io/team",
};
#define NANN (sizeof ANN_KEYS / sizeof *ANN_KEYS)

/* A one-character field stands for a value the resources make interesting. */
static const char *const VALUES[] = {
    "true", "false", "inst", "second", "other/inst-other", "sidecar", "deploy", "other/side-other",
    "app", "app,worker", "musl", "entrypoint", "default/inst", "missing", "glibc", "linux-musl-x64",
};
static const char *const ENV_NAMES[] = {
    "JAVA_TOOL_OPTIONS", "PYTHONPATH", "OTEL_RESOURCE_ATTRIBUTES", "NODE_OPTIONS",
    "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_RESOURCE_ATTRIBUTES_POD_NAME",
    "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "OTEL_PROPAGATORS", "OTEL_TRACES_SAMPLER",
    "CORECLR_ENABLE_PROFILING", "DOTNET_STARTUP_HOOKS", "OTEL_EXPORTER_OTLP_CERTIFICATE",
    "OTEL_METRICS_EXPORTER", "OTEL_NODE_IP", "OTEL_POD_IP",
};

static char *field_value(const char *f) {
    if (f[0] && !f[1] && ((f[0] >= '0' && f[0] <= '9') || (f[0] >= 'a' && f[0] <= 'f'))) {
        int i = f[0] <= '9' ? f[0] - '0' : f[0] - 'a' + 10;
        return strdup(VALUES[i]);
    }
    return strdup(f);
}

static json_object *jstrn(const char *s) { return json_object_new_string(s); }

/* "name[:image],..." into an array of containers. */
static json_object *container_list(const char *spec, bool dflt) {
    json_object *arr = json_object_new_array();
    if (!*spec) {
        if (dflt) {
            json_object *c = json_object_new_object();
            json_object_object_add(c, "name", jstrn("app"));
            json_object_object_add(c, "image", jstrn("example.com/shop/app:1.4.2"));
            json_object_array_add(arr, c);
        }
        return arr;
    }
    char *dup = strdup(spec), *save = NULL;
    for (char *item = strtok_r(dup, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        json_object *c = json_object_new_object();
        char *colon = strchr(item, ':');
        if (colon) *colon = 0;
        char *name = field_value(item);
        json_object_object_add(c, "name", jstrn(name));
        free(name);
        if (colon) json_object_object_add(c, "image", jstrn(colon + 1));
        json_object_array_add(arr, c);
    }
    free(dup);
    return arr;
}

/* Env entry spec: "NAME=value" (value), "NAME<path" (fieldRef),
 * "NAME^res" (resourceFieldRef), "NAME" (secretKeyRef); a one-digit or
 * one-hex NAME is taken from ENV_NAMES. */
static json_object *env_entry(const char *spec) {
    size_t k = strcspn(spec, "=<^");
    char *name = strndup(spec, k);
    json_object *e = json_object_new_object();
    if (k == 1 && ((name[0] >= '0' && name[0] <= '9') || (name[0] >= 'a' && name[0] <= 'f')))
        json_object_object_add(e, "name", jstrn(ENV_NAMES[name[0] <= '9' ? name[0] - '0' : name[0] - 'a' + 10]));
    else
        json_object_object_add(e, "name", jstrn(name));
    free(name);
    json_object *vf = NULL, *ref;
    switch (spec[k]) {
    case '=': json_object_object_add(e, "value", jstrn(spec + k + 1)); break;
    case '<':
        vf = json_object_new_object();
        ref = json_object_new_object();
        json_object_object_add(ref, "fieldPath", jstrn(spec + k + 1));
        json_object_object_add(vf, "fieldRef", ref);
        break;
    case '^':
        vf = json_object_new_object();
        ref = json_object_new_object();
        json_object_object_add(ref, "resource", jstrn(spec + k + 1));
        json_object_object_add(vf, "resourceFieldRef", ref);
        break;
    default:
        vf = json_object_new_object();
        ref = json_object_new_object();
        json_object_object_add(ref, "name", jstrn("app-secret"));
        json_object_object_add(ref, "key", jstrn("value"));
        json_object_object_add(vf, "secretKeyRef", ref);
    }
    if (vf) json_object_object_add(e, "valueFrom", vf);
    return e;
}

/* Field layout (missing trailing fields are empty; an empty annotation
 * field means the annotation is absent, a lone '-' an empty value):
 *   [0, NANN)   annotation values, ANN_KEYS order
 *   NANN+0      label app.kubernetes.io/name ("" none)
 *   NANN+1      pod-template-hash; non-empty adds a ReplicaSet owner
 *               (web-<hash>) and generateName, "j" a Job owner instead
 *   NANN+2      containers  "name[:image],..." ("" one default container)
 *   NANN+3      initContainers, same form
 *   NANN+4      volumes "name[@mountPath],..." (mounted in the first container)
 *   NANN+5      command of the first container, space separated
 *   NANN+6...   env entries "<digit container index><entry>" (see env_entry)
 * A first field "*<b><d>" before these grows the pod to a bound (scale_pod);
 * a first field "!<t><v>..." instead corrupts fields of it (corrupt_pod). */
static json_object *shaped_pod(char **f, size_t nf) {
#define F(i) ((i) < nf ? f[i] : "")
    json_object *pod = json_object_new_object(), *meta = json_object_new_object(), *spec = json_object_new_object();
    json_object_object_add(pod, "apiVersion", jstrn("v1"));
    json_object_object_add(pod, "kind", jstrn("Pod"));
    json_object *ann = json_object_new_object();
    for (size_t i = 0; i < NANN; i++) {
        const char *fv = F(i);
        if (!*fv) continue;
        char *val = !strcmp(fv, "-") ? strdup("") : field_value(fv);
        json_object_object_add(ann, ANN_KEYS[i], jstrn(val));
        free(val);
    }
    json_object *labels = json_object_new_object();
    if (*F(NANN)) json_object_object_add(labels, "app.kubernetes.io/name", jstrn(F(NANN)));
    json_object_object_add(labels, "app.kubernetes.io/version", jstrn("1.4.2"));
    const char *hash = F(NANN + 1);
    if (!strcmp(hash, "j")) {
        json_object_object_add(meta, "generateName", jstrn("nightly-28000000-"));
        json_object *refs = json_object_new_array(), *r = json_object_new_object();
        json_object_object_add(r, "apiVersion", jstrn("batch/v1"));
        json_object_object_add(r, "kind", jstrn("Job"));
        json_object_object_add(r, "name", jstrn("nightly-28000000"));
        json_object_object_add(r, "uid", jstrn("job-uid"));
        json_object_array_add(refs, r);
        json_object_object_add(meta, "ownerReferences", refs);
    } else if (*hash) {
        char *gn = NULL, *rs = NULL;
        if (asprintf(&gn, "web-%s-", hash) < 0 || asprintf(&rs, "web-%s", hash) < 0) abort();
        json_object_object_add(meta, "generateName", jstrn(gn));
        json_object_object_add(labels, "pod-template-hash", jstrn(hash));
        json_object *refs = json_object_new_array(), *r = json_object_new_object();
        json_object_object_add(r, "apiVersion", jstrn("apps/v1"));
        json_object_object_add(r, "kind", jstrn("ReplicaSet"));
        json_object_object_add(r, "name", jstrn(rs));
        json_object_object_add(r, "uid", jstrn("rs-uid"));
        json_object_object_add(r, "controller", json_object_new_boolean(1));
        json_object_array_add(refs, r);
        json_object_object_add(meta, "ownerReferences", refs);
        free(gn);
        free(rs);
    } else {
        json_object_object_add(meta, "name", jstrn("shop-app"));
        json_object_object_add(meta, "uid", jstrn("pod-uid"));
    }
    json_object_object_add(meta, "labels", labels);
    json_object_object_add(meta, "annotations", ann);
    json_object_object_add(pod, "metadata", meta);

    json_object *cs = container_list(F(NANN + 2), true), *ics = container_list(F(NANN + 3), false);
    size_t nc = json_object_array_length(cs);
    if (*F(NANN + 4)) {
        json_object *vols = json_object_new_array(), *mounts = json_object_new_array();
        char *dup = strdup(F(NANN + 4)), *save = NULL;
        for (char *item = strtok_r(dup, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
            char *at = strchr(item, '@');
            if (at) *at = 0;
            json_object *v = json_object_new_object();
            json_object_object_add(v, "name", jstrn(item));
            json_object_object_add(v, "emptyDir", json_object_new_object());
            json_object_array_add(vols, v);
            if (at) {
                json_object *m = json_object_new_object();
                json_object_object_add(m, "name", jstrn(item));
                json_object_object_add(m, "mountPath", jstrn(at + 1));
                json_object_array_add(mounts, m);
            }
        }
        free(dup);
        json_object_object_add(spec, "volumes", vols);
        if (nc && json_object_array_length(mounts))
            json_object_object_add(json_object_array_get_idx(cs, 0), "volumeMounts", mounts);
        else json_object_put(mounts);
    }
    if (*F(NANN + 5) && nc) {
        json_object *cmd = json_object_new_array();
        char *dup = strdup(F(NANN + 5)), *save = NULL;
        for (char *w = strtok_r(dup, " ", &save); w; w = strtok_r(NULL, " ", &save)) json_object_array_add(cmd, jstrn(w));
        free(dup);
        json_object_object_add(json_object_array_get_idx(cs, 0), "command", cmd);
    }
    size_t nic = json_object_array_length(ics);
    for (size_t i = NANN + 6; i < nf; i++) {
        if (!f[i][0] || !(nc + nic)) continue;
        size_t ci = (unsigned char)f[i][0] % (nc + nic);
        json_object *c = ci < nc ? json_object_array_get_idx(cs, ci) : json_object_array_get_idx(ics, ci - nc);
        json_object *env = get(c, "env");
        if (!env) {
            env = json_object_new_array();
            json_object_object_add(c, "env", env);
        }
        json_object_array_add(env, env_entry(f[i] + 1));
    }
    json_object_object_add(spec, "containers", cs);
    if (nic) json_object_object_add(spec, "initContainers", ics);
    else json_object_put(ics);
    json_object_object_add(spec, "nodeName", jstrn("node-1"));
    json_object_object_add(pod, "spec", spec);
    return pod;
#undef F
}

/* Scaling: a first field "*<b><d>" grows one collection of the shaped pod
 * to a bound of mutate.h plus d - '1' (b selects the bound, '1'..'8' in
 * mutate_limit order; d is '0', '1' or '2': one below, at, one past), by
 * repeating a synthetic element, so the fuzzer reaches the bounds without
 * megabytes of input. */
static void scale_pod(json_object *pod, const char *field) {
    scaled_limit = MUTATE_LIMIT_NONE;
    if (field[0] != '*' || field[1] < '1' || field[1] > '8' || field[2] < '0' || field[2] > '2') return;
    mutate_limit l = (mutate_limit)(field[1] - '0');
    size_t n = mutate_limit_max(l) + (size_t)(field[2] - '0') - 1;
    json_object *spec = get(pod, "spec"), *meta = get(pod, "metadata"), *cs = get(spec, "containers");
    json_object *c0 = json_object_array_get_idx(cs, 0), *ann = get(meta, "annotations");
    char name[64];
    if (!c0) return;
    scaled_limit = l;
    scaled_past = n > mutate_limit_max(l);
    switch (l) {
    case MUTATE_LIMIT_CONTAINERS: {
        json_object *inits = get(spec, "initContainers");
        size_t have = json_object_array_length(cs) + (inits ? json_object_array_length(inits) : 0);
        for (size_t i = have; i < n; i++) {
            json_object *c = json_object_new_object();
            snprintf(name, sizeof name, "x%zu", i);
            json_object_object_add(c, "name", jstrn(name));
            json_object_array_add(cs, c);
        }
        if (have > n) scaled_limit = MUTATE_LIMIT_NONE; /* cannot shrink; no claim */
        break;
    }
    case MUTATE_LIMIT_ENV:
    case MUTATE_LIMIT_ENV_TOTAL: {
        /* ENV_TOTAL over enough containers that each stays within ENV.
         * The bound counts the env of init containers too (bounds.c: "all
         * containers" are both lists, as for containers and volume_mounts),
         * so theirs is removed: the pod then holds exactly n. */
        size_t nc = l == MUTATE_LIMIT_ENV ? 1 : n / MUTATE_MAX_ENV + 1;
        size_t per = n / nc, rest = n % nc;
        json_object *inits = get(spec, "initContainers");
        for (size_t k = 0; inits && k < json_object_array_length(inits); k++)
            json_object_object_del(json_object_array_get_idx(inits, k), "env");
        for (size_t k = json_object_array_length(cs); k < nc; k++) {
            json_object *c = json_object_new_object();
            snprintf(name, sizeof name, "e%zu", k);
            json_object_object_add(c, "name", jstrn(name));
            json_object_array_add(cs, c);
        }
        for (size_t k = 0; k < json_object_array_length(cs); k++) {
            json_object *c = json_object_array_get_idx(cs, k);
            if (!json_object_is_type(c, json_type_object)) continue;
            json_object *env = json_object_new_array();
            size_t want = k < nc ? per + (k < rest) : 0;
            for (size_t i = 0; i < want; i++) {
                json_object *e = json_object_new_object();
                snprintf(name, sizeof name, "S%zu", i);
                json_object_object_add(e, "name", jstrn(name));
                json_object_object_add(e, "value", jstrn("v"));
                json_object_array_add(env, e);
            }
            json_object_object_add(c, "env", env);
        }
        /* Containers added for ENV_TOTAL can take the pod past the
         * containers bound (with many init containers): no claim then. */
        if (json_object_array_length(cs) + (inits ? json_object_array_length(inits) : 0) > MUTATE_MAX_CONTAINERS)
            scaled_limit = MUTATE_LIMIT_NONE;
        break;
    }
    case MUTATE_LIMIT_VOLUME_MOUNTS: {
        json_object *m = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_new_object();
            snprintf(name, sizeof name, "/mnt/%zu", i);
            json_object_object_add(e, "name", jstrn("data"));
            json_object_object_add(e, "mountPath", jstrn(name));
            json_object_array_add(m, e);
        }
        for (size_t k = 1; k < json_object_array_length(cs); k++)
            json_object_object_del(json_object_array_get_idx(cs, k), "volumeMounts");
        json_object_object_del(spec, "initContainers");
        json_object_object_add(c0, "volumeMounts", m);
        if (json_object_array_length(cs) > 1) json_object_array_del_idx(cs, 1, json_object_array_length(cs) - 1);
        break;
    }
    case MUTATE_LIMIT_VOLUMES: {
        json_object *v = json_object_new_array();
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_new_object();
            snprintf(name, sizeof name, "vol-%zu", i);
            json_object_object_add(e, "name", jstrn(name));
            json_object_object_add(e, "emptyDir", json_object_new_object());
            json_object_array_add(v, e);
        }
        json_object_object_add(spec, "volumes", v);
        break;
    }
    case MUTATE_LIMIT_ANNOTATIONS:
        for (size_t i = (size_t)json_object_object_length(ann); i < n; i++) {
            snprintf(name, sizeof name, "example.com/a%zu", i);
            json_object_object_add(ann, name, jstrn("x"));
        }
        if ((size_t)json_object_object_length(ann) != n) scaled_limit = MUTATE_LIMIT_NONE;
        break;
    case MUTATE_LIMIT_CONTAINER_NAMES: {
        char *list = malloc(n * 8 + 8);
        size_t off = 0;
        for (size_t i = 0; i < n; i++) off += (size_t)sprintf(list + off, "%sn%zu", i ? "," : "", i);
        list[off] = 0;
        /* The only list: other container-names keys of the input are removed. */
        for (size_t i = 8; i < 17; i++) json_object_object_del(ann, ANN_KEYS[i]);
        json_object_object_add(ann, "instrumentation.opentelemetry.io/container-names", jstrn(list));
        free(list);
        break;
    }
    case MUTATE_LIMIT_RESOURCE_ATTRIBUTES: {
        char *list = malloc(n * 16 + 8);
        size_t off = 0;
        for (size_t i = 0; i < n; i++) off += (size_t)sprintf(list + off, "%sk%zu=v", i ? "," : "", i);
        list[off] = 0;
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", jstrn("OTEL_RESOURCE_ATTRIBUTES"));
        json_object_object_add(e, "value", jstrn(list));
        json_object *env = json_object_new_array();
        json_object_array_add(env, e);
        for (size_t k = 0; k < json_object_array_length(cs); k++)
            json_object_object_del(json_object_array_get_idx(cs, k), "env");
        json_object_object_del(spec, "initContainers");
        json_object_object_add(c0, "env", env);
        free(list);
        break;
    }
    default:
        scaled_limit = MUTATE_LIMIT_NONE;
    }
}

/* Corruption: a first field "!<t><v>[<t><v>]..." sets the field CORRUPT[t]
 * (its parent must exist; '|' separates keys, digits are list indexes) to
 * CORRUPT_VALUES[v], a byte each taken modulo the table sizes, so random
 * bytes corrupt random fields; right-typed values are in the table too. */
static const char *const CORRUPT[] = {
    "metadata", "metadata|name", "metadata|namespace", "metadata|uid", "metadata|annotations",
    "metadata|annotations|sidecar.opentelemetry.io/inject", "metadata|annotations|instrumentation.opentelemetry.io/inject-java",
    "metadata|annotations|instrumentation.opentelemetry.io/container-names", "metadata|labels",
    "metadata|labels|app.kubernetes.io/version", "metadata|ownerReferences", "metadata|ownerReferences|0",
    "metadata|ownerReferences|0|kind", "metadata|ownerReferences|0|name", "metadata|ownerReferences|0|uid", "spec",
    "spec|nodeName", "spec|shareProcessNamespace", "spec|containers", "spec|containers|0", "spec|containers|0|name",
    "spec|containers|0|image", "spec|containers|0|imagePullPolicy", "spec|containers|0|command",
    "spec|containers|0|command|0", "spec|containers|0|env", "spec|containers|0|env|0", "spec|containers|0|env|0|name",
    "spec|containers|0|env|0|value", "spec|containers|0|env|0|valueFrom", "spec|containers|0|envFrom",
    "spec|containers|0|envFrom|0", "spec|containers|0|volumeMounts", "spec|containers|0|volumeMounts|0",
    "spec|containers|0|volumeMounts|0|name", "spec|containers|0|volumeMounts|0|mountPath",
    "spec|containers|0|securityContext", "spec|containers|0|ports", "spec|containers|0|args", "spec|initContainers",
    "spec|initContainers|0", "spec|initContainers|0|name", "spec|initContainers|0|env", "spec|volumes",
    "spec|volumes|0", "spec|volumes|0|name",
};
static const char *const CORRUPT_VALUES[] = {
    NULL /* removed */, "null", "true", "false", "0", "8080", "1.5", "\"s\"", "\"\"", "[]", "[\"x\"]", "[1]", "[null]",
    "{}", "{\"name\":\"x\"}", "[{\"name\":\"a\",\"mountPath\":\"/a\"}]",
};
#define NCORRUPT (sizeof CORRUPT / sizeof *CORRUPT)
#define NCORRUPT_VALUES (sizeof CORRUPT_VALUES / sizeof *CORRUPT_VALUES)

static void corrupt_one(json_object *pod, const char *target, const char *value) {
    char path[256], *save = NULL, *last = NULL;
    snprintf(path, sizeof path, "%s", target);
    json_object *parent = NULL, *cur = pod;
    for (char *tok = strtok_r(path, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
        if (!cur) return; /* the parent does not exist: nothing to corrupt */
        parent = cur;
        last = tok;
        if (json_object_is_type(cur, json_type_array)) cur = json_object_array_get_idx(cur, (size_t)atoi(tok));
        else cur = get(cur, tok);
    }
    json_object *v = value ? json_tokener_parse(value) : NULL;
    if (json_object_is_type(parent, json_type_array)) {
        size_t idx = (size_t)atoi(last);
        if (idx > json_object_array_length(parent)) idx = json_object_array_length(parent);
        if (value) json_object_array_put_idx(parent, idx, v);
        else if (idx < json_object_array_length(parent)) json_object_array_del_idx(parent, idx, 1);
    } else if (json_object_is_type(parent, json_type_object)) {
        if (value) json_object_object_add(parent, last, v);
        else json_object_object_del(parent, last);
    } else {
        json_object_put(v);
    }
}

static void corrupt_pod(json_object *pod, const char *field) {
    for (const char *p = field + 1; p[0] && p[1]; p += 2)
        corrupt_one(pod, CORRUPT[(unsigned char)p[0] % NCORRUPT], CORRUPT_VALUES[(unsigned char)p[1] % NCORRUPT_VALUES]);
}

static void mode_fields(const uint8_t *data, size_t size, uint8_t sel) {
    char *buf = malloc(size + 1);
    if (!buf) return;
    memcpy(buf, data, size);
    buf[size] = 0;
    size_t nf = 1;
    for (size_t i = 0; i < size; i++) nf += buf[i] == '\n';
    char **f = malloc(sizeof *f * nf);
    size_t k = 0;
    f[k++] = buf;
    for (size_t i = 0; i < size; i++)
        if (buf[i] == '\n') {
            buf[i] = 0;
            f[k++] = buf + i + 1;
        }
    /* Embedded NULs end a field early; that is fine. A scaling field comes
     * first and the layout below starts after it. */
    bool scaled = f[0][0] == '*', corrupted = f[0][0] == '!';
    json_object *pod = shaped_pod(f + (scaled || corrupted), nf - (scaled || corrupted));
    if (scaled) scale_pod(pod, f[0]);
    if (corrupted) corrupt_pod(pod, f[0]);
    run_pod(pod, sel);
    scaled_limit = MUTATE_LIMIT_NONE;
    json_object_put(pod);
    free(f);
    free(buf);
}

static void mode_json(const uint8_t *data, size_t size, uint8_t sel) {
    if (size > (1u << 20)) return;
    char *buf = malloc(size + 1);
    if (!buf) return;
    memcpy(buf, data, size);
    buf[size] = 0;
    json_tokener *tok = json_tokener_new();
    json_object *pod = json_tokener_parse_ex(tok, buf, (int)size);
    if (json_tokener_get_error(tok) == json_tokener_success) run_pod(pod, sel);
    json_object_put(pod);
    json_tokener_free(tok);
    free(buf);
}

static void mode_yaml(const uint8_t *data, size_t size, uint8_t sel) {
    /* Exactly size bytes, no terminator: the reader must not look past. */
    char *buf = malloc(size ? size : 1);
    if (!buf) return;
    memcpy(buf, data, size);
    kube_yaml_doc *docs = NULL;
    size_t n = 0;
    kube_yaml_error err;
    if (kube_yaml_parse(buf, size, &docs, &n, &err) == 0) {
        for (size_t i = 0; i < n; i++) {
            /* Spans are in the input, in order, never overlapping. */
            if (docs[i].end && (docs[i].start >= docs[i].end || docs[i].end > size ||
                                (i && docs[i - 1].end && docs[i].start < docs[i - 1].end)))
                abort();
            if (docs[i].obj) run_pod(docs[i].obj, sel);
        }
        kube_yaml_docs_free(docs, n);
    }
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint8_t sel = data[0];
    switch (sel % 3) {
    case 0: mode_json(data + 1, size - 1, sel); break;
    case 1: mode_fields(data + 1, size - 1, sel); break;
    default: mode_yaml(data + 1, size - 1, sel); break;
    }
    return 0;
}
