/* mutate/defaults.c - Instrumentation defaulting, and the store's
 * preparation step; see defaults.h. Per-language values (the spec key, the
 * resources field, default requests) are the language descriptors'. */
#include "mutate/defaults.h"

#include "base/json.h"
#include "collector/defaults.h"
#include "mutate/internal.h"
#include "mutate/record.h"

#include <string.h>

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

void mutate_default_instrumentation(json_object *obj, const mutate_settings *s) {
    if (!json_object_is_type(obj, json_type_object)) return;
    json_object *spec = jobj_at(obj, "spec");
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
}

/* The digest the status record keeps (mutate/record.h), once per object. */
static void spec_hash(json_object *obj) {
    char h[17];
    mutate_spec_hash(jget(obj, "spec"), h);
    jset_str(obj, MUTATE_SPEC_HASH, h);
}

int mutate_prepare_resource(void *ud, const char *kind, json_object *obj, char *err, size_t errlen) {
    if (!strcmp(kind, "Instrumentation")) {
        mutate_default_instrumentation(obj, ud);
        spec_hash(obj);
        return 0;
    }
    if (!strcmp(kind, "OpenTelemetryCollector") && collector_default(obj, err, errlen) != 0) {
        /* Kept as it came, with the reason: a sidecar of it is then refused
         * with that reason rather than built from a config the defaulting
         * could not read (a v1alpha1 YAML string, a collector past a bound). */
        jset_str(obj, COLLECTOR_DERIVED_ERROR, err);
        spec_hash(obj);
        return -1;
    }
    if (!strcmp(kind, "OpenTelemetryCollector")) spec_hash(obj);
    return 0;
}
