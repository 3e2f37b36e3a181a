/* kube/yaml.c - YAML manifests to json-c values and back.
 *
 * Reading is driven by libyaml's event parser rather than its document
 * loader: events let us build json-c values directly, resolve anchors as
 * they complete and stop early on the first error, with no intermediate
 * node graph. Scalar typing reimplements go-yaml v2's resolver (the one
 * sigs.k8s.io/yaml and therefore kubectl use), because YAML 1.1 resolution
 * is where manifests surprise people and a webhook must see what the API
 * server will see:
 *
 *   - quoted and block scalars are strings; so is any scalar with an
 *     unknown or non-specific tag, !!str, !!binary (not decoded) and
 *     !!timestamp (go-yaml v2 also hands timestamps to interface{} as text).
 *   - plain null ~ Null NULL and the empty scalar are null.
 *   - y Y yes Yes YES true True TRUE on On ON are true; n N no No NO false
 *     False FALSE off Off OFF are false. Other casings are strings.
 *   - integers: optional sign, '_' anywhere (dropped), 0x/0X hex, 0o/0O and
 *     leading-0 octal, 0b/0B binary. "08" is not octal; like go-yaml it
 *     falls through to the float rule and becomes 8.0. Unsigned values past
 *     int64 up to 2^64-1 (no sign) are json-c uint64s, exact, as go-yaml's
 *     uint64; larger decimals become doubles via the float rule (go-yaml's
 *     float64); a non-decimal beyond 2^64-1 is a string.
 *   - floats: [-+]?(.d+|d+(.d*)?)([eE][-+]?d+)? -> double; overflow to
 *     infinity leaves the text a string, as go-yaml does.
 *   - .inf .Inf .INF (+/- signed) and .nan .NaN .NAN are floats in YAML but
 *     JSON cannot carry them and the API server rejects them, so they are
 *     kept as strings holding their source text. The emitter quotes such
 *     strings, and writes non-finite doubles handed to it as .inf/-.inf/.nan.
 *   - !!int !!bool !!float !!null force the type; a value that does not
 *     resolve to it is an error ("cannot decode !!str `x` as a !!int");
 *     !!float accepts integers.
 *
 * Map keys are always the scalar's text (so "1:" is "1", "yes:" is "yes");
 * a key the mapping already has is refused as go-yaml v3 refuses it
 * ("mapping key \"a\" already defined at line 2", two "<<" included; the
 * first one's line is found by a second pass, made only then). Merge keys
 * follow the YAML spec rather than go-yaml v2's order-dependent behaviour:
 * explicit keys beat merged ones wherever they appear, and among merged
 * maps the first one to supply a key wins.
 *
 * Aliases deep copy the anchored value, because json-c trees are
 * refcounted but not meant to be shared between parents (callers mutate
 * them). Copies make "billion laughs" a memory bomb, so every parse has a
 * node budget of 1,000,000 plus one per input byte: no alias-free input can
 * exhaust it, and alias expansion is charged the anchored value's size
 * before any copy is made. Counting nodes alone lets a few aliases of one
 * long scalar through (2,000 aliases of a 1 MiB string: 2,000 nodes, 2 GB),
 * so alias copies are also charged the bytes of every scalar they copy,
 * keys included, against KUBE_YAML_ALIAS_BYTES per parse. Text that is
 * written out, however long, costs nothing there: only what aliases add
 * is bounded.
 *
 * Nodes are not all alike either: json-c gives every map a 16-entry hash
 * table, so a file of empty flow maps ("{},{},...") costs some 800 bytes
 * of memory per 3 bytes of input, and 1 MiB of it 280 MB, past the
 * webhook's memory limit without a single alias. Every node is therefore
 * also charged what json-c will allocate for it (measured on json-c 0.16:
 * a map 800 bytes, a sequence 400, a value 80 plus its text, a null 16
 * (json-c has no null object: a slot), a key 32 plus its text; alias
 * copies their anchor's sum) against 64 MiB plus 48 bytes per input byte.
 * Manifests in block style cost 7 to 25 times their size and dense
 * one-line documents ("{kind: ConfigMap, metadata: {name: c1}}") about
 * 41, so at any size only shapes no manifest has reach the limit; a
 * resource file (at most 1 MiB) is held under 112 MiB while it is parsed.
 * Nesting is capped at KUBE_YAML_MAX_DEPTH levels
 * (aliases included) because json-c frees, copies and prints recursively.
 *
 * Writing is hand-rolled rather than libyaml's emitter: the quoting rules
 * must agree with the resolver above (libyaml knows nothing of "on" or
 * "0o17"), and block layout is easier to control directly. A string is
 * written plain only when it cannot be misread; single-line strings that
 * need quoting use double quotes; multi-line text becomes a literal block.
 * Strings must be valid UTF-8 to round trip: invalid bytes are written as
 * U+FFFD since YAML streams cannot carry them.
 *
 * Lines of values (kube_yaml_parse_lines, for messages about a value found
 * after the parse): a table from value pointer to line, filled as values are
 * attached, so it costs nothing unless asked for. A map member gets its
 * key's line (where people look for "containers:"), a list item or a root
 * its own. Alias copies get the lines of the anchored original, node for
 * node. Every value of the finished documents is recorded after it was
 * allocated, so its entry is its own even where a value freed during the
 * parse (a replaced duplicate key, a merge source) had the same address. */
#include "kube/yaml.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/sbuf.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define KUBE_YAML_MAX_DEPTH 1000
#define KUBE_YAML_NODE_BUDGET 1000000
/* Scalar bytes that alias copies may add to one parse (the whole stream):
 * 16 MiB is far more than anchors in manifests and collector configs
 * (shared env lists, processor chains) ever repeat, and small next to the
 * webhook's 256Mi memory limit. */
#define KUBE_YAML_ALIAS_BYTES ((size_t)16 << 20)
/* The memory estimate (see above): its limit, and what each node costs. */
#define KUBE_YAML_MEMORY_BASE ((size_t)64 << 20)
#define KUBE_YAML_MEMORY_PER_BYTE 48
enum { COST_MAP = 800, COST_SEQ = 400, COST_VALUE = 80, COST_NULL = 16, COST_KEY = 32 };
/* libyaml refuses simple keys longer than 1024 characters. */
#define KUBE_YAML_MAX_SIMPLE_KEY 1000

#define TAG_PREFIX "tag:yaml.org,2002:"

/* ------------------------------------------------------------------------
 * Scalar resolution
 * ---------------------------------------------------------------------- */

enum { K_STR, K_NULL, K_BOOL, K_INT, K_BIGINT, K_FLOAT, K_NONFINITE };

typedef struct scalar {
    int kind;
    int b;
    int64_t i;
    uint64_t u; /* K_BIGINT */
    double d;   /* K_FLOAT, and K_BIGINT as a float (!!float) */
} scalar;

static const struct {
    const char *s;
    int kind;
    int b;
} words[] = {
    {"y", K_BOOL, 1},    {"Y", K_BOOL, 1},     {"yes", K_BOOL, 1},   {"Yes", K_BOOL, 1},
    {"YES", K_BOOL, 1},  {"true", K_BOOL, 1},  {"True", K_BOOL, 1},  {"TRUE", K_BOOL, 1},
    {"on", K_BOOL, 1},   {"On", K_BOOL, 1},    {"ON", K_BOOL, 1},    {"n", K_BOOL, 0},
    {"N", K_BOOL, 0},    {"no", K_BOOL, 0},    {"No", K_BOOL, 0},    {"NO", K_BOOL, 0},
    {"false", K_BOOL, 0}, {"False", K_BOOL, 0}, {"FALSE", K_BOOL, 0}, {"off", K_BOOL, 0},
    {"Off", K_BOOL, 0},  {"OFF", K_BOOL, 0},   {"", K_NULL, 0},      {"~", K_NULL, 0},
    {"null", K_NULL, 0}, {"Null", K_NULL, 0},  {"NULL", K_NULL, 0},  {".nan", K_NONFINITE, 0},
    {".NaN", K_NONFINITE, 0}, {".NAN", K_NONFINITE, 0}, {".inf", K_NONFINITE, 0},
    {".Inf", K_NONFINITE, 0}, {".INF", K_NONFINITE, 0}, {"+.inf", K_NONFINITE, 0},
    {"+.Inf", K_NONFINITE, 0}, {"+.INF", K_NONFINITE, 0}, {"-.inf", K_NONFINITE, 0},
    {"-.Inf", K_NONFINITE, 0}, {"-.INF", K_NONFINITE, 0},
};

