/* tests/unit/test_jfast.c - the one-pass parse (base/jfast.c) against
 * json-c's strict tokener: every body it takes gives json-c's tree, member
 * for member and in order (compared as json-c's own text of both trees);
 * every body outside its subset is declined with nothing built; the
 * managedFields skip gives the tree json-c builds from the skimmed copy,
 * and members left out are left out of json-c's tree by the prune. The
 * budget: each part's charge exactly (a body that fits exactly, one byte
 * or one object over), the flood stopped where it passes, the fallback's
 * bound never under the charge and blind to structure inside strings. */
#include "base/jfast.h"
#include "base/jhash.h"
#include "base/jkeys.h"
#include "tests/unit/util.h"

#include <check.h>
#include <json-c/linkhash.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int FLAGS = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

/* json-c's tree of body as its text, or NULL when json-c refuses it. */
static char *jsonc_text(const char *body, size_t len) {
    json_tokener *tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_object *o = json_tokener_parse_ex(tok, body, (int)len);
    char *text = NULL;
    if (o && json_tokener_get_error(tok) == json_tokener_success) {
        size_t end = json_tokener_get_parse_end(tok);
        while (end < len && strchr(" \t\r\n", body[end]) && body[end]) end++;
        if (end == len) text = strdup(json_object_to_json_string_ext(o, FLAGS));
    }
    json_object_put(o);
    json_tokener_free(tok);
    return text;
}

/* Taken, and json-c's tree. */
static void same(const char *body, size_t len, const jfast_path *skip, const char *want) {
    json_object *o = (json_object *)1;
    int rc = jfast_parse(body, len, skip, &o);
    ck_assert_msg(rc == 1, "declined: %.*s", (int)len, body);
    const char *got = json_object_to_json_string_ext(o, FLAGS);
    char *ref = want ? strdup(want) : jsonc_text(body, len);
    ck_assert_msg(ref != NULL, "json-c refuses %.*s", (int)len, body);
    ck_assert_msg(strcmp(got, ref) == 0, "%.*s: got %s, json-c %s", (int)len, body, got, ref);
    free(ref);
    json_object_put(o);
}

static void declined(const char *body, size_t len) {
    json_object *o = (json_object *)1;
    ck_assert_msg(jfast_parse(body, len, NULL, &o) == 0, "taken: %.*s", (int)len, body);
    ck_assert_ptr_null(o);
}

#define SAME(s) same(s, sizeof(s) - 1, NULL, NULL)
#define DECLINED(s) declined(s, sizeof(s) - 1)

START_TEST(takes_what_the_api_server_sends) {
    SAME("{}");
    SAME(" \r\n\t{ } \n");
    SAME("{\"a\":[]}");
    SAME("{\"a\":[1,-2,0,true,false,null,\"x\",{},[[]]]}");
    SAME("{\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"x:1\",\"ports\":"
         "[{\"containerPort\":8080,\"protocol\":\"TCP\"}]}],\"priority\":0},\"status\":{}}");
    SAME("{\"n\":999999999999999999,\"m\":-999999999999999999}");
    SAME("{\"\":\"\",\"k\":\"\"}");
    /* Go's encoding/json escapes <, > and & as \u003c, \u003e, \u0026. */
    SAME("{\"a\":\"http://x/?a=1\\u0026b=\\u003cc\\u003e\"}");
    SAME("{\"a\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}");
    SAME("{\"a\":\"\\u00e9\\u07ff\\u0800\\uffff\\u0041\\u007f\\u0080\"}");
    SAME("{\"a\":\"caf\xc3\xa9 \xff\xfe raw\"}");
    SAME("{\"a\":\"\x7f\"}");
    /* 24 levels (the object, 22 arrays, the number), the subset's deepest. */
    SAME("{\"a\":[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]}");
    /* A long key goes through the heap. */
    char body[600];
    snprintf(body, sizeof body, "{\"%0300d\":1}", 7);
    same(body, strlen(body), NULL, NULL);
}
END_TEST

/* Members whose key is a field name of the API hold the vocabulary's
 * literal as json-c's constant key; any other key is the member's own
 * copy. The tree is json-c's either way, a table that grows keeps which
 * is which, and a key twice is declined whether or not it is known. */
