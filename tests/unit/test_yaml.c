/* tests/unit/test_yaml.c - kube/yaml.c: typing, structure, errors, emit, round trip. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A comment in yaml.h holds a slash-star sequence that -Wcomment flags. */
#include "kube/yaml.h"

#include "tests/unit/util.h"

/* Parses one document and returns its compact JSON (malloc'ed), or
 * "ERR <line>: <msg>". */
static char *yjson(const char *yaml) {
    kube_yaml_error err;
    json_object *o = kube_yaml_parse_one(yaml, strlen(yaml), &err);
    char *s;
    if (!o && err.msg[0]) {
        if (asprintf(&s, "ERR %d: %s", err.line, err.msg) < 0) abort();
        return s;
    }
    s = tu_str(o);
    json_object_put(o);
    return s;
}

#define ck_yaml(yaml, want)                                                                   \
    do {                                                                                      \
        char *got_ = yjson(yaml);                                                             \
        ck_assert_msg(strcmp(got_, (want)) == 0, "input %s\n  got  %s\n  want %s", (yaml),   \
                      got_, (want));                                                          \
        free(got_);                                                                           \
    } while (0)

/* ---------------------------------------------------------------- typing */

static const struct {
    const char *in, *json;
} typing[] = {
    /* null */
    {"null", "null"}, {"Null", "null"}, {"NULL", "null"}, {"~", "null"}, {"", "null"},
    {"nULL", "\"nULL\""}, {"\"null\"", "\"null\""}, {"'~'", "\"~\""},
    /* booleans, YAML 1.1 as go-yaml v2 resolves them */
    {"true", "true"}, {"True", "true"}, {"TRUE", "true"}, {"tRUE", "\"tRUE\""},
    {"false", "false"}, {"False", "false"}, {"FALSE", "false"},
    {"yes", "true"}, {"Yes", "true"}, {"YES", "true"}, {"yEs", "\"yEs\""},
    {"no", "false"}, {"No", "false"}, {"NO", "false"},
    {"on", "true"}, {"On", "true"}, {"ON", "true"}, {"oN", "\"oN\""},
    {"off", "false"}, {"Off", "false"}, {"OFF", "false"},
    {"y", "true"}, {"Y", "true"}, {"n", "false"}, {"N", "false"},
    {"\"true\"", "\"true\""}, {"'on'", "\"on\""}, {"\"y\"", "\"y\""},
    /* integers */
    {"0", "0"}, {"-0", "0"}, {"42", "42"}, {"+42", "42"}, {"-42", "-42"},
    {"1_000_000", "1000000"}, {"0x1F", "31"}, {"0X1f", "31"}, {"-0x1F", "-31"},
    {"0o17", "15"}, {"0O17", "15"}, {"017", "15"}, {"-017", "-15"}, {"0b101", "5"},
    {"-0b11", "-3"}, {"0x", "\"0x\""}, {"0o", "\"0o\""}, {"0b2", "\"0b2\""},
    {"9223372036854775807", "9223372036854775807"},
    {"-9223372036854775808", "-9223372036854775808"},
    /* past int64 up to 2^64-1, unsigned: uint64s, exact (go-yaml's uint64);
     * negative past int64: doubles */
    {"9223372036854775808", "9223372036854775808"},
    {"18446744073709551615", "18446744073709551615"},
    {"0xFFFFFFFFFFFFFFFF", "18446744073709551615"},
    {"-9223372036854775809", "-9.2233720368547758e+18"},
    {"0x1FFFFFFFFFFFFFFFF", "\"0x1FFFFFFFFFFFFFFFF\""},
    {"+0xFFFFFFFFFFFFFFFF", "\"+0xFFFFFFFFFFFFFFFF\""},
    /* not octal: the float rule takes it, as in go-yaml */
    {"08", "8.0"}, {"0_9", "9.0"},
    /* floats */
    {"1.5", "1.5"}, {"-1.5", "-1.5"}, {"1e3", "1000.0"}, {"1E-2", "0.01"}, {"1.", "1.0"},
    {".5", "0.5"}, {"-.5", "-0.5"}, {"+.5e1", "5.0"}, {"1_0.5", "10.5"}, {"1e-400", "0.0"},
    {"1e400", "\"1e400\""}, {"1.2.3", "\"1.2.3\""}, {"1e", "\"1e\""}, {".", "\".\""},
    {"'1.5'", "\"1.5\""},
    /* non-finite floats stay strings (JSON cannot carry them) */
    {".inf", "\".inf\""}, {".Inf", "\".Inf\""}, {"+.INF", "\"+.INF\""}, {"-.inf", "\"-.inf\""},
    {".nan", "\".nan\""}, {".NaN", "\".NaN\""}, {"NaN", "\"NaN\""}, {"inf", "\"inf\""},
    /* strings */
    {"hello world", "\"hello world\""}, {"\"42\"", "\"42\""}, {"'0x1F'", "\"0x1F\""},
    {"2001-12-14", "\"2001-12-14\""}, {"2001-12-14T21:59:43.10-05:00", "\"2001-12-14T21:59:43.10-05:00\""},
    {"1:20", "\"1:20\""}, {"<<", "\"<<\""}, {"_1", "\"_1\""}, {"v1.2", "\"v1.2\""},
    {"500m", "\"500m\""}, {"\"a\\tb\\u00e9\\x41\\n\"", "\"a\\tbéA\\n\""},
    {"'it''s'", "\"it's\""}, {"\"\"", "\"\""}, {"''", "\"\""},
    {"|\n  yes\n", "\"yes\\n\""}, {">-\n  12\n", "\"12\""},
    /* explicit tags */
    {"!!str 12", "\"12\""}, {"!!str true", "\"true\""}, {"!!str", "\"\""},
    {"!!int \"12\"", "12"}, {"!!int 0x10", "16"}, {"!!float 1", "1.0"},
    {"!!float \"2.5\"", "2.5"}, {"!!bool \"yes\"", "true"}, {"!!bool off", "false"},
    {"!!null ''", "null"}, {"!!null ~", "null"}, {"!!float .inf", "\".inf\""},
    {"!custom 12", "\"12\""}, {"! 12", "\"12\""}, {"!!timestamp 2001-12-14", "\"2001-12-14\""},
    {"!!binary aGk=", "\"aGk=\""},
};

START_TEST(test_typing) {
    char buf[256], want[256];
    snprintf(buf, sizeof buf, "v: %s\n", typing[_i].in);
    snprintf(want, sizeof want, "{\"v\":%s}", typing[_i].json);
    ck_yaml(buf, want);
}
END_TEST

START_TEST(test_typing_in_flow_and_sequences) {
    ck_yaml("[1, '1', \"1\", 1.0, yes, ~, , ]", "ERR 1: did not find expected node content");
    ck_yaml("[1, '1', \"1\", 1.0, yes, ~, x y]", "[1,\"1\",\"1\",1.0,true,null,\"x y\"]");
    ck_yaml("- 0o10\n- 010\n- 0x10\n-\n- - n\n", "[8,8,16,null,[false]]");
}
END_TEST

