/* collector/ports.c - component, container and telemetry ports; see
 * ports.h.
 *
 * Protocols: the reference leaves the protocol empty for components whose
 * table row has none (otlp, health_check, ...) and the API server stores
 * TCP for them, while the e2e expectation (mutation.md A.2) spells
 * {jaeger-grpc, 14250, TCP}. Container ports always carry the protocol,
 * "TCP" unless the table says UDP: it is what ends up stored either way, it
 * makes our desired state compare equal to the live object, and the
 * spec.ports clash rule already treats empty as TCP. */
#include "collector/ports.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PORT_NAME_MAX 15 /* IANA service names, hence Kubernetes port names */
#define PORT_NAME_BUF COLLECTOR_PORT_NAME_BUF

static int is_alnum(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/* naming.PortName(id[-suffix], port), reconcile.md 3.2: a name longer than
 * 15 is not shortened but replaced, and so is one that is not a DNS-ish
 * label after '/' and '_' became '-'. */
static void port_name(char out[PORT_NAME_BUF], const char *id, const char *suffix, long port) {
    size_t idlen = strlen(id), n = idlen + (suffix ? 1 + strlen(suffix) : 0);
    if (n > PORT_NAME_MAX) goto fallback;
    memcpy(out, id, idlen);
    if (suffix) {
        out[idlen] = '-';
        memcpy(out + idlen + 1, suffix, n - idlen - 1);
    }
    out[n] = '\0';
    for (size_t i = 0; i < n; i++)
        if (out[i] == '/' || out[i] == '_') out[i] = '-';
    /* ^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$ */
    if (n > 0) {
        if (!is_alnum((unsigned char)out[0]) || !is_alnum((unsigned char)out[n - 1])) goto fallback;
        for (size_t i = 1; i + 1 < n; i++)
            if (!is_alnum((unsigned char)out[i]) && out[i] != '-' && out[i] != '.') goto fallback;
    }
    return;
fallback:
    snprintf(out, PORT_NAME_BUF, "port-%ld", port);
}

/* validation.IsValidPortName: 1-15 of [-a-z0-9], a letter somewhere, no
 * '-' at either end and no "--". */
static int valid_port_name(const char *s) {
    size_t n = strlen(s);
    int letter = 0;
    if (n == 0 || n > PORT_NAME_MAX || s[0] == '-' || s[n - 1] == '-') return 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] >= 'a' && s[i] <= 'z')
            letter = 1;
        else if (s[i] == '-') {
            if (s[i + 1] == '-') return 0;
        } else if (s[i] < '0' || s[i] > '9')
            return 0;
    }
    return letter;
}

/* ---------------------------------------------------------------------------
 * Component ports (reconcile.md 3.2-3.3): what the table says each enabled
 * component exposes, before any container or Service rule applies.
 */

