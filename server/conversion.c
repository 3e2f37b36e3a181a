/* server/conversion.c - ConversionReview in, ConversionReview out (see
 * conversion.h), the objects converted by collector/convert.c.
 *
 * Pure, like the AdmissionReview codec: no sockets, no store, so it is
 * unit-tested (tests/unit/test_conversion.c) and fuzzed
 * (tests/fuzz/fuzz_conversion.c) alone. Policy (docs/compat.md,
 * "Conversion"):
 *  - a body that is not a ConversionReview is the caller's bug: HTTP 400
 *    with the same one-line JSON error as the pod path (the reference
 *    answers an empty 400, which tells nobody anything);
 *  - the kind and apiVersion received are echoed, request.uid byte for
 *    byte;
 *  - the first object that cannot be converted fails the whole review
 *    (result Failure, convertedObjects null), as the API server needs all
 *    or nothing; so does crossing the review's budget (conversion.h), and
 *    a review whose JSON could take more memory than the request's tree
 *    budget (--max-tree-bytes) is never parsed;
 *  - integers past 64 bits are kept exactly (base/jbigint.h), never the
 *    json-c tokener's clamp. */
#include "server/conversion.h"

#include "base/alloc.h"
#include "base/jbigint.h"
#include "base/json.h"
#include "base/jfast.h"
#include "base/jtext.h"
#include "base/sbuf.h"
#include "collector/convert.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define V1 "apiextensions.k8s.io/v1"
#define V1BETA1 "apiextensions.k8s.io/v1beta1"

/* A C string copy for the log (NUL bytes as U+FFFD), cut at a character. */
static void for_log(char *dst, size_t cap, const char *s, size_t n) {
    size_t o = 0, i = 0;
    for (; i < n && o + 4 <= cap; i++) {
        if (s[i]) {
            dst[o++] = s[i];
        } else {
            memcpy(dst + o, "\xef\xbf\xbd", 3);
            o += 3;
        }
    }
    if (i < n) { /* cut: no half character at the end */
        while (o && ((unsigned char)dst[o - 1] & 0xC0) == 0x80) o--;
        if (o && ((unsigned char)dst[o - 1] & 0xC0) == 0xC0) o--;
    }
    dst[o] = 0;
}

static void reject(conversion_out *out, const char *fmt, const char *arg) {
    char *msg = xasprintf(fmt, arg ? arg : "");
    json_object *o = jnew_obj();
    jset(o, "error", jnew_str(msg));
    char *body = jtext(o, &out->len);
    json_object_put(o);
    out->body = xrealloc(body, out->len + 2);
    out->body[out->len++] = '\n';
    out->body[out->len] = 0;
    out->status = 400;
    for_log(out->message, sizeof out->message, msg, strlen(msg));
    free(msg);
}

static metrics_conversion direction_of(const char *desired) {
    if (desired && strcmp(desired, COLLECTOR_CONVERT_V1BETA1) == 0) return CONV_TO_V1BETA1;
    if (desired && strcmp(desired, COLLECTOR_CONVERT_V1ALPHA1) == 0) return CONV_TO_V1ALPHA1;
    return CONV_TO_OTHER;
}

/* The answer: convertedObjects (taken; NULL for a failure) or message. */
static void respond(conversion_out *out, const char *kind, const char *api, json_object *uid,
                    json_object *converted, const char *message) {
    json_object *o = jnew_obj(), *r = jnew_obj(), *res = jnew_obj();
    jset(o, "kind", jnew_str(kind));
    jset(o, "apiVersion", jnew_str(api));
    jset(r, "uid", jnew_strn(json_object_get_string(uid), (size_t)json_object_get_string_len(uid)));
    jset(r, "convertedObjects", converted);
    jset_obj(res, "metadata");
    jset_str(res, "status", converted ? "Success" : "Failure");
    if (!converted) jset_str(res, "message", message);
    jset(r, "result", res);
    jset(o, "response", r);
    out->body = jtext(o, &out->len);
    out->status = 200;
    out->failed = converted == NULL;
    if (message) for_log(out->message, sizeof out->message, message, strlen(message));
    json_object_put(o);
}

/* "objects[2] (ns/name)" for messages. */
static void where(char *dst, size_t cap, size_t i, json_object *obj) {
    json_object *meta = jmap(obj, "metadata");
    const char *ns = jstr(meta, "namespace"), *name = jstr(meta, "name");
    if (name) snprintf(dst, cap, "objects[%zu] (%s%s%s)", i, ns ? ns : "", ns ? "/" : "", name);
    else snprintf(dst, cap, "objects[%zu]", i);
}

