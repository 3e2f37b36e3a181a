/* server/cmd_inject.c - `otel-webhook inject`: the engine offline over YAML.
 *
 * Every pod template in the input (a Pod, or the template of a Deployment,
 * StatefulSet, DaemonSet, ReplicaSet, Job or CronJob, at the top or among
 * the items of a kind: List) is mutated exactly as the webhook would mutate
 * the pod created from it. Since no controller has created the pod yet,
 * the workload itself stands in as the pod's owner, so service names and
 * k8s.<kind>.name attributes come out as they will in the cluster (the
 * ReplicaSet's generated name cannot be known in advance).
 *
 * Instrumentation, OpenTelemetryCollector and Namespace objects in any
 * input file are used as resources too, so one file can carry a whole
 * example. This file owns the command line and the walk over the objects;
 * reading, reporting and writing are inject_*.c (inject.h).
 *
 * A template the engine refuses as malformed (a field of a type the API
 * server would refuse, mutate.h invalid_path) is reported on one line with
 * the field's own line, known from the YAML parse, exit 1, and written
 * through unchanged in its place: never dropped, since `inject -f - |
 * kubectl apply --prune -f -` without pipefail would take a missing
 * document for one to delete. Unchanged, the API server refuses it on
 * apply as it would have without inject. */
#include "server/cli.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/filesource.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "mutate/defaults.h"
#include "mutate/mutate.h"
#include "mutate/record.h"
#include "server/inject.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-webhook inject -f FILE|DIR|- [-f ...] [-R] [--resources DIR]... [--namespace NS]\n"
    "                           [--native-sidecars on|off] [--config FILE] [-o yaml|json|patch]\n"
    "                           [--report] [--fail-on-skip]\n"
    "\n"
    "Mutates every pod template in the input (a Pod, Deployment, StatefulSet, DaemonSet,\n"
    "ReplicaSet, Job or CronJob, also among the items of a List; multi-document YAML or JSON)\n"
    "as the webhook would.\n"
    "\n"
    "  -f, --filename PATH     input manifest, repeatable and read in order: a file, a folder\n"
    "                          (its *.yaml, *.yml and *.json files in name order), - for\n"
    "                          standard input (once)\n"
    "  -R, --recursive         also read the subfolders of -f folders\n"
    "  --resources DIR         folder of Instrumentation, OpenTelemetryCollector, Namespace\n"
    "                          (and other) manifests; repeatable\n"
    "  -n, --namespace NS      namespace of objects that name none (default: default)\n"
    "  --native-sidecars MODE  on: collector as an init container with restartPolicy Always;\n"
    "                          off: as a regular container (default: the config's setting,\n"
    "                          and off when that is auto, since there is no cluster to ask)\n"
    "  --config FILE           settings file (default images, enabled languages, ...)\n"
    "  -o, --output FORMAT     yaml (default): the input, documents nothing was injected into\n"
    "                          byte for byte; json: the same as JSON (a List for several\n"
    "                          documents); patch: the RFC 6902 patch, for a single Pod\n"
    "  --report                on standard error, one line per Pod or workload\n"
    "                          (KIND NS/NAME: injected|changed|skipped|unchanged|invalid: ...)\n"
    "                          and a summary line\n"
    "  --fail-on-skip          exit 3 when a part asked for was left out of an object\n"
    "\n"
    "Every object injected gets an otel-webhook/status annotation (see uninject, explain); one\n"
    "that has one is left as it is, with a warning when today's resources would inject\n"
    "something else (its record is stale).\n"
    "\n"
    "Warnings go to standard error as FILE:LINE: warning: ... A template the API server\n"
    "would refuse (a field of the wrong type) is written through unchanged, never dropped\n"
    "(kubectl apply --prune would delete a missing one), with\n"
    "FILE:LINE: KIND NS/NAME: FIELD: REASON. Exit status: 0 done, 1 bad input\n"
    "(FILE:LINE: reason; also input without any object, as for kubectl apply), 2 usage,\n"
    "3 --fail-on-skip and something was skipped.\n";

