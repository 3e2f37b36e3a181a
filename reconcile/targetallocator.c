/* reconcile/targetallocator.c - the collector's side of the Target
 * Allocator (reconcile.md 2.12): the child TargetAllocator CR
 * (opentelemetry.io/v1alpha1, whose own controller builds the allocator's
 * Deployment, Service and so on) and the prometheus receiver rewritten to
 * ask the allocator for targets instead of scraping its own list.
 *
 * Trade-offs:
 * - The rewritten ConfigMap text has sorted keys like the reference's but
 *   our usual 2-space indent, not its 4: the collector reads both the same
 *   and the ConfigMap name, which is what identifies it, hashes spec.config
 *   before the rewrite in both implementations.
 * - mTLS between collector and allocator (cert-manager certificates mounted
 *   under /tls) is not rendered. The reference renders it only behind its
 *   alpha feature gate operator.targetallocator.mtls, off by default, so
 *   our output is the reference's default; spec.targetAllocator.mtls is
 *   still copied into the TargetAllocator, and a warning says the collector
 *   side is not.
 * - A CR labelled opentelemetry.io/target-allocator: NAME uses that existing
 *   allocator: no CR is rendered and the receiver points at NAME. Whether it
 *   exists is, again, for `run` to check. */
#include "reconcile/context.h"
#include "reconcile/naming.h"
#include "reconcile/obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TA_LABEL "opentelemetry.io/target-allocator"

static json_object *ta_spec(reconcile_ctx *c) {
    return reconcile_get_map(c->spec, "targetAllocator");
}

int reconcile_ta_enabled(reconcile_ctx *c) {
    return reconcile_get_bool(ta_spec(c), "enabled");
}

/* The allocator's name: the label's value, or the collector's own name. */
static const char *ta_name(reconcile_ctx *c) {
    const char *l = reconcile_get_str(reconcile_get_map(c->meta, "labels"), TA_LABEL);
    return l && *l ? l : c->name;
}

/* A deep copy of v with every map's keys sorted. */
static json_object *sorted_deep(json_object *v) {
    json_object *out;
    if (json_object_is_type(v, json_type_array)) {
        out = json_object_new_array();
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            if (!e) {
                json_object_array_add(out, NULL);
                continue;
            }
            reconcile_obj_push(out, sorted_deep(e));
        }
        return out;
    }
    if (!json_object_is_type(v, json_type_object)) return reconcile_obj_clone(v);
    out = reconcile_obj_sorted(v);
    if (out) {
        json_object_object_foreach(out, k, val) {
            if (val && (json_object_is_type(val, json_type_object) || json_object_is_type(val, json_type_array)))
                reconcile_obj_set(out, k, sorted_deep(val));
        }
    }
    return out;
}

json_object *reconcile_ta_config(reconcile_ctx *c) {
    json_object *cfg, *prom, *ta, *sorted;
    char *svc, *endpoint = NULL;
    if (!reconcile_ta_enabled(c)) return NULL;
    cfg = reconcile_obj_clone(c->config);
    prom = reconcile_get_map(reconcile_get_map(cfg, "receivers"), "prometheus");
    if (prom) {
        json_object *pc = reconcile_get_map(prom, "config");
        if (pc) json_object_object_del(pc, "scrape_configs");
        ta = reconcile_get_map(prom, "target_allocator");
        if (!ta) ta = reconcile_obj_map(prom, "target_allocator");
        svc = reconcile_name("%s-targetallocator", ta_name(c), NULL);
        if (svc && asprintf(&endpoint, "http://%s:80", svc) < 0) endpoint = NULL;
        reconcile_obj_str(ta, "endpoint", endpoint);
        reconcile_obj_str(ta, "interval", "30s");
        reconcile_obj_str(ta, "collector_id", "${POD_NAME}");
        free(svc);
        free(endpoint);
    }
    sorted = sorted_deep(cfg);
    json_object_put(cfg);
    return sorted;
}

