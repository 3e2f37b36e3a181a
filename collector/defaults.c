/* collector/defaults.c - the reference's collector defaulting
 * (cr-admission.md 2.2, 2.3); see defaults.h.
 *
 * The reference computes a defaults map per component and deep-merges the
 * user's map over it, defaults winning only where they are set. Since the
 * defaults are themselves derived from the user's endpoint, that is the same
 * as editing the user's map in place, which is what we do.
 *
 * Where the reference's defaulting is wrong (spec 8.13, 8.14) we leave the
 * user's value alone: a host without a port ("myhost") is not turned into
 * "0.0.0.0:myhost", and a telemetry section of a shape its model does not
 * know is not replaced wholesale. Values of the wrong type in an enabled
 * component (a receiver that is a string, a numeric endpoint) are refused,
 * as the reference's decoder refuses them, with a message of our own that
 * names the field instead of a multi-line decoder dump. */
#include "collector/defaults.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"
#include "collector/components.h"
#include "collector/config.h"
#include "collector/convert.h"
#include "collector/ports.h"
#include "collector/shape.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_HOST COLLECTOR_DEFAULT_HOST

/* o[key] as a map to write defaults into: created when absent or null, NULL
 * when it holds something else (the user's value wins). */
static json_object *make_map(json_object *o, const char *key) {
    json_object *v = NULL;
    if (!json_object_is_type(o, json_type_object)) return NULL;
    if (json_object_object_get_ex(o, key, &v) && v != NULL)
        return json_object_is_type(v, json_type_object) ? v : NULL;
    return jset_obj(o, key);
}

/* An endpoint without a host (":4317", or the port alone: "4317") gets
 * DEFAULT_HOST prefixed, as in the reference. Values of other shapes stay
 * as the user wrote them ("localhost" is not a port: spec 8.13). */
static void prefix_host(json_object *m, const char *key) {
    const char *s = jstr(m, key);
    if (!s || !*s) return;
    if (s[0] != ':' && s[strspn(s, "0123456789")] != '\0') return;
    char *p = xasprintf(DEFAULT_HOST "%s%s", s[0] == ':' ? "" : ":", s);
    jset_str(m, key, p);
    free(p);
}

/* An empty endpoint (absent, null or "") becomes DEFAULT_HOST:port. */
static void default_endpoint(json_object *m, const char *key, long port) {
    json_object *v = jget(m, key);
    if (v == NULL || (json_object_is_type(v, json_type_string) && json_object_get_string_len(v) == 0)) {
        char buf[64];
        snprintf(buf, sizeof(buf), DEFAULT_HOST ":%ld", port);
        jset_str(m, key, buf);
        return;
    }
    prefix_host(m, key);
}

/* Absent, null or a map; else the reason in err. */
static int want_map(json_object *o, const char *key, const char *path, char *err, size_t errlen) {
    json_object *v = jget(o, key);
    if (!v || json_object_is_type(v, json_type_object)) return 0;
    return err_printf(err, errlen, "%s%s%s: expected a map, got %s", path, *path ? "." : "", key, jtype_name(v));
}

static int want_string(json_object *o, const char *key, const char *path, char *err, size_t errlen) {
    json_object *v = jget(o, key);
    if (!v || json_object_is_type(v, json_type_string)) return 0;
    return err_printf(err, errlen, "%s.%s: expected a string, got %s", path, key, jtype_name(v));
}

/* What the reference's decoder would refuse in the enabled components it
 * defaults: the shapes below, and protocols a multi-protocol receiver does
 * not know. Checked before anything is edited, so a failed defaulting
 * leaves the config untouched. */
