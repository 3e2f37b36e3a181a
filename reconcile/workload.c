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
#include "reconcile/context.h"
#include "reconcile/naming.h"
#include "reconcile/obj.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* --config=/conf/collector.yaml, then --k=v sorted; key "config" dropped. */
static json_object *container_args(reconcile_ctx *c) {
    json_object *args = json_object_new_array(), *m = reconcile_get_map(c->spec, "args");
    size_t n = m ? (size_t)json_object_object_length(m) : 0, k = 0;
    char **v = n ? calloc(n, sizeof(*v)) : NULL;
    reconcile_obj_push(args, json_object_new_string("--config=/conf/collector.yaml"));
    if (m && v) {
        json_object_object_foreach(m, key, val) {
            if (strcmp(key, "config") == 0) continue;
            if (asprintf(&v[k], "--%s=%s", key, val ? json_object_get_string(val) : "") < 0)
                v[k] = NULL;
            else
                k++;
        }
        qsort(v, k, sizeof(*v), cmp_str);
        for (size_t i = 0; i < k; i++) reconcile_obj_push(args, json_object_new_string(v[i]));
    }
    for (size_t i = 0; i < k; i++) free(v[i]);
    free(v);
    return args;
}

static int env_has(json_object *env, const char *name) {
    for (size_t i = 0; env && i < json_object_array_length(env); i++) {
        const char *n = reconcile_get_str(json_object_array_get_idx(env, i), "name");
        if (n && strcmp(n, name) == 0) return 1;
    }
    return 0;
}

static void env_field(json_object *env, const char *name, const char *path) {
    json_object *e = reconcile_obj_push(env, json_object_new_object());
    reconcile_obj_str(e, "name", name);
    reconcile_obj_str(reconcile_obj_map(reconcile_obj_map(e, "valueFrom"), "fieldRef"), "fieldPath", path);
}

static void env_resource(json_object *env, const char *name, const char *resource) {
    json_object *e = reconcile_obj_push(env, json_object_new_object()), *r;
    reconcile_obj_str(e, "name", name);
    r = reconcile_obj_map(reconcile_obj_map(e, "valueFrom"), "resourceFieldRef");
    reconcile_obj_str(r, "containerName", "otc-container");
    reconcile_obj_str(r, "resource", resource);
}

