/* reconcile/targetallocator.c - the collector's side of the Target
 * Allocator (targetallocator.md 3.2, 17; reconcile.md 2.12): the child
 * TargetAllocator CR (opentelemetry.io/v1alpha1, whose objects
 * ta_render.c builds) and the prometheus receiver rewritten to ask the
 * allocator for targets instead of scraping its own list.
 *
 * A collector labelled opentelemetry.io/target-allocator: NAME uses that
 * existing allocator whether or not spec.targetAllocator.enabled is set
 * (the label takes precedence, 3.3): no CR is rendered and the receiver
 * points at NAME. Whether it exists is for `run` to check; its mTLS
 * setting is known when the caller passes it (reconcile_options).
 *
 * The rewritten ConfigMap text is the reference's: keys sorted bytewise,
 * 4-space indent, lists indented under their key (goccy/go-yaml). Its name
 * and the pod's hash annotation hash spec.config before the rewrite, as
 * the reference's do (17.1 step 6; spec 21 item 15 is left as it is: a
 * changed hash would roll every allocator-fed collector once). */
#include "reconcile/context.h"

#include "base/alloc.h"
#include "base/json.h"
#include "collector/naming.h"
#include "kube/yaml.h"
#include "reconcile/ta_config.h"
#include "reconcile/targetallocator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TA_LABEL RECONCILE_TA_LABEL

static json_object *ta_spec(reconcile_ctx *c) {
    return jmap(c->spec, "targetAllocator");
}

static const char *ta_label(reconcile_ctx *c) {
    const char *l = jstr(jmap(c->meta, "labels"), TA_LABEL);
    return l && *l ? l : NULL;
}

int reconcile_ta_enabled(reconcile_ctx *c) {
    return ta_label(c) || jbool(ta_spec(c), "enabled");
}

/* The allocator's name: the label's value, or the collector's own name. */
static const char *ta_name(reconcile_ctx *c) {
    const char *l = ta_label(c);
    return l ? l : c->name;
}

int reconcile_ta_mtls(reconcile_ctx *c) {
    if (!reconcile_ta_enabled(c)) return 0;
    if (ta_label(c)) return jbool(jmap(jmap(c->opt->target_allocator, "spec"), "mtls"), "enabled");
    return jbool(jmap(ta_spec(c), "mtls"), "enabled");
}

/* The allocator's spec.mtls: the embedded one (the collector CRD's default
 * useCertManager: true), or the one of the allocator the label names. */
static json_object *ta_mtls(reconcile_ctx *c) {
    if (ta_label(c)) return jmap(jmap(c->opt->target_allocator, "spec"), "mtls");
    return jmap(ta_spec(c), "mtls");
}

/* The Secret is the allocator's client certificate, named after the
 * allocator: the reference names it after the collector, which for a
 * label-bound allocator of another name is a Secret nobody issues (spec
 * 21 item 9). */
