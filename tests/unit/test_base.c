/* tests/unit/test_base.c - the text writers every answer goes through
 * (base/): base64 against RFC 4648's vectors and a bit-by-bit encoder at
 * every length and alignment, JSON strings (base/jtext.c) with each byte
 * that needs care at every offset around the eight-byte words the writer
 * skips, the growable buffer's reserve at its edges, and the key hash of
 * the objects we build (base/jhash.c), and the JSON type names of every
 * "expected X, got Y" message (base/json.c). */
#include "base/alloc.h"
#include "base/base64.h"
#include "base/jhash.h"
#include "base/json.h"
#include "base/jtext.h"
#include "base/sbuf.h"
#include "base/utf8.h"
#include "tests/unit/util.h"

#include <check.h>
#include <json-c/linkhash.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *b64(const char *in, size_t n) {
    char *out = malloc(base64_len(n) + 1);
    base64_encode(out, in, n);
    out[base64_len(n)] = 0;
    return out;
}

START_TEST(base64_rfc4648_vectors) {
    static const char *const v[][2] = {{"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},
                                       {"foo", "Zm9v"},  {"foob", "Zm9vYg=="},  {"fooba", "Zm9vYmE="},
                                       {"foobar", "Zm9vYmFy"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *got = b64(v[i][0], strlen(v[i][0]));
        ck_assert_str_eq(got, v[i][1]);
        free(got);
    }
}
END_TEST

/* The definition, six bits at a time. */
static void b64_slow(char *out, const unsigned char *in, size_t n) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t bits = n * 8, o = 0;
    for (size_t b = 0; b < bits; b += 6) {
        unsigned v = 0;
        for (size_t k = 0; k < 6; k++) {
            size_t bit = b + k;
            v = v << 1 | (bit < bits ? (in[bit / 8] >> (7 - bit % 8)) & 1u : 0u);
        }
        out[o++] = a[v];
    }
    while (o % 4) out[o++] = '=';
    out[o] = 0;
}

START_TEST(base64_every_length_and_byte) {
    unsigned char in[300];
    for (size_t i = 0; i < sizeof in; i++) in[i] = (unsigned char)(i * 151 + 7);
    char want[420];
    for (size_t off = 0; off < 3; off++)
        for (size_t n = 0; n + off <= sizeof in; n++) {
            b64_slow(want, in + off, n);
            char *got = b64((const char *)in + off, n);
            ck_assert_msg(strlen(got) == base64_len(n) && strcmp(got, want) == 0, "offset %zu length %zu", off, n);
            free(got);
        }
    /* Every byte value in each of the three positions of a group. */
    for (int pos = 0; pos < 3; pos++)
        for (int c = 0; c < 256; c++) {
            unsigned char g[3] = {'a', 'b', 'c'};
            g[pos] = (unsigned char)c;
            b64_slow(want, g, 3);
            char *got = b64((const char *)g, 3);
            ck_assert_str_eq(got, want);
            free(got);
        }
    /* And in each position of the steps (on x86-64 44 bytes take one
     * 24-byte AVX2 step, one 12-byte SSSE3 step and the scalar tail),
     * every six-bit index reaching each range of the alphabet. */
    for (int pos = 0; pos < 44; pos++)
        for (int c = 0; c < 256; c++) {
            unsigned char g[44];
            for (int k = 0; k < 44; k++) g[k] = (unsigned char)(k * 37 + 11);
            g[pos] = (unsigned char)c;
            b64_slow(want, g, sizeof g);
            char *got = b64((const char *)g, sizeof g);
            ck_assert_msg(strcmp(got, want) == 0, "byte %d at %d", c, pos);
            free(got);
        }
}
END_TEST

static char *jstring(const char *s, size_t n) {
    sbuf b = SBUF_INIT;
    jtext_string(&b, s, n);
    return sbuf_take(&b, NULL);
}

/* jtext_string_text on texts jtext wrote: jtext_string's bytes, with a
 * quote or a backslash at every offset of every length (words and tails). */
START_TEST(jtext_string_text_as_jtext_string) {
    static const char *const cores[] = {"", "a", "\"", "\\", "{\"v\":1,\"engine\":\"0.1\"}", "caf\xc3\xa9 \\u0001 \\n"};
    for (size_t len = 0; len < 40; len++)
        for (size_t at = 0; at <= len; at++)
            for (size_t c = 0; c < sizeof cores / sizeof cores[0]; c++) {
                char in[96];
                memset(in, 'x', len);
                size_t cl = strlen(cores[c]);
                memcpy(in + at, cores[c], cl);
                memset(in + at + cl, 'y', len - at);
                size_t n = len + cl;
                char *want = jstring(in, n);
                sbuf b = SBUF_INIT;
                jtext_string_text(&b, in, n);
                char *got = sbuf_take(&b, NULL);
                ck_assert_msg(strcmp(got, want) == 0, "len %zu at %zu core %zu: %s, want %s", len, at, c, got, want);
                free(got);
                free(want);
            }
}
END_TEST

START_TEST(jtext_strings) {
    static const struct {
        const char *in;
        size_t n;
        const char *want;
    } v[] = {
        {"", 0, "\"\""},
        {"name", 4, "\"name\""},
        {"plain words, longer than a word", 31, "\"plain words, longer than a word\""},
        {"a\"b", 3, "\"a\\\"b\""},
        {"back\\slash", 10, "\"back\\\\slash\""},
        {"\n\t\r\b\f", 5, "\"\\n\\t\\r\\b\\f\""},
        {"\x01\x1f", 2, "\"\\u0001\\u001f\""},
        {"nul\0in", 6, "\"nul\\u0000in\""},
        {"/ stays", 7, "\"/ stays\""},
        {"\x7f", 1, "\"\x7f\""},
        {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\""},
        {"bad \xff byte", 10, "\"bad \\ufffd byte\""},
        {"cut \xe2\x82", 6, "\"cut \\ufffd\\ufffd\""},
    };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        char *got = jstring(v[i].in, v[i].n);
        ck_assert_msg(strcmp(got, v[i].want) == 0, "case %zu: %s, want %s", i, got, v[i].want);
        free(got);
    }
}
END_TEST

