/* reconcile/hash.c - Go's encoding/json, just enough of it for the typed
 * collector Config; see hash.h.
 *
 * What the typed struct does to the user's map (reconcile.md 2.3): fixed
 * top-level and service/pipeline key order, optional sections omitted when
 * nil, unknown keys outside the free-form maps dropped. Free-form maps are
 * Go map[string]interface{}: keys sorted bytewise. Numbers went through the
 * API server as float64, so an integer is printed the way Go prints the
 * float64 it becomes (2^63-ish values lose digits there, and here too).
 *
 * The writer appends to one growing buffer. */
#include "reconcile/hash.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "base/utf8.h"

#include <math.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The Go text so far; nonfinite sticks once a value JSON cannot hold was
 * met (Go's Marshal fails on it), which keeps the recursive writers free
 * of error plumbing. */
typedef struct buf {
    sbuf s;
    int nonfinite;
} buf;

static void put(buf *b, const char *s, size_t n) { sbuf_add(&b->s, s, n); }

static void puts_(buf *b, const char *s) { sbuf_puts(&b->s, s); }

/* Go's encodeState.string with HTML escaping on (json.Marshal's default). */
static void put_string(buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c < 0x80) {
            if (c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&') {
                put(b, (const char *)&s[i], 1);
            } else if (c == '"' || c == '\\') {
                esc[0] = '\\';
                esc[1] = (char)c;
                put(b, esc, 2);
            } else if (c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f') {
                esc[0] = '\\';
                esc[1] = c == '\n' ? 'n' : c == '\r' ? 'r' : c == '\t' ? 't' : c == '\b' ? 'b' : 'f';
                put(b, esc, 2);
            } else {
                memcpy(esc, "\\u00", 4);
                esc[4] = hex[c >> 4];
                esc[5] = hex[c & 15];
                put(b, esc, 6);
            }
            i++;
            continue;
        }
        /* Multi-byte: an invalid byte is written as U+FFFD. */
        size_t l = utf8_len((const unsigned char *)s + i, n - i);
        int ok = l > 0;
        uint32_t cp = 0;
        if (l == 3) cp = (uint32_t)(c & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6 | (uint32_t)(s[i + 2] & 0x3f);
        if (!ok) {
            puts_(b, "\\ufffd");
            i++;
        } else if (cp == 0x2028 || cp == 0x2029) {
            puts_(b, cp == 0x2028 ? "\\u2028" : "\\u2029");
            i += l;
        } else {
            put(b, &s[i], l);
            i += l;
        }
    }
    put(b, "\"", 1);
}

/* strconv.AppendFloat(f, 'f' or 'e', -1, 64) as encoding/json uses it:
 * the shortest digits that read back as f, in fixed notation unless
 * |f| < 1e-6 or >= 1e21, with "e-07" cleaned to "e-7". */
static void put_number(buf *b, double f) {
    char tmp[64], digits[32], out[400];
    int exp10, nd = 0, neg = f < 0;
    if (!isfinite(f)) {
        b->nonfinite = 1;
        return;
    }
    if (f == 0) {
        puts_(b, "0"); /* -0 included: Go prints "-0", json input never has it */
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, f);
        if (strtod(tmp, NULL) == f) break;
    }
    /* tmp: [-]d[.ddd]e[+-]xx */
    {
        const char *p = tmp + neg;
        for (; *p && *p != 'e'; p++)
            if (*p >= '0' && *p <= '9') digits[nd++] = *p;
        exp10 = atoi(p + 1);
        while (nd > 1 && digits[nd - 1] == '0') nd--;
        digits[nd] = '\0';
    }
    {
        double a = fabs(f);
        char *o = out;
        if (neg) *o++ = '-';
        if (a < 1e-6 || a >= 1e21) {
            *o++ = digits[0];
            if (nd > 1) {
                *o++ = '.';
                memcpy(o, digits + 1, (size_t)nd - 1);
                o += nd - 1;
            }
            o += sprintf(o, "e%c%d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
        } else if (exp10 < 0) {
            *o++ = '0';
            *o++ = '.';
            for (int i = 0; i < -exp10 - 1; i++) *o++ = '0';
            memcpy(o, digits, (size_t)nd);
            o += nd;
        } else if (exp10 >= nd - 1) {
            memcpy(o, digits, (size_t)nd);
            o += nd;
            for (int i = 0; i < exp10 - (nd - 1); i++) *o++ = '0';
        } else {
            memcpy(o, digits, (size_t)exp10 + 1);
            o += exp10 + 1;
            *o++ = '.';
            memcpy(o, digits + exp10 + 1, (size_t)(nd - exp10 - 1));
            o += nd - exp10 - 1;
        }
        *o = '\0';
    }
    puts_(b, out);
}

static void put_value(buf *b, json_object *v, int depth);

/* A free-form map: keys sorted bytewise, each value written by put_val. */
static void put_sorted(buf *b, json_object *v, int depth, void (*put_val)(buf *, json_object *, int)) {
    size_t n;
    jkv *m = jsorted_members(v, &n);
    put(b, "{", 1);
    for (size_t i = 0; i < n; i++) {
        if (i) put(b, ",", 1);
        put_string(b, m[i].key, strlen(m[i].key));
        put(b, ":", 1);
        put_val(b, m[i].val, depth + 1);
    }
    put(b, "}", 1);
    free(m);
}