static void key_kind(json_object *o, const char *key, bool literal) {
    struct lh_entry *e = NULL;
    for (struct lh_entry *x = lh_table_head(json_object_get_object(o)); x; x = lh_entry_next(x))
        if (strcmp(lh_entry_k(x), key) == 0) e = x;
    ck_assert_msg(e != NULL, "no member %s", key);
    const char *lit = jkeys_known(key, strlen(key), jhash_key(key, strlen(key)));
    if (literal) {
        ck_assert_msg(lh_entry_k_is_constant(e) && lh_entry_k(e) == lit, "%s is not the literal", key);
    } else {
        ck_assert_ptr_null(lit);
        ck_assert_msg(!lh_entry_k_is_constant(e), "%s is held as constant", key);
    }
}

START_TEST(api_field_names_are_literals) {
    static const char body[] = "{\"name\":\"a\",\"nam\":1,\"names\":2,\"Name\":3,\"app.kubernetes.io/name\":4,"
                               "\"spec\":{\"containers\":[{\"env\":[{\"name\":\"X\",\"valueFrom\":{\"fieldRef\":"
                               "{\"fieldPath\":\"status.podIP\"}}}]}]},\"ephemeral-storage\":\"1Gi\",\"\":0}";
    same(body, sizeof body - 1, NULL, NULL);
    json_object *o;
    ck_assert_int_eq(jfast_parse(body, sizeof body - 1, NULL, &o), 1);
    key_kind(o, "name", true);
    key_kind(o, "spec", true);
    key_kind(o, "ephemeral-storage", true);
    key_kind(o, "nam", false);
    key_kind(o, "names", false);
    key_kind(o, "Name", false);
    key_kind(o, "app.kubernetes.io/name", false);
    key_kind(o, "", false);
    json_object *e = json_object_array_get_idx(
        json_object_object_get(json_object_array_get_idx(json_object_object_get(json_object_object_get(o, "spec"),
                                                                                "containers"), 0), "env"), 0);
    key_kind(e, "valueFrom", true);
    key_kind(json_object_object_get(e, "valueFrom"), "fieldRef", true);
    json_object_put(o);

    /* Forty members: the table grows twice, its keys stay what they were. */
    static const char *const known[] = {"kind", "apiVersion", "metadata", "spec", "status", "name", "namespace",
                                        "labels", "annotations", "image", "command", "args", "env", "value",
                                        "valueFrom", "volumeMounts", "mountPath", "ports", "protocol", "resources",
                                        "limits", "requests", "cpu", "memory", "volumes", "emptyDir", "sizeLimit",
                                        "configMap", "secret", "items", "key", "path", "uid", "operation", "object",
                                        "containers", "initContainers", "restartPolicy", "readOnly", "subPath"};
    char big[2048];
    size_t n = 0;
    big[n++] = '{';
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        n += (size_t)snprintf(big + n, sizeof big - n, "%s\"%s\":%zu,\"x-%s\":%zu", i ? "," : "", known[i], i, known[i], i);
    big[n++] = '}';
    same(big, n, NULL, NULL);
    ck_assert_int_eq(jfast_parse(big, n, NULL, &o), 1);
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        char x[64];
        snprintf(x, sizeof x, "x-%s", known[i]);
        key_kind(o, known[i], true);
        key_kind(o, x, false);
    }
    json_object_put(o);

    DECLINED("{\"name\":1,\"name\":2}");
    DECLINED("{\"name\":1,\"x\":2,\"name\":3}");
    DECLINED("{\"nam\":1,\"nam\":2}");
    DECLINED("{\"a\":{\"env\":[],\"b\":1,\"env\":[]}}");
}
END_TEST

