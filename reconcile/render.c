/* reconcile/render.c - one collector's desired objects: input checks, the
 * in-memory webhook defaulting (reconcile.md 1.1, 1.3), the metadata every
 * object shares (2.1) and the build order (2.2). The small objects
 * (ConfigMap, ServiceAccount, PodDisruptionBudget, HPA, NetworkPolicy) are
 * built here; each larger family has its own file (see context.h).
 *
 * Trade-offs:
 * - The reference's admission webhook would refuse some CRs outright (bad
 *   mode, replicas above maxReplicas, ...). With no admission step those
 *   are render errors, reported as "file:line: reason" by the CLI and as a
 *   Ready=False condition by `run`. Problems the reference turns into a
 *   permanently failing reconcile but that have an obvious safe outcome
 *   (an autoscaler without maxReplicas) are warnings: the object is left
 *   out and everything else is rendered (spec 7.10).
 * - ownerReferences need the CR's uid; a manifest on disk usually has none,
 *   so they are rendered only when metadata.uid is known, which is always
 *   the case for `run`. */
#include "reconcile/render.h"

#include "kube/collector.h"
#include "kube/defaults.h"
#include "kube/yaml.h"
#include "reconcile/context.h"
#include "reconcile/naming.h"
#include "reconcile/obj.h"
#include "reconcile/upgrade.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

void reconcile_options_default(reconcile_options *o) {
    o->collector_image = RECONCILE_DEFAULT_IMAGE;
    o->rbac = 1;
    o->prometheus_crds = 1;
    o->routes = 1;
    o->gateway = 1;
}

/* ---------------------------------------------------------------------------
 * Context helpers (context.h).
 */

int reconcile_emit(reconcile_ctx *c, json_object *obj) {
    reconcile_render_result *r = c->out;
    json_object **v;
    if (!obj || reconcile_obj_oom()) {
        json_object_put(obj);
        return reconcile_fail(c, "out of memory");
    }
    if (!(v = realloc(r->objs, (r->nobjs + 1) * sizeof(*v)))) {
        json_object_put(obj);
        return reconcile_fail(c, "out of memory");
    }
    r->objs = v;
    r->objs[r->nobjs++] = obj;
    return 0;
}

static void vappend(char ***list, size_t *n, const char *fmt, va_list ap) {
    char *s = NULL, **v;
    if (vasprintf(&s, fmt, ap) < 0) return;
    if (!(v = realloc(*list, (*n + 1) * sizeof(*v)))) {
        free(s);
        return;
    }
    *list = v;
    v[(*n)++] = s;
}

void reconcile_warn(reconcile_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vappend(&c->out->warnings, &c->out->nwarnings, fmt, ap);
    va_end(ap);
}

int reconcile_fail(reconcile_ctx *c, const char *fmt, ...) {
    va_list ap;
    if (c->err[0]) return -1;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    for (char *p = c->err; *p; p++)
        if ((unsigned char)*p < 0x20) *p = ' ';
    return -1;
}

json_object *reconcile_selector_labels(reconcile_ctx *c) {
    const char *vals[2] = {c->ns, c->name};
    char *instance = reconcile_truncate("%s.%s", RECONCILE_NAME_MAX, 2, vals);
    json_object *l = json_object_new_object();
    /* Already in sorted order. */
    reconcile_obj_str(l, "app.kubernetes.io/component", "opentelemetry-collector");
    reconcile_obj_str(l, "app.kubernetes.io/instance", instance);
    reconcile_obj_str(l, "app.kubernetes.io/managed-by", "opentelemetry-operator");
    reconcile_obj_str(l, "app.kubernetes.io/part-of", "opentelemetry");
    free(instance);
    return l;
}

/* app.kubernetes.io/version from spec.image (2.1.3 step 3). */
static char *image_version(const char *image) {
    char *copy, *parts[4] = {0}, *out;
    size_t n = 0;
    if (!image) image = "";
    if (!(copy = strdup(image))) return NULL;
    for (char *p = copy, *q; n < 4; p = q + 1) {
        parts[n++] = p;
        if (!(q = strchr(p, ':'))) break;
        *q = '\0';
        if (n == 4) break;
    }
    if (n == 4) n = 5; /* four or more parts: "latest" */
    if (n == 3) {
        const char *v = "";
        for (size_t i = 0; i < 3; i++) {
            size_t l = strlen(parts[i]);
            if (l >= 7 && strcmp(parts[i] + l - 7, "@sha256") == 0) {
                parts[i][l - 7] = '\0';
                v = parts[i];
                break;
            }
        }
        out = strdup(v);
    } else if (n == 2) {
        if (strlen(parts[1]) > 63) parts[1][63] = '\0';
        out = strdup(parts[1]);
    } else {
        out = strdup("latest");
    }
    free(copy);
    return out;
}