/* Is a receiver of this type (before '/') in a pipeline? */
static int receiver_enabled(json_object *config, const char *type1, const char *type2) {
    json_object *pipes = reconcile_get_map(reconcile_get_map(config, "service"), "pipelines");
    if (!pipes) return 0;
    json_object_object_foreach(pipes, pname, p) {
        json_object *list = reconcile_get_arr(p, "receivers");
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
    json_object *user = reconcile_get_arr(c->spec, "env"), *env = json_object_new_array();
    for (size_t i = 0; user && i < json_object_array_length(user); i++)
        reconcile_obj_push(env, reconcile_obj_clone(json_object_array_get_idx(user, i)));
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
    if (!(out = malloc(strlen(raw) + 1))) {
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
    json_object *spec = c->spec, *k = reconcile_obj_push(containers, json_object_new_object());
    json_object *ports, *mounts, *m, *list, *live, *ready, *start;
    const char *image = reconcile_get_str(spec, "image");
    char err[256] = "";
    if (!image || !*image) image = c->opt->collector_image;
    reconcile_obj_str(k, "name", "otc-container");
    reconcile_obj_str(k, "image", image);
    reconcile_obj_copy(k, "command", reconcile_get_arr(spec, "command"));
    reconcile_obj_set(k, "args", container_args(c));
    if (!(ports = kube_collector_container_ports(c->config, reconcile_get(spec, "ports"), err, sizeof(err))))
        return reconcile_fail(c, "%s", err);
    reconcile_obj_set(k, "ports", ports);
    reconcile_obj_copy(k, "envFrom", reconcile_get_arr(spec, "envFrom"));
    reconcile_obj_set(k, "env", container_env(c));
    if (reconcile_get_map(spec, "resources"))
        reconcile_obj_copy(k, "resources", reconcile_get_map(spec, "resources"));
    else
        reconcile_obj_map(k, "resources");
    mounts = reconcile_obj_arr(k, "volumeMounts");
    m = reconcile_obj_push(mounts, json_object_new_object());
    reconcile_obj_str(m, "name", "otc-internal");
    reconcile_obj_str(m, "mountPath", "/conf");
    if ((list = reconcile_get_arr(spec, "volumeMounts")))
        for (size_t i = 0; i < json_object_array_length(list); i++)
            reconcile_obj_push(mounts, reconcile_obj_clone(json_object_array_get_idx(list, i)));
    if ((list = reconcile_get_arr(spec, "configmaps")))
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            json_object *e = json_object_array_get_idx(list, i);
            char *vol = reconcile_name("configmap-%s", reconcile_get_str(e, "name") ? reconcile_get_str(e, "name") : "", NULL);
            char *path = vol ? configmap_mount_path(reconcile_get_str(e, "mountpath"), vol) : NULL;
            m = reconcile_obj_push(mounts, json_object_new_object());
            reconcile_obj_str(m, "name", vol);
            reconcile_obj_str(m, "mountPath", path);
            free(vol);
            free(path);
        }
    kube_collector_probes(c->spec, &live, &ready, &start);
    if (live) reconcile_obj_set(k, "livenessProbe", live);
    if (ready) reconcile_obj_set(k, "readinessProbe", ready);
    if (start) reconcile_obj_set(k, "startupProbe", start);
    reconcile_obj_copy(k, "lifecycle", reconcile_get_map(spec, "lifecycle"));
    if (reconcile_nonempty(reconcile_get(spec, "imagePullPolicy")))
        reconcile_obj_copy(k, "imagePullPolicy", reconcile_get(spec, "imagePullPolicy"));
    reconcile_obj_copy(k, "securityContext", reconcile_get_map(spec, "securityContext"));
    return 0;
}

static json_object *volumes(reconcile_ctx *c) {
    json_object *v = json_object_new_array(), *e, *cm, *items, *it, *list;
    e = reconcile_obj_push(v, json_object_new_object());
    reconcile_obj_str(e, "name", "otc-internal");
    cm = reconcile_obj_map(e, "configMap");
    reconcile_obj_str(cm, "name", c->configmap_name);
    items = reconcile_obj_arr(cm, "items");
    it = reconcile_obj_push(items, json_object_new_object());
    reconcile_obj_str(it, "key", "collector.yaml");
    reconcile_obj_str(it, "path", "collector.yaml");
    if ((list = reconcile_get_arr(c->spec, "volumes")))
        for (size_t i = 0; i < json_object_array_length(list); i++)
            reconcile_obj_push(v, reconcile_obj_clone(json_object_array_get_idx(list, i)));
    if ((list = reconcile_get_arr(c->spec, "configmaps")))
        for (size_t i = 0; i < json_object_array_length(list); i++) {
            const char *name = reconcile_get_str(json_object_array_get_idx(list, i), "name");
            char *vol = reconcile_name("configmap-%s", name ? name : "", NULL);
            e = reconcile_obj_push(v, json_object_new_object());
            reconcile_obj_str(e, "name", vol);
            reconcile_obj_str(reconcile_obj_map(e, "configMap"), "name", name);
            free(vol);
        }
    return v;
}

/* Pod template annotations (2.1.4). The Prometheus port is the telemetry
 * port actually configured (spec 7.9: the reference always says 8888). */
static json_object *pod_annotations(reconcile_ctx *c) {
    json_object *a = reconcile_obj_sorted(reconcile_get_map(c->spec, "podAnnotations")), *objann, *sorted;
    char port[24];
    int added = 0;
    if (!a) a = json_object_new_object();
    json_object_object_del(a, "kubectl.kubernetes.io/last-applied-configuration");
    objann = reconcile_object_annotations(c);
    if (objann) {
        json_object_object_foreach(objann, k, v) {
            if (!json_object_object_get_ex(a, k, NULL)) reconcile_obj_copy(a, k, v);
        }
    }
    json_object_put(objann);
    if (!reconcile_get_bool(reconcile_get_map(reconcile_get_map(c->spec, "observability"), "metrics"),
                            "disablePrometheusAnnotations")) {
        static const char *const keys[3] = {"prometheus.io/scrape", "prometheus.io/port", "prometheus.io/path"};
        snprintf(port, sizeof(port), "%ld", c->metrics_port);
        const char *vals[3] = {"true", port, "/metrics"};
        for (int i = 0; i < 3; i++)
            if (!json_object_object_get_ex(a, keys[i], NULL)) {
                reconcile_obj_str(a, keys[i], vals[i]);
                added = 1;
            }
        if (added) reconcile_obj_str(a, "operator.opentelemetry.io/prometheus-annotations-added", "true");
    }
    reconcile_obj_str(a, "opentelemetry-operator-config/sha256", c->hash);
    sorted = reconcile_obj_sorted(a);
    json_object_put(a);
    return sorted;
}

static json_object *pod_template(reconcile_ctx *c, int spread) {
    json_object *t = json_object_new_object(), *m, *ps, *spec = c->spec, *dns;
    const char *policy = reconcile_get_str(spec, "dnsPolicy");
    m = reconcile_obj_map(t, "metadata");
    reconcile_obj_set(m, "labels", reconcile_common_labels(c, c->collector_name));
    reconcile_obj_set(m, "annotations", pod_annotations(c));
    ps = reconcile_obj_map(t, "spec");
    reconcile_obj_set(ps, "volumes", volumes(c));
    reconcile_obj_copy(ps, "initContainers", reconcile_get_arr(spec, "initContainers"));
    {
        json_object *containers = reconcile_obj_arr(ps, "containers"), *extra;
        if (container(c, containers)) {
            json_object_put(t);
            return NULL;
        }
        if ((extra = reconcile_get_arr(spec, "additionalContainers")))
            for (size_t i = 0; i < json_object_array_length(extra); i++)
                reconcile_obj_push(containers, reconcile_obj_clone(json_object_array_get_idx(extra, i)));
    }
    reconcile_obj_copy(ps, "terminationGracePeriodSeconds", reconcile_get(spec, "terminationGracePeriodSeconds"));
    dns = reconcile_get_map(spec, "podDnsConfig");
    if (!policy || !*policy)
        policy = reconcile_nonempty(reconcile_get(dns, "nameservers"))   ? "None"
                 : reconcile_get_bool(spec, "hostNetwork")             ? "ClusterFirstWithHostNet"
                                                                        : "ClusterFirst";
    reconcile_obj_str(ps, "dnsPolicy", policy);
    if (reconcile_get_map(spec, "nodeSelector"))
        reconcile_obj_set(ps, "nodeSelector", reconcile_obj_sorted(reconcile_get_map(spec, "nodeSelector")));
    reconcile_obj_str(ps, "serviceAccountName", c->sa_name);
    if (reconcile_get_bool(spec, "hostNetwork")) reconcile_obj_bool(ps, "hostNetwork", 1);
    if (reconcile_get_bool(spec, "hostPID")) reconcile_obj_bool(ps, "hostPID", 1);
    reconcile_obj_bool(ps, "shareProcessNamespace", reconcile_get_bool(spec, "shareProcessNamespace"));
    reconcile_obj_copy(ps, "securityContext", reconcile_get_map(spec, "podSecurityContext"));
    reconcile_obj_copy(ps, "affinity", reconcile_get_map(spec, "affinity"));
    reconcile_obj_copy(ps, "tolerations", reconcile_get_arr(spec, "tolerations"));
    reconcile_obj_copy(ps, "hostAliases", reconcile_get_arr(spec, "hostAliases"));
    if (reconcile_nonempty(reconcile_get(spec, "priorityClassName")))
        reconcile_obj_copy(ps, "priorityClassName", reconcile_get(spec, "priorityClassName"));
    if (dns)
        reconcile_obj_copy(ps, "dnsConfig", dns);
    else
        reconcile_obj_map(ps, "dnsConfig");
    if (spread) reconcile_obj_copy(ps, "topologySpreadConstraints", reconcile_get_arr(spec, "topologySpreadConstraints"));
    reconcile_obj_copy(ps, "hostUsers", reconcile_get(spec, "hostUsers"));
    return t;
}

/* GetDesiredReplicas: max(autoscaler.minReplicas, replicas). */
static int64_t desired_replicas(reconcile_ctx *c) {
    int64_t r = 1, min;
    reconcile_get_int(c->spec, "replicas", &r);
    if (reconcile_get_int(reconcile_get_map(c->spec, "autoscaler"), "minReplicas", &min) && min > r) r = min;
    return r;
}

int reconcile_build_workload(reconcile_ctx *c) {
    int deploy = strcmp(c->mode, "deployment") == 0, sts = strcmp(c->mode, "statefulset") == 0;
    const char *kind = deploy ? "Deployment" : sts ? "StatefulSet" : "DaemonSet";
    json_object *o = reconcile_object(c, "apps/v1", kind, c->collector_name, 1,
                                      reconcile_common_labels(c, c->collector_name), reconcile_object_annotations(c));
    json_object *spec = reconcile_obj_map(o, "spec"), *t, *v;
    if (!deploy && !sts) {
        reconcile_obj_set(spec, "selector", reconcile_label_selector(c));
        if (!(t = pod_template(c, 0))) goto err;
        reconcile_obj_set(spec, "template", t);
        v = reconcile_get_map(c->spec, "daemonSetUpdateStrategy");
        if (v) reconcile_obj_copy(spec, "updateStrategy", v);
        else reconcile_obj_map(spec, "updateStrategy");
        return reconcile_emit(c, o);
    }
    reconcile_obj_int(spec, "replicas", desired_replicas(c));
    reconcile_obj_set(spec, "selector", reconcile_label_selector(c));
    if (!(t = pod_template(c, 1))) goto err;
    reconcile_obj_set(spec, "template", t);
    if (deploy) {
        v = reconcile_get_map(c->spec, "deploymentUpdateStrategy");
        if (v) reconcile_obj_copy(spec, "strategy", v);
        else reconcile_obj_map(spec, "strategy");
        return reconcile_emit(c, o);
    }
    if (reconcile_nonempty(reconcile_get(c->spec, "volumeClaimTemplates")))
        reconcile_obj_copy(spec, "volumeClaimTemplates", reconcile_get(c->spec, "volumeClaimTemplates"));
    {
        const char *svc = reconcile_get_str(c->spec, "serviceName");
        char *headless = NULL;
        if (!svc || !*svc) svc = headless = reconcile_name("%s-headless", c->collector_name, NULL);
        reconcile_obj_str(spec, "serviceName", svc);
        free(headless);
    }
    v = reconcile_get(c->spec, "podManagementPolicy");
    if (reconcile_nonempty(v)) reconcile_obj_copy(spec, "podManagementPolicy", v);
    else reconcile_obj_str(spec, "podManagementPolicy", "Parallel");
    reconcile_obj_map(spec, "updateStrategy");
    reconcile_obj_copy(spec, "persistentVolumeClaimRetentionPolicy",
                       reconcile_get_map(c->spec, "persistentVolumeClaimRetentionPolicy"));
    return reconcile_emit(c, o);
err:
    json_object_put(o);
    return -1;
}