START_TEST(declines_the_rest) {
    DECLINED("");
    DECLINED("   ");
    DECLINED("[]");
    DECLINED("\"s\"");
    DECLINED("42");
    DECLINED("{");
    DECLINED("{\"a\"");
    DECLINED("{\"a\":}");
    DECLINED("{\"a\":1,}");
    DECLINED("{\"a\":[1,]}");
    DECLINED("{\"a\":1} x");
    DECLINED("{\"a\":1}{}");
    DECLINED("{'a':1}");
    DECLINED("{\"a\":tru}");
    DECLINED("{\"a\":truex}");
    DECLINED("{\"a\":True}");
    DECLINED("{\"a\":nul}");
    DECLINED("{\"a\":\"unterminated}");
    DECLINED("{\"a\":\"ctl\x01\"}");
    DECLINED("{\"a\":\"tab\t\"}");
    DECLINED("{\"a\":\"\\u0000\"}");
    DECLINED("{\"a\":\"\\ud83d\\ude00\"}");
    DECLINED("{\"a\":\"\\udc00\"}");
    DECLINED("{\"a\":\"\\u12\"}");
    DECLINED("{\"a\":\"\\x\"}");
    DECLINED("{\"a\\u0062\":1}");
    DECLINED("{\"a\\n\":1}");
    DECLINED("{\"a\":1.5}");
    DECLINED("{\"a\":1e3}");
    DECLINED("{\"a\":1E3}");
    DECLINED("{\"a\":1234567890123456789}");
    DECLINED("{\"a\":-0}");
    DECLINED("{\"a\":01}");
    DECLINED("{\"a\":-}");
    DECLINED("{\"a\":+1}");
    DECLINED("{\"a\":1-2}");
    DECLINED("{\"a\":1,\"a\":2}");
    DECLINED("{\"b\":{\"a\":1,\"c\":2,\"a\":3}}");
    DECLINED("{\"a\":\v1}");
    DECLINED("{\"a\":[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]}");
    declined("{\"a\":1}\0", 8);
    declined("{\"a\":\"x\0y\"}", 11);
}
END_TEST

/* Each special byte at every offset of strings around the eight-byte
 * words the scan skips, as a value and as a key. */
START_TEST(special_byte_at_every_offset) {
    static const char *const specials[] = {"\\n", "\\\"", "\\\\", "\\u0026", "\xc3\xa9", "\x7f"};
    for (size_t k = 0; k < sizeof specials / sizeof *specials; k++)
        for (size_t len = 0; len < 24; len++)
            for (size_t at = 0; at <= len; at++) {
                char s[64], body[160];
                memset(s, 'x', len);
                s[len] = 0;
                snprintf(body, sizeof body, "{\"v\":\"%.*s%s%s\",\"k%.*s\":0}", (int)at, s, specials[k], s + at,
                         (int)len, s);
                same(body, strlen(body), NULL, NULL);
                if (specials[k][0] == '\\') {
                    snprintf(body, sizeof body, "{\"%.*s%s%s\":0}", (int)at, s, specials[k], s + at);
                    declined(body, strlen(body));
                }
            }
}
END_TEST

/* Every byte inside a string, short and long: json-c's tree, or declined
 * (control characters, which json-c 0.16 takes raw). */
START_TEST(every_byte_in_a_string) {
    for (int c = 1; c < 256; c++) {
        char body[32];
        int n = snprintf(body, sizeof body, "{\"v\":\"ab%ccd\"}", c);
        if (c < 0x20 || c == '"' || c == '\\') declined(body, (size_t)n);
        else same(body, (size_t)n, NULL, NULL);
    }
    /* And at each position of a long string: the sixteen- and eight-byte
     * steps of the scan, and the bytes after them. */
    for (int at = 0; at < 40; at++)
        for (int c = 1; c < 256; c++) {
            char body[64];
            int n = snprintf(body, sizeof body, "{\"v\":\"%040d\"}", 0);
            body[6 + at] = (char)c;
            if (c < 0x20 || c == '"' || c == '\\') declined(body, (size_t)n);
            else same(body, (size_t)n, NULL, NULL);
        }
}
END_TEST

static const jfast_path mf_meta[] = {{"managedFields", JFAST_NULL, 64, NULL}, {NULL, 0, 0, NULL}};
static const jfast_path mf_obj[] = {{"metadata", JFAST_ENTER, 0, mf_meta}, {NULL, 0, 0, NULL}};
static const jfast_path mf_req[] = {{"object", JFAST_ENTER, 0, mf_obj}, {NULL, 0, 0, NULL}};
static const jfast_path MF_PATHS[] = {{"request", JFAST_ENTER, 0, mf_req}, {NULL, 0, 0, NULL}};
#define MF (*MF_PATHS)

#define LONG_MF "[{\"manager\":\"kubectl\",\"operation\":\"Update\",\"fieldsV1\":{\"f:metadata\":{\"f:x\":{}}},\"n\":1.5e3}]"

