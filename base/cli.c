/* base/cli.c - see cli.h. */
#include "base/cli.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Set once by main before any command runs; read only after. */
static const char *program = "";

void cli_set_program(const char *name) {
    program = name;
}

/* The command words of usage's first line ("usage: otel-webhook certs
 * generate --service ..." gives "otel-webhook certs generate"), *len
 * bytes from the result: what the user types before --help to read that
 * same text. They end at the first word that is not a lowercase command
 * name (an option, COMMAND, [...]). */
static const char *help_words(const char *usage, int *len) {
    const char *start = !strncmp(usage, "usage: ", 7) ? usage + 7 : usage, *p = start, *end = start;
    while (*p >= 'a' && *p <= 'z') {
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-') p++;
        if (*p != ' ' && *p != '\n' && *p != '\0') break;
        end = p;
        if (*p != ' ') break;
        p++;
    }
    *len = (int)(end - start);
    return start;
}

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...) {
    va_list ap;
    if (cmd) fprintf(stderr, "%s %s: ", program, cmd);
    else fprintf(stderr, "%s: ", program);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    /* Not the whole usage, as kubectl and git do: the reason would scroll
     * away above it. */
    int n;
    const char *words = help_words(usage, &n);
    if (n) fprintf(stderr, "\nRun '%.*s --help' for usage.\n", n, words);
    else fprintf(stderr, "\nRun '%s --help' for usage.\n", program);
    return 2;
}

int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts) {
    int c = getopt_long(argc, argv, shortopts, longopts, NULL);
    /* "-f=FILE": getopt gives "=FILE", a name nobody means; kubectl (pflag)
     * reads FILE, and so do we. Only a value joined to its short option
     * ("-f=x", not "-f" "=x", nor --filename==x) is one. */
    if (c != -1 && optarg && *optarg == '=' && optind > 0) {
        const char *word = argv[optind - 1];
        if (word[0] == '-' && word[1] != '-' && optarg > word && optarg < word + strlen(word) && optarg[-1] == c)
            optarg++;
    }
    return c;
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

const char *cli_long_name(int c, const struct option *opts) {
    for (const struct option *o = opts; o->name; o++)
        if (!o->flag && o->val == c) return o->name;
    return NULL;
}