/* Each byte that needs care, alone in plain text, at every offset and
 * length up to five words: the word-at-a-time scan and the two vectors of
 * 16 to 32 bytes must find it wherever it falls, and the padded tail must
 * not hide one. */
START_TEST(jtext_special_byte_at_every_offset) {
    static const struct {
        char c;
        const char *esc;
    } sp[] = {{'"', "\\\""}, {'\\', "\\\\"}, {'\n', "\\n"}, {'\x01', "\\u0001"}, {'\x1f', "\\u001f"},
              {'\0', "\\u0000"}, {'\x80', "\\ufffd"}, {'\xff', "\\ufffd"}};
    char in[48], want[96];
    for (size_t k = 0; k < sizeof sp / sizeof sp[0]; k++)
        for (size_t n = 1; n <= 40; n++)
            for (size_t at = 0; at < n; at++) {
                memset(in, 'x', n);
                in[at] = sp[k].c;
                snprintf(want, sizeof want, "\"%.*s%s%.*s\"", (int)at, in, sp[k].esc, (int)(n - at - 1), in + at + 1);
                char *got = jstring(in, n);
                ck_assert_msg(strcmp(got, want) == 0, "byte %02x at %zu of %zu: %s", (unsigned char)sp[k].c, at,
                              n, got);
                free(got);
            }
    /* Bytes of the word's edge values that need nothing: ' ' (0x20), '~', '#', ']'. */
    for (size_t n = 1; n <= 40; n++) {
        memset(in, ' ', n);
        in[n / 2] = '~';
        in[0] = '#';
        in[n - 1] = ']';
        snprintf(want, sizeof want, "\"%.*s\"", (int)n, in);
        char *got = jstring(in, n);
        ck_assert_str_eq(got, want);
        free(got);
    }
}
END_TEST

