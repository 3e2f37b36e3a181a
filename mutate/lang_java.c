/* mutate/lang_java.c - Java: the agent jar through JAVA_TOOL_OPTIONS (spec 2.1).
 *
 * Each container mounts the shared volume at its own path
 * (/otel-auto-instrumentation-java-<container>), as the reference does, so
 * JAVA_TOOL_OPTIONS names a path unique to the container. */
#include "mutate/internal.h"

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
    if (asprintf(&path, "/otel-auto-instrumentation-java-%s", jstr(c, "name") ? jstr(c, "name") : "") < 0) abort();
    mount_add(c, l->lang->volume, path, false);
    free(path);
}

static void java_defaults(lctx *l, json_object *c) {
    const char *name = jstr(c, "name") ? jstr(c, "name") : "";
    char *suffix = NULL;
    bool ext = jlen(jget(l->lspec, "extensions")) > 0;
    if (asprintf(&suffix, " -javaagent:/otel-auto-instrumentation-java-%s/javaagent.jar%s%s%s", name,
                 ext ? " -Dotel.javaagent.extensions=/otel-auto-instrumentation-java-" : "", ext ? name : "",
                 ext ? "/extensions" : "") < 0)
        abort();
    json_object *e = env_find(c, "JAVA_TOOL_OPTIONS", NULL);
    if (!e) env_append(c, "JAVA_TOOL_OPTIONS", suffix);
    else if (!jget(e, "valueFrom")) {
        /* A valueFrom that came from spec env is left alone (agent not loaded), as the reference does. */
        const char *old = jstr(e, "value");
        char *v = NULL;
        if (asprintf(&v, "%s%s", old ? old : "", suffix) < 0) abort();
        json_object_object_add(e, "value", json_object_new_string(v));
        free(v);
    } else {
        mctx_warn(l->m, "inject-java: JAVA_TOOL_OPTIONS of container %s comes from valueFrom; the agent is not loaded", name);
    }
    free(suffix);
}

static json_object *java_command(lctx *l) {
    (void)l;
    return jstrs(3, "cp", "/javaagent.jar", "/otel-auto-instrumentation-java/javaagent.jar");
}

const mutate_lang mutate_lang_java = {
    .id = MUTATE_JAVA,
    .name = "java",
    .display = "Java",
    .spec_key = "java",
    .res_key = "resources",
    .volume = "opentelemetry-auto-instrumentation-java",
    .init_mount = "/otel-auto-instrumentation-java",
    .precheck = java_precheck,
    .mount = java_mount,
    .defaults = java_defaults,
    .command = java_command,
};
