/* base/jtext.c - JSON text writer; see jtext.h. */
#include "base/jtext.h"

#include "base/utf8.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Eight bytes at a time: a word none of whose bytes is a control
 * character, a quote, a backslash or non-ASCII is copied as it is, which
 * is nearly every word of a patch (long strings of plain text). Classic
 * "has a zero byte" tricks; the < 0x20 test is exact because bytes >= 0x80
 * are caught by the high-bit test first. */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline int word_plain(uint64_t x) {
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    uint64_t special = (x | ((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS;
    return special == 0;
}

/* The offset of the first word (or the tail) that holds a byte needing
 * care, or n when there is none; the tail is tested padded with plain
 * bytes, so a short string (most keys and values) costs one test. */
static inline size_t plain_prefix(const char *s, size_t n) {
    size_t i = 0;
    uint64_t w;
    for (; i + 8 <= n; i += 8) {
        memcpy(&w, s + i, 8);
        if (!word_plain(w)) return i;
    }
    if (i == n) return n;
    w = ONES * 'a';
    memcpy(&w, s + i, n - i);
    return word_plain(w) ? n : i;
}

void jtext_string(sbuf *o, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    sbuf_reserve(o, n + 2);
    o->s[o->len++] = '"';
    size_t start = plain_prefix(s, n);
    if (start == n) {
        memcpy(o->s + o->len, s, n);
        o->len += n;
        o->s[o->len++] = '"';
        o->s[o->len] = 0;
        return;
    }
    size_t run = 0;
    for (size_t i = start; i < n; i++) {
        while (i + 8 <= n) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (!word_plain(w)) break;
            i += 8;
        }
        if (i >= n) break;
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t ul = utf8_len((const unsigned char *)s + i, n - i);
            if (ul) {
                i += ul - 1;
                continue;
            }
            sbuf_reserve(o, (i - run) + 8 + (n - i));
            memcpy(o->s + o->len, s + run, i - run);
            o->len += i - run;
            run = i + 1;
            memcpy(o->s + o->len, "\\ufffd", 6);
            o->len += 6;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') continue;
        sbuf_reserve(o, (i - run) + 8 + (n - i));
        memcpy(o->s + o->len, s + run, i - run);
        o->len += i - run;
        run = i + 1;
        o->s[o->len++] = '\\';
        switch (c) {
        case '"': o->s[o->len++] = '"'; break;
        case '\\': o->s[o->len++] = '\\'; break;
        case '\n': o->s[o->len++] = 'n'; break;
        case '\t': o->s[o->len++] = 't'; break;
        case '\r': o->s[o->len++] = 'r'; break;
        case '\b': o->s[o->len++] = 'b'; break;
        case '\f': o->s[o->len++] = 'f'; break;
        default:
            o->s[o->len++] = 'u';
            o->s[o->len++] = '0';
            o->s[o->len++] = '0';
            o->s[o->len++] = hex[c >> 4];
            o->s[o->len++] = hex[c & 15];
        }
    }
    sbuf_reserve(o, n - run + 2);
    memcpy(o->s + o->len, s + run, n - run);
    o->len += n - run;
    o->s[o->len++] = '"';
    o->s[o->len] = 0;
}

/* A word with no quote and no backslash is copied whole; in the others
 * each byte is written after a backslash that is kept only when the byte
 * needs it (no branch to mispredict on text as dense in quotes as JSON). */
static inline int word_unquoted(uint64_t x) {
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS ? 0 : 1;
}

void jtext_string_text(sbuf *o, const char *s, size_t n) {
    sbuf_reserve(o, 2 * n + 2);
    char *d = o->s + o->len;
    *d++ = '"';
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        if (word_unquoted(w)) {
            memcpy(d, &w, 8);
            d += 8;
            continue;
        }
        for (size_t k = i; k < i + 8; k++) {
            char c = s[k];
            *d = '\\';
            d += c == '"' || c == '\\';
            *d++ = c;
        }
    }
    for (; i < n; i++) {
        char c = s[i];
        *d = '\\';
        d += c == '"' || c == '\\';
        *d++ = c;
    }
    *d++ = '"';
    *d = 0;
    o->len = (size_t)(d - o->s);
}

static inline void put1(sbuf *o, char c) {
    sbuf_reserve(o, 1);
    o->s[o->len++] = c;
    o->s[o->len] = 0;
}

/* ',' (unless first), the key and ':' in one reserve: nearly every key is
 * plain ASCII, written as it is. */
static inline void member_key(sbuf *o, const char *k, int first) {
    size_t n = strlen(k);
    if (plain_prefix(k, n) != n) {
        if (!first) put1(o, ',');
        jtext_string(o, k, n);
        put1(o, ':');
        return;
    }
    sbuf_reserve(o, n + 4);
    char *d = o->s + o->len;
    if (!first) *d++ = ',';
    *d++ = '"';
    memcpy(d, k, n);
    d += n;
    *d++ = '"';
    *d++ = ':';
    *d = 0;
    o->len = (size_t)(d - o->s);
}

/* An int64 in decimal, as printf writes it with PRId64 (test_base). */
static inline void put_int(sbuf *o, int64_t x) {
    char num[24], *e = num + sizeof num, *d = e;
    uint64_t u = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
    do *--d = (char)('0' + u % 10);
    while (u /= 10);
    if (x < 0) *--d = '-';
    sbuf_add(o, d, (size_t)(e - d));
}

void jtext_append(sbuf *o, json_object *v) {
    switch (json_object_get_type(v)) {
    case json_type_null: sbuf_add(o, "null", 4); break;
    case json_type_boolean: json_object_get_boolean(v) ? sbuf_add(o, "true", 4) : sbuf_add(o, "false", 5); break;
    case json_type_int: put_int(o, json_object_get_int64(v)); break;
    case json_type_double: {
        /* Rare in pods; json-c keeps the original text of parsed numbers. */
        const char *t = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        sbuf_add(o, t, strlen(t));
        break;
    }
    case json_type_string: jtext_string(o, json_object_get_string(v), (size_t)json_object_get_string_len(v)); break;
    case json_type_array: {
        size_t n = json_object_array_length(v);
        put1(o, '[');
        for (size_t i = 0; i < n; i++) {
            if (i) put1(o, ',');
            jtext_append(o, json_object_array_get_idx(v, i));
        }
        put1(o, ']');
        break;
    }
    case json_type_object: {
        int first = 1;
        put1(o, '{');
        json_object_object_foreach(v, k, val) {
            member_key(o, k, first);
            first = 0;
            jtext_append(o, val);
        }
        put1(o, '}');
        break;
    }
    }
}

char *jtext(json_object *v, size_t *len) {
    sbuf o = SBUF_INIT;
    sbuf_reserve(&o, 4096);
    o.s[0] = 0;
    jtext_append(&o, v);
    return sbuf_take(&o, len);
}
