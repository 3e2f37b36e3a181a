/* mutate/lang_nodejs.c - Node.js: --require of the SDK through NODE_OPTIONS (spec 2.2). */
#include "mutate/internal.h"

#include "base/versions.h"

#include <stdio.h>
#include <stdlib.h>

#define NODE_REQUIRE " --require /otel-auto-instrumentation-nodejs/autoinstrumentation.js"

static bool node_precheck(lctx *l, json_object *c, const char **why) {
    (void)l;
    *why = "NODE_OPTIONS is set with valueFrom";
    return env_has_value_from(c, "NODE_OPTIONS");
}

static void node_mount(lctx *l, json_object *c) { mount_add(c, l->lang->volume, l->lang->init_mount, false); }

static void node_defaults(lctx *l, json_object *c) {
    json_object *e = env_find(c, "NODE_OPTIONS", NULL);
    if (!e) env_append(c, "NODE_OPTIONS", NODE_REQUIRE);
    else if (!jw_get(e, "valueFrom")) {
        const char *old = jw_str(e, "value");
        char *v = NULL;
        v = xcat(old ? old : "", NODE_REQUIRE, (char *)NULL);
        env_set_value(c, e, v);
        free(v);
    } else {
        mctx_warn(l->m, "inject-nodejs: NODE_OPTIONS of container %s comes from valueFrom; the SDK is not loaded",
                  jw_str(c, "name"));
    }
    if (!env_find(c, "OTEL_METRICS_EXPORTER", NULL)) env_append(c, "OTEL_METRICS_EXPORTER", "otlp");
}

static const char *const *node_command(lctx *l, size_t *n) {
    static const char *const words[] = {"cp", "-r", "/autoinstrumentation/.", "/otel-auto-instrumentation-nodejs"};
    (void)l;
    *n = sizeof words / sizeof *words;
    return words;
}

const mutate_lang mutate_lang_nodejs = {
    .id = MUTATE_NODEJS,
    .name = "nodejs",
    .display = "NodeJS",
    .config_key = "node-js",
    .spec_key = "nodejs",
    .res_key = "resourceRequirements",
    .default_image = DEFAULT_NODEJS_IMAGE,
    .request_cpu = "50m",
    .request_memory = "128Mi",
    .volume = "opentelemetry-auto-instrumentation-nodejs",
    .init_mount = "/otel-auto-instrumentation-nodejs",
    .precheck = node_precheck,
    .mount = node_mount,
    .defaults = node_defaults,
    .command = node_command,
};
