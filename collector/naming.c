/* collector/naming.c - Truncate and DNSName (internal/naming); see naming.h.
 * Values are cut in place in private copies, then the format is applied
 * again, which is how the reference does it; doing it by arithmetic on the
 * formatted string would differ when a value is dropped entirely. */
#include "collector/naming.h"

#include "base/alloc.h"

#include <stdlib.h>
#include <string.h>

#define MAX_VALS 4

static char *format(const char *fmt, size_t nvals, char *const *vals) {
    size_t len = 0, vi = 0;
    char *out, *p;
    for (const char *f = fmt; *f; f++) {
        if (f[0] == '%' && f[1] == 's') {
            if (vi < nvals) len += strlen(vals[vi++]);
            f++;
        } else {
            len++;
        }
    }
    out = xmalloc(len + 1);
    p = out;
    vi = 0;
    for (const char *f = fmt; *f; f++) {
        if (f[0] == '%' && f[1] == 's') {
            if (vi < nvals) {
                size_t n = strlen(vals[vi]);
                memcpy(p, vals[vi++], n);
                p += n;
            }
            f++;
        } else {
            *p++ = *f;
        }
    }
    *p = '\0';
    return out;
}

static int is_alnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

char *collector_truncate(const char *fmt, size_t max, size_t nvals, const char *const *vals) {
    char *copies[MAX_VALS] = {0}, *out;
    size_t len;
    if (nvals > MAX_VALS) nvals = MAX_VALS; /* callers pass at most two */
    for (size_t i = 0; i < nvals; i++) copies[i] = xstrdup(vals[i]);
    out = format(fmt, nvals, copies);
    len = strlen(out);
    if (len > max) {
        size_t excess = len - max;
        for (size_t i = 0; i < nvals && excess > 0; i++) {
            size_t n = strlen(copies[i]);
            if (n > excess) {
                copies[i][n - excess] = '\0';
                excess = 0;
            } else {
                copies[i][0] = '\0';
                excess -= n;
            }
        }
        free(out);
        out = format(fmt, nvals, copies);
        if (strlen(out) > max) {
            out[max] = '\0'; /* hard cut, no trimming: the reference's path */
            goto out;
        }
    }
    {
        size_t a = 0, b = strlen(out);
        while (a < b && !is_alnum(out[a])) a++;
        while (b > a && !is_alnum(out[b - 1])) b--;
        memmove(out, out + a, b - a);
        out[b - a] = '\0';
    }
out:
    for (size_t i = 0; i < nvals; i++) free(copies[i]);
    return out;
}

/* Byte length of the UTF-8 sequence starting with c (1 for invalid bytes,
 * which Go decodes as one U+FFFD each). */
static size_t seq_len(unsigned char c) {
    if (c >= 0xf0 && c < 0xf8) return 4;
    if (c >= 0xe0) return c < 0xf0 ? 3 : 1;
    if (c >= 0xc0) return 2;
    return 1;
}

void collector_dns_name(char *s) {
    size_t runes = 0, n = strlen(s), r = 0, w = 0;
    for (size_t i = 0; i < n; i += seq_len((unsigned char)s[i])) runes++;
    /* Go compares the byte index of the lowercased string with the rune
     * count minus one; for ASCII names (all real ones) both are the rune
     * position. */
    for (size_t i = 0, idx = 0; i < n; idx++) {
        size_t l = seq_len((unsigned char)s[i]);
        char c = s[i];
        if (i + l > n) l = n - i;
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (l > 1 || !((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            c = (r == 0 || idx == runes - 1) ? 'a' : '-';
        s[w++] = c;
        r += l;
        i += l;
    }
    s[w] = '\0';
}

char *collector_name(const char *fmt, const char *a, const char *b) {
    const char *vals[2] = {a, b};
    char *s = collector_truncate(fmt, COLLECTOR_NAME_MAX, b ? 2 : 1, vals);
    collector_dns_name(s);
    return s;
}