json_object *reconcile_common_labels(reconcile_ctx *c, const char *name) {
    json_object *l = json_object_new_object(), *sel, *sorted, *crl = reconcile_get_map(c->meta, "labels");
    char *version = image_version(reconcile_get_str(c->spec, "image"));
    int has_name = 0;
    if (crl) {
        json_object_object_foreach(crl, k, v) {
            if (strcmp(k, "app.kubernetes.io/name") == 0) has_name = 1;
            reconcile_obj_copy(l, k, v);
            if (!v) json_object_object_add(l, k, json_object_new_string(""));
        }
    }
    sel = reconcile_selector_labels(c);
    if (sel) {
        json_object_object_foreach(sel, k, v) reconcile_obj_copy(l, k, v);
    }
    json_object_put(sel);
    reconcile_obj_str(l, "app.kubernetes.io/version", version ? version : "");
    if (!has_name) reconcile_obj_str(l, "app.kubernetes.io/name", name);
    free(version);
    sorted = reconcile_obj_sorted(l);
    json_object_put(l);
    return sorted;
}

json_object *reconcile_object_annotations(reconcile_ctx *c) {
    json_object *a = reconcile_obj_sorted(reconcile_get_map(c->meta, "annotations"));
    if (!a) return json_object_new_object();
    json_object_object_del(a, LAST_APPLIED);
    return a;
}

json_object *reconcile_label_selector(reconcile_ctx *c) {
    json_object *s = json_object_new_object();
    reconcile_obj_set(s, "matchLabels", reconcile_selector_labels(c));
    return s;
}

json_object *reconcile_object(reconcile_ctx *c, const char *api_version, const char *kind, const char *name,
                              int namespaced, json_object *labels, json_object *annotations) {
    json_object *o = json_object_new_object(), *m;
    const char *uid = reconcile_get_str(c->meta, "uid");
    reconcile_obj_str(o, "apiVersion", api_version);
    reconcile_obj_str(o, "kind", kind);
    m = reconcile_obj_map(o, "metadata");
    reconcile_obj_str(m, "name", name);
    if (namespaced) reconcile_obj_str(m, "namespace", c->ns);
    if (labels && json_object_object_length(labels) > 0)
        reconcile_obj_set(m, "labels", labels);
    else
        json_object_put(labels);
    if (annotations && json_object_object_length(annotations) > 0)
        reconcile_obj_set(m, "annotations", annotations);
    else
        json_object_put(annotations);
    if (namespaced && uid && *uid) {
        json_object *refs = reconcile_obj_arr(m, "ownerReferences");
        json_object *r = reconcile_obj_push(refs, json_object_new_object());
        reconcile_obj_str(r, "apiVersion", "opentelemetry.io/v1beta1");
        reconcile_obj_str(r, "kind", "OpenTelemetryCollector");
        reconcile_obj_str(r, "name", c->name);
        reconcile_obj_str(r, "uid", uid);
        reconcile_obj_bool(r, "controller", 1);
        reconcile_obj_bool(r, "blockOwnerDeletion", 1);
    }
    return o;
}

/* ---------------------------------------------------------------------------
 * Defaulting and validation (1.1).
 */

static json_object *ensure_map(json_object *o, const char *key) {
    json_object *v = reconcile_get_map(o, key);
    return v ? v : reconcile_obj_map(o, key);
}

static int is_set(json_object *o, const char *key) {
    json_object *v = reconcile_get(o, key);
    return v && !json_object_is_type(v, json_type_null);
}

