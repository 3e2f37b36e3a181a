/* tests/fuzz/fuzz_jfast.c - libFuzzer target for the one-pass parse
 * (base/jfast.c) against json-c's strict tokener, its definition. For every
 * input (bytes and length, no terminating NUL), abort() unless:
 *   - a declined input built nothing;
 *   - an input it takes is one json-c takes too (strict, white space after
 *     the value only), and json-c's text of both trees is the same bytes:
 *     the same values of the same types, members in the same order;
 *   - an object or array the skip's rule (jfast_skip_value, which stands
 *     for values left out of the tree) takes whole, 24 levels deep at
 *     most as the parse asks it, json-c takes;
 *   - the budget: an input built within its own cost is built the same,
 *     one byte less is over with nothing built, and jfast_cost_bound is
 *     never under the cost.
 * Built and run by `make fuzz` (seeds: tests/fuzz/jfast-corpus and the
 * review corpus); `make test` replays both and tests/fuzz/crashes/jfast. */
#include "base/jfast.h"

#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_tokener *tok;
static const int FLAGS = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;

/* The skip's rule: a whole object or array it accepts, json-c accepts. */
static void check_skip(const char *body, size_t size) {
    if (!size || (body[0] != '{' && body[0] != '[')) return;
    const char *e = jfast_skip_value(body, body + size, 24);
    if (!e || jfast_skip_ws(e, body + size) != body + size) return;
    json_tokener_reset(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_object *o = json_tokener_parse_ex(tok, body, (int)size);
    if (!o && json_tokener_get_error(tok) != json_tokener_success) {
        fprintf(stderr, "jfast_skip_value took what json-c refuses\n");
        abort();
    }
    json_object_put(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!tok) tok = json_tokener_new();
    const char *body = (const char *)data;
    check_skip(body, size);
    json_object *fast = (json_object *)1;
    int rc = jfast_parse(body, size, NULL, &fast);
    if (!rc) {
        if (fast) abort();
        return 0;
    }
    size_t cost = 0, at = 0;
    json_object *within = NULL, *none = (json_object *)1;
    if (jfast_parse_within(body, size, NULL, SIZE_MAX, &cost, &within) != 1 || !within) {
        fprintf(stderr, "jfast_parse_within without a budget differs from jfast_parse\n");
        abort();
    }
    json_object_put(within);
    if (jfast_parse_within(body, size, NULL, cost, &at, &within) != 1 || at != cost ||
        jfast_parse_within(body, size, NULL, cost - 1, &at, &none) != JFAST_OVER || none || at >= cost ||
        jfast_cost_bound(body, size) < cost) {
        fprintf(stderr, "jfast: the budget of a %zu-byte tree is not exact, or its bound under it\n", cost);
        abort();
    }
    json_tokener_reset(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_object *slow = json_tokener_parse_ex(tok, body, (int)size);
    if (!slow || json_tokener_get_error(tok) != json_tokener_success) {
        fprintf(stderr, "jfast took what json-c refuses\n");
        abort();
    }
    size_t end = json_tokener_get_parse_end(tok);
    while (end < size && memchr(" \t\r\n", body[end], 4)) end++;
    if (end != size) {
        fprintf(stderr, "jfast took trailing bytes json-c's caller refuses\n");
        abort();
    }
    const char *a = json_object_to_json_string_ext(fast, FLAGS);
    const char *b = json_object_to_json_string_ext(slow, FLAGS);
    const char *w = json_object_to_json_string_ext(within, FLAGS);
    if (strcmp(a, w) != 0) {
        fprintf(stderr, "jfast within its budget: %s\njfast: %s\n", w, a);
        abort();
    }
    json_object_put(within);
    if (strcmp(a, b) != 0) {
        fprintf(stderr, "jfast: %s\njson-c: %s\n", a, b);
        abort();
    }
    json_object_put(fast);
    json_object_put(slow);
    return 0;
}