enum { EXIT_SKIPPED = 3 };

typedef struct opts {
    cli_input in;
    const char *ns, *config, *output, *native;
    bool report, fail_on_skip;
} opts;

/* 0 with *o filled, -1 after --help, or 2 after a usage error. */
static int parse_args(int argc, char **argv, opts *o) {
    enum { O_NATIVE = 256, O_CONFIG, O_REPORT, O_FAIL };
    static const struct option longopts[] = {
        {"filename", required_argument, 0, 'f'},   {"recursive", no_argument, 0, 'R'},
        {"resources", required_argument, 0, CLI_OPT_RESOURCES}, {"namespace", required_argument, 0, 'n'},
        {"native-sidecars", required_argument, 0, O_NATIVE}, {"config", required_argument, 0, O_CONFIG},
        {"output", required_argument, 0, 'o'},     {"report", no_argument, 0, O_REPORT},
        {"fail-on-skip", no_argument, 0, O_FAIL},  {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (opts){.ns = "default", .output = "yaml"};
    cli_input_init(&o->in, argc);
    int c, r;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":f:Rn:o:h", longopts)) != -1) {
        if ((r = cli_input_option(&o->in, "inject", usage, c, optarg))) {
            if (r == 2) return 2;
            continue;
        }
        switch (c) {
        case 'n': o->ns = optarg; break;
        case O_NATIVE:
            if (strcmp(optarg, "on") && strcmp(optarg, "off"))
                return cli_usage_error("inject", usage, "--native-sidecars %s: expected on or off", optarg);
            o->native = optarg;
            break;
        case O_CONFIG: o->config = optarg; break;
        case 'o':
            if (strcmp(optarg, "yaml") && strcmp(optarg, "json") && strcmp(optarg, "patch"))
                return cli_usage_error("inject", usage, "-o %s: expected yaml, json or patch", optarg);
            o->output = optarg;
            break;
        case O_REPORT: o->report = true; break;
        case O_FAIL: o->fail_on_skip = true; break;
        case 'h': fputs(usage, stdout); return -1;
        default: return cli_bad_option("inject", usage, c, argv, longopts);
        }
    }
    /* inject is a one-shot: unlike serve, it does not wait for a resources
     * folder to appear. */
    return cli_input_check(&o->in, "inject", usage, argc, argv);
}

json_object *inject_template_of(json_object *o, const char *kind) {
    static const char *const with_template[] = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", NULL};
    for (int i = 0; with_template[i]; i++)
        if (!strcmp(kind, with_template[i])) return kube_obj_get(o, "spec.template");
    if (!strcmp(kind, "CronJob")) return kube_obj_get(o, "spec.jobTemplate.spec.template");
    return NULL;
}

static bool is_resource_kind(const char *kind) {
    return kind && (!strcmp(kind, "Instrumentation") || !strcmp(kind, "OpenTelemetryCollector") ||
                    !strcmp(kind, "Namespace"));
}

static void take_resource(json_object *o, const char *file, const kube_prepare *prep, const char *ns,
                          const kube_logger *log, json_object ***objs, size_t *nobjs) {
    char *one = xstrdup(json_object_to_json_string(o)), err[512];
    char *label = xasprintf("%s.json", file); /* parse as JSON; messages still name the input */
    kube_manifest_objects(label, one, strlen(one), prep, ns, log, objs, nobjs, err, sizeof err);
    free(label);
    free(one);
}