static int is_digit(int c) { return c >= '0' && c <= '9'; }

/* go-yaml's yamlStyleFloat: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int float_syntax(const char *s, size_t n) {
    size_t i = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit(s[i])) return 0;
        while (i < n && is_digit(s[i])) i++;
    } else {
        if (i >= n || !is_digit(s[i])) return 0;
        while (i < n && is_digit(s[i])) i++;
        if (i < n && s[i] == '.') {
            i++;
            while (i < n && is_digit(s[i])) i++;
        }
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '-' || s[i] == '+')) i++;
        if (i >= n || !is_digit(s[i])) return 0;
        while (i < n && is_digit(s[i])) i++;
    }
    return i == n;
}

/* strconv.ParseUint(s, 0, 64) after an optional sign: 1 when s is a valid
 * base-prefixed or decimal number that fits in uint64. *ovf tells a
 * well-formed number that is merely too big. */
static int go_uint(const char *s, size_t n, int *neg, int *sign, uint64_t *out, int *ovf) {
    size_t i = 0;
    unsigned base = 10;
    uint64_t v = 0;

    *neg = *sign = *ovf = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) {
        *neg = s[i] == '-';
        *sign = 1;
        i++;
    }
    if (i >= n) return 0;
    if (s[i] == '0' && n - i > 1) {
        int c = s[i + 1] | 0x20;
        if (n - i >= 3 && c == 'x') base = 16, i += 2;
        else if (n - i >= 3 && c == 'o') base = 8, i += 2;
        else if (n - i >= 3 && c == 'b') base = 2, i += 2;
        else base = 8, i += 1;
    }
    for (; i < n; i++) {
        int c = (unsigned char)s[i], d;
        if (is_digit(c)) d = c - '0';
        else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = (c | 0x20) - 'a' + 10;
        else return 0;
        if ((unsigned)d >= base) return 0;
        if (v > (UINT64_MAX - (uint64_t)d) / base) *ovf = 1;
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return !*ovf;
}

static void resolve_number(const char *s, size_t n, scalar *out) {
    char small[64], *p = small, *big = NULL;
    size_t m = 0;
    int neg, sign, ovf;
    uint64_t u;

    if (n >= sizeof small) {
        big = xmalloc(n + 1);
        p = big;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i] != '_') p[m++] = s[i];
    p[m] = 0;

    if (go_uint(p, m, &neg, &sign, &u, &ovf)) {
        if (!neg && u <= (uint64_t)INT64_MAX) {
            out->kind = K_INT;
            out->i = (int64_t)u;
            goto done;
        }
        if (neg && u <= (uint64_t)INT64_MAX + 1) {
            out->kind = K_INT;
            out->i = u == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)u;
            goto done;
        }
        if (!sign) { /* ParseUint takes no sign: a uint64, exact */
            out->kind = K_BIGINT;
            out->u = u;
            out->d = (double)u;
            goto done;
        }
    }
    if (float_syntax(p, m)) {
        double d = strtod(p, NULL);
        if (!isinf(d)) {
            out->kind = K_FLOAT;
            out->d = d;
        }
    }
done:
    free(big);
}

/* Types a plain, untagged scalar (see the header comment). */
static void resolve_plain(const char *s, size_t n, scalar *out) {
    int c = n ? (unsigned char)s[0] : 'N';

    memset(out, 0, sizeof *out);
    out->kind = K_STR;
    if (!(strchr("yYnNtTfFoO~.+-", c) || is_digit(c)) || c == 0) return;
    if (n <= 5) {
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
            if (strlen(words[i].s) == n && memcmp(words[i].s, s, n) == 0) {
                out->kind = words[i].kind;
                out->b = words[i].b;
                return;
            }
        }
    }
    if (c == '.') {
        if (float_syntax(s, n)) {
            char tmp[64], *p = n < sizeof tmp ? tmp : xmalloc(n + 1);
            if (!p) return;
            memcpy(p, s, n);
            p[n] = 0;
            out->d = strtod(p, NULL);
            if (p != tmp) free(p);
            if (!isinf(out->d)) out->kind = K_FLOAT;
        }
    } else if (c == '+' || c == '-' || is_digit(c)) {
        resolve_number(s, n, out);
    }
}

static const char *kind_name(int kind) {
    switch (kind) {
    case K_NULL: return "null";
    case K_BOOL: return "bool";
    case K_INT:
    case K_BIGINT: return "int";
    case K_FLOAT:
    case K_NONFINITE: return "float";
    default: return "str";
    }
}

/* Writes a short, single-line excerpt of s for error messages. */
static void excerpt(char *dst, size_t cap, const char *s, size_t n) {
    size_t j = 0;
    for (size_t i = 0; i < n && j + 4 < cap; i++)
        dst[j++] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
    if (j + 4 >= cap && n > j) dst[j++] = '.', dst[j++] = '.', dst[j++] = '.';
    dst[j] = 0;
}

/* Types a scalar event. Returns 0, or -1 with why filled when an explicit
 * tag and the value disagree. *merge is set for a "<<" merge key. */
static int resolve_event(const char *tag, int plain, const char *s, size_t n, scalar *out,
                         int *merge, char *why, size_t whylen) {
    const char *want;
    char ex[48];

    memset(out, 0, sizeof *out);
    out->kind = K_STR;
    *merge = 0;
    if (!tag) {
        if (!plain) return 0;
        if (n == 2 && s[0] == '<' && s[1] == '<') *merge = 1;
        resolve_plain(s, n, out);
        return 0;
    }
    if (strncmp(tag, TAG_PREFIX, sizeof TAG_PREFIX - 1) != 0) return 0;
    want = tag + sizeof TAG_PREFIX - 1;
    if (strcmp(want, "merge") == 0) {
        *merge = n == 2 && s[0] == '<' && s[1] == '<';
        return 0;
    }
    if (strcmp(want, "null") && strcmp(want, "bool") && strcmp(want, "int") &&
        strcmp(want, "float"))
        return 0; /* !!str, !!binary, !!timestamp, !!map on a scalar, ... */

    resolve_plain(s, n, out);
    if (strcmp(want, kind_name(out->kind)) == 0) return 0;
    if (strcmp(want, "float") == 0 && out->kind == K_INT) {
        out->kind = K_FLOAT;
        out->d = (double)out->i;
        return 0;
    }
    if (strcmp(want, "float") == 0 && out->kind == K_BIGINT) {
        out->kind = K_FLOAT;
        return 0;
    }
    excerpt(ex, sizeof ex, s, n);
    snprintf(why, whylen, "cannot decode !!%s `%s` as a !!%s", kind_name(out->kind), ex, want);
    return -1;
}

/* ------------------------------------------------------------------------
 * Reading
 * ---------------------------------------------------------------------- */

