/* mutate/webserver.c - what Apache HTTPD and Nginx injection share (spec 2.6, 2.7).
 *
 * A web server module cannot be loaded by an environment variable, so its
 * configuration is rewritten: a copy of the application container (the
 * "clone") stages the server's configuration directory in a volume, the
 * agent's init container ("attach") adds the module and its settings to the
 * staged copy, and the application mounts the result over its own
 * configuration directory.
 *
 * Where the reference fails, each target gets its own chain (spec 7.3,
 * 7.4): the first target of a pod keeps the reference's names, further
 * targets and a second server kind get suffixed names, so Apache and Nginx
 * can share a pod and every target really is instrumented. The clone's env
 * is a copy, not an alias of the app's (spec 7.7); every volume follows the
 * Instrumentation's volume settings (spec 7.27); the module's service name
 * honours an OTEL_SERVICE_NAME set for the container (spec 7.21); attribute
 * values are trimmed (spec 7.22). */
#include "mutate/webserver.h"

#include "base/sbuf.h"
#include "mutate/webserver_scripts.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLONE_NAME "otel-agent-source-container-clone"

/* base, or base-<a>[-<b>], at most 63 characters. */
static void join_name(char *out, size_t len, const char *base, const char *a, const char *b) {
    snprintf(out, len < 64 ? len : 64, "%s%s%s%s%s", base, a ? "-" : "", a ? a : "", b ? "-" : "", b ? b : "");
    size_t n = strlen(out);
    while (n && out[n - 1] == '-') out[--n] = 0;
}

typedef struct kv {
    char *k, *v;
} kv;

static int kv_cmp(const void *a, const void *b) { return strcmp(((const kv *)a)->k, ((const kv *)b)->k); }

static char *trimmed(const char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) n--;
    return xstrndup(s, n);
}

static void attr_set(kv **attrs, size_t *n, const char *k, const char *v) {
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*attrs)[i].k, k)) {
            free((*attrs)[i].v);
            (*attrs)[i].v = trimmed(v);
            return;
        }
    kv *a = xrealloc(*attrs, sizeof *a * (*n + 1));
    *attrs = a;
    a[(*n)++] = (kv){xstrdup(k), trimmed(v)};
}

