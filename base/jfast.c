/* base/jfast.c - a one-pass parse of request bodies into json-c trees.
 *
 * json-c's tokener reads a byte at a time through a state machine and
 * copies every key and string through a printbuf: about 40 instructions
 * per byte, the largest single cost of a pod admission. What the API
 * server sends is Go's encoding/json output, a narrow and regular shape,
 * and this parser reads that shape in tight loops (strings eight bytes at
 * a time) and builds the tree the tokener would have built, through the
 * same json-c calls: json_object_new_object, _array, _string_len, _int64
 * and _boolean, NULL for null, and _array_add in document order; members
 * go in through the table calls json_object_object_add makes (a lookup,
 * then an insert, with the key hashed once), a key that is a field name
 * of the API (base/jkeys.h) as json-c's constant key instead of a copy.
 * The values, the members' order and each object's table are therefore
 * json-c's own; only the reading is ours.
 *
 * It is a subset, not a second grammar. Whatever is not plainly inside it
 * is declined, nothing is built, and the caller parses with json-c, which
 * then defines the tree and every error message: a malformed body costs
 * one wasted scan, never a different answer. Declined, besides malformed
 * text: control characters inside strings (json-c 0.16 takes them raw),
 * \u0000 and surrogate escapes, escaped keys, numbers other than integers
 * of at most 18 digits (no int64 overflow to reason about; json-c keeps a
 * double's text, which this would have to copy), "-0", a key written twice
 * in one object (json-c keeps the last value at the first one's place; the
 * skip below would have to agree with the skimmer's first match) and
 * nesting past 24 levels (json-c's default limit is 32). Bytes from 0x80
 * up are copied as they are, as json-c does without
 * JSON_TOKENER_VALIDATE_UTF8.
 *
 * The builds the test suites run (-DMUTATE_SELF_CHECK) parse every pod
 * review both ways and abort when the two trees' texts differ
 * (server/review.c), so the fuzz targets and every suite hold the two
 * parsers to each other.
 *
 * The paths: values the caller never reads are checked as strict JSON by
 * the managedFields skimmer's own rule (jfast_skip_value, shared with
 * server/review.c's fallback) and not built. The pod's managedFields
 * becomes null, as if the skimmed copy had been parsed: the tree is the
 * one the skimmer and json-c give together, in one pass instead of two and
 * without the copy. Other members are left out, and the fallback prunes
 * its tree of the same members (jfast_prune), so that the two parses
 * agree and the caller sees one tree whichever ran. Every json-c object
 * costs about 700 instructions to make (a 16-slot table, zeroed) and as
 * much again to free, so a probe or a toleration never read is worth not
 * building.
 *
 * The budget (jfast_parse_within): json-c spends about 800 bytes on a
 * `{}`, so 3 MiB of `[{},{},...]` is 800 MiB of tree. Each part is charged
 * its estimated allocation before it is made, and the first charge past
 * the budget stops the parse, the tree so far freed: the memory one body
 * may cost is the budget, whatever its shape. What the caller hands to
 * json-c instead gets jfast_cost_bound, one scan of the structure outside
 * strings, so that json-c never starts a tree the budget cannot hold. */
#include "base/jfast.h"

#include "base/alloc.h"
#include "base/jhash.h"
#include "base/jkeys.h"

#include <json-c/linkhash.h>

#include <ctype.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define JFAST_MAX_DEPTH 24

typedef struct {
    const char *p, *end;
    char *buf; /* escaped strings are decoded here */
    size_t cap;
    size_t left; /* of the budget: what the tree built so far has not charged */
    bool over;   /* a charge passed it: the parse stops, nothing is kept */
} parser;

/* A charge for n bytes of tree, before they are built: false (and the
 * parse stops) when they would pass the budget. */
static inline bool charge(parser *ps, size_t n) {
    if (__builtin_expect(n > ps->left, 0)) {
        ps->over = true;
        return false;
    }
    ps->left -= n;
    return true;
}

/* ---- plain text, eight bytes at a time --------------------------------- */

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* The bytes of x that are '"', '\\' or below 0x20, as their high bits
 * ("has a zero byte" tricks). Bytes above a flagged one may be flagged
 * falsely (a borrow runs upward), never the lowest: the first special
 * byte is exactly the lowest flag. */