static int default_spec(reconcile_ctx *c) {
    json_object *spec = c->spec, *as, *v;
    const char *mode = reconcile_get_str(spec, "mode");
    int64_t replicas = 1, minr, maxr;

    if (!mode || !*mode) reconcile_obj_str(spec, "mode", (mode = "deployment"));
    if (strcmp(mode, "deployment") && strcmp(mode, "daemonset") && strcmp(mode, "statefulset") &&
        strcmp(mode, "sidecar"))
        return reconcile_fail(c, "spec.mode: unsupported value \"%s\" (deployment, daemonset, statefulset, sidecar)",
                              mode);
    if (!reconcile_get_int(spec, "replicas", &replicas)) reconcile_obj_int(spec, "replicas", (replicas = 1));
    if (!reconcile_get_str(spec, "managementState")) reconcile_obj_str(spec, "managementState", "managed");
    if (!reconcile_get_str(spec, "upgradeStrategy")) reconcile_obj_str(spec, "upgradeStrategy", "automatic");
    if (!reconcile_get_str(spec, "ipFamilyPolicy")) reconcile_obj_str(spec, "ipFamilyPolicy", "SingleStack");
    if (!is_set(spec, "configVersions")) reconcile_obj_int(spec, "configVersions", 3);
    /* CRD default for spec.ports[].protocol; it decides which inferred
     * ports a spec port displaces, so it must be there before ports are
     * derived. */
    if ((v = reconcile_get_arr(spec, "ports")))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *p = json_object_array_get_idx(v, i);
            if (json_object_is_type(p, json_type_object) && !reconcile_nonempty(reconcile_get(p, "protocol")))
                reconcile_obj_str(p, "protocol", "TCP");
        }

    /* v1alpha1 kept the autoscaler bounds at the top of spec. */
    if (is_set(spec, "maxReplicas") || is_set(spec, "minReplicas")) {
        as = ensure_map(spec, "autoscaler");
        if (!is_set(as, "maxReplicas")) reconcile_obj_copy(as, "maxReplicas", reconcile_get(spec, "maxReplicas"));
        if (!is_set(as, "minReplicas")) reconcile_obj_copy(as, "minReplicas", reconcile_get(spec, "minReplicas"));
        json_object_object_del(spec, "maxReplicas");
        json_object_object_del(spec, "minReplicas");
    }
    if ((as = reconcile_get_map(spec, "autoscaler")) && reconcile_get_int(as, "maxReplicas", &maxr)) {
        if (!reconcile_get_int(as, "minReplicas", &minr)) reconcile_obj_int(as, "minReplicas", (minr = replicas));
        if (!is_set(as, "targetCPUUtilization") && !is_set(as, "targetMemoryUtilization"))
            reconcile_obj_int(as, "targetCPUUtilization", 90);
        if (maxr < 1) return reconcile_fail(c, "spec.autoscaler.maxReplicas should be one or more");
        if (replicas > maxr) return reconcile_fail(c, "spec.replicas must not be greater than maxReplicas");
        if (minr > maxr) return reconcile_fail(c, "spec.autoscaler.minReplicas must not be greater than maxReplicas");
        if (minr < 1) return reconcile_fail(c, "spec.autoscaler.minReplicas should be one or more");
    }
    if ((v = reconcile_get_map(spec, "ingress"))) {
        const char *type = reconcile_get_str(v, "type");
        if (type && strcmp(type, "ingress") == 0 && !reconcile_get_str(v, "ruleType"))
            reconcile_obj_str(v, "ruleType", "path");
        if (type && strcmp(type, "route") == 0) {
            json_object *route = ensure_map(v, "route");
            if (!reconcile_get_str(route, "termination")) reconcile_obj_str(route, "termination", "edge");
        }
        if (type && *type && strcmp(mode, "sidecar") == 0)
            return reconcile_fail(c, "spec.ingress: sidecar mode does not support an ingress");
        if (reconcile_get_str(v, "ruleType") && strcmp(reconcile_get_str(v, "ruleType"), "subdomain") == 0) {
            const char *h = reconcile_get_str(v, "hostname");
            if (!h || !*h || strcmp(h, "*") == 0)
                return reconcile_fail(c, "spec.ingress.hostname: ruleType subdomain needs a hostname that is not empty or *");
        }
    }
    v = ensure_map(spec, "networkPolicy");
    if (!is_set(v, "enabled")) reconcile_obj_bool(v, "enabled", 1);
    if ((v = reconcile_get_map(spec, "targetAllocator")) && reconcile_get_bool(v, "enabled")) {
        if (!is_set(v, "replicas")) reconcile_obj_int(v, "replicas", 1);
        if (strcmp(mode, "statefulset") && strcmp(mode, "daemonset"))
            return reconcile_fail(c, "spec.targetAllocator: mode must be statefulset or daemonset, not %s", mode);
    }
    return reconcile_obj_oom() ? reconcile_fail(c, "out of memory") : 0;
}

