/* server/cli.c - what the subcommands share; see cli.h. */
#include "server/cli.h"

#include "base/alloc.h"
#include "kube/file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

/* The length of the location msg starts with ("FILE:LINE: ", or "FILE: "
 * for a FILE that names a manifest or is there), 0 when none. */
static size_t location_len(const char *msg) {
    for (const char *p = strchr(msg, ':'); p; p = strchr(p + 1, ':')) {
        const char *d = p + 1;
        while (*d >= '0' && *d <= '9') d++;
        if (d > p + 1 && d[0] == ':' && d[1] == ' ') return (size_t)(d + 2 - msg);
    }
    const char *colon = strstr(msg, ": ");
    if (!colon) return 0;
    size_t n = (size_t)(colon - msg);
    static const char *const exts[] = {".yaml", ".yml", ".json"};
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        size_t el = strlen(exts[i]);
        if (n > el && !strncmp(colon - el, exts[i], el)) return n + 2;
    }
    char *path = xstrndup(msg, n);
    struct stat st;
    bool there = stat(path, &st) == 0;
    free(path);
    return there ? n + 2 : 0;
}

void cli_log_stderr(void *ud, kube_log_level level, const char *msg) {
    (void)ud;
    if (level < KUBE_LOG_WARN) return;
    size_t at = location_len(msg);
    if (level == KUBE_LOG_ERROR) fprintf(stderr, "%s%s\n", at ? "" : "error: ", msg);
    else fprintf(stderr, "%.*swarning: %s\n", (int)at, msg, msg + at);
}

void cli_input_init(cli_input *in, int argc) {
    *in = (cli_input){.files = xcalloc((size_t)argc + 1, sizeof *in->files),
                      .dirs = xcalloc((size_t)argc + 1, sizeof *in->dirs)};
}

void cli_input_free(cli_input *in) {
    free(in->files);
    free(in->dirs);
}

int cli_input_option(cli_input *in, const char *cmd, const char *usage, int c, const char *arg) {
    switch (c) {
    case 'f':
        if (!strcmp(arg, "-") && in->stdin_taken)
            return cli_usage_error(cmd, usage, "-f -: standard input can be read only once");
        in->stdin_taken |= !strcmp(arg, "-");
        in->files[in->nfiles++] = arg;
        return 1;
    case 'R': in->recursive = true; return 1;
    case CLI_OPT_RESOURCES: in->dirs[in->ndirs++] = arg; return 1;
    default: return 0;
    }
}

int cli_input_check(const cli_input *in, const char *cmd, const char *usage, int argc, char **argv) {
    if (optind < argc) return cli_usage_error(cmd, usage, "unexpected argument \"%s\"", argv[optind]);
    if (!in->nfiles) return cli_usage_error(cmd, usage, "-f is required");
    /* An -f that is not there is bad input (exit 1, "FILE: cannot read:
     * ..." when it is read), as kubectl apply and otel-reconcile render
     * take it, not a usage error. */
    struct stat st;
    for (size_t i = 0; i < in->ndirs; i++) {
        int e = stat(in->dirs[i], &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
        if (e == ENOENT || e == ENOTDIR) return cli_usage_error(cmd, usage, "--resources %s: %s", in->dirs[i], strerror(e));
    }
    return 0;
}
