/* server/log.h - one line per event: JSON objects by default (time, level,
 * msg, fields), or plain text for people (--log-format text). Fields are
 * string pairs ending with NULL; a key given as LOG_NUM("key") holds a
 * number (counts, durations), which JSON lines write as a JSON number. Never
 * pass a Secret value; request bodies only at debug level. */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include "kube/log.h"

typedef enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

void log_setup(int json, log_level min_level);
int log_enabled(log_level level);
void log_kv(log_level level, const char *msg, ...) __attribute__((sentinel));
/* The key of a numeric field: log_kv(LOG_INFO, "x", LOG_NUM("micros"), "42",
 * NULL) writes "micros":42. The value is still text (the caller formats it);
 * one that is not a JSON number is written quoted, so a line stays valid
 * JSON. The marker byte cannot start a real key. */
#define LOG_NUM(key) "\x01" key
/* A kube_logger that writes through log_kv (field "source" = what). */
kube_logger log_kube_sink(const char *what);
/* "debug", "info", "warn", "error" -> level; -1 when unknown. */
int log_parse_level(const char *s);
#endif