START_TEST(skips_managed_fields_as_the_skimmer_does) {
    /* Nulled (the value is 64 bytes or more), floats and all, as json-c
     * parses the skimmed copy. */
    const char *body = "{\"request\":{\"uid\":\"u\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":" LONG_MF
                       ",\"labels\":{\"a\":\"b\"}},\"spec\":{}}}}";
    same(body, strlen(body), &MF,
         "{\"request\":{\"uid\":\"u\",\"object\":{\"metadata\":{\"name\":\"p\",\"managedFields\":null,"
         "\"labels\":{\"a\":\"b\"}},\"spec\":{}}}}");
    /* Under 64 bytes it is built. */
    const char *small = "{\"request\":{\"object\":{\"metadata\":{\"managedFields\":[{\"manager\":\"k\"}]}}}}";
    same(small, strlen(small), &MF, NULL);
    /* Elsewhere, or without the skip, it is built too. */
    const char *other = "{\"request\":{\"oldObject\":{\"metadata\":{\"managedFields\":" LONG_MF "}}}}";
    declined(other, strlen(other)); /* its float */
    const char *ints = "{\"request\":{\"oldObject\":{\"metadata\":{\"managedFields\":[{\"manager\":\"kubectl-"
                       "client-side-apply\",\"operation\":\"Update\",\"n\":1}]}}}}";
    same(ints, strlen(ints), &MF, NULL);
    same(small, strlen(small), NULL, NULL);
    /* A path through a value that is not an object skips nothing. */
    const char *arr = "{\"request\":[{\"object\":{\"metadata\":{\"managedFields\":[{\"manager\":\"kubectl-client-"
                      "side-apply\",\"n\":1}]}}}]}";
    same(arr, strlen(arr), &MF, NULL);
    /* A skipped value the skimmer's rule refuses declines the body. */
    const char *bad = "{\"request\":{\"object\":{\"metadata\":{\"managedFields\":[{\"manager\":\"kubectl-client-"
                      "side-apply\",\"operation\":\"Update\"},]}}}}";
    json_object *o = NULL;
    ck_assert_int_eq(jfast_parse(bad, strlen(bad), &MF, &o), 0);
    ck_assert_ptr_null(o);
}
END_TEST

static const jfast_path d_item[] = {{"probe", JFAST_DROP, 0, NULL}, {NULL, 0, 0, NULL}};
static const jfast_path d_items[] = {{"[]", JFAST_ENTER, 0, d_item}, {NULL, 0, 0, NULL}};
static const jfast_path DROPS[] = {{"items", JFAST_ENTER, 0, d_items}, {"status", JFAST_DROP, 0, NULL},
                                   {NULL, 0, 0, NULL}};

/* Members left out: on their path only (each element of an array, not the
 * array's neighbours), checked by the skimmer's rule, and the prune of
 * json-c's tree gives the same tree. */
