/* server/log.c - structured logging; see log.h.
 *
 * Each line is formatted into its own buffer and written with one write(2),
 * so lines from different threads never interleave. */
#include "server/log.h"

#include "base/jtext.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static int json_format = 1;
static log_level min_level = LOG_INFO;
static const char *const names[] = {"debug", "info", "warn", "error"};

void log_setup(int json, log_level level) {
    json_format = json;
    min_level = level;
}

int log_enabled(log_level level) { return level >= min_level; }

int log_parse_level(const char *s) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, names[i])) return i;
    return -1;
}

/* Longer field values are cut so that a line stays about this long (and
 * valid JSON): request bodies at debug level can be megabytes. */
#define LINE_MAX_BYTES 8192

static void put(sbuf *b, const char *s, size_t n) {
    size_t room = b->len < LINE_MAX_BYTES - 2 ? LINE_MAX_BYTES - 2 - b->len : 0;
    sbuf_add(b, s, n < room ? n : room);
}

static void put_json_str(sbuf *b, const char *s) {
    size_t n = strlen(s), room = b->len < LINE_MAX_BYTES - 64 ? LINE_MAX_BYTES - 64 - b->len : 0;
    if (n > room) {
        n = room; /* never inside a UTF-8 sequence: jtext would write U+FFFD */
        while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    jtext_string(b, s, n);
}

#define NUM_MARK '\x01' /* LOG_NUM's */

/* RFC 8259's number grammar: what may be written unquoted. */
static bool json_number(const char *s) {
    if (*s == '-') s++;
    if (*s == '0') s++;
    else if (*s >= '1' && *s <= '9') while (*s >= '0' && *s <= '9') s++;
    else return false;
    if (*s == '.') {
        if (!(*++s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9') s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-') s++;
        if (!(*s >= '0' && *s <= '9')) return false;
        while (*s >= '0' && *s <= '9') s++;
    }
    return !*s;
}

void log_kv(log_level level, const char *msg, ...) {
    if (level < min_level) return;
    sbuf b = SBUF_INIT;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    char ts[64];
    size_t tl = strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    tl += (size_t)snprintf(ts + tl, sizeof ts - tl, ".%03dZ", (int)(tv.tv_usec / 1000));
    va_list ap;
    va_start(ap, msg);
    if (json_format) {
        put(&b, "{\"time\":\"", 9);
        put(&b, ts, tl);
        put(&b, "\",\"level\":\"", 11);
        put(&b, names[level], strlen(names[level]));
        put(&b, "\",\"msg\":", 8);
        put_json_str(&b, msg);
        const char *k;
        while ((k = va_arg(ap, const char *))) {
            const char *v = va_arg(ap, const char *);
            bool num = *k == NUM_MARK;
            if (num) k++;
            put(&b, ",", 1);
            put_json_str(&b, k);
            put(&b, ":", 1);
            /* near the length cap, quoted: put_json_str cuts it validly */
            if (num && v && json_number(v) && b.len + strlen(v) + 64 < LINE_MAX_BYTES) put(&b, v, strlen(v));
            else put_json_str(&b, v ? v : "");
        }
        put(&b, "}", 1);
    } else {
        put(&b, ts, tl);
        put(&b, " ", 1);
        for (const char *p = names[level]; *p; p++) {
            char u = (char)(*p - 32);
            put(&b, &u, 1);
        }
        put(&b, " ", 1);
        put(&b, msg, strlen(msg));
        const char *k;
        while ((k = va_arg(ap, const char *))) {
            const char *v = va_arg(ap, const char *);
            if (*k == NUM_MARK) k++;
            put(&b, " ", 1);
            put(&b, k, strlen(k));
            put(&b, "=", 1);
            bool quote = v && (strchr(v, ' ') || !*v);
            if (quote) put_json_str(&b, v);
            else put(&b, v ? v : "", v ? strlen(v) : 0);
        }
    }
    va_end(ap);
    sbuf_putc(&b, '\n');
    ssize_t w = write(2, b.s, b.len);
    (void)w;
    sbuf_free(&b);
}

static void kube_sink(void *ud, kube_log_level level, const char *msg) {
    static const log_level map[] = {LOG_DEBUG, LOG_INFO, LOG_WARN, LOG_ERROR};
    log_kv(map[level], msg, "source", (const char *)ud, NULL);
}

kube_logger log_kube_sink(const char *what) { return (kube_logger){kube_sink, (void *)what}; }
