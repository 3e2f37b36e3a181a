/* base/utf8.c - see utf8.h. */
#include "base/utf8.h"

size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t len;
    unsigned min;
    if (c < 0xC2) return 0; /* continuation byte or overlong lead */
    if (c < 0xE0) len = 2, min = 0x80;
    else if (c < 0xF0) len = 3, min = 0x800;
    else if (c < 0xF5) len = 4, min = 0x10000;
    else return 0;
    if (len > n) return 0;
    unsigned cp = c & (0x7F >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}