START_TEST(test_keys) {
    /* keys are the scalar's text, whatever it would resolve to */
    ck_yaml("1: a\ntrue: b\n~: c\n0x10: d\n1.5: e\nyes: f\n\"q\": g\n", 
            "{\"1\":\"a\",\"true\":\"b\",\"~\":\"c\",\"0x10\":\"d\",\"1.5\":\"e\",\"yes\":\"f\",\"q\":\"g\"}");
    ck_yaml("? explicit\n: v\n? |\n  multi\n  line\n: w\n",
            "{\"explicit\":\"v\",\"multi\\nline\\n\":\"w\"}");
    ck_yaml("? \n: empty\n", "{\"\":\"empty\"}");
    /* duplicates are refused as go-yaml v3 refuses them: the second key's
     * line, then the first one's */
    ck_yaml("a: 1\nb: 2\na: 3\n", "ERR 3: mapping key \"a\" already defined at line 1");
    ck_yaml("{a: 1, a: [2]}", "ERR 1: mapping key \"a\" already defined at line 1");
    ck_yaml("x:\n  b: 1\n  c:\n    b: 2\n  d: 3\n  b: 4\n", "ERR 6: mapping key \"b\" already defined at line 2");
    ck_yaml("1: a\n\"1\": b\n", "ERR 2: mapping key \"1\" already defined at line 1");
    ck_yaml("- {a: 1}\n- {a: 2}\n", "[{\"a\":1},{\"a\":2}]");
    ck_yaml("\"a\\\"b\": 1\n\"a\\\"b\": 2\n", "ERR 2: mapping key \"a\\\"b\" already defined at line 1");
    /* two merge keys are duplicates too; a merged key given again is not */
    ck_yaml("- &m {a: 1}\n- <<: *m\n  <<: *m\n", "ERR 3: mapping key \"<<\" already defined at line 2");
    ck_yaml("- &m {a: 1, b: 2}\n- <<: *m\n  a: 3\n", "[{\"a\":1,\"b\":2},{\"a\":3,\"b\":2}]");
    ck_yaml("- &m {a: 1}\n- a: 3\n  <<: *m\n  a: 4\n", "ERR 4: mapping key \"a\" already defined at line 2");
    /* past int64, up to 2^64-1: a uint64, exact; past that a float */
    ck_yaml("[9223372036854775808, 18446744073709551615, 18446744073709551616]",
            "[9223372036854775808,18446744073709551615,1.8446744073709552e+19]");
    /* a scalar alias as a key uses the anchored text */
    ck_yaml("- &k 0x10\n- {*k : v}\n", "[16,{\"0x10\":\"v\"}]");
}
END_TEST

/* A budget shared by parses: each charges it; past it the parse fails
 * naming it and exceeded is set, whatever each parse's own limits. */
START_TEST(test_shared_budget) {
    kube_yaml_budget b = {.what = "the review", .memory = 100000, .alias_bytes = 1000};
    kube_yaml_doc *docs;
    size_t n;
    kube_yaml_error err;
    const char *ok = "a: &a xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\nb: [*a, *a, *a]\n";
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(kube_yaml_parse_budget(ok, strlen(ok), &docs, &n, &err, &b), 0);
        kube_yaml_docs_free(docs, n);
    }
    ck_assert_uint_eq(b.used_alias_bytes, 3 * 3 * 92); /* 3 parses, 3 aliases of 92 bytes */
    ck_assert_int_eq(kube_yaml_parse_budget(ok, strlen(ok), &docs, &n, &err, &b), -1);
    ck_assert_int_eq(err.line, 2);
    ck_assert_str_eq(err.msg, "the review: alias expansion exceeds the limit of 1000 bytes");
    ck_assert_int_eq(b.exceeded, 1);
    kube_yaml_budget m = {.what = "the review", .memory = 3000, .alias_bytes = 1000};
    const char *maps = "[{}, {}, {}, {}]";
    ck_assert_int_eq(kube_yaml_parse_budget(maps, strlen(maps), &docs, &n, &err, &m), -1);
    ck_assert_str_eq(err.msg, "the review: the YAML would take more than the 3000 bytes of memory allowed");
    /* the writer's cap */
    json_object *o = json_tokener_parse("{\"a\":[1,2,3],\"b\":\"c\"}");
    kube_yaml_style st = {2, 0, KUBE_YAML_QUOTE_SAFE, 10};
    ck_assert_ptr_null(kube_yaml_emit_style(o, &st));
    st.max_bytes = 100;
    char *y = kube_yaml_emit_style(o, &st);
    ck_assert_str_eq(y, "a:\n  - 1\n  - 2\n  - 3\nb: c\n");
    free(y);
    json_object_put(o);
}
END_TEST

/* ------------------------------------------------------------ structure */

