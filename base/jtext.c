/* base/jtext.c - JSON text writer; see jtext.h. */
#include "base/jtext.h"

#include "base/alloc.h"
#include "base/utf8.h"

#include <emmintrin.h>

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

/* 16 bytes at a time: a mask of the bytes that need care (a quote, a
 * backslash, a control character, or non-ASCII, all of which the signed
 * compare with 0x20 catches together). */
static inline unsigned special16(__m128i x) {
    __m128i q = _mm_cmpeq_epi8(x, _mm_set1_epi8('"')), b = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
    __m128i c = _mm_cmplt_epi8(x, _mm_set1_epi8(0x20));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(q, b), c));
}

/* The quotes and backslashes of 16 bytes (jtext_string_text's texts have
 * no other byte to escape). */
static inline unsigned quote16(__m128i x) {
    __m128i q = _mm_cmpeq_epi8(x, _mm_set1_epi8('"')), b = _mm_cmpeq_epi8(x, _mm_set1_epi8('\\'));
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(q, b));
}

/* Stores the 16 bytes at s whole at d (the caller has the room) and gives
 * the offset of the first one mask flags, 16 for none: the bytes past it
 * are rewritten by what the caller writes next. */
static inline unsigned copy16(char *d, const char *s, unsigned (*mask)(__m128i)) {
    __m128i x = _mm_loadu_si128((const __m128i *)s);
    _mm_storeu_si128((__m128i *)d, x);
    unsigned m = mask(x);
    return m ? (unsigned)__builtin_ctz(m) : 16;
}

static inline int byte_plain(unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; }

/* Most keys and values are shorter than 16 bytes and plain: two
 * overlapping words read and written whole, no call. Writes n bytes at d
 * when s is plain, else nothing. */
static inline __attribute__((always_inline)) int short_plain(char *d, const char *s, size_t n) {
    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        if (!word_plain(a) || !word_plain(b)) return 0;
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
        return 1;
    }
    if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        if (!word_plain(a | (uint64_t)b << 32)) return 0;
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        if (!byte_plain((unsigned char)s[i])) return 0;
    for (size_t i = 0; i < n; i++) d[i] = s[i];
    return 1;
}

/* Room for at least extra more bytes at *d (d moves when the buffer does). */
static inline char *room(sbuf *o, char *d, size_t extra) {
    o->len = (size_t)(d - o->s);
    sbuf_reserve(o, extra);
    return o->s + o->len;
}

void jtext_string(sbuf *o, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    /* Invariant below: room for the n - i bytes still to read, their two
     * quotes' worth, and 16 for the speculative vector stores. */
    sbuf_reserve(o, n + 18);
    char *d = o->s + o->len;
    *d++ = '"';
    if (n < 16 && short_plain(d, s, n)) {
        d += n;
        goto done;
    }
    /* 16 to 32 bytes (paths, env names, images): two overlapping vectors. */
    if (n >= 16 && n <= 32) {
        __m128i x = _mm_loadu_si128((const __m128i *)s), y = _mm_loadu_si128((const __m128i *)(s + n - 16));
        if (!(special16(x) | special16(y))) {
            _mm_storeu_si128((__m128i *)d, x);
            _mm_storeu_si128((__m128i *)(d + n - 16), y);
            d += n;
            goto done;
        }
    }
    /* run: where in s the output's current verbatim copy began, so the
     * last 1-15 bytes can be read as the string's last 16 when that many
     * were copied as they are (the vector store rewrites the same bytes). */
    size_t i = 0, run = 0;
    while (i < n) {
        if (i + 16 <= n) {
            unsigned b = copy16(d, s + i, special16);
            d += b, i += b;
            if (b == 16) continue;
        } else if (n >= 16 && i - run >= 16 - (n - i)) {
            size_t back = 16 - (n - i);
            __m128i x = _mm_loadu_si128((const __m128i *)(s + n - 16));
            unsigned m = special16(x) >> back;
            _mm_storeu_si128((__m128i *)(d - back), x);
            if (!m) {
                d += n - i, i = n;
                break;
            }
            unsigned b = (unsigned)__builtin_ctz(m);
            d += b, i += b;
        } else {
            while (i < n && byte_plain((unsigned char)s[i])) *d++ = s[i++];
            if (i == n) break;
        }
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t ul = utf8_len((const unsigned char *)s + i, n - i);
            if (ul) { /* valid UTF-8 is copied as it is: the run goes on */
                for (size_t k = 0; k < ul; k++) *d++ = s[i + k];
                i += ul;
                continue;
            }
            d = room(o, d, (n - i) + 24);
            memcpy(d, "\\ufffd", 6);
            d += 6, run = ++i;
            continue;
        }
        d = room(o, d, (n - i) + 24);
        *d++ = '\\';
        switch (c) {
        case '"': *d++ = '"'; break;
        case '\\': *d++ = '\\'; break;
        case '\n': *d++ = 'n'; break;
        case '\t': *d++ = 't'; break;
        case '\r': *d++ = 'r'; break;
        case '\b': *d++ = 'b'; break;
        case '\f': *d++ = 'f'; break;
        default:
            *d++ = 'u', *d++ = '0', *d++ = '0';
            *d++ = hex[c >> 4], *d++ = hex[c & 15];
        }
        run = ++i;
    }
