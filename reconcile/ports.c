/* reconcile/ports.c - Service ports from the config; see ports.h.
 *
 * What each component exposes (port, protocol, appProtocol, targetPort and
 * the PortName) comes from collector/, which owns the component
 * table and the endpoint parsing for the sidecar injector, the container
 * ports and these Services alike. This file adds only the Service rules:
 * sorted by name, grpc spelled h2c behind a route, and the spec.ports
 * merge. */
#include "reconcile/ports.h"

#include "base/alloc.h"
#include "base/json.h"
#include "collector/ports.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* Sorts pointers into the component list by name; equal names keep the
 * component order (the pointers' order), so a config renders the same
 * whatever qsort does with ties. */
static int name_cmp(const void *a, const void *b) {
    const collector_port *x = *(const collector_port *const *)a;
    const collector_port *y = *(const collector_port *const *)b;
    int c = strcmp(x->name, y->name);
    return c ? c : x < y ? -1 : x > y;
}

static json_object *port_json(const char *name, const char *proto, const char *app, long port, long target) {
    json_object *o = jnew_obj();
    if (name && *name) jset_str(o, "name", name);
    if (proto && *proto) jset_str(o, "protocol", proto);
    if (app && *app) jset_str(o, "appProtocol", app);
    jset_int(o, "port", port);
    if (target) jset_int(o, "targetPort", target);
    return o;
}

static int spec_has_name(json_object *spec_ports, const char *name) {
    for (size_t j = 0; j < json_object_array_length(spec_ports); j++) {
        const char *sn = jstr(json_object_array_get_idx(spec_ports, j), "name");
        if (sn && strcmp(sn, name) == 0) return 1;
    }
    return 0;
}

json_object *reconcile_service_ports(json_object *config, unsigned which, int route, json_object *spec_ports,
                                     char *err, size_t errlen) {
    collector_ports l;
    collector_port **sorted = NULL;
    json_object *out = NULL;
    if (collector_component_ports(config, which, &l, err, errlen) < 0) return NULL;
    if (l.n) sorted = xmalloc(l.n * sizeof(*sorted));
    for (size_t i = 0; i < l.n; i++) sorted[i] = &l.v[i];
    if (l.n) qsort(sorted, l.n, sizeof(*sorted), name_cmp);
    out = jnew_arr();
    if (!json_object_is_type(spec_ports, json_type_array)) spec_ports = NULL;
    if (spec_ports) {
        for (size_t j = 0; j < json_object_array_length(spec_ports); j++) {
            json_object *sp = json_object_array_get_idx(spec_ports, j), *c = jnew_obj();
            if (!json_object_is_type(sp, json_type_object)) {
                json_object_put(c);
                continue;
            }
            static const char *const keys[] = {"name", "protocol", "appProtocol", "port", "targetPort", "nodePort"};
            for (size_t k = 0; k < NELEM(keys); k++) jset_copy(c, keys[k], jget(sp, keys[k]));
            jpush(out, c);
        }
    }
    for (size_t i = 0; i < l.n; i++) {
        collector_port *p = sorted[i];
        const char *app = route && strcmp(p->app_protocol, "grpc") == 0 ? "h2c" : p->app_protocol;
        int drop = 0;
        for (size_t j = 0; spec_ports && j < json_object_array_length(spec_ports) && !drop; j++) {
            json_object *sp = json_object_array_get_idx(spec_ports, j);
            const char *sproto = jstr(sp, "protocol");
            int64_t num;
            if (!jint(sp, "port", &num)) continue;
            drop = num == p->port && strcmp(sproto && *sproto ? sproto : "TCP", *p->protocol ? p->protocol : "TCP") == 0;
        }
        if (drop) continue;
        if (spec_ports && spec_has_name(spec_ports, p->name)) {
            char fb[COLLECTOR_PORT_NAME_BUF];
            snprintf(fb, sizeof(fb), "port-%d", p->port);
            if (spec_has_name(spec_ports, fb)) continue;
            memcpy(p->name, fb, sizeof(fb));
        }
        jpush(out, port_json(p->name, p->protocol, app, p->port, p->target_port));
    }
    free(sorted);
    collector_ports_free(&l);
    return out;
}
