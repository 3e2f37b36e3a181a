/* reconcile/discover.c - what the cluster has at the start of a pass: the
 * optional APIs, the collectors, every object they own indexed by owner,
 * and the TargetAllocator a collector's label names (pass.h).
 *
 * GET /apis once tells which optional APIs are there (Prometheus operator,
 * OpenShift routes, Gateway API; the reference detects this at start-up,
 * a CronJob starts every time).
 *
 * Then the collectors are LISTed, and each owned kind once, cluster-wide
 * (or in --namespace), selected by the managed-by label; a 404 makes an
 * optional kind missing (the TargetAllocator CRD lives in a group that is
 * always there). A few paged LISTs instead of a GET per object keep an
 * unchanged pass at a constant number of requests however many collectors
 * there are. Objects are grouped by owner uid (owner.c: the controller
 * ownerReference for namespaced objects, the owner uid annotation for
 * cluster-scoped ones). They are kept as compact JSON text, not trees.
 * Items a LIST should not have held (another kind, no uid, another
 * namespace) are dropped here, so nothing later acts on them. */
#include "reconcile/pass.h"

#include "base/alloc.h"
#include "base/json.h"
#include "reconcile/compare.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* LIST page size: memory against requests. With 1,000 collectors (make
 * bench) 500 gives 29 GETs and 81 MiB peak, 100 gives 99 GETs and 52 MiB.
 * Build with -DRECONCILE_PAGE='"100"' for a tighter memory limit. */
#ifndef RECONCILE_PAGE
#define RECONCILE_PAGE "500"
#endif
#define PAGE RECONCILE_PAGE
#define MANAGED_SELECTOR "app.kubernetes.io%2Fmanaged-by%3Dopentelemetry-operator"

const reconcile_need_info reconcile_needs[RECONCILE_NNEEDS] = {
    [RECONCILE_NEED_PROMETHEUS] = {"monitoring.coreos.com",
                                   "the Prometheus operator CRDs (monitoring.coreos.com) are not installed"},
    [RECONCILE_NEED_ROUTE] = {"route.openshift.io", "the OpenShift route API (route.openshift.io) is not available"},
    [RECONCILE_NEED_GATEWAY] = {"gateway.networking.k8s.io",
                                "the Gateway API CRDs (gateway.networking.k8s.io/v1) are not installed"},
    [RECONCILE_NEED_TA] = {"opentelemetry.io", "the TargetAllocator CRD (opentelemetry.io/v1alpha1) is not installed"},
    [RECONCILE_NEED_CERT_MANAGER] = {"cert-manager.io", "cert-manager (cert-manager.io/v1) is not installed"},
};

#define WORKLOAD RECONCILE_RANK_WORKLOAD
const reconcile_kind reconcile_kinds[] = {
    {"v1", "ServiceAccount", "serviceaccounts", true, 0, RECONCILE_NEED_NONE},
    {"v1", "ConfigMap", "configmaps", true, 1, RECONCILE_NEED_NONE},
    /* Before the allocator's pod, which mounts the Secret they issue. */
    {"cert-manager.io/v1", "Issuer", "issuers", true, 1, RECONCILE_NEED_CERT_MANAGER},
    {"cert-manager.io/v1", "Certificate", "certificates", true, 1, RECONCILE_NEED_CERT_MANAGER},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false, 2, RECONCILE_NEED_NONE},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", false, 3, RECONCILE_NEED_NONE},
    {"v1", "Service", "services", true, 4, RECONCILE_NEED_NONE},
    {"apps/v1", "Deployment", "deployments", true, WORKLOAD, RECONCILE_NEED_NONE},
    {"apps/v1", "DaemonSet", "daemonsets", true, WORKLOAD, RECONCILE_NEED_NONE},
    {"apps/v1", "StatefulSet", "statefulsets", true, WORKLOAD, RECONCILE_NEED_NONE},
    {"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", true, 6, RECONCILE_NEED_NONE},
    {"autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, 6, RECONCILE_NEED_NONE},
    {"networking.k8s.io/v1", "Ingress", "ingresses", true, 7, RECONCILE_NEED_NONE},
    {"networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", true, 7, RECONCILE_NEED_NONE},
    {"route.openshift.io/v1", "Route", "routes", true, 7, RECONCILE_NEED_ROUTE},
    {"gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes", true, 7, RECONCILE_NEED_GATEWAY},
    {"opentelemetry.io/v1alpha1", "TargetAllocator", "targetallocators", true, 7, RECONCILE_NEED_TA},
    {"monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors", true, 8, RECONCILE_NEED_PROMETHEUS},
    {"monitoring.coreos.com/v1", "PodMonitor", "podmonitors", true, 8, RECONCILE_NEED_PROMETHEUS},
};
#undef WORKLOAD
const size_t reconcile_nkinds = sizeof reconcile_kinds / sizeof reconcile_kinds[0];

