/* mutate/patch.c - RFC 6902 operations from the original to the mutated pod.
 *
 * The reference re-marshals its typed pod and diffs it against the request,
 * which silently drops fields its API model does not know (spec 7.16). We
 * diff the two json-c trees instead, so anything we did not touch survives.
 *
 * Cheapness comes from structure sharing: the engine builds the mutated pod
 * copy-on-write, so untouched subtrees (managedFields, most of spec) are the
 * same pointer in both trees and are skipped without a walk.
 *
 * Arrays are aligned with a longest common subsequence in which objects
 * carrying a string "name" match by name (containers, env, volumes, mounts)
 * and anything else matches by value. Matched pairs are diffed recursively,
 * which yields targeted operations such as a replace of one env value rather
 * than a replace of the whole list. Operations are emitted left to right
 * against a cursor, so every index is valid at the moment it is applied.
 *
 * The operations come out as json-c objects, or (the admission server) as
 * the JSON text jtext would write for them, without building them; and,
 * for the status record, as a log of the node pairs each was found at, so
 * that the record is not a second comparison of the pods (record_log.c). */
#include "mutate/internal.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/jtext.h"
#include "base/sbuf.h"

#include <inttypes.h>
#include <json-c/linkhash.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Above this many cells the LCS table is too big; fall back to trimming the
 * common prefix and suffix, still correct, just less targeted. */
#define LCS_MAX_CELLS (1u << 20)

/* Whether tok (n bytes) holds a '~' or a '/', eight bytes at a time: keys
 * nearly never do, and then the token is copied as it is. */
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static inline bool word_has_escape(uint64_t x) {
    uint64_t t = x ^ (ONES * '~'), s = x ^ (ONES * '/');
    return (((t - ONES) & ~t) | ((s - ONES) & ~s)) & HIGHS;
}

static inline bool token_plain(const char *tok, size_t n) {
    uint64_t w;
    if (n >= 8) {
        size_t i = 0;
        for (; i + 8 < n; i += 8) {
            memcpy(&w, tok + i, 8);
            if (word_has_escape(w)) return false;
        }
        memcpy(&w, tok + n - 8, 8); /* the last eight, overlapping */
        return !word_has_escape(w);
    }
    w = ONES * 'a';
    memcpy(&w, tok, n);
    return !word_has_escape(w);
}

static inline char *escape_byte(char *d, char c) {
    if (c == '~') *d++ = '~', *d++ = '0';
    else if (c == '/') *d++ = '~', *d++ = '1';
    else *d++ = c;
    return d;
}

static void pointer_push_n(sbuf *p, const char *tok, size_t n) {
    sbuf_reserve(p, 2 * n + 1);
    char *d = p->s + p->len;
    *d++ = '/';
    if (token_plain(tok, n)) {
        memcpy(d, tok, n);
        d += n;
    } else { /* a label or annotation key: a '/' in one word of it */
        size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            uint64_t w;
            memcpy(&w, tok + i, 8);
            if (!word_has_escape(w)) {
                memcpy(d, &w, 8);
                d += 8;
                continue;
            }
            for (size_t k = i; k < i + 8; k++) d = escape_byte(d, tok[k]);
        }
        for (; i < n; i++) d = escape_byte(d, tok[i]);
    }
    *d = 0;
    p->len = (size_t)(d - p->s);
}

void mutate_pointer_push(sbuf *p, const char *tok) { pointer_push_n(p, tok, strlen(tok)); }

/* Digits need no escaping. */
static void push_index(sbuf *p, size_t idx) {
    char num[24], *e = num + sizeof num, *d = e;
    *--d = 0;
    do *--d = (char)('0' + idx % 10);
    while (idx /= 10);
    *--d = '/';
    sbuf_add(p, d, (size_t)(e - 1 - d));
}

/* The members of an operation: literal keys, each added once, so json-c
 * neither looks them up nor copies them. */
static void op_member(json_object *o, const char *key, json_object *v) {
    if (json_object_object_add_ex(o, key, v, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY) != 0)
        base_oom();
}

/* One diff: the path being written, the operations, and (for the record)
 * the log with the nodes the walk stands on: a[d], b[d] are the pair at
 * depth d (a[0], b[0] the roots), key[d] the member name that led there
 * (NULL for an array index). */
typedef struct walk {
    sbuf path;
    json_object *ops; /* the operations as json-c objects, or NULL */
    sbuf *text;       /* the operations as text (the array's members), or NULL */
    size_t nops;
    patch_log *log;
    int depth;
    json_object *a[PATCH_DEPTH], *b[PATCH_DEPTH];
    const char *key[PATCH_DEPTH];
} walk;

