/* base/err.h - one-line error messages into a caller's buffer, the way
 * every module reports a refused input (char *err, size_t errlen). */
#ifndef BASE_ERR_H
#define BASE_ERR_H

#include <stddef.h>

/* Formats into err (when err and errlen are set) and returns -1. The
 * message ends up in a log line, a status condition or FILE:LINE output,
 * so control characters in quoted user text become spaces: one line. */
int err_printf(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
