/* mutate/lang_go.c - Go: the eBPF instrumentation sidecar (spec 2.5).
 *
 * Go binaries cannot load an agent, so a privileged sidecar attaches to the
 * application's process through the shared process namespace and
 * /sys/kernel/debug. The OTEL_* configuration lands on the sidecar but is
 * computed from the application container (its name, image, owners).
 *
 * Unlike the reference (spec 7.8), a target that does not exist is not
 * replaced by the first container: the wrong process would be traced under
 * the wrong name. The sidecar is built completely before the pod is
 * touched, so a missing OTEL_GO_AUTO_TARGET_EXE leaves nothing to revert. */
#include "mutate/internal.h"

#include "base/versions.h"

#include <string.h>

#define GO_SIDECAR "opentelemetry-auto-instrumentation"

static json_object *kernel_debug_volume(void) {
    json_object *v = jnew_obj(), *hp = jnew_obj();
    jset(v, "name", jnew_str("kernel-debug"));
    jset(hp, "path", jnew_str("/sys/kernel/debug"));
    jset(v, "hostPath", hp);
    return v;
}

static void go_inject(lctx *l) {
    mctx *m = l->m;
    json_object *cs = jget(m->spec, "containers"), *app = NULL;
    if (l->nnames > 1) {
        mctx_warn(m, "inject-go: the Go sidecar instruments one container, %zu are listed; Go not injected", l->nnames);
        mctx_skip(m, MUTATE_SKIP_INVALID);
        return;
    }
    json_object *spn = jget(m->spec, "shareProcessNamespace");
    if (json_object_is_type(spn, json_type_boolean) && !json_object_get_boolean(spn)) {
        mctx_warn(m, "inject-go: shareProcessNamespace is false and the Go sidecar needs it; Go not injected");
        mctx_skip(m, MUTATE_SKIP_INVALID);
        return;
    }
    if (!l->nnames) app = json_object_array_get_idx(cs, 0);
    else if (!(app = jw_find_named(cs, l->names[0], NULL))) {
        bool init = jw_find_named(jget(m->spec, "initContainers"), l->names[0], NULL) != NULL;
        mctx_warn(m, init ? "inject-go: %s is an init container, which the Go sidecar cannot instrument; Go not injected"
                          : "inject-go: no container named %s in the pod; Go not injected",
                  l->names[0]);
        mctx_skip(m, init ? MUTATE_SKIP_CONTAINER : MUTATE_SKIP_UNKNOWN_CONTAINER);
        return;
    }
    if (!json_object_is_type(app, json_type_object)) return;

    json_object *sc = jnew_obj();
    jset(sc, "name", jnew_str(GO_SIDECAR));
    jset(sc, "image", jnew_str(jw_str(l->lspec, "image") ? jw_str(l->lspec, "image") : ""));
    json_object *res = jget(l->lspec, "resourceRequirements");
    if (res) jset(sc, "resources", jw_copy(res));
    json_object *secctx = jget(l->lspec, "securityContext");
    if (secctx) jset(sc, "securityContext", jw_copy(secctx));
    else {
        secctx = jnew_obj();
        jset(secctx, "privileged", jnew_bool(1));
        jset(secctx, "runAsUser", jnew_int(0));
        jset(sc, "securityContext", secctx);
    }
    mount_add(sc, "kernel-debug", "/sys/kernel/debug", false);
    const char *pp = jstr(l->ispec, "imagePullPolicy");
    if (pp && *pp) jset(sc, "imagePullPolicy", jnew_str(pp));

    /* The annotation is a pod annotation only; present-but-empty counts. */
    const char *exe = jstr(pod_annotations(m), ANN(GO_TARGET_EXE));
    if (exe) env_append(sc, "OTEL_GO_AUTO_TARGET_EXE", exe);
    env_append_if_not_set(sc, jw_get(l->lspec, "env"));
    sdk_common_env(l, sc);
    sdk_configure(l, sc, app);
    if (!env_find(sc, "OTEL_GO_AUTO_TARGET_EXE", NULL)) {
        mctx_warn(m, "inject-go: no OTEL_GO_AUTO_TARGET_EXE (annotation %s or the Instrumentation's go.env); "
                     "Go not injected", ANN(GO_TARGET_EXE));
        mctx_skip(m, MUTATE_SKIP_INVALID);
        json_object_put(sc);
        return;
    }
    jset(m->spec, "shareProcessNamespace", jnew_bool(1));
    jpush(jarr_at(m->spec, "containers"), sc);
    json_object *vols = jarr_at(m->spec, "volumes");
    if (!jw_find_named(vols, "kernel-debug", NULL)) jpush(vols, kernel_debug_volume());
    sdk_tls_volumes(l);
    m->res->injected |= MUTATE_BIT(MUTATE_GO);
    mctx_injected(m, MUTATE_GO, app); /* what the Go sidecar instruments */
}

const mutate_lang mutate_lang_go = {
    .id = MUTATE_GO,
    .name = "go",
    .display = "Go",
    .config_key = "go",
    .spec_key = "go",
    .res_key = "resourceRequirements",
    .default_image = DEFAULT_GO_IMAGE,
    .request_cpu = "50m",
    .request_memory = "64Mi",
    .inject = go_inject,
};
