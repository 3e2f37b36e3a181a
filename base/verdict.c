/* base/verdict.c - see verdict.h. */
#include "base/verdict.h"

#include "base/alloc.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int verdict_deny(verdict *v, const char *rule, const char *fmt, ...) {
    if (v->rule && !v->all) return -1;
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvasprintf(fmt, ap);
    va_end(ap);
    if (!v->rule) {
        v->message = msg;
        v->rule = rule;
        return -1;
    }
    /* The same refusal reached twice (two paths to one rule) is said once. */
    bool seen = !strcmp(v->message, msg);
    for (size_t i = 0; !seen && i < v->nmore; i++) seen = !strcmp(v->more[i], msg);
    if (seen) {
        free(msg);
        return -1;
    }
    v->more = xrealloc(v->more, (v->nmore + 1) * sizeof *v->more);
    v->more[v->nmore++] = msg;
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
    for (size_t i = 0; i < v->nmore; i++) free(v->more[i]);
    free(v->more);
    free(v->message);
    memset(v, 0, sizeof *v);
}
