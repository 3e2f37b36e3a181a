/* reconcile/workload.c - the Deployment, DaemonSet or StatefulSet and its
 * pod (reconcile.md 2.4, 2.5). The collector container and the volumes it
 * mounts come from collector/container.c, the builder of the sidecar too,
 * so an injected sidecar and a rendered Deployment of one collector never
 * disagree.
 *
 * Fields are written in Go struct order. Values the reference always
 * writes even when empty (strategy: {}, dnsConfig: {}, resources: {},
 * shareProcessNamespace: false) are written too, so that the rendered
 * object is what the reference would send, not a tidier variant.
 *
 * The operator's own proxy variables (HTTP_PROXY...) are not copied into
 * the container: render runs on a workstation, whose proxy settings have
 * nothing to do with the cluster's. */
#include "collector/container.h"

#include "base/alloc.h"
#include "base/json.h"
#include "collector/naming.h"
#include "reconcile/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Pod template annotations (2.1.4). The Prometheus port is the telemetry
 * port actually configured (spec 7.9: the reference always says 8888). */
static json_object *pod_annotations(reconcile_ctx *c) {
    json_object *a = jsorted(jmap(c->spec, "podAnnotations")), *objann, *sorted;
    char port[24];
    int added = 0;
    if (!a) a = jnew_obj();
    json_object_object_del(a, "kubectl.kubernetes.io/last-applied-configuration");
    objann = reconcile_object_annotations(c);
    if (objann) {
        json_object_object_foreach(objann, k, v) {
            if (!json_object_object_get_ex(a, k, NULL)) jset_copy(a, k, v);
        }
    }
    json_object_put(objann);
    if (!jbool(jmap(jmap(c->spec, "observability"), "metrics"),
                            "disablePrometheusAnnotations")) {
        static const char *const keys[3] = {"prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path"};
        snprintf(port, sizeof(port), "%ld", c->metrics_port);
        const char *vals[3] = {"true", port, "/metrics"};
        for (int i = 0; i < 3; i++)
            if (!json_object_object_get_ex(a, keys[i], NULL)) {
                jset_str(a, keys[i], vals[i]);
                added = 1;
            }
        if (added) jset_str(a, "operator.opentelemetry.io/prometheus-annotations-added", "true");
    }
    jset_str(a, "opentelemetry-operator-config/sha256", c->hash);
    sorted = jsorted(a);
    json_object_put(a);
    return sorted;
}

static json_object *pod_template(reconcile_ctx *c, int spread) {
    json_object *t, *m, *ps, *spec = c->spec, *dns, *containers, *extra;
    const char *policy = jstr(spec, "dnsPolicy");
    collector_build_opts o = {.target = COLLECTOR_WORKLOAD, .default_image = c->opt->collector_image,
                              .configmap = c->configmap_name};
    collector_pod part;
    char err[256] = "";
    if (collector_build(c->cr, &o, &part, err, sizeof err) != 0) {
        reconcile_fail(c, "%s", err);
        return NULL;
    }
    /* The allocator's client certificate (targetallocator.md 17.2): its
     * volumes after the config's, before the user's; its mounts last. */
    if (reconcile_ta_mtls(c)) {
        json_object *tv = jnew_arr(), *tm = jnew_arr(), *mounts = jarr_at(part.container, "volumeMounts");
        reconcile_ta_client_mounts(c, tv, tm);
        for (size_t i = 0; i < json_object_array_length(tv); i++)
            jinsert(part.volumes, 1 + i, json_object_get(json_object_array_get_idx(tv, i)));
        for (size_t i = 0; i < json_object_array_length(tm); i++)
            jpush(mounts, json_object_get(json_object_array_get_idx(tm, i)));
        json_object_put(tv);
        json_object_put(tm);
    }
    t = jnew_obj();
    m = jset_obj(t, "metadata");
    jset(m, "labels", reconcile_common_labels(c, c->collector_name));
    jset(m, "annotations", pod_annotations(c));
    ps = jset_obj(t, "spec");
    jset(ps, "volumes", json_object_get(part.volumes));
    if (part.init_containers) jset(ps, "initContainers", json_object_get(part.init_containers));
    containers = jset_arr(ps, "containers");
    jpush(containers, json_object_get(part.container));
    if ((extra = jarr(spec, "additionalContainers")))
        for (size_t i = 0; i < json_object_array_length(extra); i++)
            jpush(containers, jcopy(json_object_array_get_idx(extra, i)));
    collector_pod_free(&part);
    jset_copy(ps, "terminationGracePeriodSeconds", jget(spec, "terminationGracePeriodSeconds"));
    dns = jmap(spec, "podDnsConfig");
    if (!policy || !*policy)
        policy = jnonempty(jget(dns, "nameservers"))   ? "None"
                 : jbool(spec, "hostNetwork")             ? "ClusterFirstWithHostNet"
                                                                        : "ClusterFirst";
    jset_str(ps, "dnsPolicy", policy);
    if (jmap(spec, "nodeSelector"))
        jset(ps, "nodeSelector", jsorted(jmap(spec, "nodeSelector")));
    jset_str(ps, "serviceAccountName", c->sa_name);
    if (jbool(spec, "hostNetwork")) jset_bool(ps, "hostNetwork", 1);
    if (jbool(spec, "hostPID")) jset_bool(ps, "hostPID", 1);
    jset_bool(ps, "shareProcessNamespace", jbool(spec, "shareProcessNamespace"));
    jset_copy(ps, "securityContext", jmap(spec, "podSecurityContext"));
    jset_copy(ps, "affinity", jmap(spec, "affinity"));
    jset_copy(ps, "tolerations", jarr(spec, "tolerations"));
    jset_copy(ps, "hostAliases", jarr(spec, "hostAliases"));
    if (jnonempty(jget(spec, "priorityClassName")))
        jset_copy(ps, "priorityClassName", jget(spec, "priorityClassName"));
    if (dns)
        jset_copy(ps, "dnsConfig", dns);
    else
        jset_obj(ps, "dnsConfig");
    if (spread) jset_copy(ps, "topologySpreadConstraints", jarr(spec, "topologySpreadConstraints"));
    jset_copy(ps, "hostUsers", jget(spec, "hostUsers"));
    return t;
}

