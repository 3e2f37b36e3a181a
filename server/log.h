/* server/log.h - one line per event: JSON objects by default (time, level,
 * msg, fields), or plain text for people (--log-format text). Fields are
 * string pairs ending with NULL. Never pass a Secret value; request bodies
 * only at debug level. */
#ifndef SERVER_LOG_H
#define SERVER_LOG_H

#include "kube/log.h"

typedef enum log_level { LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR } log_level;

void log_setup(int json, log_level min_level);
int log_enabled(log_level level);
void log_kv(log_level level, const char *msg, ...) __attribute__((sentinel));
/* A kube_logger that writes through log_kv (field "source" = what). */
kube_logger log_kube_sink(const char *what);
/* "debug", "info", "warn", "error" -> level; -1 when unknown. */
int log_parse_level(const char *s);
#endif
