/* base/jhash.c - the member-key hash of the json-c objects we build; see
 * jhash.h. wyhash's mixing step (the two halves of a 64x64 -> 128-bit
 * product folded together) over 8-byte words, keyed by two per-process
 * secrets. Not a cryptographic MAC (SipHash would be, at twice the cost);
 * it is keyed, which is what json-c's lookup3 with a random seed gives. */
#include "base/jhash.h"

#include <json-c/linkhash.h>

#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

static uint64_t secret[2] = {0xa0761d6478bd642full, 0xe7037ed1a0b428dbull};

/* Before main and before any thread: the secrets are only read after. */
__attribute__((constructor(101))) static void jhash_seed(void) {
    uint64_t s[2];
    if (getrandom(s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        /* Early boot without entropy yet: weaker, still not guessable from
         * outside the pod. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s[0] = (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)&ts;
        s[1] = (uint64_t)ts.tv_sec * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)s;
    }
    secret[0] ^= s[0];
    secret[1] ^= s[1] | 1;
}

static inline uint64_t mix(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t r8(const char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}
static inline uint64_t r4(const char *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* Sixteen bytes a round; the last 1-16 are read as two words that may
 * overlap (fixed-size loads, no byte loop and no memcpy call), which with
 * the length folded in first still reads every byte of every key. */
unsigned long jhash_key(const char *k, size_t n) {
    const unsigned char *u = (const unsigned char *)k;
    uint64_t h = secret[0] ^ n, a, b;
    for (; n > 16; n -= 16, k += 16, u += 16) h = mix(r8(k) ^ secret[1], r8(k + 8) ^ h);
    if (n >= 8) a = r8(k), b = r8(k + n - 8);
    else if (n >= 4) a = r4(k), b = r4(k + n - 4);
    else if (n) a = (uint64_t)u[0] << 16 | (uint64_t)u[n >> 1] << 8 | u[n - 1], b = 0;
    else a = b = 0;
    return (unsigned long)mix(mix(a ^ secret[1], b ^ h), secret[0] ^ 0x589965cc75374cc3ull);
}

static unsigned long table_hash(const void *k) { return jhash_key(k, strlen(k)); }

/* Most lookups are of a literal ("name", "env") in an object whose key is
 * the same literal (jfast's API field names, jw_add's keys), and the
 * linker merges equal literals: the pointers answer before strcmp does. */
static int table_equal(const void *a, const void *b) { return a == b || strcmp(a, b) == 0; }

void jhash_adopt(json_object *o) {
    struct lh_table *t = json_object_get_object(o);
    if (t && t->count == 0) {
        t->hash_fn = table_hash;
        t->equal_fn = table_equal;
    }
}
