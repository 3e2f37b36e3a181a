/* tests/fuzz/fuzz_conversion.c - libFuzzer target for the ConversionReview
 * codec (server/conversion.c) and the collector conversion behind it
 * (collector/convert.c): raw request bodies in, HTTP status and body out.
 *
 * Each input is handed to conversion_handle() as the server does (the body
 * bytes and their length, no terminating NUL). These must hold (abort()
 * otherwise):
 *   - the status is 200 or 400; the body is one complete JSON value, and a
 *     400 body is {"error": "<non-empty string>"} ending in a newline;
 *   - a 200 body is a ConversionReview with the request's kind, apiVersion
 *     and uid (bytes of it that are not UTF-8 as U+FFFD), and result.status Success (convertedObjects: as many objects
 *     as the request had, each an OpenTelemetryCollector of the desired
 *     version) or Failure (convertedObjects null, a non-empty message);
 *   - for an input that is valid UTF-8 (the API server's always is), every
 *     object converted to v1alpha1, converted to v1beta1 and back to
 *     v1alpha1, is the same object (the round trip reaches its fixpoint in
 *     one step: nothing is lost or changed twice; bytes that are not UTF-8
 *     become U+FFFD on the first trip, which changes the text once);
 *   - the same input handled again with the same (reused) tokener gives the
 *     same status and body.
 *
 * Built and run by `make fuzz` (seeds: tests/fuzz/conversion-corpus); `make
 * test` replays the seeds and tests/fuzz/crashes/conversion once. */
#include "collector/convert.h"
#include "server/conversion.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_tokener *tok, *check_tok;
static const uint8_t *cur_data;
static size_t cur_size;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    tok = json_tokener_new_ex(CONVERSION_MAX_DEPTH);
    check_tok = json_tokener_new_ex(CONVERSION_MAX_DEPTH);
    if (!tok || !check_tok) abort();
    return 0;
}

__attribute__((noreturn)) static void violation(const char *what, const conversion_out *out) {
    fprintf(stderr, "\nfuzz_conversion: invariant violated: %s\n", what);
    if (out && out->body)
        fprintf(stderr, "status %d, body (%zu bytes): %.*s\n", out->status, out->len,
                (int)(out->len > 4096 ? 4096 : out->len), out->body);
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
        size_t len;
        unsigned cp;
        if (c < 0x80) {
            i++;
            continue;
        }
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

static bool same(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static json_object *parse_all(const char *text, size_t len) {
    json_tokener_reset(check_tok);
    json_tokener_set_flags(check_tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(check_tok, text, (int)len);
    if (!o || json_tokener_get_error(check_tok) != json_tokener_success) {
        json_object_put(o);
        return NULL;
    }
    size_t end = json_tokener_get_parse_end(check_tok);
    while (end < len && (text[end] == '\n' || text[end] == ' ')) end++;
    if (end != len) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

/* v1alpha1 -> v1beta1 -> v1alpha1 gives the same object. */
static void check_fixpoint(json_object *alpha, const conversion_out *out) {
    char err[640];
    json_object *b = collector_convert(alpha, COLLECTOR_CONVERT_V1BETA1, NULL, err, sizeof err);
    if (!b) violation("a converted v1alpha1 object does not convert to v1beta1", out);
    json_object *a2 = collector_convert(b, COLLECTOR_CONVERT_V1ALPHA1, NULL, err, sizeof err);
    if (!a2) violation("a v1alpha1 object converted there and back fails the second time", out);
    if (!json_object_equal(alpha, a2)) {
        fprintf(stderr, "first: %s\nagain: %s\n", json_object_to_json_string(alpha), json_object_to_json_string(a2));
        violation("v1alpha1 -> v1beta1 -> v1alpha1 changed the object", out);
    }
    json_object_put(b);
    json_object_put(a2);
}

static void check_out(const conversion_out *out, const uint8_t *data, size_t size) {
    if (out->status != 200 && out->status != 400) violation("status is neither 200 nor 400", out);
    if (!out->body || out->len == 0 || strlen(out->body) != out->len) violation("body missing or with a NUL", out);
    json_object *doc = parse_all(out->body, out->len);
    if (!doc) violation("body is not one JSON value", out);
    if (out->status == 400) {
        const char *e = str(doc, "error");
        if (!e || !*e || json_object_object_length(doc) != 1) violation("400 body is not {\"error\": ...}", out);
        if (out->body[out->len - 1] != '\n') violation("400 body does not end with a newline", out);
        json_object_put(doc);
        return;
    }
    json_tokener *t = json_tokener_new_ex(CONVERSION_MAX_DEPTH);
    json_object *in = json_tokener_parse_ex(t, (const char *)data, (int)size), *req = get(in, "request");
    if (!same(str(doc, "kind"), str(in, "kind")) || !same(str(doc, "apiVersion"), str(in, "apiVersion")))
        violation("kind or apiVersion not echoed", out);
    json_object *r = get(doc, "response"), *res = get(r, "result"), *objs = get(r, "convertedObjects");
    /* A uid with bytes that are not UTF-8 comes back with U+FFFD in their
     * place (base/jtext.h). */
    json_object *ruid = get(req, "uid");
    if (!json_object_is_type(get(r, "uid"), json_type_string) ||
        (valid_utf8((const unsigned char *)json_object_get_string(ruid), (size_t)json_object_get_string_len(ruid)) &&
         !json_object_equal(get(r, "uid"), ruid)))
        violation("response.uid is not request.uid", out);
    const char *status = str(res, "status"), *desired = str(req, "desiredAPIVersion");
    if (!json_object_is_type(get(res, "metadata"), json_type_object)) violation("result.metadata is not {}", out);
    if (same(status, "Success")) {
        if (out->failed) violation("Success but out.failed", out);
        size_t want = json_object_is_type(get(req, "objects"), json_type_array)
                          ? json_object_array_length(get(req, "objects"))
                          : 0;
        if (!json_object_is_type(objs, json_type_array) || json_object_array_length(objs) != want)
            violation("convertedObjects is not one object per request object", out);
        for (size_t i = 0; i < want; i++) {
            json_object *o = json_object_array_get_idx(objs, i);
            if (!same(str(o, "apiVersion"), desired) || !same(str(o, "kind"), "OpenTelemetryCollector"))
                violation("a converted object is not an OpenTelemetryCollector of the desired version", out);
            if (same(desired, COLLECTOR_CONVERT_V1ALPHA1) && valid_utf8(data, size)) check_fixpoint(o, out);
        }
    } else if (same(status, "Failure")) {
        if (!out->failed || objs != NULL) violation("Failure with convertedObjects", out);
        const char *m = str(res, "message");
        if (!m || !*m) violation("Failure without a message", out);
    } else {
        violation("result.status is neither Success nor Failure", out);
    }
    json_object_put(in);
    json_tokener_free(t);
    json_object_put(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > (1u << 20)) return 0;
    char *body = malloc(size ? size : 1);
    if (!body) abort();
    memcpy(body, data, size);
    cur_data = data;
    cur_size = size;
    conversion_out out, again;
    conversion_handle(tok, size ? body : NULL, size, &out);
    check_out(&out, data, size);
    conversion_handle(tok, size ? body : NULL, size, &again);
    if (again.status != out.status || again.len != out.len || memcmp(again.body, out.body, out.len))
        violation("the same input handled twice gives different answers", &out);
    conversion_out_free(&again);
    conversion_out_free(&out);
    free(body);
    return 0;
}
