/* base/alloc.c - allocation that cannot fail; see alloc.h for why. */
#include "base/alloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Noreturn void base_oom(void) {
    /* write(2), not stdio: stdio may itself need memory. */
    static const char msg[] = "fatal: out of memory\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    abort();
}

void *xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) base_oom();
    return p;
}

void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) base_oom();
    return p;
}

void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) base_oom();
    return q;
}

char *xstrdup(const char *s) {
    char *p = strdup(s);
    if (!p) base_oom();
    return p;
}

char *xstrndup(const char *s, size_t n) {
    char *p = strndup(s, n);
    if (!p) base_oom();
    return p;
}

char *xvasprintf(const char *fmt, va_list ap) {
    char *s;
    if (vasprintf(&s, fmt, ap) < 0) base_oom();
    return s;
}

char *xasprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    return s;
}

void *xgrow(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 8;
    while (c < need) {
        if (c > SIZE_MAX / 2) base_oom();
        c *= 2;
    }
    if (elem && c > SIZE_MAX / elem) base_oom();
    p = xrealloc(p, c * elem);
    *cap = c;
    return p;
}