static inline uint64_t special_mask(uint64_t x) {
    uint64_t q = x ^ (ONES * '"'), b = x ^ (ONES * '\\');
    return (((x - ONES * 0x20) & ~x) | ((q - ONES) & ~q) | ((b - ONES) & ~b)) & HIGHS;
}

/* The first '"', '\\' or control character at or after p, or end. */
static inline const char *plain_end(const char *p, const char *end) {
    uint64_t w, m;
#ifdef __SSE2__
    /* Sixteen bytes a step where there are sixteen (SSE2 is part of
     * x86-64): most strings end within the first. */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        __m128i hit = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
                                   _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl));
        unsigned bits = (unsigned)_mm_movemask_epi8(hit);
        if (bits) return p + __builtin_ctz(bits);
        p += 16;
    }
#endif
    while (end - p >= 8) {
        memcpy(&w, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if ((m = special_mask(w))) return p + (__builtin_ctzll(m) >> 3);
#else
        if ((m = special_mask(w))) break;
#endif
        p += 8;
    }
    while (p < end && *p != '"' && *p != '\\' && (unsigned char)*p >= 0x20) p++;
    return p;
}

/* ---- the skimmer's structural rule ------------------------------------ */

static inline const char *ws(const char *p, const char *end) {
    if (p < end && (unsigned char)*p > ' ') return p; /* compact JSON: none */
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')) p++;
    return p;
}

const char *jfast_skip_ws(const char *p, const char *end) { return ws(p, end); }

/* The escapes JSON has: 1 for one character, 2 for \u and four hex
 * digits. A managedFields writes a list item's key as k:{\"name\":...},
 * so escapes are common in what is skipped. */
static const unsigned char escape_kind[256] = {['"'] = 1, ['\\'] = 1, ['/'] = 1, ['b'] = 1, ['f'] = 1,
                                               ['n'] = 1, ['r'] = 1,    ['t'] = 1, ['u'] = 2};

static inline bool hex(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline const char *skip_string(const char *p, const char *end) {
    p++;
#ifdef __SSE2__
    /* 16 bytes a step, each byte needing care (quote, backslash, control)
     * taken from the step's mask without loading it again: what is
     * skipped (a managedFields) is dense in escaped quotes. */
    const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\'), ctl = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)p);
        unsigned bits = (unsigned)_mm_movemask_epi8(_mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)), _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl)));
        unsigned next = 16;
        while (bits) {
            unsigned i = (unsigned)__builtin_ctz(bits);
            if (p[i] == '"') return p + i + 1;
            if (p[i] != '\\' || p + i + 1 >= end) return NULL; /* a control character, or the end */
            unsigned char kind = escape_kind[(unsigned char)p[i + 1]];
            if (!kind) return NULL;
            next = i + 2;
            if (kind == 2) {
                const char *h = p + i + 2;
                if (end - h < 4 || !hex((unsigned char)h[0]) || !hex((unsigned char)h[1]) || !hex((unsigned char)h[2]) ||
                    !hex((unsigned char)h[3]))
                    return NULL;
                next += 4;
            }
            if (next >= 16) break;
            bits &= ~((1u << next) - 1); /* the escaped byte is not one to look at */
            next = 16;
        }
        p += next;
    }
#endif
    for (;;) {
        p = plain_end(p, end); /* past plain text, eight bytes at a time */
        if (p >= end) return NULL;
        if (*p == '"') return p + 1;
        if (*p != '\\' || ++p >= end) return NULL; /* a control character, or the end */
        unsigned char kind = escape_kind[(unsigned char)*p++];
        if (!kind) return NULL;
        if (kind == 2) {
            if (end - p < 4 || !hex((unsigned char)p[0]) || !hex((unsigned char)p[1]) || !hex((unsigned char)p[2]) ||
                !hex((unsigned char)p[3]))
                return NULL;
            p += 4;
        }
    }
}

const char *jfast_skip_string(const char *p, const char *end) { return skip_string(p, end); }

static const char *skip_digits(const char *p, const char *end) {
    const char *q = p;
    while (q < end && isdigit((unsigned char)*q)) q++;
    return q > p ? q : NULL;
}

