/* mutate/sidecar.c - the collector sidecar (spec 4): which collector, and
 * what it adds to the pod.
 *
 * The container itself comes from collector/container.c, the builder
 * otel-reconcile's workloads use too, with the whole (defaulted) config
 * inlined as YAML in OTEL_CONFIG, built once per collector version when
 * the request carries a cache (cache.c); this file adds what depends on the
 * pod (the resource-attribute env, the injected label) and places the parts.
 * Native sidecars (an init container with restartPolicy: Always,
 * Kubernetes 1.29+) start before the application's containers and stop
 * after them; the legacy form is a plain container appended to the pod.
 *
 * Selection failures (none, several, wrong mode, not found) skip the sidecar
 * with a warning and never affect the instrumentation (spec 7.11, 7.12). */
#include "mutate/internal.h"

#include "base/sbuf.h"
#include "collector/container.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sc_pick {
    json_object *found;
    size_t count;
} sc_pick;

static bool is_sidecar(json_object *col) {
    const char *mode = jstr(jget(col, "spec"), "mode");
    return mode && strcmp(mode, "sidecar") == 0;
}

static void count_sidecar(void *arg, json_object *obj) {
    sc_pick *p = arg;
    if (!is_sidecar(obj)) return;
    if (!p->found) p->found = obj;
    p->count++;
}

static json_object *select_collector(mctx *m, const char *value) {
    const kube_reader *src = m->req->src;
    if (streq_ci(value, "true")) {
        sc_pick p = {0};
        if (!src || src->each(src->ud, "OpenTelemetryCollector", m->ns, count_sidecar, &p) != KUBE_FOUND) {
            mctx_warn(m, "sidecar: the collectors of namespace %s could not be listed; sidecar not injected", m->ns);
            mctx_skip(m, MUTATE_SKIP_LOOKUP);
            return NULL;
        }
        if (p.count == 1) return p.found;
        if (!p.count)
            mctx_warn(m, "sidecar: no OpenTelemetryCollector in sidecar mode in namespace %s; sidecar not injected", m->ns);
        else
            mctx_warn(m, "sidecar: %zu OpenTelemetryCollectors in sidecar mode in namespace %s, name one "
                         "(sidecar.opentelemetry.io/inject: <name>); sidecar not injected", p.count, m->ns);
        mctx_skip(m, MUTATE_SKIP_AMBIGUOUS);
        return NULL;
    }
    char *ns, *name;
    split_ref(m, value, &ns, &name);
    json_object *col = NULL;
    kube_found r = src ? src->get(src->ud, "OpenTelemetryCollector", ns, name, &col) : KUBE_NOT_FOUND;
    if (r != KUBE_FOUND || !col) {
        mctx_warn(m, "sidecar: OpenTelemetryCollector %s/%s %s; sidecar not injected", ns, name,
                  r == KUBE_UNKNOWN ? "could not be read" : "not found");
        mctx_skip(m, r == KUBE_UNKNOWN ? MUTATE_SKIP_LOOKUP : MUTATE_SKIP_NOT_FOUND);
        col = NULL;
    } else if (!is_sidecar(col)) {
        const char *mode = jstr(jget(col, "spec"), "mode");
        mctx_warn(m, "sidecar: OpenTelemetryCollector %s/%s has mode %s, not sidecar; sidecar not injected", ns, name,
                  mode ? mode : "deployment");
        mctx_skip(m, MUTATE_SKIP_INVALID);
        col = NULL;
    }
    free(ns);
    free(name);
    return col;
}

/* The resource attributes of the pod (spec 4.3 step 4), unless the
 * collector's env sets OTEL_RESOURCE_ATTRIBUTES itself. */
static void resource_env(mctx *m, json_object *env) {
    if (jw_find_named(env, "OTEL_RESOURCE_ATTRIBUTES", NULL)) return;

    jpush(env, cache_const(m->req->cache, CACHE_CONST_POD_NAME, env_const_field));
    jpush(env, cache_const(m->req->cache, CACHE_CONST_POD_UID, env_const_field));
    jpush(env, cache_const(m->req->cache, CACHE_CONST_NODE_NAME, env_const_field));
    /* The reference considers ReplicaSet -> Deployment only (spec 4.3), from
     * fetched objects; the owner references carry the same names and uids,
     * and a Deployment known without its ReplicaSet (offline) still counts. */
    const owner_info *o = owners_walk(m);
    const char *kv[8][2] = {
        {"k8s.deployment.name", o->name[OWNER_DEPLOYMENT]}, {"k8s.deployment.uid", o->uid[OWNER_DEPLOYMENT]},
        {"k8s.namespace.name", m->ns},
        {"k8s.node.name", "$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME)"},
        {"k8s.pod.name", "$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME)"},
        {"k8s.pod.uid", "$(OTEL_RESOURCE_ATTRIBUTES_POD_UID)"},
        {"k8s.replicaset.name", o->name[OWNER_REPLICASET]}, {"k8s.replicaset.uid", o->uid[OWNER_REPLICASET]},
    };
    sbuf list = SBUF_INIT;
    for (int i = 0; i < 8; i++) { /* already in key order */
        if (!kv[i][1] || !*kv[i][1]) continue;
        if (list.len) sbuf_putc(&list, ',');
        sbuf_puts(&list, kv[i][0]);
        sbuf_putc(&list, '=');
        sbuf_puts(&list, kv[i][1]);
    }
    char *text = sbuf_take(&list, NULL);
    jpush(env, env_new_value("OTEL_RESOURCE_ATTRIBUTES", text));
    free(text);
}

