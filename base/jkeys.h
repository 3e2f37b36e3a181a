/* base/jkeys.h - the member names of the objects we parse, as literals.
 *
 * Every member jfast adds would otherwise cost a strdup of its key (and a
 * free with the tree): a third of what a member costs. Most keys of a pod
 * review are the Kubernetes API's own field names, a closed vocabulary, so
 * a key found in it is added as json-c's constant key, the literal below,
 * which lives as long as the process and is never freed. Lookups reuse the
 * key's jhash (the hash its table needs anyway), so a miss costs a probe or
 * two. Which keys are listed changes no tree and no text, only what is
 * allocated. */
#ifndef BASE_JKEYS_H
#define BASE_JKEYS_H

#include <stddef.h>

/* The literal spelling of the n-byte key k whose jhash_key is h, or NULL
 * when k is not in the vocabulary. */
const char *jkeys_known(const char *k, size_t n, unsigned long h);

#endif