/* The agent's configuration text (OTEL_APACHE_AGENT_CONF / OTEL_NGINX_AGENT_CONF). */
static char *agent_conf(lctx *l, const ws_kind *k, json_object *app) {
    mctx *m = l->m;
    const char *endpoint = jstr(jget(l->ispec, "exporter"), "endpoint");
    if (!endpoint || !*endpoint) endpoint = "http://localhost:4317/";
    const char *ns = jstr(m->in ? jget(m->in, "metadata") : NULL, "namespace");
    if (!ns || !*ns) ns = *m->ns ? m->ns : l->lang->name;
    char *service = NULL;
    json_object *sn = env_find(app, "OTEL_SERVICE_NAME", NULL);
    if (sn && jstr(sn, "value") && *jstr(sn, "value")) service = xstrdup(jstr(sn, "value"));
    else service = sdk_service_name(l, app);

    const char *p = k->attr_prefix;
    char key[96];
    kv *attrs = NULL;
    size_t n = 0;
#define DEF(name, value) (snprintf(key, sizeof key, "%s%s", p, name), attr_set(&attrs, &n, key, value))
    DEF("Enabled", "ON");
    DEF("OtelExporterEndpoint", endpoint);
    DEF("OtelSpanExporter", "otlp");
    DEF("ResolveBackends", "ON");
    DEF("ServiceInstanceId", "<<SID-PLACEHOLDER>>");
    DEF("ServiceName", service);
    DEF("ServiceNamespace", ns);
    DEF("TraceAsError", "ON");
#undef DEF
    json_object *user = jget(l->lspec, "attrs");
    for (size_t i = 0; i < jlen(user); i++) {
        json_object *a = json_object_array_get_idx(user, i);
        const char *an = jstr(a, "name"), *av = jstr(a, "value");
        if (an && av) attr_set(&attrs, &n, an, av);
    }
    qsort(attrs, n, sizeof *attrs, kv_cmp);

    sbuf f = SBUF_INIT;
    if (!k->nginx) {
        const char *sfx = jstr(l->lspec, "version") && !strcmp(jstr(l->lspec, "version"), "2.2") ? "22" : "";
        static const char *const libs[] = {"common", "resources", "trace", "otlp_recordable", "exporter_ostream_span",
                                           "exporter_otlp_grpc"};
        sbuf_puts(&f, "\n#Load the Otel Webserver SDK\n");
        for (size_t i = 0; i < 6; i++) sbuf_printf(&f, "LoadFile %s/sdk_lib/lib/libopentelemetry_%s.so\n", WS_AGENT_DIR, libs[i]);
        sbuf_printf(&f, "#Load the Otel ApacheModule SDK\nLoadFile %s/sdk_lib/lib/libopentelemetry_webserver_sdk.so\n", WS_AGENT_DIR);
        sbuf_printf(&f, "#Load the Apache Module. In this example for Apache 2.4\n"
                   "#LoadModule otel_apache_module %s/WebServerModule/Apache/libmod_apache_otel.so\n"
                   "#Load the Apache Module. In this example for Apache 2.2\n"
                   "#LoadModule otel_apache_module %s/WebServerModule/Apache/libmod_apache_otel22.so\n"
                   "LoadModule otel_apache_module %s/WebServerModule/Apache/libmod_apache_otel%s.so\n"
                   "#Attributes\n",
                WS_AGENT_DIR, WS_AGENT_DIR, WS_AGENT_DIR, sfx);
    }
    for (size_t i = 0; i < n; i++) {
        sbuf_printf(&f, k->nginx ? "%s %s;\n" : "%s %s\n", attrs[i].k, attrs[i].v);
        free(attrs[i].k);
        free(attrs[i].v);
    }
    free(attrs);
    free(service);
    return sbuf_take(&f, NULL);
}

static json_object *mount(const char *name, const char *path) {
    json_object *m = jnew_obj();
    jw_add(m, "name", jnew_str(name));
    jw_add(m, "mountPath", jnew_str(path));
    return m;
}

static json_object *resolve_sc(lctx *l, json_object *app) {
    json_object *sc = jget(l->ispec, "initContainerSecurityContext");
    return jw_copy(sc ? sc : jget(app, "securityContext"));
}

/* key: a literal, given once per container (jw_add). */
static void add_opt(json_object *c, const char *key, json_object *v) {
    if (v) jw_add(c, key, v);
}

/* Step 2: the clone, and the app's configuration mounts. */
static void add_clone(lctx *l, const ws_kind *k, json_object *app, const char *name, const char *conf_vol,
                      const char *agent_vol, const char *conf_dir) {
    mctx *m = l->m;
    json_object *vols = jarr_at(m->spec, "volumes");
    if (!jw_find_named(vols, conf_vol, NULL)) jpush(vols, lang_volume(l, conf_vol));
    json_object *c = jnew_obj();
    jw_add(c, "name", jnew_str(name));
    jw_add(c, "image", jnew_str(jw_str(app, "image") ? jw_str(app, "image") : ""));
    if (k->nginx) {
        jw_add(c, "command", jstrs(2, "/bin/sh", "-c"));
        jw_add(c, "args", jstrs(3, WS_SCRIPT_NGINX_CLONE, "--", conf_dir));
    } else {
        char src[1100];
        snprintf(src, sizeof src, "%s/.", conf_dir);
        jw_add(c, "command", jstrs(4, "cp", "-r", src, WS_STAGED_DIR));
    }
    add_opt(c, "env", jw_copy(jget(app, "env"))); /* a snapshot (spec 7.7) */
    add_opt(c, "envFrom", jw_copy(jget(app, "envFrom")));
    json_object *mounts = jw_copy(jget(app, "volumeMounts"));
    if (!json_object_is_type(mounts, json_type_array)) {
        json_object_put(mounts);
        mounts = jnew_arr();
    }
    jpush(mounts, mount(conf_vol, WS_STAGED_DIR));
    jw_add(c, "volumeMounts", mounts);
    add_opt(c, "resources", jw_copy(jget(l->lspec, "resourceRequirements")));
    add_opt(c, "securityContext", resolve_sc(l, app));
    add_opt(c, "imagePullPolicy", jw_copy(jget(app, "imagePullPolicy")));
    jpush(jarr_at(m->spec, "initContainers"), c);

    /* The app's own mount of its configuration directory gives way. */
    json_object *am = jget(app, "volumeMounts");
    for (size_t i = 0; i < jlen(am); i++) {
        const char *p = jstr(json_object_array_get_idx(am, i), "mountPath");
        if (p && strstr(p, conf_dir)) {
            json_object_array_del_idx(am, i, 1);
            break;
        }
    }
    mount_add(app, agent_vol, WS_AGENT_DIR, false);
    mount_add(app, conf_vol, conf_dir, false);
}