/* Logs an operation whose target is at depth d (the current node, or a
 * leaf one below it) holding old and new. */
static void log_op(walk *w, char op, int d, const char *key, json_object *old, json_object *new) {
    patch_log *l = w->log;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 32;
        l->v = xrealloc(l->v, sizeof *l->v * l->cap);
    }
    patch_change *c = &l->v[l->n++];
    c->op = op;
    c->depth = (unsigned)d;
    /* All of the walk's levels, whatever the depth: a few fixed-size
     * moves, cheaper than a loop to the depth; those past it are stale
     * and never read. */
    memcpy(c->a, w->a, sizeof c->a);
    memcpy(c->b, w->b, sizeof c->b);
    memcpy(c->key, w->key, sizeof c->key);
    if (d > w->depth && d < PATCH_DEPTH) {
        c->a[d] = old;
        c->b[d] = new;
        c->key[d] = key;
    }
}

/* The three operations, each with the text that opens it ("," and the
 * members before the path's value), written in one append. */
typedef enum { OP_ADD, OP_REPLACE, OP_REMOVE } op_kind;
#define OP_HEAD(name) ",{\"op\":\"" name "\",\"path\":"
static const struct {
    const char *name, *head;
    size_t len; /* head's, with the comma */
    char log;
} OPS[] = {
    [OP_ADD] = {"add", OP_HEAD("add"), sizeof OP_HEAD("add") - 1, 'a'},
    [OP_REPLACE] = {"replace", OP_HEAD("replace"), sizeof OP_HEAD("replace") - 1, 'r'},
    [OP_REMOVE] = {"remove", OP_HEAD("remove"), sizeof OP_HEAD("remove") - 1, 'd'},
};

/* A replace's target is the current node; an add's or a remove's is the
 * member or element one below it. value is NULL for a remove (and for a
 * JSON null). */
static void emit(walk *w, op_kind op, const char *key, json_object *old, json_object *value) {
    if (w->log) log_op(w, OPS[op].log, op == OP_REPLACE ? w->depth : w->depth + 1, key, old, value);
    if (w->text) {
        /* What jtext writes for the op object below, without building it. */
        sbuf *t = w->text;
        size_t skip = w->nops ? 0 : 1; /* the comma */
        sbuf_add(t, OPS[op].head + skip, OPS[op].len - skip);
        jtext_string(t, w->path.s, w->path.len);
        if (op != OP_REMOVE) {
            sbuf_lit(t, ",\"value\":");
            jtext_append(t, value);
        }
        sbuf_putc(t, '}');
    }
    w->nops++;
    json_object *ops = w->ops;
    if (!ops) return;
    json_object *o = jnew_obj();
    op_member(o, "op", jnew_str(OPS[op].name));
    op_member(o, "path", jnew_str(w->path.s));
    /* The value is shared with the mutated pod, not copied: both belong to
     * one request on one thread, and reference counting frees them in any
     * order. Copying was a third of the engine's time. */
    if (op != OP_REMOVE) op_member(o, "value", json_object_get(value));
    jpush(ops, o);
}

static const char *elem_name(json_object *v) {
    json_object *n = jw_member(v, "name");
    return json_object_is_type(n, json_type_string) ? json_object_get_string(n) : NULL;
}

/* Names are resolved at most once per element (an LCS cell compares two
 * of them), and only when needed: elements the engine did not replace are
 * the same pointer on both sides and never need theirs. */
typedef struct side {
    json_object *arr;
    const char **name;
} side;

static const char unresolved[1];

static const char *side_name(const side *s, size_t i) {
    if (s->name[i] == unresolved) s->name[i] = elem_name(json_object_array_get_idx(s->arr, i));
    return s->name[i];
}

static bool elem_match(const side *x, size_t i, const side *y, size_t j) {
    json_object *a = json_object_array_get_idx(x->arr, i), *b = json_object_array_get_idx(y->arr, j);
    if (a == b) return true;
    const char *na = side_name(x, i), *nb = side_name(y, j);
    if (na || nb) return na && nb && strcmp(na, nb) == 0;
    return json_object_equal(a, b);
}

/* room: SIDE_ROOM names on the caller's stack, enough for nearly every
 * list of a pod; longer ones are allocated. */
#define SIDE_ROOM 32
static void side_init(side *s, json_object *arr, size_t n, const char **room) {
    s->arr = arr;
    s->name = n <= SIDE_ROOM ? room : xmalloc(sizeof *s->name * n);
    for (size_t i = 0; i < n; i++) s->name[i] = unresolved;
}

static void side_free(side *s, const char **room) {
    if (s->name != room) free(s->name);
}

static void diff_at(walk *w, const char *key, json_object *a, json_object *b);

