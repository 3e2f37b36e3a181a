/* reconcile/main.c - the otel-reconcile command line. Only argument
 * handling lives here; rendering and the reconcile pass are the library
 * (render.h, stream.h, run.h).
 *
 * Exit codes: render: 0 everything rendered, 1 some input could not be
 * rendered (the rest is still printed), 2 usage. run: 0 every collector
 * reconciled, 1 some failed (the others were reconciled), 2 usage or
 * configuration (credentials, nothing could be listed). */
#include "kube/file.h"

#include "kube/kubeconfig.h"
#include "reconcile/render.h"
#include "reconcile/run.h"
#include "reconcile/stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-reconcile render -f FILE|- [--namespace NS]\n"
    "       otel-reconcile run [--once] (--in-cluster [--service-account-dir DIR] |\n"
    "                          --kubeconfig FILE [--context NAME]) [--namespace NS] [--dry-run]\n"
    "\n"
    "render  prints the objects the OpenTelemetry Operator would create for each\n"
    "        OpenTelemetryCollector (v1beta1 or v1alpha1) in FILE, as one YAML\n"
    "        stream. -f - reads standard input. --namespace is used for\n"
    "        collectors that name none (default: \"default\").\n"
    "run     one reconcile pass over the cluster's collectors (v1beta1): applies\n"
    "        what differs (server-side apply), prunes what is no longer wanted,\n"
    "        writes each collector's status, prints one summary line. Every run\n"
    "        is one pass (--once is accepted; the CronJob is the loop).\n"
    "        --namespace limits it to one namespace; --dry-run writes nothing.\n";

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

static int cmd_run(int argc, char **argv) {
    const char *kubeconfig = NULL, *context = NULL, *ns = NULL, *sa_dir = NULL;
    int in_cluster = 0, dry_run = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--once") == 0)
            continue;
        else if (strcmp(a, "--in-cluster") == 0)
            in_cluster = 1;
        else if (strcmp(a, "--dry-run") == 0)
            dry_run = 1;
        else if (strcmp(a, "--kubeconfig") == 0 && i + 1 < argc)
            kubeconfig = argv[++i];
        else if (strcmp(a, "--context") == 0 && i + 1 < argc)
            context = argv[++i];
        else if (strcmp(a, "--service-account-dir") == 0 && i + 1 < argc)
            sa_dir = argv[++i];
        else if ((strcmp(a, "--namespace") == 0 || strcmp(a, "-n") == 0) && i + 1 < argc)
            ns = argv[++i];
        else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage, stdout);
            return 0;
        } else {
            fprintf(stderr, "otel-reconcile run: unexpected argument %s\n%s", a, usage);
            return 2;
        }
    }
    if (!!kubeconfig == in_cluster) {
        fprintf(stderr, "otel-reconcile run: exactly one of --in-cluster and --kubeconfig FILE\n%s", usage);
        return 2;
    }
    if (ns && !*ns) {
        fprintf(stderr, "otel-reconcile run: --namespace must not be empty\n");
        return 2;
    }
    char err[1024] = "";
    kube_api *api = in_cluster ? kube_api_new_incluster(sa_dir, err, sizeof err)
                               : kube_api_new_kubeconfig(kubeconfig, context, err, sizeof err);
    if (!api) {
        fprintf(stderr, "otel-reconcile run: %s\n", err);
        return 2;
    }
    reconcile_run_opts o = {.ns = ns, .dry_run = dry_run, .log = stderr};
    reconcile_run_stats st;
    int rc = reconcile_run(api, &o, &st);
    kube_api_free(api);
    printf("otel-reconcile run%s: %zu collectors, %zu applied, %zu pruned, %zu failed "
           "(%zu unchanged, %zu recreated, %zu unmanaged, %zu status writes, %zu requests)\n",
           dry_run ? " (dry run)" : "", st.collectors, st.applied, st.pruned, st.failed, st.unchanged, st.recreated, st.unmanaged,
           st.statuses, st.requests);
    if (fflush(stdout) != 0 && rc == 0) rc = 1;
    return rc;
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
    if (strcmp(argv[1], "run") == 0) return cmd_run(argc - 2, argv + 2);
    fprintf(stderr, "otel-reconcile: unknown command %s\n%s", argv[1], usage);
    return 2;
}