static const char *skip_value(const char *p, const char *end, int depth) {
    if (p >= end || depth <= 0) return NULL;
    switch (*p) {
    case '"': return skip_string(p, end);
    case 't': return end - p >= 4 && !memcmp(p, "true", 4) ? p + 4 : NULL;
    case 'f': return end - p >= 5 && !memcmp(p, "false", 5) ? p + 5 : NULL;
    case 'n': return end - p >= 4 && !memcmp(p, "null", 4) ? p + 4 : NULL;
    case '[':
    case '{': {
        char close = *p == '[' ? ']' : '}';
        p = ws(p + 1, end);
        if (p < end && *p == close) return p + 1;
        for (;;) {
            if (close == '}') {
                if (p >= end || *p != '"' || !(p = skip_string(p, end))) return NULL;
                /* A managedFields is mostly "f:name":{} leaves, and Go
                 * writes no whitespace: the colon, the empty object and
                 * the comma or brace after it are one 4-byte compare
                 * instead of four tests and four whitespace skips. */
                if (end - p >= 4 && depth > 1) {
                    if (memcmp(p, ":{},", 4) == 0) {
                        p = ws(p + 4, end);
                        continue;
                    }
                    if (memcmp(p, ":{}}", 4) == 0) return p + 4;
                }
                p = ws(p, end);
                if (p >= end || *p != ':') return NULL;
                p = ws(p + 1, end);
            }
            /* A managedFields is mostly "f:name":{} leaves. */
            if (end - p >= 2 && p[0] == '{' && p[1] == '}' && depth > 1) p += 2;
            else if (!(p = skip_value(p, end, depth - 1))) return NULL;
            p = ws(p, end);
            if (p < end && *p == close) return p + 1;
            if (p >= end || *p != ',') return NULL;
            p = ws(p + 1, end);
        }
    }
    default: /* a number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? */
        if (*p == '-') p++;
        if (p < end && *p == '0') p++;
        else if (!(p = skip_digits(p, end))) return NULL;
        if (p < end && *p == '.' && !(p = skip_digits(p + 1, end))) return NULL;
        if (p < end && (*p == 'e' || *p == 'E')) {
            p++;
            if (p < end && (*p == '+' || *p == '-')) p++;
            if (!(p = skip_digits(p, end))) return NULL;
        }
        return p;
    }
}

const char *jfast_skip_value(const char *p, const char *end, int depth) {
    return skip_value(p, end, depth);
}

/* ---- the parse ---------------------------------------------------------- */

static inline void put(parser *ps, size_t *n, const char *s, size_t len) {
    if (ps->cap - *n < len + 4) {
        ps->cap = (*n + len + 4) * 2;
        ps->buf = xrealloc(ps->buf, ps->cap);
    }
    memcpy(ps->buf + *n, s, len);
    *n += len;
}

static int hex4(const char *p) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        int c = (unsigned char)p[i], d;
        if (c >= '0' && c <= '9') d = c - '0';
        else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
        else return -1;
        v = v << 4 | d;
    }
    return v;
}

/* A string with escapes, from s (after the opening quote), decoded into
 * ps->buf; false to decline. */
static bool escaped(parser *ps, const char *s, json_object **out) {
    const char *end = ps->end;
    size_t n = 0;
    for (;;) {
        const char *q = plain_end(s, end);
        put(ps, &n, s, (size_t)(q - s));
        if (q >= end || (unsigned char)*q < 0x20) return false;
        if (*q == '"') {
            if (!charge(ps, JFAST_COST_STRING + n)) return false;
            *out = json_object_new_string_len(ps->buf, (int)n);
            if (!*out) base_oom();
            ps->p = q + 1;
            return true;
        }
        if (end - q < 2) return false;
        char c = q[1], one;
        s = q + 2;
        switch (c) {
        case '"': one = '"'; break;
        case '\\': one = '\\'; break;
        case '/': one = '/'; break;
        case 'b': one = '\b'; break;
        case 'f': one = '\f'; break;
        case 'n': one = '\n'; break;
        case 'r': one = '\r'; break;
        case 't': one = '\t'; break;
        case 'u': {
            int u = end - s >= 4 ? hex4(s) : -1;
            if (u <= 0 || (u >= 0xD800 && u <= 0xDFFF)) return false;
            s += 4;
            char utf[3];
            size_t k;
            if (u < 0x80) utf[0] = (char)u, k = 1;
            else if (u < 0x800) utf[0] = (char)(0xC0 | u >> 6), utf[1] = (char)(0x80 | (u & 0x3F)), k = 2;
            else
                utf[0] = (char)(0xE0 | u >> 12), utf[1] = (char)(0x80 | ((u >> 6) & 0x3F)),
                utf[2] = (char)(0x80 | (u & 0x3F)), k = 3;
            put(ps, &n, utf, k);
            continue;
        }
        default: return false;
        }
        put(ps, &n, &one, 1);
    }
}

