/* base/quantity.c - see quantity.h. The grammar is apimachinery's:
 *   quantity ::= <signedNumber><suffix>
 *   suffix   ::= Ki | Mi | Gi | Ti | Pi | Ei | n | u | m | "" | k | M | G | T | P | E | (e|E)<signedNumber>
 * parsed digit by digit rather than with strtold, which also takes hex,
 * "inf" and "nan". */
#include "base/quantity.h"

#include <math.h>
#include <string.h>

/* Small units divide (div), which rounds once: "500m" is exactly 0.5. */
static const struct {
    const char *suffix;
    long double mult, div;
} SUFFIXES[] = {{"Ki", 0x1p10L, 1}, {"Mi", 0x1p20L, 1}, {"Gi", 0x1p30L, 1}, {"Ti", 0x1p40L, 1},
                {"Pi", 0x1p50L, 1}, {"Ei", 0x1p60L, 1}, {"n", 1, 1e9L},     {"u", 1, 1e6L},
                {"m", 1, 1e3L},     {"", 1, 1},         {"k", 1e3L, 1},     {"M", 1e6L, 1},
                {"G", 1e9L, 1},     {"T", 1e12L, 1},    {"P", 1e15L, 1},    {"E", 1e18L, 1}};

bool quantity_parse(const char *s, long double *out) {
    const char *p = s;
    bool neg = false, digits = false;
    long double v = 0;
    int frac = 0;
    if (!s) return false;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    for (; *p >= '0' && *p <= '9'; p++, digits = true) v = v * 10 + (*p - '0');
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits = true, frac++) v = v * 10 + (*p - '0');
    }
    if (!digits) return false;
    /* Dividing once keeps "0.5" exact where multiplying by 0.1 would not. */
    if (frac) v /= powl(10.0L, frac);
    if ((*p == 'e' || *p == 'E') && p[1]) {
        const char *q = p + 1;
        bool eneg = false;
        long e = 0;
        if (*q == '+' || *q == '-') eneg = *q++ == '-';
        if (*q < '0' || *q > '9') return false;
        for (; *q >= '0' && *q <= '9'; q++)
            if ((e = e * 10 + (*q - '0')) > 10000) return false;
        if (*q) return false;
        v = eneg ? v / powl(10.0L, (long double)e) : v * powl(10.0L, (long double)e);
    } else {
        size_t i, n = sizeof SUFFIXES / sizeof *SUFFIXES;
        for (i = 0; i < n; i++)
            if (!strcmp(p, SUFFIXES[i].suffix)) break;
        if (i == n) return false;
        v = v * SUFFIXES[i].mult / SUFFIXES[i].div;
    }
    *out = neg ? -v : v;
    return true;
}

bool quantity_of(json_object *v, long double *out) {
    if (json_object_is_type(v, json_type_int)) {
        *out = (long double)json_object_get_int64(v);
        return true;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (!isfinite(d)) return false;
        *out = d;
        return true;
    }
    return json_object_is_type(v, json_type_string) && quantity_parse(json_object_get_string(v), out);
}
