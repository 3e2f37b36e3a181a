/* kube/file.h - reading whole files (manifests, settings). */
#ifndef KUBE_FILE_H
#define KUBE_FILE_H

#include <stddef.h>

/* The whole file, NUL-terminated (malloc'ed; length in *len), or NULL with
 * errno set. "-" reads standard input. */
char *kube_read_file(const char *path, size_t *len);
#endif
