/* server/cli.h - the subcommands of the otel-webhook binary. Each returns
 * the process exit status: 0 done, 1 failure or bad input, 2 usage. */
#ifndef SERVER_CLI_H
#define SERVER_CLI_H

int cmd_inject(int argc, char **argv);
int cmd_serve(int argc, char **argv);

#endif
