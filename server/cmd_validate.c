/* server/cmd_validate.c - `otel-webhook validate`: the custom resources'
 * admission webhooks offline, for CI.
 *
 * Every OpenTelemetryCollector (v1beta1, or v1alpha1 with its config as a
 * YAML string), Instrumentation and OpAMPBridge of the input (documents and
 * kind: List items; files, folders, standard input, read as inject reads
 * them: inject_input.h) is defaulted and validated as the webhooks would on
 * `kubectl apply`, by the same function (cr_admission_verdict), plus the
 * rules of the CRDs' schemas that the API server would apply before them.
 * An object of a kind in --resources with the same namespace and name is
 * the stored one: the input is then checked as an UPDATE of it (the
 * collector's mode may not change). Other kinds are not looked at.
 *
 * What the webhooks learn from the cluster is not known here: the
 * privilege-escalation check (it needs the applying user and the
 * authorizer) and the mTLS check's "is cert-manager installed" are not
 * made. */
#include "server/cli.h"

#include "base/alloc.h"
#include "base/json.h"
#include "collector/defaults.h"
#include "collector/validate.h"
#include "server/cr_admission.h"
#include "server/inject_input.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: otel-webhook validate -f FILE|DIR|- [-f ...] [-R] [--resources DIR]... [--namespace NS]\n"
    "                             [--config FILE]\n"
    "\n"
    "Defaults and validates every OpenTelemetryCollector, Instrumentation and OpAMPBridge in the\n"
    "input as the admission webhooks would when it is applied, and prints what they would refuse.\n"
    "\n"
    "  -f, --filename PATH     input manifest, repeatable: a file, a folder (its *.yaml, *.yml and\n"
    "                          *.json files in name order), - for standard input (once)\n"
    "  -R, --recursive         also read the subfolders of -f folders\n"
    "  --resources DIR         folder of the objects as stored (kubectl get -o yaml): an input object\n"
    "                          of the same kind, namespace and name is checked as an update of it;\n"
    "                          repeatable\n"
    "  -n, --namespace NS      namespace of objects that name none (default: default)\n"
    "  --config FILE           settings file (default images, fips-disabled-components)\n"
    "\n"
    "Each refusal is one line on standard error, FILE:LINE: KIND NS/NAME: MESSAGE (every one\n"
    "of an object, not only the first the webhook would answer), each warning\n"
    "FILE:LINE: warning: KIND NS/NAME: WARNING; the last line on standard output counts the\n"
    "objects. Not checked offline: the RBAC privilege-escalation check (it needs the applying user)\n"
    "and whether cert-manager is installed. Exit status: 0 nothing refused, 1 something refused or\n"
    "unreadable input, 2 usage.\n";

typedef struct opts {
    cli_input in;
    const char *ns, *config;
} opts;

/* 0 with *o filled, -1 after --help, or 2 after a usage error. */
static int parse_args(int argc, char **argv, opts *o) {
    enum { O_CONFIG = 256 };
    static const struct option longopts[] = {
        {"filename", required_argument, 0, 'f'}, {"recursive", no_argument, 0, 'R'},
        {"resources", required_argument, 0, CLI_OPT_RESOURCES}, {"namespace", required_argument, 0, 'n'},
        {"config", required_argument, 0, O_CONFIG}, {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    *o = (opts){.ns = "default"};
    cli_input_init(&o->in, argc);
    int c, r;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":f:Rn:h", longopts)) != -1) {
        if ((r = cli_input_option(&o->in, "validate", usage, c, optarg))) {
            if (r == 2) return 2;
            continue;
        }
        switch (c) {
        case 'n':
            if (!*optarg) return cli_usage_error("validate", usage, "--namespace must not be empty");
            o->ns = optarg;
            break;
        case O_CONFIG: o->config = optarg; break;
        case 'h': fputs(usage, stdout); return -1;
        default: return cli_bad_option("validate", usage, c, argv, longopts);
        }
    }
    return cli_input_check(&o->in, "validate", usage, argc, argv);
}

static int kind_of(const char *kind) {
    if (!kind) return -1;
    if (!strcmp(kind, "OpenTelemetryCollector")) return CR_KIND_COLLECTOR;
    if (!strcmp(kind, "Instrumentation")) return CR_KIND_INSTRUMENTATION;
    if (!strcmp(kind, "OpAMPBridge")) return CR_KIND_OPAMPBRIDGE;
    return -1;
}

/* The stored objects of --resources: "Kind/ns/name" -> object (borrowed
 * from the input that holds them). */
static void index_stored(const inject_input *in, const char *ns, json_object *index) {
    for (size_t d = 0; d < in->ndocs; d++) {
        json_object *o = in->docs[d].obj, *items = NULL;
        size_t n = 1;
        if (jstr(o, "kind") && !strcmp(jstr(o, "kind"), "List")) items = jarr(o, "items"), n = jlen(items);
        for (size_t i = 0; i < n; i++) {
            json_object *x = items ? json_object_array_get_idx(items, i) : o, *m = jmap(x, "metadata");
            const char *kind = jstr(x, "kind"), *name = jstr(m, "name"), *xns = jstr(m, "namespace");
            if (kind_of(kind) < 0 || !name) continue;
            char *key = xasprintf("%s/%s/%s", kind, xns && *xns ? xns : ns, name);
            jset(index, key, json_object_get(x));
            free(key);
        }
    }
}