void inject_input_resources(const inject_input *in, kube_store *store, const kube_prepare *prep, const char *ns,
                            const kube_logger *log) {
    json_object **objs = NULL;
    size_t nobjs = 0;
    for (size_t i = 0; i < in->ndocs; i++) {
        json_object *o = in->docs[i].obj;
        const char *kind = jstr(o, "kind"), *file = in->files[in->docs[i].file].name;
        if (is_resource_kind(kind)) take_resource(o, file, prep, ns, log, &objs, &nobjs);
        if (!kind || strcmp(kind, "List")) continue;
        json_object *items = jarr(o, "items");
        for (size_t k = 0; k < jlen(items); k++) {
            json_object *it = json_object_array_get_idx(items, k);
            if (is_resource_kind(jstr(it, "kind"))) take_resource(it, file, prep, ns, log, &objs, &nobjs);
        }
    }
    kube_store_set_layer(store, KUBE_LAYER_INPUT, objs, nobjs);
}

/* The walk over the objects, and what it produced. */
typedef struct walk {
    inject_input *in;
    const opts *o;
    const kube_reader *src;
    const kube_snapshot *snap;
    const mutate_options *mopt;
    inject_object *objs;
    size_t nobjs, capobjs;
    int rc;
} walk;

/* The pod the webhook would be asked about: the template, with the
 * workload as its owner. A template metadata that is not an object goes
 * over as it is, for the engine to refuse. */
json_object *inject_stand_in(json_object *o, const char *kind, json_object *tmpl) {
    json_object *pod = jnew_obj(), *tmeta = kube_obj_get(tmpl, "metadata");
    if (tmeta && !json_object_is_type(tmeta, json_type_object)) {
        jset(pod, "metadata", json_object_get(tmeta));
        jset(pod, "spec", json_object_get(kube_obj_get(tmpl, "spec")));
        return pod;
    }
    json_object *meta = jset_obj(pod, "metadata");
    if (tmeta) {
        json_object_object_foreach(tmeta, k, v) jset(meta, k, json_object_get(v));
    }
    json_object *ref = jpush(jset_arr(meta, "ownerReferences"), jnew_obj());
    jset_str(ref, "kind", kind);
    jset_str(ref, "name", kube_obj_str(o, "metadata.name"));
    const char *uid = kube_obj_str(o, "metadata.uid");
    if (uid) jset_str(ref, "uid", uid);
    jset(pod, "spec", json_object_get(kube_obj_get(tmpl, "spec")));
    return pod;
}

/* The mutated stand-in back into the workload's template. */
static void into_template(json_object *tmpl, json_object *pod) {
    json_object *nmeta = jnew_obj(), *pmeta = jmap(pod, "metadata");
    if (pmeta) {
        json_object_object_foreach(pmeta, k, v) {
            if (strcmp(k, "ownerReferences")) jset(nmeta, k, json_object_get(v));
        }
    }
    if (jmap(tmpl, "metadata") || json_object_object_length(nmeta)) jset(tmpl, "metadata", nmeta);
    else json_object_put(nmeta);
    jset(tmpl, "spec", json_object_get(kube_obj_get(pod, "spec")));
}

/* FILE:LINE: Kind ns/name: PATH: REASON for a template the engine refused
 * as malformed, and the record's outcome. PATH is the pod's, under the
 * workload's template; LINE the offending field's (or of what holds it,
 * when it is missing or null) when the YAML parse knows it, else the
 * object's (JSON input). The stand-in pod and its metadata are this file's,
 * not the input's: the template and its metadata stand for them. */
static void report_malformed(inject_object *rec, const kube_yaml_lines *lines, json_object *pod, json_object *tmpl,
                             const mutate_result *res) {
    json_object *at = res->invalid_at, *tmeta = kube_obj_get(tmpl, "metadata");
    if (tmpl && at == pod) at = tmpl;
    else if (tmpl && at == kube_obj_get(pod, "metadata") && at != tmeta) at = tmeta ? tmeta : tmpl;
    int line = kube_yaml_line_of(lines, at);
    const char *prefix = !tmpl ? "" : !strcmp(rec->kind, "CronJob") ? "spec.jobTemplate.spec.template." : "spec.template.";
    char *why = xasprintf("%s%s: %s", prefix, res->invalid_path, res->invalid_reason);
    fprintf(stderr, "%s:%d: %s %s/%s: %s\n", rec->file, line ? line : rec->line, rec->kind, rec->ns, rec->name, why);
    inject_object_invalid(rec, why);
    free(why);
}

