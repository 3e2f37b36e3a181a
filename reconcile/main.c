/* reconcile/main.c - the otel-reconcile command line. Only argument
 * handling lives here; rendering and the reconcile pass are the library
 * (render.h, stream.h, run.h).
 *
 * Each subcommand has its own usage text (COMMAND --help: stdout, exit 0);
 * options are parsed by getopt_long and usage errors said by base/cli.h,
 * as otel-webhook's are: the word that is wrong and how, then where that
 * usage is, on stderr, exit 2. Every option's value must be non-empty.
 * `version` prints what `otel-webhook version` does, with this binary's
 * name.
 *
 * Exit codes: render: 0 everything rendered, 1 some input could not be
 * rendered (the rest is still printed), 2 usage. run: 0 every collector
 * reconciled, 1 some failed (the others were reconciled; a name collision
 * is a failure), 2 usage or configuration (credentials, nothing could be
 * listed), 3 cut short by one of its limits. */
#include "kube/file.h"

#include "base/cli.h"
#include "base/versions.h"
#include "kube/kubeconfig.h"
#include "reconcile/render.h"
#include "reconcile/run.h"
#include "reconcile/stream.h"

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-reconcile COMMAND [OPTIONS]\n"
    "\n"
    "The OpenTelemetry Operator's collector controller, as a command: turns\n"
    "OpenTelemetryCollector resources into the objects the operator would create.\n"
    "\n"
    "Commands:\n"
    "  render    print those objects for the collectors of a file, offline\n"
    "  run       one reconcile pass against the cluster (what the CronJob runs)\n"
    "  version   print the version\n"
    "\n"
    "Run 'otel-reconcile COMMAND --help' for a command's options.\n";

static const char render_usage[] =
    "usage: otel-reconcile render -f FILE|- [--namespace NS] [--target-allocator-image IMAGE]\n"
    "\n"
    "Prints, as one YAML stream, the objects the OpenTelemetry Operator would\n"
    "create for each OpenTelemetryCollector (v1beta1, or v1alpha1) in FILE, in\n"
    "its build order, followed by those of the TargetAllocator it generates;\n"
    "a TargetAllocator (v1alpha1) in FILE is rendered bound to the collector\n"
    "whose opentelemetry.io/target-allocator label names it. Other kinds are\n"
    "skipped with a warning.\n"
    "\n"
    "  -f, --filename FILE|-   the collectors: YAML or JSON, several documents,\n"
    "                          kind: List; - reads standard input\n"
    "  -n, --namespace NS      the namespace of collectors that name none\n"
    "                          (default: default)\n"
    "  --target-allocator-image IMAGE\n"
    "                          the allocators' image when spec.image is empty (the\n"
    "                          operator's target-allocator-image; default\n"
    "                          " DEFAULT_TARGET_ALLOCATOR_IMAGE ")\n"
    "  -h, --help              this text\n"
    "\n"
    "Exit status: 0 everything rendered; 1 some input could not be rendered\n"
    "(FILE:LINE: reason on stderr, the rest is still printed); 2 usage.\n";

static const char run_usage[] =
    "usage: otel-reconcile run [--once] (--in-cluster [--service-account-dir DIR] |\n"
    "                          --kubeconfig FILE [--context NAME]) [--namespace NS] [--dry-run]\n"
    "                          [--target-allocator-image IMAGE] [--max-deletions N] [--deadline SECONDS]\n"
    "                          [--max-list-pages N] [--max-list-bytes SIZE]\n"
    "\n"
    "One reconcile pass over the cluster's OpenTelemetryCollectors (v1beta1), then\n"
    "its TargetAllocators (v1alpha1): applies what differs (server-side apply),\n"
    "prunes what is no longer wanted, writes each one's status, prints one summary\n"
    "line. Every run is one pass; the CronJob is the loop.\n"
    "\n"
    "Only what is ours is written over or deleted: a controller ownerReference to\n"
    "the collector (or TargetAllocator) by uid, or on ClusterRoles and bindings our\n"
    "managed-by label and the otel-reconcile/collector and otel-reconcile/collector-uid\n"
    "annotations. An object of a wanted name that is not ours is left alone and the\n"
    "collector's Ready condition says \"name collision: ...\". Deletes are by the uid\n"
    "read (a replaced object is not deleted).\n"
    "\n"
    "  --in-cluster                 the pod's ServiceAccount and KUBERNETES_SERVICE_HOST/_PORT\n"
    "  --service-account-dir DIR    its token and ca.crt (default:\n"
    "                               /var/run/secrets/kubernetes.io/serviceaccount)\n"
    "  --kubeconfig FILE            a kubeconfig file instead\n"
    "  --context NAME               its context (default: current-context)\n"
    "  -n, --namespace NS           only the collectors of NS (default: all)\n"
    "  --dry-run                    read and compare, write nothing: each object that\n"
    "                               would change is printed with its changed fields\n"
    "  --target-allocator-image IMAGE  the allocators' image when spec.image is empty\n"
    "                               (the operator's target-allocator-image)\n"
    "  --max-deletions N            deletes one run may make (default 100)\n"
    "  --deadline SECONDS           the whole run's time (default 100)\n"
    "  --max-list-pages N           pages one LIST may have (default 1000)\n"
    "  --max-list-bytes SIZE        answer bytes of one LIST, all its pages\n"
    "                               (default 64Mi; Ki, Mi, Gi suffixes)\n"
    "  --once                       accepted; every run is one pass\n"
    "  -h, --help                   this text\n"
    "\n"
    "Exit status: 0 every collector reconciled; 1 some failed (the others were\n"
    "reconciled; a name collision counts); 2 usage or configuration (credentials,\n"
    "an API server that cannot be reached, a kind that cannot be listed: nothing is\n"
    "written then); 3 cut short: one of the four limits above was reached, the run\n"
    "stopped before its next request (the next run goes on from the cluster).\n";

