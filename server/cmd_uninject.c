/* server/cmd_uninject.c - `otel-webhook uninject`: undo an injection.
 *
 * Every Pod and pod template carrying an otel-webhook/status record gets
 * back what it was before the injection (mutate_uninject: exactly what the
 * record names, nothing else); everything else passes through untouched,
 * byte for byte, like `linkerd uninject`. Input and output are inject's
 * (inject.h). A record that cannot be read, no longer matches its pod or
 * does not prove itself (mutate_record_check: the pod's author writes it)
 * is reported as FILE:LINE: KIND NS/NAME: reason and that object is left
 * as it is (exit 1): a half-undone pod would be a wrong output, a forged
 * one a privilege nobody reviewed. */
#include "server/cli.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/yaml.h"
#include "mutate/record.h"
#include "server/inject.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-webhook uninject -f FILE|DIR|- [-f ...] [-R] [-o yaml|json] [--report]\n"
    "\n"
    "Removes what the injection recorded in a Pod's or pod template's otel-webhook/status\n"
    "annotation (containers, init containers, volumes, env entries, mounts, the label) and\n"
    "restores the values it rewrote (JAVA_TOOL_OPTIONS, NODE_OPTIONS, PYTHONPATH, a command,\n"
    "...). Objects without a record are written back untouched. The record is the pod author's\n"
    "data: only what has the shape of otel-webhook's own injection is undone (its container,\n"
    "volume and variable names, the images the record gives); a record over 256 KiB, or asking\n"
    "for anything else (privileges, host access, a service account, a namespace, ...), is\n"
    "refused with the field named.\n"
    "\n"
    "  -f, --filename PATH   input manifest, repeatable: a file, a folder (its *.yaml, *.yml\n"
    "                        and *.json files in name order), - for standard input (once)\n"
    "  -R, --recursive       also read the subfolders of -f folders\n"
    "  -o, --output FORMAT   yaml (default): documents without a record byte for byte;\n"
    "                        json: the same as JSON (a List for several documents)\n"
    "  --report              on standard error, one line per Pod or workload\n"
    "                        (KIND NS/NAME: uninjected|unchanged|invalid) and a summary line\n"
    "\n"
    "Exit status: 0 done, 1 bad input or a record that does not match its object or is\n"
    "refused (FILE:LINE: KIND NS/NAME: reason; the object is left as it is), 2 usage.\n";

typedef struct uopts {
    cli_input in;
    const char *output;
    bool report;
} uopts;

static int parse_args(int argc, char **argv, uopts *o) {
    enum { O_REPORT = 256 };
    static const struct option longopts[] = {
        {"filename", required_argument, 0, 'f'}, {"recursive", no_argument, 0, 'R'},
        {"output", required_argument, 0, 'o'},   {"report", no_argument, 0, O_REPORT},
        {"help", no_argument, 0, 'h'},           {0, 0, 0, 0},
    };
    *o = (uopts){.output = "yaml"};
    cli_input_init(&o->in, argc);
    int c, r;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":f:Ro:h", longopts)) != -1) {
        if ((r = cli_input_option(&o->in, "uninject", usage, c, optarg))) {
            if (r == 2) return 2;
            continue;
        }
        switch (c) {
        case 'o':
            if (strcmp(optarg, "yaml") && strcmp(optarg, "json"))
                return cli_usage_error("uninject", usage, "-o %s: expected yaml or json", optarg);
            o->output = optarg;
            break;
        case O_REPORT: o->report = true; break;
        case 'h': fputs(usage, stdout); return -1;
        default: return cli_bad_option("uninject", usage, c, argv, longopts);
        }
    }
    return cli_input_check(&o->in, "uninject", usage, argc, argv);
}

typedef struct uwalk {
    inject_input *in;
    inject_object *objs;
    size_t nobjs, cap;
    int rc;
} uwalk;

/* The holder of a kind's template, so that it can be replaced. */
static json_object *template_holder(json_object *o, const char *kind) {
    return kube_obj_get(o, strcmp(kind, "CronJob") ? "spec" : "spec.jobTemplate.spec");
}

