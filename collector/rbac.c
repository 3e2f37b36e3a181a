/* collector/rbac.c - the rules each component needs; see rbac.h.
 *
 * Differences from the reference (spec 7.5), both cheap and both visible
 * only as fewer spurious updates: components are visited in ID order within
 * a kind, not in Go's random map order, so the rule list is stable from run
 * to run; and a rule identical to an earlier one is dropped (k8sattributes
 * adds one nodes rule per metadata entry naming k8s.node). Rules are not
 * merged across components: a reader should still see where each came from.
 *
 * Components are matched by type (before '/'), enabled ones only: receivers
 * and processors in a pipeline, extensions in service.extensions. */
#include "collector/rbac.h"

#include "base/json.h"
#include "collector/components.h"

#include <stdlib.h>
#include <string.h>

#define GWL "get", "watch", "list"
#define GLW "get", "list", "watch"

/* Appends {verbs, apiGroups: [group], resources} unless an equal rule is
 * there already. Lists are NULL-terminated. */
static void rule(json_object *rules, const char *group, const char *const *resources, const char *const *verbs) {
    json_object *r = jnew_obj(), *a;
    a = jset_arr(r, "verbs");
    for (const char *const *v = verbs; *v; v++) jpush(a, jnew_str(*v));
    a = jset_arr(r, "apiGroups");
    jpush(a, jnew_str(group));
    a = jset_arr(r, "resources");
    for (const char *const *v = resources; *v; v++) jpush(a, jnew_str(*v));
    for (size_t i = 0; i < json_object_array_length(rules); i++)
        if (json_object_equal(json_object_array_get_idx(rules, i), r)) {
            json_object_put(r);
            return;
        }
    jpush(rules, r);
}

#define RULE(rules, group, res, ...)                                                                              \
    rule(rules, group, (const char *const[]){res, NULL}, (const char *const[]){__VA_ARGS__, NULL})
#define RULEN(rules, group, resarr, ...) rule(rules, group, resarr, (const char *const[]){__VA_ARGS__, NULL})

static int is_type(const char *id, const char *a, const char *b) {
    size_t n = strcspn(id, "/");
    return (strlen(a) == n && strncmp(id, a, n) == 0) || (b && strlen(b) == n && strncmp(id, b, n) == 0);
}

static int truthy(json_object *o, const char *key) {
    return jbool(o, key);
}

static void kubelet_stats(json_object *rules, json_object *cfg) {
    static const char *const metrics[] = {
        "k8s.container.cpu_limit_utilization",  "k8s.container.cpu_request_utilization",
        "k8s.container.memory_limit_utilization", "k8s.container.memory_request_utilization",
        "k8s.pod.cpu_limit_utilization",        "k8s.pod.cpu_request_utilization",
        "k8s.pod.memory_limit_utilization",     "k8s.pod.memory_request_utilization"};
    int proxy = jnonempty(jarr(cfg, "extra_metadata_labels"));
    json_object *m = jmap(cfg, "metrics");
    for (size_t i = 0; i < sizeof(metrics) / sizeof(*metrics) && !proxy; i++)
        proxy = truthy(jmap(m, metrics[i]), "enabled");
    RULE(rules, "", "nodes/stats", "get");
    if (proxy) RULE(rules, "", "nodes/proxy", "get");
}

static void k8s_cluster(json_object *rules, json_object *cfg) {
    static const char *const core[] = {"events", "namespaces", "namespaces/status", "nodes", "nodes/spec",
                                       "persistentvolumeclaims", "persistentvolumes", "pods", "pods/status",
                                       "replicationcontrollers", "replicationcontrollers/status",
                                       "resourcequotas", "services", NULL};
    static const char *const apps[] = {"daemonsets", "deployments", "replicasets", "statefulsets", NULL};
    static const char *const ext[] = {"daemonsets", "deployments", "replicasets", NULL};
    static const char *const batch[] = {"jobs", "cronjobs", NULL};
    const char *dist = jstr(cfg, "distribution");
    RULEN(rules, "", core, GLW);
    RULEN(rules, "apps", apps, GLW);
    RULEN(rules, "extensions", ext, GLW);
    RULEN(rules, "batch", batch, GLW);
    RULE(rules, "autoscaling", "horizontalpodautoscalers", GLW);
    if (dist && strcmp(dist, "openshift") == 0) RULE(rules, "quota.openshift.io", "clusterresourcequotas", GLW);
}

