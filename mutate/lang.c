/* mutate/lang.c - the flow every init-container language shares (spec 2.0).
 *
 * For each target container, in processing order (targeted init containers
 * in pod order, then regular containers in annotation order): pre-check,
 * language env, mount, common env, language defaults, SDK configuration.
 * Then, once per pod, the volume and the init container that copies the
 * agent in. Unlike the reference (spec 7.9) nothing is added to the pod when
 * every target was skipped.
 *
 * What of that depends on the Instrumentation and language alone (the env
 * entries of spec.env and spec.<lang>.env, the volume, the init containers
 * but the securityContext taken from the pod: inst_part) is built by
 * inst_part_build, once per Instrumentation version in the thread's cache
 * (cache_inst_part), and shared: env entries are never edited in place
 * (env_set_value copies the one whose value grows: JAVA_TOOL_OPTIONS,
 * NODE_OPTIONS, PYTHONPATH from spec.env), init containers get a copy
 * whose env, mounts and command are new (another language may target
 * them), the volume is only read. */
#include "mutate/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const mutate_lang *const table[MUTATE_NLANGS] = {
    [MUTATE_JAVA] = &mutate_lang_java,
    [MUTATE_NODEJS] = &mutate_lang_nodejs,
    [MUTATE_PYTHON] = &mutate_lang_python,
    [MUTATE_DOTNET] = &mutate_lang_dotnet,
    [MUTATE_GO] = &mutate_lang_go,
    [MUTATE_APACHE] = &mutate_lang_apache,
    [MUTATE_NGINX] = &mutate_lang_nginx,
    [MUTATE_SDK] = &mutate_lang_sdk,
};

const mutate_lang *mutate_lang_get(mutate_lang_id id) { return id < MUTATE_NLANGS ? table[id] : NULL; }

typedef struct target {
    json_object *c;
    bool init;
} target;

/* Fills out (at most cap) with the containers this language targets.
 * Every listed name is looked up, also once out is full (one container
 * list may name the pod's only container and a missing one). */
static size_t resolve_targets(lctx *l, target *out, size_t cap) {
    mctx *m = l->m;
    json_object *inits = jget(m->spec, "initContainers"), *cs = jget(m->spec, "containers");
    size_t n = 0;
    if (!l->nnames) {
        json_object *c0 = json_object_array_get_idx(cs, 0);
        if (jlen(cs) && cap && json_object_is_type(c0, json_type_object)) out[n++] = (target){c0, false};
        return n;
    }
    size_t ni = jlen(inits);
    for (size_t i = 0; i < ni && n < cap; i++) {
        json_object *c = json_object_array_get_idx(inits, i);
        const char *name = jw_str(c, "name");
        for (size_t k = 0; name && k < l->nnames; k++)
            if (strcmp(name, l->names[k]) == 0) { out[n++] = (target){c, true}; break; }
    }
    for (size_t k = 0; k < l->nnames; k++) {
        json_object *c = jw_find_named(cs, l->names[k], NULL);
        if (c) {
            if (n < cap) out[n++] = (target){c, false};
        } else if (!jw_find_named(inits, l->names[k], NULL)) {
            mctx_warn(m, "inject-%s: no container named %s in the pod", l->lang->name, l->names[k]);
            mctx_skip(m, MUTATE_SKIP_UNKNOWN_CONTAINER);
        }
    }
    return n;
}

json_object *lang_volume(lctx *l, const char *name) {
    json_object *v = jnew_obj();
    jw_add(v, "name", jnew_str(name));
    json_object *tmpl = jget(l->lspec, "volumeClaimTemplate");
    if (json_object_is_type(tmpl, json_type_object) && json_object_object_length(tmpl)) {
        json_object *eph = jnew_obj();
        jw_add(eph, "volumeClaimTemplate", jw_copy(tmpl));
        jw_add(v, "ephemeral", eph);
        return v;
    }
    json_object *ed = jnew_obj();
    json_object *size = jget(l->lspec, "volumeLimitSize");
    jw_add(ed, "sizeLimit", size ? jw_copy(size) : jnew_str("200Mi"));
    jw_add(v, "emptyDir", ed);
    return v;
}

static json_object *init_container(lctx *l, const char *name, const char *image, json_object *command,
                                   json_object *sc, bool pull_policy) {
    json_object *c = jnew_obj();
    jw_add(c, "name", jnew_str(name));
    jw_add(c, "image", jnew_str(image ? image : ""));
    jw_add(c, "command", command);
    json_object *res = jget(l->lspec, l->lang->res_key);
    if (res) jw_add(c, "resources", jw_copy(res));
    json_object *mounts = jnew_arr();
    json_object *mnt = jpush(mounts, jnew_obj());
    jw_add(mnt, "name", jnew_str(l->lang->volume));
    jw_add(mnt, "mountPath", jnew_str(l->lang->init_mount));
    jw_add(c, "volumeMounts", mounts);
    const char *pp = jstr(l->ispec, "imagePullPolicy");
    if (pull_policy && pp && *pp) jw_add(c, "imagePullPolicy", jnew_str(pp));
    if (sc) jw_add(c, "securityContext", jw_copy(sc));
    return c;
}