START_TEST(test_multidoc_lines) {
    size_t len, n;
    char *buf = tu_read_file("tests/data/yaml/deployment.yaml", &len);
    kube_yaml_doc *docs;
    kube_yaml_error err;

    ck_assert_int_eq(kube_yaml_parse(buf, len, &docs, &n, &err), 0);
    ck_assert_uint_eq(n, 2); /* the trailing comment-only document is skipped */
    ck_assert_int_eq(docs[0].line, 2);  /* implicit start: first content line */
    ck_assert_int_eq(docs[1].line, 46); /* first content line after the "---" */
    ck_assert_str_eq(json_object_get_string(json_object_object_get(docs[1].obj, "kind")),
                     "Service");
    kube_yaml_docs_free(docs, n);
    free(buf);

    const char *s = "---\n---\n# only a comment\n---\nnull\n---\na: 1\n...\n---\n- 2\n";
    ck_assert_int_eq(kube_yaml_parse(s, strlen(s), &docs, &n, &err), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(docs[0].line, 7);
    ck_assert_int_eq(docs[1].line, 10);
    char *a = tu_str(docs[0].obj), *b = tu_str(docs[1].obj);
    ck_assert_str_eq(a, "{\"a\":1}");
    ck_assert_str_eq(b, "[2]");
    free(a);
    free(b);
    kube_yaml_docs_free(docs, n);
}
END_TEST

/* The bytes of document i's span in s, as a string (malloc'ed). */
static char *span_text(const char *s, const kube_yaml_doc *d) {
    return strndup(s + d->start, d->end - d->start);
}

static void ck_spans(const char *s, size_t len, const char *const *want, size_t nwant) {
    kube_yaml_doc *docs;
    size_t n;
    kube_yaml_error err;
    ck_assert_int_eq(kube_yaml_parse(s, len, &docs, &n, &err), 0);
    ck_assert_uint_eq(n, nwant);
    for (size_t i = 0; i < n; i++) {
        char *got = span_text(s, &docs[i]);
        ck_assert_msg(!strcmp(got, want[i]), "document %zu of %s: span \"%s\", want \"%s\"", i, s, got, want[i]);
        free(got);
        ck_assert(i == 0 || docs[i].start >= docs[i - 1].end);
    }
    kube_yaml_docs_free(docs, n);
}

START_TEST(test_spans) {
    /* Helm's shape: comments before the first "---", "# Source:" lines,
     * an empty document, a trailing comment; flow style, a literal block. */
    const char *helm = "# lead\n---\n# Source: a\napiVersion: v1\nkind: A  # same line\n# trailing\n"
                       "---\n# Source: empty\n---\nb: [1, 2]\nc: |\n  x\n\n# after\nd:\n---\n- \n-\n";
    const char *helm_want[] = {"apiVersion: v1\nkind: A  # same line\n", "b: [1, 2]\nc: |\n  x\n\n# after\nd:\n",
                               "- \n-\n"};
    ck_spans(helm, strlen(helm), helm_want, 3);

    /* A block scalar is the last node: its text ends the span, and the
     * comment after it is not part of it. */
    const char *lit = "a: |\n  hello\n\n# c\n---\nb: |+\n  keep\n\n# d\n";
    const char *lit_want[] = {"a: |\n  hello\n\n", "b: |+\n  keep\n\n"};
    ck_spans(lit, strlen(lit), lit_want, 2);

    /* Content on the "---" line, an indented root, no final newline, a tag. */
    const char *odd = "--- {a: 1} # c\n---\n  b: 1\n  c: 2\n--- !!map\nd: |\n  e";
    const char *odd_want[] = {"{a: 1} # c\n", "b: 1\n  c: 2\n", "!!map\nd: |\n  e"};
    ck_spans(odd, strlen(odd), odd_want, 3);

    /* Bytes, not characters: a BOM, multi-byte UTF-8, CRLF. */
    const char *utf = "\xef\xbb\xbf" "a: \"h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac\"\r\n---\r\nb: \xf0\x9f\x98\x80\r\n";
    const char *utf_want[] = {"a: \"h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac\"\r\n", "b: \xf0\x9f\x98\x80\r\n"};
    ck_spans(utf, strlen(utf), utf_want, 2);

    /* UTF-16: libyaml decodes it, its positions are not ours. */
    static const char u16[] = {'\xff', '\xfe', 'a', 0, ':', 0, ' ', 0, '1', 0, '\n', 0};
    kube_yaml_doc *docs;
    size_t n;
    kube_yaml_error err;
    ck_assert_int_eq(kube_yaml_parse(u16, sizeof u16, &docs, &n, &err), 0);
    ck_assert_uint_eq(n, 1);
    ck_assert_uint_eq(docs[0].end, 0);
    kube_yaml_docs_free(docs, n);
}
END_TEST

START_TEST(test_item_lines) {
    const char *s = "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n  items: [x]\n"
                    "- {kind: Pod}\n-\n  - nested\n- &x y\n- *x\nmetadata: {items: [z]}\n"
                    "---\nitems: [a,\n  b]\n---\nkind: Pod\n---\n- items:\n  - 1\n";
    kube_yaml_doc *docs;
    size_t n;
    kube_yaml_error err;
    ck_assert_int_eq(kube_yaml_parse(s, strlen(s), &docs, &n, &err), 0);
    ck_assert_uint_eq(n, 4);
    static const int want[] = {4, 7, 9, 10, 11}; /* a node starts where its content does */
    ck_assert_uint_eq(docs[0].nitem_lines, 5);
    for (size_t i = 0; i < 5; i++) ck_assert_int_eq(docs[0].item_lines[i], want[i]);
    ck_assert_uint_eq(docs[1].nitem_lines, 2);
    ck_assert_int_eq(docs[1].item_lines[0], 14);
    ck_assert_int_eq(docs[1].item_lines[1], 15);
    ck_assert_ptr_null(docs[2].item_lines); /* no items */
    ck_assert_ptr_null(docs[3].item_lines); /* the root is not a mapping */
    kube_yaml_docs_free(docs, n);

    /* A duplicate items: is refused, as go-yaml v3 refuses it. */
    const char *dup = "items: [a, b]\nitems:\n- c\n";
    ck_assert_int_eq(kube_yaml_parse(dup, strlen(dup), &docs, &n, &err), -1);
    ck_assert_int_eq(err.line, 2);
    ck_assert_str_eq(err.msg, "mapping key \"items\" already defined at line 1");
}
END_TEST

START_TEST(test_empty_and_one) {
    kube_yaml_doc *docs = (kube_yaml_doc *)1;
    kube_yaml_error err;
    size_t n = 99;
    static const char *empty[] = {"", "\n\n", "# nothing\n", "---\n", "---\n...\n---\n~\n", "null\n"};

    for (size_t i = 0; i < sizeof empty / sizeof empty[0]; i++) {
        ck_assert_int_eq(kube_yaml_parse(empty[i], strlen(empty[i]), &docs, &n, &err), 0);
        ck_assert_uint_eq(n, 0);
        kube_yaml_docs_free(docs, n);
        ck_assert_ptr_null(kube_yaml_parse_one(empty[i], strlen(empty[i]), &err));
        ck_assert_str_eq(err.msg, "empty document");
    }
    ck_assert_int_eq(kube_yaml_parse(NULL, 0, &docs, &n, &err), 0);
    ck_assert_uint_eq(n, 0);
    ck_yaml("a: 1\n---\nb: 2\n", "ERR 3: expected one document");
    ck_yaml("--- 5\n", "5");
    /* err may be NULL */
    ck_assert_ptr_null(kube_yaml_parse_one("[", 1, NULL));
    json_object *o = kube_yaml_parse_one("x: 1", 4, NULL); /* no trailing newline */
    ck_assert_int_eq(json_object_get_int(json_object_object_get(o, "x")), 1);
    json_object_put(o);
}
END_TEST

START_TEST(test_flow_style) {
    ck_yaml("{a: [1, {b: c}], 'd': \"e\", f: [], g: {}}",
            "{\"a\":[1,{\"b\":\"c\"}],\"d\":\"e\",\"f\":[],\"g\":{}}");
    ck_yaml("a: [x,\n  y, z]\nb: {k: v,\n    l: w}\n",
            "{\"a\":[\"x\",true,\"z\"],\"b\":{\"k\":\"v\",\"l\":\"w\"}}");
    ck_yaml("[a: 1, b]", "[{\"a\":1},\"b\"]");
    ck_yaml("{a, b: }", "{\"a\":null,\"b\":null}");
    ck_yaml("[http://x:80/p, a:b]", "[\"http://x:80/p\",\"a:b\"]");
}
END_TEST

START_TEST(test_block_scalars) {
    ck_yaml("a: |\n  one\n   two\n\n  three\nb: x\n", "{\"a\":\"one\\n two\\n\\nthree\\n\",\"b\":\"x\"}");
    ck_yaml("a: |-\n  x\n\n", "{\"a\":\"x\"}");
    ck_yaml("a: |+\n  x\n\n\nb: 1\n", "{\"a\":\"x\\n\\n\\n\",\"b\":1}");
    ck_yaml("a: >\n  folded\n  text\n\n  para\n", "{\"a\":\"folded text\\npara\\n\"}");
    ck_yaml("a: |2\n    indented\n  less\n", "{\"a\":\"  indented\\nless\\n\"}");
    ck_yaml("- |\n  in seq\n- >-\n  x\n", "[\"in seq\\n\",\"x\"]");
    ck_yaml("a: \"multi\n  line\"\n", "{\"a\":\"multi line\"}");
    ck_yaml("a: plain\n  continued\n", "{\"a\":\"plain continued\"}");
}
END_TEST

START_TEST(test_anchors_and_merge) {
    ck_yaml("a: &x {k: v}\nb: *x\nc: &s str\nd: *s\ne: &n\nf: *n\n",
            "{\"a\":{\"k\":\"v\"},\"b\":{\"k\":\"v\"},\"c\":\"str\",\"d\":\"str\",\"e\":null,\"f\":null}");
    /* anchors keep their typed value */
    ck_yaml("- &i 0x10\n- *i\n- &q '0x10'\n- *q\n", "[16,16,\"0x10\",\"0x10\"]");
    /* redefinition: later aliases see the latest anchor */
    ck_yaml("- &a 1\n- *a\n- &a 2\n- *a\n", "[1,1,2,2]");
    /* explicit keys win over merged ones, wherever they appear */
    ck_yaml("base: &b {x: 1, y: 2}\nm1:\n  <<: *b\n  x: 10\nm2:\n  x: 10\n  <<: *b\n",
            "{\"base\":{\"x\":1,\"y\":2},\"m1\":{\"x\":10,\"y\":2},\"m2\":{\"x\":10,\"y\":2}}");
    /* sequence of maps: earlier maps win */
    ck_yaml("- &a {x: a, y: a}\n- &b {y: b, z: b}\n- {<<: [*a, *b], w: 1}\n",
            "[{\"x\":\"a\",\"y\":\"a\"},{\"y\":\"b\",\"z\":\"b\"},"
            "{\"x\":\"a\",\"y\":\"a\",\"z\":\"b\",\"w\":1}]");
    /* inline merge value; quoted "<<" and !!str "<<" are ordinary keys */
    ck_yaml("<<: {a: 1}\nb: 2\n", "{\"a\":1,\"b\":2}");
    ck_yaml("\"<<\": q\nb: 2\n", "{\"<<\":\"q\",\"b\":2}");
    ck_yaml("!!str <<: s\n", "{\"<<\":\"s\"}");
    /* but go-yaml compares keys by their text: a quoted "<<" beside a merge
     * is a duplicate, either way round */
    ck_yaml("<<: {a: 1}\n\"<<\": q\n", "ERR 2: mapping key \"<<\" already defined at line 1");
    ck_yaml("\"<<\": q\n<<: {a: 1}\n", "ERR 2: mapping key \"<<\" already defined at line 1");
    ck_yaml("a: {<<: &m {k: 1}, j: *m}\n", "{\"a\":{\"k\":1,\"j\":{\"k\":1}}}");
    ck_yaml("a: <<\n", "{\"a\":\"<<\"}");
}
END_TEST

START_TEST(test_alias_is_deep_copy) {
    json_object *o = kube_yaml_parse_one("a: &x {k: [1]}\nb: *x\n", 21, NULL);
    json_object *a = json_object_object_get(o, "a"), *b = json_object_object_get(o, "b");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_ne(json_object_object_get(a, "k"), json_object_object_get(b, "k"));
    json_object_array_add(json_object_object_get(b, "k"), json_object_new_int(2));
    ck_assert_uint_eq(json_object_array_length(json_object_object_get(a, "k")), 1);
    json_object_put(o);
}
END_TEST

/* --------------------------------------------------------------- errors */

static const struct {
    const char *in;
    const char *want;
} errors[] = {
    {"a: 1\nb: [1, 2\nc: 3\n", "ERR 3: did not find expected ',' or ']'"},
    {"a: 1\n b: 2\n", "ERR 2: mapping values are not allowed in this context"},
    {"a:\n  - 1\n  b: 2\n", "ERR 3: did not find expected '-' indicator"},
    {"a: 1\nb\nc: 2\n", "ERR 3: could not find expected ':'"},
    {"key: \"open\n", "ERR 2: found unexpected end of stream"},
    {"{a: 1\n", "ERR 2: did not find expected ',' or '}'"},
    {"a: b: c\n", "ERR 1: mapping values are not allowed in this context"},
    {"a: @x\n", "ERR 1: found character that cannot start any token"},
    {"a: \"\\q\"\n", "ERR 1: found unknown escape character"},
    {"a:\n\tb: 1\n", "ERR 2: found character that cannot start any token"},
    {"a: 1\n\tb: 2\n", "ERR 2: found a tab character that violates indentation"},
    {"ok: 1\nbad: \"\xff\"\n", "ERR 2: invalid leading UTF-8 octet"},
    {"a: \x01\n", "ERR 1: control characters are not allowed"},
    {"a: 1\n---\nb: [\n", "ERR 4: did not find expected node content"},
    {"a: !h!x 1\n", "ERR 1: found undefined tag handle"},
    {"a: *nope\n", "ERR 1: unknown anchor 'nope' referenced"},
    {"a: &x [1, *x]\n", "ERR 1: anchor 'x' value contains itself"},
    {"? [a]\n: 1\n", "ERR 1: complex (non-scalar) mapping keys are not supported"},
    {"x: 1\n{a: 1}: 2\n", "ERR 2: complex (non-scalar) mapping keys are not supported"},
    {"- &m {a: 1}\n- {*m : 1}\n", "ERR 2: complex (non-scalar) mapping keys are not supported"},
    {"a: 1\nb: !!int one\n", "ERR 2: cannot decode !!str `one` as a !!int"},
    {"a: !!bool 1\n", "ERR 1: cannot decode !!int `1` as a !!bool"},
    {"a: !!int 1.5\n", "ERR 1: cannot decode !!float `1.5` as a !!int"},
    {"a: !!null x\n", "ERR 1: cannot decode !!str `x` as a !!null"},
    {"a: !!float 1e400\n", "ERR 1: cannot decode !!str `1e400` as a !!float"},
    {"a:\n  <<: 1\n", "ERR 2: map merge requires map or sequence of maps as the value"},
    {"a:\n  <<: [{b: 1}, [2]]\n", "ERR 2: map merge requires map or sequence of maps as the value"},
    {"a:\n  <<:\n", "ERR 2: map merge requires map or sequence of maps as the value"},
    {"\"a\\0b\": 1\n", "ERR 1: mapping key contains a NUL character"},
};

START_TEST(test_errors) { ck_yaml(errors[_i].in, errors[_i].want); }
END_TEST

START_TEST(test_error_discards_earlier_docs) {
    kube_yaml_doc *docs = (kube_yaml_doc *)1;
    size_t n = 7;
    kube_yaml_error err;
    const char *s = "a: 1\n---\nb: 2\n---\nc: [\n";
    ck_assert_int_eq(kube_yaml_parse(s, strlen(s), &docs, &n, &err), -1);
    ck_assert_ptr_null(docs);
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(err.line, 6);
}
END_TEST

/* Ten levels of ten-fold aliases of leaf (10^10 nodes if expanded). */
static void laughs(char *buf, size_t cap, const char *leaf) {
    size_t off = (size_t)snprintf(buf, cap, "a: &a [%s,%s,%s,%s,%s,%s,%s,%s,%s,%s]\n", leaf, leaf, leaf, leaf, leaf,
                                  leaf, leaf, leaf, leaf, leaf);
    for (int i = 1; i < 10; i++) {
        char p = (char)('a' + i - 1), c = (char)('a' + i);
        off += (size_t)snprintf(buf + off, cap - off, "%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n", c, c, p, p,
                                p, p, p, p, p, p, p, p);
    }
}

START_TEST(test_alias_bomb) {
    char buf[4096];
    /* Nulls cost json-c nothing but a slot: f would be the first to pass
     * 1,000,000 nodes (1,111,111), well before the memory estimate. */
    laughs(buf, sizeof buf, "~");
    ck_yaml(buf, "ERR 6: alias expansion exceeds the limit of 1000370 nodes");
    /* Strings cost some 80 bytes each: the memory estimate (64 MiB plus
     * 48 bytes per input byte) stops the same shape on f's line, before
     * its node count does. */
    laughs(buf, sizeof buf, "x");
    ck_yaml(buf, "ERR 6: the parsed YAML would take more than the 67126624 bytes of memory allowed for 370 bytes "
                 "of input");

    /* the same shape, shallow enough, is fine */
    ck_yaml("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n",
            "{\"a\":[\"x\",\"x\"],\"b\":[[\"x\",\"x\"],[\"x\",\"x\"]],"
            "\"c\":[[[\"x\",\"x\"],[\"x\",\"x\"]],[[\"x\",\"x\"],[\"x\",\"x\"]]]}");
}
END_TEST

/* Bytes of scalar text repeated by aliases, per parse: 16 MiB. Returns
 * "OK <docs>" or "ERR <line>: <msg>" (malloc'ed). */
static char *yparse(const char *yaml) {
    kube_yaml_doc *docs;
    size_t n;
    kube_yaml_error err;
    char *s;
    if (kube_yaml_parse(yaml, strlen(yaml), &docs, &n, &err) != 0) {
        if (asprintf(&s, "ERR %d: %s", err.line, err.msg) < 0) abort();
        return s;
    }
    kube_yaml_docs_free(docs, n);
    if (asprintf(&s, "OK %zu", n) < 0) abort();
    return s;
}

#define MIB ((size_t)1 << 20)

/* "PREFIX<n times 'x'>SUFFIX" followed by reps copies of line. */
static char *big_doc(const char *prefix, size_t n, const char *suffix, const char *line, int reps) {
    size_t pl = strlen(prefix), sl = strlen(suffix), ll = strlen(line);
    char *s = malloc(pl + n + sl + ll * (size_t)reps + 1), *p = s;
    memcpy(p, prefix, pl), p += pl;
    memset(p, 'x', n), p += n;
    memcpy(p, suffix, sl), p += sl;
    for (int i = 0; i < reps; i++) memcpy(p, line, ll), p += ll;
    *p = 0;
    return s;
}

/* "PREFIX" + reps copies of unit + "SUFFIX". */
static char *repeat_doc(const char *prefix, const char *unit, size_t reps, const char *suffix) {
    size_t pl = strlen(prefix), ul = strlen(unit), sl = strlen(suffix);
    char *s = malloc(pl + ul * reps + sl + 1), *p = s;
    memcpy(p, prefix, pl), p += pl;
    for (size_t i = 0; i < reps; i++) memcpy(p, unit, ul), p += ul;
    memcpy(p, suffix, sl + 1);
    return s;
}

#define ck_parse(text, want)                                                                  \
    do {                                                                                      \
        char *t_ = (text), *got_ = yparse(t_);                                                \
        ck_assert_str_eq(got_, (want));                                                       \
        free(got_);                                                                           \
        free(t_);                                                                             \
    } while (0)

START_TEST(test_alias_byte_budget) {
    /* The issue's file: a 1 MiB scalar aliased 2,000 times (2 GB once
     * expanded) under the node budget. Sixteen copies are 16 MiB, exactly
     * the limit; the seventeenth alias (line 2 + 17) is refused. */
    ck_parse(big_doc("a: &s ", MIB, "\nb:\n", "- *s\n", 2000),
             "ERR 19: alias expansion exceeds the limit of 16777216 bytes");
    ck_parse(big_doc("a: &s ", MIB, "\nb:\n", "- *s\n", 16), "OK 1");
    /* One byte more than the limit. */
    ck_parse(big_doc("a: &s ", MIB + 1, "\nb:\n", "- *s\n", 16),
             "ERR 18: alias expansion exceeds the limit of 16777216 bytes");
    /* Keys: an alias used as a key repeats its text too. */
    ck_parse(big_doc("- &k ", MIB, "\n", "- {*k : 1}\n", 17),
             "ERR 18: alias expansion exceeds the limit of 16777216 bytes");
    /* Keys inside an aliased map are copied with it: 1 MiB of key and
     * the one byte of "v" make the sixteenth copy (line 4 + 16) too many. */
    ck_parse(big_doc("a: &m\n  ? ", MIB, "\n  : v\nb:\n", "- *m\n", 16),
             "ERR 20: alias expansion exceeds the limit of 16777216 bytes");
    /* An anchored container holding aliases costs their copies again:
     * b is 8 MiB of aliases, c another 8 (16 in all), d is over. */
    ck_parse(big_doc("a: &a ", MIB, "\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: *b\nd: *b\n", "", 0),
             "ERR 4: alias expansion exceeds the limit of 16777216 bytes");
    /* The budget is the whole stream's: anchors end with their document,
     * the bytes spent do not. */
    char *two = big_doc("a: &s ", MIB, "\nb:\n", "- *s\n", 10), *second = big_doc("---\na: &s ", MIB, "\nb:\n", "- *s\n", 7);
    char *both = malloc(strlen(two) + strlen(second) + 1);
    strcpy(both, two);
    strcat(both, second);
    free(two);
    free(second);
    ck_parse(both, "ERR 22: alias expansion exceeds the limit of 16777216 bytes");
    /* Long text written out, not aliased, costs nothing of the budget. */
    ck_parse(big_doc("a: ", 20 * MIB, "\n", "", 0), "OK 1");
}
END_TEST

/* json-c's cost of what is parsed, not only its node count, is bounded:
 * 64 MiB plus 48 bytes per input byte. */
START_TEST(test_memory_estimate) {
    /* 1 MiB of empty flow maps would take 280 MB (800 bytes each). */
    size_t n = (1 << 20) / 3;
    char *maps = repeat_doc("a: [", "{},", n, "{}]\n"), *want;
    size_t len = strlen(maps);
    ck_assert_int_ge(asprintf(&want, "ERR 1: the parsed YAML would take more than the %zu bytes of memory allowed "
                                     "for %zu bytes of input", ((size_t)64 << 20) + 48 * len, len), 0);
    ck_parse(maps, want);
    free(want);
    /* The densest manifests people write pass at any size: 4 MiB of
     * one-line documents (about 41 bytes of memory per input byte). */
    size_t cap = 4 << 20, off = 0;
    char *docs = malloc(cap + 64);
    int i = 0;
    while (off < cap) off += (size_t)snprintf(docs + off, 64, "--- {kind: ConfigMap, metadata: {name: c%d}}\n", i++);
    char *ok;
    ck_assert_int_ge(asprintf(&ok, "OK %d", i), 0);
    ck_parse(docs, ok);
    free(ok);
    /* Aliases are charged their anchor's cost: 100,000 aliases of a map
     * of one pair (4 nodes, 100 bytes of text in all). */
    char *many = repeat_doc("a: &m {k: v}\nb: [", "*m, ", 100000, "*m]\n");
    len = strlen(many);
    ck_assert_int_ge(asprintf(&want, "ERR 2: the parsed YAML would take more than the %zu bytes of memory allowed "
                                     "for %zu bytes of input", ((size_t)64 << 20) + 48 * len, len), 0);
    ck_parse(many, want);
    free(want);
}
END_TEST

START_TEST(test_nesting_limit) {
    char *s = malloc(4000);
    memset(s, '[', 1000);
    memset(s + 1000, ']', 1000);
    s[2000] = 0;
    json_object *o = kube_yaml_parse_one(s, 2000, NULL);
    ck_assert_ptr_nonnull(o);
    json_object_put(o);
    memset(s, '[', 1001);
    memset(s + 1001, ']', 1001);
    s[2002] = 0;
    ck_yaml(s, "ERR 1: nesting deeper than 1000 levels");
    /* aliases cannot stack depth past the limit either */
    char *t = malloc(4000);
    snprintf(t, 4000, "a: &a %.*s%.*s\nb: %.*s*a%.*s\n", 600, s, 600, s + 1001, 500, s, 500,
             s + 1001);
    ck_yaml(t, "ERR 2: nesting deeper than 1000 levels");
    free(t);
    free(s);
}
END_TEST

/* ----------------------------------------------------------------- emit */

/* tu_json needs a terminator after a top-level scalar such as "null";
 * handing the tokener the NUL as well provides one. */
static json_object *jv(const char *text) {
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, text, (int)strlen(text) + 1);
    ck_assert_msg(json_tokener_get_error(tok) == json_tokener_success, "bad JSON %s", text);
    json_tokener_free(tok);
    return o;
}