const reconcile_kind *reconcile_kind_of(const char *api_version, const char *kind) {
    for (size_t i = 0; i < reconcile_nkinds; i++)
        if (api_version && kind && strcmp(reconcile_kinds[i].api_version, api_version) == 0 &&
            strcmp(reconcile_kinds[i].kind, kind) == 0)
            return &reconcile_kinds[i];
    return NULL;
}

void reconcile_collection_path(char *out, size_t n, const reconcile_kind *k, const char *ns) {
    const char *root = strchr(k->api_version, '/') ? "/apis/" : "/api/";
    if (k->namespaced && ns)
        snprintf(out, n, "%s%s/namespaces/%s/%s", root, k->api_version, ns, k->plural);
    else
        snprintf(out, n, "%s%s/%s", root, k->api_version, k->plural);
}

/* What a LIST is for: items that are not of this kind, carry no uid, or lie
 * outside the namespace asked are not believed (an aggregated API, a
 * proxy or a broken server could answer anything, and a wrong-kind item
 * would otherwise be pruned under the plural's name). */
typedef struct list_want {
    const char *api_version, *kind;
    bool namespaced;
} list_want;

/* Why item is not one of w (NULL: it is). Items of built-in lists often
 * carry no kind and apiVersion; only ones that are there are compared. */
static const char *misfit(reconcile_pass *r, const list_want *w, json_object *item, char *buf, size_t n) {
    json_object *m = jmap(item, "metadata");
    const char *kind = jstr(item, "kind"), *api = jstr(item, "apiVersion"), *ns = jstr(m, "namespace");
    const char *uid = jstr(m, "uid"), *name = jstr(m, "name");
    if (!json_object_is_type(item, json_type_object) || !m || !name || !*name)
        snprintf(buf, n, "an item without metadata.name");
    else if ((kind && strcmp(kind, w->kind) != 0) || (api && strcmp(api, w->api_version) != 0))
        snprintf(buf, n, "%s %s %s%s%s: not a %s", api ? api : "?", kind ? kind : "?", ns ? ns : "", ns ? "/" : "",
                 name, w->kind);
    else if (!uid || !*uid)
        snprintf(buf, n, "%s %s%s%s: no metadata.uid", w->kind, ns ? ns : "", ns ? "/" : "", name);
    else if (w->namespaced && (!ns || !*ns || (r->o->ns && strcmp(ns, r->o->ns) != 0)))
        snprintf(buf, n, "%s %s/%s: outside the namespace asked (%s)", w->kind, ns ? ns : "", name,
                 r->o->ns ? r->o->ns : "any");
    else if (!w->namespaced && ns && *ns)
        snprintf(buf, n, "%s %s/%s: a namespace on a cluster-scoped kind", w->kind, ns, name);
    else
        return NULL;
    return buf;
}

/* Calls each(r, item, ctx) for every item of a paged LIST of path (query:
 * extra "k=v&", may be empty) that is one of w, while its page is in
 * memory: one page is the most a LIST holds at a time. Items that are not
 * are skipped, said once per LIST. The LIST's pages and answer bytes are
 * bounded (run.h): past either the run is cut short. 0; or, with err, the
 * HTTP status that failed it, or -1 when no answer came. */