/* What next_option answers besides an option's val. */
enum { OPT_END = -1, OPT_HELP = -2, OPT_USAGE = -3 };

/* getopt_long over argv (argv[0] the command's name; optind 1 and opterr 0
 * before the first call): OPT_END after the options, OPT_HELP after --help
 * (usage on stdout), OPT_USAGE after a usage error (said), else the
 * option's val, its value in optarg. */
static int next_option(const char *cmd, const char *use, const char *shortopts, const struct option *opts, int argc,
                       char **argv) {
    int c = cli_getopt(argc, argv, shortopts, opts);
    if (c == -1) return OPT_END;
    if (c == 'h') {
        fputs(use, stdout);
        return OPT_HELP;
    }
    if (c == ':' || c == '?') return cli_bad_option(cmd, use, c, argv, opts), OPT_USAGE;
    if (optarg && !*optarg) return cli_usage_error(cmd, use, "--%s must not be empty", cli_long_name(c, opts)), OPT_USAGE;
    return c;
}

static int cmd_render(int argc, char **argv) {
    const char *file = NULL, *ns = "default", *ta_image = NULL;
    enum { O_TA_IMAGE = 256 };
    static const struct option opts[] = {
        {"filename", required_argument, 0, 'f'},
        {"namespace", required_argument, 0, 'n'},
        {"target-allocator-image", required_argument, 0, O_TA_IMAGE},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    reconcile_options opt;
    reconcile_stream_stats st;
    size_t len;
    char *text;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = next_option("render", render_usage, ":f:n:h", opts, argc, argv)) != OPT_END) {
        switch (c) {
        case OPT_HELP: return 0;
        case OPT_USAGE: return 2;
        case 'f': file = optarg; break;
        case 'n': ns = optarg; break;
        case O_TA_IMAGE: ta_image = optarg; break;
        }
    }
    if (optind < argc) return cli_usage_error("render", render_usage, "unexpected argument \"%s\"", argv[optind]);
    if (!file) return cli_usage_error("render", render_usage, "-f is required");
    if (!(text = kube_read_file(file, &len))) {
        fprintf(stderr, "%s: cannot read: %s\n", file, strerror(errno));
        return 1;
    }
    reconcile_options_default(&opt);
    if (ta_image) opt.target_allocator_image = ta_image;
    reconcile_render_stream(strcmp(file, "-") == 0 ? "<stdin>" : file, text, len, ns, &opt, stdout, stderr, &st);
    free(text);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "otel-reconcile render: writing output: %s\n", strerror(errno));
        return 1;
    }
    return st.failed ? 1 : 0;
}

/* A positive count, or a size with a Ki/Mi/Gi suffix (size), or seconds
 * with an optional "s" (seconds). 0 with *out, or -1. */
static int parse_count(const char *v, int kind, long long *out) {
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || n < 1) return -1;
    long long mult = 1;
    if (kind == 's' && strcmp(end, "s") == 0) end++;
    if (kind == 'b') {
        if (strcmp(end, "Ki") == 0) mult = 1LL << 10, end += 2;
        else if (strcmp(end, "Mi") == 0) mult = 1LL << 20, end += 2;
        else if (strcmp(end, "Gi") == 0) mult = 1LL << 30, end += 2;
    }
    if (*end || n > (1LL << 40) / mult) return -1;
    *out = n * mult;
    return 0;
}