/* GetDesiredReplicas: max(autoscaler.minReplicas, replicas). */
static int64_t desired_replicas(reconcile_ctx *c) {
    int64_t r = 1, min;
    jint(c->spec, "replicas", &r);
    if (jint(jmap(c->spec, "autoscaler"), "minReplicas", &min) && min > r) r = min;
    return r;
}

int reconcile_build_workload(reconcile_ctx *c) {
    int deploy = strcmp(c->mode, "deployment") == 0, sts = strcmp(c->mode, "statefulset") == 0;
    const char *kind = deploy ? "Deployment" : sts ? "StatefulSet" : "DaemonSet";
    json_object *o = reconcile_object(c, "apps/v1", kind, c->collector_name, 1,
                                      reconcile_common_labels(c, c->collector_name), reconcile_object_annotations(c));
    json_object *spec = jset_obj(o, "spec"), *t, *v;
    if (!deploy && !sts) {
        jset(spec, "selector", reconcile_label_selector(c));
        if (!(t = pod_template(c, 0))) goto err;
        jset(spec, "template", t);
        v = jmap(c->spec, "daemonSetUpdateStrategy");
        if (v) jset_copy(spec, "updateStrategy", v);
        else jset_obj(spec, "updateStrategy");
        return reconcile_emit(c, o);
    }
    jset_int(spec, "replicas", desired_replicas(c));
    jset(spec, "selector", reconcile_label_selector(c));
    if (!(t = pod_template(c, 1))) goto err;
    jset(spec, "template", t);
    if (deploy) {
        v = jmap(c->spec, "deploymentUpdateStrategy");
        if (v) jset_copy(spec, "strategy", v);
        else jset_obj(spec, "strategy");
        return reconcile_emit(c, o);
    }
    if (jnonempty(jget(c->spec, "volumeClaimTemplates")))
        jset_copy(spec, "volumeClaimTemplates", jget(c->spec, "volumeClaimTemplates"));
    {
        const char *svc = jstr(c->spec, "serviceName");
        char *headless = NULL;
        if (!svc || !*svc) svc = headless = collector_name("%s-headless", c->collector_name, NULL);
        jset_str(spec, "serviceName", svc);
        free(headless);
    }
    v = jget(c->spec, "podManagementPolicy");
    if (jnonempty(v)) jset_copy(spec, "podManagementPolicy", v);
    else jset_str(spec, "podManagementPolicy", "Parallel");
    jset_obj(spec, "updateStrategy");
    jset_copy(spec, "persistentVolumeClaimRetentionPolicy",
                       jmap(c->spec, "persistentVolumeClaimRetentionPolicy"));
    return reconcile_emit(c, o);
err:
    json_object_put(o);
    return -1;
}