void collector_ports_free(collector_ports *l) {
    if (!l) return;
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* Appends PortName(id[-suffix], num) with the row's columns. */
static void cport_add(collector_ports *l, const char *id, const char *suffix, long num, collector_proto proto,
                      const char *app, int target) {
    l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    collector_port *p = &l->v[l->n++];
    port_name(p->name, id, suffix, num);
    p->port = (int)num;
    p->protocol = collector_proto_name(proto);
    p->app_protocol = app;
    p->target_port = target ? (int)num : 0;
}

/* Ports of one enabled component. -1 with err on a build error. */
static int component_ports(const collector_component_def *d, const char *id, json_object *cfg,
                           collector_ports *out, char *err, size_t errlen) {
    long p;
    switch (d->kind) {
    case K_GENERIC:
        if ((p = collector_config_port(cfg)) > 0) cport_add(out, id, NULL, p, d->proto, d->app, d->target);
        return 0;
    case K_SINGLE:
        if ((p = collector_config_port(cfg)) == 0) p = d->port;
        if (p == 0) return err_printf(err, errlen, "receiver %s: port should not be empty", id);
        cport_add(out, id, NULL, p, d->proto, d->app, d->target);
        return 0;
    case K_MULTI: {
        json_object *protocols = jmap(cfg, "protocols");
        if (!protocols) return 0;
        json_object_object_foreach(protocols, name, v) {
            const collector_protocol_def *pd = collector_protocol(d, name);
            if (!pd) return err_printf(err, errlen, "unknown protocol set: %s", name);
            /* null (or a non-map) means the default port */
            if ((p = collector_config_port(v)) == 0) p = pd->port;
            cport_add(out, id, name, p, pd->proto, pd->app, d->target);
        }
        return 0;
    }
    case K_PROMETHEUS_RX: {
        json_object *api = jmap(cfg, "api_server");
        if (!jbool(api, "enabled")) return 0;
        p = collector_endpoint_port(jstr(jmap(api, "server_config"), "endpoint"));
        if (p > 0) cport_add(out, id, NULL, p, d->proto, d->app, d->target);
        return 0;
    }
    case K_HEALTH_CHECK:
        if ((p = collector_config_port(cfg)) == 0) p = d->port;
        cport_add(out, id, NULL, p, d->proto, d->app, d->target);
        return 0;
    case K_JAEGER_QUERY: {
        long grpc = collector_endpoint_port(jstr(jmap(cfg, "grpc"), "endpoint"));
        if ((p = collector_endpoint_port(jstr(jmap(cfg, "http"), "endpoint"))) == 0) p = d->port;
        cport_add(out, id, NULL, p, d->proto, d->app, d->target);
        if (grpc > 0 && grpc != p) cport_add(out, id, "2", grpc, d->proto, d->app, d->target);
        return 0;
    }
    default:
        return 0;
    }
}

int collector_component_ports(json_object *config, unsigned which, collector_ports *out, char *err,
                              size_t errlen) {
    static const collector_kind kinds[] = {COLLECTOR_RECEIVERS, COLLECTOR_EXPORTERS, COLLECTOR_EXTENSIONS};
    int rc = 0;
    memset(out, 0, sizeof(*out));
    for (size_t k = 0; k < 3 && rc == 0; k++) {
        if (!(which & kinds[k])) continue;
        collector_ids ids;
        json_object *section = jmap(config, collector_kind_key(kinds[k]));
        collector_enabled(config, kinds[k], &ids);
        for (size_t i = 0; i < ids.n && rc == 0; i++)
            rc = component_ports(collector_component(kinds[k], ids.v[i]), ids.v[i], jget(section, ids.v[i]), out,
                                 err, errlen);
        collector_ids_free(&ids);
    }
    if (rc != 0) collector_ports_free(out);
    return rc;
}

/* ---------------------------------------------------------------------------
 * The telemetry port (reconcile.md 3.3).
 */

/* The env-var test mirrors the reference's `:\${[env:]?.*}$`: some ":${"
 * after which the text runs, with no newline, to a closing '}' at the very
 * end. */
static int address_port_is_env(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || s[n - 1] != '}') return 0;
    for (const char *p = s; (p = strstr(p, ":${")) != NULL; p++) {
        size_t from = (size_t)(p - s) + 3;
        if (from > n - 1) break;
        if (!memchr(s + from, '\n', n - 1 - from)) return 1;
    }
    return 0;
}

