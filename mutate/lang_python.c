/* mutate/lang_python.c - Python: PYTHONPATH hook or entrypoint rewrite (spec 2.3).
 *
 * The reference loads the SDK through a sitecustomize module on PYTHONPATH.
 * The entrypoint mode (annotation instrumentation.opentelemetry.io/python-mode:
 * entrypoint, or the config default) instead prefixes an explicit container
 * command with opentelemetry-instrument, which bootstraps the same way but
 * survives images that set their own sitecustomize or clear PYTHONPATH; the
 * agent's packages stay on PYTHONPATH so the launcher itself can import them.
 * A container without an explicit command has nothing to prefix, so it falls
 * back to the PYTHONPATH hook with a warning. */
#include "mutate/internal.h"

#include "base/versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PY_ROOT "/otel-auto-instrumentation-python"
#define PY_AUTO PY_ROOT "/opentelemetry/instrumentation/auto_instrumentation"
#define PY_LAUNCHER PY_ROOT "/bin/opentelemetry-instrument"

static bool py_prepare(lctx *l) {
    const char *p = l->platform ? l->platform : "";
    if (!*p || strcmp(p, "glibc") == 0 || strcmp(p, "musl") == 0) return true;
    /* The reference still adds an init container copying from "" and the pod
     * never starts (spec 7.1); we leave Python out of this pod instead. */
    mctx_warn(l->m, "otel-python-platform: unsupported value \"%s\" (expected glibc or musl); Python not injected", p);
    mctx_skip(l->m, MUTATE_SKIP_INVALID);
    return false;
}

static bool py_precheck(lctx *l, json_object *c, const char **why) {
    (void)l;
    *why = "PYTHONPATH is set with valueFrom";
    return env_has_value_from(c, "PYTHONPATH");
}

static void set_pythonpath(lctx *l, json_object *c, const char *prefix, const char *suffix) {
    json_object *e = env_find(c, "PYTHONPATH", NULL);
    if (!e) {
        char *v = NULL;
        v = xcat(prefix, *prefix ? ":" : "", suffix, (char *)NULL);
        env_append(c, "PYTHONPATH", v);
        free(v);
        return;
    }
    if (jw_get(e, "valueFrom")) {
        /* From spec env: adding a value next to valueFrom gets the pod
         * rejected (spec 7.2), so the entry stays as it is. */
        mctx_warn(l->m, "inject-python: PYTHONPATH of container %s comes from valueFrom; the SDK is not loaded",
                  jw_str(c, "name"));
        return;
    }
    const char *old = jw_str(e, "value");
    char *v = NULL;
    v = xcat(prefix, *prefix ? ":" : "", old ? old : "", ":", suffix, (char *)NULL);
    env_set_value(c, e, v);
    free(v);
}

static void py_mount(lctx *l, json_object *c) {
    mount_add(c, l->lang->volume, l->lang->init_mount, false);
    json_object *cmd = jget(c, "command");
    if (l->entrypoint && jlen(cmd) > 0) {
        const char *first = json_object_get_string(json_object_array_get_idx(cmd, 0));
        if (!first || strcmp(first, PY_LAUNCHER) != 0) jinsert(cmd, 0, jnew_str(PY_LAUNCHER));
        set_pythonpath(l, c, "", PY_ROOT);
        return;
    }
    if (l->entrypoint)
        mctx_warn(l->m, "python-mode entrypoint: container %s has no command to prefix; using the PYTHONPATH hook",
                  jw_str(c, "name"));
    set_pythonpath(l, c, PY_AUTO, PY_ROOT);
}

static void py_defaults(lctx *l, json_object *c) {
    (void)l;
    static const char *const defs[][2] = {
        {"OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"},
        {"OTEL_TRACES_EXPORTER", "otlp"},
        {"OTEL_METRICS_EXPORTER", "otlp"},
        {"OTEL_LOGS_EXPORTER", "otlp"},
    };
    for (size_t i = 0; i < sizeof defs / sizeof defs[0]; i++)
        if (!env_find(c, defs[i][0], NULL)) env_append(c, defs[i][0], defs[i][1]);
}

static const char *const *py_command(lctx *l, size_t *n) {
    static const char *const glibc[] = {"cp", "-r", "/autoinstrumentation/.", PY_ROOT};
    static const char *const musl[] = {"cp", "-r", "/autoinstrumentation-musl/.", PY_ROOT};
    *n = 4;
    return l->platform && strcmp(l->platform, "musl") == 0 ? musl : glibc;
}

const mutate_lang mutate_lang_python = {
    .id = MUTATE_PYTHON,
    .name = "python",
    .display = "Python",
    .config_key = "python",
    .spec_key = "python",
    .res_key = "resourceRequirements",
    .default_image = DEFAULT_PYTHON_IMAGE,
    .request_cpu = "50m",
    .request_memory = "64Mi",
    .volume = "opentelemetry-auto-instrumentation-python",
    .init_mount = PY_ROOT,
    .prepare = py_prepare,
    .precheck = py_precheck,
    .mount = py_mount,
    .defaults = py_defaults,
    .command = py_command,
};
