/* kube/file.c - reading whole files; see file.h. */
#include "kube/file.h"

#include "base/sbuf.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *kube_read_file(const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    sbuf b = SBUF_INIT;
    char chunk[16384];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) sbuf_add(&b, chunk, r);
    int failed = ferror(f);
    if (f != stdin) fclose(f);
    if (failed) {
        sbuf_free(&b);
        errno = EIO;
        if (len) *len = 0;
        return NULL;
    }
    return sbuf_take(&b, len);
}

char *kube_read_regular_file(const char *path, size_t max, size_t *len) {
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then
     * refuses anything but a regular file. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        errno = S_ISREG(st.st_mode) ? e : EINVAL;
        return NULL;
    }
    sbuf b = SBUF_INIT;
    char chunk[16384];
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 || b.len + (size_t)r > max) {
            int e = r < 0 ? errno : EFBIG;
            close(fd);
            sbuf_free(&b);
            errno = e;
            return NULL;
        }
        if (r == 0) break;
        sbuf_add(&b, chunk, (size_t)r);
    }
    close(fd);
    return sbuf_take(&b, len);
}

json_object *kube_parse_json(const char *text, size_t len, int *line, const char **reason) {
    json_tokener *tok = json_tokener_new();
    if (!tok) return NULL;
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    enum json_tokener_error e = json_tokener_get_error(tok);
    size_t end = json_tokener_get_parse_end(tok);
    if (e == json_tokener_continue && !o) {
        /* A top-level number is open until a delimiter arrives; anything
         * else still open is cut short, at the end of the text. */
        o = json_tokener_parse_ex(tok, " ", 1);
        e = json_tokener_get_error(tok);
        end = len;
    }
    json_tokener_free(tok);
    while (end < len && (text[end] == ' ' || text[end] == '\n' || text[end] == '\r' || text[end] == '\t')) end++;
    if (e == json_tokener_success && end == len) return o;
    json_object_put(o);
    *reason = e == json_tokener_continue ? "unexpected end of data"
              : e != json_tokener_success ? json_tokener_error_desc(e)
                                          : "unexpected data after the JSON value";
    *line = 1;
    for (size_t i = 0; i < end && i < len; i++) *line += text[i] == '\n';
    return NULL;
}