/* ---------------------------------------------------------------------------
 * Small objects.
 */

static int build_pdb(reconcile_ctx *c) {
    json_object *o = reconcile_object(c, "policy/v1", "PodDisruptionBudget", c->collector_name, 1,
                                      reconcile_common_labels(c, c->collector_name),
                                      reconcile_object_annotations(c));
    json_object *spec = reconcile_obj_map(o, "spec"), *pdb = reconcile_get(c->spec, "podDisruptionBudget");
    if (json_object_is_type(pdb, json_type_object)) {
        reconcile_obj_copy(spec, "minAvailable", reconcile_get(pdb, "minAvailable"));
        reconcile_obj_set(spec, "selector", reconcile_label_selector(c));
        reconcile_obj_copy(spec, "maxUnavailable", reconcile_get(pdb, "maxUnavailable"));
    } else {
        reconcile_obj_set(spec, "selector", reconcile_label_selector(c));
        reconcile_obj_int(spec, "maxUnavailable", 1);
    }
    return reconcile_emit(c, o);
}

static int build_configmap(reconcile_ctx *c) {
    json_object *ta = reconcile_ta_config(c), *o, *data;
    char *yaml = ta ? kube_yaml_emit(ta) : kube_collector_config_yaml(c->config);
    json_object_put(ta);
    if (!yaml) return reconcile_fail(c, "spec.config cannot be rendered as YAML");
    o = reconcile_object(c, "v1", "ConfigMap", c->configmap_name, 1, reconcile_common_labels(c, c->collector_name),
                         reconcile_object_annotations(c));
    data = reconcile_obj_map(o, "data");
    reconcile_obj_str(data, "collector.yaml", yaml);
    free(yaml);
    return reconcile_emit(c, o);
}

static int build_service_account(reconcile_ctx *c) {
    if (reconcile_nonempty(reconcile_get(c->spec, "serviceAccount"))) return 0;
    return reconcile_emit(c, reconcile_object(c, "v1", "ServiceAccount", c->collector_name, 1,
                                              reconcile_common_labels(c, c->collector_name),
                                              reconcile_object_annotations(c)));
}

static json_object *resource_metric(const char *resource, int64_t pct) {
    json_object *m = json_object_new_object(), *r, *t;
    reconcile_obj_str(m, "type", "Resource");
    r = reconcile_obj_map(m, "resource");
    reconcile_obj_str(r, "name", resource);
    t = reconcile_obj_map(r, "target");
    reconcile_obj_str(t, "type", "Utilization");
    reconcile_obj_int(t, "averageUtilization", pct);
    return m;
}

static int build_hpa(reconcile_ctx *c) {
    json_object *as = reconcile_get(c->spec, "autoscaler"), *o, *spec, *ref, *metrics, *list;
    int64_t v;
    char *target;
    if (!as || json_object_is_type(as, json_type_null)) return 0;
    if (!reconcile_get_int(as, "maxReplicas", &v)) {
        /* spec 7.10: the reference renders maxReplicas: 0, which the API
         * server refuses on every reconcile. */
        reconcile_warn(c, "spec.autoscaler.maxReplicas is not set: no HorizontalPodAutoscaler");
        return 0;
    }
    if (!(target = reconcile_name("%s", c->name, NULL))) return reconcile_fail(c, "out of memory");
    o = reconcile_object(c, "autoscaling/v2", "HorizontalPodAutoscaler", c->collector_name, 1,
                         reconcile_common_labels(c, c->collector_name), reconcile_object_annotations(c));
    spec = reconcile_obj_map(o, "spec");
    ref = reconcile_obj_map(spec, "scaleTargetRef");
    reconcile_obj_str(ref, "kind", "OpenTelemetryCollector");
    reconcile_obj_str(ref, "name", target);
    reconcile_obj_str(ref, "apiVersion", "opentelemetry.io/v1beta1");
    free(target);
    reconcile_obj_copy(spec, "minReplicas", reconcile_get(as, "minReplicas"));
    reconcile_obj_int(spec, "maxReplicas", v);
    metrics = reconcile_obj_arr(spec, "metrics");
    if (reconcile_get_int(as, "targetMemoryUtilization", &v)) reconcile_obj_push(metrics, resource_metric("memory", v));
    if (reconcile_get_int(as, "targetCPUUtilization", &v)) reconcile_obj_push(metrics, resource_metric("cpu", v));
    if ((list = reconcile_get_arr(as, "metrics"))) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *m = json_object_array_get_idx(list, i);
            const char *type = reconcile_get_str(m, "type");
            if (type && strcmp(type, "Pods") == 0) reconcile_obj_push(metrics, reconcile_obj_clone(m));
        }
    }
    if (json_object_array_length(metrics) == 0) json_object_object_del(spec, "metrics");
    reconcile_obj_copy(spec, "behavior", reconcile_get(as, "behavior"));
    return reconcile_emit(c, o);
}

