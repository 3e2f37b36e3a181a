/* base/jfast.h - a one-pass parse of request bodies into json-c trees, for
 * the shapes the API server sends, and the structural skip it shares with
 * the managedFields skimmer.
 *
 * jfast_parse builds exactly the tree json-c's strict tokener builds (the
 * same constructors, the same member adds), or declines and the caller
 * parses with json-c, which then defines the result and any error text. */
#ifndef BASE_JFAST_H
#define BASE_JFAST_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Members to leave out of the tree, as a trie: a list of entries ended by
 * one whose key is NULL. An entry names a member (or, as "[]", each
 * element of an array) and says what becomes of its value:
 *  - JFAST_ENTER: it is built, and the entries of `below` apply inside it;
 *  - JFAST_NULL: it is checked as strict JSON but not built, and null takes
 *    its place when its text is at least min_len bytes (smaller values are
 *    built as usual): what the managedFields skimmer does to the text;
 *  - JFAST_DROP: it is checked the same way and the member is left out.
 * Keys are matched as written (escaped keys are declined anyway). */
typedef enum { JFAST_ENTER, JFAST_NULL, JFAST_DROP } jfast_what;
typedef struct jfast_path {
    const char *key;
    jfast_what what;
    size_t min_len;
    const struct jfast_path *below;
} jfast_path;

/* 1 with *out, the body's top-level object (the caller owns it), or 0:
 * declined, nothing built, *out NULL. Declined are bodies outside the
 * subset (whatever is not an object at the top; control characters in
 * strings; \u escapes of NUL or of surrogates; escaped keys; numbers other
 * than integers of at most 18 digits without a leading zero; a key twice
 * in one object; nesting deeper than 24) and every malformed body. paths
 * may be NULL. */
int jfast_parse(const char *body, size_t len, const jfast_path *paths, json_object **out);

/* The memory budget. What a tree costs is estimated as it is read, from
 * what json-c 0.16 allocates for each part (measured with glibc's
 * mallinfo2 on trees of 200,000 of each; mimalloc's sizes are within a
 * few percent): an object 784 bytes (its 16-slot table: the 800 B of a
 * `{}`), an array 144 and 8 a slot, a member 32 and its key's bytes, and
 * 120 more past the tenth (the table doubles), a string 64 and its bytes,
 * an integer or a boolean 64, null nothing. */
#define JFAST_COST_OBJECT 784
#define JFAST_COST_ARRAY 144
#define JFAST_COST_ELEMENT 8
#define JFAST_COST_MEMBER 32
#define JFAST_COST_MEMBER_GROWN 120
#define JFAST_COST_STRING 64
#define JFAST_COST_SCALAR 64
#define JFAST_COST_DOUBLE 96 /* json-c keeps a double's text besides */
#define JFAST_OVER (-1)

/* jfast_parse within a budget: each part of the tree is charged before it
 * is built, and the parse stops at the first charge that would pass
 * budget bytes: JFAST_OVER, nothing built, *out NULL, whatever the rest of
 * the body holds (malformed or not). Otherwise jfast_parse's 1 or 0. What
 * paths leave out is not built and costs nothing. *cost (cost may be
 * NULL) is what was charged: the tree's estimate when built. */
int jfast_parse_within(const char *body, size_t len, const jfast_path *paths, size_t budget, size_t *cost,
                       json_object **out);

/* A bound on the estimate above of any tree json-c may build from the
 * body (the fallback's, when jfast_parse declines), from one cheap scan:
 * the objects, arrays and commas outside strings, and the length. No tree
 * of the body costs more; it costs less by the members' and scalars'
 * share (about a half for a pod). */
size_t jfast_cost_bound(const char *body, size_t len);

/* The value of the member keys[0].keys[1]...keys[n-1] of the object at p
 * (white space before it skipped): true with [*vstart, *vend), found by
 * skipping what comes before it (the skimmer's rule), nothing built.
 * Keys are compared as written (an escaped spelling is not found) and the
 * first of a key written twice is the one found. For what must be read of
 * a body too costly to parse: its uid, its kind. */
bool jfast_find(const char *p, const char *end, const char *const *keys, size_t n, const char **vstart,
                const char **vend);

/* The JFAST_DROP entries of paths applied to a tree json-c built, so that
 * the fallback's tree is the one jfast_parse would have built. */
void jfast_prune(json_object *root, const jfast_path *paths);

/* Past the strict JSON value at p (white space not skipped) nested at most
 * depth levels deep (a scalar is one), or NULL when there is none: the
 * skimmer's rule (it allows 512 levels), shared so that a skipped value is
 * accepted by the same rule whichever parse skips it. */
const char *jfast_skip_value(const char *p, const char *end, int depth);
const char *jfast_skip_string(const char *p, const char *end);
const char *jfast_skip_ws(const char *p, const char *end);

#endif
