/* base/jbigint.c - see jbigint.h. */
#include "base/jbigint.h"

#include "base/alloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* An integer literal (sign, digits) past int64 (negative) or uint64. */
static bool past_64_bits(const char *s, size_t n) {
    bool neg = s[0] == '-';
    const char *d = s + neg;
    size_t k = n - neg;
    const char *lim = neg ? "9223372036854775808" : "18446744073709551615";
    size_t lk = strlen(lim);
    return k > lk || (k == lk && memcmp(d, lim, k) > 0);
}

/* The integer literals past 64 bits outside strings: how many, and (up to
 * cap) the end offset of each. */
static size_t scan(const char *b, size_t len, size_t *ends, size_t cap) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = b[i];
        if (c == '"') {
            for (i++; i < len && b[i] != '"'; i++)
                if (b[i] == '\\') i++;
            continue;
        }
        if (c != '-' && !is_digit(c)) continue;
        size_t s = i;
        if (c == '-') i++;
        while (i < len && is_digit(b[i])) i++;
        bool frac = i < len && (b[i] == '.' || b[i] == 'e' || b[i] == 'E');
        while (i < len && (is_digit(b[i]) || b[i] == '.' || b[i] == 'e' || b[i] == 'E' || b[i] == '+' || b[i] == '-'))
            i++;
        size_t e = i;
        i--; /* the loop's i++ */
        if (frac || e - s < 20 || !past_64_bits(b + s, e - s)) continue;
        if (ends && n < cap) ends[n] = e;
        n++;
    }
    return n;
}

char *jbigint_mark(const char *body, size_t len, size_t *outlen) {
    size_t n = scan(body, len, NULL, 0);
    if (n == 0) return NULL;
    size_t *ends = xmalloc(n * sizeof *ends);
    scan(body, len, ends, n);
    char *out = xmalloc(len + 2 * n + 1), *o = out;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        memcpy(o, body + at, ends[i] - at);
        o += ends[i] - at;
        memcpy(o, "e0", 2);
        o += 2;
        at = ends[i];
    }
    memcpy(o, body + at, len - at);
    o += len - at;
    *o = 0;
    *outlen = (size_t)(o - out);
    free(ends);
    return out;
}

/* The marked double's text without its "e0", or NULL when v is not one. */
static json_object *unmarked(json_object *v) {
    if (!json_object_is_type(v, json_type_double)) return NULL;
    const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    size_t n = strlen(t);
    if (n < 22 || memcmp(t + n - 2, "e0", 2) != 0) return NULL;
    for (size_t i = t[0] == '-'; i < n - 2; i++)
        if (!is_digit(t[i])) return NULL;
    char *digits = xstrndup(t, n - 2);
    json_object *d = json_object_new_double_s(json_object_get_double(v), digits);
    free(digits);
    if (!d) base_oom();
    return d;
}

void jbigint_restore(json_object *v) {
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, x) {
            json_object *d = unmarked(x);
            if (d) json_object_object_add(v, k, d);
            else jbigint_restore(x);
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0, n = json_object_array_length(v); i < n; i++) {
            json_object *x = json_object_array_get_idx(v, i), *d = unmarked(x);
            if (d) json_object_array_put_idx(v, i, d);
            else jbigint_restore(x);
        }
    }
}