int reconcile_build_targetallocator(reconcile_ctx *c) {
    static const char *const copied[] = {
        "replicas", "nodeSelector", "resources", "serviceAccount", "image", "affinity", "securityContext",
        "podSecurityContext", "topologySpreadConstraints", "tolerations", "env", "podDisruptionBudget",
        "allocationStrategy", "filterStrategy", "prometheusCR", "observability", "allowInsecureAuthSecrets",
        "collectorNotReadyGracePeriod", "mtls"};
    json_object *in = ta_spec(c), *labels, *o, *m, *spec, *np, *v;
    const char *uid = reconcile_get_str(c->meta, "uid");
    if (!reconcile_ta_enabled(c)) return 0;
    if (reconcile_get_map(in, "mtls"))
        reconcile_warn(c, "spec.targetAllocator.mtls: copied to the TargetAllocator, but no client certificate is "
                       "mounted into the collector (the reference's operator.targetallocator.mtls gate, off by default)");
    if (reconcile_nonempty(reconcile_get(reconcile_get_map(c->meta, "labels"), TA_LABEL))) return 0;

    /* CRD defaults of the embedded spec (layer A). */
    if (!reconcile_nonempty(reconcile_get(in, "allocationStrategy")))
        reconcile_obj_str(in, "allocationStrategy", "consistent-hashing");
    if (!reconcile_nonempty(reconcile_get(in, "filterStrategy"))) reconcile_obj_str(in, "filterStrategy", "relabel-config");
    if (!reconcile_nonempty(reconcile_get(in, "collectorNotReadyGracePeriod")))
        reconcile_obj_str(in, "collectorNotReadyGracePeriod", "30s");

    /* Raw clones, not the filtered common labels (2.1.3). */
    labels = reconcile_obj_sorted(reconcile_get_map(c->meta, "labels"));
    if (!labels) labels = json_object_new_object();
    reconcile_obj_str(labels, "app.kubernetes.io/managed-by", "opentelemetry-operator");
    {
        json_object *sl = reconcile_obj_sorted(labels);
        json_object_put(labels);
        labels = sl;
    }
    o = json_object_new_object();
    reconcile_obj_str(o, "apiVersion", "opentelemetry.io/v1alpha1");
    reconcile_obj_str(o, "kind", "TargetAllocator");
    m = reconcile_obj_map(o, "metadata");
    reconcile_obj_str(m, "name", c->name);
    reconcile_obj_str(m, "namespace", c->ns);
    reconcile_obj_set(m, "labels", labels);
    if (reconcile_nonempty(reconcile_get_map(c->meta, "annotations")))
        reconcile_obj_set(m, "annotations", reconcile_obj_sorted(reconcile_get_map(c->meta, "annotations")));
    if (uid && *uid) {
        json_object *r = reconcile_obj_push(reconcile_obj_arr(m, "ownerReferences"), json_object_new_object());
        reconcile_obj_str(r, "apiVersion", "opentelemetry.io/v1beta1");
        reconcile_obj_str(r, "kind", "OpenTelemetryCollector");
        reconcile_obj_str(r, "name", c->name);
        reconcile_obj_str(r, "uid", uid);
        reconcile_obj_bool(r, "controller", 1);
        reconcile_obj_bool(r, "blockOwnerDeletion", 1);
    }
    spec = reconcile_obj_map(o, "spec");
    for (size_t i = 0; i < sizeof(copied) / sizeof(*copied); i++) {
        v = reconcile_get(in, copied[i]);
        if (reconcile_nonempty(v) || json_object_is_type(v, json_type_boolean)) reconcile_obj_copy(spec, copied[i], v);
    }
    if (reconcile_nonempty(reconcile_get_map(c->spec, "podAnnotations")))
        reconcile_obj_set(spec, "podAnnotations", reconcile_obj_sorted(reconcile_get_map(c->spec, "podAnnotations")));
    np = reconcile_obj_map(spec, "networkPolicy");
    reconcile_obj_bool(np, "enabled", reconcile_get_bool(reconcile_get_map(c->spec, "networkPolicy"), "enabled"));
    return reconcile_emit(c, o);
}
