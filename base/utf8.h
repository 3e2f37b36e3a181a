/* base/utf8.h - UTF-8 validation for every writer that must emit valid
 * text (JSON answers, log lines, the config hash) whatever bytes came in. */
#ifndef BASE_UTF8_H
#define BASE_UTF8_H

#include <stddef.h>

/* Length of the valid UTF-8 sequence starting at s (n bytes available), 0
 * when the bytes there are not one (a continuation or overlong lead, a
 * surrogate, past U+10FFFF, cut short). Meant for bytes >= 0x80. */
size_t utf8_len(const unsigned char *s, size_t n);

#endif
