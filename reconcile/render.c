/* reconcile/render.c - one collector's desired objects: input checks, the
 * in-memory webhook defaulting (reconcile.md 1.1, 1.3), the metadata every
 * object shares (2.1) and the build order (2.2). The small objects
 * (ConfigMap, ServiceAccount, PodDisruptionBudget, HPA, NetworkPolicy) are
 * built here; each larger family has its own file (see context.h).
 *
 * Trade-offs:
 * - What the admission webhook refuses (collector/validate.h: the same
 *   function, the same message) is a render error, reported as
 *   "file:line: reason" by the CLI and as a Ready=False condition by `run`:
 *   a collector may have been written without the webhook in front of it.
 *   Its warnings are render warnings. Problems the reference turns into a
 *   permanently failing reconcile but that have an obvious safe outcome
 *   (an autoscaler without maxReplicas) are warnings: the object is left
 *   out and everything else is rendered (spec 7.10).
 * - ownerReferences need the CR's uid; a manifest on disk usually has none,
 *   so they are rendered only when metadata.uid is known, which is always
 *   the case for `run`. */
#include "reconcile/render.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/versions.h"
#include "collector/config.h"
#include "collector/defaults.h"
#include "collector/naming.h"
#include "collector/ports.h"
#include "collector/validate.h"
#include "kube/yaml.h"
#include "reconcile/context.h"
#include "reconcile/upgrade.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

void reconcile_options_default(reconcile_options *o) {
    o->collector_image = DEFAULT_COLLECTOR_IMAGE;
    o->rbac = 1;
    o->prometheus_crds = 1;
    o->routes = 1;
    o->gateway = 1;
    o->target_allocator_image = DEFAULT_TARGET_ALLOCATOR_IMAGE;
    o->ta_configmap_entry = "targetallocator.yaml";
    o->cert_manager = 1;
    o->ta_fallback_strategy = 0;
    o->api_server_port = 443;
    o->api_server_ips = NULL;
    o->target_allocator = NULL;
}

/* ---------------------------------------------------------------------------
 * Context helpers (context.h).
 */

int reconcile_emit(reconcile_ctx *c, json_object *obj) {
    reconcile_render_result *r = c->out;
    r->objs = xrealloc(r->objs, (r->nobjs + 1) * sizeof(*r->objs));
    r->objs[r->nobjs++] = obj;
    return 0;
}

static void vappend(char ***list, size_t *n, const char *fmt, va_list ap) {
    *list = xrealloc(*list, (*n + 1) * sizeof(**list));
    (*list)[(*n)++] = xvasprintf(fmt, ap);
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
    char *instance = collector_truncate("%s.%s", COLLECTOR_NAME_MAX, 2, vals);
    json_object *l = jnew_obj();
    /* Already in sorted order. */
    jset_str(l, "app.kubernetes.io/component", "opentelemetry-collector");
    jset_str(l, "app.kubernetes.io/instance", instance);
    jset_str(l, "app.kubernetes.io/managed-by", "opentelemetry-operator");
    jset_str(l, "app.kubernetes.io/part-of", "opentelemetry");
    free(instance);
    return l;
}

char *reconcile_image_version(const char *image) {
    char *copy, *parts[4] = {0}, *out;
    size_t n = 0;
    if (!image) image = "";
    copy = xstrdup(image);
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
        out = xstrdup(v);
    } else if (n == 2) {
        if (strlen(parts[1]) > 63) parts[1][63] = '\0';
        out = xstrdup(parts[1]);
    } else {
        out = xstrdup("latest");
    }
    free(copy);
    return out;
}

json_object *reconcile_common_labels(reconcile_ctx *c, const char *name) {
    json_object *l = jnew_obj(), *sel, *sorted, *crl = jmap(c->meta, "labels");
    char *version = reconcile_image_version(jstr(c->spec, "image"));
    int has_name = 0;
    if (crl) {
        json_object_object_foreach(crl, k, v) {
            if (strcmp(k, "app.kubernetes.io/name") == 0) has_name = 1;
            jset_copy(l, k, v);
            if (!v) jset(l, k, jnew_str(""));
        }
    }
    sel = reconcile_selector_labels(c);
    if (sel) {
        json_object_object_foreach(sel, k, v) jset_copy(l, k, v);
    }
    json_object_put(sel);
    jset_str(l, "app.kubernetes.io/version", version ? version : "");
    if (!has_name) jset_str(l, "app.kubernetes.io/name", name);
    free(version);
    sorted = jsorted(l);
    json_object_put(l);
    return sorted;
}

