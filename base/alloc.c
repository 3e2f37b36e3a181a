/* base/alloc.c - allocation that cannot fail; see alloc.h for why. */
#include "base/alloc.h"

#include <malloc.h>
#include <mimalloc.h>
#include <pthread.h>
#include <stdbool.h>
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

/* Weak: only binaries linked with -lmimalloc have it, and base/ must not
 * depend on which allocator a binary chose. */
#pragma weak mi_collect
#pragma weak mi_option_get
#pragma weak mi_option_set

/* mimalloc gives a freed page back to the system only some time after
 * the free (the decommit delays), and then only when its thread touches
 * that segment again: a collection afterwards does not reach segments that
 * still hold live objects. So the delays are zero while the frees happen,
 * not just during the collection. Nested and concurrent windows (the file
 * and the live source) share one count. */
static const mi_option_t delays[] = {mi_option_decommit_delay, mi_option_segment_decommit_delay,
                                     mi_option_decommit_extend_delay};
static long saved[3];
static int windows;
static pthread_mutex_t window_mu = PTHREAD_MUTEX_INITIALIZER;

void base_release_begin(void) {
    if (!mi_option_set) return;
    pthread_mutex_lock(&window_mu);
    if (windows++ == 0)
        for (int i = 0; i < 3; i++) saved[i] = mi_option_get(delays[i]), mi_option_set(delays[i], 0);
    pthread_mutex_unlock(&window_mu);
}

void base_release_end(bool trim) {
    if (trim) base_trim();
    if (!mi_option_set) return;
    pthread_mutex_lock(&window_mu);
    if (--windows == 0)
        for (int i = 0; i < 3; i++) mi_option_set(delays[i], saved[i]);
    pthread_mutex_unlock(&window_mu);
}

void base_trim(void) {
    if (mi_collect) mi_collect(true);
#ifdef __GLIBC__
    malloc_trim(0);
#endif
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

char *xcat(const char *s, ...) {
    va_list ap;
    size_t n = 0;
    va_start(ap, s);
    for (const char *p = s; p; p = va_arg(ap, const char *)) n += strlen(p);
    va_end(ap);
    char *out = xmalloc(n + 1), *d = out;
    va_start(ap, s);
    for (const char *p = s; p; p = va_arg(ap, const char *)) {
        size_t l = strlen(p);
        memcpy(d, p, l);
        d += l;
    }
    va_end(ap);
    *d = 0;
    return out;
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
