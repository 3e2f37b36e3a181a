/* kube/defaults.c - CR defaulting; see defaults.h. */
#include "kube/defaults.h"

#include "kube/collector.h"
#include "kube/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct lang_defaults {
    mutate_lang_id id;
    const char *key, *res_key, *req_cpu, *req_mem;
} langs[] = {
    {MUTATE_JAVA, "java", "resources", "50m", "64Mi"},
    {MUTATE_NODEJS, "nodejs", "resourceRequirements", "50m", "128Mi"},
    {MUTATE_PYTHON, "python", "resourceRequirements", "50m", "64Mi"},
    {MUTATE_DOTNET, "dotnet", "resourceRequirements", "50m", "128Mi"},
    {MUTATE_GO, "go", "resourceRequirements", "50m", "64Mi"},
    {MUTATE_APACHE, "apacheHttpd", "resourceRequirements", "1m", "128Mi"},
    {MUTATE_NGINX, "nginx", "resourceRequirements", "1m", "128Mi"},
};

static json_object *child(json_object *parent, const char *key) {
    json_object *v = NULL;
    if (json_object_object_get_ex(parent, key, &v) && json_object_is_type(v, json_type_object)) return v;
    v = json_object_new_object();
    json_object_object_add(parent, key, v);
    return v;
}

static json_object *cpu_mem(const char *cpu, const char *mem) {
    json_object *o = json_object_new_object();
    json_object_object_add(o, "cpu", json_object_new_string(cpu));
    json_object_object_add(o, "memory", json_object_new_string(mem));
    return o;
}

static void set_if_empty(json_object *o, const char *key, const char *value) {
    json_object *v = NULL;
    if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) && *json_object_get_string(v))
        return;
    json_object_object_add(o, key, json_object_new_string(value));
}

void kube_default_instrumentation(json_object *obj, const kube_config *cfg) {
    if (!json_object_is_type(obj, json_type_object)) return;
    json_object *spec = child(obj, "spec");
    for (size_t i = 0; i < sizeof langs / sizeof *langs; i++) {
        json_object *l = child(spec, langs[i].key), *res = child(l, langs[i].res_key), *v;
        if (cfg->images[langs[i].id]) set_if_empty(l, "image", cfg->images[langs[i].id]);
        if (!json_object_object_get_ex(res, "limits", &v) || !v) json_object_object_add(res, "limits", cpu_mem("500m", "256Mi"));
        if (!json_object_object_get_ex(res, "requests", &v) || !v)
            json_object_object_add(res, "requests", cpu_mem(langs[i].req_cpu, langs[i].req_mem));
    }
    json_object *apache = child(spec, "apacheHttpd"), *nginx = child(spec, "nginx");
    set_if_empty(apache, "version", "2.4");
    set_if_empty(apache, "configPath", "/usr/local/apache2/conf");
    set_if_empty(nginx, "configFile", "/etc/nginx/nginx.conf");
}

int kube_default_collector(json_object *obj, char *err, size_t errlen) {
    json_object *spec = NULL, *config = NULL;
    if (!json_object_object_get_ex(obj, "spec", &spec) || !json_object_is_type(spec, json_type_object)) {
        snprintf(err, errlen, "spec is missing");
        return -1;
    }
    if (!json_object_object_get_ex(spec, "config", &config) || !config) {
        snprintf(err, errlen, "spec.config is missing");
        return -1;
    }
    /* Defaulting works on a copy that replaces spec.config only once it
     * succeeded: a failed object stays exactly as it came (defaults.h). */
    json_object *work = NULL;
    if (json_object_is_type(config, json_type_string)) {
        /* v1alpha1 carries the config as a YAML string. */
        kube_yaml_error ye;
        const char *text = json_object_get_string(config);
        if (!(work = kube_yaml_parse_one(text, strlen(text), &ye))) {
            snprintf(err, errlen, "spec.config line %d: %s", ye.line, ye.msg);
            return -1;
        }
    } else if (json_object_deep_copy(config, &work, NULL) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (!json_object_is_type(work, json_type_object)) {
        snprintf(err, errlen, "spec.config is not a map");
        json_object_put(work);
        return -1;
    }
    if (kube_collector_default_config(work, err, errlen) != 0) {
        json_object_put(work);
        return -1;
    }
    json_object_object_add(spec, "config", work);
    config = work;
    char perr[256] = "";
    json_object *ports = kube_collector_container_ports(config, json_object_object_get(spec, "ports"), perr, sizeof perr);
    if (ports) json_object_object_add(obj, KUBE_COLLECTOR_DERIVED_PORTS, ports);
    else json_object_object_add(obj, KUBE_COLLECTOR_DERIVED_ERROR, json_object_new_string(perr));
    char *yaml = kube_collector_config_yaml(config);
    if (yaml) json_object_object_add(obj, KUBE_COLLECTOR_DERIVED_YAML, json_object_new_string(yaml));
    free(yaml);
    return 0;
}
