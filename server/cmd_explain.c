/* server/cmd_explain.c - `otel-webhook explain`: for each Pod or pod
 * template, what would be injected and why, or why not (mutate/explain.h).
 *
 * Resources come from --resources folders and the input itself, as for
 * inject, or from a cluster (--kubeconfig, listed once: cli_cluster.h).
 * Input is read as inject reads it (inject.h); nothing is written back. */
#include "server/cli.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/filesource.h"
#include "kube/kubeconfig.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "mutate/defaults.h"
#include "mutate/explain.h"
#include "server/cli_cluster.h"
#include "server/inject.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-webhook explain -f FILE|DIR|- [-f ...] [-R] [--resources DIR]... [--kubeconfig FILE\n"
    "                            [--context NAME]] [--namespace NS] [--config FILE]\n"
    "                            [--native-sidecars on|off]\n"
    "\n"
    "For each Pod or pod template in the input: the annotations that decide (the pod's or the\n"
    "namespace's, and which one won), the collector and Instrumentations that would be used,\n"
    "every container with what it would get or why not, the engine's warnings (a missing or\n"
    "ambiguous Instrumentation, skipped containers, misspelt annotation keys), and whether an\n"
    "already injected object's otel-webhook/status record is current or stale.\n"
    "\n"
    "  -f, --filename PATH     input manifest, repeatable (a file, a folder, - for standard input)\n"
    "  -R, --recursive         also read the subfolders of -f folders\n"
    "  --resources DIR         folder of Instrumentation, OpenTelemetryCollector and Namespace\n"
    "                          manifests; repeatable\n"
    "  --kubeconfig FILE       read them from this cluster instead (listed once)\n"
    "  --context NAME          the kubeconfig context (default: current-context)\n"
    "  -n, --namespace NS      namespace of objects that name none (default: default)\n"
    "  --config FILE           settings file, as for inject and serve\n"
    "  --native-sidecars MODE  on or off (default: the config's, off when that is auto)\n"
    "\n"
    "Exit status: 0 done, 1 bad input or the cluster could not be read, 2 usage.\n";

typedef struct eopts {
    cli_input in;
    const char *ns, *config, *native, *kubeconfig, *context;
} eopts;

static int parse_args(int argc, char **argv, eopts *o) {
    enum { O_NATIVE = 256, O_CONFIG, O_KUBECONFIG, O_CONTEXT };
    static const struct option longopts[] = {
        {"filename", required_argument, 0, 'f'},      {"recursive", no_argument, 0, 'R'},
        {"resources", required_argument, 0, CLI_OPT_RESOURCES},   {"namespace", required_argument, 0, 'n'},
        {"native-sidecars", required_argument, 0, O_NATIVE}, {"config", required_argument, 0, O_CONFIG},
        {"kubeconfig", required_argument, 0, O_KUBECONFIG}, {"context", required_argument, 0, O_CONTEXT},
        {"help", no_argument, 0, 'h'},                {0, 0, 0, 0},
    };
    *o = (eopts){.ns = "default"};
    cli_input_init(&o->in, argc);
    int c, r;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":f:Rn:h", longopts)) != -1) {
        if ((r = cli_input_option(&o->in, "explain", usage, c, optarg))) {
            if (r == 2) return 2;
            continue;
        }
        switch (c) {
        case 'n': o->ns = optarg; break;
        case O_NATIVE:
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
                return cli_usage_error("explain", usage, "--native-sidecars %s: expected on or off", optarg);
            o->native = optarg;
            break;
        case O_CONFIG: o->config = optarg; break;
        case O_KUBECONFIG: o->kubeconfig = optarg; break;
        case O_CONTEXT: o->context = optarg; break;
        case 'h': fputs(usage, stdout); return -1;
        default: return cli_bad_option("explain", usage, c, argv, longopts);
        }
    }
    if (o->kubeconfig && o->in.ndirs) return cli_usage_error("explain", usage, "--resources and --kubeconfig exclude each other");
    if (o->context && !o->kubeconfig) return cli_usage_error("explain", usage, "--context needs --kubeconfig");
    if (cli_input_check(&o->in, "explain", usage, argc, argv)) return 2;
    return 0;
}

