/* base/cli.h - the command line both binaries share: how a usage error is
 * said, and what getopt_long's refusals become. otel-webhook's subcommands
 * (server/cmd_*.c, certs/cli_certs.c) and otel-reconcile's (reconcile/
 * main.c) all parse with getopt_long (opterr 0, an optstring starting with
 * ':') and hand what it refused to cli_bad_option, so every usage error of
 * either binary names the word that is wrong and says how, in one wording.
 *
 * Contract: a usage error is "PROGRAM CMD: PROBLEM" and "Run 'PROGRAM CMD
 * --help' for usage." (the command words of the usage text's first line),
 * on stderr, and exit status 2; the usage itself is --help's (stdout, 0).
 * PROGRAM is what the binary's main gave cli_set_program (once, before any
 * command runs). Options are read by cli_getopt, which takes "-f=FILE" as
 * kubectl does. */
#ifndef BASE_CLI_H
#define BASE_CLI_H

#include <getopt.h>

/* The binary's name in every usage error: "otel-webhook", "otel-reconcile". */
void cli_set_program(const char *name);

/* "PROGRAM CMD: PROBLEM" (cmd NULL: "PROGRAM: PROBLEM", for the command
 * word itself), then "Run 'WORDS --help' for usage.", WORDS the command
 * words that start usage ("usage: otel-webhook inject -f ..."), on stderr.
 * Returns 2. */
int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same for what getopt_long answered c (':' or '?') for: "--x needs a
 * value", "-x needs a value", "unknown option --x", "unknown option -x",
 * "ambiguous option --x" (a prefix of two long options), "--x takes no
 * value". opts are the long options getopt_long was given. Returns 2. */
int cli_bad_option(const char *cmd, const char *usage, int c, char **argv, const struct option *opts);
/* getopt_long (no longindex), except that a value joined to its short
 * option by '=' ("-f=FILE", "-n=NS") is read without the '=', as kubectl's
 * flag parser reads it. */
int cli_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts);
/* The name (without "--") of the long option of opts whose val is c, for a
 * message about its value whichever spelling was used; NULL when none. */
const char *cli_long_name(int c, const struct option *opts);

#endif
