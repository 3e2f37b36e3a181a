/* tests/fuzz/fuzz_review.c - libFuzzer target for the AdmissionReview codec
 * (server/review.c): raw request bodies in, HTTP status and body out.
 *
 * Each input is handed to review_handle() exactly as the server does (the
 * body bytes and their length, no terminating NUL guaranteed), once with
 * native sidecars off and once on, against a fixed store built once from
 * RESOURCES. These must hold (abort() otherwise):
 *   - the status is 200 or 400, and result is "rejected" exactly for 400;
 *   - the body is one complete JSON value (json-c, strict mode), nothing
 *     after it but the newline of a 400, and, when the input is valid UTF-8,
 *     valid UTF-8 itself (a JSON text must be);
 *   - a 400 body is {"error": "<non-empty string>"} and equals out.error;
 *   - a 200 body is an admission.k8s.io/v1 AdmissionReview whose
 *     response.uid is the request's uid, allowed is true, and a patch, when
 *     present, comes with patchType JSONPatch, base64-decodes and parses as a
 *     non-empty JSON array of {op, path} objects;
 *   - the same input handled again with the same (reused) tokener, and
 *     managedFields not skimmed this time and nothing left out of the
 *     parse (review_env.no_skim: the pod route's probes, ports, resources
 *     and the rest of server/review.c's pod_paths), and without the
 *     mutation cache the first call is given (one for the whole run, as a
 *     server loop has), gives the same status and body: skimming, leaving
 *     out and the cache are invisible.
 *
 * Built and run by `make fuzz` (seeds: tests/fuzz/review-corpus); `make
 * test` replays the seeds and tests/fuzz/crashes/review once.
 * Set FUZZ_REVIEW_NO_UTF8=1 to skip the UTF-8 check (to look past a known
 * failure of it). */
#include "mutate/defaults.h"

#include "kube/filesource.h"
#include "kube/store.h"
#include "server/log.h"
#include "server/review.h"

#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char RESOURCES[] =
    "apiVersion: v1\nkind: Namespace\n"
    "metadata:\n"
    "  name: annotated\n"
    "  annotations:\n"
    "    instrumentation.opentelemetry.io/inject-python: 'true'\n"
    "    sidecar.opentelemetry.io/inject: 'true'\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: java-inst, namespace: default}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://collector:4318'}\n"
    "  propagators: [tracecontext, baggage]\n"
    "  sampler: {type: parentbased_traceidratio, argument: '0.5'}\n"
    "  java:\n"
    "    env: [{name: OTEL_JAVAAGENT_DEBUG, value: 'true'}]\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: nodejs-inst, namespace: default}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://collector:4317'}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: python-inst, namespace: default}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://collector:4318'}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: sdk-inst, namespace: default}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://collector:4317'}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1alpha1\n"
    "kind: Instrumentation\n"
    "metadata: {name: only, namespace: annotated}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://collector:4318'}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1beta1\n"
    "kind: OpenTelemetryCollector\n"
    "metadata: {name: sidecar-for-my-app, namespace: default}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  config:\n"
    "    receivers: {otlp: {protocols: {grpc: {}, http: {}}}}\n"
    "    exporters: {debug: {}}\n"
    "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"
    "---\n"
    "apiVersion: opentelemetry.io/v1beta1\n"
    "kind: OpenTelemetryCollector\n"
    "metadata: {name: sc, namespace: annotated}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  config:\n"
    "    receivers: {jaeger: {protocols: {grpc: {}}}}\n"
    "    exporters: {debug: {}}\n"
    "    service: {pipelines: {traces: {receivers: [jaeger], exporters: [debug]}}}\n"
    "---\n"
    "apiVersion: apps/v1\n"
    "kind: ReplicaSet\n"
    "metadata:\n"
    "  name: my-java-7b5d8f6c9\n"
    "  namespace: default\n"
    "  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: my-java, uid: d1, controller: true}]\n";

static kube_store *store;
static mutate_settings cfg;
static mutate_options native_opt;
static review_env envs[2], unskimmed[2];
static json_tokener *tok;    /* the server's per-thread tokener, reused */
static mutate_cache *cache;  /* and its per-thread mutation cache */
static json_tokener *check_tok;
static bool check_utf8 = true;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    log_setup(1, LOG_ERROR); /* the codec logs nothing itself; keep stderr for findings */
    mutate_settings_init(&cfg);
    store = kube_store_new();
    json_object **objs = NULL;
    size_t n = 0;
    char err[512];
    if (kube_manifest_objects("fuzz-review-resources.yaml", RESOURCES, strlen(RESOURCES), &MUTATE_PREPARE(&cfg), "default", NULL, &objs,
                              &n, err, sizeof err) != 0) {
        fprintf(stderr, "fuzz_review: resources: %s\n", err);
        abort();
    }
    kube_store_set_layer(store, KUBE_LAYER_FILES, objs, n);
    native_opt = cfg.opt;
    native_opt.native_sidecars = true;
    cfg.opt.native_sidecars = false;
    envs[0] = (review_env){.store = store, .opt = &cfg.opt};
    envs[1] = (review_env){.store = store, .opt = &native_opt};
    for (int i = 0; i < 2; i++) unskimmed[i] = envs[i], unskimmed[i].no_skim = true;
    tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    cache = mutate_cache_new(0, 0);
    check_tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    const char *e = getenv("FUZZ_REVIEW_NO_UTF8");
    check_utf8 = !(e && *e && strcmp(e, "0"));
    if (!tok || !check_tok) abort();
    return 0;
}

