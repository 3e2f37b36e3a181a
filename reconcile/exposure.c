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

#include "base/json.h"
#include "collector/naming.h"
#include "reconcile/ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *receiver_ports(reconcile_ctx *c, int route) {
    char err[256] = "";
    json_object *p = reconcile_service_ports(c->config, COLLECTOR_RECEIVERS, route,
                                             jget(c->spec, "ports"), err, sizeof(err));
    if (!p) reconcile_fail(c, "%s", err);
    return p;
}

static json_object *backend(const char *svc, const char *port) {
    json_object *b = jnew_obj(), *s = jset_obj(b, "service");
    jset_str(s, "name", svc);
    jset_str(jset_obj(s, "port"), "name", port);
    return b;
}

static json_object *ingress_path(const char *path, const char *svc, const char *port) {
    json_object *p = jnew_obj();
    jset_str(p, "path", path);
    jset_str(p, "pathType", "Prefix");
    jset(p, "backend", backend(svc, port));
    return p;
}

int reconcile_build_ingress(reconcile_ctx *c) {
    json_object *in = jmap(c->spec, "ingress"), *ports, *o, *spec, *rules, *ann;
    const char *type = jstr(in, "type"), *host = jstr(in, "hostname");
    const char *rule_type = jstr(in, "ruleType");
    char *name;
    if (!type || strcmp(type, "ingress") != 0) return 0;
    if (!(ports = receiver_ports(c, 0))) return -1;
    if (json_object_array_length(ports) == 0) {
        json_object_put(ports);
        return 0;
    }
    name = collector_name("%s-ingress", c->name, NULL);
    ann = jsorted(jmap(in, "annotations"));
    o = reconcile_object(c, "networking.k8s.io/v1", "Ingress", name, 1, reconcile_common_labels(c, name), ann);
    free(name);
    spec = jset_obj(o, "spec");
    if (jnonempty(jget(in, "ingressClassName")))
        jset_copy(spec, "ingressClassName", jget(in, "ingressClassName"));
    jset_copy(spec, "tls", jarr(in, "tls"));
    rules = jset_arr(spec, "rules");
    if (rule_type && strcmp(rule_type, "subdomain") == 0) {
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
            const char *pn = jstr(json_object_array_get_idx(ports, i), "name");
            json_object *r = jpush(rules, jnew_obj()), *paths;
            char *h = NULL;
            if (!pn) pn = "";
            if (host && *host && strcmp(host, "*") != 0) {
                if (asprintf(&h, "%s.%s", pn, host) < 0) h = NULL;
                jset_str(r, "host", h);
            } else {
                jset_str(r, "host", pn);
            }
            free(h);
            paths = jset_arr(jset_obj(r, "http"), "paths");
            jpush(paths, ingress_path("/", c->collector_name, pn));
        }
    } else {
        json_object *r = jpush(rules, jnew_obj()), *paths;
        if (host && *host) jset_str(r, "host", host);
        paths = jset_arr(jset_obj(r, "http"), "paths");
        for (size_t i = 0; i < json_object_array_length(ports); i++) {
            const char *pn = jstr(json_object_array_get_idx(ports, i), "name");
            char *path = NULL;
            if (!pn) pn = "";
            if (asprintf(&path, "/%s", pn) < 0) path = NULL;
            jpush(paths, ingress_path(path, c->collector_name, pn));
            free(path);
        }
    }
    json_object_put(ports);
    return reconcile_emit(c, o);
}