START_TEST(sbuf_reserve_edges) {
    sbuf b = SBUF_INIT;
    sbuf_reserve(&b, 0);
    ck_assert_ptr_nonnull(b.s);
    ck_assert_uint_ge(b.cap, 1);
    /* Fill to exactly one byte short of the capacity (the NUL's room). */
    size_t cap = b.cap;
    for (size_t i = 0; i + 1 < cap; i++) sbuf_putc(&b, 'a');
    ck_assert_uint_eq(b.cap, cap);
    ck_assert_uint_eq(b.len, cap - 1);
    sbuf_reserve(&b, 0);
    ck_assert_uint_eq(b.cap, cap);
    sbuf_putc(&b, 'b');
    ck_assert_uint_gt(b.cap, cap);
    ck_assert_uint_eq(b.len, cap);
    ck_assert_int_eq(b.s[b.len], 0);
    ck_assert_int_eq(b.s[b.len - 1], 'b');
    sbuf_free(&b);
}
END_TEST

/* Integers as printf writes them, at the edges of int64. */
START_TEST(jtext_integers) {
    static const int64_t v[] = {0, 1, -1, 9, 10, -10, 99, 100, 8080, -65536, INT32_MAX, INT32_MIN, (int64_t)1e15,
                                INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        json_object *o = json_object_new_int64(v[i]);
        char want[32], *got = jtext(o, NULL);
        snprintf(want, sizeof want, "%" PRId64, v[i]);
        ck_assert_str_eq(got, want);
        free(got);
        json_object_put(o);
    }
}
END_TEST

/* Our key hash reads every byte of every length (keys one byte apart never
 * collide in these 64 bits), and a table that carries it finds each of its
 * members through json-c's own lookups, across resizes, with keys given to
 * jhash_key by length matching what the table computes from the text. */
START_TEST(jhash_every_byte_and_lookups) {
    char k[41];
    for (size_t n = 1; n <= 40; n++) {
        memset(k, 'a', n);
        unsigned long base = jhash_key(k, n);
        for (size_t i = 0; i < n; i++) {
            k[i] = 'b';
            ck_assert_uint_ne(jhash_key(k, n), base);
            k[i] = 'a';
        }
        ck_assert_uint_ne(jhash_key(k, n - 1), base);
    }
    json_object *o = jnew_obj();
    for (int i = 0; i < 300; i++) {
        snprintf(k, sizeof k, "member-%d-of-a-long-key-name", i);
        jset_int(o, k, i);
    }
    struct lh_table *t = json_object_get_object(o);
    ck_assert_int_eq(json_object_object_length(o), 300);
    for (int i = 0; i < 300; i++) {
        snprintf(k, sizeof k, "member-%d-of-a-long-key-name", i);
        int64_t v = -1;
        ck_assert(jint(o, k, &v));
        ck_assert_int_eq(v, i);
        ck_assert_uint_eq(lh_get_hash(t, k), jhash_key(k, strlen(k)));
    }
    ck_assert_ptr_null(jget(o, "member-300-of-a-long-key-name"));
    ck_assert_ptr_null(jget(o, ""));
    json_object_put(o);
}
END_TEST

/* The reference for the vector scans: one byte at a time, as RFC 8259
 * and jtext.h say (valid UTF-8 kept, any other byte >= 0x80 as U+FFFD). */
