/* base/base64.c - base64 encoding; see base64.h. */
#include "base/base64.h"

#include <stdint.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

void base64_encode(char *dst, const void *src, size_t n) {
    const unsigned char *s = src;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        dst[0] = alphabet[v >> 18];
        dst[1] = alphabet[(v >> 12) & 63];
        dst[2] = alphabet[(v >> 6) & 63];
        dst[3] = alphabet[v & 63];
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