int collector_metrics_port(json_object *config, char *err, size_t errlen) {
    json_object *metrics = jmap(jmap(jmap(config, "service"), "telemetry"), "metrics");
    json_object *readers = jget(metrics, "readers");
    const char *addr = jstr(metrics, "address");
    size_t nreaders = jlen(readers);

    if (addr && *addr && nreaders == 0) {
        size_t n = strlen(addr), i = n;
        long v = 0;
        if (address_port_is_env(addr)) goto bad_address;
        while (i > 0 && addr[i - 1] >= '0' && addr[i - 1] <= '9') i--;
        if (i == n || i == 0 || addr[i - 1] != ':') return COLLECTOR_METRICS_PORT;
        for (; i < n; i++) {
            int d = addr[i] - '0';
            if (v > (INT32_MAX - d) / 10) goto bad_address;
            v = v * 10 + d;
        }
        return (int)v;
    bad_address:
        return err_printf(err, errlen, "couldn't determine metrics port from configuration: %s", addr);
    }
    for (size_t i = 0; i < nreaders; i++) {
        json_object *prom =
            jmap(jmap(jmap(json_object_array_get_idx(readers, i), "pull"), "exporter"), "prometheus");
        json_object *pv = jget(prom, "port");
        if (!prom) continue;
        if (json_object_is_type(pv, json_type_int)) {
            int64_t v = json_object_get_int64(pv);
            if (v < 0 || v > 65535)
                return err_printf(err, errlen, "invalid prometheus metrics port: %lld", (long long)v);
            if (v != 0) return (int)v;
        }
        return COLLECTOR_METRICS_PORT;
    }
    return COLLECTOR_METRICS_PORT;
}

/* ---------------------------------------------------------------------------
 * Container ports (reconcile.md 3.4).
 */

typedef struct port {
    char *name;
    char *proto; /* "TCP", "UDP" or whatever spec.ports says */
    long num;
    long host; /* hostPort, spec.ports only; 0 = none */
} port;

typedef struct portlist {
    port *v;
    size_t n, cap;
} portlist;

static void ports_free(portlist *l) {
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].name);
        free(l->v[i].proto);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

static void ports_add(portlist *l, const char *name, long num, const char *proto, long host) {
    l->v = xgrow(l->v, &l->cap, l->n + 1, sizeof *l->v);
    l->v[l->n++] = (port){xstrdup(name), xstrdup(proto), num, host};
}

/* Exact, so that equal names sort the same on every run. */
static int port_cmp(const void *a, const void *b) {
    const port *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->num != y->num) return x->num < y->num ? -1 : 1;
    if ((c = strcmp(x->proto, y->proto))) return c;
    return x->host < y->host ? -1 : x->host > y->host;
}

static int int32_member(json_object *o, const char *key, long *out) {
    json_object *v = jget(o, key);
    int64_t x;
    if (!json_object_is_type(v, json_type_int)) return 0;
    x = json_object_get_int64(v);
    if (x < INT32_MIN || x > INT32_MAX) return 0;
    *out = (long)x;
    return 1;
}

/* spec.ports as a portlist. Entries that are not maps or have no int32 port
 * cannot become container ports and are skipped. An absent protocol is TCP,
 * the CRD default. */
static void spec_port_list(json_object *spec_ports, portlist *out) {
    size_t n = jlen(spec_ports);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(spec_ports, i);
        const char *name = jstr(e, "name"), *proto = jstr(e, "protocol");
        long num, host = 0;
        if (!int32_member(e, "port", &num)) continue;
        int32_member(e, "hostPort", &host);
        ports_add(out, name ? name : "", num, proto && *proto ? proto : "TCP", host);
    }
}

static int has_name(const portlist *l, size_t upto, const char *name) {
    for (size_t i = 0; i < upto; i++)
        if (strcmp(l->v[i].name, name) == 0) return 1;
    return 0;
}

static void rename_port(port *p, long num) {
    free(p->name);
    p->name = xasprintf("port-%ld", num);
}

static void drop_port(portlist *l, size_t i) {
    free(l->v[i].name);
    free(l->v[i].proto);
    memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(port));
    l->n--;
}

/* Step 4: spec.ports win. An inferred port is dropped when a spec port has
 * its number and protocol, renamed port-<n> when a spec port has its name
 * (dropped if that is taken too); spec ports are de-duplicated by name the
 * same way. Leaves spec ports + surviving inferred in *spec. */