/* Java's extension containers; spec 2.1. */
static void java_extensions(lctx *l, json_object *sc, json_object *out) {
    json_object *ext = jget(l->lspec, "extensions");
    size_t n = jlen(ext);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(ext, i);
        char name[96], src[4096];
        snprintf(name, sizeof name, "opentelemetry-auto-instrumentation-extension-%zu", i);
        const char *dir = jstr(e, "dir");
        snprintf(src, sizeof src, "%s/.", dir ? dir : "");
        json_object *cmd = jstrs(4, "cp", "-r", src, "/otel-auto-instrumentation-java/extensions");
        jpush(out, init_container(l, name, jw_str(e, "image"), cmd, sc, false));
    }
}

void inst_part_release(inst_part *p) {
    json_object_put(p->env);
    json_object_put(p->lang_env);
    json_object_put(p->env_names);
    json_object_put(p->lang_env_names);
    json_object_put(p->endpoint);
    json_object_put(p->propagators);
    json_object_put(p->sampler);
    json_object_put(p->sampler_arg);
    json_object_put(p->volume);
    json_object_put(p->inits);
    json_object_put(p->command);
    json_object_put(p->use);
    json_object_put(p->tls);
    json_object_put(p->attrs);
    memset(p, 0, sizeof *p);
}

static json_object *copy_list(json_object *list) {
    json_object *out = jnew_arr();
    size_t n = jlen(list);
    for (size_t i = 0; i < n; i++) jpush(out, jw_copy(json_object_array_get_idx(list, i)));
    return out;
}

void inst_part_build(lctx *l, json_object *cmd, inst_part *out) {
    memset(out, 0, sizeof *out);
    out->env = copy_list(jw_get(l->ispec, "env"));
    out->lang_env = copy_list(jw_get(l->lspec, "env"));
    out->env_names = env_names_of(out->env);
    out->lang_env_names = env_names_of(out->lang_env);
    sdk_inst_env(l->ispec, out);
    out->volume = lang_volume(l, l->lang->volume);
    out->command = cmd;
    if (jstr(jget(l->inst, "metadata"), "namespace")) out->use = record_use_new(NULL, l->lang->id, l->inst);
    json_object *sc = jget(l->ispec, "initContainerSecurityContext");
    out->sc_from_pod = !sc;
    out->inits = jnew_arr();
    jpush(out->inits, init_container(l, l->lang->volume, jw_str(l->lspec, "image"), json_object_get(cmd), sc, true));
    if (l->lang->id == MUTATE_JAVA) java_extensions(l, sc, out->inits);
}

void lang_run(lctx *l) {
    mctx *m = l->m;
    if (l->lang->inject) {
        l->lang->inject(l);
        if (m->res->injected & MUTATE_BIT(l->lang->id)) record_use(m, l->lang->id, l->inst);
        return;
    }
    if (l->lang->prepare && !l->lang->prepare(l)) return;

    /* What the Instrumentation gives every pod, from this thread's cache. */
    inst_part part;
    size_t ncmd;
    const char *const *cmd = l->lang->command(l, &ncmd);
    cache_inst_part(m->req->cache, l, cmd, ncmd, &part);
    l->part = &part;
    size_t cap = jlen(jget(m->spec, "containers")) + jlen(jget(m->spec, "initContainers"));
    target *t = xcalloc(cap ? cap : 1, sizeof *t);
    size_t n = resolve_targets(l, t, cap), done = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *c = t[i].c;
        const char *why = NULL;
        if (l->lang->precheck && l->lang->precheck(l, c, &why)) {
            mctx_warn(m, "inject-%s: container %s skipped: %s", l->lang->name, jw_str(c, "name"), why);
            mctx_skip(m, MUTATE_SKIP_CONTAINER);
            continue;
        }
        env_share_if_not_set(c, part.lang_env, part.lang_env_names);
        l->lang->mount(l, c);
        sdk_common_env(l, c);
        if (l->lang->defaults) l->lang->defaults(l, c);
        sdk_configure(l, c, c);
        mctx_injected(m, l->lang->id, c);
        done++;
    }
    if (!done) {
        if (n) mctx_warn(m, "inject-%s: every target container was skipped; no init container added", l->lang->name);
        goto out;
    }
    m->res->injected |= MUTATE_BIT(l->lang->id);
    if (part.use) record_use_push(m, json_object_get(part.use));
    else record_use(m, l->lang->id, l->inst);
    sdk_tls_volumes(l);

    json_object *vols = jarr_at(m->spec, "volumes");
    if (!jw_find_named(vols, l->lang->volume, NULL)) jpush(vols, json_object_get(part.volume));

    json_object *inits = jarr_at(m->spec, "initContainers");
    if (!jw_find_named(inits, l->lang->volume, NULL)) {
        /* The part's init containers are shared: each gets a copy whose
         * edited lists are new (a later language may target it), and the
         * app container's securityContext when the Instrumentation has
         * none, last, where init_container puts it: the request's object
         * itself, which nothing edits in place (cow_container's rule). */
        json_object *sc = part.sc_from_pod ? jget(t[0].c, "securityContext") : NULL;
        size_t at = json_object_array_length(inits);
        if (t[0].init) jw_find_named(inits, jw_str(t[0].c, "name"), &at);
        for (size_t i = 0; i < json_object_array_length(part.inits); i++) {
            json_object *ic = cow_container(json_object_array_get_idx(part.inits, i));
            if (sc) jw_add(ic, "securityContext", json_object_get(sc));
            jinsert(inits, at + i, ic);
        }
    }
out:
    l->part = NULL;
    inst_part_release(&part);
    free(t);
}
