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

/* One member path whose value is checked as strict JSON but not built:
 * null takes its place when the value's text is at least min_len bytes
 * (smaller ones are built as usual). Keys are matched as written. */
typedef struct {
    const char *const *keys;
    size_t depth;
    size_t min_len;
} jfast_skip;

/* 1 with *out, the body's top-level object (the caller owns it), or 0:
 * declined, nothing built, *out NULL. Declined are bodies outside the
 * subset (whatever is not an object at the top; control characters in
 * strings; \u escapes of NUL or of surrogates; escaped keys; numbers other
 * than integers of at most 18 digits without a leading zero; a key twice
 * in one object; nesting deeper than 24) and every malformed body. */
int jfast_parse(const char *body, size_t len, const jfast_skip *skip, json_object **out);

/* Past the strict JSON value at p (white space not skipped), or NULL when
 * there is none; the skimmer's rule, shared so that a skipped value is
 * accepted exactly when the skimmer accepts it. */
const char *jfast_skip_value(const char *p, const char *end);
const char *jfast_skip_string(const char *p, const char *end);
const char *jfast_skip_ws(const char *p, const char *end);

#endif