static void ck_emit(const char *json, const char *want) {
    json_object *o = jv(json);
    char *got = kube_yaml_emit(o);
    ck_assert_msg(strcmp(got, want) == 0, "emit %s\n--- got\n%s--- want\n%s", json, got, want);
    json_object *back = kube_yaml_parse_one(got, strlen(got), NULL);
    ck_assert_msg(json_object_equal(back, o), "round trip of %s", json);
    json_object_put(back);
    json_object_put(o);
    free(got);
}

static void ck_emit_style(const char *json, const kube_yaml_style *st, const char *want) {
    json_object *o = jv(json);
    char *got = kube_yaml_emit_style(o, st);
    ck_assert_msg(strcmp(got, want) == 0, "emit %s\n--- got\n%s--- want\n%s", json, got, want);
    json_object *back = kube_yaml_parse_one(got, strlen(got), NULL);
    ck_assert_msg(json_object_equal(back, o), "round trip of %s", json);
    json_object_put(back);
    json_object_put(o);
    free(got);
}

/* The other writers' layouts and quoting (kube/yaml.h). */
START_TEST(test_emit_styles) {
    static const kube_yaml_style goccy = {2, 0, KUBE_YAML_QUOTE_GO_YAML, 0}, goccy4 = {4, 0, KUBE_YAML_QUOTE_GO_YAML, 0},
                                 v2 = {2, 1, KUBE_YAML_QUOTE_YAML_V2, 0};
    const char *in = "{\"e\":\"0.0.0.0:4317\",\"s\":\"1:20\",\"t\":\"true\",\"l\":[{\"a\":1,\"b\":{\"c\":[\"x\"]}}]}";
    ck_emit(in, "e: \"0.0.0.0:4317\"\ns: \"1:20\"\nt: \"true\"\nl:\n  - a: 1\n    b:\n      c:\n        - x\n");
    ck_emit_style(in, &goccy, "e: 0.0.0.0:4317\ns: 1:20\nt: \"true\"\nl:\n  - a: 1\n    b:\n      c:\n        - x\n");
    ck_emit_style(in, &goccy4,
                  "e: 0.0.0.0:4317\ns: 1:20\nt: \"true\"\nl:\n    - a: 1\n      b:\n          c:\n              - x\n");
    ck_emit_style(in, &v2, "e: 0.0.0.0:4317\ns: \"1:20\"\nt: \"true\"\nl:\n- a: 1\n  b:\n    c:\n    - x\n");
    /* yaml.v2: ":8443" may be plain, "- x" and "#x" may not (single
     * quotes), "" and numbers are double-quoted, 2.0 is 2 */
    ck_emit_style("{\"a\":\":8443\",\"b\":\"- x\",\"c\":\"#x\",\"d\":\"\",\"e\":\"10\",\"f\":\"it's: ok\","
                  "\"g\":2.5,\"h\":\"-x\",\"i\":{},\"j\":[]}",
                  &v2, "a: :8443\nb: '- x'\nc: '#x'\nd: \"\"\ne: \"10\"\nf: 'it''s: ok'\ng: 2.5\nh: -x\ni: {}\nj: []\n");
    /* past 80 columns, folded at a space onto the owner's column + 2 (libyaml,
     * best_width 80); keys never are */
    ck_emit_style("{\"top\":\"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24\","
                  "\"l\":[\"it's w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23\"]}",
                  &v2, "top: w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21\n  w22 w23 w24\n"
                       "l:\n- it's w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21\n"
                       "  w22 w23\n");
}
END_TEST

