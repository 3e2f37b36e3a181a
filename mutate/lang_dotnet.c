/* mutate/lang_dotnet.c - .NET: the CLR profiler and startup hook (spec 2.4).
 *
 * glibc and musl images take different native profilers
 * (otel-dotnet-auto-runtime: linux-x64 or linux-musl-x64); the agent image
 * carries both, so only CORECLR_PROFILER_PATH changes. */
#include "mutate/internal.h"

#include "base/versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOTNET_ROOT "/otel-auto-instrumentation-dotnet"

static bool dotnet_prepare(lctx *l) {
    const char *r = l->platform ? l->platform : "";
    if (*r && strcmp(r, "linux-x64") && strcmp(r, "linux-musl-x64")) {
        /* The reference skips every container but still adds the init
         * container (spec 7.9); nothing is added here. */
        mctx_warn(l->m, "otel-dotnet-auto-runtime: unsupported value \"%s\" (expected linux-x64 or linux-musl-x64); "
                        ".NET not injected", r);
        mctx_skip(l->m, MUTATE_SKIP_INVALID);
        return false;
    }
    if (jw_find_named(jw_get(l->lspec, "env"), "OTEL_DOTNET_AUTO_HOME", NULL)) {
        mctx_warn(l->m, "inject-dotnet: the Instrumentation's dotnet.env sets OTEL_DOTNET_AUTO_HOME; .NET not injected");
        mctx_skip(l->m, MUTATE_SKIP_INVALID);
        return false;
    }
    return true;
}

static bool dotnet_precheck(lctx *l, json_object *c, const char **why) {
    (void)l;
    static const char *const vars[] = {"DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE"};
    for (size_t i = 0; i < 3; i++)
        if (env_has_value_from(c, vars[i])) {
            *why = i == 0 ? "DOTNET_STARTUP_HOOKS is set with valueFrom"
                   : i == 1 ? "DOTNET_ADDITIONAL_DEPS is set with valueFrom"
                            : "DOTNET_SHARED_STORE is set with valueFrom";
            return true;
        }
    *why = "OTEL_DOTNET_AUTO_HOME is already set (the container ships its own agent)";
    return env_find(c, "OTEL_DOTNET_AUTO_HOME", NULL) != NULL;
}

static void dotnet_mount(lctx *l, json_object *c) { mount_add(c, l->lang->volume, l->lang->init_mount, false); }

/* keep: an existing entry stays; concat: an existing value becomes
 * "<existing>:<ours>". A valueFrom entry is never modified. */
static void set(json_object *c, const char *name, const char *value, bool concat) {
    json_object *e = env_find(c, name, NULL);
    if (!e) { env_append(c, name, value); return; }
    if (!concat || jw_get(e, "valueFrom")) return;
    const char *old = jw_str(e, "value");
    char *v = NULL;
    v = xcat(old ? old : "", ":", value, (char *)NULL);
    env_set_value(c, e, v);
    free(v);
}

static void dotnet_defaults(lctx *l, json_object *c) {
    bool musl = l->platform && !strcmp(l->platform, "linux-musl-x64");
    set(c, "CORECLR_ENABLE_PROFILING", "1", false);
    set(c, "CORECLR_PROFILER", "{918728DD-259F-4A6A-AC2B-B85E1B658318}", false);
    set(c, "CORECLR_PROFILER_PATH",
        musl ? DOTNET_ROOT "/linux-musl/OpenTelemetry.AutoInstrumentation.Native.so"
             : DOTNET_ROOT "/linux/OpenTelemetry.AutoInstrumentation.Native.so",
        false);
    set(c, "DOTNET_STARTUP_HOOKS", DOTNET_ROOT "/net/OpenTelemetry.AutoInstrumentation.StartupHook.dll", true);
    set(c, "DOTNET_ADDITIONAL_DEPS", DOTNET_ROOT "/AdditionalDeps", true);
    set(c, "OTEL_DOTNET_AUTO_HOME", DOTNET_ROOT, false);
    set(c, "DOTNET_SHARED_STORE", DOTNET_ROOT "/store", true);
}

static const char *const *dotnet_command(lctx *l, size_t *n) {
    static const char *const words[] = {"cp", "-r", "/autoinstrumentation/.", DOTNET_ROOT};
    (void)l;
    *n = sizeof words / sizeof *words;
    return words;
}

const mutate_lang mutate_lang_dotnet = {
    .id = MUTATE_DOTNET,
    .name = "dotnet",
    .display = ".NET",
    .config_key = "dot-net",
    .spec_key = "dotnet",
    .res_key = "resourceRequirements",
    .default_image = DEFAULT_DOTNET_IMAGE,
    .request_cpu = "50m",
    .request_memory = "128Mi",
    .volume = "opentelemetry-auto-instrumentation-dotnet",
    .init_mount = DOTNET_ROOT,
    .prepare = dotnet_prepare,
    .precheck = dotnet_precheck,
    .mount = dotnet_mount,
    .defaults = dotnet_defaults,
    .command = dotnet_command,
};
