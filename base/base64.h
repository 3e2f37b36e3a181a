/* base/base64.h - base64 (RFC 4648, with padding) written into a buffer
 * the caller sized, for the patch of every admission answer.
 *
 * 24 bytes at a time with AVX2 and twelve with SSSE3 on x86-64 (each
 * probed at run time; about half and one instruction a byte), the rest
 * six and three bytes at a time through a table of
 * character pairs (8 KiB, filled on first use): half the instructions of
 * the one-character table, a quarter of OpenSSL's EVP_EncodeBlock, which
 * this replaces on the hot path; nothing here allocates, so the answer can
 * be written straight into the HTTP server's request memory. */
#ifndef BASE_BASE64_H
#define BASE_BASE64_H

#include <stddef.h>

/* The length of the base64 text of n bytes. */
static inline size_t base64_len(size_t n) { return (n + 2) / 3 * 4; }
/* Writes base64_len(n) characters (no NUL) to dst. */
void base64_encode(char *dst, const void *src, size_t n);

#endif
