/* reconcile/main.c - the otel-reconcile command line. Only argument
 * handling lives here; rendering is the library (render.h, stream.h) so
 * that `run`, when the API client lands, reuses it unchanged.
 *
 * Exit codes: 0 everything rendered, 1 some input could not be rendered
 * (the rest is still printed), 2 usage. */
#include "kube/file.h"
#include "reconcile/render.h"
#include "reconcile/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-reconcile render -f FILE|- [--namespace NS]\n"
    "       otel-reconcile run            (not available yet)\n"
    "\n"
    "render  prints the objects the OpenTelemetry Operator would create for each\n"
    "        OpenTelemetryCollector (v1beta1 or v1alpha1) in FILE, as one YAML\n"
    "        stream. -f - reads standard input. --namespace is used for\n"
    "        collectors that name none (default: \"default\").\n";

static int cmd_render(int argc, char **argv) {
    const char *file = NULL, *ns = "default";
    reconcile_options opt;
    reconcile_stream_stats st;
    size_t len;
    char *text;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if ((strcmp(a, "-f") == 0 || strcmp(a, "--filename") == 0) && i + 1 < argc)
            file = argv[++i];
        else if (strncmp(a, "--filename=", 11) == 0)
            file = a + 11;
        else if ((strcmp(a, "--namespace") == 0 || strcmp(a, "-n") == 0) && i + 1 < argc)
            ns = argv[++i];
        else if (strncmp(a, "--namespace=", 12) == 0)
            ns = a + 12;
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "otel-reconcile render: unexpected argument %s\n%s", a, usage);
            return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "otel-reconcile render: -f FILE is required\n%s", usage);
        return 2;
    }
    if (!*ns) {
        fprintf(stderr, "otel-reconcile render: --namespace must not be empty\n");
        return 2;
    }
    if (!(text = kube_read_file(file, &len))) {
        fprintf(stderr, "%s: %s\n", file, strerror(errno));
        return 1;
    }
    reconcile_options_default(&opt);
    reconcile_render_stream(strcmp(file, "-") == 0 ? "<stdin>" : file, text, len, ns, &opt, stdout, stderr, &st);
    free(text);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "otel-reconcile render: writing output: %s\n", strerror(errno));
        return 1;
    }
    return st.failed ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fputs(usage, stderr);
        return 2;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    if (strcmp(argv[1], "render") == 0) return cmd_render(argc - 2, argv + 2);
    if (strcmp(argv[1], "run") == 0) {
        fputs("otel-reconcile run: not available yet (needs the API client)\n", stderr);
        return 2;
    }
    fprintf(stderr, "otel-reconcile: unknown command %s\n%s", argv[1], usage);
    return 2;
}
