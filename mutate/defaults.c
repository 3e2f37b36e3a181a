/* mutate/defaults.c - Instrumentation defaulting, and the store's
 * preparation step; see defaults.h. Per-language values (the spec key, the
 * resources field, default requests) are the language descriptors'.
 *
 * Where the reference is wrong (spec 8.22) the default-image annotations
 * are written only when absent: the reference overwrites them with the
 * current default on every update, which tells its upgrade routine that an
 * image defaulted long ago is the current default, so it is never
 * upgraded. A resources map the user filled in part is not completed, as
 * in the reference: completing it would change the init containers of
 * pods the reference injected. */
#include "mutate/defaults.h"

#include "base/json.h"
#include "base/shape.h"
#include "collector/defaults.h"
#include "mutate/internal.h"
#include "mutate/record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END {NULL, 0, NULL}

static const shape_field resources[] = {{"limits", SHAPE_STRMAP, NULL}, {"requests", SHAPE_STRMAP, NULL}, END};
/* Every language's fields; "resources" is Java's key, the others'
 * resourceRequirements, and both are listed for all: a stray one is still
 * read by nothing, but a wrong type there is the reference's 400. */
static const shape_field lang[] = {
    {"image", SHAPE_STRING, NULL},          {"resources", SHAPE_OBJECT, resources},
    {"resourceRequirements", SHAPE_OBJECT, resources}, {"volumeLimitSize", SHAPE_QUANTITY, NULL},
    {"volumeClaimTemplate", SHAPE_OBJECT, NULL}, {"env", SHAPE_OBJECTS, NULL},
    {"version", SHAPE_STRING, NULL},        {"configPath", SHAPE_STRING, NULL},
    {"configFile", SHAPE_STRING, NULL},     END};
static const shape_field sampler[] = {{"type", SHAPE_STRING, NULL}, {"argument", SHAPE_STRING, NULL}, END};
static const shape_field tls[] = {{"secretName", SHAPE_STRING, NULL}, {"configMapName", SHAPE_STRING, NULL},
                                  {"ca_file", SHAPE_STRING, NULL},    {"cert_file", SHAPE_STRING, NULL},
                                  {"key_file", SHAPE_STRING, NULL},   END};
static const shape_field exporter[] = {{"endpoint", SHAPE_STRING, NULL}, {"tls", SHAPE_OBJECT, tls}, END};
static const shape_field spec[] = {
    {"java", SHAPE_OBJECT, lang},      {"nodejs", SHAPE_OBJECT, lang},   {"python", SHAPE_OBJECT, lang},
    {"dotnet", SHAPE_OBJECT, lang},    {"go", SHAPE_OBJECT, lang},       {"apacheHttpd", SHAPE_OBJECT, lang},
    {"nginx", SHAPE_OBJECT, lang},     {"sampler", SHAPE_OBJECT, sampler}, {"exporter", SHAPE_OBJECT, exporter},
    END};
static const shape_field metadata[] = {{"name", SHAPE_STRING, NULL},        {"namespace", SHAPE_STRING, NULL},
                                       {"labels", SHAPE_STRMAP, NULL},      {"annotations", SHAPE_STRMAP, NULL},
                                       END};
static const shape_field instrumentation[] = {{"metadata", SHAPE_OBJECT, metadata}, {"spec", SHAPE_OBJECT, spec}, END};

char *mutate_check_instrumentation_shape(json_object *obj) { return shape_check(obj, instrumentation, ""); }

static json_object *cpu_mem(const char *cpu, const char *mem) {
    json_object *o = jnew_obj();
    jset_str(o, "cpu", cpu);
    jset_str(o, "memory", mem);
    return o;
}

static void set_if_empty(json_object *o, const char *key, const char *value) {
    const char *v = jstr(o, key);
    if (!v || !*v) jset_str(o, key, value);
}

int mutate_default_instrumentation(json_object *obj, const mutate_settings *s, char *err, size_t errlen) {
    if (!json_object_is_type(obj, json_type_object)) return 0;
    char *bad = mutate_check_instrumentation_shape(obj);
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        free(bad);
        return -1;
    }
    json_object *spec = jobj_at(obj, "spec"), *ann = NULL;
    for (int i = 0; i < MUTATE_NLANGS; i++) {
        const mutate_lang *lang = mutate_lang_get(i);
        if (!lang->request_cpu) continue; /* SDK: no agent, nothing to default */
        json_object *l = jobj_at(spec, lang->spec_key), *res = jobj_at(l, lang->res_key);
        if (s->images[i]) set_if_empty(l, "image", s->images[i]);
        if (!jget(res, "limits")) jset(res, "limits", cpu_mem("500m", "256Mi"));
        if (!jget(res, "requests")) jset(res, "requests", cpu_mem(lang->request_cpu, lang->request_memory));
    }
    json_object *apache = jobj_at(spec, "apacheHttpd"), *nginx = jobj_at(spec, "nginx");
    set_if_empty(apache, "version", "2.4");
    set_if_empty(apache, "configPath", "/usr/local/apache2/conf");
    set_if_empty(nginx, "configFile", "/etc/nginx/nginx.conf");
    for (int i = 0; i < MUTATE_NLANGS; i++) {
        const mutate_lang *lang = mutate_lang_get(i);
        char key[128];
        if (!lang->request_cpu || !s->images[i]) continue;
        snprintf(key, sizeof key, MUTATE_DEFAULT_IMAGE_ANNOTATION_FMT, lang->name);
        if (!ann) ann = jobj_at(jobj_at(obj, "metadata"), "annotations");
        if (!jstr(ann, key)) jset_str(ann, key, s->images[i]);
    }
    return 0;
}

/* The digest the status record keeps (mutate/record.h), once per object,
 * of the spec as the API server stores it: taken before our in-memory
 * defaulting, so that a new otel-webhook, whose defaulting may differ, does
 * not call every injected pod stale (what an upgrade changes in what is
 * injected, the images, is compared apart). */
static void spec_hash(json_object *obj) {
    if (!json_object_is_type(obj, json_type_object)) return;
    char h[17];
    mutate_spec_hash(jget(obj, "spec"), h);
    jset_str(obj, MUTATE_SPEC_HASH, h);
}

int mutate_prepare_resource(void *ud, const char *kind, json_object *obj, char *err, size_t errlen) {
    if (!strcmp(kind, "Instrumentation")) {
        spec_hash(obj);
        return mutate_default_instrumentation(obj, ud, err, errlen) != 0 ? -1 : 0;
    }
    if (strcmp(kind, "OpenTelemetryCollector") != 0) return 0;
    spec_hash(obj);
    if (collector_default(obj, err, errlen) != 0) {
        /* Kept as it came, with the reason: a sidecar of it is then refused
         * with that reason rather than built from a config the defaulting
         * could not read (a v1alpha1 YAML string, a collector past a bound). */
        jset_str(obj, COLLECTOR_DERIVED_ERROR, err);
        return -1;
    }
    return 0;
}
