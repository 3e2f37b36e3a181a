/* reconcile/exposure.c - how a collector is reached from outside the
 * cluster (reconcile.md 2.9): an Ingress, OpenShift Routes (one per port)
 * or Gateway API HTTPRoutes (one per non-gRPC port). All three work from
 * receiver ports with spec.ports prepended; exporter ports are not exposed.
 *
 * Kept from the reference: gRPC ports are put on Ingress path prefixes
 * (spec 7.15; usually useless, but changing the set of paths would change
 * what existing clients reach). Routes and HTTPRoutes are left out, with a
 * warning, when the cluster lacks their API (reconcile_options, which `run`
 * fills from discovery): the reference skips Routes silently and fails on
 * HTTPRoutes (spec 7.15), which would also stop pruning. */
#include "reconcile/context.h"
#include "reconcile/naming.h"
#include "reconcile/obj.h"
#include "reconcile/ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *receiver_ports(reconcile_ctx *c, int route) {
    char err[256] = "";
    json_object *p = reconcile_service_ports(c->config, RECONCILE_PORTS_RECEIVERS, route,
                                             reconcile_get(c->spec, "ports"), err, sizeof(err));
    if (!p) reconcile_fail(c, "%s", err);
    return p;
}

static json_object *backend(const char *svc, const char *port) {
    json_object *b = json_object_new_object(), *s = reconcile_obj_map(b, "service");
    reconcile_obj_str(s, "name", svc);
    reconcile_obj_str(reconcile_obj_map(s, "port"), "name", port);
    return b;
}

static json_object *ingress_path(const char *path, const char *svc, const char *port) {
    json_object *p = json_object_new_object();
    reconcile_obj_str(p, "path", path);
    reconcile_obj_str(p, "pathType", "Prefix");
    reconcile_obj_set(p, "backend", backend(svc, port));
    return p;
}

int reconcile_build_ingress(reconcile_ctx *c) {
    json_object *in = reconcile_get_map(c->spec, "ingress"), *ports, *o, *spec, *rules, *ann;
    const char *type = reconcile_get_str(in, "type"), *host = reconcile_get_str(in, "hostname");
    const char *rule_type = reconcile_get_str(in, "ruleType");
    char *name;
    if (!type || strcmp(type, "ingress") != 0) return 0;
    if (!(ports = receiver_ports(c, 0))) return -1;
    if (json_object_array_length(ports) == 0) {
        json_object_put(ports);
        return 0;
    }
    if (!(name = reconcile_name("%s-ingress", c->name, NULL))) {
        json_object_put(ports);
        return reconcile_fail(c, "out of memory");
    }
    ann = reconcile_obj_sorted(reconcile_get_map(in, "annotations"));
    o = reconcile_object(c, "networking.k8s.io/v1", "Ingress", name, 1, reconcile_common_labels(c, name), ann);
    free(name);
    spec = reconcile_obj_map(o, "spec");
    if (reconcile_nonempty(reconcile_get(in, "ingressClassName")))
        reconcile_obj_copy(spec, "ingressClassName", reconcile_get(in, "ingressClassName"));
    reconcile_obj_copy(spec, "tls", reconcile_get_arr(in, "tls"));
    rules = reconcile_obj_arr(spec, "rules");
    if (rule_type && strcmp(rule_type, "subdomain") == 0) {
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
            const char *pn = reconcile_get_str(json_object_array_get_idx(ports, i), "name");
            json_object *r = reconcile_obj_push(rules, json_object_new_object()), *paths;
            char *h = NULL;
            if (!pn) pn = "";
            if (host && *host && strcmp(host, "*") != 0) {
                if (asprintf(&h, "%s.%s", pn, host) < 0) h = NULL;
                reconcile_obj_str(r, "host", h);
            } else {
                reconcile_obj_str(r, "host", pn);
            }
            free(h);
            paths = reconcile_obj_arr(reconcile_obj_map(r, "http"), "paths");
            reconcile_obj_push(paths, ingress_path("/", c->collector_name, pn));
        }
    } else {
        json_object *r = reconcile_obj_push(rules, json_object_new_object()), *paths;
        if (host && *host) reconcile_obj_str(r, "host", host);
        paths = reconcile_obj_arr(reconcile_obj_map(r, "http"), "paths");
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
            const char *pn = reconcile_get_str(json_object_array_get_idx(ports, i), "name");
            char *path = NULL;
            if (!pn) pn = "";
            if (asprintf(&path, "/%s", pn) < 0) path = NULL;
            reconcile_obj_push(paths, ingress_path(path, c->collector_name, pn));
            free(path);
        }
    }
    json_object_put(ports);
    return reconcile_emit(c, o);
}