/* One object: docs[di] itself, or item `item` of its List. Pods and
 * workloads get a record and go to the engine; anything else is left. */
static void visit(walk *w, size_t di, size_t item, json_object *o) {
    inject_doc *d = &w->in->docs[di];
    const char *kind = jstr(o, "kind");
    json_object *tmpl = NULL;
    bool is_pod = kind && !strcmp(kind, "Pod");
    if (!kind || (!is_pod && !(tmpl = inject_template_of(o, kind)))) return;

    w->objs = xgrow(w->objs, &w->capobjs, w->nobjs + 1, sizeof *w->objs);
    inject_object *rec = &w->objs[w->nobjs++];
    const char *ons = kube_obj_str(o, "metadata.namespace"), *name = kube_obj_str(o, "metadata.name");
    if (!name) name = kube_obj_str(o, "metadata.generateName");
    *rec = (inject_object){.file = w->in->files[d->file].name,
                           .line = item == INJECT_NO_ITEM ? d->line : inject_item_line(d, item),
                           .doc = di,
                           .item = item,
                           .kind = xstrdup(kind),
                           .ns = xstrdup(ons && *ons ? ons : w->o->ns),
                           .name = xstrdup(name ? name : "")};
    if (!is_pod && !json_object_is_type(tmpl, json_type_object)) {
        fprintf(stderr, "%s:%d: %s has no pod template\n", rec->file, rec->line, kind);
        inject_object_invalid(rec, "no pod template");
        w->rc = 1;
        return;
    }

    json_object *pod = is_pod ? json_object_get(o) : inject_stand_in(o, kind, tmpl);
    mutate_request req = {.pod = pod, .namespace = rec->ns, .src = w->src, .opt = w->mopt};
    req.ns = kube_snapshot_get(w->snap, "Namespace", NULL, rec->ns);
    mutate_result res;
    int mrc = mutate_pod(&req, &res);
    if (res.invalid_path) {
        report_malformed(rec, w->in->files[d->file].lines, pod, tmpl, &res);
        w->rc = 1;
        mutate_result_free(&res);
        json_object_put(pod);
        return;
    }
    for (size_t i = 0; i < res.nwarnings; i++) fprintf(stderr, "%s:%d: warning: %s\n", rec->file, rec->line, res.warnings[i]);
    /* Injected before (the engine left it alone through its record): say
     * when today's resources would inject something else. */
    if (mrc == 0 && !json_object_array_length(res.patch)) {
        char **why;
        int n = mutate_record_stale(&req, &why);
        for (int i = 0; i < n; i++)
            fprintf(stderr, "%s:%d: warning: %s %s/%s: its otel-webhook/status record is stale: %s\n", rec->file, rec->line,
                    rec->kind, rec->ns, rec->name, why[i]);
        if (n > 0) mutate_strings_free(why, (size_t)n);
    }
    if (mrc != 0) w->rc = 1;
    inject_object_judge(rec, mrc, &res);
    if (!strcmp(w->o->output, "patch")) {
        printf("%s\n", json_object_to_json_string_ext(res.patch, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                     JSON_C_TO_STRING_NOSLASHESCAPE));
    } else if (mrc == 0 && json_object_array_length(res.patch)) {
        d->changed = true;
        if (!is_pod) into_template(tmpl, res.pod);
        else if (item == INJECT_NO_ITEM) {
            json_object_put(d->obj);
            d->obj = json_object_get(res.pod);
        } else {
            json_object_array_put_idx(jarr(d->obj, "items"), item, json_object_get(res.pod));
        }
    }
    mutate_result_free(&res);
    json_object_put(pod);
}

