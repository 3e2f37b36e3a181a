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
