/* kube/file.c - reading whole files; see file.h. */
#include "kube/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *kube_read_file(const char *path, size_t *len) {
    FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0;
    FILE *mem = open_memstream(&buf, &n);
    if (!mem) goto err;
    char chunk[16384];
    size_t r;
    while ((r = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, r, mem);
    int failed = ferror(f);
    fclose(mem);
    if (failed) {
        free(buf);
        errno = EIO;
        buf = NULL;
    }
    if (len) *len = buf ? n : 0;
    if (f != stdin) fclose(f);
    return buf;
err:
    if (f != stdin) fclose(f);
    return NULL;
}
