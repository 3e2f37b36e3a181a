/* mutate/optin.c - which languages a pod asks for, from which Instrumentation,
 * into which containers (spec 1).
 *
 * The reference aborts the whole mutation on the first lookup error and
 * treats a few conditions as silent debug logs (spec 7.11, 7.12). Here each
 * language is decided on its own: a language that cannot be resolved is
 * dropped with a warning naming the annotation and the cause, and the other
 * languages (and the sidecar, decided earlier) go ahead. */
#include "mutate/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const display[MUTATE_NLANGS] = {
    "Java", "NodeJS", "Python", ".NET", "Go", "Apache HTTPD", "Nginx", "SDK",
};

static const char *const init_names[] = {
    "opentelemetry-auto-instrumentation-dotnet", "opentelemetry-auto-instrumentation-java",
    "opentelemetry-auto-instrumentation-nodejs", "opentelemetry-auto-instrumentation-python",
    "otel-agent-attach-apache", "otel-agent-source-container-clone", "otel-agent-attach-nginx", NULL,
};

/* Spec 1.8, widened so that every pod we mutated is recognised (spec 7.26):
 * the pod-name helper variable is written into every instrumented container,
 * init containers and SDK-only targets included. One pass over each list,
 * both variables looked up together: the answer is the or of the checks,
 * which read nothing else, so their order does not matter. */
bool already_instrumented(mctx *m) {
    static const char *const vars[2] = {"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "OTEL_RESOURCE_ATTRIBUTES_POD_NAME"};
    json_object *inits = jget(m->spec, "initContainers"), *cs = jget(m->spec, "containers"), *found[2];
    size_t ni = jlen(inits), nc = jlen(cs); /* 0 for a list that is not one: nothing found in it */
    for (int i = 0; ni && init_names[i]; i++)
        if (jw_find_named(inits, init_names[i], NULL)) return true;
    for (size_t i = 0; i < nc; i++) {
        json_object *c = json_object_array_get_idx(cs, i);
        const char *name = jw_str(c, "name");
        if (name && strcmp(name, "opentelemetry-auto-instrumentation") == 0) return true;
        if (name && strcmp(name, SIDECAR_NAME) == 0) continue;
        env_find_many(c, vars, 2, found);
        if (found[0] || found[1]) return true;
    }
    for (size_t i = 0; i < ni; i++) {
        json_object *c = json_object_array_get_idx(inits, i);
        const char *name = jw_str(c, "name");
        if (name && strcmp(name, SIDECAR_NAME) == 0) continue;
        if (env_find(c, vars[1], NULL)) return true;
    }
    return false;
}

typedef struct pick {
    json_object *found;
    size_t count;
} pick;

static void count_one(void *arg, json_object *obj) {
    pick *p = arg;
    if (!p->found) p->found = obj;
    p->count++;
}

/* Resolves an inject-<lang> value to an Instrumentation; NULL with a warning
 * when it cannot. */
static json_object *find_instrumentation(mctx *m, const mutate_lang_id id, const char *value) {
    const char *ann = mutate_lang_name(id);
    const kube_reader *src = m->req->src;
    if (streq_ci(value, "true")) {
        pick p = {0};
        if (!src || src->each(src->ud, "Instrumentation", m->ns, count_one, &p) != KUBE_FOUND) {
            mctx_warn(m, "inject-%s: the Instrumentations of namespace %s could not be listed; %s not injected",
                      ann, m->ns, display[id]);
            mctx_skip(m, MUTATE_SKIP_LOOKUP);
            return NULL;
        }
        if (p.count == 1) return p.found;
        if (p.count == 0)
            mctx_warn(m, "inject-%s: no Instrumentation in namespace %s; %s not injected", ann, m->ns, display[id]);
        else
            mctx_warn(m, "inject-%s: %zu Instrumentations in namespace %s, name one (inject-%s: <name>); %s not injected",
                      ann, p.count, m->ns, ann, display[id]);
        mctx_skip(m, MUTATE_SKIP_AMBIGUOUS);
        return NULL;
    }
    char *ns, *name;
    split_ref(m, value, &ns, &name);
    json_object *obj = NULL;
    kube_found r = src ? src->get(src->ud, "Instrumentation", ns, name, &obj) : KUBE_NOT_FOUND;
    if (r == KUBE_FOUND && obj) {
        free(ns);
        free(name);
        return obj;
    }
    if (r == KUBE_UNKNOWN) {
        mctx_warn(m, "inject-%s: Instrumentation %s/%s could not be read; %s not injected", ann, ns, name, display[id]);
        mctx_skip(m, MUTATE_SKIP_LOOKUP);
    } else {
        mctx_warn(m, "inject-%s: Instrumentation %s/%s not found; %s not injected", ann, ns, name, display[id]);
        mctx_skip(m, MUTATE_SKIP_NOT_FOUND);
    }
    free(ns);
    free(name);
    return NULL;
}

/* Splits a container-names value. Spaces around names are trimmed (the
 * reference rejects "a, b" and aborts the whole mutation, spec 7.12); what
 * is left must match the reference's ^[a-zA-Z0-9-,]+$. */
static bool split_names(const char *value, char ***out, size_t *n) {
    *out = NULL;
    *n = 0;
    const char *p = value;
    while (*p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && isspace((unsigned char)*a)) a++;
        while (b > a && isspace((unsigned char)b[-1])) b--;
        for (const char *q = a; q < b; q++)
            if (!isalnum((unsigned char)*q) && *q != '-') goto bad;
        if (b > a) {
            char **v = xrealloc(*out, sizeof *v * (*n + 1));
            *out = v;
            v[(*n)++] = xstrndup(a, (size_t)(b - a));
        }
        p = comma ? comma + 1 : end;
    }
    return true;
bad:
    for (size_t i = 0; i < *n; i++) free((*out)[i]);
    free(*out);
    *out = NULL;
    *n = 0;
    return false;
}

