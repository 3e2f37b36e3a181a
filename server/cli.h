/* server/cli.h - the subcommands of the otel-webhook binary, and what they
 * share. Each command returns the process exit status: 0 done, 1 failure
 * or bad input, 2 usage. */
#ifndef SERVER_CLI_H
#define SERVER_CLI_H

#include "mutate/settings.h"

#include <stddef.h>

int cmd_inject(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Reads the settings file at path over s. 0, or -1 with "PATH[:LINE]:
 * reason" in err. */
int cli_load_settings(mutate_settings *s, const char *path, char *err, size_t errlen);

#endif