/* Every container port, with its own protocol (spec 7.8: the reference
 * writes TCP for all, which blocks UDP receivers), each (port, protocol)
 * once. */
static int build_network_policy(reconcile_ctx *c) {
    char *name, err[256] = "";
    json_object *cports, *o, *spec, *rule, *ports, *types;
    if (!reconcile_get_bool(reconcile_get_map(c->spec, "networkPolicy"), "enabled")) return 0;
    cports = kube_collector_container_ports(c->config, reconcile_get(c->spec, "ports"), err, sizeof(err));
    if (!cports) return reconcile_fail(c, "%s", err);
    if (!(name = reconcile_name("%s-collector-networkpolicy", c->name, NULL))) {
        json_object_put(cports);
        return reconcile_fail(c, "out of memory");
    }
    o = reconcile_object(c, "networking.k8s.io/v1", "NetworkPolicy", name, 1, reconcile_common_labels(c, name),
                         reconcile_object_annotations(c));
    free(name);
    spec = reconcile_obj_map(o, "spec");
    reconcile_obj_set(spec, "podSelector", reconcile_label_selector(c));
    rule = reconcile_obj_push(reconcile_obj_arr(spec, "ingress"), json_object_new_object());
    ports = reconcile_obj_arr(rule, "ports");
    for (size_t i = 0; i < json_object_array_length(cports); i++) {
        json_object *p = json_object_array_get_idx(cports, i);
        const char *proto = reconcile_get_str(p, "protocol");
        int64_t num = 0, seen = 0;
        reconcile_get_int(p, "containerPort", &num);
        if (!proto || !*proto) proto = "TCP";
        for (size_t j = 0; j < json_object_array_length(ports) && !seen; j++) {
            json_object *q = json_object_array_get_idx(ports, j);
            int64_t qn = 0;
            reconcile_get_int(q, "port", &qn);
            seen = qn == num && strcmp(reconcile_get_str(q, "protocol"), proto) == 0;
        }
        if (seen) continue;
        json_object *np = reconcile_obj_push(ports, json_object_new_object());
        reconcile_obj_str(np, "protocol", proto);
        reconcile_obj_int(np, "port", num);
    }
    json_object_put(cports);
    types = reconcile_obj_arr(spec, "policyTypes");
    reconcile_obj_push(types, json_object_new_string("Ingress"));
    return reconcile_emit(c, o);
}

/* ---------------------------------------------------------------------------
 * Entry point.
 */

static int build_all(reconcile_ctx *c) {
    int sidecar = strcmp(c->mode, "sidecar") == 0;
    int pdb = strcmp(c->mode, "deployment") == 0 || strcmp(c->mode, "statefulset") == 0;
    if (!sidecar && reconcile_build_workload(c)) return -1;
    if (pdb && build_pdb(c)) return -1;
    if (build_configmap(c) || build_service_account(c)) return -1;
    if (!sidecar && build_hpa(c)) return -1;
    if (!sidecar && (reconcile_build_services(c) || reconcile_build_ingress(c) || build_network_policy(c)))
        return -1;
    if (reconcile_build_targetallocator(c) || reconcile_build_monitors(c) || reconcile_build_rbac(c)) return -1;
    if (!sidecar && reconcile_build_routes(c)) return -1;
    return 0;
}