typedef struct frame {
    json_object *obj;  /* array or object under construction */
    char *key;         /* maps: pending key awaiting its value, or NULL */
    int is_map;
    int key_merge;     /* the pending key is "<<" */
    int key_line;
    int line;          /* where the container starts */
    int anchor;        /* index into ctx.anchors, or -1 */
    int height;        /* 1 + tallest child container */
    size_t nodes0;     /* node count when this container started */
    size_t bytes0;     /* scalar bytes when this container started */
    size_t cost0;      /* memory estimate when this container started */
    int flow;          /* flow style: its end event marks the closing bracket */
    int is_items;      /* the root mapping's items sequence */
    size_t start;      /* libyaml's index of the mapping's start (duplicate keys) */
    int merge_line;    /* maps: the line of its "<<" key, 0 when none */
    json_object *merged; /* maps: the keys a merge put there (explicit ones may follow) */
} frame;

typedef struct anchor {
    json_object *val; /* reference held while the document lasts */
    char *text;       /* scalars: source text, used when aliased as a key */
    size_t nodes;
    size_t bytes;     /* scalar bytes a copy repeats (keys included) */
    size_t cost;      /* the memory estimate of a copy */
    int height;
    int done;         /* 0 while the anchored node is still open */
} anchor;

typedef struct ctx {
    yaml_parser_t parser;
    const char *buf;
    size_t len;
    frame *st;
    size_t nst, capst;
    anchor *an;
    size_t nan, capan;
    json_object *anames; /* name -> index into an */
    size_t nodes, budget;
    size_t bytes;       /* scalar bytes so far, alias copies included */
    size_t alias_bytes; /* of which alias copies, against KUBE_YAML_ALIAS_BYTES */
    size_t cost, max_cost; /* the memory estimate and its limit */
    json_object *root;
    int have_root, doc_line;
    /* The current document's span, in libyaml's character indexes (see
     * byte_at), and the lines of its items. */
    size_t content_start;
    yaml_mark_t content_end;
    int spans;          /* positions can be mapped to bytes (not UTF-16) */
    size_t at_char, at_byte, bom; /* byte_at's cursor; the UTF-8 BOM's length */
    int *items;
    size_t nitems, capitems;
    kube_yaml_doc *docs;
    size_t ndocs, capdocs;
    kube_yaml_error *err;
    kube_yaml_lines *lines; /* NULL unless the caller asked for lines */
    kube_yaml_budget *shared; /* NULL unless the caller shares one across parses */
} ctx;

/* ------------------------------------------------------------------------
 * Lines of values: open addressing, pointer keys, grown at half full.
 * ---------------------------------------------------------------------- */

struct kube_yaml_lines {
    const void **keys;
    int *vals;
    size_t cap, n; /* cap is a power of two */
};

static size_t slot_of(const kube_yaml_lines *t, const void *k) {
    uint64_t h = (uint64_t)(uintptr_t)k * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> 20) & (t->cap - 1);
}

static void lines_put(kube_yaml_lines *t, const void *k, int line) {
    if (2 * (t->n + 1) > t->cap) {
        kube_yaml_lines old = *t;
        t->cap = old.cap ? old.cap * 2 : 256;
        t->keys = xcalloc(t->cap, sizeof *t->keys);
        t->vals = xcalloc(t->cap, sizeof *t->vals);
        t->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) lines_put(t, old.keys[i], old.vals[i]);
        free(old.keys);
        free(old.vals);
    }
    size_t i = slot_of(t, k);
    while (t->keys[i] && t->keys[i] != k) i = (i + 1) & (t->cap - 1);
    if (!t->keys[i]) t->n++;
    t->keys[i] = k;
    t->vals[i] = line;
}

int kube_yaml_line_of(const kube_yaml_lines *t, const json_object *v) {
    if (!t || !v || !t->cap) return 0;
    size_t i = slot_of(t, v);
    while (t->keys[i]) {
        if (t->keys[i] == v) return t->vals[i];
        i = (i + 1) & (t->cap - 1);
    }
    return 0;
}

void kube_yaml_lines_free(kube_yaml_lines *t) {
    if (!t) return;
    free(t->keys);
    free(t->vals);
    free(t);
}

/* An alias copy takes the lines of the original it copies, node for node
 * (json-c copies keep keys and items in order). */
static void lines_copy(kube_yaml_lines *t, json_object *orig, json_object *copy) {
    if (json_object_is_type(copy, json_type_object)) {
        json_object_object_foreach(copy, k, v) {
            json_object *o = NULL;
            json_object_object_get_ex(orig, k, &o);
            if (!v) continue;
            int line = kube_yaml_line_of(t, o);
            if (line) lines_put(t, v, line);
            lines_copy(t, o, v);
        }
    } else if (json_object_is_type(copy, json_type_array)) {
        for (size_t i = 0, n = json_object_array_length(copy); i < n; i++) {
            json_object *v = json_object_array_get_idx(copy, i), *o = json_object_array_get_idx(orig, i);
            if (!v) continue;
            int line = kube_yaml_line_of(t, o);
            if (line) lines_put(t, v, line);
            lines_copy(t, o, v);
        }
    }
}

