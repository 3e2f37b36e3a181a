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

#include "base/json.h"
#include "collector/naming.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TA_LABEL "opentelemetry.io/target-allocator"

static json_object *ta_spec(reconcile_ctx *c) {
    return jmap(c->spec, "targetAllocator");
}

int reconcile_ta_enabled(reconcile_ctx *c) {
    return jbool(ta_spec(c), "enabled");
}

/* The allocator's name: the label's value, or the collector's own name. */
static const char *ta_name(reconcile_ctx *c) {
    const char *l = jstr(jmap(c->meta, "labels"), TA_LABEL);
    return l && *l ? l : c->name;
}

/* A deep copy of v with every map's keys sorted. */
static json_object *sorted_deep(json_object *v) {
    json_object *out;
    if (json_object_is_type(v, json_type_array)) {
        out = jnew_arr();
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            if (!e) {
                jpush(out, NULL);
                continue;
            }
            jpush(out, sorted_deep(e));
        }
        return out;
    }
    if (!json_object_is_type(v, json_type_object)) return jcopy(v);
    out = jsorted(v);
    if (out) {
        json_object_object_foreach(out, k, val) {
            if (val && (json_object_is_type(val, json_type_object) || json_object_is_type(val, json_type_array)))
                jset(out, k, sorted_deep(val));
        }
    }
    return out;
}

json_object *reconcile_ta_config(reconcile_ctx *c) {
    json_object *cfg, *prom, *ta, *sorted;
    char *svc, *endpoint = NULL;
    if (!reconcile_ta_enabled(c)) return NULL;
    cfg = jcopy(c->config);
    prom = jmap(jmap(cfg, "receivers"), "prometheus");
    if (prom) {
        json_object *pc = jmap(prom, "config");
        if (pc) json_object_object_del(pc, "scrape_configs");
        ta = jmap(prom, "target_allocator");
        if (!ta) ta = jset_obj(prom, "target_allocator");
        svc = collector_name("%s-targetallocator", ta_name(c), NULL);
        if (svc && asprintf(&endpoint, "http://%s:80", svc) < 0) endpoint = NULL;
        jset_str(ta, "endpoint", endpoint);
        jset_str(ta, "interval", "30s");
        jset_str(ta, "collector_id", "${POD_NAME}");
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
    if (!reconcile_ta_enabled(c)) return 0;
    if (jmap(in, "mtls"))
        reconcile_warn(c, "spec.targetAllocator.mtls: copied to the TargetAllocator, but no client certificate is "
                       "mounted into the collector (the reference's operator.targetallocator.mtls gate, off by default)");
    if (jnonempty(jget(jmap(c->meta, "labels"), TA_LABEL))) return 0;

    /* CRD defaults of the embedded spec (layer A). */
    if (!jnonempty(jget(in, "allocationStrategy")))
        jset_str(in, "allocationStrategy", "consistent-hashing");
    if (!jnonempty(jget(in, "filterStrategy"))) jset_str(in, "filterStrategy", "relabel-config");
    if (!jnonempty(jget(in, "collectorNotReadyGracePeriod")))
        jset_str(in, "collectorNotReadyGracePeriod", "30s");

    /* Raw clones, not the filtered common labels (2.1.3). */
    labels = jsorted(jmap(c->meta, "labels"));
    if (!labels) labels = jnew_obj();
    jset_str(labels, "app.kubernetes.io/managed-by", "opentelemetry-operator");
    {
        json_object *sl = jsorted(labels);
        json_object_put(labels);
        labels = sl;
    }
    o = jnew_obj();
    jset_str(o, "apiVersion", "opentelemetry.io/v1alpha1");
    jset_str(o, "kind", "TargetAllocator");
    m = jset_obj(o, "metadata");
    jset_str(m, "name", c->name);
    jset_str(m, "namespace", c->ns);
    jset(m, "labels", labels);
    if (jnonempty(jmap(c->meta, "annotations")))
        jset(m, "annotations", jsorted(jmap(c->meta, "annotations")));
    reconcile_owner_reference(c, m);
    spec = jset_obj(o, "spec");
    for (size_t i = 0; i < sizeof(copied) / sizeof(*copied); i++) {
        v = jget(in, copied[i]);
        if (jnonempty(v) || json_object_is_type(v, json_type_boolean)) jset_copy(spec, copied[i], v);
    }
    if (jnonempty(jmap(c->spec, "podAnnotations")))
        jset(spec, "podAnnotations", jsorted(jmap(c->spec, "podAnnotations")));
    np = jset_obj(spec, "networkPolicy");
    jset_bool(np, "enabled", jbool(jmap(c->spec, "networkPolicy"), "enabled"));
    return reconcile_emit(c, o);
}