START_TEST(drops_members_and_the_prune_agrees) {
    const char *body = "{\"items\":[{\"name\":\"a\",\"probe\":{\"httpGet\":{\"port\":8.5}}},{\"probe\":[],"
                       "\"x\":1},7,[{\"probe\":1}]],\"status\":{\"phase\":\"x\"},\"other\":{\"probe\":2,"
                       "\"status\":3}}";
    const char *want = "{\"items\":[{\"name\":\"a\"},{\"x\":1},7,[{\"probe\":1}]],\"other\":{\"probe\":2,"
                       "\"status\":3}}";
    same(body, strlen(body), DROPS, want);
    /* json-c's tree, pruned. */
    json_object *o = json_tokener_parse(body);
    jfast_prune(o, DROPS);
    ck_assert_str_eq(json_object_to_json_string_ext(o, FLAGS), want);
    json_object_put(o);
    /* Twice: left out both times, as json-c's last one pruned. */
    const char *twice = "{\"status\":1,\"a\":2,\"status\":{}}";
    same(twice, strlen(twice), DROPS, "{\"a\":2}");
    /* A member named "[]" is a member, not each element of an array. */
    const char *brackets = "{\"items\":{\"[]\":{\"probe\":1}}}";
    same(brackets, strlen(brackets), DROPS, NULL);
    o = json_tokener_parse(brackets);
    jfast_prune(o, DROPS);
    ck_assert_str_eq(json_object_to_json_string_ext(o, FLAGS), brackets);
    json_object_put(o);
    /* A dropped value nested past what the parse builds is declined (json-c
     * then says whether it is too deep), not skipped: 23 levels inside the
     * member at level 2 fit, 24 do not. */
    char deep[128];
    for (int levels = 22; levels <= 23; levels++)
        for (int leaf = 0; leaf < 2; leaf++) { /* a number, or an empty object (a shortcut of the skip) */
            int n = snprintf(deep, sizeof deep, "{\"status\":%.*s%s%.*s}", levels,
                             "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[", leaf ? "{}" : "1", levels,
                             "]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
            json_object *d = NULL;
            ck_assert_int_eq(jfast_parse(deep, (size_t)n, DROPS, &d), levels == 22);
            json_object_put(d);
        }
    /* A dropped value that is not strict JSON declines the body. */
    const char *bad = "{\"status\":{\"a\":1,},\"b\":2}";
    json_object *r = NULL;
    ck_assert_int_eq(jfast_parse(bad, strlen(bad), DROPS, &r), 0);
    ck_assert_ptr_null(r);
}
END_TEST

/* The skip's shortcut for a managedFields' "f:name":{} members (a colon,
 * an empty object and a comma or brace, compared as four bytes) accepts
 * and refuses what the member-by-member rule does: with whitespace, a
 * trailing comma, a key without a value, and at the depth limit. */
START_TEST(skips_empty_leaves_as_the_rule_does) {
    static const struct {
        const char *body;
        bool ok;
    } cases[] = {
        {"{\"status\":{\"a\":{},\"b\":{}},\"x\":1}", true},
        {"{\"status\":{\"a\":{}, \"b\":{} },\"x\":1}", true},
        {"{\"status\":{\"a\" :{},\"b\": {}},\"x\":1}", true},
        {"{\"status\":{\"a\":{},\"b\":{\"c\":{},\"d\":{}}},\"x\":1}", true},
        {"{\"status\":[{\"a\":{}},{}],\"x\":1}", true},
        {"{\"status\":{\"a\":{},},\"x\":1}", false},
        {"{\"status\":{\"a\":{},\"b\"},\"x\":1}", false},
        {"{\"status\":{\"a\":{},,\"b\":{}},\"x\":1}", false},
        {"{\"status\":{\"a\":{}}]", false},
        {"{\"status\":{\"a\":{}}", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_object *o = NULL;
        int rc = jfast_parse(cases[i].body, strlen(cases[i].body), DROPS, &o);
        ck_assert_msg(rc == cases[i].ok, "%s", cases[i].body);
        if (rc) ck_assert_str_eq(json_object_to_json_string_ext(o, FLAGS), "{\"x\":1}");
        json_object_put(o);
    }
    /* The innermost leaf at the limit: 22 levels of objects inside the
     * dropped member fit and 23 do not, whether the shortcut or the rule
     * (a space before the colon) reads it. */
    char deep[512];
    for (int levels = 22; levels <= 23; levels++)
        for (int spaced = 0; spaced < 2; spaced++) {
            size_t n = (size_t)snprintf(deep, sizeof deep, "{\"status\":");
            for (int l = 0; l < levels; l++) n += (size_t)snprintf(deep + n, sizeof deep - n, "{\"k\"%s:", spaced && l == levels - 1 ? " " : "");
            n += (size_t)snprintf(deep + n, sizeof deep - n, "{}");
            for (int l = 0; l < levels; l++) deep[n++] = '}';
            deep[n++] = '}';
            json_object *d = NULL;
            ck_assert_msg(jfast_parse(deep, n, DROPS, &d) == (levels == 22), "%d levels, spaced %d", levels, spaced);
            json_object_put(d);
        }
}
END_TEST

/* The byte-at-a-time reference of the string skip: past the closing
 * quote, or NULL at a control character, a bad escape or the end. */
static const char *slow_skip_string(const char *p, const char *end) {
    for (p++; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p + 1;
        if (c < 0x20) return NULL;
        if (c != '\\') continue;
        if (++p >= end) return NULL;
        if (*p == 'u') {
            for (int k = 1; k <= 4; k++)
                if (p + k >= end || !strchr("0123456789abcdefABCDEF", p[k]) || !p[k]) return NULL;
            p += 4;
        } else if (!strchr("\"\\/bfnrt", *p) || !*p) return NULL;
    }
    return NULL;
}

/* Escapes, good and bad, one or two, at every offset of strings across
 * the 16-byte steps of the skip, the string cut at every length too. */
START_TEST(skip_string_escapes_at_every_offset) {
    static const char *const esc[] = {"\\\"", "\\\\", "\\/", "\\n", "\\u00e9", "\\uD83D", "\\x", "\\u12", "\\u12g4",
                                      "\\", "\x01", "\""};
    char in[96];
    for (size_t a = 0; a < sizeof esc / sizeof *esc; a++)
        for (size_t b = 0; b < sizeof esc / sizeof *esc; b += 3)
            for (size_t at = 0; at < 40; at++)
                for (size_t gap = 0; gap < 18; gap += 5) {
                    size_t n = 0;
                    in[n++] = '"';
                    memset(in + n, 'k', at), n += at;
                    memcpy(in + n, esc[a], strlen(esc[a])), n += strlen(esc[a]);
                    memset(in + n, 'v', gap), n += gap;
                    memcpy(in + n, esc[b], strlen(esc[b])), n += strlen(esc[b]);
                    memcpy(in + n, "tail\"}", 6), n += 6;
                    for (size_t cut = 1; cut <= n; cut++) {
                        const char *want = slow_skip_string(in, in + cut), *got = jfast_skip_string(in, in + cut);
                        ck_assert_msg(got == want, "escapes %zu, %zu at %zu (gap %zu, cut %zu): %td, want %td", a, b, at,
                                      gap, cut, got ? got - in : -1, want ? want - in : -1);
                    }
                }
}
END_TEST

/* ---- the budget ------------------------------------------------------------ */

/* Built within exactly its cost, with json-c's tree; one byte less and it
 * is over, nothing built. */
static void costs(const char *body, const jfast_path *paths, size_t want) {
    size_t len = strlen(body), cost = 0;
    json_object *o = (json_object *)1;
    ck_assert_msg(jfast_parse_within(body, len, paths, SIZE_MAX, &cost, &o) == 1, "declined: %s", body);
    ck_assert_msg(cost == want, "%s: costs %zu, want %zu", body, cost, want);
    json_object_put(o);
    ck_assert_int_eq(jfast_parse_within(body, len, paths, want, &cost, &o), 1);
    ck_assert_uint_eq(cost, want);
    if (!paths) {
        char *ref = jsonc_text(body, len);
        ck_assert_str_eq(json_object_to_json_string_ext(o, FLAGS), ref);
        free(ref);
    }
    json_object_put(o);
    o = (json_object *)1;
    ck_assert_msg(jfast_parse_within(body, len, paths, want - 1, &cost, &o) == JFAST_OVER, "%s: not over at %zu", body,
                  want - 1);
    ck_assert_ptr_null(o);
    ck_assert_uint_le(cost, want - 1);
    /* No parse of the body costs more than its bound. */
    ck_assert_msg(jfast_cost_bound(body, len) >= want, "%s: bound %zu < %zu", body, jfast_cost_bound(body, len), want);
}

START_TEST(budget_exact) {
    enum { O = JFAST_COST_OBJECT, A = JFAST_COST_ARRAY, E = JFAST_COST_ELEMENT, M = JFAST_COST_MEMBER,
           S = JFAST_COST_STRING, N = JFAST_COST_SCALAR, G = JFAST_COST_MEMBER_GROWN };
    costs("{}", NULL, O);
    costs("{\"a\":1}", NULL, O + M + 1 + N);
    costs(" {\"a\" : true , \"bc\":false} ", NULL, O + M + 1 + N + M + 2 + N);
    costs("{\"a\":null}", NULL, O + M + 1);
    costs("{\"a\":\"xyz\"}", NULL, O + M + 1 + S + 3);
    costs("{\"a\":\"\"}", NULL, O + M + 1 + S);
    /* Escapes: the decoded bytes (é is two). */
    costs("{\"a\":\"x\\ny\\u00e9\\\"\"}", NULL, O + M + 1 + S + 6);
    costs("{\"a\":[]}", NULL, O + M + 1 + A);
    costs("{\"a\":[{},[],1,true,null,\"s\"]}", NULL, O + M + 1 + A + 6 * E + O + A + N + N + S + 1);
    costs("{\"a\":{\"b\":{\"c\":[[[]]]}}}", NULL, 3 * O + 3 * (M + 1) + 3 * A + 2 * E);
    /* The tenth member fills the table; the eleventh makes it double. */
    costs("{\"k0\":null,\"k1\":null,\"k2\":null,\"k3\":null,\"k4\":null,\"k5\":null,\"k6\":null,\"k7\":null,"
          "\"k8\":null,\"k9\":null}",
          NULL, O + 10 * (M + 2));
    costs("{\"k0\":null,\"k1\":null,\"k2\":null,\"k3\":null,\"k4\":null,\"k5\":null,\"k6\":null,\"k7\":null,"
          "\"k8\":null,\"k9\":null,\"k10\":null}",
          NULL, O + 10 * (M + 2) + M + 3 + G);
    /* A member left out costs its member, never its value. */
    static const jfast_path drop[] = {{"big", JFAST_DROP, 0, NULL}, {NULL, 0, 0, NULL}};
    costs("{\"big\":[{},{},{},{\"x\":[1,2,3]}],\"a\":1}", drop, O + M + 3 + M + 1 + N);
}
END_TEST

/* An empty-object flood stops at the object that passes the budget, and
 * what comes after it (even text no parse takes) is never read. */
START_TEST(budget_stops_a_flood) {
    size_t n = 1000, cap = 16 + 3 * n + 32;
    char *body = malloc(cap);
    size_t len = (size_t)snprintf(body, cap, "{\"e\":[");
    for (size_t i = 0; i < n; i++) len += (size_t)snprintf(body + len, cap - len, "%s{}", i ? "," : "");
    size_t open = len;
    len += (size_t)snprintf(body + len, cap - len, "]}");
    size_t want = JFAST_COST_OBJECT + JFAST_COST_MEMBER + 1 + JFAST_COST_ARRAY +
                  n * (JFAST_COST_ELEMENT + JFAST_COST_OBJECT);
    json_object *o;
    size_t cost;
    ck_assert_int_eq(jfast_parse_within(body, len, NULL, want, &cost, &o), 1);
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(o, "e")), n);
    json_object_put(o);
    /* One object more, the same budget: over, at the last one. */
    len = open;
    len += (size_t)snprintf(body + len, cap - len, ",{}]}");
    ck_assert_int_eq(jfast_parse_within(body, len, NULL, want, &cost, &o), JFAST_OVER);
    ck_assert_ptr_null(o);
    ck_assert_uint_eq(cost, want); /* the next element's slot is the charge refused */
    /* Over before the body turns malformed, or outside the subset: over. */
    len = open;
    len += (size_t)snprintf(body + len, cap - len, ",{},1.5,]}garbage");
    ck_assert_int_eq(jfast_parse_within(body, len, NULL, want, &cost, &o), JFAST_OVER);
    /* Malformed or declined within the budget: declined (json-c says). */
    ck_assert_int_eq(jfast_parse_within(body, len, NULL, SIZE_MAX, &cost, &o), 0);
    ck_assert_ptr_null(o);
    free(body);
}
END_TEST

