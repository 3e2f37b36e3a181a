/* reconcile/workload.c - the Deployment, DaemonSet or StatefulSet and its
 * pod (reconcile.md 2.4, 2.5). Container ports and probes come from
 * kube/collector.c, the same code that builds the sidecar, so an injected
 * sidecar and a rendered Deployment of one collector never disagree.
 *
 * Fields are written in Go struct order. Values the reference always
 * writes even when empty (strategy: {}, dnsConfig: {}, resources: {},
 * shareProcessNamespace: false) are written too, so that the rendered
 * object is what the reference would send, not a tidier variant.
 *
 * The operator's own proxy variables (HTTP_PROXY...) are not copied into
 * the container: render runs on a workstation, whose proxy settings have
 * nothing to do with the cluster's. */
#include "kube/collector.h"

#include "base/alloc.h"
#include "base/json.h"
#include "reconcile/context.h"
#include "reconcile/naming.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --config=/conf/collector.yaml, then --k=v sorted; key "config" dropped. */
static json_object *container_args(reconcile_ctx *c) {
    json_object *args = jnew_arr(), *m = jmap(c->spec, "args");
    size_t n = m ? (size_t)json_object_object_length(m) : 0, k = 0;
    char **v = n ? xcalloc(n, sizeof(*v)) : NULL;
    jpush(args, jnew_str("--config=/conf/collector.yaml"));
    if (m && v) {
        json_object_object_foreach(m, key, val) {
            if (strcmp(key, "config") == 0) continue;
            if (asprintf(&v[k], "--%s=%s", key, val ? json_object_get_string(val) : "") < 0)
                v[k] = NULL;
            else
                k++;
        }
        qsort(v, k, sizeof(*v), cmp_str);
        for (size_t i = 0; i < k; i++) jpush(args, jnew_str(v[i]));
    }
    for (size_t i = 0; i < k; i++) free(v[i]);
    free(v);
    return args;
}

static int env_has(json_object *env, const char *name) {
    for (size_t i = 0; env && i < json_object_array_length(env); i++) {
        const char *n = jstr(json_object_array_get_idx(env, i), "name");
        if (n && strcmp(n, name) == 0) return 1;
    }
    return 0;
}

static void env_field(json_object *env, const char *name, const char *path) {
    json_object *e = jpush(env, jnew_obj());
    jset_str(e, "name", name);
    jset_str(jset_obj(jset_obj(e, "valueFrom"), "fieldRef"), "fieldPath", path);
}

static void env_resource(json_object *env, const char *name, const char *resource) {
    json_object *e = jpush(env, jnew_obj()), *r;
    jset_str(e, "name", name);
    r = jset_obj(jset_obj(e, "valueFrom"), "resourceFieldRef");
    jset_str(r, "containerName", "otc-container");
    jset_str(r, "resource", resource);
}

/* Is a receiver of this type (before '/') in a pipeline? */
static int receiver_enabled(json_object *config, const char *type1, const char *type2) {
    json_object *pipes = jmap(jmap(config, "service"), "pipelines");
    if (!pipes) return 0;
    json_object_object_foreach(pipes, pname, p) {
        json_object *list = jarr(p, "receivers");
        (void)pname;
        for (size_t i = 0; list && i < json_object_array_length(list); i++) {
            json_object *e = json_object_array_get_idx(list, i);
            const char *id;
            size_t n;
            if (!json_object_is_type(e, json_type_string)) continue;
            id = json_object_get_string(e);
            n = strcspn(id, "/");
            if ((strlen(type1) == n && strncmp(id, type1, n) == 0) || (strlen(type2) == n && strncmp(id, type2, n) == 0))
                return 1;
        }
    }
    return 0;
}

static json_object *container_env(reconcile_ctx *c) {
    json_object *user = jarr(c->spec, "env"), *env = jnew_arr();
    for (size_t i = 0; user && i < json_object_array_length(user); i++)
        jpush(env, jcopy(json_object_array_get_idx(user, i)));
    if (!env_has(user, "POD_NAME")) env_field(env, "POD_NAME", "metadata.name");
    if (!env_has(user, "GOMEMLIMIT")) env_resource(env, "GOMEMLIMIT", "limits.memory");
    if (!env_has(user, "GOMAXPROCS")) env_resource(env, "GOMAXPROCS", "limits.cpu");
    if (receiver_enabled(c->config, "kubelet_stats", "kubeletstats") && !env_has(user, "K8S_NODE_NAME"))
        env_field(env, "K8S_NODE_NAME", "spec.nodeName");
    return env;
}

