/* server/main.c - otel-webhook: dispatch to the subcommands. */
#include "server/cli.h"

#include "base/versions.h"
#include "certs/gen.h"

#include <stdio.h>
#include <string.h>


static const char usage[] =
    "usage: otel-webhook COMMAND [OPTIONS]\n"
    "\n"
    "OpenTelemetry pod injection for Kubernetes, compatible with the OpenTelemetry\n"
    "Operator's Instrumentation and OpenTelemetryCollector resources.\n"
    "\n"
    "Commands:\n"
    "  serve     run the HTTPS admission webhook\n"
    "  inject    mutate pod templates in YAML/JSON manifests offline\n"
    "  uninject  remove what inject or the webhook added, by its otel-webhook/status record\n"
    "  explain   say what would be injected into each pod and container, and why\n"
    "  outdated  list (and --restart) running pods injected from older resources\n"
    "  validate  check collectors and Instrumentations as the webhook would, offline\n"
    "  certs     generate a CA and serving certificate (certs generate --help)\n"
    "  version   print the version\n"
    "\n"
    "Run 'otel-webhook COMMAND --help' for a command's options.\n";

int main(int argc, char **argv) {
    cli_set_program("otel-webhook");
    if (argc < 2) return cli_usage_error(NULL, usage, "expected a command");
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(argv[1], "serve")) return cmd_serve(argc - 1, argv + 1);
    if (!strcmp(argv[1], "inject")) return cmd_inject(argc - 1, argv + 1);
    if (!strcmp(argv[1], "validate")) return cmd_validate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "uninject")) return cmd_uninject(argc - 1, argv + 1);
    if (!strcmp(argv[1], "explain")) return cmd_explain(argc - 1, argv + 1);
    if (!strcmp(argv[1], "outdated")) return cmd_outdated(argc - 1, argv + 1);
    if (!strcmp(argv[1], "certs")) return tls_cmd_certs(argc - 1, argv + 1);
    if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
        printf("otel-webhook %s\n", OTEL_WEBHOOK_VERSION);
        return 0;
    }
    return cli_usage_error(NULL, usage, "unknown command \"%s\"", argv[1]);
}
