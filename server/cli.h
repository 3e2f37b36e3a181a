/* server/cli.h - the subcommands of the otel-webhook binary, and what they
 * share. Each command returns the process exit status: 0 done, 1 failure
 * or bad input, 2 usage (and inject's 3, --fail-on-skip); usage errors are
 * said through base/cli.h, as otel-reconcile's are. */
#ifndef SERVER_CLI_H
#define SERVER_CLI_H

#include "base/cli.h"
#include "kube/log.h"
#include "mutate/settings.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

int cmd_inject(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_uninject(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_outdated(int argc, char **argv);

/* Reads the settings file at path over s. 0, or -1 with "PATH[:LINE]:
 * reason" in err. */
int cli_load_settings(mutate_settings *s, const char *path, char *err, size_t errlen);

/* The kube_logger of the offline commands: warnings and errors on stderr
 * in the one format of every message with a place, FILE:LINE: warning:
 * MESSAGE (or FILE: warning: ...) as compilers write them, and errors
 * FILE:LINE: MESSAGE as every other bad input; "warning: " or "error: "
 * first when the message names no file (a GET of explain --kubeconfig). */
void cli_log_stderr(void *ud, kube_log_level level, const char *msg);

/* The input of the commands that read manifests (inject, uninject, explain,
 * validate): -f FILE|DIR|- (repeatable, standard input once), -R, and
 * --resources DIR (repeatable; a command that takes it lists
 * CLI_OPT_RESOURCES in its long options). The paths point into argv. */
enum { CLI_OPT_RESOURCES = 1000 };
typedef struct cli_input {
    const char **files, **dirs;
    size_t nfiles, ndirs;
    bool recursive, stdin_taken;
} cli_input;

void cli_input_init(cli_input *in, int argc);
void cli_input_free(cli_input *in);
/* Takes what getopt_long answered when it is one of the options above: 1,
 * 0 when it is not, 2 after a usage error. */
int cli_input_option(cli_input *in, const char *cmd, const char *usage, int c, const char *arg);
/* After the options: no operands, -f given, and every --resources folder
 * there. An -f path that is missing or unreadable is bad input (exit 1,
 * "FILE: cannot read: REASON" when inject_input_read gets to it), as for
 * kubectl apply and otel-reconcile render. 0, or 2 after a usage error. */
int cli_input_check(const cli_input *in, const char *cmd, const char *usage, int argc, char **argv);

#endif