static int fail(ctx *c, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(ctx *c, int line, const char *fmt, ...) {
    va_list ap;
    c->err->line = line;
    va_start(ap, fmt);
    vsnprintf(c->err->msg, sizeof c->err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

static int mark_line(yaml_mark_t m) { return (int)(m.line > (size_t)INT32_MAX - 1 ? INT32_MAX : m.line + 1); }

/* libyaml's marks count characters (a CRLF two, the BOM none), and callers
 * want bytes. Marks are asked for in nearly increasing order, so a cursor
 * walks the UTF-8 text (libyaml validated it) forward, and back for the
 * start of a line already passed. */
static size_t byte_at(ctx *c, size_t ch) {
    const unsigned char *b = (const unsigned char *)c->buf;
    while (c->at_char < ch && c->at_byte < c->len) {
        unsigned lead = b[c->at_byte];
        size_t w = lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
        c->at_byte = w < c->len - c->at_byte ? c->at_byte + w : c->len;
        c->at_char++;
    }
    while (c->at_char > ch) {
        do c->at_byte--;
        while (c->at_byte > c->bom && (b[c->at_byte] & 0xc0) == 0x80);
        c->at_char--;
    }
    return c->at_byte;
}

/* The span of the document just ended, in bytes. Its end is the end of
 * the last node's line, so that a trailing comment there goes with it; a
 * block scalar ends at the start of the line after its text, and an end
 * with nothing but indentation before it on its line is cut back to the
 * line's start. */
static void doc_span(ctx *c, kube_yaml_doc *d) {
    if (!c->spans) return;
    d->start = byte_at(c, c->content_start);
    size_t ls = byte_at(c, c->content_end.index - c->content_end.column);
    size_t end = byte_at(c, c->content_end.index), i = ls;
    while (i < end && c->buf[i] == ' ') i++;
    if (i < end || end <= d->start) {
        const char *nl = memchr(c->buf + end, '\n', c->len - end);
        end = nl ? (size_t)(nl - c->buf) + 1 : c->len;
    } else {
        end = ls;
    }
    d->end = end;
}

/* Notes, before ev is applied, what the document's span and item lines
 * need: where its root starts, the end of its last node (scalars, aliases
 * and flow collections end at their last character; the end of a block
 * collection is where the next token starts, past comments, so it does not
 * count), and where each element of the root's items starts. */
static void track(ctx *c, const yaml_event_t *ev) {
    int node = ev->type == YAML_SCALAR_EVENT || ev->type == YAML_ALIAS_EVENT || ev->type == YAML_SEQUENCE_START_EVENT ||
               ev->type == YAML_MAPPING_START_EVENT;
    if (node && c->nst == 0 && !c->have_root) {
        /* A document's line is where its content starts, not its "---":
         * messages point people at the object, not the separator. */
        c->doc_line = mark_line(ev->start_mark);
        c->content_start = ev->start_mark.index;
        c->content_end = ev->start_mark;
    }
    if (node && c->nst == 2 && c->st[1].is_items) {
        c->items = xgrow(c->items, &c->capitems, c->nitems + 1, sizeof *c->items);
        c->items[c->nitems++] = mark_line(ev->start_mark);
    }
    int ends = ev->type == YAML_SCALAR_EVENT || ev->type == YAML_ALIAS_EVENT ||
               ((ev->type == YAML_SEQUENCE_END_EVENT || ev->type == YAML_MAPPING_END_EVENT) && c->nst &&
                c->st[c->nst - 1].flow);
    if (ends && ev->end_mark.index > c->content_end.index) c->content_end = ev->end_mark;
}

static void anchors_reset(ctx *c) {
    for (size_t i = 0; i < c->nan; i++) {
        json_object_put(c->an[i].val);
        free(c->an[i].text);
    }
    c->nan = 0;
    json_object_put(c->anames);
    c->anames = NULL;
}

/* Registers an anchor at the start of its node, so that a later
 * redefinition inside the node wins, as in YAML, and self-reference shows
 * up as an unfinished anchor. */
static void anchor_begin(ctx *c, const char *name, int *idx) {
    *idx = -1;
    if (!name) return;
    c->an = xgrow(c->an, &c->capan, c->nan + 1, sizeof *c->an);
    if (!c->anames) c->anames = jnew_obj();
    jset(c->anames, name, jnew_int((int)c->nan));
    memset(&c->an[c->nan], 0, sizeof c->an[0]);
    *idx = (int)c->nan++;
}

static void anchor_end(ctx *c, int idx, json_object *val, size_t nodes, size_t bytes, size_t cost, int height) {
    if (idx < 0) return;
    c->an[idx].val = json_object_get(val);
    c->an[idx].nodes = nodes;
    c->an[idx].bytes = bytes;
    c->an[idx].cost = cost;
    c->an[idx].height = height;
    c->an[idx].done = 1;
}

static int charge(ctx *c, size_t n, int line, int alias) {
    if (n > c->budget - c->nodes) {
        if (alias)
            return fail(c, line, "alias expansion exceeds the limit of %zu nodes", c->budget);
        return fail(c, line, "document exceeds the limit of %zu nodes", c->budget);
    }
    c->nodes += n;
    return 0;
}

/* What json-c will allocate for a node or an alias copy, before it does. */
static int charge_memory(ctx *c, size_t cost, int line) {
    if (cost > c->max_cost - c->cost)
        return fail(c, line, "the parsed YAML would take more than the %zu bytes of memory allowed for %zu bytes of input",
                    c->max_cost, c->len);
    if (c->shared && cost > c->shared->memory - c->shared->used_memory) {
        c->shared->exceeded = 1;
        return fail(c, line, "%s: the YAML would take more than the %zu bytes of memory allowed", c->shared->what,
                    c->shared->memory);
    }
    c->cost += cost;
    if (c->shared) c->shared->used_memory += cost;
    return 0;
}

/* An alias copy repeats bytes of scalar text: charged before the copy. */
static int charge_bytes(ctx *c, size_t bytes, int line) {
    if (bytes > KUBE_YAML_ALIAS_BYTES - c->alias_bytes)
        return fail(c, line, "alias expansion exceeds the limit of %zu bytes", KUBE_YAML_ALIAS_BYTES);
    if (c->shared && bytes > c->shared->alias_bytes - c->shared->used_alias_bytes) {
        c->shared->exceeded = 1;
        return fail(c, line, "%s: alias expansion exceeds the limit of %zu bytes", c->shared->what,
                    c->shared->alias_bytes);
    }
    c->alias_bytes += bytes;
    c->bytes += bytes;
    if (c->shared) c->shared->used_alias_bytes += bytes;
    return 0;
}

static void merge_one(frame *f, json_object *src) {
    json_object_object_foreach(src, k, v) {
        if (json_object_object_get_ex(f->obj, k, NULL)) continue;
        jset(f->obj, k, json_object_get(v));
        if (!f->merged) f->merged = jnew_obj();
        jset(f->merged, k, NULL);
    }
}

static int merge(ctx *c, frame *f, json_object *src, int line) {
    const char *bad = "map merge requires map or sequence of maps as the value";

    if (json_object_is_type(src, json_type_object)) {
        merge_one(f, src);
        return 0;
    }
    if (!json_object_is_type(src, json_type_array)) return fail(c, line, "%s", bad);
    for (size_t i = 0, n = json_object_array_length(src); i < n; i++)
        if (!json_object_is_type(json_object_array_get_idx(src, i), json_type_object))
            return fail(c, line, "%s", bad);
    for (size_t i = 0, n = json_object_array_length(src); i < n; i++)
        merge_one(f, json_object_array_get_idx(src, i));
    return 0;
}

/* Hands v (owned) to the open container or makes it the document root.
 * height is v's container height (0 for scalars), line where v starts. */
static int add_value(ctx *c, json_object *v, int height, int line) {
    frame *f;
    int rc = 0;

    if (c->nst == 0) {
        if (c->lines && v) lines_put(c->lines, v, line);
        c->root = v;
        c->have_root = 1;
        return 0;
    }
    f = &c->st[c->nst - 1];
    if (f->height < height + 1) f->height = height + 1;
    if (!f->is_map) {
        if (c->lines && v) lines_put(c->lines, v, line);
        jpush(f->obj, v);
        return 0;
    }
    if (f->key_merge) {
        rc = merge(c, f, v, f->key_line);
        json_object_put(v);
    } else {
        if (c->lines && v) lines_put(c->lines, v, f->key_line);
        jset(f->obj, f->key, v);
    }
    free(f->key);
    f->key = NULL;
    return rc;
}

static int in_key_position(ctx *c) {
    return c->nst && c->st[c->nst - 1].is_map && !c->st[c->nst - 1].key;
}

/* Go's %#v of a string (strconv.Quote), cut to fit. */
static void go_quote(char *dst, size_t cap, const char *s, size_t n) {
    size_t o = 0;
    dst[o++] = '"';
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\') dst[o++] = '\\', dst[o++] = (char)ch;
        else if (ch == '\n') dst[o++] = '\\', dst[o++] = 'n';
        else if (ch == '\t') dst[o++] = '\\', dst[o++] = 't';
        else if (ch == '\r') dst[o++] = '\\', dst[o++] = 'r';
        else if (ch < 0x20 || ch == 0x7f) o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", ch);
        else dst[o++] = (char)ch;
    }
    dst[o++] = '"';
    dst[o] = 0;
}

/* The line of key's first occurrence among the keys of the mapping that
 * starts at libyaml index start: a second pass over the text, made only
 * for the message, so that the first pass keeps no line per key. */
static int first_key_line(ctx *c, size_t start, const char *key, size_t n, int fallback) {
    yaml_parser_t p;
    yaml_event_t ev;
    int line = fallback, depth = 0, found = 0;
    size_t pos = 0;
    if (!yaml_parser_initialize(&p)) base_oom();
    yaml_parser_set_input_string(&p, (const unsigned char *)c->buf, c->len);
    while (yaml_parser_parse(&p, &ev)) {
        yaml_event_type_t t = ev.type;
        int stop = t == YAML_STREAM_END_EVENT;
        if (!found) {
            if (t == YAML_MAPPING_START_EVENT && ev.start_mark.index == start) found = depth = 1;
        } else if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT) {
            depth++;
        } else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT) {
            if (--depth == 0) stop = 1;
            else if (depth == 1) pos++;
        } else if ((t == YAML_SCALAR_EVENT || t == YAML_ALIAS_EVENT) && depth == 1) {
            if (t == YAML_SCALAR_EVENT && pos % 2 == 0 && ev.data.scalar.length == n &&
                memcmp(ev.data.scalar.value, key, n) == 0) {
                line = mark_line(ev.start_mark);
                stop = 1;
            }
            pos++;
        }
        yaml_event_delete(&ev);
        if (stop) break;
    }
    yaml_parser_delete(&p);
    return line;
}

/* go-yaml v3 refuses a key a mapping already has (two "<<" included);
 * keys a merge brought may be given again explicitly. */
