/* server/cli.c - what the subcommands share; see cli.h. */
#include "server/cli.h"

#include "kube/file.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_load_settings(mutate_settings *s, const char *path, char *err, size_t errlen) {
    size_t len = 0;
    char *text = kube_read_file(path, &len);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return -1;
    }
    int rc = mutate_settings_parse(s, path, text, len, err, errlen);
    free(text);
    return rc;
}