/* ---- helpers ------------------------------------------------------------ */

static const uint8_t *cur_data;
static size_t cur_size;
static int cur_native;

__attribute__((noreturn)) static void violation(const char *what, const review_out *out) {
    fprintf(stderr, "\nfuzz_review: invariant violated: %s (native sidecars %s)\n", what, cur_native ? "on" : "off");
    if (out) {
        fprintf(stderr, "status: %d, result: %d, error: %s\n", out->status, (int)out->result, out->error);
        if (out->body) fprintf(stderr, "body (%zu bytes): %.*s\n", out->len, (int)(out->len > 4096 ? 4096 : out->len),
                               out->body);
    }
    fprintf(stderr, "input (%zu bytes): %.*s\n", cur_size, (int)(cur_size > 4096 ? 4096 : cur_size),
            (const char *)cur_data);
    abort();
}

static json_object *get(json_object *o, const char *k) {
    json_object *v = NULL;
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, k, &v) ? v : NULL;
}

static const char *str(json_object *o, const char *k) {
    json_object *v = get(o, k);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* RFC 3629 UTF-8 (no overlongs, no surrogates, at most U+10FFFF). */
static bool valid_utf8(const unsigned char *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        unsigned cp;
        if (c >= 0xc2 && c <= 0xdf) len = 2, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef) len = 3, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4) len = 4, cp = c & 0x07;
        else return false;
        if (i + len > n) return false;
        for (size_t k = 1; k < len; k++) {
            if ((s[i + k] & 0xc0) != 0x80) return false;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
            return false;
        i += len;
    }
    return true;
}

/* The whole of text[0..len) as one JSON value (trailing whitespace allowed),
 * parsed strictly; NULL when it is not. Only used on objects and arrays,
 * which need no terminator. */
