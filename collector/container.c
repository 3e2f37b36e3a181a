/* collector/container.c - the collector container; see container.h. */
#include "collector/container.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "collector/components.h"
#include "collector/config.h"
#include "collector/defaults.h"
#include "collector/naming.h"
#include "collector/ports.h"
#include "collector/probes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Members of the objects built here: literal keys, each added once, so
 * json-c neither looks them up first nor copies them (it frees only the
 * keys it copied; a deep copy copies every key). A webhook builds this
 * container for every pod that asks for a sidecar. */
static json_object *put(json_object *o, const char *literal, json_object *v) {
    if (json_object_object_add_ex(o, literal, v, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY) != 0)
        base_oom();
    return v;
}

static void put_str(json_object *o, const char *literal, const char *s) { put(o, literal, jnew_str(s ? s : "")); }
static json_object *put_obj(json_object *o, const char *literal) { return put(o, literal, jnew_obj()); }
static void put_copy(json_object *o, const char *literal, json_object *v) {
    if (v) put(o, literal, jcopy(v));
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static json_object *build_args(json_object *spec, collector_target target) {
    json_object *args = jnew_arr(), *m = jmap(spec, "args");
    size_t n = m ? (size_t)json_object_object_length(m) : 0, k = 0;
    char **v = xcalloc(n ? n : 1, sizeof *v);
    if (target == COLLECTOR_WORKLOAD) jpush(args, jnew_str("--config=/conf/collector.yaml"));
    if (m) {
        json_object_object_foreach(m, key, val) {
            /* The workload's config is the mounted one; the reference drops a
             * user "config" there (with a log line) and keeps it for sidecars. */
            if (target == COLLECTOR_WORKLOAD && strcmp(key, "config") == 0) continue;
            const char *s = val ? json_object_get_string(val) : NULL;
            v[k++] = xasprintf("--%s=%s", key, s ? s : "");
        }
    }
    qsort(v, k, sizeof *v, cmp_str);
    for (size_t i = 0; i < k; i++) {
        jpush(args, jnew_str(v[i]));
        free(v[i]);
    }
    free(v);
    if (target == COLLECTOR_SIDECAR) jpush(args, jnew_str("--config=env:OTEL_CONFIG"));
    return args;
}

static json_object *env_field(const char *name, const char *path) {
    json_object *e = jnew_obj();
    put_str(e, "name", name);
    put_str(put_obj(put_obj(e, "valueFrom"), "fieldRef"), "fieldPath", path);
    return e;
}

static json_object *env_resource(const char *name, const char *resource) {
    json_object *e = jnew_obj();
    put_str(e, "name", name);
    json_object *r = put_obj(put_obj(e, "valueFrom"), "resourceFieldRef");
    put_str(r, "containerName", COLLECTOR_CONTAINER_NAME);
    put_str(r, "resource", resource);
    return e;
}

static json_object *env_value(const char *name, const char *value) {
    json_object *e = jnew_obj();
    put_str(e, "name", name);
    put_str(e, "value", value);
    return e;
}

/* spec.env first, then what the collector needs unless the user set it
 * (reconcile.md 2.5.3, mutation.md 4.3). */
static json_object *build_env(json_object *spec, json_object *config, const char *yaml, const collector_build_opts *o) {
    json_object *env = jnew_arr(), *user = jarr(spec, "env");
    for (size_t i = 0; i < jlen(user); i++) jpush(env, jcopy(json_object_array_get_idx(user, i)));
    if (!jfind_named(env, "POD_NAME", NULL)) jpush(env, env_field("POD_NAME", "metadata.name"));
    if (!jfind_named(env, "GOMEMLIMIT", NULL)) jpush(env, env_resource("GOMEMLIMIT", "limits.memory"));
    if (!jfind_named(env, "GOMAXPROCS", NULL)) jpush(env, env_resource("GOMAXPROCS", "limits.cpu"));
    /* Config-derived, sorted by name: today only the kubelet receivers'. */
    if (collector_receiver_enabled(config, "kubeletstats", "kubelet_stats") && !jfind_named(env, "K8S_NODE_NAME", NULL))
        jpush(env, env_field("K8S_NODE_NAME", "spec.nodeName"));
    for (size_t i = 0; i < o->nproxy_env; i++) {
        const char *kv = o->proxy_env[i], *eq = strchr(kv, '=');
        if (!eq) continue;
        char *name = xstrndup(kv, (size_t)(eq - kv));
        if (!jfind_named(env, name, NULL)) jpush(env, env_value(name, eq + 1));
        free(name);
    }
    if (yaml) jpush(env, env_value("OTEL_CONFIG", yaml));
    return env;
}

char *collector_configmap_path(const char *mountpath, const char *name) {
    char *raw = xasprintf("/var/conf/%s/%s", mountpath ? mountpath : "", name);
    size_t n = strlen(raw);
    /* Segments kept so far, as offsets into out; ".." pops one, and at the
     * root there is nothing to pop (a rooted path never climbs above /). */
    size_t *seg = xcalloc(n / 2 + 2, sizeof *seg), nseg = 0;
    sbuf out = SBUF_INIT;
    for (size_t i = 0; i < n;) {
        while (i < n && raw[i] == '/') i++;
        size_t j = i;
        while (j < n && raw[j] != '/') j++;
        size_t len = j - i;
        if (len == 0 || (len == 1 && raw[i] == '.')) {
            /* empty or "." */
        } else if (len == 2 && raw[i] == '.' && raw[i + 1] == '.') {
            if (nseg) sbuf_truncate(&out, seg[--nseg]);
        } else {
            seg[nseg++] = out.len;
            sbuf_putc(&out, '/');
            sbuf_add(&out, raw + i, len);
        }
        i = j;
    }
    if (!out.len) sbuf_putc(&out, '/');
    free(seg);
    free(raw);
    return sbuf_take(&out, NULL);
}

static json_object *mount(const char *name, const char *path) {
    json_object *m = jnew_obj();
    put_str(m, "name", name);
    put_str(m, "mountPath", path);
    return m;
}

/* The mounts and the volumes they need, in matching order (2.5.5). */
static void build_mounts(json_object *spec, const collector_build_opts *o, json_object *c, json_object *vols) {
    json_object *mounts = jnew_arr(), *list;
    if (o->target == COLLECTOR_WORKLOAD) {
        jpush(mounts, mount("otc-internal", "/conf"));
        json_object *v = jpush(vols, jnew_obj()), *cm;
        put_str(v, "name", "otc-internal");
        cm = put_obj(v, "configMap");
        put_str(cm, "name", o->configmap);
        json_object *it = jpush(put(cm, "items", jnew_arr()), jnew_obj());
        put_str(it, "key", "collector.yaml");
        put_str(it, "path", "collector.yaml");
    }
    list = jarr(spec, "volumeMounts");
    for (size_t i = 0; i < jlen(list); i++) jpush(mounts, jcopy(json_object_array_get_idx(list, i)));
    list = jarr(spec, "volumes");
    for (size_t i = 0; i < jlen(list); i++) jpush(vols, jcopy(json_object_array_get_idx(list, i)));
    list = jarr(spec, "configmaps");
    for (size_t i = 0; i < jlen(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const char *name = jstr(e, "name");
        if (!name) continue; /* the CRD requires one */
        char *vol = collector_name("configmap-%s", name, NULL);
        char *path = collector_configmap_path(jstr(e, "mountpath"), vol);
        jpush(mounts, mount(vol, path));
        json_object *v = jpush(vols, jnew_obj());
        put_str(v, "name", vol);
        put_str(put_obj(v, "configMap"), "name", name);
        free(vol);
        free(path);
    }
    /* Go's omitempty: a sidecar without mounts has no volumeMounts. */
    if (jlen(mounts)) put(c, "volumeMounts", mounts);
    else json_object_put(mounts);
}

int collector_build(json_object *col, const collector_build_opts *o, collector_pod *out, char *err, size_t errlen) {
    json_object *spec = jmap(col, "spec"), *config = jmap(spec, "config");
    json_object *ports, *c, *lp, *rp, *sp;
    const char *image = jstr(spec, "image"), *derr = jstr(col, COLLECTOR_DERIVED_ERROR), *pp;
    const char *yaml = jstr(col, COLLECTOR_DERIVED_YAML);
    char *own_yaml = NULL;
    memset(out, 0, sizeof *out);

    /* The store derives ports and YAML once per collector; elsewhere they
     * are derived here. */
    if (derr) return err_printf(err, errlen, "%s", derr);
    if (o->target == COLLECTOR_SIDECAR && !yaml && !(yaml = own_yaml = collector_config_yaml(config)))
        return err_printf(err, errlen, "spec.config nests deeper than %d levels", COLLECTOR_YAML_MAX_DEPTH);
    if (o->target != COLLECTOR_SIDECAR) yaml = NULL;
    if ((ports = jget(col, COLLECTOR_DERIVED_PORTS))) {
        ports = jcopy(ports);
    } else if (!(ports = collector_container_ports(config, jget(spec, "ports"), err, errlen))) {
        free(own_yaml);
        return -1;
    }

    c = jnew_obj();
    out->volumes = jnew_arr();
    put_str(c, "name", COLLECTOR_CONTAINER_NAME);
    put_str(c, "image", image && *image ? image : o->default_image);
    put_copy(c, "command", jarr(spec, "command"));
    put(c, "args", build_args(spec, o->target));
    put(c, "ports", ports);
    put_copy(c, "envFrom", jarr(spec, "envFrom"));
    put(c, "env", build_env(spec, config, yaml, o));
    free(own_yaml);
    /* Go writes the empty struct too. */
    if (jmap(spec, "resources")) put_copy(c, "resources", jmap(spec, "resources"));
    else put_obj(c, "resources");
    if (o->target == COLLECTOR_SIDECAR && o->native) put_str(c, "restartPolicy", "Always");
    build_mounts(spec, o, c, out->volumes);
    collector_probes(spec, &lp, &rp, &sp);
    /* A native sidecar's readiness gates the app containers' start. */
    if (o->target == COLLECTOR_SIDECAR && o->native && !sp && rp) sp = jcopy(rp);
    if (lp) put(c, "livenessProbe", lp);
    if (rp) put(c, "readinessProbe", rp);
    if (sp) put(c, "startupProbe", sp);
    put_copy(c, "lifecycle", jmap(spec, "lifecycle"));
    if ((pp = jstr(spec, "imagePullPolicy")) && *pp) put_str(c, "imagePullPolicy", pp);
    put_copy(c, "securityContext", jmap(spec, "securityContext"));
    out->container = c;
    out->init_containers = jcopy(jarr(spec, "initContainers"));
    return 0;
}

void collector_pod_free(collector_pod *p) {
    json_object_put(p->container);
    json_object_put(p->volumes);
    json_object_put(p->init_containers);
    memset(p, 0, sizeof *p);
}