typedef struct ewalk {
    const inject_input *in;
    const eopts *o;
    const kube_reader *src;
    const kube_snapshot *snap;
    const mutate_options *mopt;
    size_t n;
} ewalk;

static void visit(ewalk *w, const inject_doc *d, size_t item, json_object *o) {
    const char *kind = jstr(o, "kind");
    bool is_pod = kind && !strcmp(kind, "Pod");
    json_object *tmpl = is_pod || !kind ? NULL : inject_template_of(o, kind);
    if (!is_pod && !json_object_is_type(tmpl, json_type_object)) return;
    const char *ns = kube_obj_str(o, "metadata.namespace"), *name = kube_obj_str(o, "metadata.name");
    if (!name) name = kube_obj_str(o, "metadata.generateName");
    if (!ns || !*ns) ns = w->o->ns;
    int line = item == INJECT_NO_ITEM ? d->line : inject_item_line(d, item);
    printf("%s%s %s/%s (%s:%d)\n", w->n++ ? "\n" : "", kind, ns, name ? name : "", w->in->files[d->file].name, line);
    json_object *pod = is_pod ? json_object_get(o) : inject_stand_in(o, kind, tmpl);
    mutate_request req = {.pod = pod, .namespace = ns, .src = w->src, .opt = w->mopt};
    req.ns = kube_snapshot_get(w->snap, "Namespace", NULL, ns);
    char *text = mutate_explain(&req);
    fputs(text, stdout);
    free(text);
    json_object_put(pod);
}

int cmd_explain(int argc, char **argv) {
    eopts o;
    int prc = parse_args(argc, argv, &o);
    if (prc) {
        cli_input_free(&o.in);
        return prc < 0 ? 0 : prc;
    }
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    kube_prepare prep = MUTATE_PREPARE(&cfg);
    kube_store *store = kube_store_new();
    kube_filesource *fs = NULL;
    kube_api *api = NULL;
    kube_api_conn *conn = NULL;
    inject_input in = {0};
    kube_logger log = {cli_log_stderr, NULL};
    kube_view view = {0, -1};
    int rc = 1;
    char err[512];

    if (o.config && cli_load_settings(&cfg, o.config, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    cfg.opt.native_sidecars = o.native ? !strcmp(o.native, "on") : cfg.native_sidecars == MUTATE_ON;
    if (o.in.ndirs) {
        int failing = 0;
        fs = kube_filesource_new(store, &prep, o.in.dirs, o.in.ndirs, o.ns, &log);
        kube_filesource_poll(fs, &failing);
        if (failing) goto out;
    }
    if (o.kubeconfig) {
        api = kube_api_new_kubeconfig(o.kubeconfig, o.context, err, sizeof err);
        if (!api) {
            fprintf(stderr, "otel-webhook explain: %s\n", err);
            goto out;
        }
        conn = kube_api_conn_new(api, NULL);
        if (cli_cluster_load(conn, store, &prep, err, sizeof err) != 0) {
            fprintf(stderr, "otel-webhook explain: %s\n", err);
            goto out;
        }
    }
    if (inject_input_read(&in, o.in.files, o.in.nfiles, o.in.recursive) != 0) goto out;
    inject_input_resources(&in, store, &prep, o.ns, &log);
    view = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, view.snap);
    ewalk w = {.in = &in, .o = &o, .src = &src, .snap = view.snap, .mopt = &cfg.opt};
    for (size_t di = 0; di < in.ndocs; di++) {
        const inject_doc *d = &in.docs[di];
        const char *kind = jstr(d->obj, "kind");
        if (!kind || strcmp(kind, "List")) {
            visit(&w, d, INJECT_NO_ITEM, d->obj);
            continue;
        }
        json_object *items = jarr(d->obj, "items");
        for (size_t i = 0; i < jlen(items); i++) visit(&w, d, i, json_object_array_get_idx(items, i));
    }
    if (!w.n) printf("no Pod or pod template in the input\n");
    rc = fflush(stdout) != 0 || ferror(stdout) ? 1 : 0;
out:
    if (view.slot >= 0) kube_store_release(store, &view);
    inject_input_free(&in);
    kube_api_conn_free(conn);
    kube_api_free(api);
    kube_filesource_free(fs);
    kube_store_free(store);
    mutate_settings_free(&cfg);
    cli_input_free(&o.in);
    return rc;
}