typedef struct walk {
    const opts *o;
    const inject_input *in;
    const mutate_settings *settings;
    json_object *stored;
    size_t checked, refused, warned;
} walk;

/* v1alpha1 collectors carry their config as a YAML string: converted (with
 * the store's defaulting, the same steps) to the v1beta1 shape first. NULL
 * with the reason in err when that is not possible. */
static json_object *as_checked(json_object *x, int kind, char *err, size_t errlen) {
    json_object *c = jcopy(x);
    if (kind != CR_KIND_COLLECTOR || !jstr(c, "apiVersion") || strcmp(jstr(c, "apiVersion"), "opentelemetry.io/v1alpha1"))
        return c;
    if (collector_default(c, err, errlen) != 0) {
        json_object_put(c);
        return NULL;
    }
    collector_drop_derived(c);
    jset_str(c, "apiVersion", "opentelemetry.io/v1beta1");
    return c;
}

static void check_one(walk *w, const char *file, int line, json_object *x) {
    int kind = kind_of(jstr(x, "kind"));
    if (kind < 0) return;
    json_object *m = jmap(x, "metadata");
    const char *name = jstr(m, "name"), *xns = jstr(m, "namespace"), *kname = jstr(x, "kind");
    const char *ns = xns && *xns ? xns : w->o->ns;
    char err[1024] = "";
    verdict v = VERDICT_INIT;
    v.all = true; /* every refusal, as the API server lists a schema's */
    w->checked++;
    json_object *obj = as_checked(x, kind, err, sizeof err), *old = NULL;
    if (obj) {
        /* What the API server fills in before the webhooks see it. */
        json_object *om = jget(obj, "metadata");
        if (!om) om = jset_obj(obj, "metadata");
        if (json_object_is_type(om, json_type_object)) jset_str(om, "namespace", ns);
        char *key = xasprintf("%s/%s/%s", kname, ns, name ? name : "");
        json_object *stored = jget(w->stored, key);
        free(key);
        if (stored) old = as_checked(stored, kind, err, sizeof err);
        collector_validate_opts vo = {.cert_manager = -1, .schema = true, .ns = ns};
        cr_check c = {(metrics_cr_kind)kind, w->settings, &vo, false}; /* defaulted first */
        cr_admission_verdict(&c, obj, old, old ? VERDICT_UPDATE : VERDICT_CREATE, &v);
    } else {
        verdict_deny(&v, "defaulting", "%s", err);
    }
    char *who = xasprintf("%s %s/%s: ", kname, ns, name ? name : "");
    for (size_t i = 0; i < v.nwarnings; i++) {
        /* Some of the reference's warnings name the object themselves
         * ("Instrumentation ns/name: java image ..."): said once. */
        const char *text = v.warnings[i];
        if (!strncmp(text, who, strlen(who))) text += strlen(who);
        fprintf(stderr, "%s:%d: warning: %s%s\n", file, line, who, text);
    }
    free(who);
    if (v.nwarnings) w->warned++;
    if (v.rule) {
        fprintf(stderr, "%s:%d: %s %s/%s: %s\n", file, line, kname, ns, name ? name : "", v.message);
        for (size_t i = 0; i < v.nmore; i++)
            fprintf(stderr, "%s:%d: %s %s/%s: %s\n", file, line, kname, ns, name ? name : "", v.more[i]);
        w->refused++;
    }
    verdict_free(&v);
    json_object_put(obj);
    json_object_put(old);
}

static void walk_all(walk *w) {
    for (size_t d = 0; d < w->in->ndocs; d++) {
        const inject_doc *doc = &w->in->docs[d];
        const char *file = w->in->files[doc->file].name, *kind = jstr(doc->obj, "kind");
        if (!kind || strcmp(kind, "List")) {
            check_one(w, file, doc->line, doc->obj);
            continue;
        }
        json_object *items = jarr(doc->obj, "items");
        for (size_t i = 0; i < jlen(items); i++)
            check_one(w, file, inject_item_line(doc, i), json_object_array_get_idx(items, i));
    }
}

int cmd_validate(int argc, char **argv) {
    opts o;
    int prc = parse_args(argc, argv, &o), rc = 1;
    if (prc) {
        cli_input_free(&o.in);
        return prc < 0 ? 0 : prc;
    }
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    inject_input in = {0}, res = {0};
    json_object *stored = jnew_obj();
    char err[512];
    if (o.config && cli_load_settings(&cfg, o.config, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        goto out;
    }
    if (o.in.ndirs && inject_input_read(&res, o.in.dirs, o.in.ndirs, false) != 0) goto out; /* said on stderr */
    index_stored(&res, o.ns, stored);
    int read_rc = inject_input_read(&in, o.in.files, o.in.nfiles, o.in.recursive);
    walk w = {.o = &o, .in = &in, .settings = &cfg, .stored = stored};
    walk_all(&w);
    printf("%zu objects checked: %zu refused, %zu with warnings\n", w.checked, w.refused, w.warned);
    rc = read_rc != 0 || w.refused ? 1 : 0;
    if (fflush(stdout) != 0) rc = 1;
out:
    json_object_put(stored);
    inject_input_free(&in);
    inject_input_free(&res);
    mutate_settings_free(&cfg);
    cli_input_free(&o.in);
    return rc;
}