/* Do a and b have the same members in the same order? What the engine
 * copies keeps the original's order (a replaced member keeps its place),
 * so this is the usual case for every object it copied: then there is
 * nothing to remove, and the walk below would diff each member with its
 * twin; done here without two hash lookups per member, the same ops. */
static bool same_keys(struct lh_table *a, struct lh_table *b) {
    if (a->count != b->count) return false;
    for (struct lh_entry *ea = lh_table_head(a), *eb = lh_table_head(b); ea; ea = lh_entry_next(ea), eb = lh_entry_next(eb))
        if (ea->k != eb->k && strcmp(lh_entry_k(ea), lh_entry_k(eb)) != 0) return false;
    return true;
}

static void diff_object(walk *w, json_object *a, json_object *b) {
    sbuf *path = &w->path;
    size_t base = path->len;
    struct lh_table *ta = json_object_get_object(a), *tb = json_object_get_object(b);
    if (same_keys(ta, tb)) {
        for (struct lh_entry *ea = lh_table_head(ta), *eb = lh_table_head(tb); ea;
             ea = lh_entry_next(ea), eb = lh_entry_next(eb)) {
            json_object *va = (json_object *)lh_entry_v(ea), *vb = (json_object *)lh_entry_v(eb);
            if (va == vb) continue;
            const char *k = lh_entry_k(eb);
            mutate_pointer_push(path, k);
            diff_at(w, k, va, vb);
            sbuf_truncate(path, base);
        }
        return;
    }
    /* Each side's members are looked for in the other at a cursor first:
     * what the engine adds to a copy comes after the members it shares
     * with the original, in their order, so the cursor nearly always holds
     * the key and the hash lookup is for the added ones. */
    struct lh_entry *cur = lh_table_head(tb);
    json_object_object_foreach(a, ka, va) {
        bool there = cur && (lh_entry_k(cur) == ka || strcmp(lh_entry_k(cur), ka) == 0);
        if (there) cur = lh_entry_next(cur);
        else if (!json_object_object_get_ex(b, ka, NULL)) {
            mutate_pointer_push(path, ka);
            emit(w, OP_REMOVE, ka, va, NULL);
            sbuf_truncate(path, base);
        }
    }
    cur = lh_table_head(ta);
    json_object_object_foreach(b, kb, vb) {
        json_object *old;
        bool there;
        if (cur && (lh_entry_k(cur) == kb || strcmp(lh_entry_k(cur), kb) == 0)) {
            old = (json_object *)lh_entry_v(cur);
            there = true;
            cur = lh_entry_next(cur);
        } else {
            there = json_object_object_get_ex(a, kb, &old);
        }
        if (there && old == vb) continue; /* shared: nothing below differs */
        mutate_pointer_push(path, kb);
        if (!there) emit(w, OP_ADD, kb, NULL, vb);
        else diff_at(w, kb, old, vb);
        sbuf_truncate(path, base);
    }
}

/* Emits the ops for old[i0,i1) -> new[j0,j1) when nothing inside matches:
 * removes at the cursor, then adds at the cursor. */
static void replace_run(walk *w, json_object *a, json_object *b, size_t i0, size_t i1, size_t j0,
                        size_t j1, size_t *cur, size_t curlen_after) {
    sbuf *path = &w->path;
    size_t base = path->len;
    for (size_t i = i0; i < i1; i++) {
        push_index(path, *cur);
        emit(w, OP_REMOVE, NULL, json_object_array_get_idx(a, i), NULL);
        sbuf_truncate(path, base);
    }
    for (size_t j = j0; j < j1; j++) {
        /* After the run, the array holds cur + (remaining old) elements; an
         * add at the very end is written "-" as people expect to read it. */
        if (*cur == curlen_after) sbuf_lit(path, "/-");
        else push_index(path, *cur);
        emit(w, OP_ADD, NULL, NULL, json_object_array_get_idx(b, j));
        sbuf_truncate(path, base);
        (*cur)++;
        curlen_after++;
    }
}

