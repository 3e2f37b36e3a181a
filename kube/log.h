/* kube/log.h - how kube/ reports without owning a log format: the caller
 * (server/ or the CLI) passes a sink; a NULL sink drops the messages. */
#ifndef KUBE_LOG_H
#define KUBE_LOG_H

typedef enum kube_log_level { KUBE_LOG_DEBUG, KUBE_LOG_INFO, KUBE_LOG_WARN, KUBE_LOG_ERROR } kube_log_level;

typedef struct kube_logger {
    void (*fn)(void *ud, kube_log_level level, const char *msg);
    void *ud;
} kube_logger;

void kube_logf(const kube_logger *lg, kube_log_level level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#endif