static void k8s_objects(json_object *rules, json_object *cfg) {
    json_object *objs = jarr(cfg, "objects");
    for (size_t i = 0; objs && i < json_object_array_length(objs); i++) {
        json_object *o = json_object_array_get_idx(objs, i);
        const char *name = jstr(o, "name"), *group = jstr(o, "group");
        const char *mode = jstr(o, "mode");
        const char *res[2] = {name ? name : "", NULL};
        if (!group) group = "";
        if (mode && strcmp(mode, "pull") == 0 && name && strcmp(name, "events") && strcmp(name, "events.k8s.io"))
            RULEN(rules, group, res, "list", "get");
        else if (mode && strcmp(mode, "watch") == 0)
            RULEN(rules, group, res, "list", "watch");
        else
            RULEN(rules, group, res, "list");
    }
}

static void k8s_attributes(json_object *rules, json_object *cfg) {
    static const char *const pn[] = {"pods", "namespaces", NULL};
    json_object *md = jarr(jmap(cfg, "extract"), "metadata");
    size_t n = md ? json_object_array_length(md) : 0;
    int rs = n == 0;
    RULEN(rules, "", pn, GWL);
    for (size_t i = 0; i < n && !rs; i++) {
        const char *m = json_object_get_string(json_object_array_get_idx(md, i));
        rs = m && (strstr(m, "k8s.deployment.uid") || strstr(m, "k8s.deployment.name") || strstr(m, "service.name"));
    }
    if (rs) RULE(rules, "apps", "replicasets", GWL);
    for (size_t i = 0; i < n; i++) {
        const char *m = json_object_get_string(json_object_array_get_idx(md, i));
        if (m && strstr(m, "k8s.node")) RULE(rules, "", "nodes", GWL);
    }
}

static void resource_detection(json_object *rules, json_object *cfg) {
    static const char *const infra[] = {"infrastructures", "infrastructures/status", NULL};
    json_object *d = jarr(cfg, "detectors");
    for (size_t i = 0; d && i < json_object_array_length(d); i++) {
        const char *det = json_object_get_string(json_object_array_get_idx(d, i));
        if (!det) continue;
        if (strcmp(det, "k8snode") == 0) RULE(rules, "", "nodes", "get", "list");
        if (strcmp(det, "openshift") == 0) RULEN(rules, "config.openshift.io", infra, GWL);
    }
}

static void component_rules(json_object *rules, const char *kind, const char *id, json_object *cfg) {
    if (strcmp(kind, "receivers") == 0) {
        if (is_type(id, "kubelet_stats", "kubeletstats")) kubelet_stats(rules, cfg);
        else if (is_type(id, "k8s_events", NULL)) RULE(rules, "", "events", GLW);
        else if (is_type(id, "k8s_cluster", NULL)) k8s_cluster(rules, cfg);
        else if (is_type(id, "k8s_objects", "k8sobjects")) k8s_objects(rules, cfg);
    } else if (strcmp(kind, "processors") == 0) {
        if (is_type(id, "k8s_attributes", "k8sattributes")) k8s_attributes(rules, cfg);
        else if (is_type(id, "resource_detection", "resourcedetection")) resource_detection(rules, cfg);
    } else {
        if (is_type(id, "k8s_observer", NULL)) {
            if (truthy(cfg, "observe_pods")) RULE(rules, "", "pods", "list", "watch");
            if (truthy(cfg, "observe_services")) RULE(rules, "", "services", "list", "watch");
            if (truthy(cfg, "observe_nodes")) RULE(rules, "", "nodes", "list", "watch");
        } else if (is_type(id, "k8s_leader_elector", NULL)) {
            RULE(rules, "coordination.k8s.io", "leases", "get", "list", "watch", "create", "update", "patch", "delete");
        }
    }
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

json_object *collector_rbac_rules(json_object *config) {
    static const collector_kind kinds[] = {COLLECTOR_RECEIVERS, COLLECTOR_PROCESSORS, COLLECTOR_EXTENSIONS};
    json_object *rules = jnew_arr();
    for (size_t k = 0; k < 3; k++) {
        collector_ids ids;
        const char *key = collector_kind_key(kinds[k]);
        json_object *section = jmap(config, key);
        collector_enabled(config, kinds[k], &ids);
        /* Sorted: the rules come out in one order whatever the pipelines' order. */
        if (ids.n) qsort(ids.v, ids.n, sizeof(*ids.v), cmp_str);
        for (size_t i = 0; i < ids.n; i++) component_rules(rules, key, ids.v[i], jget(section, ids.v[i]));
        collector_ids_free(&ids);
    }
    return rules;
}