static int build_openshift_routes(reconcile_ctx *c) {
    json_object *in = reconcile_get_map(c->spec, "ingress"), *ports;
    const char *type = reconcile_get_str(in, "type"), *host = reconcile_get_str(in, "hostname");
    const char *term = reconcile_get_str(reconcile_get_map(in, "route"), "termination");
    if (!type || strcmp(type, "route") != 0 || !term) return 0;
    if (!c->opt->routes) { /* the reference skips them without a word */
        reconcile_warn(c, "spec.ingress.type is route but the OpenShift route API is not available: no Routes");
        return 0;
    }
    if (strcmp(term, "insecure") && strcmp(term, "edge") && strcmp(term, "passthrough") && strcmp(term, "reencrypt")) {
        reconcile_warn(c, "spec.ingress.route.termination \"%s\" is unknown: no Routes", term);
        return 0;
    }
    if (!(ports = receiver_ports(c, 1))) return -1;
    for (size_t i = 0; i < json_object_array_length(ports); i++) {
        const char *pn = reconcile_get_str(json_object_array_get_idx(ports, i), "name");
        char *name, *instance, *h = NULL;
        json_object *labels, *o, *spec, *to;
        if (!pn) pn = "";
        name = reconcile_name("%s-%s-route", pn, c->name);
        if (asprintf(&instance, "%s.%s", c->ns, c->name) < 0) instance = NULL;
        labels = json_object_new_object();
        /* Route labels: only these four, instance untruncated (2.1.3). */
        reconcile_obj_str(labels, "app.kubernetes.io/component", "opentelemetry-collector");
        reconcile_obj_str(labels, "app.kubernetes.io/instance", instance);
        reconcile_obj_str(labels, "app.kubernetes.io/managed-by", "opentelemetry-operator");
        reconcile_obj_str(labels, "app.kubernetes.io/name", name);
        free(instance);
        o = reconcile_object(c, "route.openshift.io/v1", "Route", name, 1, labels,
                             reconcile_obj_sorted(reconcile_get_map(in, "annotations")));
        free(name);
        spec = reconcile_obj_map(o, "spec");
        if (host && *host) {
            if (asprintf(&h, "%s.%s", pn, host) >= 0) reconcile_obj_str(spec, "host", h);
            free(h);
        }
        to = reconcile_obj_map(spec, "to");
        reconcile_obj_str(to, "kind", "Service");
        reconcile_obj_str(to, "name", c->collector_name);
        reconcile_obj_str(reconcile_obj_map(spec, "port"), "targetPort", pn);
        if (strcmp(term, "insecure") != 0) reconcile_obj_str(reconcile_obj_map(spec, "tls"), "termination", term);
        reconcile_obj_str(spec, "wildcardPolicy", "None");
        if (reconcile_emit(c, o)) {
            json_object_put(ports);
            return -1;
        }
    }
    json_object_put(ports);
    return 0;
}

static int build_http_routes(reconcile_ctx *c) {
    json_object *hr = reconcile_get_map(c->spec, "httpRoute"), *ports;
    const char *gw = reconcile_get_str(hr, "gateway"), *gwns = reconcile_get_str(hr, "gatewayNamespace");
    if (!reconcile_get_bool(hr, "enabled") || !gw || !*gw) return 0;
    if (!c->opt->gateway) { /* the reference renders them and fails (spec 7.15) */
        reconcile_warn(c, "spec.httpRoute is enabled but the Gateway API (gateway.networking.k8s.io/v1) is not "
                          "installed: no HTTPRoutes");
        return 0;
    }
    if (!gwns || !*gwns) gwns = c->ns;
    if (!(ports = receiver_ports(c, 0))) return -1;
    for (size_t i = 0; i < json_object_array_length(ports); i++) {
        json_object *p = json_object_array_get_idx(ports, i), *o, *spec, *ref, *rule, *m, *f, *b;
        const char *pn = reconcile_get_str(p, "name"), *app = reconcile_get_str(p, "appProtocol");
        int64_t num = 0;
        char *name, *path = NULL;
        if (app && (strcmp(app, "grpc") == 0 || strcmp(app, "h2c") == 0)) continue;
        if (!pn) pn = "";
        reconcile_get_int(p, "port", &num);
        name = reconcile_name("%s-%s-httproute", c->name, pn);
        o = reconcile_object(c, "gateway.networking.k8s.io/v1", "HTTPRoute", name, 1,
                             reconcile_common_labels(c, name), NULL);
        free(name);
        spec = reconcile_obj_map(o, "spec");
        ref = reconcile_obj_push(reconcile_obj_arr(spec, "parentRefs"), json_object_new_object());
        reconcile_obj_str(ref, "group", "gateway.networking.k8s.io");
        reconcile_obj_str(ref, "kind", "Gateway");
        reconcile_obj_str(ref, "namespace", gwns);
        reconcile_obj_str(ref, "name", gw);
        reconcile_obj_copy(spec, "hostnames", reconcile_get_arr(hr, "hostnames"));
        rule = reconcile_obj_push(reconcile_obj_arr(spec, "rules"), json_object_new_object());
        m = reconcile_obj_push(reconcile_obj_arr(rule, "matches"), json_object_new_object());
        m = reconcile_obj_map(m, "path");
        reconcile_obj_str(m, "type", "PathPrefix");
        if (asprintf(&path, "/%s", pn) < 0) path = NULL;
        reconcile_obj_str(m, "value", path);
        free(path);
        f = reconcile_obj_push(reconcile_obj_arr(rule, "filters"), json_object_new_object());
        reconcile_obj_str(f, "type", "URLRewrite");
        f = reconcile_obj_map(reconcile_obj_map(f, "urlRewrite"), "path");
        reconcile_obj_str(f, "type", "ReplacePrefixMatch");
        reconcile_obj_str(f, "replacePrefixMatch", "/");
        b = reconcile_obj_push(reconcile_obj_arr(rule, "backendRefs"), json_object_new_object());
        reconcile_obj_str(b, "name", c->collector_name);
        reconcile_obj_int(b, "port", num);
        if (reconcile_emit(c, o)) {
            json_object_put(ports);
            return -1;
        }
    }
    json_object_put(ports);
    return 0;
}

int reconcile_build_routes(reconcile_ctx *c) {
    return build_openshift_routes(c) || build_http_routes(c) ? -1 : 0;
}
