/* server/cmd_inject.c - `otel-webhook inject`: the engine offline over YAML.
 *
 * Every pod template in the input (a Pod, or the template of a Deployment,
 * StatefulSet, DaemonSet, ReplicaSet, Job or CronJob) is mutated exactly as
 * the webhook would mutate the pod created from it. Since no controller has
 * created the pod yet, the workload itself stands in as the pod's owner, so
 * service names and k8s.<kind>.name attributes come out as they will in the
 * cluster (the ReplicaSet's generated name cannot be known in advance).
 *
 * Instrumentation, OpenTelemetryCollector and Namespace documents in the
 * input are used as resources too, so one file can carry a whole example.
 *
 * A template the engine refuses as malformed (a field of a type the API
 * server would refuse, mutate.h invalid_path) is reported on one line with
 * the field's own line, known from the YAML parse, and left out of the
 * output: printing it back unchanged would pass a manifest that cannot be
 * applied down a pipeline as if it had been processed. */
#include "server/cli.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/file.h"
#include "kube/filesource.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "kube/yaml.h"
#include "mutate/defaults.h"
#include "mutate/mutate.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: otel-webhook inject -f FILE|- [--resources DIR]... [--namespace NS]\n"
    "                           [--native-sidecars on|off] [--config FILE] [-o yaml|json|patch]\n"
    "\n"
    "Mutates every pod template in FILE (a Pod, Deployment, StatefulSet, DaemonSet,\n"
    "ReplicaSet, Job or CronJob; multi-document YAML or JSON) as the webhook would.\n"
    "\n"
    "  -f, --filename FILE     input manifest, - for standard input\n"
    "  --resources DIR         folder of Instrumentation, OpenTelemetryCollector, Namespace\n"
    "                          (and other) manifests; repeatable\n"
    "  -n, --namespace NS      namespace of objects that name none (default: default)\n"
    "  --native-sidecars MODE  on: collector as an init container with restartPolicy Always;\n"
    "                          off: as a regular container (default: the config's setting,\n"
    "                          and off when that is auto, since there is no cluster to ask)\n"
    "  --config FILE           settings file (default images, enabled languages, ...)\n"
    "  -o, --output FORMAT     yaml (default): the input with templates mutated;\n"
    "                          json: the same as JSON (a List for several documents);\n"
    "                          patch: the RFC 6902 patch, for a single Pod\n"
    "\n"
    "Warnings go to standard error. A template the API server would refuse (a field\n"
    "of the wrong type) is left out of the output: FILE:LINE: Kind ns/name: field:\n"
    "reason. Exit status: 0 done, 1 bad input, 2 usage.\n";

typedef struct doc {
    json_object *obj;
    int line;
} doc;