START_TEST(test_emit_deployment) {
    size_t len;
    char *in = tu_read_file("tests/data/yaml/deployment.yaml", &len);
    char *want = tu_read_file("tests/data/yaml/deployment.emit.yaml", NULL);
    kube_yaml_doc *docs;
    size_t n;
    ck_assert_int_eq(kube_yaml_parse(in, len, &docs, &n, NULL), 0);
    char *got = kube_yaml_emit(docs[0].obj);
    ck_assert_str_eq(got, want);
    json_object *back = kube_yaml_parse_one(got, strlen(got), NULL);
    ck_assert(json_object_equal(back, docs[0].obj));
    json_object_put(back);
    free(got);
    free(want);
    free(in);
    kube_yaml_docs_free(docs, n);
}
END_TEST

START_TEST(test_emit_shapes) {
    ck_emit("null", "null\n");
    ck_emit("{}", "{}\n");
    ck_emit("[]", "[]\n");
    ck_emit("\"x\"", "x\n");
    ck_emit("7", "7\n");
    ck_emit("{\"a\":{},\"b\":[],\"c\":null,\"d\":true,\"e\":false,\"f\":-3,\"g\":2.5}",
            "a: {}\nb: []\nc: null\nd: true\ne: false\nf: -3\ng: 2.5\n");
    ck_emit("{\"env\":[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\",\"valueFrom\":{\"k\":\"v\"}}]}",
            "env:\n"
            "  - name: A\n"
            "    value: \"1\"\n"
            "  - name: B\n"
            "    valueFrom:\n"
            "      k: v\n");
    ck_emit("[[1,[2,3]],[],{},[{\"a\":[{\"b\":1}]}]]",
            "- - 1\n"
            "  - - 2\n"
            "    - 3\n"
            "- []\n"
            "- {}\n"
            "- - a:\n"
            "      - b: 1\n");
    ck_emit("[{\"a\":1,\"b\":{\"c\":2}},\"s\"]", "- a: 1\n  b:\n    c: 2\n- s\n");
}
END_TEST