/* Step 3: the agent's init container. */
static void add_attach(lctx *l, const ws_kind *k, json_object *app, const char *name, const char *conf_vol,
                       const char *agent_vol, const char *arg) {
    mctx *m = l->m;
    json_object *vols = jarr_at(m->spec, "volumes");
    if (!jw_find_named(vols, agent_vol, NULL)) jpush(vols, lang_volume(l, agent_vol));
    json_object *c = jnew_obj();
    jw_add(c, "name", jnew_str(name));
    jw_add(c, "image", jnew_str(jstr(l->lspec, "image") ? jstr(l->lspec, "image") : ""));
    jw_add(c, "command", jstrs(2, "/bin/sh", "-c"));
    jw_add(c, "args", jstrs(3, k->nginx ? WS_SCRIPT_NGINX_ATTACH : WS_SCRIPT_APACHE_ATTACH, "--", arg));
    /* Env in the reference's order; OTEL_NODE_IP and OTEL_POD_IP come
     * before the agent configuration so that a $(OTEL_NODE_IP) endpoint in
     * it is expanded by the kubelet. */
    json_object *env = jnew_arr();
    jw_add(c, "env", env);
    env_append_if_not_set(c, jget(l->lspec, "env"));
    env_append_if_not_set(c, jget(l->ispec, "env"));
    if (!env_find(c, "OTEL_POD_IP", NULL)) env_append_field(c, "OTEL_POD_IP", "status.podIP");
    if (!env_find(c, "OTEL_NODE_IP", NULL)) env_append_field(c, "OTEL_NODE_IP", "status.hostIP");
    char *conf = agent_conf(l, k, app);
    env_append(c, k->conf_env, conf);
    free(conf);
    env_append_field(c, k->sid_env, "metadata.name");
    add_opt(c, "resources", jw_copy(jget(l->lspec, "resourceRequirements")));
    json_object *mounts = jnew_arr();
    jpush(mounts, mount(agent_vol, WS_AGENT_DIR));
    jpush(mounts, mount(conf_vol, WS_STAGED_DIR));
    jw_add(c, "volumeMounts", mounts);
    add_opt(c, "securityContext", resolve_sc(l, app));
    const char *pp = jstr(l->ispec, "imagePullPolicy");
    if (pp && *pp) jw_add(c, "imagePullPolicy", jnew_str(pp));
    jpush(jarr_at(m->spec, "initContainers"), c);
}

static void nginx_ld_path(lctx *l, json_object *app) {
    const char *lib = WS_AGENT_DIR "/sdk_lib/lib";
    json_object *e = env_find(app, "LD_LIBRARY_PATH", NULL);
    if (!e) { env_append(app, "LD_LIBRARY_PATH", lib); return; }
    if (jget(e, "valueFrom")) {
        /* A value next to valueFrom gets the pod rejected (spec 7.2). */
        mctx_warn(l->m, "inject-nginx: LD_LIBRARY_PATH of container %s comes from valueFrom; the module's libraries "
                        "must be found some other way", jstr(app, "name"));
        return;
    }
    char *v = NULL;
    v = xasprintf("%s:%s", jstr(e, "value") ? jstr(e, "value") : "", lib);
    env_set_value(app, e, v);
    free(v);
}

