/* reconcile/compare.c - when an apply is skipped, and when it must be a
 * recreate (compare.h).
 *
 * When is an apply skipped? Server-side apply answers 200 even when nothing
 * changes, so the decision is local: the object is left alone when (a) the
 * live object carries our digest annotation of exactly this desired object
 * and (b) every field of the desired object has the same value in the live
 * one (a subset comparison: fields the server adds, defaults, status and
 * metadata it owns are not looked at; an empty map or list matches an
 * absent one, because the API server drops those). (b) alone would miss a
 * field removed from the desired object; (a) alone would miss someone
 * editing a field we manage. Stamping the digest into the desired object
 * before comparing makes (a) part of (b). The status write is skipped the
 * same way (status.c). The same walk lists the fields that differ, for
 * `run --dry-run` (reconcile_diff).
 *
 * When is an apply a recreate? When a workload's field the API server
 * will not change in place differs (reconcile.md 5.2), seen here before
 * the apply, or refused by the server with a 422 that names nothing but
 * immutable fields (apply.c asks reconcile_immutable_refusal). */
#include "reconcile/compare.h"

#include "base/alloc.h"
#include "base/jtext.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "reconcile/run.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool empty(json_object *v) {
    if (!v) return true;
    switch (json_object_get_type(v)) {
    case json_type_null: return true;
    case json_type_object: return json_object_object_length(v) == 0;
    case json_type_array: return json_object_array_length(v) == 0;
    default: return false;
    }
}

/* The API server stores quantities in a canonical form ("1024Mi" comes
 * back as "1Gi", 0.5 as "500m"), so they are compared by value, as the
 * reference's semantic DeepEqual does. */
bool reconcile_quantity(const char *s, long double *out) {
    static const struct {
        const char *suffix;
        long double mult;
    } SUFFIXES[] = {{"Ki", 0x1p10L}, {"Mi", 0x1p20L}, {"Gi", 0x1p30L}, {"Ti", 0x1p40L}, {"Pi", 0x1p50L},
                    {"Ei", 0x1p60L}, {"n", -1e9L},    {"u", -1e6L},    {"m", -1e3L},    {"k", 1e3L},
                    {"M", 1e6L},     {"G", 1e9L},     {"T", 1e12L},    {"P", 1e15L},    {"E", 1e18L}};
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9') && !(*p == '.' && p[1] >= '0' && p[1] <= '9')) return false;
    char *end;
    long double v = strtold(s, &end);
    if (end == s) return false;
    if (*end) {
        size_t i;
        for (i = 0; i < sizeof SUFFIXES / sizeof *SUFFIXES; i++)
            if (strcmp(end, SUFFIXES[i].suffix) == 0) break;
        if (i == sizeof SUFFIXES / sizeof *SUFFIXES) return false;
        /* negative: divide, which rounds once ("500m" is exactly 0.5) */
        v = SUFFIXES[i].mult < 0 ? v / -SUFFIXES[i].mult : v * SUFFIXES[i].mult;
    }
    *out = v;
    return true;
}

static bool number_of(json_object *o, bool quantities, long double *out) {
    if (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double)) {
        *out = json_object_get_double(o);
        return true;
    }
    return quantities && json_object_is_type(o, json_type_string) &&
           reconcile_quantity(json_object_get_string(o), out);
}

/* One walk serves both questions: with fn NULL it answers "is want a
 * subset of have" and stops at the first difference; with fn it goes on
 * and reports every differing field, so a dry run shows exactly what the
 * decision saw (no second comparison to drift from this one). */
typedef struct walk {
    reconcile_diff_fn fn;
    void *ud;
    sbuf path;
} walk;

static size_t report(walk *w, json_object *have, json_object *want) {
    if (w->fn) w->fn(w->ud, w->path.len ? w->path.s : "", have, want);
    return 1;
}

/* A key as a path step: .name, or ["other.key"] for keys that are not
 * plain words (labels, annotations, ConfigMap files). */