static int read_docs(const char *name, const char *text, size_t len, doc **docs, size_t *ndocs,
                     kube_yaml_lines **lines) {
    const char *p = text;
    while (p < text + len && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++;
    if (p < text + len && (*p == '{' || *p == '[')) {
        int line;
        const char *reason;
        json_object *o = kube_parse_json(text, len, &line, &reason);
        if (!o) {
            fprintf(stderr, "%s:%d: %s\n", name, line, reason);
            return -1;
        }
        *docs = xcalloc(1, sizeof **docs);
        (*docs)[0] = (doc){o, 1};
        *ndocs = 1;
        return 0;
    }
    kube_yaml_doc *yd = NULL;
    size_t n = 0;
    kube_yaml_error ye;
    if (kube_yaml_parse_lines(text, len, &yd, &n, &ye, lines) != 0) {
        fprintf(stderr, "%s:%d: %s\n", name, ye.line, ye.msg);
        return -1;
    }
    *docs = xcalloc(n ? n : 1, sizeof **docs);
    *ndocs = 0;
    for (size_t i = 0; i < n; i++) {
        if (!yd[i].obj) continue;
        (*docs)[(*ndocs)++] = (doc){yd[i].obj, yd[i].line};
        yd[i].obj = NULL;
    }
    kube_yaml_docs_free(yd, n);
    return 0;
}

/* Where a document keeps its pod template; NULL for documents without one. */
static json_object *template_of(json_object *o, const char *kind) {
    static const char *const with_template[] = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", NULL};
    for (int i = 0; with_template[i]; i++)
        if (!strcmp(kind, with_template[i])) return kube_obj_get(o, "spec.template");
    if (!strcmp(kind, "CronJob")) return kube_obj_get(o, "spec.jobTemplate.spec.template");
    return NULL;
}

/* FILE:LINE: Kind ns/name: PATH: REASON for a template the engine refused
 * as malformed. PATH is the pod's, under the workload's template; LINE the
 * offending field's (or of what holds it, when it is missing or null) when
 * the YAML parse knows it, else the document's (JSON input). The stand-in
 * pod and its metadata are this file's, not the input's: the template and
 * its metadata stand for them. */
static void report_malformed(const char *name, int doc_line, const kube_yaml_lines *lines, json_object *o,
                             const char *kind, const char *ns, json_object *pod, json_object *tmpl,
                             const mutate_result *res) {
    json_object *at = res->invalid_at, *tmeta = kube_obj_get(tmpl, "metadata");
    if (tmpl && at == pod) at = tmpl;
    else if (tmpl && at == kube_obj_get(pod, "metadata") && at != tmeta) at = tmeta ? tmeta : tmpl;
    int line = kube_yaml_line_of(lines, at);
    const char *oname = kube_obj_str(o, "metadata.name"), *prefix = "";
    if (tmpl) prefix = !strcmp(kind, "CronJob") ? "spec.jobTemplate.spec.template." : "spec.template.";
    fprintf(stderr, "%s:%d: %s %s/%s: %s%s: %s\n", name, line ? line : doc_line, kind, ns, oname ? oname : "", prefix,
            res->invalid_path, res->invalid_reason);
}

static void log_stderr(void *ud, kube_log_level level, const char *msg) {
    (void)ud;
    if (level >= KUBE_LOG_WARN) fprintf(stderr, "%s%s\n", level == KUBE_LOG_ERROR ? "error: " : "warning: ", msg);
}

int cmd_inject(int argc, char **argv) {
    static const struct option opts[] = {
        {"filename", required_argument, 0, 'f'}, {"resources", required_argument, 0, 'r'},
        {"namespace", required_argument, 0, 'n'}, {"native-sidecars", required_argument, 0, 's'},
        {"config", required_argument, 0, 'c'},   {"output", required_argument, 0, 'o'},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    const char *file = NULL, *ns_default = "default", *config = NULL, *output = "yaml", *native = NULL;
    const char **dirs = xcalloc((size_t)argc + 1, sizeof *dirs);
    size_t ndirs = 0;
    int c, rc = 1;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:n:o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f': file = optarg; break;
        case 'r': dirs[ndirs++] = optarg; break;
        case 'n': ns_default = optarg; break;
        case 's': native = optarg; break;
        case 'c': config = optarg; break;
        case 'o': output = optarg; break;
        case 'h': fputs(usage, stdout); free(dirs); return 0;
        default: fputs(usage, stderr); free(dirs); return 2;
        }
    }
    if (!file || optind != argc || (native && strcmp(native, "on") && strcmp(native, "off")) ||
        (strcmp(output, "yaml") && strcmp(output, "json") && strcmp(output, "patch"))) {
        fputs(usage, stderr);
        free(dirs);
        return 2;
    }

    mutate_settings cfg;
    mutate_settings_init(&cfg);
    kube_prepare prep = MUTATE_PREPARE(&cfg);
    kube_store *store = kube_store_new();
    kube_filesource *fs = NULL;
    doc *docs = NULL;
    size_t ndocs = 0, len = 0;
    char *text = NULL, err[512];
    kube_logger log = {log_stderr, NULL};
    json_object *out_list = NULL;
    kube_view view = {0, -1};
    kube_yaml_lines *lines = NULL;

    if (config && cli_load_settings(&cfg, config, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    cfg.opt.native_sidecars = native ? !strcmp(native, "on") : cfg.native_sidecars == MUTATE_ON;
    if (ndirs) {
        int failing = 0;
        fs = kube_filesource_new(store, &prep, dirs, ndirs, ns_default, &log);
        kube_filesource_poll(fs, &failing);
        if (failing) goto out; /* the reason is already on stderr */
    }
    const char *name = strcmp(file, "-") ? file : "<stdin>";
    if (!(text = kube_read_file(file, &len))) {
        fprintf(stderr, "%s: cannot read: %m\n", file);
        goto out;
    }
    if (read_docs(name, text, len, &docs, &ndocs, &lines) != 0) goto out;

    /* Resources carried by the input itself. */
    json_object **objs = NULL;
    size_t nobjs = 0;
    for (size_t i = 0; i < ndocs; i++) {
        const char *kind = kube_obj_str(docs[i].obj, "kind");
        if (!kind || (strcmp(kind, "Instrumentation") && strcmp(kind, "OpenTelemetryCollector") && strcmp(kind, "Namespace")))
            continue;
        char *one = xstrdup(json_object_to_json_string(docs[i].obj));
        char label[600];
        snprintf(label, sizeof label, "%s.json", name); /* parse as JSON; messages still name the input */
        kube_manifest_objects(label, one, strlen(one), &prep, ns_default, &log, &objs, &nobjs, err, sizeof err);
        free(one);
    }
    kube_store_set_layer(store, KUBE_LAYER_INPUT, objs, nobjs);

    if (!strcmp(output, "patch") && (ndocs != 1 || !kube_obj_str(docs[0].obj, "kind") ||
                                     strcmp(kube_obj_str(docs[0].obj, "kind"), "Pod"))) {
        fprintf(stderr, "%s: -o patch needs exactly one Pod\n", name);
        goto out;
    }

    view = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, view.snap);
    rc = 0;
    for (size_t i = 0; i < ndocs; i++) {
        json_object *o = docs[i].obj;
        const char *kind = kube_obj_str(o, "kind");
        if (!kind) continue;
        json_object *tmpl = NULL;
        bool is_pod = !strcmp(kind, "Pod");
        if (!is_pod && !(tmpl = template_of(o, kind))) continue;
        if (!is_pod && !json_object_is_type(tmpl, json_type_object)) {
            fprintf(stderr, "%s:%d: %s has no pod template\n", name, docs[i].line, kind);
            rc = 1;
            continue;
        }
        const char *ons = kube_obj_str(o, "metadata.namespace");
        const char *ns = ons && *ons ? ons : ns_default;
        json_object *pod = o, *tmeta = NULL;
        if (!is_pod) {
            /* A stand-in pod: the template plus the workload as owner. */
            pod = jnew_obj();
            tmeta = kube_obj_get(tmpl, "metadata");
            json_object *meta = jnew_obj();
            /* Not an object: handed over as it is, for the engine to refuse. */
            if (tmeta && !json_object_is_type(tmeta, json_type_object)) {
                json_object_put(meta);
                meta = json_object_get(tmeta);
            }
            if (json_object_is_type(tmeta, json_type_object)) {
                json_object_object_foreach(tmeta, k, v) jset(meta, k, json_object_get(v));
            }
            json_object *ref = jnew_obj(), *refs = jnew_arr();
            jset(ref, "kind", jnew_str(kind));
            jset(ref, "name", jnew_str(kube_obj_str(o, "metadata.name") ? kube_obj_str(o, "metadata.name") : ""));
            const char *uid = kube_obj_str(o, "metadata.uid");
            if (uid) jset(ref, "uid", jnew_str(uid));
            jpush(refs, ref);
            if (json_object_is_type(meta, json_type_object)) jset(meta, "ownerReferences", refs);
            else json_object_put(refs);
            jset(pod, "metadata", meta);
            json_object *tspec = kube_obj_get(tmpl, "spec");
            jset(pod, "spec", json_object_get(tspec));
        }
        mutate_request req = {.pod = pod, .namespace = ns, .src = &src, .opt = &cfg.opt};
        req.ns = kube_snapshot_get(view.snap, "Namespace", NULL, ns);
        mutate_result res;
        int mrc = mutate_pod(&req, &res);
        if (res.invalid_path) {
            report_malformed(name, docs[i].line, lines, o, kind, ns, pod, tmpl, &res);
            rc = 1;
            mutate_result_free(&res);
            if (!is_pod) json_object_put(pod);
            json_object_put(docs[i].obj);
            docs[i].obj = NULL; /* left out of the output */
            continue;
        }
        for (size_t w = 0; w < res.nwarnings; w++) fprintf(stderr, "%s:%d: warning: %s\n", name, docs[i].line, res.warnings[w]);
        if (mrc != 0) rc = 1;
        if (!strcmp(output, "patch")) {
            printf("%s\n", json_object_to_json_string_ext(res.patch, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
        } else if (mrc == 0 && is_pod) {
            docs[i].obj = json_object_get(res.pod);
            json_object_put(o);
        } else if (mrc == 0) {
            json_object *rmeta = kube_obj_get(res.pod, "metadata");
            json_object *nmeta = jnew_obj();
            json_object_object_foreach(rmeta, k, v) {
                if (!strcmp(k, "ownerReferences")) continue;
                jset(nmeta, k, json_object_get(v));
            }
            if (tmeta || json_object_object_length(nmeta)) jset(tmpl, "metadata", nmeta);
            else json_object_put(nmeta);
            jset(tmpl, "spec", json_object_get(kube_obj_get(res.pod, "spec")));
        }
        mutate_result_free(&res);
        if (!is_pod) json_object_put(pod);
    }
    if (!strcmp(output, "yaml")) {
        bool first = true;
        for (size_t i = 0; i < ndocs; i++) {
            if (!docs[i].obj) continue;
            char *y = kube_yaml_emit(docs[i].obj);
            printf("%s%s", first ? "" : "---\n", y ? y : "");
            first = false;
            free(y);
        }
    } else if (!strcmp(output, "json") && (ndocs != 1 || docs[0].obj)) {
        json_object *top = NULL;
        if (ndocs == 1) top = json_object_get(docs[0].obj);
        else {
            top = out_list = jnew_obj();
            jset(top, "apiVersion", jnew_str("v1"));
            jset(top, "kind", jnew_str("List"));
            json_object *items = jnew_arr();
            for (size_t i = 0; i < ndocs; i++)
                if (docs[i].obj) jpush(items, json_object_get(docs[i].obj));
            jset(top, "items", items);
            out_list = NULL;
        }
        printf("%s\n", json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
        json_object_put(top);
    }
out:
    if (view.slot >= 0) kube_store_release(store, &view);
    for (size_t i = 0; i < ndocs; i++) json_object_put(docs[i].obj);
    free(docs);
    kube_yaml_lines_free(lines);
    free(text);
    kube_filesource_free(fs);
    kube_store_free(store);
    mutate_settings_free(&cfg);
    free(dirs);
    return rc;
}