static void merge_spec_ports(portlist *inferred, portlist *spec) {
    char fb[PORT_NAME_BUF];
    for (size_t i = 0; i < inferred->n;) {
        port *p = &inferred->v[i];
        int drop = 0;
        for (size_t j = 0; j < spec->n && !drop; j++)
            drop = spec->v[j].num == p->num && strcmp(spec->v[j].proto, p->proto) == 0;
        if (!drop && has_name(spec, spec->n, p->name)) {
            snprintf(fb, sizeof(fb), "port-%ld", p->num);
            if (has_name(spec, spec->n, fb))
                drop = 1;
            else
                rename_port(p, p->num);
        }
        if (drop)
            drop_port(inferred, i);
        else
            i++;
    }
    /* Names are checked against the spec ports kept so far, renamed ones
     * included, as the reference's seen-set does. */
    for (size_t i = 0; i < spec->n;) {
        port *p = &spec->v[i];
        if (has_name(spec, i, p->name)) {
            snprintf(fb, sizeof(fb), "port-%ld", p->num);
            if (has_name(spec, i, fb)) {
                drop_port(spec, i);
                continue;
            }
            rename_port(p, p->num);
        }
        i++;
    }
    for (size_t i = 0; i < inferred->n; i++) {
        port *p = &inferred->v[i];
        ports_add(spec, p->name, p->num, p->proto, 0);
    }
}

static json_object *ports_json(const portlist *l) {
    json_object *arr = jnew_arr();
    for (size_t i = 0; i < l->n; i++) {
        const port *p = &l->v[i];
        json_object *o = jpush(arr, jnew_obj());
        /* Go's ContainerPort omits an empty name; only spec.ports lack one. */
        if (*p->name) jset_str(o, "name", p->name);
        jset_int(o, "containerPort", (int32_t)p->num);
        jset_str(o, "protocol", p->proto);
        if (p->host) jset_int(o, "hostPort", (int32_t)p->host);
    }
    return arr;
}

json_object *collector_container_ports(json_object *config, json_object *spec_ports, char *err, size_t errlen) {
    collector_ports comp;
    portlist inferred = {0}, result = {0};
    int metrics;

    if (collector_component_ports(config, COLLECTOR_LISTENERS, &comp, err, errlen) < 0) return NULL;
    /* Step 2: truncate to 15 (PortName output never exceeds it, kept for
     * parity) and drop what Kubernetes would reject. */
    for (size_t i = 0; i < comp.n; i++) {
        collector_port *c = &comp.v[i];
        if (strlen(c->name) > PORT_NAME_MAX) c->name[PORT_NAME_MAX] = '\0';
        if (!valid_port_name(c->name) || c->port < 1 || c->port > 65535) continue;
        ports_add(&inferred, c->name, c->port, *c->protocol ? c->protocol : "TCP", 0);
    }
    collector_ports_free(&comp);
    if (inferred.n) qsort(inferred.v, inferred.n, sizeof(port), port_cmp);
    /* The reference's container logs and falls back to 8888 when the port
     * cannot be determined (e.g. an env-var port); only the monitoring
     * Service fails on it. A sidecar is better injected than refused. */
    if ((metrics = collector_metrics_port(config, err, errlen)) < 0) {
        metrics = COLLECTOR_METRICS_PORT;
        if (err && errlen) err[0] = 0;
    }
    ports_add(&inferred, "metrics", metrics, "TCP", 0);

    if (jlen(spec_ports) > 0) {
        spec_port_list(spec_ports, &result);
        merge_spec_ports(&inferred, &result);
    } else {
        result = inferred;
        memset(&inferred, 0, sizeof(inferred));
    }
    if (result.n) qsort(result.v, result.n, sizeof(port), port_cmp);
    json_object *out = ports_json(&result);
    ports_free(&inferred);
    ports_free(&result);
    return out;
}