START_TEST(cost_bound_counts_structure_outside_strings) {
    size_t item = JFAST_COST_MEMBER + JFAST_COST_MEMBER_GROWN + JFAST_COST_DOUBLE;
    ck_assert_uint_eq(jfast_cost_bound("{}", 2), 2 + JFAST_COST_OBJECT + 2 * item);
    ck_assert_uint_eq(jfast_cost_bound("{\"a\":[1,2]}", 11), 11 + JFAST_COST_OBJECT + JFAST_COST_ARRAY + 4 * item);
    ck_assert_uint_eq(jfast_cost_bound("", 0), item);
    /* Brackets and commas inside strings, escaped quotes and backslashes
     * included, are string bytes: the same bound as plain letters. */
    static const char *const pairs[][2] = {
        {"{\"a\":\"{[,,]}\"}", "{\"a\":\"xxxxxx\"}"},
        {"{\"a\":\"\\\"{,\"}", "{\"a\":\"xxxx\"}"},
        {"{\"a\":\"\\\\\",\"b\":1}", "{\"a\":\"xx\",\"b\":1}"},
        {"{\"{,[\":\"\\u002c\"}", "{\"xxx\":\"xxxxxx\"}"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++)
        ck_assert_msg(jfast_cost_bound(pairs[i][0], strlen(pairs[i][0])) ==
                          jfast_cost_bound(pairs[i][1], strlen(pairs[i][1])),
                      "%s", pairs[i][0]);
    /* An escaped quote at every offset across the 16-byte steps. */
    char a[80], b[80];
    for (size_t at = 0; at < 40; at++) {
        int n = snprintf(a, sizeof a, "{\"k\":\"%.*s\\\"{,[%s\",\"z\":{}}", (int)at, "0123456789012345678901234567890123456789",
                         "tail");
        int m = snprintf(b, sizeof b, "{\"k\":\"%.*sxxxx%s\",\"z\":{}}", (int)at, "0123456789012345678901234567890123456789",
                         "tail");
        ck_assert_int_eq(n, m + 1);
        ck_assert_uint_eq(jfast_cost_bound(a, (size_t)n), jfast_cost_bound(b, (size_t)m) + 1);
    }
    /* An unterminated string or a backslash at the very end ends the scan. */
    ck_assert_uint_eq(jfast_cost_bound("{\"a\":\"{{{", 9), 9 + JFAST_COST_OBJECT + 2 * item);
    ck_assert_uint_eq(jfast_cost_bound("{\"a\":\"\\", 7), 7 + JFAST_COST_OBJECT + 2 * item);
}
END_TEST

START_TEST(finds_a_member_without_building) {
    static const char body[] = "{\"kind\":\"AdmissionReview\", \"request\" : {\"object\":{\"a\":[1,{\"uid\":\"no\"}]},"
                               "\"u\\u0069d\":\"escaped\",\"uid\":\"u-1\",\"uid\":\"second\"},\"x\":{}}";
    const char *end = body + sizeof body - 1, *a, *b;
    static const char *const uid[] = {"request", "uid"}, *const kind[] = {"kind"}, *const deep[] = {"request", "object", "a"},
                             *const none[] = {"request", "nope"}, *const scalar[] = {"kind", "x"};
    ck_assert(jfast_find(body, end, uid, 2, &a, &b));
    ck_assert_int_eq((int)(b - a), 5);
    ck_assert(!memcmp(a, "\"u-1\"", 5)); /* the first of two; the escaped spelling not matched */
    ck_assert(jfast_find(body, end, kind, 1, &a, &b));
    ck_assert(!memcmp(a, "\"AdmissionReview\"", (size_t)(b - a)));
    ck_assert(jfast_find(body, end, deep, 3, &a, &b));
    ck_assert(!memcmp(a, "[1,{\"uid\":\"no\"}]", (size_t)(b - a)));
    ck_assert(!jfast_find(body, end, none, 2, &a, &b));
    ck_assert(!jfast_find(body, end, scalar, 2, &a, &b));
    ck_assert(!jfast_find(body, end, uid, 0, &a, &b));
    static const char empty[] = "{}";
    ck_assert(!jfast_find(empty, empty + 2, kind, 1, &a, &b));
    static const char bad[] = "{\"a\":[1,}, \"kind\":\"x\"}";
    ck_assert(!jfast_find(bad, bad + sizeof bad - 1, kind, 1, &a, &b)); /* malformed before it */
}
END_TEST

int main(void) {
    Suite *s = suite_create("jfast");
    TCase *tc = tcase_create("jfast");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, takes_what_the_api_server_sends);
    tcase_add_test(tc, declines_the_rest);
    tcase_add_test(tc, api_field_names_are_literals);
    tcase_add_test(tc, special_byte_at_every_offset);
    tcase_add_test(tc, every_byte_in_a_string);
    tcase_add_test(tc, skips_managed_fields_as_the_skimmer_does);
    tcase_add_test(tc, skips_empty_leaves_as_the_rule_does);
    tcase_add_test(tc, drops_members_and_the_prune_agrees);
    tcase_add_test(tc, skip_string_escapes_at_every_offset);
    tcase_add_test(tc, budget_exact);
    tcase_add_test(tc, budget_stops_a_flood);
    tcase_add_test(tc, cost_bound_counts_structure_outside_strings);
    tcase_add_test(tc, finds_a_member_without_building);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
