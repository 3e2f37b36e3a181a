/* collector/config.c - config YAML; see config.h.
 *
 * The reference serialises Go structs (fixed field order) wrapping Go maps
 * (sorted keys). json-c objects keep insertion order and the emitter writes
 * keys in object order, so we build a reordered deep copy and emit that. */
#include "collector/config.h"

#include "base/json.h"
#include "kube/yaml.h"

#include <stdlib.h>
#include <string.h>

typedef enum { Y_ROOT, Y_SERVICE, Y_PIPELINES, Y_PIPELINE, Y_OTHER } yctx;

static const char *const root_order[] = {"receivers", "exporters", "processors", "connectors", "extensions", "service", NULL};
static const char *const service_order[] = {"extensions", "telemetry", "pipelines", NULL};
static const char *const pipeline_order[] = {"exporters", "processors", "receivers", NULL};

static int in_order(const char *const *order, const char *key) {
    for (; order && *order; order++)
        if (strcmp(*order, key) == 0) return 1;
    return 0;
}

static yctx child_ctx(yctx ctx, const char *key) {
    if (ctx == Y_ROOT && strcmp(key, "service") == 0) return Y_SERVICE;
    if (ctx == Y_SERVICE && strcmp(key, "pipelines") == 0) return Y_PIPELINES;
    if (ctx == Y_PIPELINES) return Y_PIPELINE;
    return Y_OTHER;
}

static int reorder(json_object *src, yctx ctx, int depth, json_object **out);

/* The struct's fields first, in its order, then every other key sorted. */
static int reorder_object(json_object *src, yctx ctx, int depth, json_object **out) {
    const char *const *order = ctx == Y_ROOT ? root_order : ctx == Y_SERVICE ? service_order
                               : ctx == Y_PIPELINE ? pipeline_order : NULL;
    json_object *o = jnew_obj();
    size_t n;
    jkv *m = jsorted_members(src, &n);
    int rc = 0;
    for (const char *const *k = order; k && *k && rc == 0; k++) {
        json_object *v;
        if (!json_object_object_get_ex(src, *k, &v)) continue;
        json_object *c;
        if ((rc = reorder(v, child_ctx(ctx, *k), depth + 1, &c)) == 0) jset(o, *k, c);
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (in_order(order, m[i].key)) continue;
        json_object *c;
        if ((rc = reorder(m[i].val, child_ctx(ctx, m[i].key), depth + 1, &c)) == 0) jset(o, m[i].key, c);
    }
    free(m);
    if (rc != 0) {
        json_object_put(o);
        return -1;
    }
    *out = o;
    return 0;
}

/* Deep copy of src with maps reordered. Scalars are copied, not shared, so
 * the caller's tree is never touched (not even its reference counts). */
static int reorder(json_object *src, yctx ctx, int depth, json_object **out) {
    *out = NULL;
    if (depth > COLLECTOR_YAML_MAX_DEPTH) return -1;
    switch (json_object_get_type(src)) {
    case json_type_null:
        return 0;
    case json_type_object:
        return reorder_object(src, ctx, depth, out);
    case json_type_array: {
        size_t n = json_object_array_length(src);
        json_object *a = jnew_arr();
        for (size_t i = 0; i < n; i++) {
            json_object *c;
            if (reorder(json_object_array_get_idx(src, i), Y_OTHER, depth + 1, &c) < 0) {
                json_object_put(a);
                return -1;
            }
            jpush(a, c);
        }
        *out = a;
        return 0;
    }
    default:
        *out = jcopy(src);
        return 0;
    }
}

char *collector_config_yaml_capped(json_object *config, size_t max_bytes, bool *too_big) {
    /* goccy/go-yaml's quoting: 0.0.0.0:4317 plain, as the reference
     * writes it (the ConfigMap text is compared and hashed, and the
     * sidecar's OTEL_CONFIG is the same text). */
    kube_yaml_style goccy = {2, 0, KUBE_YAML_QUOTE_GO_YAML, max_bytes};
    json_object *copy = NULL;
    if (too_big) *too_big = false;
    if (config == NULL) copy = jnew_obj();
    else if (reorder(config, Y_ROOT, 0, &copy) < 0) return NULL;
    char *text = kube_yaml_emit_style(copy, &goccy);
    json_object_put(copy);
    if (!text && too_big) *too_big = true;
    return text;
}

char *collector_config_yaml(json_object *config) { return collector_config_yaml_capped(config, 0, NULL); }