int reconcile_render(json_object *collector, const char *ns, const reconcile_options *opt,
                     reconcile_render_result *out, char *err, size_t errlen) {
    reconcile_ctx c = {0};
    const char *kind, *api, *state;
    char derr[256] = "";
    int rc = -1;

    memset(out, 0, sizeof(*out));
    err[0] = '\0';
    c.opt = opt;
    c.out = out;
    c.err = err;
    c.errlen = errlen;
    reconcile_obj_oom();
    kind = reconcile_get_str(collector, "kind");
    api = reconcile_get_str(collector, "apiVersion");
    if (!kind || strcmp(kind, "OpenTelemetryCollector") != 0 || !api ||
        (strcmp(api, "opentelemetry.io/v1beta1") != 0 && strcmp(api, "opentelemetry.io/v1alpha1") != 0))
        return reconcile_fail(&c, "not an opentelemetry.io/v1beta1 or v1alpha1 OpenTelemetryCollector");
    if (!(c.cr = reconcile_obj_clone(collector))) return reconcile_fail(&c, "out of memory");
    c.meta = reconcile_get_map(c.cr, "metadata");
    c.name = reconcile_get_str(c.meta, "name");
    if (!c.name || !*c.name) {
        reconcile_fail(&c, "metadata.name is missing");
        goto out;
    }
    c.ns = reconcile_get_str(c.meta, "namespace");
    if (!c.ns || !*c.ns) c.ns = ns && *ns ? ns : "default";
    if (kube_default_collector(c.cr, derr, sizeof(derr)) != 0) {
        reconcile_fail(&c, "%s", derr);
        goto out;
    }
    json_object_object_del(c.cr, KUBE_COLLECTOR_DERIVED_YAML);
    json_object_object_del(c.cr, KUBE_COLLECTOR_DERIVED_PORTS);
    json_object_object_del(c.cr, KUBE_COLLECTOR_DERIVED_ERROR);
    c.spec = reconcile_get_map(c.cr, "spec");
    c.config = reconcile_get_map(c.spec, "config");
    /* upgradeStrategy: none pins the collector as it is (spec 5.6). */
    const char *strategy = reconcile_get_str(c.spec, "upgradeStrategy");
    switch (strategy && strcmp(strategy, "none") == 0 ? 0 : reconcile_upgrade_config(c.config)) {
    case 1:
        reconcile_warn(&c, "service.telemetry.metrics.address is deprecated: rendered as a prometheus pull reader");
        break;
    case -1: reconcile_fail(&c, "out of memory"); goto out;
    }
    if (default_spec(&c)) goto out;
    c.mode = reconcile_get_str(c.spec, "mode");
    state = reconcile_get_str(c.spec, "managementState");
    if (strcmp(state, "unmanaged") == 0) {
        reconcile_warn(&c, "spec.managementState is unmanaged: nothing is rendered");
        rc = 0;
        goto out;
    }
    if (reconcile_config_hash(c.config, c.hash, derr, sizeof(derr)) != 0) {
        reconcile_fail(&c, "%s", derr);
        goto out;
    }
    {
        char h8[9];
        memcpy(h8, c.hash, 8);
        h8[8] = '\0';
        c.collector_name = reconcile_name("%s-collector", c.name, NULL);
        c.configmap_name = reconcile_name("%s-collector-%s", c.name, h8);
        if (!c.collector_name || !c.configmap_name) {
            reconcile_fail(&c, "out of memory");
            goto out;
        }
    }
    c.sa_name = reconcile_get_str(c.spec, "serviceAccount");
    if (!c.sa_name || !*c.sa_name) c.sa_name = c.collector_name;
    /* The reference fails only where the port is needed: the monitoring
     * Service, which sidecar mode does not have. */
    if ((c.metrics_port = kube_collector_metrics_port(c.config, derr, sizeof(derr))) < 0) {
        if (strcmp(c.mode, "sidecar") != 0) {
            reconcile_fail(&c, "%s", derr);
            goto out;
        }
        c.metrics_port = 8888;
    }
    rc = build_all(&c);
out:
    free(c.collector_name);
    free(c.configmap_name);
    json_object_put(c.cr);
    if (rc != 0) {
        if (!err[0]) snprintf(err, errlen, "render failed");
        reconcile_render_result_free(out);
    }
    return rc;
}

void reconcile_render_result_free(reconcile_render_result *r) {
    for (size_t i = 0; i < r->nobjs; i++) json_object_put(r->objs[i]);
    for (size_t i = 0; i < r->nwarnings; i++) free(r->warnings[i]);
    free(r->objs);
    free(r->warnings);
    memset(r, 0, sizeof(*r));
}
