/* collector/probes.c - health_check probes; see probes.h. */
#include "collector/probes.h"

#include "base/json.h"
#include "collector/components.h"

#include <stdint.h>
#include <string.h>

/* The spec.<x>Probe fields that override the generated probe, in the order
 * Go's corev1.Probe serialises them. Zero values are omitted like Go's
 * omitempty does; the API server then applies its own defaults. */
static const char *const probe_fields[] = {"initialDelaySeconds", "timeoutSeconds", "periodSeconds",
                                           "successThreshold", "failureThreshold"};

static json_object *make_probe(const char *path, long portnum, json_object *tune) {
    json_object *probe = jnew_obj(), *http = jset_obj(probe, "httpGet"), *v;
    jset_str(http, "path", path);
    jset_int(http, "port", (int32_t)portnum);
    for (size_t i = 0; i < sizeof probe_fields / sizeof *probe_fields; i++) {
        v = jget(tune, probe_fields[i]);
        if (!json_object_is_type(v, json_type_int)) continue;
        int64_t x = json_object_get_int64(v);
        if (x != 0 && x >= INT32_MIN && x <= INT32_MAX) jset_int(probe, probe_fields[i], x);
    }
    /* Copied whenever the spec probe exists, zero included (it is a pointer
     * in Go, so 0 survives serialisation). */
    v = jget(tune, "terminationGracePeriodSeconds");
    if (json_object_is_type(v, json_type_int)) jset_int(probe, "terminationGracePeriodSeconds", json_object_get_int64(v));
    return probe;
}

void collector_probes(json_object *spec, json_object **liveness, json_object **readiness, json_object **startup) {
    static const char *const tune_keys[3] = {"livenessProbe", "readinessProbe", "startupProbe"};
    json_object **outs[3] = {liveness, readiness, startup};
    json_object *config = jmap(spec, "config"), *exts, *list, *cfg;
    const char *id = NULL, *path;
    long portnum;

    for (int i = 0; i < 3; i++)
        if (outs[i]) *outs[i] = NULL;
    /* The reference needs the extensions map to exist; the entry itself may
     * be missing, in which case the defaults apply. */
    if (!(exts = jmap(config, "extensions"))) return;
    list = jarr(jmap(config, "service"), "extensions");
    for (size_t i = 0; i < jlen(list) && !id; i++) {
        json_object *e = json_object_array_get_idx(list, i);
        if (json_object_is_type(e, json_type_string) &&
            collector_component(COLLECTOR_EXTENSIONS, json_object_get_string(e))->kind == K_HEALTH_CHECK)
            id = json_object_get_string(e);
    }
    if (!id) return;
    cfg = jmap(exts, id);
    path = jstr(cfg, "path");
    if (!path || !*path) path = "/";
    if ((portnum = collector_config_port(cfg)) == 0) portnum = COLLECTOR_HEALTH_CHECK_PORT;
    for (int i = 0; i < 3; i++)
        if (outs[i]) *outs[i] = make_probe(path, portnum, jmap(spec, tune_keys[i]));
}
