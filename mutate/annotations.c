/* mutate/annotations.c - the annotation keys the engine reads.
 *
 * The fixed keys are spelled once, in ANN_KEYS (internal.h); the
 * per-language ones are built from the language table. */
#include "mutate/internal.h"

#include <string.h>

#define ANN_STR_(id, key) [ANN_##id] = key,
const char *const ann_keys[ANN_NKEYS] = {ANN_KEYS(ANN_STR_)};

const char *ann_lang_key(char buf[ANN_KEY_MAX], mutate_lang_id id, bool names) {
    /* Nginx's list is inject-nginx-container-names, the reference's
     * spelling (spec 1.1, 7.29). Built with memcpy: asks() builds eight of
     * these for every pod. */
    const char *name = mutate_lang_name(id);
    const char *pre = !names || id == MUTATE_NGINX ? "inject-" : "";
    const char *post = names ? "-container-names" : "";
    size_t a = sizeof ANN_PREFIX - 1, b = strlen(pre), c = strlen(name), d = strlen(post);
    if (a + b + c + d >= ANN_KEY_MAX) c = ANN_KEY_MAX - 1 - a - b - d; /* cannot happen: names are short */
    memcpy(buf, ANN_PREFIX, a);
    memcpy(buf + a, pre, b);
    memcpy(buf + a + b, name, c);
    memcpy(buf + a + b + c, post, d + 1);
    return buf;
}