json_object *reconcile_object_annotations(reconcile_ctx *c) {
    json_object *a = jsorted(jmap(c->meta, "annotations"));
    if (!a) return jnew_obj();
    json_object_object_del(a, LAST_APPLIED);
    return a;
}

json_object *reconcile_label_selector(reconcile_ctx *c) {
    json_object *s = jnew_obj();
    jset(s, "matchLabels", reconcile_selector_labels(c));
    return s;
}

json_object *reconcile_object(reconcile_ctx *c, const char *api_version, const char *kind, const char *name,
                              int namespaced, json_object *labels, json_object *annotations) {
    json_object *o = jnew_obj(), *m;
    jset_str(o, "apiVersion", api_version);
    jset_str(o, "kind", kind);
    m = jset_obj(o, "metadata");
    jset_str(m, "name", name);
    if (namespaced) jset_str(m, "namespace", c->ns);
    if (labels && json_object_object_length(labels) > 0)
        jset(m, "labels", labels);
    else
        json_object_put(labels);
    if (annotations && json_object_object_length(annotations) > 0)
        jset(m, "annotations", annotations);
    else
        json_object_put(annotations);
    if (namespaced) reconcile_owner_reference(c, m);
    return o;
}

void reconcile_owner_reference(reconcile_ctx *c, json_object *meta) {
    const char *uid = jstr(c->meta, "uid");
    if (!uid || !*uid) return;
    json_object *r = jpush(jset_arr(meta, "ownerReferences"), jnew_obj());
    jset_str(r, "apiVersion", "opentelemetry.io/v1beta1");
    jset_str(r, "kind", "OpenTelemetryCollector");
    jset_str(r, "name", c->name);
    jset_str(r, "uid", uid);
    jset_bool(r, "controller", 1);
    jset_bool(r, "blockOwnerDeletion", 1);
}

/* ---------------------------------------------------------------------------
 * Defaults of the CRD schema (1.1). The webhook's own defaulting is
 * collector_default's, done before; what the API server's schema would add
 * to a stored object is added here, for manifests read from disk.
 */

static int is_set(json_object *o, const char *key) {
    json_object *v = jget(o, key);
    return v && !json_object_is_type(v, json_type_null);
}

static void crd_defaults(reconcile_ctx *c) {
    json_object *spec = c->spec, *v;
    if (!jstr(spec, "ipFamilyPolicy")) jset_str(spec, "ipFamilyPolicy", "SingleStack");
    if (!is_set(spec, "configVersions")) jset_int(spec, "configVersions", 3);
    /* spec.ports[].protocol decides which inferred ports a spec port
     * displaces, so it must be there before ports are derived. */
    if ((v = jarr(spec, "ports")))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *p = json_object_array_get_idx(v, i);
            if (json_object_is_type(p, json_type_object) && !jnonempty(jget(p, "protocol")))
                jset_str(p, "protocol", "TCP");
        }
}

/* What the admission webhook would refuse is not rendered, with its
 * message: no webhook may have been in front of this collector (a file, a
 * cluster where it was written before ours ran). The CRD's own rules are
 * checked too, for the same reason. */
static int validate(reconcile_ctx *c) {
    collector_validate_opts vo = {.cert_manager = -1, .schema = true, .ns = c->ns};
    verdict v = VERDICT_INIT;
    int rc = collector_validate(c->cr, NULL, VERDICT_CREATE, &vo, &v);
    for (size_t i = 0; i < v.nwarnings; i++) reconcile_warn(c, "%s", v.warnings[i]);
    if (rc != 0) reconcile_fail(c, "%s", v.message);
    verdict_free(&v);
    return rc;
}

/* ---------------------------------------------------------------------------
 * Small objects.
 */