static int set_key(ctx *c, const char *text, size_t n, int merge_key, int line) {
    frame *f = &c->st[c->nst - 1];
    char q[160];
    if (memchr(text, 0, n)) return fail(c, line, "mapping key contains a NUL character");
    if (merge_key) {
        if (f->merge_line) {
            go_quote(q, sizeof q, text, n);
            return fail(c, line, "mapping key %s already defined at line %d", q, f->merge_line);
        }
        f->merge_line = line;
    }
    if (merge_key && json_object_object_get_ex(f->obj, "<<", NULL)) {
        go_quote(q, sizeof q, text, n);
        return fail(c, line, "mapping key %s already defined at line %d", q,
                    first_key_line(c, f->start, text, n, f->line));
    }
    if (!merge_key && f->merge_line && n == 2 && text[0] == '<' && text[1] == '<') {
        /* go-yaml compares the keys' text: a quoted "<<" after a merge */
        go_quote(q, sizeof q, text, n);
        return fail(c, line, "mapping key %s already defined at line %d", q, f->merge_line);
    }
    f->key = xstrndup(text, n);
    if (!merge_key && json_object_object_get_ex(f->obj, f->key, NULL)) {
        if (f->merged && json_object_object_get_ex(f->merged, f->key, NULL)) {
            json_object_object_del(f->merged, f->key);
        } else {
            go_quote(q, sizeof q, text, n);
            return fail(c, line, "mapping key %s already defined at line %d", q,
                        first_key_line(c, f->start, text, n, f->line));
        }
    }
    f->key_merge = merge_key;
    f->key_line = line;
    return 0;
}

static json_object *scalar_json(const scalar *s, const char *text, size_t n) {
    switch (s->kind) {
    case K_NULL: return NULL;
    case K_BOOL: return jnew_bool(s->b);
    case K_INT: return jnew_int(s->i);
    case K_BIGINT: {
        json_object *v = json_object_new_uint64(s->u);
        if (!v) base_oom();
        return v;
    }
    case K_FLOAT: return jnew_double(s->d);
    default: return jnew_strn(text, n);
    }
}

static int on_scalar(ctx *c, yaml_event_t *ev) {
    const char *text = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    int line = mark_line(ev->start_mark), merge_key, idx;
    int plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
    char why[160];
    scalar s;
    json_object *v;

    if (n > INT32_MAX) return fail(c, line, "scalar too long");
    if (resolve_event((const char *)ev->data.scalar.tag, plain, text, n, &s, &merge_key, why,
                      sizeof why))
        return fail(c, line, "%s", why);
    size_t cost = s.kind == K_NULL ? COST_NULL : COST_VALUE + n;
    if (charge(c, 1, line, 0) || charge_memory(c, in_key_position(c) ? COST_KEY + n : cost, line)) return -1;
    c->bytes += n;
    anchor_begin(c, (const char *)ev->data.scalar.anchor, &idx);
    if (idx < 0 && in_key_position(c)) return set_key(c, text, n, merge_key, line);
    v = scalar_json(&s, text, n);
    if (idx >= 0) {
        c->an[idx].text = xstrndup(text, n);
        anchor_end(c, idx, v, 1, n, cost, 0);
    }
    if (in_key_position(c)) {
        json_object_put(v); /* the anchor keeps its own reference */
        return set_key(c, text, n, merge_key, line);
    }
    return add_value(c, v, 0, line);
}

static int on_alias(ctx *c, yaml_event_t *ev) {
    const char *name = (const char *)ev->data.alias.anchor;
    int line = mark_line(ev->start_mark);
    json_object *io = NULL, *copy = NULL;
    anchor *a;

    if (!c->anames || !json_object_object_get_ex(c->anames, name, &io))
        return fail(c, line, "unknown anchor '%s' referenced", name);
    a = &c->an[json_object_get_int(io)];
    if (!a->done) return fail(c, line, "anchor '%s' value contains itself", name);
    if (in_key_position(c)) {
        if (!a->text) return fail(c, line, "complex (non-scalar) mapping keys are not supported");
        if (charge_bytes(c, a->bytes, line) || charge_memory(c, COST_KEY + a->bytes, line)) return -1;
        return set_key(c, a->text, strlen(a->text), 0, line);
    }
    if (c->nst + (size_t)a->height > KUBE_YAML_MAX_DEPTH)
        return fail(c, line, "nesting deeper than %d levels", KUBE_YAML_MAX_DEPTH);
    if (charge(c, a->nodes, line, 1) || charge_bytes(c, a->bytes, line) || charge_memory(c, a->cost, line)) return -1;
    copy = jcopy(a->val);
    if (c->lines) lines_copy(c->lines, a->val, copy);
    return add_value(c, copy, a->height, line);
}

static int on_start(ctx *c, yaml_event_t *ev, int is_map) {
    int line = mark_line(ev->start_mark), idx;
    const char *anc = (const char *)(is_map ? ev->data.mapping_start.anchor
                                            : ev->data.sequence_start.anchor);
    frame *f;

    if (in_key_position(c))
        return fail(c, line, "complex (non-scalar) mapping keys are not supported");
    if (c->nst >= KUBE_YAML_MAX_DEPTH)
        return fail(c, line, "nesting deeper than %d levels", KUBE_YAML_MAX_DEPTH);
    if (charge(c, 1, line, 0) || charge_memory(c, is_map ? COST_MAP : COST_SEQ, line)) return -1;
    c->st = xgrow(c->st, &c->capst, c->nst + 1, sizeof *c->st);
    anchor_begin(c, anc, &idx);
    f = &c->st[c->nst];
    memset(f, 0, sizeof *f);
    f->is_map = is_map;
    f->line = line;
    f->start = ev->start_mark.index;
    f->anchor = idx;
    f->height = 1;
    f->nodes0 = c->nodes - 1;
    f->bytes0 = c->bytes;
    f->cost0 = c->cost - (is_map ? COST_MAP : COST_SEQ);
    f->obj = is_map ? jnew_obj() : jnew_arr();
    f->flow = is_map ? ev->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE
                     : ev->data.sequence_start.style == YAML_FLOW_SEQUENCE_STYLE;
    if (!is_map && c->nst == 1 && c->st[0].is_map && c->st[0].key && !strcmp(c->st[0].key, "items")) {
        f->is_items = 1;
        c->nitems = 0; /* a later duplicate items: replaces the earlier one */
    }
    c->nst++;
    return 0;
}

static int on_end(ctx *c) {
    frame f = c->st[--c->nst];
    anchor_end(c, f.anchor, f.obj, c->nodes - f.nodes0, c->bytes - f.bytes0, c->cost - f.cost0, f.height);
    free(f.key); /* libyaml always supplies a value; defensive */
    json_object_put(f.merged);
    return add_value(c, f.obj, f.height, f.line);
}

static int on_document_end(ctx *c) {
    anchors_reset(c);
    if (!c->have_root || !c->root) {
        c->have_root = 0;
        c->nitems = 0;
        return 0; /* empty (or null) documents are skipped */
    }
    c->docs = xgrow(c->docs, &c->capdocs, c->ndocs + 1, sizeof *c->docs);
    kube_yaml_doc *d = &c->docs[c->ndocs++];
    memset(d, 0, sizeof *d);
    d->obj = c->root;
    d->line = c->doc_line;
    doc_span(c, d);
    if (c->nitems) {
        d->item_lines = xmalloc(c->nitems * sizeof *d->item_lines);
        memcpy(d->item_lines, c->items, c->nitems * sizeof *d->item_lines);
        d->nitem_lines = c->nitems;
        c->nitems = 0;
    }
    c->root = NULL;
    c->have_root = 0;
    return 0;
}

/* libyaml reports reader (encoding) errors by byte offset only. */
static int offset_line(const ctx *c, size_t off) {
    int line = 1;
    for (size_t i = 0; i < off && i < c->len; i++)
        if (c->buf[i] == '\n' && line < INT32_MAX) line++;
    return line;
}

