/* base/base64.c - base64 encoding; see base64.h. */
#include "base/base64.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Two output characters per 12 input bits: half the lookups of the plain
 * table. Filled once, on first use, from the alphabet. */
static char pairs[4096][2];
static pthread_once_t pairs_once = PTHREAD_ONCE_INIT;

static void pairs_fill(void) {
    for (int i = 0; i < 4096; i++) pairs[i][0] = alphabet[i >> 6], pairs[i][1] = alphabet[i & 63];
}

static inline uint64_t be64(uint64_t x) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

void base64_encode(char *dst, const void *src, size_t n) {
    const unsigned char *s = src;
    size_t i = 0;
    pthread_once(&pairs_once, pairs_fill);
    /* Six bytes (eight characters) per step from one eight-byte load,
     * while two bytes past the six are there to load. */
    for (; i + 8 <= n; i += 6) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        w = be64(w) >> 16; /* the six bytes, first one highest */
        memcpy(dst, pairs[(w >> 36) & 4095], 2);
        memcpy(dst + 2, pairs[(w >> 24) & 4095], 2);
        memcpy(dst + 4, pairs[(w >> 12) & 4095], 2);
        memcpy(dst + 6, pairs[w & 4095], 2);
        dst += 8;
    }
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        memcpy(dst, pairs[v >> 12], 2);
        memcpy(dst + 2, pairs[v & 4095], 2);
        dst += 4;
    }
    if (i < n) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        dst[0] = alphabet[v >> 18];
        dst[1] = alphabet[(v >> 12) & 63];
        dst[2] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        dst[3] = '=';
    }
}
