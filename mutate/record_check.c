/* mutate/record_check.c - whether a status record proves itself against its
 * pod (record.h: mutate_record_check), before anything reads it as true.
 *
 * The record is an annotation: data from the pod's author, who may write
 * anything into it. It is trusted only as far as it has the shape of what
 * an injection does and matches the pod it is on:
 *   - what it says was added (containers, init containers, volumes, env
 *     entries, mounts) is ours: our container names (the sidecar, the Go
 *     container, the per-language init containers), our volume names, our
 *     variables (OTEL_*, the language ones); a name outside those only
 *     where the record proves an injection otherwise (a collector's own
 *     init containers and volumes beside the sidecar it removes, an
 *     Instrumentation's env beside our variables in the same container);
 *     each one is in the pod, with the image the record gives;
 *   - what it says was there before (envWas, was, removed) is of the shape
 *     injection replaces and never adds privileges, host access, a service
 *     account or a namespace: the original entries of the variables we
 *     rewrite, a Python command one launcher shorter, mounts the pod still
 *     has, the sidecar container or our volumes without privileged
 *     securityContext, host ports or hostPath; JSON pointers only to the
 *     fields injection itself sets (our label, the record, the lists it
 *     created), with the values it would have found there.
 * Anything else is refused whole, with the field at fault named: the
 * webhook then injects as if the pod had no record, uninject leaves the
 * object as it is, explain and outdated say so. Read-only, linear in the
 * record and the pod (lists indexed once). */
#include "mutate/record.h"

#include "base/alloc.h"
#include "base/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIDECAR "otc-container"
#define GO_CONTAINER "opentelemetry-auto-instrumentation"
#define OUR_LABEL "sidecar.opentelemetry.io/injected"
#define PY_LAUNCHER "/otel-auto-instrumentation-python/bin/opentelemetry-instrument" /* lang_python.c */

