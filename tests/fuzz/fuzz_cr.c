/* tests/fuzz/fuzz_cr.c - libFuzzer target for the custom resources'
 * admission answers (server/cr_admission.c over server/review.c's codec):
 * raw request bodies in, HTTP status and body out, on every route.
 *
 * Each input is handed to cr_admission_handle() for each of the six routes,
 * as the server does (exact-size buffer, no terminating NUL). These must
 * hold (abort() otherwise):
 *   - the status is 200 or 400, and the result is "rejected" for every 400;
 *   - the body is one complete JSON value; a 400 body is {"error": "..."};
 *   - a 200 body is an admission.k8s.io/v1 AdmissionReview with the
 *     request's uid; allowed is a boolean; a refusal has a status with code
 *     403 (reason Forbidden, a message, result denied, a rule) or 400 (a
 *     message, result rejected); an allowed answer has no message;
 *   - a patch comes only from a mutating route, with patchType JSONPatch,
 *     exactly when the result is "defaulted", and base64-decodes to a
 *     non-empty array of add/replace/remove operations with paths;
 *   - warnings are strings, as many as the log says;
 *   - the same input handled again gives the same answer;
 *   - the defaulting of the request's object, when it is of the route's
 *     kind, is idempotent: defaulting its result again changes nothing.
 *
 * Built and run by `make fuzz` (seeds: tests/fuzz/cr-corpus); `make test`
 * replays the seeds once (it has found nothing yet; a finding goes to
 * tests/fuzz/crashes/cr, named in the Makefile's fuzz-replay). */
#include "collector/defaults.h"
#include "mutate/defaults.h"
#include "mutate/opampbridge.h"
#include "server/cr_admission.h"
#include "server/log.h"

#include <json-c/json.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static mutate_settings cfg;
static cr_env env;
static json_tokener *tok, *check_tok;
static const uint8_t *cur_data;
static size_t cur_size;
static int cur_route;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    log_setup(1, LOG_ERROR);
    mutate_settings_init(&cfg);
    cfg.fips_disabled = strdup("receiver.zipkin,exporter.otlphttp");
    env = (cr_env){.settings = &cfg, .review_budget = 1.0};
    tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    check_tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    if (!tok || !check_tok) abort();
    return 0;
}