static void walk_all(walk *w) {
    for (size_t di = 0; di < w->in->ndocs; di++) {
        json_object *o = w->in->docs[di].obj;
        const char *kind = jstr(o, "kind");
        if (!kind || strcmp(kind, "List")) {
            visit(w, di, INJECT_NO_ITEM, o);
            continue;
        }
        json_object *items = jarr(o, "items");
        for (size_t i = 0; i < jlen(items); i++) {
            json_object *it = json_object_array_get_idx(items, i);
            const char *ikind = jstr(it, "kind");
            if (ikind && !strcmp(ikind, "List")) {
                /* Kubernetes has no Lists in Lists; kubectl would flatten
                 * one, which would hide that this input is not what the
                 * API server gives. */
                fprintf(stderr, "%s:%d: a List inside a List is not read; left as it is\n",
                        w->in->files[w->in->docs[di].file].name, inject_item_line(&w->in->docs[di], i));
                w->rc = 1;
                continue;
            }
            visit(w, di, i, it);
        }
    }
}

/* No object in any input (an empty file, empty standard input, comments
 * only): kubectl apply says "no objects passed to apply" and exits 1, and
 * so does inject, rather than print nothing with exit 0, which a script
 * takes for success (a wrong path in a generated list, a template that
 * rendered to nothing). */
static bool no_objects(const inject_input *in, const cli_input *paths) {
    for (size_t i = 0; i < in->ndocs; i++)
        if (json_object_is_type(in->docs[i].obj, json_type_object)) return false;
    for (size_t i = 0; i < paths->nfiles; i++)
        fprintf(stderr, "%s: no objects passed to inject\n", strcmp(paths->files[i], "-") ? paths->files[i] : "<stdin>");
    return true;
}

static bool one_pod(const inject_input *in) {
    const char *kind = in->ndocs == 1 ? jstr(in->docs[0].obj, "kind") : NULL;
    return kind && !strcmp(kind, "Pod");
}

int cmd_inject(int argc, char **argv) {
    opts o;
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
    inject_input in = {0};
    kube_logger log = {cli_log_stderr, NULL};
    kube_view view = {0, -1};
    walk w = {.in = &in, .o = &o, .rc = 1};
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
        if (failing) goto out; /* the reason is already on stderr */
    }
    if (inject_input_read(&in, o.in.files, o.in.nfiles, o.in.recursive) != 0 || no_objects(&in, &o.in)) goto out;
    inject_input_resources(&in, store, &prep, o.ns, &log);
    if (!strcmp(o.output, "patch") && !one_pod(&in)) {
        if (in.nfiles == 1) fprintf(stderr, "%s: -o patch needs exactly one Pod\n", in.files[0].name);
        else fprintf(stderr, "otel-webhook inject: -o patch needs exactly one Pod\n");
        goto out;
    }

    view = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, view.snap);
    w.src = &src;
    w.snap = view.snap;
    w.mopt = &cfg.opt;
    w.rc = 0;
    walk_all(&w);
    if (!strcmp(o.output, "yaml")) inject_write_yaml(stdout, &in);
    else if (!strcmp(o.output, "json")) inject_write_json(stdout, &in);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "otel-webhook inject: writing the output: %s\n", strerror(errno));
        w.rc = 1;
    }
    if (o.report) inject_report(stderr, w.objs, w.nobjs);
    if (w.rc == 0 && o.fail_on_skip)
        for (size_t i = 0; i < w.nobjs; i++)
            if (w.objs[i].outcome == INJECT_SKIPPED) w.rc = EXIT_SKIPPED;
out:
    if (view.slot >= 0) kube_store_release(store, &view);
    for (size_t i = 0; i < w.nobjs; i++) inject_object_free(&w.objs[i]);
    free(w.objs);
    inject_input_free(&in);
    kube_filesource_free(fs);
    kube_store_free(store);
    mutate_settings_free(&cfg);
    cli_input_free(&o.in);
    return w.rc;
}
