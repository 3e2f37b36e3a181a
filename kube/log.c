/* kube/log.c - formatting for the kube_logger sink. */
#include "kube/log.h"

#include <stdarg.h>
#include <stdio.h>

void kube_logf(const kube_logger *lg, kube_log_level level, const char *fmt, ...) {
    if (!lg || !lg->fn) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    lg->fn(lg->ud, level, buf);
}