static void names_append(lctx *l, char **names, size_t n) {
    if (!n) return;
    char **v = xrealloc(l->names, sizeof *v * (l->nnames + n));
    l->names = v;
    for (size_t i = 0; i < n; i++) v[l->nnames++] = xstrdup(names[i]);
}

static void names_free(char **names, size_t n) {
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Removes repeated names in place; the repeated ones, sorted and separated
 * by spaces, go into dup for the message. Returns how many distinct names
 * were repeated. */
static size_t dedupe(lctx *l, char *dup, size_t duplen) {
    size_t w = 0, ndup = 0, off = 0;
    const char **d = xmalloc(sizeof *d * (l->nnames ? l->nnames : 1));
    for (size_t i = 0; i < l->nnames; i++) {
        size_t j = 0, k = 0;
        while (j < w && strcmp(l->names[j], l->names[i]) != 0) j++;
        if (j == w) { l->names[w++] = l->names[i]; continue; }
        while (k < ndup && d[k] != l->names[j]) k++;
        if (k == ndup) d[ndup++] = l->names[j];
        free(l->names[i]);
    }
    l->nnames = w;
    qsort(d, ndup, sizeof *d, cmp_str);
    dup[0] = 0;
    for (size_t k = 0; k < ndup && off < duplen; k++)
        off += (size_t)snprintf(dup + off, duplen - off, "%s%s", k ? " " : "", d[k]);
    free(d);
    return ndup;
}

void optin_instrumentation(mctx *m) {
    lctx langs[MUTATE_NLANGS];
    size_t nsel = 0;
    memset(langs, 0, sizeof langs);

    bool asked = false;
    for (int id = 0; id < MUTATE_NLANGS; id++) {
        const char *v = lang_annotation(m, id);
        if (*v && !streq_ci(v, "false")) asked = true;
    }
    if (!asked) return;
    if (already_instrumented(m)) {
        mctx_skip(m, MUTATE_SKIP_ALREADY_INSTRUMENTED);
        return;
    }
    if (jlen(jget(m->spec, "containers")) == 0) {
        mctx_warn(m, "the pod has no containers; nothing instrumented");
        mctx_skip(m, MUTATE_SKIP_INVALID);
        return;
    }

    for (int id = 0; id < MUTATE_NLANGS; id++) {
        const char *v = lang_annotation(m, id);
        if (!*v || streq_ci(v, "false")) continue;
        const mutate_lang *lang = mutate_lang_get(id);
        if (!lang || !(m->opt->implemented & MUTATE_BIT(id))) {
            mctx_warn(m, "inject-%s: %s auto instrumentation is not available in this version of otel-webhook; "
                         "not injected", mutate_lang_name(id), display[id]);
            mctx_skip(m, MUTATE_SKIP_DISABLED);
            continue;
        }
        json_object *inst = find_instrumentation(m, id, v);
        if (!inst) continue;
        if (!(m->opt->enabled & MUTATE_BIT(id)) && id != MUTATE_SDK) {
            mctx_warn(m, "support for %s auto instrumentation is not enabled", display[id]);
            mctx_skip(m, MUTATE_SKIP_DISABLED);
            continue;
        }
        lctx *l = &langs[nsel++];
        l->m = m;
        l->lang = lang;
        l->inst = inst;
        /* jw_*: the Instrumentation's few members walked, not hashed. */
        l->ispec = jw_get(inst, "spec");
        l->lspec = jw_get(l->ispec, lang->spec_key);
        l->inst_ns = jw_str(jw_get(inst, "metadata"), "namespace");
        if (!l->inst_ns) l->inst_ns = m->ns;
    }
    if (!nsel) return;

    /* Container lists (spec 1.6). */
    char **generic = NULL;
    size_t ngeneric = 0;
    const char *gv = resolve_annotation(m, ANN(CONTAINER_NAMES));
    if (*gv && !split_names(gv, &generic, &ngeneric)) {
        mctx_warn(m, "container-names: invalid characters in \"%s\" (expected names separated by commas); "
                     "nothing instrumented", gv);
        mctx_skip(m, MUTATE_SKIP_INVALID);
        goto out;
    }
    for (size_t i = 0; i < nsel; i++) names_append(&langs[i], generic, ngeneric);

    /* TLS objects must exist (spec 3.5); a missing one drops that language. */
    for (size_t i = 0; i < nsel; i++)
        if (!sdk_tls_check(&langs[i])) langs[i].lang = NULL;

    if (m->opt->multi_instrumentation) {
        size_t with = 0, without = 0;
        for (size_t i = 0; i < nsel; i++) {
            lctx *l = &langs[i];
            if (!l->lang) continue;
            char key[ANN_KEY_MAX];
            const char *lv = resolve_annotation(m, ann_lang_key(key, l->lang->id, true));
            char **ln = NULL;
            size_t nln = 0;
            if (*lv && !split_names(lv, &ln, &nln)) {
                mctx_warn(m, "%s-container-names: invalid characters in \"%s\"; %s not injected",
                          mutate_lang_name(l->lang->id), lv, display[l->lang->id]);
                mctx_skip(m, MUTATE_SKIP_INVALID);
                l->lang = NULL;
                continue;
            }
            names_append(l, ln, nln);
            names_free(ln, nln);
            char dup[512];
            if (dedupe(l, dup, sizeof dup)) {
                mctx_warn(m, "duplicated container names detected: [%s]; nothing instrumented", dup);
                mctx_skip(m, MUTATE_SKIP_INVALID);
                goto out;
            }
            if (l->nnames) with++;
            else without++;
        }
        if ((with && without) || without > 1) {
            mctx_warn(m, "incorrect instrumentation configuration - please provide container names for all "
                         "instrumentations; nothing instrumented");
            mctx_skip(m, MUTATE_SKIP_INVALID);
            goto out;
        }
    } else {
        /* Injecting twice into one container duplicates its mounts and the
         * API server rejects the pod (spec 7.10): repeated names count once. */
        for (size_t i = 0; i < nsel; i++) {
            char dup[512];
            if (langs[i].lang && dedupe(&langs[i], dup, sizeof dup))
                mctx_warn(m, "container-names lists [%s] more than once; each container is instrumented once", dup);
        }
    }

    for (size_t i = 0; i < nsel; i++) {
        lctx *l = &langs[i];
        if (!l->lang) continue;
        if (l->lang->id == MUTATE_PYTHON) {
            l->platform = resolve_annotation(m, ANN(PYTHON_PLATFORM));
            const char *mode = resolve_annotation(m, ANN(PYTHON_MODE));
            if (!*mode) l->entrypoint = m->opt->python_mode == MUTATE_PYTHON_ENTRYPOINT;
            else if (strcmp(mode, "entrypoint") == 0) l->entrypoint = true;
            else if (strcmp(mode, "pythonpath") == 0) l->entrypoint = false;
            else {
                mctx_warn(m, "python-mode: unknown value \"%s\" (expected entrypoint or pythonpath); using pythonpath", mode);
                l->entrypoint = false;
            }
        } else if (l->lang->id == MUTATE_DOTNET) {
            l->platform = resolve_annotation(m, ANN(DOTNET_RUNTIME));
        }
        lang_run(l); /* and record_use when it injected */
    }
out:
    for (size_t i = 0; i < nsel; i++) names_free(langs[i].names, langs[i].nnames);
    names_free(generic, ngeneric);
}