static void visit(uwalk *w, size_t di, size_t item, json_object *o) {
    inject_doc *d = &w->in->docs[di];
    const char *kind = jstr(o, "kind");
    bool is_pod = kind && !strcmp(kind, "Pod");
    json_object *target = is_pod ? o : kind ? inject_template_of(o, kind) : NULL;
    if (!json_object_is_type(target, json_type_object)) return;

    w->objs = xgrow(w->objs, &w->cap, w->nobjs + 1, sizeof *w->objs);
    inject_object *rec = &w->objs[w->nobjs++];
    const char *ns = kube_obj_str(o, "metadata.namespace"), *name = kube_obj_str(o, "metadata.name");
    if (!name) name = kube_obj_str(o, "metadata.generateName");
    *rec = (inject_object){.file = w->in->files[d->file].name,
                           .line = item == INJECT_NO_ITEM ? d->line : inject_item_line(d, item),
                           .doc = di, .item = item, .kind = xstrdup(kind),
                           .ns = xstrdup(ns && *ns ? ns : "default"), .name = xstrdup(name ? name : ""),
                           .outcome = INJECT_UNCHANGED};
    const char *why;
    json_object *r = mutate_record_read(target, &why);
    if (!r) {
        if (!why) return;
        char *msg = xasprintf("%s: %s", MUTATE_RECORD_KEY, why);
        fprintf(stderr, "%s:%d: %s %s/%s: %s; left as it is\n", rec->file, rec->line, rec->kind, rec->ns, rec->name, msg);
        inject_object_invalid(rec, msg);
        free(msg);
        w->rc = 1;
        return;
    }
    char err[256];
    json_object *back = mutate_uninject(target, r, err, sizeof err);
    json_object_put(r);
    if (!back) {
        fprintf(stderr, "%s:%d: %s %s/%s: %s; left as it is\n", rec->file, rec->line, rec->kind, rec->ns, rec->name, err);
        inject_object_invalid(rec, err);
        w->rc = 1;
        return;
    }
    rec->outcome = INJECT_INJECTED; /* reported as "uninjected" */
    d->changed = true;
    if (is_pod) {
        if (item == INJECT_NO_ITEM) {
            json_object_put(d->obj);
            d->obj = back;
        } else {
            json_object_array_put_idx(jarr(d->obj, "items"), item, back);
        }
        return;
    }
    /* inject gives a template without metadata one (the stand-in pod's); an
     * empty one left is that, not the input's. */
    json_object *meta = jmap(back, "metadata");
    if (meta && json_object_object_length(meta) == 0) json_object_object_del(back, "metadata");
    jset(template_holder(o, kind), "template", back);
}

static void report(const uwalk *w) {
    size_t counts[3] = {0};
    for (size_t i = 0; i < w->nobjs; i++) {
        const inject_object *o = &w->objs[i];
        int k = o->outcome == INJECT_INJECTED ? 0 : o->outcome == INJECT_UNCHANGED ? 1 : 2;
        counts[k]++;
        fprintf(stderr, "%s %s/%s: %s%s%s\n", o->kind, o->ns, o->name, k == 0 ? "uninjected" : k == 1 ? "unchanged" : "invalid",
                o->detail ? ": " : "", o->detail ? o->detail : "");
    }
    fprintf(stderr, "%zu uninjected, %zu unchanged, %zu invalid\n", counts[0], counts[1], counts[2]);
}

int cmd_uninject(int argc, char **argv) {
    uopts o;
    int prc = parse_args(argc, argv, &o);
    if (prc) {
        cli_input_free(&o.in);
        return prc < 0 ? 0 : prc;
    }
    inject_input in = {0};
    uwalk w = {.in = &in, .rc = 1};
    if (inject_input_read(&in, o.in.files, o.in.nfiles, o.in.recursive) != 0) goto out;
    w.rc = 0;
    for (size_t di = 0; di < in.ndocs; di++) {
        json_object *obj = in.docs[di].obj;
        const char *kind = jstr(obj, "kind");
        if (!kind || strcmp(kind, "List")) {
            visit(&w, di, INJECT_NO_ITEM, obj);
            continue;
        }
        json_object *items = jarr(obj, "items");
        for (size_t i = 0; i < jlen(items); i++) visit(&w, di, i, json_object_array_get_idx(items, i));
    }
    if (!strcmp(o.output, "yaml")) inject_write_yaml(stdout, &in);
    else inject_write_json(stdout, &in);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "otel-webhook uninject: writing the output: %s\n", strerror(errno));
        w.rc = 1;
    }
    if (o.report) report(&w);
out:
    for (size_t i = 0; i < w.nobjs; i++) inject_object_free(&w.objs[i]);
    free(w.objs);
    inject_input_free(&in);
    cli_input_free(&o.in);
    return w.rc;
}