static int parser_fail(ctx *c) {
    yaml_parser_t *p = &c->parser;
    const char *why = p->problem ? p->problem : "invalid YAML";

    switch (p->error) {
    case YAML_MEMORY_ERROR: base_oom();
    case YAML_READER_ERROR: return fail(c, offset_line(c, p->problem_offset), "%s", why);
    default: return fail(c, mark_line(p->problem_mark), "%s", why);
    }
}

static int run(ctx *c) {
    yaml_event_t ev;
    int rc = 0, done = 0;

    while (!done && rc == 0) {
        if (!yaml_parser_parse(&c->parser, &ev)) return parser_fail(c);
        track(c, &ev);
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            c->doc_line = mark_line(ev.start_mark);
            break;
        case YAML_DOCUMENT_END_EVENT: rc = on_document_end(c); break;
        case YAML_SCALAR_EVENT: rc = on_scalar(c, &ev); break;
        case YAML_ALIAS_EVENT: rc = on_alias(c, &ev); break;
        case YAML_SEQUENCE_START_EVENT: rc = on_start(c, &ev, 0); break;
        case YAML_MAPPING_START_EVENT: rc = on_start(c, &ev, 1); break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT: rc = on_end(c); break;
        default: break;
        }
        yaml_event_delete(&ev);
    }
    return rc;
}

void kube_yaml_docs_free(kube_yaml_doc *docs, size_t ndocs) {
    for (size_t i = 0; docs && i < ndocs; i++) {
        json_object_put(docs[i].obj);
        free(docs[i].item_lines);
    }
    free(docs);
}

int kube_yaml_parse(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs,
                    kube_yaml_error *err) {
    return kube_yaml_parse_lines(buf, len, docs, ndocs, err, NULL);
}

static int parse(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs, kube_yaml_error *err,
                 kube_yaml_lines **lines, kube_yaml_budget *shared) {
    kube_yaml_error scratch;
    ctx c;
    int rc;

    memset(&c, 0, sizeof c);
    c.shared = shared;
    if (lines) *lines = c.lines = xcalloc(1, sizeof *c.lines);
    c.err = err ? err : &scratch;
    c.err->line = 0;
    c.err->msg[0] = 0;
    *docs = NULL;
    *ndocs = 0;
    c.buf = buf ? buf : "";
    c.len = buf ? len : 0;
    c.budget = KUBE_YAML_NODE_BUDGET + (c.len < SIZE_MAX / 2 ? c.len : SIZE_MAX / 2);
    c.max_cost = KUBE_YAML_MEMORY_BASE +
                 (c.len < SIZE_MAX / 64 ? c.len * KUBE_YAML_MEMORY_PER_BYTE : SIZE_MAX / 2);
    if (!yaml_parser_initialize(&c.parser)) base_oom();
    yaml_parser_set_input_string(&c.parser, (const unsigned char *)c.buf, c.len);
    /* libyaml reads UTF-16 when a BOM says so; its marks then count
     * characters of text we do not have as UTF-8. */
    const unsigned char *u = (const unsigned char *)c.buf;
    c.spans = !(c.len >= 2 && ((u[0] == 0xfe && u[1] == 0xff) || (u[0] == 0xff && u[1] == 0xfe)));
    c.bom = c.len >= 3 && u[0] == 0xef && u[1] == 0xbb && u[2] == 0xbf ? 3 : 0;
    c.at_byte = c.bom;

    rc = run(&c);

    while (c.nst) {
        frame *f = &c.st[--c.nst];
        json_object_put(f->obj);
        json_object_put(f->merged);
        free(f->key);
    }
    free(c.st);
    free(c.items);
    anchors_reset(&c);
    free(c.an);
    json_object_put(c.root);
    yaml_parser_delete(&c.parser);
    if (rc) {
        kube_yaml_docs_free(c.docs, c.ndocs);
        if (lines) {
            kube_yaml_lines_free(c.lines);
            *lines = NULL;
        }
        return -1;
    }
    *docs = c.docs;
    *ndocs = c.ndocs;
    return 0;
}

int kube_yaml_parse_lines(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs,
                          kube_yaml_error *err, kube_yaml_lines **lines) {
    return parse(buf, len, docs, ndocs, err, lines, NULL);
}

int kube_yaml_parse_budget(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs, kube_yaml_error *err,
                           kube_yaml_budget *budget) {
    return parse(buf, len, docs, ndocs, err, NULL, budget);
}

json_object *kube_yaml_parse_one(const char *buf, size_t len, kube_yaml_error *err) {
    kube_yaml_error scratch;
    kube_yaml_doc *docs;
    size_t n;
    json_object *o = NULL;

    if (!err) err = &scratch;
    if (kube_yaml_parse(buf, len, &docs, &n, err)) return NULL;
    if (n == 0) {
        err->line = 0;
        snprintf(err->msg, sizeof err->msg, "empty document");
    } else if (n > 1) {
        err->line = docs[1].line;
        snprintf(err->msg, sizeof err->msg, "expected one document");
    } else {
        o = docs[0].obj;
        docs[0].obj = NULL;
    }
    kube_yaml_docs_free(docs, n);
    return o;
}

/* ------------------------------------------------------------------------
 * Writing
 * ---------------------------------------------------------------------- */

static void sb_indent(sbuf *b, int n) {
    static const char sp[] = "                                ";
    while (n > 0) {
        int k = n < (int)sizeof sp - 1 ? n : (int)sizeof sp - 1;
        sbuf_add(b, sp, (size_t)k);
        n -= k;
    }
}

/* Decodes one strict UTF-8 sequence at s (n bytes left). Returns its length
 * and sets *cp, or 0 for an invalid sequence. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    uint32_t c = s[0], min;
    size_t len;

    if (c < 0x80) { *cp = c; return 1; }
    if (c >= 0xc2 && c <= 0xdf) len = 2, c &= 0x1f, min = 0x80;
    else if (c >= 0xe0 && c <= 0xef) len = 3, c &= 0x0f, min = 0x800;
    else if (c >= 0xf0 && c <= 0xf4) len = 4, c &= 0x07, min = 0x10000;
    else return 0;
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return len;
}

/* Characters a YAML reader rejects or treats as line breaks when raw:
 * they can only appear escaped inside double quotes. */
static int needs_escape(uint32_t c) {
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 || c == 0xfeff ||
           c == 0xfffe || c == 0xffff;
}

enum { S_PLAIN, S_DQUOTE, S_SQUOTE, S_LITERAL };

static const kube_yaml_style default_style = {2, 0, KUBE_YAML_QUOTE_SAFE, 0};

/* YAML 1.1 sexagesimals as go-yaml v2's encoder spots them (isBase60Float:
 * [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\.[0-9_]*)?), which it quotes. */
static int base60(const char *s, size_t n) {
    size_t i = 0;
    int groups = 0;
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    if (i >= n || !is_digit(s[i])) return 0;
    while (i < n && (is_digit(s[i]) || s[i] == '_')) i++;
    while (i < n && s[i] == ':') {
        size_t d = 0;
        i++;
        while (i < n && is_digit(s[i]) && d < 2) i++, d++;
        if (d == 0 || (d == 2 && s[i - 2] > '5')) return 0;
        groups++;
    }
    if (!groups) return 0;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && (is_digit(s[i]) || s[i] == '_')) i++;
    }
    return i == n;
}

/* Strings our resolver keeps but other readers may type: numbers too big
 * for us (1e400, 0x1FFFFFFFFFFFFFFFF), YAML 1.1 sexagesimals (1:20) and
 * dates (2001-12-14...). Quoting them costs nothing. sexagesimal: whether
 * any digits-and-colons string counts (the safe rule) or only what
 * go-yaml v2 quotes; the collector's own writer (goccy/go-yaml, YAML 1.2)
 * quotes none, so "0.0.0.0:4317" stays plain there. */