/* path.Join("/var/conf", mountpath, "configmap-<name>"). */
static char *configmap_mount_path(const char *mountpath, const char *volname) {
    char *raw = NULL, *out;
    size_t w = 0;
    if (asprintf(&raw, "/var/conf/%s/%s", mountpath ? mountpath : "", volname) < 0) return NULL;
    if (!(out = xmalloc(strlen(raw) + 1))) {
        free(raw);
        return NULL;
    }
    /* Clean: collapse "//", drop "/./"; ".." is not resolved (the CRD
     * validates mountpath elsewhere and path.Join's ".." handling would
     * only matter for hostile input, which the kubelet rejects anyway). */
    for (const char *p = raw; *p;) {
        if (*p == '/') {
            while (p[1] == '/' || (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))) p += p[1] == '/' ? 1 : 2;
            if (w == 0 || out[w - 1] != '/') out[w++] = '/';
            p++;
        } else {
            out[w++] = *p++;
        }
    }
    if (w > 1 && out[w - 1] == '/') w--;
    out[w] = '\0';
    free(raw);
    return out;
}

static int container(reconcile_ctx *c, json_object *containers) {
    json_object *spec = c->spec, *k = jpush(containers, jnew_obj());
    json_object *ports, *mounts, *m, *list, *live, *ready, *start;
    const char *image = jstr(spec, "image");
    char err[256] = "";
    if (!image || !*image) image = c->opt->collector_image;
    jset_str(k, "name", "otc-container");
    jset_str(k, "image", image);
    jset_copy(k, "command", jarr(spec, "command"));
    jset(k, "args", container_args(c));
    if (!(ports = kube_collector_container_ports(c->config, jget(spec, "ports"), err, sizeof(err))))
        return reconcile_fail(c, "%s", err);
    jset(k, "ports", ports);
    jset_copy(k, "envFrom", jarr(spec, "envFrom"));
    jset(k, "env", container_env(c));
    if (jmap(spec, "resources"))
        jset_copy(k, "resources", jmap(spec, "resources"));
    else
        jset_obj(k, "resources");
    mounts = jset_arr(k, "volumeMounts");
    m = jpush(mounts, jnew_obj());
    jset_str(m, "name", "otc-internal");
    jset_str(m, "mountPath", "/conf");
    if ((list = jarr(spec, "volumeMounts")))
        for (size_t i = 0; i < json_object_array_length(list); i++)
            jpush(mounts, jcopy(json_object_array_get_idx(list, i)));
    if ((list = jarr(spec, "configmaps")))
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *e = json_object_array_get_idx(list, i);
            char *vol = reconcile_name("configmap-%s", jstr(e, "name") ? jstr(e, "name") : "", NULL);
            char *path = vol ? configmap_mount_path(jstr(e, "mountpath"), vol) : NULL;
            m = jpush(mounts, jnew_obj());
            jset_str(m, "name", vol);
            jset_str(m, "mountPath", path);
            free(vol);
            free(path);
        }
    kube_collector_probes(c->spec, &live, &ready, &start);
    if (live) jset(k, "livenessProbe", live);
    if (ready) jset(k, "readinessProbe", ready);
    if (start) jset(k, "startupProbe", start);
    jset_copy(k, "lifecycle", jmap(spec, "lifecycle"));
    if (jnonempty(jget(spec, "imagePullPolicy")))
        jset_copy(k, "imagePullPolicy", jget(spec, "imagePullPolicy"));
    jset_copy(k, "securityContext", jmap(spec, "securityContext"));
    return 0;
}

static json_object *volumes(reconcile_ctx *c) {
    json_object *v = jnew_arr(), *e, *cm, *items, *it, *list;
    e = jpush(v, jnew_obj());
    jset_str(e, "name", "otc-internal");
    cm = jset_obj(e, "configMap");
    jset_str(cm, "name", c->configmap_name);
    items = jset_arr(cm, "items");
    it = jpush(items, jnew_obj());
    jset_str(it, "key", "collector.yaml");
    jset_str(it, "path", "collector.yaml");
    if ((list = jarr(c->spec, "volumes")))
        for (size_t i = 0; i < json_object_array_length(list); i++)
            jpush(v, jcopy(json_object_array_get_idx(list, i)));
    if ((list = jarr(c->spec, "configmaps")))
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            const char *name = jstr(json_object_array_get_idx(list, i), "name");
            char *vol = reconcile_name("configmap-%s", name ? name : "", NULL);
            e = jpush(v, jnew_obj());
            jset_str(e, "name", vol);
            jset_str(jset_obj(e, "configMap"), "name", name);
            free(vol);
        }
    return v;
}

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
    json_object *t = jnew_obj(), *m, *ps, *spec = c->spec, *dns;
    const char *policy = jstr(spec, "dnsPolicy");
    m = jset_obj(t, "metadata");
    jset(m, "labels", reconcile_common_labels(c, c->collector_name));
    jset(m, "annotations", pod_annotations(c));
    ps = jset_obj(t, "spec");
    jset(ps, "volumes", volumes(c));
    jset_copy(ps, "initContainers", jarr(spec, "initContainers"));
    {
        json_object *containers = jset_arr(ps, "containers"), *extra;
        if (container(c, containers)) {
            json_object_put(t);
            return NULL;
        }
        if ((extra = jarr(spec, "additionalContainers")))
            for (size_t i = 0; i < json_object_array_length(extra); i++)
                jpush(containers, jcopy(json_object_array_get_idx(extra, i)));
    }
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
        if (!svc || !*svc) svc = headless = reconcile_name("%s-headless", c->collector_name, NULL);
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