static void put_map(buf *b, json_object *v, int depth) { put_sorted(b, v, depth, put_value); }

static void put_value(buf *b, json_object *v, int depth) {
    if (depth > 1000) { /* Go refuses such nesting too; never a real config */
        b->nonfinite = 1;
        return;
    }
    switch (json_object_get_type(v)) {
    case json_type_null:
        puts_(b, "null");
        break;
    case json_type_boolean:
        puts_(b, json_object_get_boolean(v) ? "true" : "false");
        break;
    case json_type_int:
        put_number(b, (double)json_object_get_int64(v));
        break;
    case json_type_double:
        put_number(b, json_object_get_double(v));
        break;
    case json_type_string:
        put_string(b, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        break;
    case json_type_array: {
        size_t n = json_object_array_length(v);
        put(b, "[", 1);
        for (size_t i = 0; i < n; i++) {
            if (i) put(b, ",", 1);
            put_value(b, json_object_array_get_idx(v, i), depth + 1);
        }
        put(b, "]", 1);
        break;
    }
    case json_type_object:
        put_map(b, v, depth);
        break;
    }
}

/* AnyConfig: its map, "null" when absent or not a map (Go's nil map). */
static void put_any(buf *b, json_object *v) {
    if (json_object_is_type(v, json_type_object))
        put_map(b, v, 1);
    else
        puts_(b, "null");
}

/* []string: non-strings cannot decode into it; we skip them rather than
 * fail, the collector rejects such a config anyway. */
static void put_strings(buf *b, json_object *arr) {
    size_t n = json_object_array_length(arr), k = 0;
    put(b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!json_object_is_type(e, json_type_string)) continue;
        if (k++) put(b, ",", 1);
        put_string(b, json_object_get_string(e), (size_t)json_object_get_string_len(e));
    }
    put(b, "]", 1);
}

static void put_pipeline(buf *b, json_object *p) {
    json_object *ex, *pr, *rx;
    if (!json_object_is_type(p, json_type_object)) {
        puts_(b, "null");
        return;
    }
    ex = jarr(p, "exporters");
    pr = jarr(p, "processors");
    rx = jarr(p, "receivers");
    puts_(b, "{\"exporters\":");
    if (ex) put_strings(b, ex);
    else puts_(b, "null");
    if (pr && json_object_array_length(pr) > 0) {
        puts_(b, ",\"processors\":");
        put_strings(b, pr);
    }
    puts_(b, ",\"receivers\":");
    if (rx) put_strings(b, rx);
    else puts_(b, "null");
    put(b, "}", 1);
}

static void put_pipeline_at(buf *b, json_object *v, int depth) {
    (void)depth;
    put_pipeline(b, v);
}

static void put_service(buf *b, json_object *svc) {
    json_object *ext = jarr(svc, "extensions");
    json_object *tel = jget(svc, "telemetry");
    json_object *pipes = jmap(svc, "pipelines");
    int first = 1;
    put(b, "{", 1);
    if (ext && json_object_array_length(ext) > 0) {
        puts_(b, "\"extensions\":");
        put_strings(b, ext);
        first = 0;
    }
    if (json_object_is_type(tel, json_type_object)) {
        puts_(b, first ? "\"telemetry\":" : ",\"telemetry\":");
        put_map(b, tel, 1);
        first = 0;
    }
    puts_(b, first ? "\"pipelines\":" : ",\"pipelines\":");
    if (!pipes) {
        puts_(b, "null");
    } else {
        put_sorted(b, pipes, 1, put_pipeline_at);
    }
    put(b, "}", 1);
}

char *reconcile_config_json(json_object *config, char *err, size_t errlen) {
    static const char *const optional[] = {"processors", "connectors", "extensions"};
    buf b = {SBUF_INIT, 0};
    puts_(&b, "{\"receivers\":");
    put_any(&b, jget(config, "receivers"));
    puts_(&b, ",\"exporters\":");
    put_any(&b, jget(config, "exporters"));
    for (size_t i = 0; i < 3; i++) {
        json_object *v = jget(config, optional[i]);
        if (!json_object_is_type(v, json_type_object)) continue; /* nil pointer */
        put(&b, ",\"", 2);
        puts_(&b, optional[i]);
        puts_(&b, "\":");
        put_map(&b, v, 1);
    }
    puts_(&b, ",\"service\":");
    put_service(&b, jmap(config, "service"));
    put(&b, "}", 1);
    if (b.nonfinite) {
        snprintf(err, errlen, "spec.config holds a number JSON cannot represent (.inf or .nan)");
        sbuf_free(&b.s);
        return NULL;
    }
    return sbuf_take(&b.s, NULL);
}

int reconcile_config_hash(json_object *config, char out[RECONCILE_HASH_HEX], char *err, size_t errlen) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char *json = reconcile_config_json(config, err, errlen);
    if (!json) return -1;
    if (EVP_Digest(json, strlen(json), md, &mdlen, EVP_sha256(), NULL) != 1 || mdlen != 32) {
        free(json);
        snprintf(err, errlen, "sha256 failed");
        return -1;
    }
    free(json);
    for (unsigned i = 0; i < 32; i++) sprintf(out + 2 * i, "%02x", md[i]);
    out[64] = '\0';
    return 0;
}
