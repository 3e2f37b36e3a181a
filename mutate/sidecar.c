/* mutate/sidecar.c - the collector sidecar (spec 4).
 *
 * The container is built from the OpenTelemetryCollector's spec the way the
 * reference builds its collector container, with the whole (defaulted)
 * config inlined as YAML in OTEL_CONFIG. Native sidecars (an init container
 * with restartPolicy: Always, Kubernetes 1.29+) start before the
 * application's containers and stop after them; the legacy form is a plain
 * container appended to the pod.
 *
 * Selection failures (none, several, wrong mode, not found) skip the sidecar
 * with a warning and never affect the instrumentation (spec 7.11, 7.12). */
#include "mutate/internal.h"

#include "base/sbuf.h"
#include "kube/collector.h"

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

/* DNS-1123 label from name, at most 63 characters (naming.DNSName then
 * Truncate in the reference). */
static void dns_label(char *out, size_t len, const char *in) {
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < len && n < 63; p++) {
        char c = (char)tolower((unsigned char)*p);
        out[n++] = isalnum((unsigned char)c) || c == '-' ? c : '-';
    }
    out[n] = 0;
    while (n && out[n - 1] == '-') out[--n] = 0;
    size_t lead = 0;
    while (out[lead] == '-') lead++;
    memmove(out, out + lead, n - lead + 1);
}

/* path.Join("/var/conf", mountpath, file) with Clean's rules for . and .. */
static void join_clean(char *out, size_t len, const char *mountpath, const char *file) {
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "/var/conf/%s/%s", mountpath ? mountpath : "", file);
    char *parts[128];
    size_t np = 0;
    for (char *save = NULL, *tok = strtok_r(tmp, "/", &save); tok && np < 128; tok = strtok_r(NULL, "/", &save)) {
        if (strcmp(tok, ".") == 0) continue;
        if (strcmp(tok, "..") == 0) { if (np) np--; continue; }
        parts[np++] = tok;
    }
    size_t off = 0;
    out[0] = 0;
    for (size_t i = 0; i < np && off < len; i++) off += (size_t)snprintf(out + off, len - off, "/%s", parts[i]);
    if (!np) snprintf(out, len, "/");
}

static json_object *env_resource(const char *name, const char *resource) {
    json_object *e = jnew_obj(), *vf = jnew_obj(), *rf = jnew_obj();
    jset(e, "name", jnew_str(name));
    jset(rf, "resource", jnew_str(resource));
    jset(rf, "containerName", jnew_str(SIDECAR_NAME));
    jset(vf, "resourceFieldRef", rf);
    jset(e, "valueFrom", vf);
    return e;
}

static bool list_has(json_object *env, const char *name) { return jfind_named(env, name, NULL) != NULL; }

/* True when a receiver of the given types is in a pipeline. */
static bool receiver_enabled(json_object *config, const char *t1, const char *t2) {
    json_object *pipes = jget(jget(config, "service"), "pipelines");
    if (!json_object_is_type(pipes, json_type_object)) return false;
    json_object_object_foreach(pipes, pname, pipe) {
        (void)pname;
        json_object *recv = jget(pipe, "receivers");
        for (size_t i = 0; i < jlen(recv); i++) {
            const char *id = json_object_get_string(json_object_array_get_idx(recv, i));
            if (!id) continue;
            size_t tl = strcspn(id, "/");
            if ((strlen(t1) == tl && strncmp(id, t1, tl) == 0) || (strlen(t2) == tl && strncmp(id, t2, tl) == 0))
                return true;
        }
    }
    return false;
}

static int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static json_object *build_args(json_object *args) {
    json_object *out = jnew_arr();
    size_t n = json_object_is_type(args, json_type_object) ? (size_t)json_object_object_length(args) : 0;
    char **v = xcalloc(n ? n : 1, sizeof *v);
    size_t k = 0;
    if (n) {
        json_object_object_foreach(args, key, val) {
            v[k] = xasprintf("--%s=%s", key, json_object_get_string(val) ? json_object_get_string(val) : "");
            k++;
        }
    }
    qsort(v, k, sizeof *v, cmp_cstr);
    for (size_t i = 0; i < k; i++) {
        jpush(out, jnew_str(v[i]));
        free(v[i]);
    }
    free(v);
    jpush(out, jnew_str("--config=env:OTEL_CONFIG"));
    return out;
}

