/* base/sbuf.c - growable string buffer; see sbuf.h. */
#include "base/sbuf.h"

#include "base/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sbuf_grow(sbuf *b, size_t extra) {
    if (extra > SIZE_MAX - b->len - 1) base_oom();
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 128;
    while (cap < need) {
        if (cap > SIZE_MAX / 2) base_oom();
        cap *= 2;
    }
    b->s = xrealloc(b->s, cap);
    b->cap = cap;
}

void sbuf_puts(sbuf *b, const char *s) { sbuf_add(b, s, strlen(s)); }

void sbuf_vprintf(sbuf *b, const char *fmt, va_list ap) {
    va_list copy;
    va_copy(copy, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        sbuf_add(b, small, (size_t)n);
        return;
    }
    sbuf_reserve(b, (size_t)n);
    vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void sbuf_printf(sbuf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sbuf_vprintf(b, fmt, ap);
    va_end(ap);
}

void sbuf_truncate(sbuf *b, size_t len) {
    if (len >= b->len) return;
    b->len = len;
    b->s[len] = 0;
}

char *sbuf_take(sbuf *b, size_t *len) {
    char *s = b->s ? b->s : xstrdup("");
    if (len) *len = b->len;
    b->s = NULL;
    b->len = b->cap = 0;
    return s;
}

void sbuf_free(sbuf *b) {
    free(b->s);
    b->s = NULL;
    b->len = b->cap = 0;
}