static char *slow_string(const char *s, size_t n) {
    sbuf b = SBUF_INIT;
    sbuf_putc(&b, '"');
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        size_t ul;
        if (c >= 0x80 && (ul = utf8_len((const unsigned char *)s + i, n - i))) {
            sbuf_add(&b, s + i, ul);
            i += ul - 1;
        } else if (c >= 0x80) sbuf_puts(&b, "\\ufffd");
        else if (c == '"') sbuf_puts(&b, "\\\"");
        else if (c == '\\') sbuf_puts(&b, "\\\\");
        else if (c == '\n') sbuf_puts(&b, "\\n");
        else if (c == '\t') sbuf_puts(&b, "\\t");
        else if (c == '\r') sbuf_puts(&b, "\\r");
        else if (c == '\b') sbuf_puts(&b, "\\b");
        else if (c == '\f') sbuf_puts(&b, "\\f");
        else if (c < 0x20) sbuf_printf(&b, "\\u%04x", c);
        else sbuf_putc(&b, (char)c);
    }
    sbuf_putc(&b, '"');
    return sbuf_take(&b, NULL);
}

/* Random strings of every length to 80 from pieces that need care (quotes,
 * controls, whole and cut UTF-8) among plain runs, so specials land on
 * every side of the 16-byte steps and the overlapping tail: jtext_string
 * and jtext_string_text (on texts without controls) against the reference,
 * and keys written by jtext_append. */
START_TEST(jtext_vector_scans_against_bytewise) {
    static const char *const piece[] = {"a", "plain", "0123456789abcdef", "\"", "\\", "\n", "\x01", "\x7f",
                                        "caf\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe2\x82", "\xff", "\x80"};
    uint64_t r = 0x9e3779b97f4a7c15ull;
    char in[160];
    for (int iter = 0; iter < 20000; iter++) {
        size_t want_len = (size_t)(iter % 81), n = 0;
        int text_only = iter & 1; /* quotes, backslashes and plain ASCII only */
        while (n < want_len) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            const char *p = piece[r % (text_only ? 5 : sizeof piece / sizeof *piece)];
            if (r >> 40 & 1) p = "x";
            size_t pl = strlen(p);
            if (n + pl > want_len) pl = want_len - n;
            memcpy(in + n, p, pl);
            n += pl;
        }
        char *want = slow_string(in, n), *got = jstring(in, n);
        ck_assert_msg(strcmp(got, want) == 0, "jtext_string of %zu bytes (iteration %d): %s, want %s", n, iter, got,
                      want);
        free(got);
        if (text_only) {
            sbuf b = SBUF_INIT;
            jtext_string_text(&b, in, n);
            got = sbuf_take(&b, NULL);
            ck_assert_msg(strcmp(got, want) == 0, "jtext_string_text of %zu bytes: %s, want %s", n, got, want);
            free(got);
        }
        if (!memchr(in, 0, n)) {
            in[n] = 0;
            json_object *o = jnew_obj();
            jset_int(o, in, 1);
            jset_int(o, "after", 2);
            sbuf b = SBUF_INIT;
            sbuf_printf(&b, "{%s:1,\"after\":2}", want);
            char *obj = jtext(o, NULL);
            ck_assert_msg(strcmp(obj, b.s) == 0, "key of %zu bytes: %s, want %s", n, obj, b.s);
            free(obj);
            sbuf_free(&b);
            json_object_put(o);
        }
        free(want);
    }
}
END_TEST

/* jtext_keep: a value's text kept with it is what jtext writes for it and
 * for what holds it; scalars and values carrying another userdata are not
 * kept; a copy carries none; the kept text goes with the value (ASan and
 * valgrind see it freed). */