START_TEST(test_emit_numbers) {
    ck_emit("[0, -9223372036854775808, 9223372036854775807, 18446744073709551615]",
            "- 0\n- -9223372036854775808\n- 9223372036854775807\n- 18446744073709551615\n");
    ck_emit("[1.0, 0.1, -0.0, 1e300, 123456.789, 5e-324, 0.30000000000000004]",
            "- 1.0\n- 0.1\n- -0.0\n- 1e+300\n- 123456.789\n- 4.94065645841247e-324\n"
            "- 0.30000000000000004\n");

    /* non-finite doubles are written as YAML floats; they read back as strings */
    json_object *a = json_object_new_array();
    json_object_array_add(a, json_object_new_double(1.0 / 0.0));
    json_object_array_add(a, json_object_new_double(-1.0 / 0.0));
    json_object_array_add(a, json_object_new_double(0.0 / 0.0));
    char *y = kube_yaml_emit(a);
    ck_assert_str_eq(y, "- .inf\n- -.inf\n- .nan\n");
    ck_yaml(y, "[\".inf\",\"-.inf\",\".nan\"]");
    free(y);
    json_object_put(a);
}
END_TEST

static const struct {
    const char *json; /* a JSON string */
    const char *yaml; /* how it is written as a value */
} quoting[] = {
    {"\"plain text\"", "plain text"}, {"\"nginx:1.25\"", "nginx:1.25"},
    {"\"http://x/y?z=1#f\"", "http://x/y?z=1#f"}, {"\"a,b[0]{c}\"", "a,b[0]{c}"},
    {"\"it's\"", "it's"}, {"\"say \\\"hi\\\"\"", "say \"hi\""}, {"\"é中😀\"", "é中😀"},
    {"\"1.2.3\"", "1.2.3"}, {"\"500m\"", "500m"}, {"\"~x\"", "~x"}, {"\"<<\"", "<<"},
    {"\"\"", "\"\""}, {"\"true\"", "\"true\""}, {"\"True\"", "\"True\""},
    {"\"null\"", "\"null\""}, {"\"~\"", "\"~\""}, {"\"on\"", "\"on\""}, {"\"y\"", "\"y\""},
    {"\"NO\"", "\"NO\""}, {"\"123\"", "\"123\""}, {"\"-1\"", "\"-1\""},
    {"\"1e3\"", "\"1e3\""}, {"\"0x1F\"", "\"0x1F\""}, {"\"0o17\"", "\"0o17\""},
    {"\"017\"", "\"017\""}, {"\"1_000\"", "\"1_000\""}, {"\".5\"", "\".5\""},
    {"\".inf\"", "\".inf\""}, {"\"-.inf\"", "\"-.inf\""}, {"\".nan\"", "\".nan\""},
    {"\"1e400\"", "\"1e400\""}, {"\"99999999999999999999999\"", "\"99999999999999999999999\""},
    {"\"2001-12-14\"", "\"2001-12-14\""}, {"\"1:20\"", "\"1:20\""},
    {"\" lead\"", "\" lead\""}, {"\"trail \"", "\"trail \""},
    {"\"-x\"", "\"-x\""}, {"\"--flag\"", "\"--flag\""}, {"\"- x\"", "\"- x\""},
    {"\"?x\"", "\"?x\""}, {"\":x\"", "\":x\""}, {"\",x\"", "\",x\""}, {"\"[x\"", "\"[x\""},
    {"\"]x\"", "\"]x\""}, {"\"{x\"", "\"{x\""}, {"\"}x\"", "\"}x\""}, {"\"#x\"", "\"#x\""},
    {"\"&x\"", "\"&x\""}, {"\"*x\"", "\"*x\""}, {"\"!x\"", "\"!x\""}, {"\"|x\"", "\"|x\""},
    {"\">x\"", "\">x\""}, {"\"'x\"", "\"'x\""}, {"\"\\\"x\"", "\"\\\"x\""},
    {"\"%x\"", "\"%x\""}, {"\"@x\"", "\"@x\""}, {"\"`x\"", "\"`x\""},
    {"\"a: b\"", "\"a: b\""}, {"\"a #b\"", "\"a #b\""}, {"\"a:\"", "\"a:\""},
    {"\"...x\"", "\"...x\""}, {"\"a\\tb\"", "\"a\\tb\""}, {"\"back\\\\slash\"", "back\\slash"},
    {"\"\\u0001\\u007f\\u0085\\u2028\\ufeff\"", "\"\\u0001\\u007F\\u0085\\u2028\\uFEFF\""},
    {"\"cr\\r\\nlf\"", "\"cr\\r\\nlf\""}, {"\"nul\\u0000\"", "\"nul\\0\""},
};

START_TEST(test_emit_quoting) {
    char json[256], want[256];
    /* as a value */
    snprintf(json, sizeof json, "{\"k\":%s}", quoting[_i].json);
    snprintf(want, sizeof want, "k: %s\n", quoting[_i].yaml);
    ck_emit(json, want);
    /* as a sequence item */
    snprintf(json, sizeof json, "[%s]", quoting[_i].json);
    snprintf(want, sizeof want, "- %s\n", quoting[_i].yaml);
    ck_emit(json, want);
    /* as a key: same rules, plus "<<" which would be a merge key; json-c
     * keys are C strings, so no NUL */
    if (strstr(quoting[_i].json, "u0000")) return;
    snprintf(json, sizeof json, "{%s:1}", quoting[_i].json);
    snprintf(want, sizeof want, "%s: 1\n",
             strcmp(quoting[_i].yaml, "<<") == 0 ? "\"<<\"" : quoting[_i].yaml);
    ck_emit(json, want);
}
END_TEST