static void set_label(mctx *m, const char *cns, const char *cname) {
    /* <namespace>.<name>, at most 63 characters, cutting the namespace first. */
    char label[128];
    size_t nl = strlen(cname), keep = nl + 1 < 63 ? 63 - nl - 1 : 0;
    if (keep) snprintf(label, sizeof label, "%.*s.%s", (int)(strlen(cns) < keep ? strlen(cns) : keep), cns, cname);
    else snprintf(label, sizeof label, "%.63s", cname);
    label[63] = 0;
    size_t a = 0, b = strlen(label);
    while (a < b && !isalnum((unsigned char)label[a])) a++;
    while (b > a && !isalnum((unsigned char)label[b - 1])) b--;
    label[b] = 0;
    json_object *labels = jget(m->meta, "labels");
    if (!json_object_is_type(labels, json_type_object)) {
        labels = jnew_obj();
        jset(m->meta, "labels", labels);
    }
    jset(labels, LABEL_SIDECAR_INJECTED, jnew_str(label + a));
}

static void remove_named(json_object *arr, const char *name) {
    size_t idx;
    while (jw_find_named(arr, name, &idx)) json_object_array_del_idx(arr, idx, 1);
}

void sidecar_run(mctx *m) {
    const char *v = resolve_annotation(m, ANN(SIDECAR_INJECT));
    if (!*v) return;
    json_object *cs = jget(m->spec, "containers"), *inits = jget(m->spec, "initContainers");
    if (streq_ci(v, "false")) {
        remove_named(cs, SIDECAR_NAME);
        if (m->opt->native_sidecars) remove_named(inits, SIDECAR_NAME);
        return;
    }
    /* Both places count, whatever the mode: a pod injected in one mode and
     * seen again after a switch must not get a second collector. */
    if (jw_find_named(cs, SIDECAR_NAME, NULL) || jw_find_named(inits, SIDECAR_NAME, NULL)) {
        mctx_skip(m, MUTATE_SKIP_ALREADY_INSTRUMENTED);
        return;
    }
    json_object *col = select_collector(m, v);
    if (!col) return;
    const char *cname = jw_str(jget(col, "metadata"), "name"), *cns = jstr(jget(col, "metadata"), "namespace");
    if (!cns) cns = m->ns;
    collector_build_opts o = {.target = COLLECTOR_SIDECAR, .default_image = m->opt->collector_image,
                              .native = m->opt->native_sidecars, .proxy_env = m->opt->proxy_env,
                              .nproxy_env = m->opt->nproxy_env};
    collector_pod part;
    json_object *use;
    char err[256] = "";
    if (cache_collector_part(m->req->cache, col, &o, &part, &use, err, sizeof err) != 0) {
        mctx_warn(m, "sidecar: OpenTelemetryCollector %s/%s: %s; sidecar not injected", cns, cname, err);
        mctx_skip(m, MUTATE_SKIP_INVALID);
        return;
    }
    resource_env(m, jw_get(part.container, "env"));

    /* Volumes whose names the pod already has are skipped: two volumes of
     * one name make the API server refuse the pod (spec 7.32). */
    json_object *vols = jarr_at(m->spec, "volumes");
    for (size_t i = 0; i < jlen(part.volumes); i++) {
        json_object *pv = json_object_array_get_idx(part.volumes, i);
        const char *name = jw_str(pv, "name");
        if (name && !jw_find_named(vols, name, NULL)) jpush(vols, json_object_get(pv));
    }
    if (!jlen(vols)) json_object_object_del(m->spec, "volumes");

    /* The collector's init containers first (both modes), then a native
     * sidecar after them. */
    json_object *pinits = jlen(part.init_containers) || o.native ? jarr_at(m->spec, "initContainers") : NULL;
    for (size_t i = 0; i < jlen(part.init_containers); i++)
        jpush(pinits, json_object_get(json_object_array_get_idx(part.init_containers, i)));
    jpush(o.native ? pinits : jarr_at(m->spec, "containers"), json_object_get(part.container));
    collector_pod_free(&part);
    set_label(m, cns, cname ? cname : "");
    m->res->sidecar = true;
    if (use) record_use_push(m, use);
    else record_use(m, MUTATE_NLANGS, col);
}