/* The string or scalar at keys in body, parsed alone (NULL: none). */
static json_object *scalar_at(json_tokener *tok, const char *body, size_t len, const char *const *keys, size_t n) {
    const char *v, *ve;
    if (!jfast_find(body, body + len, keys, n, &v, &ve)) return NULL;
    return jparse_scalar(tok, v, (size_t)(ve - v));
}

/* A review whose tree could pass the budget is never parsed (json-c builds
 * whatever it reads): its apiVersion, kind and uid are read from the text
 * (base/jfast.h's jfast_find) and it fails whole, as when an object cannot
 * be converted. */
static void over_budget(json_tokener *tok, size_t budget, const char *body, size_t len, conversion_out *out) {
    static const char *const api_k[] = {"apiVersion"}, *const kind_k[] = {"kind"}, *const uid_k[] = {"request", "uid"},
                             *const dv_k[] = {"request", "desiredAPIVersion"};
    json_object *api = scalar_at(tok, body, len, api_k, 1), *kind = scalar_at(tok, body, len, kind_k, 1),
                *uid = scalar_at(tok, body, len, uid_k, 2), *dv = scalar_at(tok, body, len, dv_k, 2);
    const char *a = json_object_is_type(api, json_type_string) ? json_object_get_string(api) : NULL;
    const char *k = json_object_is_type(kind, json_type_string) ? json_object_get_string(kind) : NULL;
    if (!a || (strcmp(a, V1) != 0 && strcmp(a, V1BETA1) != 0))
        reject(out, "unsupported apiVersion \"%s\": expected " V1 " or " V1BETA1, a ? a : "");
    else if (!k || strcmp(k, "ConversionReview") != 0)
        reject(out, "unsupported kind \"%s\": expected ConversionReview", k ? k : "");
    else if (!json_object_is_type(uid, json_type_string) || json_object_get_string_len(uid) == 0)
        reject(out, "request.uid is missing%s", NULL);
    else {
        for_log(out->uid, sizeof out->uid, json_object_get_string(uid), (size_t)json_object_get_string_len(uid));
        if (json_object_is_type(dv, json_type_string)) {
            for_log(out->desired, sizeof out->desired, json_object_get_string(dv), (size_t)json_object_get_string_len(dv));
            out->direction = direction_of(json_object_get_string(dv));
        }
        /* review_over_message's sentence (server/review.h), without the
         * admission codec linked in. */
        char *msg = xasprintf("the ConversionReview would take more than the %zu bytes of memory otel-webhook gives "
                              "one request (--max-tree-bytes); nothing converted",
                              budget);
        respond(out, k, a, uid, NULL, msg);
        free(msg);
    }
    json_object_put(api);
    json_object_put(kind);
    json_object_put(uid);
    json_object_put(dv);
}

void conversion_handle(json_tokener *tok, const char *body, size_t len, conversion_out *out) {
    conversion_handle_within(tok, 0, body, len, out);
}