static int check_components(json_object *config, const collector_kind *kinds, const collector_ids *ids, char *err,
                            size_t errlen) {
    for (int k = 0; k < 3; k++) {
        const char *key = collector_kind_key(kinds[k]);
        if (want_map(config, key, "", err, errlen)) return -1;
        json_object *section = jmap(config, key);
        for (size_t i = 0; i < ids[k].n; i++) {
            const char *id = ids[k].v[i];
            const collector_component_def *d = collector_component(kinds[k], id);
            char path[512];
            snprintf(path, sizeof path, "%s.%s", key, id);
            if (d->kind == K_NONE || d->kind == K_GENERIC || d->kind == K_PROMETHEUS_RX) continue;
            if (d->kind == K_SINGLE && d->port == 0) continue;
            if (want_map(section, id, key, err, errlen)) return -1;
            json_object *cfg = jmap(section, id);
            if (d->kind == K_JAEGER_QUERY) {
                char sub[600];
                for (int g = 0; g < 2; g++) {
                    const char *part = g ? "grpc" : "http";
                    if (want_map(cfg, part, path, err, errlen)) return -1;
                    snprintf(sub, sizeof sub, "%s.%s", path, part);
                    if (want_string(jmap(cfg, part), "endpoint", sub, err, errlen)) return -1;
                }
                continue;
            }
            if (d->kind != K_MULTI) {
                if (want_string(cfg, "endpoint", path, err, errlen)) return -1;
                continue;
            }
            if (want_map(cfg, "protocols", path, err, errlen)) return -1;
            json_object *protocols = jmap(cfg, "protocols");
            if (!protocols) continue;
            json_object_object_foreach(protocols, name, v) {
                char sub[600];
                if (!collector_protocol(d, name)) return err_printf(err, errlen, "unknown protocol set: %s", name);
                snprintf(sub, sizeof sub, "%s.protocols", path);
                if (want_map(protocols, name, sub, err, errlen)) return -1;
                snprintf(sub, sizeof sub, "%s.protocols.%s", path, name);
                if (want_string(v, "endpoint", sub, err, errlen)) return -1;
            }
        }
    }
    return 0;
}

static void component_defaults(const collector_component_def *d, json_object *section, const char *id) {
    json_object *m, *sub;
    switch (d->kind) {
    case K_SINGLE:
        if (d->port == 0) return; /* tcp_log/udp_log: nothing to default */
        if ((m = make_map(section, id))) default_endpoint(m, "endpoint", d->port);
        return;
    case K_MULTI:
        /* Only the protocols that are there are defaulted; a receiver
         * without any gets an empty map, as in the reference, so that a
         * collector defaulted here stores (and hashes) what one defaulted
         * by the operator does. */
        if (!(m = make_map(section, id)) || !(m = make_map(m, "protocols"))) return;
        json_object_object_foreach(m, name, v) {
            const collector_protocol_def *p = collector_protocol(d, name);
            if (!p) continue; /* rejected by check_components */
            if (v == NULL) {
                /* A null protocol becomes a map. Replacing the value of an
                 * existing key keeps the entry, so the walk is safe. */
                sub = jset_obj(m, name);
                default_endpoint(sub, "endpoint", p->port);
            } else if (json_object_is_type(v, json_type_object)) {
                /* Empty endpoint: the reference uses the listen_address port
                 * when there is one. */
                long port = collector_config_port(v);
                default_endpoint(v, "endpoint", port ? port : p->port);
            }
        }
        return;
    case K_HEALTH_CHECK: {
        if (!(m = make_map(section, id))) return;
        default_endpoint(m, "endpoint", d->port);
        json_object *path = jget(m, "path");
        if (path == NULL || (json_object_is_type(path, json_type_string) && json_object_get_string_len(path) == 0))
            jset_str(m, "path", "/");
        return;
    }
    case K_JAEGER_QUERY:
        if (!(m = make_map(section, id))) return;
        if ((sub = make_map(m, "http"))) default_endpoint(sub, "endpoint", d->port);
        /* grpc has no default endpoint, only the host fix-up. */
        prefix_host(jmap(m, "grpc"), "endpoint");
        return;
    default:
        return;
    }
}

/* The telemetry reader: merged in unless metrics already has an address or
 * readers. A telemetry or metrics value that is not a map is the user's
 * business; the reference would replace it wholesale, we leave it. */
static void default_telemetry(json_object *config) {
    json_object *service, *telemetry, *metrics, *v;
    if (!(service = make_map(config, "service"))) return;
    if (!(telemetry = make_map(service, "telemetry"))) return;
    v = jget(telemetry, "metrics");
    if (v && !json_object_is_type(v, json_type_object)) return;
    if (v) {
        json_object *addr = jget(v, "address"), *rd = jget(v, "readers");
        if (addr && !(json_object_is_type(addr, json_type_string) && json_object_get_string_len(addr) == 0)) return;
        if (rd && !(json_object_is_type(rd, json_type_array) && json_object_array_length(rd) == 0)) return;
    }
    metrics = make_map(telemetry, "metrics");
    json_object *reader = jpush(jset_arr(metrics, "readers"), jnew_obj());
    json_object *prom = jset_obj(jset_obj(jset_obj(reader, "pull"), "exporter"), "prometheus");
    jset_str(prom, "host", DEFAULT_HOST);
    jset_int(prom, "port", COLLECTOR_METRICS_PORT);
}

