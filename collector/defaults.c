/* collector/defaults.c - config and CR defaulting; see defaults.h.
 *
 * The reference computes a defaults map per component and deep-merges the
 * user's map over it, defaults winning only where they are set. Since the
 * defaults are themselves derived from the user's endpoint, that is the same
 * as editing the user's map in place, which is what we do.
 *
 * The defaulting never replaces a user value it does not understand (a
 * numeric endpoint is left alone rather than overwritten). The reference is
 * harsher (its mapstructure decode rejects such configs outright); being
 * lenient costs nothing because the collector itself will reject the
 * config later. */
#include "collector/defaults.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"
#include "collector/components.h"
#include "collector/config.h"
#include "collector/convert.h"
#include "collector/ports.h"

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

/* An endpoint without a host (":4317") gets DEFAULT_HOST prefixed. Values
 * of other shapes stay as the user wrote them. */
static void prefix_host(json_object *m, const char *key) {
    const char *s = jstr(m, key);
    if (!s || s[0] != ':') return;
    char *p = xasprintf(DEFAULT_HOST "%s", s);
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

/* Multi-protocol receivers reject protocols they do not know. Checked before
 * anything is edited so a failed defaulting leaves the config untouched. */
static int check_protocols(json_object *config, const collector_ids *receivers, char *err, size_t errlen) {
    json_object *section = jmap(config, "receivers");
    for (size_t i = 0; i < receivers->n; i++) {
        const char *id = receivers->v[i];
        const collector_component_def *d = collector_component(COLLECTOR_RECEIVERS, id);
        json_object *protocols = jmap(jget(section, id), "protocols");
        if (d->kind != K_MULTI || !protocols) continue;
        json_object_object_foreach(protocols, name, v) {
            (void)v;
            if (!collector_protocol(d, name)) return err_printf(err, errlen, "unknown protocol set: %s", name);
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
        /* No protocols, no default: the reference only walks the entries
         * that are there. */
        if (!(m = jmap(jget(section, id), "protocols"))) return;
        json_object_object_foreach(m, name, v) {
            const collector_protocol_def *p = collector_protocol(d, name);
            if (!p) continue; /* rejected by check_protocols */
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
    if (check_protocols(config, &ids[0], err, errlen) < 0) {
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

int collector_default(json_object *obj, char *err, size_t errlen) {
    json_object *spec = jmap(obj, "spec"), *config = jget(spec, "config"), *work, *conv = NULL;
    if (!spec) return err_printf(err, errlen, "spec is missing");
    if (!config) return err_printf(err, errlen, "spec.config is missing");
    /* Defaulting works on copies that replace the object's parts only once
     * it succeeded: a failed object stays exactly as it came. */
    if (json_object_is_type(config, json_type_string)) {
        /* A v1alpha1 collector (config as a YAML string): the one
         * conversion, except that a config it cannot read is an error here,
         * where nothing is stored, instead of the empty config. */
        collector_convert_notes notes;
        if (!(conv = collector_convert_to_v1beta1(obj, &notes, err, errlen))) return -1;
        if (notes.config[0]) {
            json_object_put(conv);
            return err_printf(err, errlen, "%s", notes.config);
        }
        spec = jmap(conv, "spec");
        work = jcopy(jget(spec, "config"));
    } else {
        work = jcopy(config);
    }
    if (!json_object_is_type(work, json_type_object)) {
        json_object_put(work);
        return err_printf(err, errlen, "spec.config is not a map");
    }
    if (check_bounds(spec, work, err, errlen) != 0 || collector_default_config(work, err, errlen) != 0) {
        json_object_put(work);
        json_object_put(conv);
        return -1;
    }
    if (conv) {
        replace_members(obj, conv);
        spec = jmap(obj, "spec");
    }
    jset(spec, "config", work);
    char perr[256] = "";
    json_object *ports = collector_container_ports(work, jget(spec, "ports"), perr, sizeof perr);
    if (ports) jset(obj, COLLECTOR_DERIVED_PORTS, ports);
    else jset(obj, COLLECTOR_DERIVED_ERROR, jnew_str(perr));
    char *yaml = collector_config_yaml(work);
    if (yaml) jset(obj, COLLECTOR_DERIVED_YAML, jnew_str(yaml));
    free(yaml);
    return 0;
}

void collector_drop_derived(json_object *obj) {
    json_object_object_del(obj, COLLECTOR_DERIVED_YAML);
    json_object_object_del(obj, COLLECTOR_DERIVED_PORTS);
    json_object_object_del(obj, COLLECTOR_DERIVED_ERROR);
}