void conversion_handle_within(json_tokener *tok, size_t max_tree, const char *body, size_t len, conversion_out *out) {
    memset(out, 0, sizeof *out);
    out->direction = CONV_TO_OTHER;
    json_object *root = NULL;
    if (!body || len == 0) {
        reject(out, "empty request body%s", NULL);
        return;
    }
    if (max_tree && jfast_cost_bound(body, len) > max_tree) {
        over_budget(tok, max_tree, body, len, out);
        return;
    }
    char perr[160];
    size_t mlen = 0;
    char *marked = jbigint_mark(body, len, &mlen);
    int prc = marked ? jparse_object(tok, marked, mlen, &root, perr, sizeof perr)
                     : jparse_object(tok, body, len, &root, perr, sizeof perr);
    free(marked);
    if (prc == 0 && marked) jbigint_restore(root);
    if (prc != 0) {
        if (prc < 0) reject(out, "%s", perr);
        else reject(out, "expected a ConversionReview object%s", NULL);
        goto done;
    }
    const char *api = jstr(root, "apiVersion"), *kind = jstr(root, "kind");
    if (!api || (strcmp(api, V1) != 0 && strcmp(api, V1BETA1) != 0)) {
        reject(out, "unsupported apiVersion \"%s\": expected " V1 " or " V1BETA1, api ? api : "");
        goto done;
    }
    if (!kind || strcmp(kind, "ConversionReview") != 0) {
        reject(out, "unsupported kind \"%s\": expected ConversionReview", kind ? kind : "");
        goto done;
    }
    json_object *req = jget(root, "request");
    if (!json_object_is_type(req, json_type_object)) {
        reject(out, "the ConversionReview has no request%s", NULL);
        goto done;
    }
    json_object *uid = jget(req, "uid");
    if (!json_object_is_type(uid, json_type_string) || json_object_get_string_len(uid) == 0) {
        reject(out, "request.uid is missing%s", NULL);
        goto done;
    }
    for_log(out->uid, sizeof out->uid, json_object_get_string(uid), (size_t)json_object_get_string_len(uid));
    json_object *dv = jget(req, "desiredAPIVersion"), *objs = jget(req, "objects");
    if (dv && !json_object_is_type(dv, json_type_string)) {
        reject(out, "request.desiredAPIVersion: expected a string%s", NULL);
        goto done;
    }
    if (objs && !json_object_is_type(objs, json_type_array)) {
        reject(out, "request.objects: expected a list%s", NULL);
        goto done;
    }
    const char *desired = dv ? json_object_get_string(dv) : "";
    for_log(out->desired, sizeof out->desired, desired, (size_t)(dv ? json_object_get_string_len(dv) : 0));
    out->direction = direction_of(desired);
    if (out->direction == CONV_TO_OTHER) {
        char *msg = xasprintf("request.desiredAPIVersion \"%s\": expected " COLLECTOR_CONVERT_V1ALPHA1
                              " or " COLLECTOR_CONVERT_V1BETA1,
                              out->desired);
        respond(out, kind, api, uid, NULL, msg);
        free(msg);
        goto done;
    }
    size_t n = jlen(objs);
    if (n > CONVERSION_MAX_OBJECTS) {
        char *msg = xasprintf("request.objects: %zu objects, over the limit of %d per ConversionReview", n,
                              CONVERSION_MAX_OBJECTS);
        respond(out, kind, api, uid, NULL, msg);
        free(msg);
        goto done;
    }
    /* The answer is written as the objects are converted, each tree freed
     * at once: what a review holds is its input and the answer's text. */
    collector_convert_budget budget = {
        .yaml = {.what = "the ConversionReview",
                 .memory = CONVERSION_YAML_MEMORY_BASE + len * CONVERSION_YAML_MEMORY_PER_BYTE,
                 .alias_bytes = CONVERSION_YAML_ALIAS_BYTES},
    };
    sbuf ans = SBUF_INIT;
    sbuf_puts(&ans, "{\"kind\":");
    jtext_string(&ans, kind, strlen(kind));
    sbuf_puts(&ans, ",\"apiVersion\":");
    jtext_string(&ans, api, strlen(api));
    sbuf_puts(&ans, ",\"response\":{\"uid\":");
    jtext_string(&ans, json_object_get_string(uid), (size_t)json_object_get_string_len(uid));
    sbuf_puts(&ans, ",\"convertedObjects\":[");
    for (size_t i = 0; i < n; i++) {
        json_object *obj = json_object_array_get_idx(objs, i);
        char err[512] = "", at[320];
        collector_convert_notes notes;
        size_t left = CONVERSION_MAX_ANSWER > ans.len ? CONVERSION_MAX_ANSWER - ans.len : 1;
        budget.yaml_bytes = left;
        json_object *c = collector_convert_budgeted(obj, desired, &notes, &budget, err, sizeof err);
        where(at, sizeof at, i, obj);
        if (!c) {
            char *msg = xasprintf("%s: %s", at, err);
            sbuf_free(&ans);
            respond(out, kind, api, uid, NULL, msg);
            free(msg);
            goto done;
        }
        if (notes.config[0] || notes.fields[0]) {
            if (out->nnotes++ == 0)
                snprintf(out->first_note, sizeof out->first_note, "%s: %s", at,
                         notes.config[0] ? notes.config : notes.fields);
        }
        if (i) sbuf_add(&ans, ",", 1);
        jtext_append(&ans, c);
        json_object_put(c);
        if (ans.len > CONVERSION_MAX_ANSWER) {
            char *msg = xasprintf("%s: the converted objects take more than the %zu bytes allowed for one "
                                  "ConversionReview's answer",
                                  at, CONVERSION_MAX_ANSWER);
            sbuf_free(&ans);
            out->nnotes = 0;
            respond(out, kind, api, uid, NULL, msg);
            free(msg);
            goto done;
        }
    }
    sbuf_puts(&ans, "],\"result\":{\"metadata\":{},\"status\":\"Success\"}}}");
    out->nobjects = n;
    out->status = 200;
    out->body = sbuf_take(&ans, &out->len);
done:
    json_object_put(root);
}

void conversion_out_free(conversion_out *out) {
    free(out->body);
    out->body = NULL;
}
