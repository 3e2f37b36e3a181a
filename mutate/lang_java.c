/* mutate/lang_java.c - Java: the agent jar through JAVA_TOOL_OPTIONS (spec 2.1).
 *
 * Each container mounts the shared volume at its own path
 * (/otel-auto-instrumentation-java-<container>), as the reference does, so
 * JAVA_TOOL_OPTIONS names a path unique to the container. */
#include "mutate/internal.h"

#include "base/versions.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool java_precheck(lctx *l, json_object *c, const char **why) {
    (void)l;
    *why = "JAVA_TOOL_OPTIONS is set with valueFrom";
    return env_has_value_from(c, "JAVA_TOOL_OPTIONS");
}

static void java_mount(lctx *l, json_object *c) {
    char *path = NULL;
    path = xcat("/otel-auto-instrumentation-java-", jw_str(c, "name") ? jw_str(c, "name") : "", (char *)NULL);
    mount_add(c, l->lang->volume, path, false);
    free(path);
}

static void java_defaults(lctx *l, json_object *c) {
    const char *name = jw_str(c, "name") ? jw_str(c, "name") : "";
    bool ext = jlen(jget(l->lspec, "extensions")) > 0;
    char *suffix = xcat(" -javaagent:/otel-auto-instrumentation-java-", name, "/javaagent.jar",
                        ext ? " -Dotel.javaagent.extensions=/otel-auto-instrumentation-java-" : "", ext ? name : "",
                        ext ? "/extensions" : "", (char *)NULL);
    json_object *e = env_find(c, "JAVA_TOOL_OPTIONS", NULL);
    if (!e) env_append(c, "JAVA_TOOL_OPTIONS", suffix);
    else if (!jw_get(e, "valueFrom")) {
        /* A valueFrom that came from spec env is left alone (agent not loaded), as the reference does. */
        const char *old = jw_str(e, "value");
        char *v = NULL;
        v = xcat(old ? old : "", suffix, (char *)NULL);
        env_set_value(c, e, v);
        free(v);
    } else {
        mctx_warn(l->m, "inject-java: JAVA_TOOL_OPTIONS of container %s comes from valueFrom; the agent is not loaded", name);
    }
    free(suffix);
}

static const char *const *java_command(lctx *l, size_t *n) {
    static const char *const words[] = {"cp", "/javaagent.jar", "/otel-auto-instrumentation-java/javaagent.jar"};
    (void)l;
    *n = sizeof words / sizeof *words;
    return words;
}

const mutate_lang mutate_lang_java = {
    .id = MUTATE_JAVA,
    .name = "java",
    .display = "Java",
    .config_key = "java",
    .spec_key = "java",
    .res_key = "resources",
    .default_image = DEFAULT_JAVA_IMAGE,
    .request_cpu = "50m",
    .request_memory = "64Mi",
    .volume = "opentelemetry-auto-instrumentation-java",
    .init_mount = "/otel-auto-instrumentation-java",
    .precheck = java_precheck,
    .mount = java_mount,
    .defaults = java_defaults,
    .command = java_command,
};