static void push_key(sbuf *p, const char *k) {
    bool plain = (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') || *k == '_';
    for (const char *c = k; plain && *c; c++)
        plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
                *c == '-';
    if (plain) {
        if (p->len) sbuf_putc(p, '.');
        sbuf_puts(p, k);
    } else {
        sbuf_putc(p, '[');
        jtext_string(p, k, strlen(k));
        sbuf_putc(p, ']');
    }
}

/* The number of differences (at most 1 without fn). q: below a "requests"
 * or "limits" map, where strings are quantities (and only there: "1" and
 * "1.0" are different env values). */
static size_t walk_q(json_object *want, json_object *have, bool q, walk *w) {
    if (empty(want)) return 0;
    json_type t = json_object_get_type(want);
    long double a, b;
    if (t == json_type_string && json_object_is_type(have, json_type_string) &&
        strcmp(json_object_get_string(want), json_object_get_string(have)) == 0)
        return 0;
    if ((t == json_type_int || t == json_type_double || t == json_type_string) && number_of(want, q, &a) &&
        number_of(have, q, &b))
        return a == b || fabsl(a - b) <= 1e-12L * fmaxl(fabsl(a), fabsl(b)) /* "0.1m" against "100u" */
                   ? 0
                   : report(w, have, want);
    if (!have || json_object_get_type(have) != t) return report(w, have, want);
    size_t n = 0, at = w->path.len;
    switch (t) {
    case json_type_object: {
        json_object_object_foreach(want, k, v) {
            json_object *h = NULL;
            json_object_object_get_ex(have, k, &h);
            if (w->fn) push_key(&w->path, k);
            n += walk_q(v, h, q || strcmp(k, "requests") == 0 || strcmp(k, "limits") == 0, w);
            sbuf_truncate(&w->path, at);
            if (n && !w->fn) return n;
        }
        return n;
    }
    case json_type_array: {
        size_t nw = json_object_array_length(want), nh = json_object_array_length(have);
        if (nw != nh && !w->fn) return 1;
        /* Element by element while both have one, then what only one has:
         * a list that grew or shrank shows the elements it gained or lost. */
        for (size_t i = 0; i < (nw > nh ? nw : nh); i++) {
            if (w->fn) sbuf_printf(&w->path, "[%zu]", i);
            json_object *wi = i < nw ? json_object_array_get_idx(want, i) : NULL;
            json_object *hi = i < nh ? json_object_array_get_idx(have, i) : NULL;
            n += wi && hi ? walk_q(wi, hi, q, w) : report(w, hi, wi);
            sbuf_truncate(&w->path, at);
            if (n && !w->fn) return n;
        }
        return n;
    }
    case json_type_string:
        return strcmp(json_object_get_string(want), json_object_get_string(have)) == 0 ? 0 : report(w, have, want);
    case json_type_boolean:
        return json_object_get_boolean(want) == json_object_get_boolean(have) ? 0 : report(w, have, want);
    default: return report(w, have, want);
    }
}

bool reconcile_subset(json_object *want, json_object *have) {
    walk w = {NULL, NULL, SBUF_INIT};
    return walk_q(want, have, false, &w) == 0;
}

size_t reconcile_diff(json_object *want, json_object *have, reconcile_diff_fn fn, void *ud) {
    walk w = {fn, ud, SBUF_INIT};
    size_t n = walk_q(want, have, false, &w);
    sbuf_free(&w.path);
    return n;
}

/* json-c's writer, not base/jtext: the digest of this text is stored on
 * live objects, so it must not change between versions. */
const char *reconcile_json_text(json_object *o) {
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s) base_oom();
    return s;
}

/* Rendered objects have a fixed key order, so equal objects give equal
 * text and equal digests. */
void reconcile_digest(json_object *o, char out[RECONCILE_DIGEST_SIZE]) {
    const char *s = reconcile_json_text(o);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL) != 1) base_oom(); /* its only failure */
    for (int i = 0; i < 8; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

void reconcile_stamp_digest(json_object *obj) {
    char hash[RECONCILE_DIGEST_SIZE];
    reconcile_digest(obj, hash);
    jset_str(jobj_at(jmap(obj, "metadata"), "annotations"), RECONCILE_HASH_ANNOTATION, hash);
}

/* A changed selector cannot adopt the old pods, so they go with the old
 * object; a StatefulSet whose serviceName or claim templates changed keeps
 * its selector, so the recreated object adopts its pods. */
const char *reconcile_immutable_change(json_object *desired, json_object *live, bool *orphan) {
    json_object *ds = jmap(desired, "spec"), *ls = jmap(live, "spec");
    const char *kind = jstr(desired, "kind");
    *orphan = false;
    if (!live || !ls) return NULL;
    if (!json_object_equal(jmap(ds, "selector"), jmap(ls, "selector")))
        return "spec.selector changed";
    if (!kind || strcmp(kind, "StatefulSet") != 0) return NULL;
    *orphan = true;
    const char *dn = jstr(ds, "serviceName"), *ln = jstr(ls, "serviceName");
    if (strcmp(dn ? dn : "", ln ? ln : "") != 0) return "spec.serviceName changed";
    json_object *dv = jarr(ds, "volumeClaimTemplates"), *lv = jarr(ls, "volumeClaimTemplates");
    size_t n = dv ? json_object_array_length(dv) : 0;
    if (n != (lv ? json_object_array_length(lv) : 0)) return "spec.volumeClaimTemplates changed";
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(dv, i), *l = json_object_array_get_idx(lv, i);
        json_object *dm = jmap(d, "metadata"), *lm = jmap(l, "metadata");
        const char *a = jstr(dm, "name"), *b = jstr(lm, "name");
        if (strcmp(a ? a : "", b ? b : "") != 0 || !reconcile_subset(jmap(dm, "labels"), jmap(lm, "labels")) ||
            !reconcile_subset(jmap(dm, "annotations"), jmap(lm, "annotations")) ||
            !reconcile_subset(jmap(d, "spec"), jmap(l, "spec")))
            return "spec.volumeClaimTemplates changed";
    }
    return NULL;
}

static bool immutable_text(const char *s) {
    return s && (strstr(s, "field is immutable") || strstr(s, "Forbidden: updates to statefulset spec"));
}

/* StatefulSets word the refusal differently from everything else. A 422
 * that also names an invalid value would refuse the new object too, so one
 * such cause makes it no refusal of ours. */
bool reconcile_immutable_refusal(int code, const char *body) {
    if (code != 422 || !body) return false;
    json_object *j = json_tokener_parse(body);
    json_object *causes = jarr(jmap(j, "details"), "causes");
    bool ok = causes ? json_object_array_length(causes) > 0 : immutable_text(jstr(j, "message"));
    for (size_t i = 0; causes && i < json_object_array_length(causes); i++)
        if (!immutable_text(jstr(json_object_array_get_idx(causes, i), "message"))) ok = false;
    json_object_put(j);
    return ok;
}