static bool value(parser *ps, int depth, const jfast_path *paths, json_object **out);

/* The entry of paths for key k[0..n), or NULL. */
static inline const jfast_path *entry(const jfast_path *paths, const char *k, size_t n) {
    if (paths)
        for (; paths->key; paths++)
            /* The first byte first: most members are in no table, and
             * strncmp is a call. (k[0] is the closing quote of an empty key.) */
            if (paths->key[0] == (n ? k[0] : 0) && !strncmp(paths->key, k, n) && !paths->key[n]) return paths;
    return NULL;
}

/* After a member or an element: 1 past the closing bracket, 0 past a
 * comma (and the white space after it), -1 at anything else. */
static inline int after_item(parser *ps, char close) {
    const char *p = ws(ps->p, ps->end);
    if (p < ps->end && *p == close) {
        ps->p = p + 1;
        return 1;
    }
    if (p >= ps->end || *p != ',') return -1;
    ps->p = ws(p + 1, ps->end);
    return 0;
}

static bool object(parser *ps, int depth, const jfast_path *paths, json_object **out) {
    const char *end = ps->end, *p = ws(ps->p + 1, end);
    if (!charge(ps, JFAST_COST_OBJECT)) return false;
    json_object *o = json_object_new_object();
    if (!o) base_oom();
    jhash_adopt(o);
    struct lh_table *t = json_object_get_object(o);
    if (p < end && *p == '}') {
        ps->p = p + 1;
        *out = o;
        return true;
    }
    for (int sep, members = 0;; members++) {
        if (p >= end || *p != '"') goto decline;
        const char *k = p + 1, *ke = plain_end(k, end);
        if (ke >= end || *ke != '"') goto decline;
        size_t kl = (size_t)(ke - k);
        /* The member (its key as a copy, whether or not it is one) before
         * its value; past the tenth, the table has doubled. */
        if (!charge(ps, JFAST_COST_MEMBER + kl + (members >= 10 ? JFAST_COST_MEMBER_GROWN : 0))) goto decline;
        p = ws(ke + 1, end);
        if (p >= end || *p != ':') goto decline;
        p = ws(p + 1, end);
        const jfast_path *e = entry(paths, k, kl);
        if (e && !strcmp(e->key, "[]")) e = NULL; /* a member named "[]", not the elements' entry */
        json_object *v = NULL;
        if (e && e->what != JFAST_ENTER) {
            /* As deep as the value could be built (json-c's own limit is
             * deeper still): a deeper one is declined, and json-c says. */
            const char *ve = skip_value(p, end, JFAST_MAX_DEPTH - depth);
            if (!ve) goto decline;
            if (e->what == JFAST_DROP) {
                /* Left out, twice if written twice: json-c would keep
                 * the last one and the prune drop it, the same tree. */
                ps->p = ve;
                goto next;
            }
            if ((size_t)(ve - p) >= e->min_len) ps->p = ve;
            else {
                ps->p = p;
                if (!value(ps, depth + 1, NULL, &v)) goto decline;
            }
        } else {
            ps->p = p;
            if (!value(ps, depth + 1, e ? e->below : NULL, &v)) goto decline;
        }
        /* What json_object_object_add does, with the key hashed once (for
         * the vocabulary and the table) and, for a field name of the API,
         * no copy of it at all. */
        unsigned long h = jhash_key(k, kl);
        const char *lit = jkeys_known(k, kl, h);
        char *own = NULL;
        if (!lit) {
            own = xmalloc(kl + 1);
            memcpy(own, k, kl);
            own[kl] = 0;
        }
        if (lh_table_lookup_entry_w_hash(t, lit ? lit : own, h)) { /* a duplicate key */
            free(own);
            json_object_put(v);
            goto decline;
        }
        if (lh_table_insert_w_hash(t, lit ? lit : own, v, h, lit ? JSON_C_OBJECT_KEY_IS_CONSTANT : 0) != 0) base_oom();
    next:
        sep = after_item(ps, '}');
        if (sep < 0) goto decline;
        if (sep > 0) break;
        p = ps->p;
    }
    *out = o;
    return true;
decline:
    json_object_put(o);
    return false;
}