typedef reconcile_each_fn each_fn;
static int list_all(reconcile_pass *r, const char *path, const char *query, const list_want *w, each_fn each,
                    void *ctx, char *err, size_t errlen) {
    char *cont = NULL, url[2048], first[512] = "";
    int ret = -1;
    long pages = 0, max_pages = r->o->max_list_pages > 0 ? r->o->max_list_pages : RECONCILE_DEFAULT_MAX_LIST_PAGES;
    size_t bytes = 0, max_bytes = r->o->max_list_bytes > 0 ? r->o->max_list_bytes : RECONCILE_DEFAULT_MAX_LIST_BYTES;
    size_t ignored = 0;
    for (;;) {
        char *body = NULL;
        json_object *j = NULL;
        if (pages == max_pages) {
            reconcile_cut(r, "LIST %s: --max-list-pages %ld reached (the API server keeps answering continue)", path,
                          max_pages);
            snprintf(err, errlen, "run cut short: %s", r->st->cut);
            goto out;
        }
        pages++;
        snprintf(url, sizeof url, "%s?%slimit=" PAGE "%s%s", path, query, cont ? "&continue=" : "", cont ? cont : "");
        /* The answer may use what is left of the LIST's bytes, and one page
         * a quarter of them at most, no more: it is cut off while it is
         * read, before json-c turns it into a tree several times its size. */
        size_t left = max_bytes - bytes, page_max = max_bytes / 4 > 0 ? max_bytes / 4 : 1;
        bool page_cap = page_max < left;
        kube_api_conn_limit_body(r->conn, (page_cap ? page_max : left) + 1);
        int code = reconcile_request(r, "GET", url, NULL, NULL, &body, &j, err, errlen);
        bool cut = kube_api_conn_body_cut(r->conn);
        kube_api_conn_limit_body(r->conn, 0);
        free(cont);
        cont = NULL;
        if (cut) {
            if (page_cap)
                reconcile_cut(r, "LIST %s: a page larger than a quarter of --max-list-bytes %zu", path, max_bytes);
            else
                reconcile_cut(r, "LIST %s: --max-list-bytes %zu reached", path, max_bytes);
            snprintf(err, errlen, "run cut short: %s", r->st->cut);
            goto out;
        }
        bytes += body ? strlen(body) : 0;
        if (code != 200 || !j) {
            if (code > 0) reconcile_describe(err, errlen, code, body);
            if (code > 0 && code != 200) ret = code;
            free(body);
            json_object_put(j);
            goto out;
        }
        free(body);
        json_object *arr = jarr(j, "items");
        for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
            json_object *it = json_object_array_get_idx(arr, i);
            char why[400];
            if (misfit(r, w, it, why, sizeof why)) {
                if (!ignored++) snprintf(first, sizeof first, "%s", why);
                continue;
            }
            /* Server-side apply's field ownership is often the largest
             * part of an object and nothing here reads it. */
            json_object *meta = jmap(it, "metadata");
            if (meta) json_object_object_del(meta, "managedFields");
            each(r, it, ctx);
        }
        const char *c = jstr(jmap(j, "metadata"), "continue");
        if (c && *c) cont = xstrdup(c);
        json_object_put(j);
        if (!cont) break;
    }
    ret = 0;
out:
    if (ignored)
        reconcile_logf(r, "warning: LIST %s: %zu item%s ignored, neither applied over nor deleted (first: %s)", path,
                       ignored, ignored == 1 ? "" : "s", first);
    free(cont);
    return ret;
}

int reconcile_discover(reconcile_pass *r, char *err, size_t errlen) {
    json_object *j = reconcile_get_json(r, "/apis", err, errlen);
    if (!j) return -1;
    json_object *groups = jarr(j, "groups");
    for (size_t i = 0; groups && i < json_object_array_length(groups); i++) {
        const char *g = jstr(json_object_array_get_idx(groups, i), "name");
        for (int n = RECONCILE_NEED_NONE + 1; g && n < RECONCILE_NNEEDS; n++)
            if (strcmp(g, reconcile_needs[n].group) == 0) r->have[n] = true;
    }
    json_object_put(j);
    return 0;
}

int reconcile_list(reconcile_pass *r, const char *path, const char *api_version, const char *kind, json_object *into,
                   reconcile_each_fn each, char *err, size_t errlen) {
    list_want w = {api_version, kind, true};
    return list_all(r, path, "", &w, each, into, err, errlen);
}

static void keep_collector(reconcile_pass *r, json_object *cr, void *ctx) {
    (void)r;
    jpush(ctx, json_object_get(cr));
}

int reconcile_list_collectors(reconcile_pass *r, json_object *crs, char *err, size_t errlen) {
    char path[512];
    if (r->o->ns)
        snprintf(path, sizeof path, RECONCILE_COLLECTORS_API "/namespaces/%s/opentelemetrycollectors", r->o->ns);
    else
        snprintf(path, sizeof path, RECONCILE_COLLECTORS_API "/opentelemetrycollectors");
    list_want w = {"opentelemetry.io/v1beta1", "OpenTelemetryCollector", true};
    return list_all(r, path, "", &w, keep_collector, crs, err, errlen);
}