static void diff_array(walk *w, json_object *a, json_object *b) {
    sbuf *path = &w->path;
    size_t n = json_object_array_length(a), m = json_object_array_length(b);
    size_t base = path->len;
    side A, B;
    const char *room_a[SIDE_ROOM], *room_b[SIDE_ROOM];
    side_init(&A, a, n, room_a);
    side_init(&B, b, m, room_b);
    /* Trim the common prefix and suffix first: the usual case (an append, a
     * prepend) never needs the table. */
    size_t pre = 0;
    while (pre < n && pre < m && elem_match(&A, pre, &B, pre)) pre++;
    size_t suf = 0;
    while (suf < n - pre && suf < m - pre && elem_match(&A, n - 1 - suf, &B, m - 1 - suf)) suf++;
    size_t an = n - pre - suf, bm = m - pre - suf;

    /* Matched pairs inside the middle run, from an LCS table when small. */
    size_t *pi = NULL, *pj = NULL, npairs = 0;
    size_t room_i[SIDE_ROOM], room_j[SIDE_ROOM];
    if (an && bm && (size_t)(an + 1) * (bm + 1) <= LCS_MAX_CELLS) {
        size_t most = an < bm ? an : bm;
        pi = most <= SIDE_ROOM ? room_i : xmalloc(sizeof *pi * most);
        pj = most <= SIDE_ROOM ? room_j : xmalloc(sizeof *pj * most);
        /* Only insertions (the engine's usual edit: env prepended and
         * appended)? Then every old element matches, in order, its first
         * match among the new ones, and that is exactly the pairing the
         * table's walk below would choose (from a cell where all the old
         * elements left can still be matched, it takes a match and
         * otherwise skips a new element), in bm comparisons instead of
         * an * bm. */
        for (size_t i = 0, j = 0; i < an && j < bm; j++) {
            if (!elem_match(&A, pre + i, &B, pre + j)) continue;
            pi[npairs] = pre + i;
            pj[npairs] = pre + j;
            npairs++;
            i++;
        }
        if (npairs == an) goto paired;
        npairs = 0;
        unsigned *t = xcalloc((an + 1) * (bm + 1), sizeof *t);
#define T(i, j) t[(size_t)(i) * (bm + 1) + (j)]
        for (size_t i = an; i-- > 0;)
            for (size_t j = bm; j-- > 0;)
                T(i, j) = elem_match(&A, pre + i, &B, pre + j)
                              ? T(i + 1, j + 1) + 1
                              : (T(i + 1, j) >= T(i, j + 1) ? T(i + 1, j) : T(i, j + 1));
        for (size_t i = 0, j = 0; i < an && j < bm;) {
            if (elem_match(&A, pre + i, &B, pre + j)) {
                pi[npairs] = pre + i;
                pj[npairs] = pre + j;
                npairs++;
                i++, j++;
            } else if (T(i + 1, j) >= T(i, j + 1)) i++;
            else j++;
        }
#undef T
        free(t);
    }
paired:;

    /* Walk: prefix pairs, middle pairs, suffix pairs, with runs between. */
    size_t cur = 0;   /* index in the array as it is while the ops apply */
    size_t i = 0, j = 0;
    size_t total_pairs = pre + npairs + suf;
    for (size_t k = 0; k <= total_pairs; k++) {
        size_t ni, nj;
        if (k < pre) ni = nj = k;
        else if (k < pre + npairs) ni = pi[k - pre], nj = pj[k - pre];
        else if (k < total_pairs) ni = n - suf + (k - pre - npairs), nj = m - suf + (k - pre - npairs);
        else ni = n, nj = m;
        /* Elements still to come from a after the run: (n - ni). */
        replace_run(w, a, b, i, ni, j, nj, &cur, cur + (n - ni));
        if (k == total_pairs) break;
        push_index(path, cur);
        diff_at(w, NULL, json_object_array_get_idx(a, ni), json_object_array_get_idx(b, nj));
        sbuf_truncate(path, base);
        cur++;
        i = ni + 1;
        j = nj + 1;
    }
    if (pi != room_i) free(pi);
    if (pj != room_j) free(pj);
    side_free(&A, room_a);
    side_free(&B, room_b);
}

/* The caller has pushed key's token (or the index) onto the path. */
static void diff_at(walk *w, const char *key, json_object *a, json_object *b) {
    if (a == b) return;
    int d = ++w->depth;
    if (d < PATCH_DEPTH) {
        w->a[d] = a;
        w->b[d] = b;
        w->key[d] = key;
    }
    json_type ta = json_object_get_type(a), tb = json_object_get_type(b);
    if (ta == json_type_object && tb == json_type_object) diff_object(w, a, b);
    else if (ta == json_type_array && tb == json_type_array) diff_array(w, a, b);
    else if (!json_object_equal(a, b)) emit(w, OP_REPLACE, key, a, b);
    w->depth--;
}

size_t patch_diff_logged(json_object *a, json_object *b, json_object *ops, sbuf *text, patch_log *log) {
    walk w = {.path = SBUF_INIT, .ops = ops, .text = text, .log = log, .depth = -1};
    sbuf_reserve(&w.path, 64);
    w.path.s[0] = 0;
    diff_at(&w, NULL, a, b);
    sbuf_free(&w.path);
    return w.nops;
}

void mutate_patch_diff(json_object *a, json_object *b, json_object *ops) { patch_diff_logged(a, b, ops, NULL, NULL); }
