/* base/sbuf.h - the one growable string buffer.
 *
 * s is NUL-terminated after every append (once anything was appended), so
 * the text can be handed out as a C string without a copy. Growth doubles;
 * allocation failure aborts (base/alloc.h). */
#ifndef BASE_SBUF_H
#define BASE_SBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

#define SBUF_INIT {NULL, 0, 0}

/* Room for extra more bytes and the NUL. The check is inline: writers of
 * JSON text call it for every string they append. */
void sbuf_grow(sbuf *b, size_t extra);
static inline void sbuf_reserve(sbuf *b, size_t extra) {
    if (extra < b->cap - b->len) return; /* need = len + extra + 1 <= cap */
    sbuf_grow(b, extra);
}
/* Inline too: the writers of JSON text append a few bytes at a time, and
 * with n known where it is called (sbuf_lit) the copy is a few moves. */
static inline void sbuf_add(sbuf *b, const void *p, size_t n) {
    sbuf_reserve(b, n);
    if (n) memcpy(b->s + b->len, p, n);
    b->len += n;
    b->s[b->len] = 0;
}
/* A string literal, its length known at compile time. */
#define sbuf_lit(b, lit) sbuf_add((b), "" lit, sizeof(lit) - 1)
void sbuf_puts(sbuf *b, const char *s);
static inline void sbuf_putc(sbuf *b, char c) {
    sbuf_reserve(b, 1);
    b->s[b->len++] = c;
    b->s[b->len] = 0;
}
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vprintf(sbuf *b, const char *fmt, va_list ap);
/* Cuts the text back to len bytes (len <= b->len). */
void sbuf_truncate(sbuf *b, size_t len);
/* The text (malloc'ed, "" when empty; its length in *len when len is not
 * NULL); b is empty again. */
char *sbuf_take(sbuf *b, size_t *len);
void sbuf_free(sbuf *b);

#endif