static int number_lookalike(const char *s, size_t n, int sexagesimal) {
    size_t i = 0, digits = 0;
    int colon = 0, neg, sign, ovf;
    uint64_t u;

    if (float_syntax(s, n) || (!go_uint(s, n, &neg, &sign, &u, &ovf) && ovf)) return 1;

    if (n >= 5 && is_digit(s[0]) && is_digit(s[1]) && is_digit(s[2]) && is_digit(s[3]) &&
        s[4] == '-')
        return 1;
    if (sexagesimal == 0) return 0;
    if (sexagesimal == 2) return base60(s, n);
    if (i < n && (s[i] == '-' || s[i] == '+')) i++;
    for (; i < n; i++) {
        if (is_digit(s[i])) digits++;
        else if (s[i] == ':') colon = 1;
        else if (s[i] != '_' && s[i] != '.') return 0;
    }
    return colon && digits;
}

static int plain_ok(const char *s, size_t n, int is_key, int quoting) {
    scalar r;

    if (n == 0 || strchr("-?:,[]{}#&*!|>'\"%@` ", s[0])) return 0;
    if (s[n - 1] == ' ' || s[n - 1] == ':') return 0;
    if (n >= 3 && memcmp(s, "...", 3) == 0) return 0;
    for (size_t i = 0; i + 1 < n; i++) {
        if (s[i] == ':' && s[i + 1] == ' ') return 0;
        if (s[i] == ' ' && s[i + 1] == '#') return 0;
    }
    if (is_key && n == 2 && s[0] == '<' && s[1] == '<') return 0;
    resolve_plain(s, n, &r);
    return r.kind == K_STR && !number_lookalike(s, n, quoting == KUBE_YAML_QUOTE_GO_YAML ? 0 : 1);
}

/* libyaml's analysis of a block plain scalar (yaml_emitter_analyze_scalar),
 * which go-yaml v2's emitter ports: what may not be written plain whatever
 * it resolves to. ":8443" may ("listen_addr: :8443"), "- x" may not. */
static int v2_plain_allowed(const char *s, size_t n) {
    if (n == 0) return 0;
    if ((n >= 3 && (memcmp(s, "---", 3) == 0 || memcmp(s, "...", 3) == 0))) return 0;
    if (s[0] == ' ' || s[n - 1] == ' ') return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int next_blank = i + 1 >= n || s[i + 1] == ' ';
        if (i == 0) {
            if (strchr("#,[]{}&*!|>'\"%@`", c)) return 0;
            if ((c == '?' || c == ':' || c == '-') && next_blank) return 0;
        } else {
            if (c == ':' && next_blank) return 0;
            if (c == '#' && s[i - 1] == ' ') return 0;
        }
    }
    return 1;
}

static int string_style(const char *s, size_t n, int is_key, const kube_yaml_style *st) {
    int bad = 0, nl = 0, tab = 0, content = 0;

    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (!k) return S_DQUOTE;
        if (cp == '\n') {
            nl = 1;
            if (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t')) bad = 1;
        } else {
            content = 1;
            if (cp == '\t') tab = 1;
            else if (needs_escape(cp)) bad = 1;
        }
        i += k;
    }
    if (bad) return S_DQUOTE;
    if (!nl && st->quoting == KUBE_YAML_QUOTE_YAML_V2) {
        /* go-yaml v2: double quotes for what would read back as another
         * type, single quotes for what may not be plain. */
        scalar r;
        if (n == 0) return S_DQUOTE;
        resolve_plain(s, n, &r);
        if (r.kind != K_STR || number_lookalike(s, n, 2) || (is_key && n == 2 && s[0] == '<' && s[1] == '<'))
            return S_DQUOTE;
        return !tab && v2_plain_allowed(s, n) ? S_PLAIN : S_SQUOTE;
    }
    if (!nl) return !tab && plain_ok(s, n, is_key, st->quoting) ? S_PLAIN : S_DQUOTE;
    if (is_key || !content || s[n - 1] == ' ' || s[n - 1] == '\t') return S_DQUOTE;
    return S_LITERAL;
}

static void emit_dquoted(sbuf *b, const char *s, size_t n) {
    char esc[12];

    sbuf_add(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        size_t start = i;
        uint32_t cp = 0;
        /* copy runs of characters that need no escape in one go */
        while (i < n) {
            size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
            if (!k || cp == '"' || cp == '\\' || needs_escape(cp)) break;
            i += k;
        }
        sbuf_add(b, s + start, i - start);
        if (i >= n) break;
        size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (!k) {
            sbuf_puts(b, "\\uFFFD");
            i++;
            continue;
        }
        switch (cp) {
        case '"': sbuf_puts(b, "\\\""); break;
        case '\\': sbuf_puts(b, "\\\\"); break;
        case '\n': sbuf_puts(b, "\\n"); break;
        case '\t': sbuf_puts(b, "\\t"); break;
        case '\r': sbuf_puts(b, "\\r"); break;
        case 0: sbuf_puts(b, "\\0"); break;
        default:
            snprintf(esc, sizeof esc, "\\u%04" PRIX32, cp);
            sbuf_puts(b, esc);
        }
        i += k;
    }
    sbuf_add(b, "\"", 1);
}

static void emit_squoted(sbuf *b, const char *s, size_t n) {
    sbuf_add(b, "'", 1);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\'') sbuf_add(b, "'", 1);
        sbuf_add(b, s + i, 1);
    }
    sbuf_add(b, "'", 1);
}

static void emit_scalar_string(sbuf *b, const char *s, size_t n, int is_key, const kube_yaml_style *st) {
    int style = string_style(s, n, is_key, st);
    if (style == S_PLAIN) sbuf_add(b, s, n);
    else if (style == S_SQUOTE) emit_squoted(b, s, n);
    else emit_dquoted(b, s, n);
}

/* The column the cursor is at (characters since the last line break). */
static int column_of(const sbuf *b) {
    int col = 0;
    for (size_t i = b->len; i > 0 && b->s[i - 1] != '\n'; i--)
        if (((unsigned char)b->s[i - 1] & 0xc0) != 0x80) col++;
    return col;
}

/* go-yaml v2 (libyaml's emitter, best_width 80) folds a value's plain or
 * quoted scalar at a single space once the line is past 80 columns, onto a
 * line indented at cont: the same string when read back, and the reference's
 * exact text (yaml_emitter_write_plain, _single_quoted, _double_quoted). */
static void emit_v2_folded(sbuf *b, const char *s, size_t n, int style, int cont) {
    int col = column_of(b), spaces = 0;
    char esc[12];
    if (style != S_PLAIN) {
        sbuf_add(b, style == S_SQUOTE ? "'" : "\"", 1);
        col++;
    }
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t k = utf8_next((const unsigned char *)s + i, n - i, &cp);
        if (!k) k = 1, cp = 0xfffd;
        if (cp == ' ') {
            int next_space = i + 1 < n && s[i + 1] == ' ';
            int edge = style != S_PLAIN && (i == 0 || i == n - 1);
            if (!spaces && col > 80 && !edge && (style == S_DQUOTE || (i + 1 < n && !next_space))) {
                sbuf_add(b, "\n", 1);
                sb_indent(b, cont);
                col = cont;
                if (style == S_DQUOTE && next_space) {
                    sbuf_add(b, "\\", 1);
                    col++;
                }
            } else {
                sbuf_add(b, " ", 1);
                col++;
            }
            spaces = 1;
            i += k;
            continue;
        }
        spaces = 0;
        if (style == S_SQUOTE && cp == '\'') {
            sbuf_add(b, "''", 2);
            col += 2;
        } else if (style == S_DQUOTE && (cp == '"' || cp == '\\' || needs_escape(cp) || cp == 0xfffd)) {
            switch (cp) {
            case '"': snprintf(esc, sizeof esc, "\\\""); break;
            case '\\': snprintf(esc, sizeof esc, "\\\\"); break;
            case '\n': snprintf(esc, sizeof esc, "\\n"); break;
            case '\t': snprintf(esc, sizeof esc, "\\t"); break;
            case '\r': snprintf(esc, sizeof esc, "\\r"); break;
            case 0: snprintf(esc, sizeof esc, "\\0"); break;
            default: snprintf(esc, sizeof esc, "\\u%04" PRIX32, cp);
            }
            sbuf_puts(b, esc);
            col += (int)strlen(esc);
        } else {
            sbuf_add(b, s + i, k);
            col++;
        }
        i += k;
    }
    if (style != S_PLAIN) sbuf_add(b, style == S_SQUOTE ? "'" : "\"", 1);
}