static int build_pdb(reconcile_ctx *c) {
    json_object *o = reconcile_object(c, "policy/v1", "PodDisruptionBudget", c->collector_name, 1,
                                      reconcile_common_labels(c, c->collector_name),
                                      reconcile_object_annotations(c));
    json_object *spec = jset_obj(o, "spec"), *pdb = jget(c->spec, "podDisruptionBudget");
    if (json_object_is_type(pdb, json_type_object)) {
        jset_copy(spec, "minAvailable", jget(pdb, "minAvailable"));
        jset(spec, "selector", reconcile_label_selector(c));
        jset_copy(spec, "maxUnavailable", jget(pdb, "maxUnavailable"));
    } else {
        jset(spec, "selector", reconcile_label_selector(c));
        jset_int(spec, "maxUnavailable", 1);
    }
    return reconcile_emit(c, o);
}

static int build_configmap(reconcile_ctx *c) {
    json_object *o, *data;
    char *yaml;
    if (reconcile_ta_config_yaml(c, &yaml)) return -1;
    if (!yaml) yaml = collector_config_yaml(c->config);
    if (!yaml) return reconcile_fail(c, "spec.config cannot be rendered as YAML");
    o = reconcile_object(c, "v1", "ConfigMap", c->configmap_name, 1, reconcile_common_labels(c, c->collector_name),
                         reconcile_object_annotations(c));
    data = jset_obj(o, "data");
    jset_str(data, "collector.yaml", yaml);
    free(yaml);
    return reconcile_emit(c, o);
}

static int build_service_account(reconcile_ctx *c) {
    if (jnonempty(jget(c->spec, "serviceAccount"))) return 0;
    return reconcile_emit(c, reconcile_object(c, "v1", "ServiceAccount", c->collector_name, 1,
                                              reconcile_common_labels(c, c->collector_name),
                                              reconcile_object_annotations(c)));
}

static json_object *resource_metric(const char *resource, int64_t pct) {
    json_object *m = jnew_obj(), *r, *t;
    jset_str(m, "type", "Resource");
    r = jset_obj(m, "resource");
    jset_str(r, "name", resource);
    t = jset_obj(r, "target");
    jset_str(t, "type", "Utilization");
    jset_int(t, "averageUtilization", pct);
    return m;
}

static int build_hpa(reconcile_ctx *c) {
    json_object *as = jget(c->spec, "autoscaler"), *o, *spec, *ref, *metrics, *list;
    int64_t v;
    char *target;
    if (!as || json_object_is_type(as, json_type_null)) return 0;
    if (!jint(as, "maxReplicas", &v)) {
        /* spec 7.10: the reference renders maxReplicas: 0, which the API
         * server refuses on every reconcile. */
        reconcile_warn(c, "spec.autoscaler.maxReplicas is not set: no HorizontalPodAutoscaler");
        return 0;
    }
    target = collector_name("%s", c->name, NULL);
    o = reconcile_object(c, "autoscaling/v2", "HorizontalPodAutoscaler", c->collector_name, 1,
                         reconcile_common_labels(c, c->collector_name), reconcile_object_annotations(c));
    spec = jset_obj(o, "spec");
    ref = jset_obj(spec, "scaleTargetRef");
    jset_str(ref, "kind", "OpenTelemetryCollector");
    jset_str(ref, "name", target);
    jset_str(ref, "apiVersion", "opentelemetry.io/v1beta1");
    free(target);
    jset_copy(spec, "minReplicas", jget(as, "minReplicas"));
    jset_int(spec, "maxReplicas", v);
    metrics = jset_arr(spec, "metrics");
    if (jint(as, "targetMemoryUtilization", &v)) jpush(metrics, resource_metric("memory", v));
    if (jint(as, "targetCPUUtilization", &v)) jpush(metrics, resource_metric("cpu", v));
    if ((list = jarr(as, "metrics"))) {
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *m = json_object_array_get_idx(list, i);
            const char *type = jstr(m, "type");
            if (type && strcmp(type, "Pods") == 0) jpush(metrics, jcopy(m));
        }
    }
    if (json_object_array_length(metrics) == 0) json_object_object_del(spec, "metrics");
    jset_copy(spec, "behavior", jget(as, "behavior"));
    return reconcile_emit(c, o);
}

