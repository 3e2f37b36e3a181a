/* server/cli.c - what the subcommands share; see cli.h. */
#include "server/cli.h"

#include "kube/file.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
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

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "otel-webhook %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n\n%s", usage);
    return 2;
}

int cli_bad_option(const char *cmd, const char *usage, int c, char **argv, const struct option *opts) {
    /* getopt has moved past the word it stopped at, unless that word is a
     * cluster of short options; optopt names a short option (for a long
     * one, its internal value), so long options are quoted from argv. */
    const char *word = argv[optind - 1];
    bool is_long = !strncmp(word, "--", 2);
    size_t n = strcspn(word, "=");
    if (c == ':') {
        if (is_long) return cli_usage_error(cmd, usage, "%s needs a value", word);
        return cli_usage_error(cmd, usage, "-%c needs a value", optopt);
    }
    if (!is_long) return cli_usage_error(cmd, usage, "unknown option -%c", optopt);
    /* A long option is refused when unknown, ambiguous (a prefix of two),
     * or given a value it does not take (optopt then set). */
    if (optopt) return cli_usage_error(cmd, usage, "%.*s takes no value", (int)n, word);
    int matches = 0;
    for (const struct option *o = opts; o->name; o++) matches += !strncmp(o->name, word + 2, n - 2);
    return cli_usage_error(cmd, usage, "%s option %.*s", matches > 1 ? "ambiguous" : "unknown", (int)n, word);
}