START_TEST(jtext_keep_values) {
    json_object *env = jnew_obj();
    jset_str(env, "name", "OTEL_CONFIG");
    jset_str(env, "value", "receivers:\n  otlp: {}\n\"quoted\" \\ and caf\xc3\xa9");
    char *want = jtext(env, NULL);
    ck_assert_uint_eq(jtext_keep(env), strlen(want));
    ck_assert_ptr_nonnull(json_object_get_userdata(env));
    ck_assert_uint_eq(jtext_keep(env), strlen(want)); /* kept once */
    char *got = jtext(env, NULL);
    ck_assert_str_eq(got, want);
    free(got);
    json_object *list = jnew_arr(), *c = jnew_obj();
    jpush(list, json_object_get(env));
    jpush(list, jnew_str("after"));
    jset(c, "env", list);
    got = jtext(c, NULL);
    sbuf b = SBUF_INIT;
    sbuf_printf(&b, "{\"env\":[%s,\"after\"]}", want);
    ck_assert_str_eq(got, b.s);
    free(got);
    sbuf_free(&b);
    json_object *copy = json_object_get(env), *deep = NULL;
    deep = jcopy(copy);
    ck_assert_ptr_nonnull(deep);
    ck_assert(json_object_equal(deep, env));
    ck_assert_ptr_null(json_object_get_userdata(deep));
    json_object_put(deep);
    json_object_put(copy);
    json_object *s = jnew_str("scalar");
    ck_assert_uint_eq(jtext_keep(s), 0);
    json_object_put(s);
    json_object *other = jnew_obj();
    static int cookie;
    json_object_set_userdata(other, &cookie, NULL);
    ck_assert_uint_eq(jtext_keep(other), 0);
    ck_assert_ptr_eq(json_object_get_userdata(other), &cookie);
    got = jtext(other, NULL);
    ck_assert_str_eq(got, "{}");
    free(got);
    json_object_put(other);
    free(want);
    json_object_put(c);
    json_object_put(env);
}
END_TEST

/* xcat: the pieces one after the other, none, empty ones, long ones. */
START_TEST(xcat_pieces) {
    char *s = xcat("a", "", "bc", (char *)NULL);
    ck_assert_str_eq(s, "abc");
    free(s);
    s = xcat("", (char *)NULL);
    ck_assert_str_eq(s, "");
    free(s);
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = 0;
    s = xcat(" -javaagent:/otel-", big, "/javaagent.jar", (char *)NULL);
    ck_assert_uint_eq(strlen(s), strlen(" -javaagent:/otel-") + 299 + strlen("/javaagent.jar"));
    ck_assert(!strncmp(s + strlen(s) - 14, "/javaagent.jar", 14) && s[18] == 'x');
    free(s);
}
END_TEST

/* jtype_name: the one wording of "got X" in every shape message, JSON null
 * (json-c's NULL) included: one of its four former copies called it "an
 * object". */
START_TEST(jtype_name_each_type) {
    static const char *const v[][2] = {{"null", "null"},        {"true", "a boolean"}, {"3", "a number"},
                                       {"2.5", "a number"},     {"\"x\"", "a string"}, {"[]", "a list"},
                                       {"{}", "an object"}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        json_object *o = json_tokener_parse(v[i][0]);
        ck_assert_msg(!strcmp(jtype_name(o), v[i][1]), "%s: %s", v[i][0], jtype_name(o));
        json_object_put(o);
    }
    ck_assert_str_eq(jtype_name(NULL), "null");
}
END_TEST

int main(void) {
    Suite *s = suite_create("base");
    TCase *tc = tcase_create("base");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, base64_rfc4648_vectors);
    tcase_add_test(tc, base64_every_length_and_byte);
    tcase_add_test(tc, jtext_strings);
    tcase_add_test(tc, jtext_special_byte_at_every_offset);
    tcase_add_test(tc, jtext_string_text_as_jtext_string);
    tcase_add_test(tc, sbuf_reserve_edges);
    tcase_add_test(tc, jtext_integers);
    tcase_add_test(tc, jhash_every_byte_and_lookups);
    tcase_add_test(tc, jtext_vector_scans_against_bytewise);
    tcase_add_test(tc, jtext_keep_values);
    tcase_add_test(tc, xcat_pieces);
    tcase_add_test(tc, jtype_name_each_type);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