/* Every container port, with its own protocol (spec 7.8: the reference
 * writes TCP for all, which blocks UDP receivers), each (port, protocol)
 * once. */
static int build_network_policy(reconcile_ctx *c) {
    char *name, err[256] = "";
    json_object *cports, *o, *spec, *rule, *ports, *types;
    if (!jbool(jmap(c->spec, "networkPolicy"), "enabled")) return 0;
    cports = collector_container_ports(c->config, jget(c->spec, "ports"), err, sizeof(err));
    if (!cports) return reconcile_fail(c, "%s", err);
    name = collector_name("%s-collector-networkpolicy", c->name, NULL);
    o = reconcile_object(c, "networking.k8s.io/v1", "NetworkPolicy", name, 1, reconcile_common_labels(c, name),
                         reconcile_object_annotations(c));
    free(name);
    spec = jset_obj(o, "spec");
    jset(spec, "podSelector", reconcile_label_selector(c));
    rule = jpush(jset_arr(spec, "ingress"), jnew_obj());
    ports = jset_arr(rule, "ports");
    for (size_t i = 0; i < json_object_array_length(cports); i++) {
        json_object *p = json_object_array_get_idx(cports, i);
        const char *proto = jstr(p, "protocol");
        int64_t num = 0, seen = 0;
        jint(p, "containerPort", &num);
        if (!proto || !*proto) proto = "TCP";
        for (size_t j = 0; j < json_object_array_length(ports) && !seen; j++) {
            json_object *q = json_object_array_get_idx(ports, j);
            int64_t qn = 0;
            jint(q, "port", &qn);
            seen = qn == num && strcmp(jstr(q, "protocol"), proto) == 0;
        }
        if (seen) continue;
        json_object *np = jpush(ports, jnew_obj());
        jset_str(np, "protocol", proto);
        jset_int(np, "port", num);
    }
    json_object_put(cports);
    types = jset_arr(spec, "policyTypes");
    jpush(types, jnew_str("Ingress"));
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
    kind = jstr(collector, "kind");
    api = jstr(collector, "apiVersion");
    if (!kind || strcmp(kind, "OpenTelemetryCollector") != 0 || !api ||
        (strcmp(api, "opentelemetry.io/v1beta1") != 0 && strcmp(api, "opentelemetry.io/v1alpha1") != 0))
        return reconcile_fail(&c, "not an opentelemetry.io/v1beta1 or v1alpha1 OpenTelemetryCollector");
    c.cr = jcopy(collector);
    c.meta = jmap(c.cr, "metadata");
    c.name = jstr(c.meta, "name");
    if (!c.name || !*c.name) {
        reconcile_fail(&c, "metadata.name is missing");
        goto out;
    }
    c.ns = jstr(c.meta, "namespace");
    if (!c.ns || !*c.ns) c.ns = ns && *ns ? ns : "default";
    if (collector_default(c.cr, derr, sizeof(derr)) != 0) {
        reconcile_fail(&c, "%s", derr);
        goto out;
    }
    /* Derived from the config as it came; it may yet be upgraded below. */
    collector_drop_derived(c.cr);
    c.spec = jmap(c.cr, "spec");
    c.config = jmap(c.spec, "config");
    /* upgradeStrategy: none pins the collector as it is (spec 5.6). */
    const char *strategy = jstr(c.spec, "upgradeStrategy");
    if (!(strategy && strcmp(strategy, "none") == 0) && reconcile_upgrade_config(c.config))
        reconcile_warn(&c, "service.telemetry.metrics.address is deprecated: rendered as a prometheus pull reader");
    crd_defaults(&c);
    if (validate(&c)) goto out;
    c.mode = jstr(c.spec, "mode");
    state = jstr(c.spec, "managementState");
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
        c.collector_name = collector_name("%s-collector", c.name, NULL);
        c.configmap_name = collector_name("%s-collector-%s", c.name, h8);
    }
    c.sa_name = jstr(c.spec, "serviceAccount");
    if (!c.sa_name || !*c.sa_name) c.sa_name = c.collector_name;
    /* The reference fails only where the port is needed: the monitoring
     * Service, which sidecar mode does not have. */
    if ((c.metrics_port = collector_metrics_port(c.config, derr, sizeof(derr))) < 0) {
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