static bool array(parser *ps, int depth, const jfast_path *paths, json_object **out) {
    const char *end = ps->end, *p = ws(ps->p + 1, end);
    const jfast_path *each = entry(paths, "[]", 2), *below = each ? each->below : NULL;
    if (!charge(ps, JFAST_COST_ARRAY)) return false;
    json_object *a = json_object_new_array();
    if (!a) base_oom();
    ps->p = p;
    if (p < end && *p == ']') ps->p = p + 1;
    else
        for (int sep = 0; !sep;) {
            json_object *v;
            if (!charge(ps, JFAST_COST_ELEMENT) || !value(ps, depth + 1, below, &v)) goto decline;
            if (json_object_array_add(a, v) != 0) base_oom();
            if ((sep = after_item(ps, ']')) < 0) goto decline;
        }
    *out = a;
    return true;
decline:
    json_object_put(a);
    return false;
}

static bool literal(parser *ps, const char *word, size_t n) {
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n)) return false;
    ps->p += n;
    return true;
}

static bool value(parser *ps, int depth, const jfast_path *paths, json_object **out) {
    const char *p = ps->p, *end = ps->end;
    *out = NULL;
    if (p >= end || depth > JFAST_MAX_DEPTH) return false;
    switch (*p) {
    case '{': return object(ps, depth, paths, out);
    case '[': return array(ps, depth, paths, out);
    case '"': {
        const char *q = plain_end(p + 1, end);
        if (q < end && *q == '"') {
            if (!charge(ps, JFAST_COST_STRING + (size_t)(q - p - 1))) return false;
            *out = json_object_new_string_len(p + 1, (int)(q - p - 1));
            if (!*out) base_oom();
            ps->p = q + 1;
            return true;
        }
        return escaped(ps, p + 1, out);
    }
    case 't':
        if (!literal(ps, "true", 4) || !charge(ps, JFAST_COST_SCALAR)) return false;
        if (!(*out = json_object_new_boolean(1))) base_oom();
        return true;
    case 'f':
        if (!literal(ps, "false", 5) || !charge(ps, JFAST_COST_SCALAR)) return false;
        if (!(*out = json_object_new_boolean(0))) base_oom();
        return true;
    case 'n': return literal(ps, "null", 4);
    default: {
        bool neg = *p == '-';
        const char *q = p + neg;
        int64_t v = 0;
        if (q < end && *q == '0') {
            if (neg) return false;
            q++;
        } else {
            const char *d = q;
            while (q < end && *q >= '0' && *q <= '9' && q - d < 18) v = v * 10 + (*q++ - '0');
            if (q == d) return false;
        }
        /* A fraction, an exponent or more digits: json-c's to read. */
        if (q < end && (*q == '.' || *q == 'e' || *q == 'E' || *q == '+' || *q == '-' || (*q >= '0' && *q <= '9')))
            return false;
        if (!charge(ps, JFAST_COST_SCALAR)) return false;
        if (!(*out = json_object_new_int64(neg ? -v : v))) base_oom();
        ps->p = q;
        return true;
    }
    }
}