int collector_default_config(json_object *config, char *err, size_t errlen) {
    static const collector_kind kinds[] = {COLLECTOR_RECEIVERS, COLLECTOR_EXPORTERS, COLLECTOR_EXTENSIONS};
    collector_ids ids[3];
    int rc = 0;
    if (!json_object_is_type(config, json_type_object)) return err_printf(err, errlen, "config is not an object");
    for (int k = 0; k < 3; k++) collector_enabled(config, kinds[k], &ids[k]);
    if (check_components(config, kinds, ids, err, errlen) < 0) {
        rc = -1;
        goto out;
    }
    default_telemetry(config);
    for (int k = 0; k < 3; k++) {
        /* A missing section is left missing: there is nothing to default
         * in it and the reference would not create it either. */
        json_object *section = jmap(config, collector_kind_key(kinds[k]));
        if (!section) continue;
        for (size_t i = 0; i < ids[k].n; i++)
            component_defaults(collector_component(kinds[k], ids[k].v[i]), section, ids[k].v[i]);
    }
out:
    for (int k = 0; k < 3; k++) collector_ids_free(&ids[k]);
    return rc;
}

/* The bounds of defaults.h, for the config and spec the defaulting is about to use. */
static int check_bounds(json_object *spec, json_object *config, char *err, size_t errlen) {
    static const collector_kind kinds[] = {COLLECTOR_RECEIVERS, COLLECTOR_EXPORTERS, COLLECTOR_EXTENSIONS,
                                           COLLECTOR_PROCESSORS};
    for (size_t k = 0; k < 4; k++) {
        collector_ids ids;
        collector_enabled(config, kinds[k], &ids);
        size_t n = ids.n;
        collector_ids_free(&ids);
        if (n > COLLECTOR_MAX_COMPONENTS)
            return err_printf(err, errlen, "spec.config: %zu %s in pipelines, more than the %d otel-webhook handles", n,
                              collector_kind_key(kinds[k]), COLLECTOR_MAX_COMPONENTS);
    }
    if (jlen(jget(spec, "ports")) > COLLECTOR_MAX_PORTS)
        return err_printf(err, errlen, "spec.ports: %zu ports, more than the %d otel-webhook handles",
                          jlen(jget(spec, "ports")), COLLECTOR_MAX_PORTS);
    size_t vols = jlen(jget(spec, "volumes")) + jlen(jget(spec, "configmaps"));
    if (vols > COLLECTOR_MAX_VOLUMES)
        return err_printf(err, errlen, "spec.volumes and spec.configmaps: %zu, more than the %d otel-webhook handles",
                          vols, COLLECTOR_MAX_VOLUMES);
    return 0;
}

static bool is_set(json_object *o, const char *key) { return jget(o, key) != NULL; }

static bool empty_str(json_object *o, const char *key) {
    const char *v = jstr(o, key);
    return !jget(o, key) || (v && !*v);
}

/* Steps 1 to 10 of cr-admission.md 2.2, in its order. Step 3 (an empty
 * labels map when there is none) changes nothing that is stored and is
 * left out, so that it is not in the patch either. */
static void default_fields(json_object *spec) {
    json_object *v, *as;
    int64_t replicas;
    if (empty_str(spec, "mode")) jset_str(spec, "mode", "deployment");
    if (empty_str(spec, "upgradeStrategy")) jset_str(spec, "upgradeStrategy", "automatic");
    if (!is_set(spec, "replicas")) jset_int(spec, "replicas", 1);
    if ((v = jmap(spec, "targetAllocator")) && jbool(v, "enabled") && !is_set(v, "replicas")) jset_int(v, "replicas", 1);
    if ((as = jmap(spec, "autoscaler")) && is_set(as, "maxReplicas")) {
        if (!is_set(as, "minReplicas") && jint(spec, "replicas", &replicas)) jset_int(as, "minReplicas", replicas);
        if (!is_set(as, "targetCPUUtilization") && !is_set(as, "targetMemoryUtilization"))
            jset_int(as, "targetCPUUtilization", 90);
    }
    if ((v = jmap(spec, "ingress"))) {
        const char *type = jstr(v, "type");
        if (type && !strcmp(type, "route")) {
            json_object *route = make_map(v, "route");
            if (route && empty_str(route, "termination")) jset_str(route, "termination", "edge");
        }
        if (type && !strcmp(type, "ingress") && empty_str(v, "ruleType")) jset_str(v, "ruleType", "path");
    }
    if (empty_str(spec, "managementState")) jset_str(spec, "managementState", "managed");
    /* The operand.networkpolicy gate is on (its Beta default); there is no
     * switch for it here. */
    if ((v = make_map(spec, "networkPolicy")) && !is_set(v, "enabled")) jset_bool(v, "enabled", 1);
}

