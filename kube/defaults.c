/* kube/defaults.c - CR defaulting; see defaults.h. */
#include "kube/defaults.h"

#include "base/json.h"
#include "kube/collector.h"
#include "kube/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    jset(spec, "config", work);
    config = work;
    char perr[256] = "";
    json_object *ports = kube_collector_container_ports(config, json_object_object_get(spec, "ports"), perr, sizeof perr);
    if (ports) jset(obj, KUBE_COLLECTOR_DERIVED_PORTS, ports);
    else jset(obj, KUBE_COLLECTOR_DERIVED_ERROR, jnew_str(perr));
    char *yaml = kube_collector_config_yaml(config);
    if (yaml) jset(obj, KUBE_COLLECTOR_DERIVED_YAML, jnew_str(yaml));
    free(yaml);
    return 0;
}