__attribute__((noreturn)) static void violation(const char *what, const cr_out *out) {
    fprintf(stderr, "\nfuzz_cr: invariant violated: %s (route %s)\n", what, cr_admission_path(cur_route));
    if (out) {
        fprintf(stderr, "status: %d, result: %d, rule: %s\n", out->r.status, (int)out->result,
                out->rule ? out->rule : "(none)");
        if (out->r.body)
            fprintf(stderr, "body (%zu bytes): %.*s\n", out->r.len, (int)(out->r.len > 4096 ? 4096 : out->r.len),
                    out->r.body);
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
    if (end != len) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static void check_patch(const char *b64, const cr_out *out) {
    size_t n = strlen(b64);
    if (n == 0 || n % 4) violation("patch is not padded base64", out);
    unsigned char *raw = malloc(n / 4 * 3 + 1);
    if (!raw) abort();
    int len = EVP_DecodeBlock(raw, (const unsigned char *)b64, (int)n);
    if (len < 0) violation("patch is not base64", out);
    if (n >= 1 && b64[n - 1] == '=') len--;
    if (n >= 2 && b64[n - 2] == '=') len--;
    json_object *patch = parse_all((const char *)raw, (size_t)len);
    if (!json_object_is_type(patch, json_type_array) || json_object_array_length(patch) == 0)
        violation("patch is not a non-empty JSON array", out);
    for (size_t i = 0; i < json_object_array_length(patch); i++) {
        json_object *op = json_object_array_get_idx(patch, i);
        const char *o = str(op, "op"), *p = str(op, "path");
        if (!o || !p || p[0] != '/') violation("patch operation without op or path", out);
        if (strcmp(o, "add") && strcmp(o, "remove") && strcmp(o, "replace")) violation("unexpected patch op", out);
    }
    json_object_put(patch);
    free(raw);
}

static bool mutating(int route) {
    return route == CR_MUTATE_COLLECTOR || route == CR_MUTATE_INSTRUMENTATION || route == CR_MUTATE_OPAMPBRIDGE;
}

static void check_out(const cr_out *out) {
    const review_out *r = &out->r;
    if (r->status != 200 && r->status != 400) violation("status is neither 200 nor 400", out);
    if (r->status == 400 && out->result != CR_REJECTED) violation("a 400 that is not rejected", out);
    if (!r->body || r->len == 0 || strlen(r->body) != r->len) violation("body missing or with a NUL", out);
    json_object *doc = parse_all(r->body, r->len);
    if (!doc) violation("body is not one JSON value", out);
    if (r->status == 400) {
        if (!str(doc, "error") || json_object_object_length(doc) != 1) violation("400 body is not {\"error\"}", out);
        json_object_put(doc);
        return;
    }
    if (!str(doc, "apiVersion") || strcmp(str(doc, "apiVersion"), "admission.k8s.io/v1"))
        violation("200 body is not admission.k8s.io/v1", out);
    json_object *resp = get(doc, "response"), *allowed = get(resp, "allowed"), *st = get(resp, "status");
    if (!str(resp, "uid")) violation("no response.uid", out);
    if (!json_object_is_type(allowed, json_type_boolean)) violation("allowed is not a boolean", out);
    json_object *code = get(st, "code");
    int c = json_object_is_type(code, json_type_int) ? json_object_get_int(code) : 0;
    if (!json_object_get_boolean(allowed)) {
        const char *msg = str(st, "message");
        if (!msg || !*msg) violation("a refusal without a message", out);
        if (c == 403) {
            if (!str(st, "reason") || strcmp(str(st, "reason"), "Forbidden") || out->result != CR_DENIED || !out->rule)
                violation("a 403 that is not a denial with a rule", out);
        } else if (c == 400) {
            if (out->result != CR_REJECTED) violation("a code 400 that is not rejected", out);
        } else {
            violation("a refusal with a code other than 400 or 403", out);
        }
    } else {
        if (str(st, "message")) violation("an allowed answer with a message", out);
        if (out->result == CR_DENIED || out->result == CR_REJECTED) violation("allowed, but denied or rejected", out);
        if (c && c != 200) violation("allowed with a code other than 200", out);
    }
    const char *pt = str(resp, "patchType"), *patch = str(resp, "patch");
    if (!!pt != !!patch || (pt && strcmp(pt, "JSONPatch"))) violation("patch and patchType do not go together", out);
    if (patch && !mutating(cur_route)) violation("a patch from a validating route", out);
    if (!!patch != (out->result == CR_DEFAULTED)) violation("a patch exactly when defaulted", out);
    if (patch) check_patch(patch, out);
    json_object *w = get(resp, "warnings");
    if ((w ? json_object_array_length(w) : 0) != out->nwarnings) violation("warnings and nwarnings differ", out);
    for (size_t i = 0; w && i < json_object_array_length(w); i++)
        if (!json_object_is_type(json_object_array_get_idx(w, i), json_type_string)) violation("a warning that is not a string", out);
    json_object_put(doc);
}

/* Defaulting twice is defaulting once. */
static void check_idempotent(int route, const char *body, size_t size) {
    json_tokener *t = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    json_object *root = json_tokener_parse_ex(t, body, (int)size);
    json_object *obj = get(get(root, "request"), "object");
    const char *kind = str(obj, "kind");
    char err[512];
    if (kind && json_object_is_type(obj, json_type_object)) {
        json_object *once = NULL;
        int rc = -1;
        if ((route == CR_MUTATE_COLLECTOR || route == CR_VALIDATE_COLLECTOR) && !strcmp(kind, "OpenTelemetryCollector")) {
            json_object_deep_copy(obj, &once, NULL);
            rc = collector_default_spec(once, err, sizeof err);
        } else if ((route == CR_MUTATE_INSTRUMENTATION || route == CR_VALIDATE_INSTRUMENTATION) &&
                   !strcmp(kind, "Instrumentation")) {
            json_object_deep_copy(obj, &once, NULL);
            rc = mutate_default_instrumentation(once, &cfg, err, sizeof err);
        } else if ((route == CR_MUTATE_OPAMPBRIDGE || route == CR_VALIDATE_OPAMPBRIDGE) && !strcmp(kind, "OpAMPBridge")) {
            json_object_deep_copy(obj, &once, NULL);
            rc = mutate_default_opampbridge(once, err, sizeof err);
        }
        if (once && rc == 0) {
            char *a = strdup(json_object_to_json_string_ext(once, JSON_C_TO_STRING_PLAIN));
            int rc2 = route == CR_MUTATE_COLLECTOR || route == CR_VALIDATE_COLLECTOR
                          ? collector_default_spec(once, err, sizeof err)
                      : route == CR_MUTATE_INSTRUMENTATION || route == CR_VALIDATE_INSTRUMENTATION
                          ? mutate_default_instrumentation(once, &cfg, err, sizeof err)
                          : mutate_default_opampbridge(once, err, sizeof err);
            const char *b = json_object_to_json_string_ext(once, JSON_C_TO_STRING_PLAIN);
            if (rc2 != 0 || strcmp(a, b)) violation("the defaulting is not idempotent", NULL);
            free(a);
        }
        json_object_put(once);
    }
    json_object_put(root);
    json_tokener_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    char *body = malloc(size ? size : 1);
    if (!body) abort();
    memcpy(body, data, size);
    cur_data = data;
    cur_size = size;
    for (int route = 0; route < CR_NROUTES; route++) {
        cur_route = route;
        cr_out out, again;
        cr_admission_handle(&env, (cr_route)route, tok, size ? body : NULL, size, &out);
        check_out(&out);
        cr_admission_handle(&env, (cr_route)route, tok, size ? body : NULL, size, &again);
        if (again.r.status != out.r.status || again.r.len != out.r.len || memcmp(again.r.body, out.r.body, out.r.len))
            violation("the same input handled twice gives different answers", &out);
        review_out_free(&again.r);
        review_out_free(&out.r);
        if (size) check_idempotent(route, body, size);
    }
    free(body);
    return 0;
}