static void index_add(reconcile_pass *r, const char *owner_key, const char *live_key) {
    json_object *arr = NULL;
    if (!json_object_object_get_ex(r->owned, owner_key, &arr)) {
        arr = jnew_arr();
        jset(r->owned, owner_key, arr);
    }
    jpush(arr, jnew_str(live_key));
}

json_object *reconcile_live_get(reconcile_pass *r, const char *key) {
    json_object *text = NULL;
    if (!json_object_object_get_ex(r->live, key, &text)) return NULL;
    return json_tokener_parse(json_object_get_string(text));
}

/* Keeps one listed object of kind k (see reconcile_list_owned). */
static void keep_owned(reconcile_pass *r, json_object *o, void *ctx) {
    const reconcile_kind *k = ctx;
    json_object *m = jmap(o, "metadata");
    const char *name = jstr(m, "name"), *ns = jstr(m, "namespace");
    char key[768];
    if (!name) return;
    snprintf(key, sizeof key, "%s/%s/%s", k->plural, ns ? ns : "", name);
    /* Kept as compact text, parsed again when compared: a json-c tree
     * costs several times its text (every map is a hash table), and a
     * pass holds every object it owns. */
    jset(r->live, key, jnew_str(reconcile_json_text(o)));
    bool ta = false;
    const char *uid = reconcile_owner_uid(k, o, &ta);
    if (uid && *uid) {
        char ok[300];
        snprintf(ok, sizeof ok, "uid:%s", uid);
        index_add(r, ok, key);
        if (ta) jset(r->ta_owners, uid, jnew_bool(1));
    }
}

int reconcile_list_owned(reconcile_pass *r, char *err, size_t errlen) {
    for (size_t i = 0; i < reconcile_nkinds; i++) {
        const reconcile_kind *k = &reconcile_kinds[i];
        char path[512], why[512] = "";
        if (!r->have[k->need]) continue;
        reconcile_collection_path(path, sizeof path, k, r->o->ns);
        list_want w = {k->api_version, k->kind, k->namespaced};
        int code =
            list_all(r, path, "labelSelector=" MANAGED_SELECTOR "&", &w, keep_owned, (void *)k, why, sizeof why);
        if (code == 404 && k->need != RECONCILE_NEED_NONE) { /* the group is there, this kind or version is not */
            r->have[k->need] = false;
            continue;
        }
        if (code != 0) {
            snprintf(err, errlen, "listing %s: %s", k->plural, why);
            return -1;
        }
    }
    return 0;
}

/* A collector labelled opentelemetry.io/target-allocator: NAME uses that
 * existing allocator (with or without spec.targetAllocator.enabled); the
 * reference fails the reconcile when it is not there, and so do we (in the
 * Ready condition, not only a log). A collector generating its own needs
 * the CRD. */
json_object *reconcile_check_target_allocator(reconcile_pass *r, reconcile_collector *c) {
    json_object *spec = jmap(c->cr, "spec"), *found = NULL;
    const char *ta = jstr(jmap(jmap(c->cr, "metadata"), "labels"), "opentelemetry.io/target-allocator");
    if (!ta || !*ta) {
        if (jbool(jmap(spec, "targetAllocator"), "enabled") && !r->have[RECONCILE_NEED_TA])
            reconcile_collector_fail(c, "TargetAllocator %s: %s", c->name, reconcile_needs[RECONCILE_NEED_TA].why);
        return NULL;
    }
    if (!r->have[RECONCILE_NEED_TA]) {
        reconcile_collector_fail(c, "TargetAllocator %s: %s", ta, reconcile_needs[RECONCILE_NEED_TA].why);
        return NULL;
    }
    char path[1024], err[512] = "", *body = NULL;
    snprintf(path, sizeof path, "/apis/opentelemetry.io/v1alpha1/namespaces/%s/targetallocators/%s", c->ns, ta);
    int code = reconcile_request(r, "GET", path, NULL, NULL, &body, &found, err, sizeof err);
    if (code == 404)
        snprintf(err, sizeof err, "not found (the label opentelemetry.io/target-allocator names it)");
    else if (code > 0 && code != 200)
        reconcile_describe(err, sizeof err, code, body);
    free(body);
    if (code != 200) {
        reconcile_collector_fail(c, "TargetAllocator %s: %s", ta, err);
        reconcile_logf(r, "error: %s/%s: TargetAllocator %s: %s", c->ns, c->name, ta, err);
        json_object_put(found);
        return NULL;
    }
    return found;
}