static int cmd_run(int argc, char **argv) {
    const char *kubeconfig = NULL, *context = NULL, *ns = NULL, *sa_dir = NULL, *ta_image = NULL;
    const char *max_del = NULL, *deadline = NULL, *max_pages = NULL, *max_bytes = NULL;
    bool in_cluster = false, dry_run = false;
    enum { O_ONCE = 256, O_IN_CLUSTER, O_DRY_RUN, O_KUBECONFIG, O_CONTEXT, O_SA_DIR, O_TA_IMAGE, O_MAX_DELETIONS,
           O_DEADLINE, O_MAX_LIST_PAGES, O_MAX_LIST_BYTES };
    static const struct option opts[] = {
        {"once", no_argument, 0, O_ONCE},
        {"in-cluster", no_argument, 0, O_IN_CLUSTER},
        {"dry-run", no_argument, 0, O_DRY_RUN},
        {"kubeconfig", required_argument, 0, O_KUBECONFIG},
        {"context", required_argument, 0, O_CONTEXT},
        {"service-account-dir", required_argument, 0, O_SA_DIR},
        {"namespace", required_argument, 0, 'n'},
        {"target-allocator-image", required_argument, 0, O_TA_IMAGE},
        {"max-deletions", required_argument, 0, O_MAX_DELETIONS},
        {"deadline", required_argument, 0, O_DEADLINE},
        {"max-list-pages", required_argument, 0, O_MAX_LIST_PAGES},
        {"max-list-bytes", required_argument, 0, O_MAX_LIST_BYTES},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = next_option("run", run_usage, ":n:h", opts, argc, argv)) != OPT_END) {
        switch (c) {
        case OPT_HELP: return 0;
        case OPT_USAGE: return 2;
        case O_ONCE: break; /* every run is one pass */
        case O_IN_CLUSTER: in_cluster = true; break;
        case O_DRY_RUN: dry_run = true; break;
        case O_KUBECONFIG: kubeconfig = optarg; break;
        case O_CONTEXT: context = optarg; break;
        case O_SA_DIR: sa_dir = optarg; break;
        case 'n': ns = optarg; break;
        case O_TA_IMAGE: ta_image = optarg; break;
        case O_MAX_DELETIONS: max_del = optarg; break;
        case O_DEADLINE: deadline = optarg; break;
        case O_MAX_LIST_PAGES: max_pages = optarg; break;
        case O_MAX_LIST_BYTES: max_bytes = optarg; break;
        }
    }
    if (optind < argc) return cli_usage_error("run", run_usage, "unexpected argument \"%s\"", argv[optind]);
    reconcile_run_opts o = {.ns = ns, .dry_run = dry_run, .log = stderr, .target_allocator_image = ta_image};
    const struct {
        const char *flag, *value, *what;
        int kind;
    } limits[] = {{"--max-deletions", max_del, "a positive number", 'n'},
                  {"--deadline", deadline, "a positive number of seconds", 's'},
                  {"--max-list-pages", max_pages, "a positive number", 'n'},
                  {"--max-list-bytes", max_bytes, "a positive size (bytes, or with Ki, Mi, Gi)", 'b'}};
    long long lim[4] = {0};
    for (int i = 0; i < 4; i++)
        if (limits[i].value && parse_count(limits[i].value, limits[i].kind, &lim[i]) != 0)
            return cli_usage_error("run", run_usage, "%s %s: must be %s", limits[i].flag, limits[i].value,
                                   limits[i].what);
    o.max_deletions = (long)lim[0];
    o.deadline_ms = (long)(lim[1] * 1000);
    o.max_list_pages = (long)lim[2];
    o.max_list_bytes = (size_t)lim[3];
    if (!kubeconfig && !in_cluster) return cli_usage_error("run", run_usage, "--kubeconfig or --in-cluster is required");
    if (kubeconfig && in_cluster)
        return cli_usage_error("run", run_usage, "--kubeconfig and --in-cluster exclude each other");
    if (context && !kubeconfig) return cli_usage_error("run", run_usage, "--context needs --kubeconfig");
    if (sa_dir && !in_cluster) return cli_usage_error("run", run_usage, "--service-account-dir needs --in-cluster");
    char err[1024] = "";
    kube_api *api = in_cluster ? kube_api_new_incluster(sa_dir, err, sizeof err)
                               : kube_api_new_kubeconfig(kubeconfig, context, err, sizeof err);
    if (!api) {
        fprintf(stderr, "otel-reconcile run: %s\n", err);
        return 2;
    }
    reconcile_run_stats st;
    int rc = reconcile_run(api, &o, &st);
    kube_api_free(api);
    printf("otel-reconcile run%s: %zu collectors, %zu target allocators, %zu applied, %zu pruned, %zu failed "
           "(%zu unchanged, %zu recreated, %zu unmanaged, %zu status writes, %zu requests)\n",
           dry_run ? " (dry run)" : "", st.collectors, st.allocators, st.applied, st.pruned, st.failed, st.unchanged, st.recreated, st.unmanaged,
           st.statuses, st.requests);
    if (fflush(stdout) != 0 && rc == 0) rc = 1;
    return rc;
}

int main(int argc, char **argv) {
    cli_set_program("otel-reconcile");
    if (argc < 2) return cli_usage_error(NULL, usage, "expected a command");
    const char *c = argv[1];
    if (strcmp(c, "-h") == 0 || strcmp(c, "--help") == 0 || strcmp(c, "help") == 0) {
        fputs(usage, stdout);
        return 0;
    }
    /* argv[1], the command's name, plays argv[0] for getopt_long. */
    if (strcmp(c, "render") == 0) return cmd_render(argc - 1, argv + 1);
    if (strcmp(c, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(c, "version") == 0 || strcmp(c, "--version") == 0) {
        if (argc > 2) return cli_usage_error("version", usage, "unexpected argument \"%s\"", argv[2]);
        printf("otel-reconcile %s\n", OTEL_WEBHOOK_VERSION);
        return 0;
    }
    return cli_usage_error(NULL, usage, "unknown command \"%s\"", c);
}