START_TEST(test_emit_multiline) {
    ck_emit("{\"script\":\"echo a\\necho b\\n\"}", "script: |\n  echo a\n  echo b\n");
    ck_emit("{\"s\":\"a\\nb\"}", "s: |-\n  a\n  b\n");
    ck_emit("{\"s\":\"a\\n\\n\"}", "s: |+\n  a\n\n");
    ck_emit("{\"s\":\"a\\n\\nb\\n\"}", "s: |\n  a\n\n  b\n");
    ck_emit("{\"s\":\"  indented\\nx\"}", "s: |2-\n    indented\n  x\n");
    ck_emit("{\"s\":\"\\n\\nafter blank\"}", "s: |2-\n\n\n  after blank\n");
    ck_emit("{\"s\":\"\\tTab\\nx\\ty\\n\"}", "s: |2\n  \tTab\n  x\ty\n");
    ck_emit("{\"s\":\"# not a comment\\n- not a list\\n---\\n\"}",
            "s: |\n  # not a comment\n  - not a list\n  ---\n");
    ck_emit("[\"a\\nb\",{\"k\":[\"c\\n\"]}]", "- |-\n  a\n  b\n- k:\n    - |\n      c\n");
    ck_emit("\"root\\ntext\\n\"", "|\n  root\n  text\n");
    /* not representable as literal blocks: double quotes */
    ck_emit("{\"s\":\"trailing \\nspace\"}", "s: \"trailing \\nspace\"\n");
    ck_emit("{\"s\":\"a\\nb \"}", "s: \"a\\nb \"\n");
    ck_emit("{\"s\":\"a\\r\\nb\"}", "s: \"a\\r\\nb\"\n");
    ck_emit("{\"s\":\"\\n\"}", "s: \"\\n\"\n");
    ck_emit("{\"s\":\"a\\u0001\\nb\"}", "s: \"a\\u0001\\nb\"\n");
    ck_emit("{\"multi\\nkey\":1}", "\"multi\\nkey\": 1\n");
}
END_TEST

START_TEST(test_emit_long_key) {
    char key[1501];
    memset(key, 'k', 1500);
    key[1500] = 0;
    json_object *o = json_object_new_object(), *inner = json_object_new_object();
    json_object_object_add(inner, "a", json_object_new_int(1));
    json_object_object_add(o, key, inner);
    json_object_object_add(o, "short", json_object_new_string("v"));
    char *y = kube_yaml_emit(o);
    ck_assert(strncmp(y, "? kkkk", 6) == 0);
    ck_assert_ptr_nonnull(strstr(y, "k\n:\n  a: 1\nshort: v\n"));
    json_object *back = kube_yaml_parse_one(y, strlen(y), NULL);
    ck_assert(json_object_equal(back, o));
    json_object_put(back);
    json_object_put(o);
    free(y);
}
END_TEST

START_TEST(test_emit_invalid_utf8) {
    json_object *o = json_object_new_string_len("a\xff" "b\xc3", 4);
    char *y = kube_yaml_emit(o);
    ck_assert_str_eq(y, "\"a\\uFFFDb\\uFFFD\"\n");
    free(y);
    json_object_put(o);
}
END_TEST

/* ----------------------------------------------------------- round trip */

static void ck_roundtrip(json_object *o) {
    char *y = kube_yaml_emit(o);
    kube_yaml_error err;
    ck_assert_ptr_nonnull(y);
    ck_assert(y[0] && y[strlen(y) - 1] == '\n');
    json_object *back = kube_yaml_parse_one(y, strlen(y), &err);
    if (!json_object_equal(back, o)) {
        char *a = tu_str(o), *b = tu_str(back);
        ck_abort_msg("round trip failed\n  in   %s\n  yaml\n%s  out  %s (%d: %s)", a, y, b,
                     err.line, err.msg);
    }
    json_object_put(back);
    free(y);
}

static const char *roundtrip[] = {
    "null", "true", "0", "\"\"", "\"\\n\"", "{}", "[]", "[[]]", "[{}]", "{\"\":\"\"}",
    "{\"a\":{\"b\":{\"c\":{\"d\":[[[[{\"e\":[]}]]]]}}}}",
    "[\"true\",\"false\",\"yes\",\"no\",\"on\",\"off\",\"y\",\"n\",\"Y\",\"N\",\"~\",\"null\",\"NULL\"]",
    "[\"0\",\"-0\",\"+1\",\"0x1F\",\"0o7\",\"07\",\"08\",\"0b1\",\"1_0\",\"1e3\",\"1E3\",\".5\",\"5.\",\"1e400\"]",
    "[\".inf\",\"-.Inf\",\"+.INF\",\".nan\",\".NaN\",\"<<\",\"=\",\"!\",\"&a\",\"*a\",\"|\",\">\"]",
    "{\"<<\":1,\"? q\":2,\": c\":3,\"- d\":4,\"# h\":5,\"k: v\":6,\"a #b\":7,\"-\":8,\"?\":9,\":\":10}",
    "{\"true\":1,\"1\":2,\"null\":3,\"~\":4,\"0x10\":5,\"\":6,\" \":7,\"\\t\":8,\"é\":9,\"😀\":10}",
    "[\" \",\"  \",\"\\t\",\" a \",\"a\\tb\",\"\\r\",\"\\r\\n\",\"\\u0000\",\"\\u001f\",\"\\u007f\",\"\\u0085\"]",
    "[\"\\u00a0\",\"\\u2028\",\"\\u2029\",\"\\ufeff\",\"\\ufffe\",\"\\uffff\",\"\\ud83d\\ude00\",\"\\u4e2d\\u6587\"]",
    "[\"a\\nb\",\"a\\nb\\n\",\"a\\nb\\n\\n\",\"\\na\",\"\\n\\n a\",\" a\\nb\",\"\\ta\\nb\",\"a\\n\\tb\",\"a \\nb\",\"a\\nb \"]",
    "[\"---\",\"...\",\"--- a\",\"... a\",\"a\\n---\\nb\",\"a\\n...\\n\",\"#\",\"a#b\",\"a:b\",\"a:\"]",
    "[\"'\",\"\\\"\",\"''\",\"\\\\\",\"\\\\n\",\"%TAG\",\"@x\",\"`x\",\"[a, b]\",\"{a: b}\"]",
    "[1.5,-1.5,0.1,1e-300,1e300,2.5e-10,-0.0,1.0,100.0,9007199254740993.0]",
    "[-9223372036854775808,9223372036854775807,-1,1]",
    "{\"deep\":[[[[[[[[[[[[[[[[[[[[\"x\\ny\"]]]]]]]]]]]]]]]]]]]]}",
    "{\"a\":[{\"b\":[{\"c\":\"multi\\nline\\n\",\"d\":[\"e\\nf\"]}],\"g\":\"  h\\ni\"}]}",
};

START_TEST(test_roundtrip_table) {
    json_object *o = jv(roundtrip[_i]);
    ck_roundtrip(o);
    json_object_put(o);
}
END_TEST

/* Deterministic pseudo-random values over an alphabet of troublemakers. */
static uint64_t rng_state;
static unsigned rnd(unsigned n) {
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)((rng_state >> 33) % n);
}

static json_object *rand_string(void) {
    static const char *bits[] = {
        "a", "b", " ", "-", ":", "#", "?", "&", "*", "!", "|", ">", "'", "\"", "%", "@", "`",
        ",", "[", "]", "{", "}", "~", ".", "\n", "\t", "\\", "0", "1", "9", "x", "y", "n", "o",
        "e", "E", "_", "+", "<", "é", "中", "😀", "\xc2\x85", "\xe2\x80\xa8", "\x01", "\x7f",
        "\xef\xbb\xbf", "true", "null", "on", "0x1F", "0o7", "1e3", ".inf", "---", "...",
        "  ", "\n\n", "\r", "\0",
    };
    char buf[128];
    size_t n = 0;
    for (unsigned i = 0, k = rnd(9); i < k; i++) {
        const char *b = bits[rnd(sizeof bits / sizeof bits[0])];
        size_t bl = b[0] ? strlen(b) : 1;
        memcpy(buf + n, b, bl);
        n += bl;
    }
    return json_object_new_string_len(buf, (int)n);
}

