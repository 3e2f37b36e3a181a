/* base/jhash.h - the member-key hash of the json-c objects we build.
 *
 * json-c hashes every key it inserts or looks up with lookup3 over
 * strlen(key) (about 85 instructions for a short key, a sixth of the parse
 * of a review and more of its lookups). The objects jfast and jnew_obj
 * make carry this hash instead: a few multiplications per 8 bytes, seeded
 * per process from getrandom like json-c's own, so keys a user writes
 * cannot be chosen to collide in our tables. A table's hash function is
 * its own (json-c calls t->hash_fn for every insert, lookup and resize),
 * so trees mixing our objects with json-c's (a fallback parse, a deep copy)
 * stay consistent; member order, and so every text we write, does not
 * depend on the hash. */
#ifndef BASE_JHASH_H
#define BASE_JHASH_H

#include <json-c/json.h>
#include <stddef.h>

/* The hash of key k of n bytes (k need not be NUL-terminated): what the
 * table hash gives for the same key, for callers that know its length. */
unsigned long jhash_key(const char *k, size_t n);
/* Gives the empty object o our key hash; o must have no members yet. */
void jhash_adopt(json_object *o);

#endif