int jfast_parse_within(const char *body, size_t len, const jfast_path *paths, size_t budget, size_t *cost,
                       json_object **out) {
    *out = NULL;
    if (cost) *cost = 0;
    if (!body || len > (size_t)INT32_MAX) return 0;
    const char *end = body + len;
    parser ps = {.p = ws(body, end), .end = end, .left = budget};
    if (ps.p >= end || *ps.p != '{') return 0;
    json_object *root;
    bool ok = object(&ps, 1, paths, &root);
    free(ps.buf);
    if (cost) *cost = budget - ps.left;
    if (ps.over) return JFAST_OVER; /* whatever else the rest of the body holds */
    if (!ok) return 0;
    if (jfast_skip_ws(ps.p, end) != end) {
        json_object_put(root);
        return 0;
    }
    *out = root;
    return 1;
}

int jfast_parse(const char *body, size_t len, const jfast_path *paths, json_object **out) {
    return jfast_parse_within(body, len, paths, SIZE_MAX, NULL, out);
}

/* Structure outside strings is counted a byte at a time; strings are
 * passed eight or sixteen bytes at a time, to their closing quote (an
 * escape's next byte never closes one). Nothing is validated: a malformed
 * body gets a bound too, and json-c's error after it. */
size_t jfast_cost_bound(const char *body, size_t len) {
    const char *p = body, *end = body + len;
    size_t objects = 0, arrays = 0, commas = 0;
    while (p < end) {
        char c = *p++;
        if (c == '"') {
            for (;;) {
                p = plain_end(p, end);
                if (p >= end) break;
                if (*p == '"') {
                    p++;
                    break;
                }
                p += *p == '\\' ? 2 : 1; /* an escape, or a control character */
            }
        } else if (c == '{') objects++;
        else if (c == '[') arrays++;
        else if (c == ',') commas++;
    }
    /* Every value but the top one follows a container's opening bracket
     * or a comma; each may be a member of a grown table with the largest
     * scalar json-c makes (a double keeps its text: 96 bytes); every byte
     * of the body may be copied once (keys, strings, a number's text). */
    size_t items = commas + objects + arrays + 1;
    return len + objects * JFAST_COST_OBJECT + arrays * JFAST_COST_ARRAY +
           items * (JFAST_COST_MEMBER + JFAST_COST_MEMBER_GROWN + JFAST_COST_DOUBLE);
}

/* The key at keys[level], as written, in the object at p. */
static bool find(const char *p, const char *end, const char *const *keys, size_t n, const char **vstart,
                 const char **vend) {
    const char *key = keys[0];
    size_t kl = strlen(key);
    p = ws(p, end);
    if (p >= end || *p != '{') return false;
    p = ws(p + 1, end);
    if (p < end && *p == '}') return false;
    for (;;) {
        if (p >= end || *p != '"') return false;
        const char *k = p + 1, *ke = skip_string(p, end);
        if (!ke) return false;
        p = ws(ke, end);
        if (p >= end || *p != ':') return false;
        const char *v = ws(p + 1, end);
        bool match = (size_t)(ke - 1 - k) == kl && !memcmp(k, key, kl);
        if (match && n > 1) return find(v, end, keys + 1, n - 1, vstart, vend);
        const char *ve = skip_value(v, end, 513);
        if (!ve) return false;
        if (match) {
            *vstart = v;
            *vend = ve;
            return true;
        }
        p = ws(ve, end);
        if (p >= end || *p != ',') return false;
        p = ws(p + 1, end);
    }
}

bool jfast_find(const char *p, const char *end, const char *const *keys, size_t n, const char **vstart,
                const char **vend) {
    return n && find(p, end, keys, n, vstart, vend);
}

void jfast_prune(json_object *v, const jfast_path *paths) {
    if (!v || !paths) return;
    for (const jfast_path *e = paths; e->key; e++) {
        if (!strcmp(e->key, "[]")) {
            if (json_object_is_type(v, json_type_array))
                for (size_t i = 0, n = json_object_array_length(v); i < n; i++)
                    jfast_prune(json_object_array_get_idx(v, i), e->below);
        } else if (json_object_is_type(v, json_type_object)) {
            json_object *m;
            if (!json_object_object_get_ex(v, e->key, &m)) continue;
            if (e->what == JFAST_DROP) json_object_object_del(v, e->key);
            else if (e->what == JFAST_ENTER) jfast_prune(m, e->below);
        }
    }
}