void ws_inject(lctx *l, const ws_kind *k) {
    mctx *m = l->m;
    json_object *cs = jget(m->spec, "containers"), *inits = jget(m->spec, "initContainers");
    char conf_dir[1024], conf_name[256];
    if (k->nginx) {
        const char *file = jstr(l->lspec, "configFile");
        if (!file || !*file) file = "/etc/nginx/nginx.conf";
        const char *slash = strrchr(file, '/');
        snprintf(conf_dir, sizeof conf_dir, "%.*s", slash ? (int)(slash - file) : 0, file);
        snprintf(conf_name, sizeof conf_name, "%s", slash ? slash + 1 : file);
        if (!*conf_dir) snprintf(conf_dir, sizeof conf_dir, "/");
    } else {
        const char *dir = jstr(l->lspec, "configPath");
        snprintf(conf_dir, sizeof conf_dir, "%s", dir && *dir ? dir : "/usr/local/apache2/conf");
        size_t n = strlen(conf_dir);
        if (n > 1 && conf_dir[n - 1] == '/') conf_dir[n - 1] = 0;
    }

    json_object **targets = xcalloc(jlen(cs) + l->nnames + 1, sizeof *targets);
    size_t nt = 0;
    if (!l->nnames) {
        if (json_object_is_type(json_object_array_get_idx(cs, 0), json_type_object))
            targets[nt++] = json_object_array_get_idx(cs, 0);
    }
    for (size_t i = 0; i < l->nnames; i++) {
        json_object *c = jw_find_named(cs, l->names[i], NULL);
        if (c) targets[nt++] = c;
        else if (jw_find_named(inits, l->names[i], NULL)) {
            mctx_warn(m, "inject-%s: %s is an init container, which a web server module cannot instrument",
                      l->lang->name, l->names[i]);
            mctx_skip(m, MUTATE_SKIP_CONTAINER);
        } else {
            mctx_warn(m, "inject-%s: no container named %s in the pod", l->lang->name, l->names[i]);
            mctx_skip(m, MUTATE_SKIP_UNKNOWN_CONTAINER);
        }
    }
    /* Apache, which runs first, keeps the reference's clone name. */
    bool other_clone = k->nginx && jw_find_named(jget(m->spec, "initContainers"), CLONE_NAME, NULL);
    for (size_t i = 0; i < nt; i++) {
        json_object *app = targets[i];
        const char *suffix = i ? jstr(app, "name") : NULL;
        char clone[64], conf_vol[64], attach[64];
        join_name(clone, sizeof clone, CLONE_NAME, other_clone ? "nginx" : suffix, other_clone ? suffix : NULL);
        join_name(conf_vol, sizeof conf_vol, k->conf_volume, suffix, NULL);
        join_name(attach, sizeof attach, k->attach_name, suffix, NULL);
        env_append_if_not_set(app, jget(l->lspec, "env"));
        if (!jw_find_named(jget(m->spec, "initContainers"), clone, NULL))
            add_clone(l, k, app, clone, conf_vol, k->agent_volume, conf_dir);
        if (!jw_find_named(jget(m->spec, "initContainers"), attach, NULL)) {
            add_attach(l, k, app, attach, conf_vol, k->agent_volume, k->nginx ? conf_name : conf_dir);
            if (k->nginx) nginx_ld_path(l, app);
        }
        sdk_common_env(l, app);
        sdk_configure(l, app, app);
        mctx_injected(m, l->lang->id, app);
    }
    if (nt) {
        sdk_tls_volumes(l);
        m->res->injected |= MUTATE_BIT(l->lang->id);
    }
    free(targets);
}