static json_object *parse_all(const char *text, size_t len) {
    json_tokener_reset(check_tok);
    json_tokener_set_flags(check_tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(check_tok, text, (int)len);
    if (!o || json_tokener_get_error(check_tok) != json_tokener_success) {
        json_object_put(o);
        return NULL;
    }
    size_t end = json_tokener_get_parse_end(check_tok);
    while (end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\r' || text[end] == '\t')) end++;
    if (end != len && !(end + 1 == len && text[end] == 0)) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* The request.uid of the input, as the codec must see it (lenient parse, the
 * same one the server uses); NULL when there is none. Caller frees. */
static char *input_uid(const uint8_t *data, size_t size) {
    json_tokener *t = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    json_object *root = json_tokener_parse_ex(t, (const char *)data, (int)size);
    char *uid = NULL;
    const char *u = str(get(root, "request"), "uid");
    if (u) uid = strdup(u);
    json_object_put(root);
    json_tokener_free(t);
    return uid;
}

static void check_patch(const char *b64, const review_out *out) {
    size_t n = strlen(b64);
    if (n == 0 || n % 4) violation("patch is not padded base64", out);
    unsigned char *raw = malloc(n / 4 * 3 + 1);
    if (!raw) abort();
    int len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
    if (len < 0) violation("patch is not base64", out);
    /* EVP_DecodeBlock counts the padding bytes as zeros. */
    if (n >= 1 && b64[n - 1] == '=') len--;
    if (n >= 2 && b64[n - 2] == '=') len--;
    json_object *patch = parse_all((const char *)raw, (size_t)len);
    if (!patch) violation("patch does not parse as JSON", out);
    if (!json_object_is_type(patch, json_type_array) || json_object_array_length(patch) == 0)
        violation("patch is not a non-empty JSON array", out);
    for (size_t i = 0; i < json_object_array_length(patch); i++) {
        json_object *op = json_object_array_get_idx(patch, i);
        const char *o = str(op, "op"), *p = str(op, "path");
        if (!o || !p || p[0] != '/') violation("patch operation without op or path", out);
        if (strcmp(o, "add") && strcmp(o, "remove") && strcmp(o, "replace")) violation("unexpected patch op", out);
        if (strcmp(o, "remove") && !get(op, "value")) violation("add/replace without a value", out);
    }
    json_object_put(patch);
    free(raw);
}

static void check_out(const review_out *out, const uint8_t *data, size_t size) {
    if (out->status != 200 && out->status != 400) violation("status is neither 200 nor 400", out);
    if ((out->status == 400) != (out->result == RESULT_REJECTED)) violation("result does not match the status", out);
    if (!out->body || out->len == 0 || strlen(out->body) != out->len) violation("body missing or with a NUL", out);
    if (check_utf8 && valid_utf8(data, size) && !valid_utf8((const unsigned char *)out->body, out->len))
        violation("body is not valid UTF-8 for a valid UTF-8 input", out);
    json_object *doc = parse_all(out->body, out->len);
    if (!doc) violation("body is not one JSON value", out);
    if (out->status == 400) {
        const char *e = str(doc, "error");
        if (!e || !*e || json_object_object_length(doc) != 1) violation("400 body is not {\"error\": ...}", out);
        /* out->error is the log line's copy: the body's text, possibly clipped. */
        /* Invalid UTF-8 reaches the body as U+FFFD, the log copy raw. */
        bool comparable = valid_utf8((const unsigned char *)out->error, strlen(out->error));
        if (comparable && (strncmp(e, out->error, strlen(out->error)) ||
                           (strlen(e) < sizeof out->error - 1 && strcmp(e, out->error))))
            violation("400 body and out.error differ", out);
        if (out->body[out->len - 1] != '\n') violation("400 body does not end with a newline", out);
    } else {
        if (!str(doc, "apiVersion") || strcmp(str(doc, "apiVersion"), "admission.k8s.io/v1") ||
            !str(doc, "kind") || strcmp(str(doc, "kind"), "AdmissionReview"))
            violation("200 body is not an admission.k8s.io/v1 AdmissionReview", out);
        json_object *r = get(doc, "response");
        const char *uid = str(r, "uid");
        char *want = input_uid(data, size);
        /* A uid with invalid UTF-8 comes back with U+FFFD in its place. */
        if (!uid || !want || (valid_utf8((const unsigned char *)want, strlen(want)) && strcmp(uid, want)))
            violation("response.uid is not request.uid", out);
        free(want);
        if (strcmp(uid, out->uid) && strlen(uid) < sizeof out->uid && valid_utf8((const unsigned char *)out->uid, strlen(out->uid)))
            violation("out.uid is not response.uid", out);
        json_object *allowed = get(r, "allowed");
        if (!json_object_is_type(allowed, json_type_boolean) || !json_object_get_boolean(allowed))
            violation("response.allowed is not true", out);
        const char *pt = str(r, "patchType"), *patch = str(r, "patch");
        if (!!pt != !!patch || (pt && strcmp(pt, "JSONPatch"))) violation("patch and patchType do not go together", out);
        if (patch) {
            if (out->result != RESULT_MUTATED) violation("a patch, but the result is not mutated", out);
            check_patch(patch, out);
        } else if (out->result == RESULT_MUTATED) {
            violation("mutated without a patch", out);
        }
        json_object *w = get(r, "warnings");
        if (w) {
            if (!json_object_is_type(w, json_type_array) || json_object_array_length(w) != out->nwarnings)
                violation("warnings are not an array of nwarnings", out);
            for (size_t i = 0; i < json_object_array_length(w); i++) {
                json_object *s = json_object_array_get_idx(w, i);
                if (!json_object_is_type(s, json_type_string) ||
                    strncmp(json_object_get_string(s), "otel-webhook: ", 14))
                    violation("a warning without the otel-webhook: prefix", out);
            }
        } else if (out->nwarnings) {
            violation("nwarnings but no warnings in the body", out);
        }
    }
    json_object_put(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    /* The server hands h2o's buffer, which is not NUL-terminated: copy the
     * input into an exact-size allocation so any overread is caught. */
    char *body = malloc(size ? size : 1);
    if (!body) abort();
    memcpy(body, data, size);
    cur_data = data;
    cur_size = size;
    for (int native = 0; native < 2; native++) {
        cur_native = native;
        review_out out, again;
        review_handle(&envs[native], tok, cache, size ? body : NULL, size, &out);
        check_out(&out, data, size);
        review_handle(&unskimmed[native], tok, NULL, size ? body : NULL, size, &again);
        if (again.status != out.status || again.len != out.len || memcmp(again.body, out.body, out.len))
            violation("the same input handled twice (managedFields skimmed and the cache, then neither) gives "
                      "different answers", &out);
        review_out_free(&again);
        review_out_free(&out);
    }
    free(body);
    return 0;
}