void reconcile_ta_client_mounts(reconcile_ctx *c, json_object *volumes, json_object *mounts) {
    json_object *mtls = jcopy(ta_mtls(c));
    if (mtls && !jget(mtls, "useCertManager")) jset_bool(mtls, "useCertManager", 1);
    char *base = collector_name("%s-ta-client-cert", ta_name(c), NULL);
    reconcile_ta_tls_mounts(mtls, base, "clientCertificate", volumes, mounts);
    free(base);
    json_object_put(mtls);
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

int reconcile_ta_config_yaml(reconcile_ctx *c, char **yaml) {
    static const kube_yaml_style goccy4 = {4, 0, KUBE_YAML_QUOTE_GO_YAML, 0};
    json_object *cfg, *prom, *pc, *ta, *sorted, *interval;
    char err[512] = "", *svc, *endpoint;
    int mtls;
    *yaml = NULL;
    if (!reconcile_ta_enabled(c)) return 0;
    /* The same checks and messages as the allocator's own config (6.2). */
    if (!reconcile_ta_find_prometheus(c->config, err, sizeof err)) return reconcile_fail(c, "%s", err);
    cfg = jcopy(c->config);
    prom = jmap(jmap(cfg, "receivers"), "prometheus");
    if (!prom) prom = jset_obj(jmap(cfg, "receivers"), "prometheus");
    if (json_object_object_get_ex(prom, "config", &pc)) {
        if (!json_object_is_type(pc, json_type_object)) {
            json_object_put(cfg);
            return reconcile_fail(c, "prometheusConfig property in the configuration doesn't contain valid prometheusConfig");
        }
        json_object_object_del(pc, "scrape_configs");
    }
    if (json_object_object_get_ex(prom, "target_allocator", &ta) && ta && !json_object_is_type(ta, json_type_object)) {
        json_object_put(cfg);
        return reconcile_fail(c, "target_allocator property in the configuration doesn't contain valid target_allocator");
    }
    if (!ta) ta = jset_obj(prom, "target_allocator");
    mtls = reconcile_ta_mtls(c);
    svc = collector_name("%s-targetallocator", ta_name(c), NULL);
    endpoint = mtls ? xasprintf("https://%s:443", svc) : xasprintf("http://%s:80", svc);
    jset_str(ta, "endpoint", endpoint);
    jset_str(ta, "interval", "30s");
    jset_str(ta, "collector_id", "${POD_NAME}");
    free(svc);
    free(endpoint);
    if (mtls) {
        json_object *tls = jget(ta, "tls");
        if (tls && !json_object_is_type(tls, json_type_object)) {
            json_object_put(cfg);
            return reconcile_fail(c, "target_allocator.tls property in the configuration doesn't contain a valid map");
        }
        if (!tls) tls = jset_obj(ta, "tls");
        jset_str(tls, "ca_file", "/tls/ca.crt");
        jset_str(tls, "cert_file", "/tls/tls.crt");
        jset_str(tls, "key_file", "/tls/tls.key");
        jset_str(tls, "reload_interval", "5m");
    }
    /* Schema default 30s wherever spec.targetAllocator is written. */
    interval = jget(ta_spec(c), "collectorTargetReloadInterval");
    if (jmap(c->spec, "targetAllocator") && !interval) jset_str(ta, "interval", "30s");
    if (interval) {
        char *d = json_object_is_type(interval, json_type_string)
                      ? reconcile_go_duration_normal(json_object_get_string(interval))
                      : NULL;
        if (!d) {
            json_object_put(cfg);
            return reconcile_fail(c, "spec.targetAllocator.collectorTargetReloadInterval: not a duration: %s",
                                  json_object_to_json_string(interval));
        }
        jset_str(ta, "interval", d);
        free(d);
    }
    sorted = sorted_deep(cfg);
    json_object_put(cfg);
    *yaml = kube_yaml_emit_style(sorted, &goccy4);
    json_object_put(sorted);
    return 0;
}

int reconcile_build_targetallocator(reconcile_ctx *c) {
    static const char *const copied[] = {
        "replicas", "nodeSelector", "resources", "serviceAccount", "image", "affinity", "securityContext",
        "podSecurityContext", "topologySpreadConstraints", "tolerations", "env", "podDisruptionBudget",
        "allocationStrategy", "filterStrategy", "prometheusCR", "observability", "allowInsecureAuthSecrets",
        "collectorNotReadyGracePeriod", "mtls"};
    json_object *in = ta_spec(c), *labels, *o, *m, *spec, *np, *v;
    if (!jbool(in, "enabled") || ta_label(c)) return 0;
    {
        /* The collector webhook's checks of the embedded spec (15.4). */
        json_object *mtls = jcopy(jmap(in, "mtls"));
        char err[512];
        if (mtls && !jget(mtls, "useCertManager")) jset_bool(mtls, "useCertManager", 1);
        int bad = reconcile_ta_mtls_check(mtls, c->opt->cert_manager, err, sizeof err);
        json_object_put(mtls);
        if (bad) return reconcile_fail(c, "spec.targetAllocator.mtls: %s", err);
    }

    /* CRD defaults of the embedded spec (layer A). */
    if (!jnonempty(jget(in, "allocationStrategy")))
        jset_str(in, "allocationStrategy", "consistent-hashing");
    if (!jget(in, "filterStrategy")) jset_str(in, "filterStrategy", "relabel-config");
    if (!jget(in, "collectorNotReadyGracePeriod"))
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