static json_object *rand_value(int depth) {
    unsigned r = rnd(100);
    if (depth > 6 || r < 55) {
        switch (rnd(10)) {
        case 0: return json_object_new_int64((int64_t)(rnd(2000000000) - 1000000000) * (int64_t)rnd(1000000000));
        case 1: return json_object_new_double((double)(rnd(200000) - 100000) / (double)(1 + rnd(997)));
        case 2: return json_object_new_boolean((int)rnd(2));
        case 3: return NULL;
        case 4: return rnd(2) ? json_object_new_object() : json_object_new_array();
        default: return rand_string();
        }
    }
    if (r < 80) {
        json_object *o = json_object_new_object();
        for (unsigned i = 0, k = 1 + rnd(4); i < k; i++) {
            json_object *key = rand_string();
            const char *ks = json_object_get_string(key);
            json_object_object_add(o, ks, rand_value(depth + 1));
            json_object_put(key);
        }
        return o;
    }
    json_object *a = json_object_new_array();
    for (unsigned i = 0, k = 1 + rnd(4); i < k; i++) json_object_array_add(a, rand_value(depth + 1));
    return a;
}

START_TEST(test_roundtrip_random) {
    rng_state = 42;
    for (int i = 0; i < 3000; i++) {
        json_object *o = rand_value(0);
        ck_roundtrip(o);
        json_object_put(o);
    }
}
END_TEST

START_TEST(test_roundtrip_deep) {
    json_object *o = json_object_new_string("leaf\nwith newline");
    for (int i = 0; i < 400; i++) {
        json_object *p = (i % 3) ? json_object_new_array() : json_object_new_object();
        if (json_object_is_type(p, json_type_array)) json_object_array_add(p, o);
        else json_object_object_add(p, i % 2 ? "k: x" : "k", o);
        o = p;
    }
    ck_roundtrip(o);
    json_object_put(o);
}
END_TEST

START_TEST(test_roundtrip_parsed) {
    /* parse -> emit -> parse is stable for a whole manifest */
    size_t len, n;
    char *in = tu_read_file("tests/data/yaml/deployment.yaml", &len);
    kube_yaml_doc *docs;
    ck_assert_int_eq(kube_yaml_parse(in, len, &docs, &n, NULL), 0);
    for (size_t i = 0; i < n; i++) ck_roundtrip(docs[i].obj);
    kube_yaml_docs_free(docs, n);
    free(in);
}
END_TEST

/* kube_yaml_parse_lines: a map member at its key's line, a list item and a
 * document at their own, alias copies at the original's, nothing for null
 * or what was not parsed. */
static json_object *jat(json_object *o, const char *key) {
    json_object *v = NULL;
    if (json_object_is_type(o, json_type_array)) return json_object_array_get_idx(o, (size_t)atoi(key));
    json_object_object_get_ex(o, key, &v);
    return v;
}

START_TEST(test_value_lines) {
    static const char *const text =
        "kind: Pod\n"                      /* 1 */
        "metadata:\n"                      /* 2 */
        "  labels: &l {app: web}\n"        /* 3 */
        "spec:\n"                          /* 4 */
        "  containers:\n"                  /* 5 */
        "    name: app\n"                  /* 6 */
        "    env:\n"                       /* 7 */
        "    - name: A\n"                  /* 8 */
        "      value:\n"                   /* 9 */
        "    -\n"                          /* 10 */
        "      {name: B,\n"                /* 11 */
        "       value: 1}\n"               /* 12 */
        "  copy: *l\n"                     /* 13 */
        "  merged: {<<: *l, x: y}\n"       /* 14 */
        "---\n"                            /* 15 */
        "[a,\n"                            /* 16 */
        " b]\n";                           /* 17 */
    kube_yaml_doc *docs;
    size_t n;
    kube_yaml_error err;
    kube_yaml_lines *lines;
    ck_assert_int_eq(kube_yaml_parse_lines(text, strlen(text), &docs, &n, &err, &lines), 0);
    ck_assert_uint_eq(n, 2);
    json_object *d = docs[0].obj, *spec = jat(d, "spec"), *cs = jat(spec, "containers"), *env = jat(cs, "env");
    ck_assert_int_eq(kube_yaml_line_of(lines, d), 1);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(d, "kind")), 1);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(jat(d, "metadata"), "labels")), 3);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(jat(jat(d, "metadata"), "labels"), "app")), 3);
    ck_assert_int_eq(kube_yaml_line_of(lines, cs), 5);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(cs, "name")), 6);
    ck_assert_int_eq(kube_yaml_line_of(lines, env), 7);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(env, "0")), 8);
    ck_assert_ptr_null(jat(jat(env, "0"), "value")); /* null: nothing to look up */
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(env, "1")), 11);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(jat(env, "1"), "value")), 12);
    /* The copy itself where the alias is; inside, the original's lines. */
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(spec, "copy")), 13);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(jat(spec, "copy"), "app")), 3);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(jat(spec, "merged"), "app")), 3);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(jat(spec, "merged"), "x")), 14);
    ck_assert_int_eq(kube_yaml_line_of(lines, docs[1].obj), 16);
    ck_assert_int_eq(kube_yaml_line_of(lines, jat(docs[1].obj, "1")), 17);
    json_object *later = json_object_new_object();
    ck_assert_int_eq(kube_yaml_line_of(lines, later), 0);
    ck_assert_int_eq(kube_yaml_line_of(lines, NULL), 0);
    json_object_put(later);
    kube_yaml_lines_free(lines);
    kube_yaml_docs_free(docs, n);
    /* A failed parse gives no table. */
    ck_assert_int_eq(kube_yaml_parse_lines("a: [", 4, &docs, &n, &err, &lines), -1);
    ck_assert_ptr_null(lines);
}
END_TEST

static Suite *yaml_suite(void) {
    Suite *s = suite_create("yaml");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_typing, 0, (int)(sizeof typing / sizeof typing[0]));
    tcase_add_test(tc, test_typing_in_flow_and_sequences);
    tcase_add_test(tc, test_keys);
    tcase_add_test(tc, test_shared_budget);
    tcase_add_test(tc, test_multidoc_lines);
    tcase_add_test(tc, test_spans);
    tcase_add_test(tc, test_item_lines);
    tcase_add_test(tc, test_empty_and_one);
    tcase_add_test(tc, test_flow_style);
    tcase_add_test(tc, test_block_scalars);
    tcase_add_test(tc, test_anchors_and_merge);
    tcase_add_test(tc, test_alias_is_deep_copy);
    tcase_add_test(tc, test_value_lines);
    tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof errors / sizeof errors[0]));
    tcase_add_test(tc, test_error_discards_earlier_docs);
    tcase_add_test(tc, test_alias_bomb);
    tcase_add_test(tc, test_alias_byte_budget);
    tcase_add_test(tc, test_memory_estimate);
    tcase_add_test(tc, test_nesting_limit);
    tcase_add_test(tc, test_emit_deployment);
    tcase_add_test(tc, test_emit_shapes);
    tcase_add_test(tc, test_emit_numbers);
    tcase_add_loop_test(tc, test_emit_quoting, 0, (int)(sizeof quoting / sizeof quoting[0]));
    tcase_add_test(tc, test_emit_multiline);
    tcase_add_test(tc, test_emit_long_key);
    tcase_add_test(tc, test_emit_invalid_utf8);
    tcase_add_loop_test(tc, test_roundtrip_table, 0,
                        (int)(sizeof roundtrip / sizeof roundtrip[0]));
    tcase_add_test(tc, test_emit_styles);
    tcase_add_test(tc, test_roundtrip_random);
    tcase_add_test(tc, test_roundtrip_deep);
    tcase_add_test(tc, test_roundtrip_parsed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return tu_run(yaml_suite());
}
