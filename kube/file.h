/* kube/file.h - reading whole files (manifests, settings). */
#ifndef KUBE_FILE_H
#define KUBE_FILE_H

#include <stddef.h>

/* The whole file, NUL-terminated (malloc'ed; length in *len), or NULL with
 * errno set. "-" reads standard input; pipes (--config <(...)) work. */
char *kube_read_file(const char *path, size_t *len);
/* The same for a regular file of at most max bytes, for files a watcher
 * re-reads unattended: NULL with errno EFBIG when the file holds more
 * (nothing past max+1 bytes is read), EINVAL when path is no longer a
 * regular file (a FIFO swapped in would block the reader), or the errno of
 * open/read. */
char *kube_read_regular_file(const char *path, size_t max, size_t *len);
/* Exactly one JSON value in text (whitespace around it allowed). NULL on
 * error, with the 1-based line of the problem and a short reason. */
struct json_object;
struct json_object *kube_parse_json(const char *text, size_t len, int *line, const char **reason);
#endif