done:
    *d++ = '"';
    *d = 0;
    o->len = (size_t)(d - o->s);
}

/* A word with no quote and no backslash is copied whole; in the others
 * each byte is written after a backslash that is kept only when the byte
 * needs it (no branch to mispredict on text as dense in quotes as JSON). */
static inline int word_unquoted(uint64_t x) {
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return (((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS ? 0 : 1;
}

void jtext_string_text(sbuf *o, const char *s, size_t n) {
    sbuf_reserve(o, 2 * n + 18);
    char *d = o->s + o->len;
    *d++ = '"';
    size_t i = 0;
    /* 16 bytes a step, stored whole; at each quote or backslash in them a
     * backslash is written and the 16 bytes from it stored again one
     * further on (the part past the step rewritten by the next one), so a
     * quote costs a few instructions, not a step of its own. Reading 16
     * bytes from the last quote needs 16 more past the step. */
    while (i + 32 <= n) {
        __m128i x = _mm_loadu_si128((const __m128i *)(s + i));
        _mm_storeu_si128((__m128i *)d, x);
        unsigned m = quote16(x);
        size_t k = 0;
        while (m) {
            unsigned b = (unsigned)__builtin_ctz(m);
            d[k + b] = '\\';
            k++;
            _mm_storeu_si128((__m128i *)(d + k + b), _mm_loadu_si128((const __m128i *)(s + i + b)));
            m &= m - 1;
        }
        d += 16 + k, i += 16;
    }
    /* The rest up to the next quote or backslash, 16 bytes a step. */
    while (i + 16 <= n) {
        unsigned b = copy16(d, s + i, quote16);
        d += b, i += b;
        if (b == 16) continue;
        *d++ = '\\';
        *d++ = s[i++];
    }
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
    sbuf_reserve(o, n + 4);
    char *d = o->s + o->len;
    if (!first) *d++ = ',';
    *d++ = '"';
    if (n < 16 ? !short_plain(d, k, n) : plain_prefix(k, n) != n) {
        o->len = (size_t)(d - 1 - o->s);
        jtext_string(o, k, n);
        put1(o, ':');
        return;
    }
    if (n >= 16) memcpy(d, k, n);
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

/* A value's text kept with it (jtext_keep), found through json-c's
 * userdata by its magic word. */
#define KEPT_MAGIC 0x6b657074u
typedef struct kept {
    uint32_t magic;
    size_t len;
    char text[];
} kept;

static void kept_free(json_object *o, void *ud) {
    (void)o;
    free(ud);
}

static inline const kept *kept_of(json_object *v) {
    const kept *k = json_object_get_userdata(v);
    return k && k->magic == KEPT_MAGIC ? k : NULL;
}

bool jtext_kept(json_object *v) {
    /* Only objects and arrays are kept; a parsed double's userdata is its text. */
    json_type t = json_object_get_type(v);
    return (t == json_type_object || t == json_type_array) && kept_of(v) != NULL;
}

size_t jtext_keep(json_object *v) {
    if (!json_object_is_type(v, json_type_object) && !json_object_is_type(v, json_type_array)) return 0;
    const kept *old = kept_of(v);
    if (old) return old->len;
    if (json_object_get_userdata(v)) return 0; /* somebody else's */
    sbuf b = SBUF_INIT;
    jtext_append(&b, v);
    kept *k = xmalloc(sizeof *k + b.len + 1);
    k->magic = KEPT_MAGIC;
    k->len = b.len;
    memcpy(k->text, b.s ? b.s : "", b.len + 1);
    sbuf_free(&b);
    json_object_set_userdata(v, k, kept_free);
    return k->len;
}

/* A scalar: inline where a container writes its members, so that a
 * string member (most of them) costs no call of its own beyond the
 * string's. */
static inline __attribute__((always_inline)) void append_scalar(sbuf *o, json_object *v, json_type t) {
    switch (t) {
    case json_type_null: sbuf_lit(o, "null"); break;
    case json_type_boolean:
        if (json_object_get_boolean(v)) sbuf_lit(o, "true");
        else sbuf_lit(o, "false");
        break;
    case json_type_int: {
        /* json-c answers INT64_MAX for a uint64 past it (a YAML config's
         * 18446744073709551615): that one is written as what it holds. */
        int64_t x = json_object_get_int64(v);
        if (x == INT64_MAX) {
            char num[24];
            int k = snprintf(num, sizeof num, "%" PRIu64, json_object_get_uint64(v));
            sbuf_add(o, num, (size_t)k);
        } else {
            put_int(o, x);
        }
        break;
    }
    case json_type_double: {
        /* Rare in pods; json-c keeps the original text of parsed numbers. */
        const char *d = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
        sbuf_add(o, d, strlen(d));
        break;
    }
    case json_type_string: jtext_string(o, json_object_get_string(v), (size_t)json_object_get_string_len(v)); break;
    default: break;
    }
}

static void append_container(sbuf *o, json_object *v, json_type t);

static inline void append_member(sbuf *o, json_object *v) {
    json_type t = json_object_get_type(v);
    if (t == json_type_object || t == json_type_array) append_container(o, v, t);
    else append_scalar(o, v, t);
}

static void write_container(sbuf *o, json_object *v, json_type t) {
    if (t == json_type_array) {
        size_t n = json_object_array_length(v);
        put1(o, '[');
        for (size_t i = 0; i < n; i++) {
            if (i) put1(o, ',');
            append_member(o, json_object_array_get_idx(v, i));
        }
        put1(o, ']');
        return;
    }
    int first = 1;
    put1(o, '{');
    json_object_object_foreach(v, k, val) {
        member_key(o, k, first);
        first = 0;
        append_member(o, val);
    }
    put1(o, '}');
}

static void append_container(sbuf *o, json_object *v, json_type t) {
    const kept *k = kept_of(v);
    if (k) {
#ifdef MUTATE_SELF_CHECK
        /* The checked builds: a kept value must not have changed since. */
        sbuf fresh = SBUF_INIT;
        write_container(&fresh, v, t);
        if (fresh.len != k->len || memcmp(fresh.s, k->text, k->len) != 0) {
            fprintf(stderr, "jtext: a kept value changed after jtext_keep:\n%s\n%s\n", k->text, fresh.s);
            abort();
        }
        sbuf_free(&fresh);
#endif
        sbuf_add(o, k->text, k->len);
        return;
    }
    write_container(o, v, t);
}

void jtext_append(sbuf *o, json_object *v) { append_member(o, v); }

char *jtext(json_object *v, size_t *len) {
    sbuf o = SBUF_INIT;
    sbuf_reserve(&o, 4096);
    o.s[0] = 0;
    jtext_append(&o, v);
    return sbuf_take(&o, len);
}