static json_object *build_env(mctx *m, json_object *spec, const char *config_yaml) {
    json_object *env = jnew_arr();
    json_object *user = jget(spec, "env");
    for (size_t i = 0; i < jlen(user); i++) json_object_array_add(env, jcopy(json_object_array_get_idx(user, i)));
    if (!list_has(env, "POD_NAME")) jpush(env, env_new_field("POD_NAME", "metadata.name"));
    if (!list_has(env, "GOMEMLIMIT")) jpush(env, env_resource("GOMEMLIMIT", "limits.memory"));
    if (!list_has(env, "GOMAXPROCS")) jpush(env, env_resource("GOMAXPROCS", "limits.cpu"));
    if (receiver_enabled(jget(spec, "config"), "kubeletstats", "kubelet_stats") && !list_has(env, "K8S_NODE_NAME"))
        jpush(env, env_new_field("K8S_NODE_NAME", "spec.nodeName"));
    for (size_t i = 0; i < m->opt->nproxy_env; i++) {
        const char *kv = m->opt->proxy_env[i], *eq = strchr(kv, '=');
        if (!eq) continue;
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)(eq - kv), kv);
        if (!list_has(env, name)) jpush(env, env_new_value(name, eq + 1));
    }
    jpush(env, env_new_value("OTEL_CONFIG", config_yaml));
    if (list_has(env, "OTEL_RESOURCE_ATTRIBUTES")) return env;

    jpush(env, env_new_field("OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "metadata.name"));
    jpush(env, env_new_field("OTEL_RESOURCE_ATTRIBUTES_POD_UID", "metadata.uid"));
    jpush(env, env_new_field("OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "spec.nodeName"));
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
        sbuf_printf(&list, "%s%s=%s", list.len ? "," : "", kv[i][0], kv[i][1]);
    }
    char *text = sbuf_take(&list, NULL);
    jpush(env, env_new_value("OTEL_RESOURCE_ATTRIBUTES", text));
    free(text);
    return env;
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
    while (jfind_named(arr, name, &idx)) json_object_array_del_idx(arr, idx, 1);
}

void sidecar_run(mctx *m) {
    const char *v = resolve_annotation(m, ANN_SIDECAR);
    if (!*v) return;
    json_object *cs = jget(m->spec, "containers"), *inits = jget(m->spec, "initContainers");
    if (streq_ci(v, "false")) {
        remove_named(cs, SIDECAR_NAME);
        if (m->opt->native_sidecars) remove_named(inits, SIDECAR_NAME);
        return;
    }
    /* Both places count, whatever the mode: a pod injected in one mode and
     * seen again after a switch must not get a second collector. */
    if (jfind_named(cs, SIDECAR_NAME, NULL) || jfind_named(inits, SIDECAR_NAME, NULL)) {
        mctx_skip(m, MUTATE_SKIP_ALREADY_INSTRUMENTED);
        return;
    }
    json_object *col = select_collector(m, v);
    if (!col) return;
    json_object *spec = jget(col, "spec"), *config = jget(spec, "config");
    const char *cname = jstr(jget(col, "metadata"), "name"), *cns = jstr(jget(col, "metadata"), "namespace");
    if (!cns) cns = m->ns;
    /* The store derives ports and YAML once per collector; objects from
     * elsewhere (tests, other sources) are derived here. */
    char err[256] = "";
    json_object *ports = jget(col, KUBE_COLLECTOR_DERIVED_PORTS);
    const char *derr = jstr(col, KUBE_COLLECTOR_DERIVED_ERROR);
    if (derr) snprintf(err, sizeof err, "%s", derr);
    ports = ports ? jcopy(ports) : derr ? NULL : kube_collector_container_ports(config, jget(spec, "ports"), err, sizeof err);
    if (!ports) {
        mctx_warn(m, "sidecar: OpenTelemetryCollector %s/%s: %s; sidecar not injected", cns, cname, err);
        mctx_skip(m, MUTATE_SKIP_INVALID);
        return;
    }
    const char *dyaml = jstr(col, KUBE_COLLECTOR_DERIVED_YAML);
    char *yaml = dyaml ? xstrdup(dyaml) : kube_collector_config_yaml(config);

    json_object *c = jnew_obj();
    jset(c, "name", jnew_str(SIDECAR_NAME));
    const char *image = jstr(spec, "image");
    jset(c, "image", jnew_str(image && *image ? image : m->opt->collector_image));
    if (jget(spec, "command")) jset(c, "command", jcopy(jget(spec, "command")));
    jset(c, "args", build_args(jget(spec, "args")));
    jset(c, "env", build_env(m, spec, yaml));
    free(yaml);
    if (jget(spec, "envFrom")) jset(c, "envFrom", jcopy(jget(spec, "envFrom")));
    jset(c, "ports", ports);
    if (jget(spec, "resources")) jset(c, "resources", jcopy(jget(spec, "resources")));

    /* The collector's own mounts, then one per configmap. */
    json_object *mounts = jarr_at(c, "volumeMounts"), *cms = jget(spec, "configmaps");
    for (size_t i = 0; i < jlen(jget(spec, "volumeMounts")); i++)
        jpush(mounts, jcopy(json_object_array_get_idx(jget(spec, "volumeMounts"), i)));
    json_object *vols = jarr_at(m->spec, "volumes");
    json_object *uvols = jget(spec, "volumes");
    for (size_t i = 0; i < jlen(uvols); i++) {
        json_object *uv = json_object_array_get_idx(uvols, i);
        /* Skipping names the pod already has avoids a rejected pod (spec 7.32). */
        if (jstr(uv, "name") && !jfind_named(vols, jstr(uv, "name"), NULL)) jpush(vols, jcopy(uv));
    }
    for (size_t i = 0; i < jlen(cms); i++) {
        json_object *cm = json_object_array_get_idx(cms, i);
        const char *cmn = jstr(cm, "name");
        if (!cmn) continue;
        char raw[300], vname[64], path[1024];
        snprintf(raw, sizeof raw, "configmap-%s", cmn);
        dns_label(vname, sizeof vname, raw);
        join_clean(path, sizeof path, jstr(cm, "mountpath"), vname);
        mount_add(c, vname, path, false);
        if (!jfind_named(vols, vname, NULL)) {
            json_object *vol = jnew_obj(), *ref = jnew_obj();
            jset(vol, "name", jnew_str(vname));
            jset(ref, "name", jnew_str(cmn));
            jset(vol, "configMap", ref);
            jpush(vols, vol);
        }
    }
    if (!jlen(mounts)) json_object_object_del(c, "volumeMounts");
    if (!jlen(vols)) json_object_object_del(m->spec, "volumes");

    json_object *lp = NULL, *rp = NULL, *sp = NULL;
    kube_collector_probes(spec, &lp, &rp, &sp);
    if (m->opt->native_sidecars && !sp && rp) sp = jcopy(rp);
    if (lp) jset(c, "livenessProbe", lp);
    if (rp) jset(c, "readinessProbe", rp);
    if (sp) jset(c, "startupProbe", sp);
    if (jget(spec, "lifecycle")) jset(c, "lifecycle", jcopy(jget(spec, "lifecycle")));
    if (jget(spec, "securityContext")) jset(c, "securityContext", jcopy(jget(spec, "securityContext")));
    const char *pp = jstr(spec, "imagePullPolicy");
    if (pp && *pp) jset(c, "imagePullPolicy", jnew_str(pp));

    json_object *cinits = jget(spec, "initContainers");
    if (jlen(cinits) || m->opt->native_sidecars) {
        json_object *pinits = jarr_at(m->spec, "initContainers");
        for (size_t i = 0; i < jlen(cinits); i++) json_object_array_add(pinits, jcopy(json_object_array_get_idx(cinits, i)));
        if (m->opt->native_sidecars) {
            jset(c, "restartPolicy", jnew_str("Always"));
            jpush(pinits, c);
            c = NULL;
        }
    }
    if (c) jpush(jarr_at(m->spec, "containers"), c);
    set_label(m, cns, cname ? cname : "");
    m->res->sidecar = true;
}