static bool prefixed(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static bool our_container(const char *n) { return !strcmp(n, SIDECAR) || !strcmp(n, GO_CONTAINER); }

static bool our_init(const char *n) {
    return !strcmp(n, SIDECAR) || prefixed(n, GO_CONTAINER "-") || prefixed(n, "otel-agent-");
}

static bool our_volume(const char *n) {
    static const char *const p[] = {"opentelemetry-auto-instrumentation-", "otel-auto-secret-", "otel-auto-configmap-",
                                    "otel-apache-", "otel-nginx-", NULL};
    for (int i = 0; p[i]; i++)
        if (prefixed(n, p[i])) return true;
    return !strcmp(n, "kernel-debug");
}

/* The variables injection sets or rewrites itself, whatever the
 * Instrumentation says. */
static bool our_env(const char *n) {
    static const char *const exact[] = {"JAVA_TOOL_OPTIONS", "NODE_OPTIONS", "PYTHONPATH", "LD_LIBRARY_PATH",
                                        "LD_PRELOAD", NULL};
    for (int i = 0; exact[i]; i++)
        if (!strcmp(n, exact[i])) return true;
    return prefixed(n, "OTEL_") || prefixed(n, "CORECLR_") || prefixed(n, "DOTNET_");
}

typedef struct sset {
    const char **v;
    size_t n;
} sset;

static int scmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void sset_sort(sset *s) {
    if (s->n > 1) qsort(s->v, s->n, sizeof *s->v, scmp);
}

static bool sset_has(const sset *s, const char *k) {
    return k && s->n && bsearch(&k, s->v, s->n, sizeof *s->v, scmp) != NULL;
}

/* The strings of a record array (checked to be strings beforehand). */
static sset strings_of(json_object *arr) {
    sset s = {xmalloc(sizeof *s.v * (jlen(arr) ? jlen(arr) : 1)), 0};
    for (size_t i = 0; i < jlen(arr); i++) s.v[s.n++] = json_object_get_string(json_object_array_get_idx(arr, i));
    sset_sort(&s);
    return s;
}

static bool sset_unique(const sset *s, const char **dup) {
    for (size_t i = 1; i < s->n; i++)
        if (!strcmp(s->v[i - 1], s->v[i])) {
            *dup = s->v[i];
            return false;
        }
    return true;
}

/* The pod's list elements by a string field. */
static sset names_of(json_object *arr, const char *key) {
    sset s = {xmalloc(sizeof *s.v * (jlen(arr) ? jlen(arr) : 1)), 0};
    for (size_t i = 0; i < jlen(arr); i++) {
        const char *n = jstr(json_object_array_get_idx(arr, i), key);
        if (n) s.v[s.n++] = n;
    }
    sset_sort(&s);
    return s;
}

typedef struct rcheck {
    json_object *pod, *spec, *rec;
    char *err;
    size_t errlen;
    bool sidecar, go;     /* the record removes the collector sidecar, the Go container */
    sset vols;            /* volumes the record removes */
    sset conts, inits;    /* containers, init containers it removes */
} rcheck;

__attribute__((format(printf, 2, 3))) static bool fail(rcheck *c, const char *fmt, ...) {
    int n = snprintf(c->err, c->errlen, "the record's ");
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < c->errlen) vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

/* ---- types -------------------------------------------------------------- */

static bool all_of(json_object *arr, json_type t) {
    for (size_t i = 0; i < jlen(arr); i++)
        if (!json_object_is_type(json_object_array_get_idx(arr, i), t)) return false;
    return true;
}

static bool typed(rcheck *c, json_object *o, const char *const *keys, json_type elem, const char *at) {
    for (int i = 0; keys[i]; i++) {
        json_object *v = jget(o, keys[i]);
        if (v && (!json_object_is_type(v, json_type_array) || !all_of(v, elem)))
            return fail(c, "%s%s is not what otel-webhook writes", at, keys[i]);
    }
    return true;
}

static bool shapes(rcheck *c) {
    static const char *const strs[] = {"containers", "initContainers", "volumes", "unset", NULL};
    static const char *const objs[] = {"into", "removed", NULL};
    if (!typed(c, c->rec, strs, json_type_string, "") || !typed(c, c->rec, objs, json_type_object, "")) return false;
    json_object *was = jget(c->rec, "was"), *img = jget(c->rec, "images");
    if (was && !json_object_is_type(was, json_type_object)) return fail(c, "was is not what otel-webhook writes");
    if (img && !json_object_is_type(img, json_type_object)) return fail(c, "images is not what otel-webhook writes");
    json_object *into = jarr(c->rec, "into");
    for (size_t i = 0; i < jlen(into); i++) {
        json_object *e = json_object_array_get_idx(into, i);
        char at[32];
        snprintf(at, sizeof at, "into[%zu].", i);
        static const char *const es[] = {"env", "envOrder", "volumeMounts", "unset", NULL};
        static const char *const eo[] = {"envWas", NULL};
        if (!jstr(e, "name")) return fail(c, "into[%zu].name is not what otel-webhook writes", i);
        if (!typed(c, e, es, json_type_string, at) || !typed(c, e, eo, json_type_object, at)) return false;
        json_object *w = jget(e, "was");
        if (w && !json_object_is_type(w, json_type_object)) return fail(c, "into[%zu].was is not what otel-webhook writes", i);
    }
    return true;
}

/* ---- what it says was added ------------------------------------------- */

static bool added(rcheck *c, const char *key, json_object *arr, bool (*ours)(const char *), bool collector, sset *out,
                  const char *what) {
    json_object *names = jarr(c->rec, key), *images = jmap(c->rec, "images");
    *out = strings_of(names);
    const char *dup;
    if (!sset_unique(out, &dup)) return fail(c, "%s names %s twice", key, dup);
    for (size_t i = 0; i < jlen(names); i++) {
        const char *n = json_object_get_string(json_object_array_get_idx(names, i));
        if (!ours(n) && !collector) return fail(c, "%s[%zu]: %s is not %s otel-webhook adds", key, i, n, what);
        size_t at;
        json_object *e = jfind_named(arr, n, &at);
        if (!e) {
            snprintf(c->err, c->errlen, "the record names the %s %s, which the pod does not have",
                     !strcmp(key, "volumes") ? "volume" : !strcmp(key, "containers") ? "container" : "init container", n);
            return false;
        }
        const char *want = jstr(images, n), *has = jstr(e, "image");
        if (want && has && strcmp(want, has))
            return fail(c, "images.%s is %s, but the pod's %s runs %s", n, want, n, has);
    }
    return true;
}

/* A container the record says was added, or that stays. */
static bool removed_container(rcheck *c, json_object *cont, bool init) {
    const char *n = jstr(cont, "name");
    return n && sset_has(init ? &c->inits : &c->conts, n);
}

/* Every mount of a removed volume goes with what uninject removes. */
static bool volumes_unused(rcheck *c) {
    static const char *const lists[] = {"containers", "initContainers", "ephemeralContainers", NULL};
    json_object *into = jarr(c->rec, "into");
    for (int l = 0; lists[l]; l++) {
        json_object *arr = jarr(c->spec, lists[l]);
        for (size_t i = 0; i < jlen(arr); i++) {
            json_object *cont = json_object_array_get_idx(arr, i);
            if (l < 2 && removed_container(c, cont, l == 1)) continue;
            json_object *mounts = jarr(cont, "volumeMounts"), *gone = NULL;
            for (size_t k = 0; k < jlen(into); k++) {
                json_object *e = json_object_array_get_idx(into, k);
                if (l < 2 && !strcmp(jstr(e, "name"), jstr(cont, "name") ? jstr(cont, "name") : "") &&
                    jbool(e, "init") == (l == 1))
                    gone = jarr(e, "volumeMounts");
            }
            sset g = strings_of(gone);
            bool ok = true;
            for (size_t m = 0; m < jlen(mounts) && ok; m++) {
                json_object *mt = json_object_array_get_idx(mounts, m);
                const char *v = jstr(mt, "name"), *p = jstr(mt, "mountPath");
                if (v && sset_has(&c->vols, v) && !sset_has(&g, p))
                    ok = fail(c, "volumes names %s, which the container %s still mounts at %s", v,
                              jstr(cont, "name") ? jstr(cont, "name") : "?", p ? p : "?");
            }
            free(g.v);
            if (!ok) return false;
        }
    }
    return true;
}

/* ---- per existing container --------------------------------------------- */

static bool env_entry(json_object *e) {
    if (!json_object_is_type(e, json_type_object) || !jstr(e, "name")) return false;
    json_object_object_foreach(e, k, v) {
        if (!strcmp(k, "name")) continue;
        if (!strcmp(k, "value") && json_object_is_type(v, json_type_string)) continue;
        if (!strcmp(k, "valueFrom") && json_object_is_type(v, json_type_object)) continue;
        return false;
    }
    return true;
}

static json_object *same_in(json_object *arr, json_object *v) {
    for (size_t i = 0; i < jlen(arr); i++)
        if (json_object_equal(json_object_array_get_idx(arr, i), v)) return json_object_array_get_idx(arr, i);
    return NULL;
}

static bool into_one(rcheck *c, json_object *e, size_t i) {
    const char *name = jstr(e, "name");
    bool init = jbool(e, "init");
    json_object *cont = jfind_named(jarr(c->spec, init ? "initContainers" : "containers"), name, NULL);
    if (!cont) {
        snprintf(c->err, c->errlen, "the record names the %s %s, which the pod does not have",
                 init ? "init container" : "container", name);
        return false;
    }
    json_object *env = jarr(cont, "env"), *mounts = jarr(cont, "volumeMounts");
    sset en = names_of(env, "name");
    bool ok = true, proof = false;
    json_object *names = jarr(e, "env"), *paths = jarr(e, "volumeMounts");
    for (size_t k = 0; k < jlen(paths) && ok; k++) {
        const char *p = json_object_get_string(json_object_array_get_idx(paths, k));
        json_object *m = NULL;
        for (size_t x = 0; x < jlen(mounts) && !m; x++) {
            json_object *mt = json_object_array_get_idx(mounts, x);
            if (!strcmp(jstr(mt, "mountPath") ? jstr(mt, "mountPath") : "", p)) m = mt;
        }
        const char *v = jstr(m, "name");
        if (!m) ok = fail(c, "into[%zu].volumeMounts names %s, which the container %s does not mount", i, p, name);
        else if (!v || (!sset_has(&c->vols, v) && !our_volume(v)))
            ok = fail(c, "into[%zu].volumeMounts[%zu]: %s mounts %s, not a volume otel-webhook adds", i, k, p, v ? v : "?");
        else proof = true;
    }
    for (size_t k = 0; k < jlen(names) && ok; k++) {
        const char *n = json_object_get_string(json_object_array_get_idx(names, k));
        if (!sset_has(&en, n)) ok = fail(c, "into[%zu].env names %s, which the container %s does not have", i, n, name);
        else if (our_env(n)) proof = true;
    }
    /* An Instrumentation's own variables (any name) only beside ours. */
    for (size_t k = 0; k < jlen(names) && ok && !proof; k++) {
        const char *n = json_object_get_string(json_object_array_get_idx(names, k));
        ok = fail(c, "into[%zu].env[%zu]: %s is not a variable otel-webhook sets", i, k, n);
    }
    json_object *was = jarr(e, "envWas");
    for (size_t k = 0; k < jlen(was) && ok; k++) {
        json_object *w = json_object_array_get_idx(was, k);
        const char *n = jstr(w, "name");
        if (!n || !env_entry(w) || jget(w, "valueFrom"))
            ok = fail(c, "into[%zu].envWas[%zu] is not an entry otel-webhook rewrites", i, k);
        else if (!our_env(n)) ok = fail(c, "into[%zu].envWas[%zu]: %s is not a variable otel-webhook rewrites", i, k, n);
        else if (!sset_has(&en, n)) ok = fail(c, "into[%zu].envWas names %s, which the container %s does not have", i, n, name);
    }
    json_object *unset = jarr(e, "unset");
    for (size_t k = 0; k < jlen(unset) && ok; k++) {
        const char *f = json_object_get_string(json_object_array_get_idx(unset, k));
        if (strcmp(f, "env") && strcmp(f, "volumeMounts"))
            ok = fail(c, "into[%zu].unset[%zu]: %s is not a field otel-webhook adds", i, k, f);
    }
    json_object *fw = jmap(e, "was");
    if (fw && ok) {
        json_object_object_foreach(fw, k, v) {
            if (!ok) break;
            if (!strcmp(k, "command")) {
                /* Python's launcher, put in front of the command. */
                json_object *cmd = jarr(cont, "command");
                bool shorter = json_object_is_type(v, json_type_array) && all_of(v, json_type_string) &&
                               jlen(cmd) == jlen(v) + 1 &&
                               !strcmp(json_object_get_string(json_object_array_get_idx(cmd, 0)) ?
                                           json_object_get_string(json_object_array_get_idx(cmd, 0)) : "",
                                       PY_LAUNCHER);
                for (size_t x = 0; shorter && x < jlen(v); x++)
                    shorter = json_object_equal(json_object_array_get_idx(v, x), json_object_array_get_idx(cmd, x + 1));
                if (!shorter)
                    ok = fail(c, "into[%zu].was.command is not the container's command without the Python launcher "
                                 "in front", i);
            } else if (!strcmp(k, "env")) {
                /* The whole original (names repeated): each entry is still
                 * there as it was, or a variable we rewrite. */
                for (size_t x = 0; ok && x < jlen(v); x++) {
                    json_object *w = json_object_array_get_idx(v, x);
                    if (!json_object_is_type(v, json_type_array) || !env_entry(w))
                        ok = fail(c, "into[%zu].was.env[%zu] is not an env entry", i, x);
                    else if (!same_in(env, w) && (!our_env(jstr(w, "name")) || jget(w, "valueFrom")))
                        ok = fail(c, "into[%zu].was.env[%zu]: %s is not in the container as it was, nor a variable "
                                     "otel-webhook rewrites", i, x, jstr(w, "name"));
                }
                /* null: the pod's env was null (a list_field of record.c) */
                if (ok && v && !json_object_is_type(v, json_type_array)) ok = fail(c, "into[%zu].was.env is not a list", i);
            } else if (!strcmp(k, "volumeMounts")) {
                /* The original mounts: still there, or under a path ours
                 * replaced (a web server's configuration folder). */
                if (v && !json_object_is_type(v, json_type_array)) {
                    ok = fail(c, "into[%zu].was.volumeMounts is not a list", i);
                    break;
                }
                for (size_t x = 0; ok && x < jlen(v); x++) {
                    json_object *w = json_object_array_get_idx(v, x);
                    const char *p = jstr(w, "mountPath"), *vn = jstr(w, "name");
                    bool under = false;
                    for (size_t y = 0; p && y < jlen(paths) && !under; y++) {
                        const char *q = json_object_get_string(json_object_array_get_idx(paths, y));
                        size_t ql = strlen(q);
                        under = !strncmp(p, q, ql) && p[ql] == '/';
                    }
                    if (!same_in(mounts, w) && !(under && vn && !sset_has(&c->vols, vn)))
                        ok = fail(c, "into[%zu].was.volumeMounts[%zu] is not a mount the container %s had", i, x, name);
                }
            } else {
                ok = fail(c, "into[%zu].was.%s: not a field otel-webhook changes; uninject never sets it", i, k);
            }
        }
    }
    free(en.v);
    return ok;
}

/* ---- what it says was taken out ------------------------------------------ */

/* Why a container may not be put back: what injection never removes. */
static const char *privileged(json_object *cont) {
    json_object *sc = jmap(cont, "securityContext");
    int64_t id;
    if (jbool(sc, "privileged")) return "securityContext.privileged";
    if (jbool(sc, "allowPrivilegeEscalation")) return "securityContext.allowPrivilegeEscalation";
    if (jint(sc, "runAsUser", &id) && id == 0) return "securityContext.runAsUser 0";
    if (jint(sc, "runAsGroup", &id) && id == 0) return "securityContext.runAsGroup 0";
    if (jlen(jarr(jmap(sc, "capabilities"), "add"))) return "securityContext.capabilities.add";
    const char *t = jstr(sc, "procMount");
    if (t && strcmp(t, "Default")) return "securityContext.procMount";
    if (jget(sc, "seLinuxOptions")) return "securityContext.seLinuxOptions";
    if ((t = jstr(jmap(sc, "seccompProfile"), "type")) && !strcmp(t, "Unconfined"))
        return "securityContext.seccompProfile Unconfined";
    if ((t = jstr(jmap(sc, "appArmorProfile"), "type")) && !strcmp(t, "Unconfined"))
        return "securityContext.appArmorProfile Unconfined";
    if (jbool(jmap(sc, "windowsOptions"), "hostProcess")) return "securityContext.windowsOptions.hostProcess";
    json_object *ports = jarr(cont, "ports");
    for (size_t i = 0; i < jlen(ports); i++)
        if (jget(json_object_array_get_idx(ports, i), "hostPort")) return "a hostPort";
    return NULL;
}

static bool removed(rcheck *c) {
    json_object *rm = jarr(c->rec, "removed");
    /* Each name put back once: "list/name", sorted, for the duplicates. */
    char **keys = xmalloc(sizeof *keys * (jlen(rm) ? jlen(rm) : 1));
    size_t nk = 0;
    bool ok = true;
    for (size_t i = 0; i < jlen(rm) && ok; i++) {
        json_object *r = json_object_array_get_idx(rm, i);
        if (jstr(r, "list") && jstr(jget(r, "value"), "name"))
            keys[nk++] = xasprintf("%s/%s", jstr(r, "list"), jstr(jget(r, "value"), "name"));
    }
    if (nk > 1) qsort(keys, nk, sizeof *keys, scmp);
    for (size_t i = 1; i < nk && ok; i++)
        if (!strcmp(keys[i - 1], keys[i])) ok = fail(c, "removed puts %s back twice", keys[i]);
    for (size_t i = 0; i < nk; i++) free(keys[i]);
    free(keys);
    if (!ok) return false;
    for (size_t i = 0; i < jlen(rm); i++) {
        json_object *r = json_object_array_get_idx(rm, i), *v = jget(r, "value");
        const char *list = jstr(r, "list"), *n = jstr(v, "name"), *why;
        int64_t at;
        if (!list || (strcmp(list, "containers") && strcmp(list, "initContainers") && strcmp(list, "volumes")))
            return fail(c, "removed[%zu].list is not a list otel-webhook takes elements from", i);
        if (!jint(r, "at", &at) || at < 0 || !json_object_is_type(v, json_type_object) || !n)
            return fail(c, "removed[%zu] is not what otel-webhook writes", i);
        bool vol = !strcmp(list, "volumes");
        /* Injection takes out one container, the sidecar
         * (sidecar.opentelemetry.io/inject: "false"). */
        if (vol ? !our_volume(n) : strcmp(n, SIDECAR) != 0)
            return fail(c, "removed[%zu].value: %s is not %s otel-webhook takes out", i, n, vol ? "a volume" : "a container");
        if (jfind_named(jarr(c->spec, list), n, NULL) && !sset_has(vol ? &c->vols : !strcmp(list, "containers") ? &c->conts : &c->inits, n))
            return fail(c, "removed[%zu].value: the pod has %s already", i, n);
        if (vol && jget(v, "hostPath"))
            return fail(c, "removed[%zu].value: a hostPath volume; uninject never adds one", i);
        if (!vol && (why = privileged(v)))
            return fail(c, "removed[%zu].value: a container with %s; uninject never adds one", i, why);
    }
    return true;
}

/* ---- the pod's own fields ------------------------------------------------ */

/* Whether v holds nothing injection did not put there itself: what unset
 * may take out whole. */
static bool only_ours(json_object *v) {
    if (json_object_is_type(v, json_type_array)) return jlen(v) == 0;
    if (!json_object_is_type(v, json_type_object)) return v == NULL;
    json_object_object_foreach(v, k, m) {
        if (!strcmp(k, MUTATE_RECORD_KEY) || !strcmp(k, OUR_LABEL)) continue;
        if ((!strcmp(k, "annotations") || !strcmp(k, "labels")) && only_ours(m)) continue;
        return false;
    }
    return true;
}

static bool pod_fields(rcheck *c) {
    json_object *unset = jarr(c->rec, "unset");
    for (size_t i = 0; i < jlen(unset); i++) {
        const char *p = json_object_get_string(json_object_array_get_idx(unset, i));
        if (!strcmp(p, "/metadata/labels/sidecar.opentelemetry.io~1injected")) continue;
        if (!strcmp(p, "/spec/shareProcessNamespace")) {
            if (!c->go) return fail(c, "unset[%zu]: %s without the Go container it is for", i, p);
            continue;
        }
        if (!strcmp(p, "/metadata") || !strcmp(p, "/metadata/annotations") || !strcmp(p, "/metadata/labels") ||
            !strcmp(p, "/spec/initContainers") || !strcmp(p, "/spec/volumes"))
            continue; /* that nothing else is in them is uninject's to see, once ours is out */
        return fail(c, "unset[%zu]: %s is not a field otel-webhook adds", i, p);
    }
    json_object *was = jmap(c->rec, "was");
    if (!was) return true;
    json_object_object_foreach(was, p, v) {
        bool str = json_object_is_type(v, json_type_string);
        if (!strcmp(p, "/metadata/labels/sidecar.opentelemetry.io~1injected") && str) continue;
        if (!strcmp(p, "/metadata/annotations/otel-webhook~1status") && str &&
            json_object_get_string_len(v) <= MUTATE_RECORD_MAX_BYTES)
            continue;
        /* A field that was not an object or list (null): injection made one. */
        if (!v && (!strcmp(p, "/metadata") || !strcmp(p, "/metadata/annotations") || !strcmp(p, "/metadata/labels") ||
                   !strcmp(p, "/spec/initContainers") || !strcmp(p, "/spec/volumes")))
            continue;
        return fail(c, "was.%s: not a field otel-webhook changes, or not to that; uninject never sets it", p);
    }
    return true;
}

/* ---- all of it ----------------------------------------------------------- */

bool mutate_record_check(json_object *pod, json_object *rec, char *err, size_t errlen) {
    rcheck c = {.pod = pod, .spec = jmap(pod, "spec"), .rec = rec, .err = err, .errlen = errlen};
    bool ok = shapes(&c);
    if (ok) {
        json_object *cs = jarr(rec, "containers"), *is = jarr(rec, "initContainers");
        for (size_t i = 0; i < jlen(cs); i++) {
            const char *n = json_object_get_string(json_object_array_get_idx(cs, i));
            c.sidecar |= !strcmp(n, SIDECAR);
            c.go |= !strcmp(n, GO_CONTAINER);
        }
        for (size_t i = 0; i < jlen(is); i++) c.sidecar |= !strcmp(json_object_get_string(json_object_array_get_idx(is, i)), SIDECAR);
        bool any = jlen(cs) || jlen(is);
        json_object *into = jarr(rec, "into");
        for (size_t i = 0; i < jlen(into) && !any; i++) {
            json_object *e = json_object_array_get_idx(into, i);
            any = jlen(jarr(e, "env")) || jlen(jarr(e, "envWas")) || jlen(jarr(e, "volumeMounts")) || jmap(e, "was");
        }
        if (!any) ok = fail(&c, "containers, initContainers and into name nothing otel-webhook adds");
    }
    ok = ok && added(&c, "containers", jarr(c.spec, "containers"), our_container, false, &c.conts, "a container") &&
         added(&c, "initContainers", jarr(c.spec, "initContainers"), our_init, c.sidecar, &c.inits, "an init container") &&
         added(&c, "volumes", jarr(c.spec, "volumes"), our_volume, c.sidecar, &c.vols, "a volume") && volumes_unused(&c);
    json_object *into = jarr(rec, "into");
    for (size_t i = 0; ok && i < jlen(into); i++) ok = into_one(&c, json_object_array_get_idx(into, i), i);
    ok = ok && removed(&c) && pod_fields(&c);
    free(c.conts.v);
    free(c.inits.v);
    free(c.vols.v);
    return ok;
}

bool mutate_record_only_ours(json_object *v) { return only_ours(v); }