/* Literal block: the header goes on the current line, content lines at
 * indent. An indentation indicator is needed when the first content line
 * starts with a space (auto-detection would swallow it) or a tab (libyaml
 * then rejects it), or when leading empty lines precede it. */
static void emit_literal(sbuf *b, const char *s, size_t n, int indent, int offset) {
    size_t trail = 0, i = 0;

    while (trail < n && s[n - 1 - trail] == '\n') trail++;
    sbuf_add(b, "|", 1);
    if (s[0] == ' ' || s[0] == '\t' || s[0] == '\n') sbuf_add(b, offset == 4 ? "4" : "2", 1);
    if (trail == 0) sbuf_add(b, "-", 1);
    else if (trail > 1) sbuf_add(b, "+", 1);
    sbuf_add(b, "\n", 1);
    while (i < n) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n;
        if (end > i) {
            sb_indent(b, indent);
            sbuf_add(b, s + i, end - i);
        }
        sbuf_add(b, "\n", 1);
        i = end + 1;
    }
}

static void emit_double(sbuf *b, double d, const kube_yaml_style *st) {
    char tmp[40];

    if (isnan(d)) { sbuf_puts(b, ".nan"); return; }
    if (isinf(d)) { sbuf_puts(b, d < 0 ? "-.inf" : ".inf"); return; }
    /* shortest %g that reads back exactly; always looks like a float so
     * that it is not re-read as an integer (go-yaml v2 writes 2.0 as "2") */
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    sbuf_puts(b, tmp);
    if (!strpbrk(tmp, ".e") && st->quoting != KUBE_YAML_QUOTE_YAML_V2) sbuf_puts(b, ".0");
}

enum { AT_ROOT, AT_MAPVAL, AT_SEQITEM };

static void emit_node(sbuf *b, json_object *o, int indent, int at, const kube_yaml_style *st);

static int is_block_collection(json_object *o) {
    if (json_object_is_type(o, json_type_object)) return json_object_object_length(o) > 0;
    if (json_object_is_type(o, json_type_array)) return json_object_array_length(o) > 0;
    return 0;
}

/* Past the style's max_bytes the writing stops (kube_yaml_emit_style
 * then answers NULL): checked per member, so a value's own text at most
 * is written past it. */
static int over(const sbuf *b, const kube_yaml_style *st) { return st->max_bytes && b->len > st->max_bytes; }

static void emit_map(sbuf *b, json_object *o, int indent, int first_inline, const kube_yaml_style *st) {
    int first = 1;
    json_object_object_foreach(o, k, v) {
        if (over(b, st)) return;
        size_t kn = strlen(k), mark;
        if (!(first && first_inline)) sb_indent(b, indent);
        first = 0;
        mark = b->len;
        emit_scalar_string(b, k, kn, 1, st);
        if (b->len - mark > KUBE_YAML_MAX_SIMPLE_KEY) {
            /* too long for a simple key: use the explicit "? key" form */
            sbuf_truncate(b, mark);
            sbuf_puts(b, "? ");
            emit_scalar_string(b, k, kn, 1, st);
            sbuf_add(b, "\n", 1);
            sb_indent(b, indent);
        }
        sbuf_add(b, ":", 1);
        emit_node(b, v, indent, AT_MAPVAL, st);
    }
}

static void emit_seq(sbuf *b, json_object *o, int indent, int first_inline, const kube_yaml_style *st) {
    for (size_t i = 0, n = json_object_array_length(o); i < n; i++) {
        if (over(b, st)) return;
        if (i > 0 || !first_inline) sb_indent(b, indent);
        sbuf_add(b, "- ", 2);
        emit_node(b, json_object_array_get_idx(o, i), indent, AT_SEQITEM, st);
    }
}

/* indent is the column of the construct that owns o: the map's keys for
 * AT_MAPVAL, the "-" for AT_SEQITEM. The cursor is just after "key:" or
 * "- " (or at column 0 for the root). A map's children go st->indent
 * further; its lists as far, or at its own column (flush_seq); what an
 * item holds starts two columns in, just after "- ". */
static void emit_node(sbuf *b, json_object *o, int indent, int at, const kube_yaml_style *st) {
    char tmp[32];

    if (at == AT_MAPVAL) {
        if (is_block_collection(o)) {
            sbuf_add(b, "\n", 1);
            if (json_object_is_type(o, json_type_object)) emit_map(b, o, indent + st->indent, 0, st);
            else emit_seq(b, o, st->flush_seq ? indent : indent + st->indent, 0, st);
            return;
        }
        sbuf_add(b, " ", 1);
    } else if (at == AT_SEQITEM && is_block_collection(o)) {
        if (json_object_is_type(o, json_type_object)) emit_map(b, o, indent + 2, 1, st);
        else emit_seq(b, o, indent + 2, 1, st);
        return;
    }

    switch (json_object_get_type(o)) {
    case json_type_null: sbuf_puts(b, "null"); break;
    case json_type_boolean: sbuf_puts(b, json_object_get_boolean(o) ? "true" : "false"); break;
    case json_type_int: {
        int64_t v = json_object_get_int64(o);
        if (v == INT64_MAX) snprintf(tmp, sizeof tmp, "%" PRIu64, json_object_get_uint64(o));
        else snprintf(tmp, sizeof tmp, "%" PRId64, v);
        sbuf_puts(b, tmp);
        break;
    }
    case json_type_double: emit_double(b, json_object_get_double(o), st); break;
    case json_type_string: {
        const char *s = json_object_get_string(o);
        size_t n = (size_t)json_object_get_string_len(o);
        int style = string_style(s, n, 0, st);
        if (style == S_LITERAL) {
            int offset = at == AT_SEQITEM ? 2 : st->indent;
            emit_literal(b, s, n, (at == AT_ROOT ? 0 : indent) + offset, offset);
            return; /* ends its own last line */
        }
        if (st->quoting == KUBE_YAML_QUOTE_YAML_V2) emit_v2_folded(b, s, n, style, (at == AT_ROOT ? 0 : indent) + 2);
        else emit_scalar_string(b, s, n, 0, st);
        break;
    }
    case json_type_object:
        if (at == AT_ROOT && json_object_object_length(o) > 0) {
            emit_map(b, o, 0, 0, st);
            return;
        }
        sbuf_puts(b, "{}");
        break;
    case json_type_array:
        if (at == AT_ROOT && json_object_array_length(o) > 0) {
            emit_seq(b, o, 0, 0, st);
            return;
        }
        sbuf_puts(b, "[]");
        break;
    }
    sbuf_add(b, "\n", 1);
}

char *kube_yaml_emit_style(json_object *obj, const kube_yaml_style *style) {
    sbuf b = SBUF_INIT;

    style = style ? style : &default_style;
    emit_node(&b, obj, 0, AT_ROOT, style);
    if (over(&b, style)) {
        sbuf_free(&b);
        return NULL;
    }
    return sbuf_take(&b, NULL);
}

char *kube_yaml_emit(json_object *obj) {
    return kube_yaml_emit_style(obj, &default_style);
}
