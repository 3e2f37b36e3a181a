/* base/verdict.c - see verdict.h. */
#include "base/verdict.h"

#include "base/alloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int verdict_deny(verdict *v, const char *rule, const char *fmt, ...) {
    if (v->rule) return -1;
    va_list ap;
    va_start(ap, fmt);
    v->message = xvasprintf(fmt, ap);
    va_end(ap);
    v->rule = rule;
    return -1;
}

void verdict_warn_take(verdict *v, char *text) {
    v->warnings = xrealloc(v->warnings, (v->nwarnings + 1) * sizeof *v->warnings);
    v->warnings[v->nwarnings++] = text;
}

void verdict_warn(verdict *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *t = xvasprintf(fmt, ap);
    va_end(ap);
    verdict_warn_take(v, t);
}

void verdict_free(verdict *v) {
    for (size_t i = 0; i < v->nwarnings; i++) free(v->warnings[i]);
    free(v->warnings);
    free(v->message);
    memset(v, 0, sizeof *v);
}