static int build_openshift_routes(reconcile_ctx *c) {
    json_object *in = jmap(c->spec, "ingress"), *ports;
    const char *type = jstr(in, "type"), *host = jstr(in, "hostname");
    const char *term = jstr(jmap(in, "route"), "termination");
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
        const char *pn = jstr(json_object_array_get_idx(ports, i), "name");
        char *name, *instance, *h = NULL;
        json_object *labels, *o, *spec, *to;
        if (!pn) pn = "";
        name = collector_name("%s-%s-route", pn, c->name);
        if (asprintf(&instance, "%s.%s", c->ns, c->name) < 0) instance = NULL;
        labels = jnew_obj();
        /* Route labels: only these four, instance untruncated (2.1.3). */
        jset_str(labels, "app.kubernetes.io/component", "opentelemetry-collector");
        jset_str(labels, "app.kubernetes.io/instance", instance);
        jset_str(labels, "app.kubernetes.io/managed-by", "opentelemetry-operator");
        jset_str(labels, "app.kubernetes.io/name", name);
        free(instance);
        o = reconcile_object(c, "route.openshift.io/v1", "Route", name, 1, labels,
                             jsorted(jmap(in, "annotations")));
        free(name);
        spec = jset_obj(o, "spec");
        if (host && *host) {
            if (asprintf(&h, "%s.%s", pn, host) >= 0) jset_str(spec, "host", h);
            free(h);
        }
        to = jset_obj(spec, "to");
        jset_str(to, "kind", "Service");
        jset_str(to, "name", c->collector_name);
        jset_str(jset_obj(spec, "port"), "targetPort", pn);
        if (strcmp(term, "insecure") != 0) jset_str(jset_obj(spec, "tls"), "termination", term);
        jset_str(spec, "wildcardPolicy", "None");
        if (reconcile_emit(c, o)) {
            json_object_put(ports);
            return -1;
        }
    }
    json_object_put(ports);
    return 0;
}

static int build_http_routes(reconcile_ctx *c) {
    json_object *hr = jmap(c->spec, "httpRoute"), *ports;
    const char *gw = jstr(hr, "gateway"), *gwns = jstr(hr, "gatewayNamespace");
    if (!jbool(hr, "enabled") || !gw || !*gw) return 0;
    if (!c->opt->gateway) { /* the reference renders them and fails (spec 7.15) */
        reconcile_warn(c, "spec.httpRoute is enabled but the Gateway API (gateway.networking.k8s.io/v1) is not "
                          "installed: no HTTPRoutes");
        return 0;
    }
    if (!gwns || !*gwns) gwns = c->ns;
    if (!(ports = receiver_ports(c, 0))) return -1;
    for (size_t i = 0; i < json_object_array_length(ports); i++) {
        json_object *p = json_object_array_get_idx(ports, i), *o, *spec, *ref, *rule, *m, *f, *b;
        const char *pn = jstr(p, "name"), *app = jstr(p, "appProtocol");
        int64_t num = 0;
        char *name, *path = NULL;
        if (app && (strcmp(app, "grpc") == 0 || strcmp(app, "h2c") == 0)) continue;
        if (!pn) pn = "";
        jint(p, "port", &num);
        name = collector_name("%s-%s-httproute", c->name, pn);
        o = reconcile_object(c, "gateway.networking.k8s.io/v1", "HTTPRoute", name, 1,
                             reconcile_common_labels(c, name), NULL);
        free(name);
        spec = jset_obj(o, "spec");
        ref = jpush(jset_arr(spec, "parentRefs"), jnew_obj());
        jset_str(ref, "group", "gateway.networking.k8s.io");
        jset_str(ref, "kind", "Gateway");
        jset_str(ref, "namespace", gwns);
        jset_str(ref, "name", gw);
        jset_copy(spec, "hostnames", jarr(hr, "hostnames"));
        rule = jpush(jset_arr(spec, "rules"), jnew_obj());
        m = jpush(jset_arr(rule, "matches"), jnew_obj());
        m = jset_obj(m, "path");
        jset_str(m, "type", "PathPrefix");
        if (asprintf(&path, "/%s", pn) < 0) path = NULL;
        jset_str(m, "value", path);
        free(path);
        f = jpush(jset_arr(rule, "filters"), jnew_obj());
        jset_str(f, "type", "URLRewrite");
        f = jset_obj(jset_obj(f, "urlRewrite"), "path");
        jset_str(f, "type", "ReplacePrefixMatch");
        jset_str(f, "replacePrefixMatch", "/");
        b = jpush(jset_arr(rule, "backendRefs"), jnew_obj());
        jset_str(b, "name", c->collector_name);
        jset_int(b, "port", num);
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