int collector_default_spec(json_object *obj, char *err, size_t errlen) {
    char *bad = collector_check_shape(obj);
    if (bad) {
        err_printf(err, errlen, "%s", bad);
        free(bad);
        return -1;
    }
    json_object *spec = jget(obj, "spec");
    if (!spec) spec = jset_obj(obj, "spec");
    /* The config first, on a copy: a failure leaves the object as it came.
     * A collector without one is the API server's to refuse (the CRD
     * requires it; its schema runs after the mutating webhooks). */
    json_object *config = jmap(spec, "config"), *work = NULL;
    if (config) {
        work = jcopy(config);
        if (collector_default_config(work, err, errlen) != 0) {
            json_object_put(work);
            return -1;
        }
    }
    default_fields(spec);
    if (work) jset(spec, "config", work);
    return 0;
}

/* dst's members become src's (src is consumed): the in-place conversion of
 * a v1alpha1 object, done only once everything else succeeded. metadata
 * stays the same object, only its annotations (all the conversion changes
 * there) follow src: callers hold pointers into it (render's name). */
static void replace_members(json_object *dst, json_object *src) {
    size_t n = 0, i = 0;
    json_object_object_foreach(dst, k0, v0) {
        (void)k0, (void)v0;
        n++;
    }
    char **keys = xcalloc(n ? n : 1, sizeof *keys);
    json_object_object_foreach(dst, k1, v1) {
        (void)v1;
        if (strcmp(k1, "metadata") != 0) keys[i++] = xstrdup(k1);
    }
    for (size_t j = 0; j < i; j++) {
        json_object_object_del(dst, keys[j]);
        free(keys[j]);
    }
    free(keys);
    json_object *dmeta = jmap(dst, "metadata");
    json_object_object_foreach(src, k, v) {
        if (strcmp(k, "metadata") != 0 || !dmeta) {
            jset(dst, k, json_object_get(v));
            continue;
        }
        json_object *a = jget(v, "annotations");
        if (a) jset(dmeta, "annotations", json_object_get(a));
        else json_object_object_del(dmeta, "annotations");
    }
    json_object_put(src);
}

int collector_check_bounds(json_object *obj, char *err, size_t errlen) {
    json_object *spec = jmap(obj, "spec");
    return check_bounds(spec, jmap(spec, "config"), err, errlen);
}

int collector_default(json_object *obj, char *err, size_t errlen) {
    json_object *spec = jmap(obj, "spec"), *config = jget(spec, "config"), *work;
    bool converted = false;
    if (!spec) return err_printf(err, errlen, "spec is missing");
    if (!config) return err_printf(err, errlen, "spec.config is missing");
    /* Defaulting works on a copy that replaces the object's parts only once
     * it succeeded: a failed object stays exactly as it came. */
    if (json_object_is_type(config, json_type_string)) {
        /* A v1alpha1 collector (config as a YAML string): the one
         * conversion, except that a config it cannot read is an error here,
         * where nothing is stored, instead of the empty config. */
        collector_convert_notes notes;
        if (!(work = collector_convert_to_v1beta1(obj, &notes, err, errlen))) return -1;
        if (notes.config[0]) {
            json_object_put(work);
            return err_printf(err, errlen, "%s", notes.config);
        }
        converted = true;
    } else {
        if (!json_object_is_type(config, json_type_object)) return err_printf(err, errlen, "spec.config is not a map");
        work = jcopy(obj);
    }
    json_object *wspec = jmap(work, "spec");
    if (check_bounds(wspec, jmap(wspec, "config"), err, errlen) != 0 ||
        collector_default_spec(work, err, errlen) != 0) {
        json_object_put(work);
        return -1;
    }
    if (converted) {
        replace_members(obj, work);
    } else {
        /* Only spec changed: metadata, which callers may hold pointers
         * into, stays the object it was. */
        jset(obj, "spec", json_object_get(jget(work, "spec")));
        json_object_put(work);
    }
    spec = jmap(obj, "spec");
    config = jmap(spec, "config");
    char perr[256] = "";
    json_object *ports = collector_container_ports(config, jget(spec, "ports"), perr, sizeof perr);
    if (ports) jset(obj, COLLECTOR_DERIVED_PORTS, ports);
    else jset(obj, COLLECTOR_DERIVED_ERROR, jnew_str(perr));
    char *yaml = collector_config_yaml(config);
    if (yaml) jset(obj, COLLECTOR_DERIVED_YAML, jnew_str(yaml));
    free(yaml);
    return 0;
}

void collector_drop_derived(json_object *obj) {
    json_object_object_del(obj, COLLECTOR_DERIVED_YAML);
    json_object_object_del(obj, COLLECTOR_DERIVED_PORTS);
    json_object_object_del(obj, COLLECTOR_DERIVED_ERROR);
}
