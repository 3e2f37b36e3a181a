/* reconcile/run.c - one reconcile pass against the API server (run.h).
 *
 * Shape of a pass, and why:
 *   1. GET /apis once: which optional APIs are there (Prometheus operator,
 *      OpenShift routes, Gateway API; the reference detects this at
 *      start-up, a CronJob starts every time).
 *   2. LIST the collectors, then LIST each owned kind once, cluster-wide
 *      (or in --namespace), selected by the managed-by label; a 404 makes an
 *      optional kind missing (the TargetAllocator CRD lives in a group that
 *      is always there). A few paged LISTs instead of a GET per object keep
 *      an unchanged pass at a constant number of requests however many
 *      collectors there are. Objects are grouped by owner: the controller
 *      ownerReference's uid for namespaced objects, the owner annotation for
 *      cluster-scoped ones. They are kept as compact JSON text, not trees.
 *   3. Per collector: render, then apply in dependency order (ServiceAccount,
 *      ConfigMap, RBAC and Services before the workload, so pods do not start
 *      against a missing mount or account) with server-side apply. A workload
 *      change the API server refuses in place (immutable fields) is a delete
 *      and an apply in the same pass. Prune only when every apply succeeded
 *      (the reference's rule: a half-applied collector must not lose its
 *      running objects), then write the status.
 *   4. Delete the ClusterRoles and bindings of collectors that are gone
 *      (the reference needs a finalizer for this; we see it on the next run).
 *
 * When is an apply skipped? Server-side apply answers 200 even when nothing
 * changes, so the decision is local: the object is left alone when (a) the
 * live object carries our digest annotation of exactly this desired object
 * and (b) every field of the desired object has the same value in the live
 * one (a subset comparison: fields the server adds, defaults, status and
 * metadata it owns are not looked at; an empty map or list matches an
 * absent one, because the API server drops those). (b) alone would miss a
 * field removed from the desired object; (a) alone would miss someone
 * editing a field we manage. The status write is skipped the same way.
 *
 * Errors are per collector: a render error, or a failed apply or prune, is
 * written into that collector's Ready condition and counted; the pass goes
 * on with the next collector. */
#include "reconcile/run.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "base/versions.h"
#include "reconcile/render.h"
#include "reconcile/upgrade.h"

#include <json-c/json.h>
#include <math.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT_MS 30000L
/* LIST page size: memory against requests. With 1,000 collectors (make
 * bench) 500 gives 29 GETs and 81 MiB peak, 100 gives 99 GETs and 52 MiB.
 * Build with -DRECONCILE_PAGE='"100"' for a tighter memory limit. */
#ifndef RECONCILE_PAGE
#define RECONCILE_PAGE "500"
#endif
#define PAGE RECONCILE_PAGE
#define MANAGED_SELECTOR "app.kubernetes.io%2Fmanaged-by%3Dopentelemetry-operator"
#define COLLECTORS "/apis/opentelemetry.io/v1beta1"

/* Kinds that exist only when an API is installed. A group missing from
 * GET /apis, or a LIST of the kind answering 404, makes the kind
 * unavailable for this pass: a collector that needs it fails with WHY. */
typedef enum { NEED_NONE, NEED_PROMETHEUS, NEED_ROUTE, NEED_GATEWAY, NEED_TA, NNEEDS } need_t;
static const struct {
    const char *group, *why;
} NEEDS[NNEEDS] = {
    [NEED_PROMETHEUS] = {"monitoring.coreos.com", "the Prometheus operator CRDs (monitoring.coreos.com) are not installed"},
    [NEED_ROUTE] = {"route.openshift.io", "the OpenShift route API (route.openshift.io) is not available"},
    [NEED_GATEWAY] = {"gateway.networking.k8s.io", "the Gateway API CRDs (gateway.networking.k8s.io/v1) are not installed"},
    [NEED_TA] = {"opentelemetry.io", "the TargetAllocator CRD (opentelemetry.io/v1alpha1) is not installed"},
};

typedef struct kind_info {
    const char *api_version, *kind, *plural;
    bool namespaced;
    int rank; /* apply order */
    need_t need;
} kind_info;

static const kind_info KINDS[] = {
    {"v1", "ServiceAccount", "serviceaccounts", true, 0, NEED_NONE},
    {"v1", "ConfigMap", "configmaps", true, 1, NEED_NONE},
    {"rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", false, 2, NEED_NONE},
    {"rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", false, 3, NEED_NONE},
    {"v1", "Service", "services", true, 4, NEED_NONE},
    {"apps/v1", "Deployment", "deployments", true, 5, NEED_NONE},
    {"apps/v1", "DaemonSet", "daemonsets", true, 5, NEED_NONE},
    {"apps/v1", "StatefulSet", "statefulsets", true, 5, NEED_NONE},
    {"policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", true, 6, NEED_NONE},
    {"autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers", true, 6, NEED_NONE},
    {"networking.k8s.io/v1", "Ingress", "ingresses", true, 7, NEED_NONE},
    {"networking.k8s.io/v1", "NetworkPolicy", "networkpolicies", true, 7, NEED_NONE},
    {"route.openshift.io/v1", "Route", "routes", true, 7, NEED_ROUTE},
    {"gateway.networking.k8s.io/v1", "HTTPRoute", "httproutes", true, 7, NEED_GATEWAY},
    {"opentelemetry.io/v1alpha1", "TargetAllocator", "targetallocators", true, 7, NEED_TA},
    {"monitoring.coreos.com/v1", "ServiceMonitor", "servicemonitors", true, 8, NEED_PROMETHEUS},
    {"monitoring.coreos.com/v1", "PodMonitor", "podmonitors", true, 8, NEED_PROMETHEUS},
};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

typedef struct run {
    kube_api_conn *conn;
    const reconcile_run_opts *o;
    reconcile_run_stats *st;
    bool have[NNEEDS]; /* which optional APIs this cluster serves */
    json_object *live;  /* "plural/ns/name" -> the listed object's JSON text */
    json_object *owned; /* "uid:UID" | "cr:NS/NAME" -> array of live keys */
    json_object *crs;   /* "NS/NAME" -> true, every collector listed */
    bool sweep_failed;  /* a gone collector's RBAC could not be deleted */
} run;

static void logf_(run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(run *r, const char *fmt, ...) {
    if (!r->o->log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->o->log, fmt, ap);
    va_end(ap);
    fputc('\n', r->o->log);
}

static const kind_info *kind_of(const char *api_version, const char *kind) {
    for (size_t i = 0; i < NKINDS; i++)
        if (api_version && kind && strcmp(KINDS[i].api_version, api_version) == 0 && strcmp(KINDS[i].kind, kind) == 0)
            return &KINDS[i];
    return NULL;
}

/* /api/v1[/namespaces/NS]/PLURAL or /apis/G/V[/namespaces/NS]/PLURAL. */
static void collection_path(char *out, size_t n, const kind_info *k, const char *ns) {
    const char *root = strchr(k->api_version, '/') ? "/apis/" : "/api/";
    if (k->namespaced && ns)
        snprintf(out, n, "%s%s/namespaces/%s/%s", root, k->api_version, ns, k->plural);
    else
        snprintf(out, n, "%s%s/%s", root, k->api_version, k->plural);
}

/* One request, counted; the status, or -1 with err. *body is always set
 * (NULL on -1) and parsed into *json when json is given and the body is a
 * JSON object. */
static int request(run *r, const char *method, const char *path, const char *ctype, const char *body, char **resp,
                   json_object **json, char *err, size_t errlen) {
    size_t len = 0;
    r->st->requests++;
    int code = kube_api_request(r->conn, method, path, NULL, ctype, body, body ? strlen(body) : 0, TIMEOUT_MS, resp,
                                &len, err, errlen);
    if (json) *json = code > 0 && *resp ? json_tokener_parse(*resp) : NULL;
    return code;
}

/* "CODE: message of the Status body" for a failed request. */
static void describe(char *err, size_t errlen, int code, const char *body) {
    json_object *j = body ? json_tokener_parse(body) : NULL;
    const char *msg = jstr(j, "message");
    snprintf(err, errlen, "%d %s", code, msg ? msg : "(no message)");
    json_object_put(j);
}

/* Calls each(r, item, ctx) for every item of a paged LIST of path (query:
 * extra "k=v&", may be empty), while its page is in memory: one page is
 * the most a LIST holds at a time. 0; or, with err, the HTTP status that
 * failed it, or -1 when no answer came. */
typedef void (*each_fn)(run *r, json_object *item, void *ctx);
static int list_all(run *r, const char *path, const char *query, each_fn each, void *ctx, char *err, size_t errlen) {
    char *cont = NULL, url[2048];
    int ret = -1;
    for (;;) {
        char *body = NULL;
        json_object *j = NULL;
        snprintf(url, sizeof url, "%s?%slimit=" PAGE "%s%s", path, query, cont ? "&continue=" : "", cont ? cont : "");
        int code = request(r, "GET", url, NULL, NULL, &body, &j, err, errlen);
        free(cont);
        cont = NULL;
        if (code != 200 || !j) {
            if (code > 0) describe(err, errlen, code, body);
            if (code > 0 && code != 200) ret = code;
            free(body);
            json_object_put(j);
            goto out;
        }
        free(body);
        json_object *arr = jarr(j, "items");
        for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
            json_object *it = json_object_array_get_idx(arr, i);
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
    free(cont);
    return ret;
}

/* ---- comparison ------------------------------------------------------- */

static bool empty(json_object *v) {
    if (!v) return true;
    switch (json_object_get_type(v)) {
    case json_type_null: return true;
    case json_type_object: return json_object_object_length(v) == 0;
    case json_type_array: return json_object_array_length(v) == 0;
    default: return false;
    }
}

/* A Kubernetes resource quantity ("500m", "1Gi", "1e3", "0.5") as a
 * number; false when s is not one. The API server stores quantities in a
 * canonical form ("1024Mi" comes back as "1Gi", 0.5 as "500m"), so they
 * are compared by value, as the reference's semantic DeepEqual does. */
static bool quantity(const char *s, long double *out) {
    static const struct {
        const char *suffix;
        long double mult;
    } SUFFIXES[] = {{"Ki", 0x1p10L}, {"Mi", 0x1p20L}, {"Gi", 0x1p30L}, {"Ti", 0x1p40L}, {"Pi", 0x1p50L},
                    {"Ei", 0x1p60L}, {"n", -1e9L},    {"u", -1e6L},    {"m", -1e3L},    {"k", 1e3L},
                    {"M", 1e6L},     {"G", 1e9L},     {"T", 1e12L},    {"P", 1e15L},    {"E", 1e18L}};
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (!(*p >= '0' && *p <= '9') && !(*p == '.' && p[1] >= '0' && p[1] <= '9')) return false;
    char *end;
    long double v = strtold(s, &end);
    if (end == s) return false;
    if (*end) {
        size_t i;
        for (i = 0; i < sizeof SUFFIXES / sizeof *SUFFIXES; i++)
            if (strcmp(end, SUFFIXES[i].suffix) == 0) break;
        if (i == sizeof SUFFIXES / sizeof *SUFFIXES) return false;
        /* negative: divide, which rounds once ("500m" is exactly 0.5) */
        v = SUFFIXES[i].mult < 0 ? v / -SUFFIXES[i].mult : v * SUFFIXES[i].mult;
    }
    *out = v;
    return true;
}

static bool number_of(json_object *o, bool quantities, long double *out) {
    if (json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double)) {
        *out = json_object_get_double(o);
        return true;
    }
    return quantities && json_object_is_type(o, json_type_string) && quantity(json_object_get_string(o), out);
}

/* Every field of want has the same value in have (see the header). q:
 * below a "requests" or "limits" map, where strings are quantities (and
 * only there: "1" and "1.0" are different env values). */
static bool subset_q(json_object *want, json_object *have, bool q) {
    if (empty(want)) return true;
    json_type t = json_object_get_type(want);
    long double a, b;
    if (t == json_type_string && json_object_is_type(have, json_type_string) &&
        strcmp(json_object_get_string(want), json_object_get_string(have)) == 0)
        return true;
    if ((t == json_type_int || t == json_type_double || t == json_type_string) && number_of(want, q, &a) &&
        number_of(have, q, &b))
        return a == b || fabsl(a - b) <= 1e-12L * fmaxl(fabsl(a), fabsl(b)); /* "0.1m" against "100u" */
    if (!have || json_object_get_type(have) != t) return false;
    switch (t) {
    case json_type_object: {
        json_object_object_foreach(want, k, v) {
            json_object *h = NULL;
            json_object_object_get_ex(have, k, &h);
            if (!subset_q(v, h, q || strcmp(k, "requests") == 0 || strcmp(k, "limits") == 0)) return false;
        }
        return true;
    }
    case json_type_array: {
        size_t n = json_object_array_length(want);
        if (json_object_array_length(have) != n) return false;
        for (size_t i = 0; i < n; i++)
            if (!subset_q(json_object_array_get_idx(want, i), json_object_array_get_idx(have, i), q)) return false;
        return true;
    }
    case json_type_string: return strcmp(json_object_get_string(want), json_object_get_string(have)) == 0;
    case json_type_boolean: return json_object_get_boolean(want) == json_object_get_boolean(have);
    default: return false;
    }
}

/* json-c's writer, not base/jtext: the digest of this text is stored on
 * live objects, so it must not change between versions. */
static const char *json_text(json_object *o) {
    const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
    if (!s) base_oom();
    return s;
}

/* The first 16 hex digits of sha256 of the object's JSON text (rendered
 * objects have a fixed key order, so equal objects give equal text). */
static void digest(json_object *o, char out[17]) {
    const char *s = json_text(o);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL) != 1) base_oom(); /* its only failure */
    for (int i = 0; i < 8; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static bool subset(json_object *want, json_object *have) {
    return subset_q(want, have, false);
}

/* ---- listing ---------------------------------------------------------- */

static void index_add(run *r, const char *owner_key, const char *live_key) {
    json_object *arr = NULL;
    if (!json_object_object_get_ex(r->owned, owner_key, &arr)) {
        arr = jnew_arr();
        jset(r->owned, owner_key, arr);
    }
    jpush(arr, jnew_str(live_key));
}

/* The listed object under key, parsed (the caller puts it), or NULL. */
static json_object *live_get(run *r, const char *key) {
    json_object *text = NULL;
    if (!json_object_object_get_ex(r->live, key, &text)) return NULL;
    return json_tokener_parse(json_object_get_string(text));
}

/* Keeps one listed object of kind k (see list_owned). */
static void keep_owned(run *r, json_object *o, void *ctx) {
    const kind_info *k = ctx;
    json_object *m = jmap(o, "metadata");
    const char *name = jstr(m, "name"), *ns = jstr(m, "namespace");
    char key[768];
    if (!name) return;
    snprintf(key, sizeof key, "%s/%s/%s", k->plural, ns ? ns : "", name);
    /* Kept as compact text, parsed again when compared: a json-c tree
     * costs several times its text (every map is a hash table), and a
     * pass holds every object it owns. */
    jset(r->live, key, jnew_str(json_text(o)));
    if (k->namespaced) {
        json_object *refs = jarr(m, "ownerReferences");
        for (size_t x = 0; refs && x < json_object_array_length(refs); x++) {
            json_object *ref = json_object_array_get_idx(refs, x);
            const char *uid = jstr(ref, "uid"), *kind = jstr(ref, "kind");
            if (jbool(ref, "controller") && uid && kind && strcmp(kind, "OpenTelemetryCollector") == 0) {
                char ok[300];
                snprintf(ok, sizeof ok, "uid:%s", uid);
                index_add(r, ok, key);
            }
        }
    } else {
        const char *cr = jstr(jmap(m, "annotations"), RECONCILE_OWNER_ANNOTATION);
        if (cr) {
            char ok[600];
            snprintf(ok, sizeof ok, "cr:%s", cr);
            index_add(r, ok, key);
        }
    }
}

static int list_owned(run *r, char *err, size_t errlen) {
    for (size_t i = 0; i < NKINDS; i++) {
        const kind_info *k = &KINDS[i];
        char path[512], why[512] = "";
        if (!r->have[k->need]) continue;
        collection_path(path, sizeof path, k, r->o->ns);
        int code = list_all(r, path, "labelSelector=" MANAGED_SELECTOR "&", keep_owned, (void *)k, why, sizeof why);
        if (code == 404 && k->need != NEED_NONE) { /* the group is there, this kind or version is not */
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

static int discover(run *r, char *err, size_t errlen) {
    char *body = NULL;
    json_object *j = NULL;
    int code = request(r, "GET", "/apis", NULL, NULL, &body, &j, err, errlen);
    if (code != 200 || !j) {
        if (code > 0) describe(err, errlen, code, body);
        free(body);
        json_object_put(j);
        return -1;
    }
    free(body);
    json_object *groups = jarr(j, "groups");
    for (size_t i = 0; groups && i < json_object_array_length(groups); i++) {
        const char *g = jstr(json_object_array_get_idx(groups, i), "name");
        for (int n = NEED_NONE + 1; g && n < NNEEDS; n++)
            if (strcmp(g, NEEDS[n].group) == 0) r->have[n] = true;
    }
    json_object_put(j);
    return 0;
}

/* ---- one collector ---------------------------------------------------- */

typedef struct collector {
    const char *ns, *name, *uid;
    json_object *cr;
    char error[1024];  /* first failure, for the condition */
    json_object *kept; /* listed keys that are desired: not pruned */
    json_object *workload_live; /* owned */
    json_object *workload_desired;
    json_object *workload_applied; /* owned: the apply's answer */
} collector;

static void fail(collector *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(collector *c, const char *fmt, ...) {
    if (c->error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
}

typedef struct ranked {
    json_object *obj;
    int rank;
    size_t pos; /* qsort is not stable: build order breaks ties */
} ranked;

static int by_rank(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Why the live workload cannot take the desired one by an apply: a field
 * the API server refuses to change (reconcile.md 5.2). NULL when it can.
 * *orphan: whether its pods may outlive it, i.e. the recreated object's
 * selector adopts them (a StatefulSet whose serviceName or claim
 * templates changed); a changed selector cannot adopt, so the old pods go
 * with the old object. */
static const char *immutable_change(json_object *desired, json_object *live, bool *orphan) {
    json_object *ds = jmap(desired, "spec"), *ls = jmap(live, "spec");
    const char *kind = jstr(desired, "kind");
    *orphan = false;
    if (!live || !ls) return NULL;
    if (!json_object_equal(jmap(ds, "selector"), jmap(ls, "selector")))
        return "spec.selector changed";
    if (!kind || strcmp(kind, "StatefulSet") != 0) return NULL;
    *orphan = true;
    const char *dn = jstr(ds, "serviceName"), *ln = jstr(ls, "serviceName");
    if (strcmp(dn ? dn : "", ln ? ln : "") != 0) return "spec.serviceName changed";
    json_object *dv = jarr(ds, "volumeClaimTemplates"), *lv = jarr(ls, "volumeClaimTemplates");
    size_t n = dv ? json_object_array_length(dv) : 0;
    if (n != (lv ? json_object_array_length(lv) : 0)) return "spec.volumeClaimTemplates changed";
    for (size_t i = 0; i < n; i++) {
        json_object *d = json_object_array_get_idx(dv, i), *l = json_object_array_get_idx(lv, i);
        json_object *dm = jmap(d, "metadata"), *lm = jmap(l, "metadata");
        const char *a = jstr(dm, "name"), *b = jstr(lm, "name");
        if (strcmp(a ? a : "", b ? b : "") != 0 || !subset(jmap(dm, "labels"), jmap(lm, "labels")) ||
            !subset(jmap(dm, "annotations"), jmap(lm, "annotations")) ||
            !subset(jmap(d, "spec"), jmap(l, "spec")))
            return "spec.volumeClaimTemplates changed";
    }
    return NULL;
}

#define RECREATE_POLLS 40 /* 250 ms apart: 10 s for the old object to go */

/* Deletes the object at path so that it can be created again with fields
 * the API server will not change in place, and waits until it is gone
 * (an Orphan delete holds the object until the garbage collector has
 * released its pods). 0, or -1 with err. */
static int delete_for_recreate(run *r, const char *path, bool orphan, char *err, size_t errlen) {
    char url[1100], *body = NULL;
    snprintf(url, sizeof url, "%s?propagationPolicy=%s", path, orphan ? "Orphan" : "Background");
    int code = request(r, "DELETE", url, NULL, NULL, &body, NULL, err, errlen);
    if (code != 200 && code != 202 && code != 404) {
        if (code > 0) describe(err, errlen, code, body);
        free(body);
        return -1;
    }
    free(body);
    for (int i = 0; i < RECREATE_POLLS; i++) {
        body = NULL;
        code = request(r, "GET", path, NULL, NULL, &body, NULL, err, errlen);
        free(body);
        if (code == 404) return 0;
        if (code != 200) {
            if (code > 0) snprintf(err, errlen, "%d while waiting for the old object to go", code);
            return -1;
        }
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "the old object is still being deleted; it is created again on the next run");
    return -1;
}

static bool immutable_text(const char *s) {
    return s && (strstr(s, "field is immutable") || strstr(s, "Forbidden: updates to statefulset spec"));
}

/* True for the API server's answer to a change of immutable fields and
 * nothing else (StatefulSets word it differently from everything else): a
 * 422 that also names an invalid value would refuse the new object too. */
static bool immutable_refusal(int code, const char *body) {
    if (code != 422 || !body) return false;
    json_object *j = json_tokener_parse(body);
    json_object *causes = jarr(jmap(j, "details"), "causes");
    bool ok = causes ? json_object_array_length(causes) > 0 : immutable_text(jstr(j, "message"));
    for (size_t i = 0; causes && i < json_object_array_length(causes); i++)
        if (!immutable_text(jstr(json_object_array_get_idx(causes, i), "message"))) ok = false;
    json_object_put(j);
    return ok;
}

/* Asks the API server, without writing, whether obj would be accepted as
 * a new object (validation, admission webhooks and policies all run on a
 * dry-run create): only then is the old one deleted, so that a refusal
 * does not leave the collector with no workload. The object exists, so
 * the answer to watch for is 409 AlreadyExists, which the storage gives
 * after everything else passed. 0, or -1 with err. */
static int would_create(run *r, const kind_info *k, const char *ns, json_object *obj, char *err, size_t errlen) {
    char url[1100], *body = NULL;
    collection_path(url, sizeof url, k, ns);
    size_t l = strlen(url);
    snprintf(url + l, sizeof url - l, "?dryRun=All&fieldManager=" RECONCILE_FIELD_MANAGER);
    int code = request(r, "POST", url, "application/json", json_text(obj), &body, NULL, err, errlen);
    if (code == 409 || code == 200 || code == 201) {
        free(body);
        return 0;
    }
    if (code > 0) {
        char why[400];
        describe(why, sizeof why, code, body);
        snprintf(err, errlen, "the new object would be refused, so the old one stays: %s", why);
    }
    free(body);
    return -1;
}

static void apply_one(run *r, collector *c, json_object *obj) {
    const char *api = jstr(obj, "apiVersion"), *kind = jstr(obj, "kind");
    const kind_info *k = kind_of(api, kind);
    json_object *m = jmap(obj, "metadata");
    const char *name = jstr(m, "name");
    char key[768], path[1024], url[1100], err[512] = "", hash[17];
    if (!k || !r->have[k->need]) {
        const char *why = k ? NEEDS[k->need].why : "this kind is not applied by otel-reconcile run";
        fail(c, "%s %s: %s", kind ? kind : "?", name ? name : "?", why);
        logf_(r, "error: %s/%s: %s %s not applied: %s", c->ns, c->name, kind ? kind : "?", name ? name : "?", why);
        return;
    }
    json_object *ann = jmap(m, "annotations");
    if (!k->namespaced) {
        char owner[600];
        snprintf(owner, sizeof owner, "%s/%s", c->ns, c->name);
        if (!ann) ann = jset_obj(m, "annotations");
        jset_str(ann, RECONCILE_OWNER_ANNOTATION, owner);
    }
    digest(obj, hash);
    if (!ann) ann = jset_obj(m, "annotations");
    jset_str(ann, RECONCILE_HASH_ANNOTATION, hash);

    snprintf(key, sizeof key, "%s/%s/%s", k->plural, k->namespaced ? c->ns : "", name);
    json_object *live = live_get(r, key);
    if (live) jset(c->kept, key, jnew_bool(1));
    bool workload = k->rank == 5 && !c->workload_desired;
    if (workload) {
        c->workload_desired = obj;
        c->workload_live = json_object_get(live);
    }
    if (live && subset(obj, live)) {
        r->st->unchanged++;
        json_object_put(live);
        return;
    }
    bool orphan = false;
    const char *immutable = k->rank == 5 ? immutable_change(obj, live, &orphan) : NULL;
    json_object_put(live); /* immutable points into static strings only */
    r->st->applied++;
    if (r->o->dry_run) {
        logf_(r, "would %s %s %s%s%s%s%s", immutable ? "recreate" : "apply", kind, k->namespaced ? c->ns : "",
              k->namespaced ? "/" : "", name, immutable ? ": " : "", immutable ? immutable : "");
        return;
    }
    collection_path(path, sizeof path, k, k->namespaced ? c->ns : NULL);
    size_t pl = strlen(path);
    snprintf(path + pl, sizeof path - pl, "/%s", name);
    snprintf(url, sizeof url, "%s?fieldManager=" RECONCILE_FIELD_MANAGER "&force=true", path);
    char *body = NULL;
    int code = 0;
    bool recreated = false;
    /* Twice at most: an immutable change of a workload we did not see
     * coming (the server's 422) gets one delete and one more apply. */
    for (int attempt = 0; attempt < 2; attempt++) {
        if (immutable) {
            free(body);
            body = NULL;
            logf_(r, "recreating %s %s/%s: %s (%s)", kind, c->ns, name, immutable,
                  orphan ? "Orphan delete: its pods wait for the new one" : "Background delete: its pods go with it");
            if (would_create(r, k, c->ns, obj, err, sizeof err) != 0 ||
                delete_for_recreate(r, path, orphan, err, sizeof err) != 0) {
                fail(c, "recreating %s %s (%s): %s", kind, name, immutable, err);
                logf_(r, "error: %s/%s: recreating %s %s: %s", c->ns, c->name, kind, name, err);
                return;
            }
            r->st->recreated++;
            recreated = true;
        }
        code = request(r, "PATCH", url, "application/apply-patch+yaml", json_text(obj), &body, NULL, err, sizeof err);
        if (attempt == 0 && !immutable && k->rank == 5 && immutable_refusal(code, body)) {
            immutable = "the API server refused an immutable change";
            orphan = strcmp(kind, "StatefulSet") == 0;
            continue;
        }
        break;
    }
    if (code == 200 || code == 201) {
        logf_(r, "applied %s %s%s%s", kind, k->namespaced ? c->ns : "", k->namespaced ? "/" : "", name);
        /* The answer is the object as it is now: its status is fresher
         * than the listed one, except for one just created again, whose
         * status is empty while the pods it adopts are still running. */
        if (workload && !recreated) c->workload_applied = body ? json_tokener_parse(body) : NULL;
    } else {
        if (code > 0) describe(err, sizeof err, code, body);
        fail(c, "applying %s %s: %s", kind, name, err);
        logf_(r, "error: %s/%s: applying %s %s: %s", c->ns, c->name, kind, name, err);
    }
    free(body);
}

/* Deletes the listed object under key ("plural/ns/name": list items carry
 * no kind, so the plural names it). A failure fails c (NULL: the sweep). */
static void remove_live(run *r, collector *c, const char *key) {
    char path[1024], err[512] = "", *body = NULL, nsbuf[256];
    const kind_info *k = NULL;
    size_t plen = strcspn(key, "/");
    for (size_t i = 0; i < NKINDS; i++)
        if (strlen(KINDS[i].plural) == plen && strncmp(key, KINDS[i].plural, plen) == 0) k = &KINDS[i];
    /* Neither names nor namespaces contain '/'. */
    const char *nsp = key[plen] ? key + plen + 1 : key + plen, *name = strchr(nsp, '/');
    if (!k || !name || (size_t)(name - nsp) >= sizeof nsbuf) return;
    memcpy(nsbuf, nsp, (size_t)(name - nsp));
    nsbuf[name - nsp] = '\0';
    name++;
    const char *ns = nsbuf[0] ? nsbuf : NULL;
    r->st->pruned++;
    if (r->o->dry_run) {
        logf_(r, "would prune %s %s%s%s", k->kind, ns ? ns : "", ns ? "/" : "", name);
        return;
    }
    collection_path(path, sizeof path, k, k->namespaced ? ns : NULL);
    size_t pl = strlen(path);
    snprintf(path + pl, sizeof path - pl, "/%s", name);
    int code = request(r, "DELETE", path, NULL, NULL, &body, NULL, err, sizeof err);
    bool ok = code == 200 || code == 202 || code == 404;
    if (ok) {
        logf_(r, "pruned %s %s%s%s", k->kind, ns ? ns : "", ns ? "/" : "", name);
    } else {
        if (code > 0) describe(err, sizeof err, code, body);
        if (c) fail(c, "pruning %s %s: %s", k->kind, name, err);
        else r->sweep_failed = true;
        logf_(r, "error: pruning %s %s%s%s: %s", k->kind, ns ? ns : "", ns ? "/" : "", name, err);
        r->st->pruned--;
    }
    free(body);
}

typedef struct aged {
    const char *key;
    char created[40];
} aged;

static int newest_first(const void *a, const void *b) {
    const aged *x = a, *y = b;
    int d = strcmp(y->created, x->created);
    return d ? d : strcmp(x->key, y->key);
}

/* Owned objects that are not desired go, except the newest
 * max(configVersions, 1) older ConfigMaps (kept for rollbacks, as the
 * reference keeps them; see docs/compat.md for the count). */
static void prune(run *r, collector *c) {
    json_object *keys = NULL, *cluster = NULL;
    char ok[700];
    snprintf(ok, sizeof ok, "uid:%s", c->uid);
    json_object_object_get_ex(r->owned, ok, &keys);
    snprintf(ok, sizeof ok, "cr:%s/%s", c->ns, c->name);
    json_object_object_get_ex(r->owned, ok, &cluster);
    int64_t versions = 3;
    jint(jmap(c->cr, "spec"), "configVersions", &versions);
    if (versions < 1) versions = 1;
    size_t n = keys ? json_object_array_length(keys) : 0, ncm = 0;
    aged *cms = xcalloc(n + 1, sizeof *cms);
    json_object *lists[2] = {keys, cluster};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; lists[l] && i < json_object_array_length(lists[l]); i++) {
            const char *key = json_object_get_string(json_object_array_get_idx(lists[l], i));
            if (json_object_object_get_ex(c->kept, key, NULL)) continue;
            if (strncmp(key, "configmaps/", 11) == 0) {
                json_object *live = live_get(r, key);
                const char *ts = jstr(jmap(live, "metadata"), "creationTimestamp");
                cms[ncm].key = key;
                snprintf(cms[ncm++].created, sizeof cms->created, "%s", ts ? ts : "");
                json_object_put(live);
                continue;
            }
            remove_live(r, c, key);
        }
    qsort(cms, ncm, sizeof *cms, newest_first);
    for (size_t i = (size_t)versions; i < ncm; i++) remove_live(r, c, cms[i].key);
    free(cms);
}

/* "k=v,k=v" of a label map, keys sorted (the reference's labels.String). */
static char *selector_string(json_object *labels) {
    size_t n;
    jkv *m = jsorted_members(labels, &n);
    sbuf s = SBUF_INIT;
    for (size_t i = 0; i < n; i++)
        sbuf_printf(&s, "%s%s=%s", i ? "," : "", m[i].key, json_object_get_string(m[i].val));
    free(m);
    return sbuf_take(&s, NULL);
}

static void now_rfc3339(char out[32]) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Builds the status we want (reconcile.md 5.7), compares it with the live
 * one and writes it with a merge patch when it differs. */
static void write_status(run *r, collector *c, const reconcile_render_result *rr, bool rendered, const char *mode) {
    json_object *live = jmap(c->cr, "status");
    json_object *st = jnew_obj();
    const char *lv = jstr(live, "version"),
               *strategy = jstr(jmap(c->cr, "spec"), "upgradeStrategy");
    bool pinned = strategy && strcmp(strategy, "none") == 0 && lv && *lv; /* not upgraded: not bumped */
    jset_str(st, "version", pinned ? lv : reconcile_status_version(lv, COLLECTOR_VERSION));
    if (rendered && !c->error[0]) {
        json_object *scale = jset_obj(st, "scale");
        if (mode && strcmp(mode, "sidecar") == 0) {
            jset_int(scale, "replicas", 0);
            jset_str(scale, "selector", "");
        } else if (c->workload_desired) {
            char *sel = selector_string(jmap(jmap(c->workload_desired, "metadata"), "labels"));
            json_object *ls =
                jmap(c->workload_applied ? c->workload_applied : c->workload_live, "status");
            const char *wk = jstr(c->workload_desired, "kind");
            int64_t want = 0, ready = 0;
            if (wk && strcmp(wk, "DaemonSet") == 0) {
                jint(ls, "desiredNumberScheduled", &want);
                jint(ls, "numberReady", &ready);
            } else {
                jint(ls, "replicas", &want);
                jint(ls, "readyReplicas", &ready);
            }
            char sr[64];
            snprintf(sr, sizeof sr, "%lld/%lld", (long long)ready, (long long)want);
            jset_int(scale, "replicas", want);
            jset_str(scale, "selector", sel ? sel : "");
            jset_str(scale, "statusReplicas", sr);
            free(sel);
            /* The desired image, not the listed one: the workload either
             * matched it or was just applied with it, and reading the list
             * from before the apply would cost a second status write. */
            json_object *ctrs = jarr(
                jmap(jmap(jmap(c->workload_desired, "spec"), "template"), "spec"),
                "containers");
            const char *image = ctrs ? jstr(json_object_array_get_idx(ctrs, 0), "image") : NULL;
            if (image) jset_str(st, "image", image);
        }
    }
    json_object *conds = jset_arr(st, "conditions");
    json_object *cond = jpush(conds, jnew_obj());
    jset_str(cond, "type", "Ready");
    jset_str(cond, "status", c->error[0] ? "False" : "True");
    jset_str(cond, "reason", c->error[0] ? "ReconcileError" : "Reconciled");
    /* Render warnings (an autoscaler without maxReplicas, spec 7.10, ...)
     * ride on the message: the reference has no other place for them, and
     * a log line alone is what spec 7.20 complains about. */
    char msg[2048] = "Successfully reconciled";
    for (size_t i = 0; !c->error[0] && rr && i < rr->nwarnings; i++) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof msg - l, "%s%s", i ? "; " : " with warnings: ", rr->warnings[i]);
    }
    jset_str(cond, "message", c->error[0] ? c->error : msg);
    int64_t gen;
    if (jint(jmap(c->cr, "metadata"), "generation", &gen))
        jset_int(st, "observedGeneration", gen);
    if (subset(st, live)) goto out;

    /* lastTransitionTime moves only when the condition's status does. */
    json_object *lconds = jarr(live, "conditions");
    const char *ltt = NULL;
    for (size_t i = 0; lconds && i < json_object_array_length(lconds); i++) {
        json_object *lc = json_object_array_get_idx(lconds, i);
        const char *t = jstr(lc, "type"), *s = jstr(lc, "status");
        if (t && s && strcmp(t, "Ready") == 0 && strcmp(s, jstr(cond, "status")) == 0)
            ltt = jstr(lc, "lastTransitionTime");
    }
    char now[32];
    now_rfc3339(now);
    jset_str(cond, "lastTransitionTime", ltt ? ltt : now);
    r->st->statuses++;
    if (r->o->dry_run) {
        logf_(r, "would write status %s/%s", c->ns, c->name);
        goto out;
    }
    json_object *patch = jnew_obj();
    jset(patch, "status", json_object_get(st));
    char path[1024], err[512] = "", *body = NULL;
    snprintf(path, sizeof path, COLLECTORS "/namespaces/%s/opentelemetrycollectors/%s/status", c->ns, c->name);
    int code = request(r, "PATCH", path, "application/merge-patch+json", json_text(patch), &body, NULL, err,
                       sizeof err);
    json_object_put(patch);
    if (code != 200) {
        if (code > 0) describe(err, sizeof err, code, body);
        logf_(r, "error: %s/%s: writing the status: %s", c->ns, c->name, err);
        if (!c->error[0]) fail(c, "writing the status: %s", err);
    }
    free(body);
out:
    json_object_put(st);
}

/* A collector labelled opentelemetry.io/target-allocator: NAME uses that
 * existing allocator; the reference fails the reconcile when it is not
 * there, and so do we (in the Ready condition, not only a log). */
static void check_target_allocator(run *r, collector *c) {
    json_object *spec = jmap(c->cr, "spec");
    const char *ta = jstr(jmap(jmap(c->cr, "metadata"), "labels"),
                                       "opentelemetry.io/target-allocator");
    if (!ta || !*ta || !jbool(jmap(spec, "targetAllocator"), "enabled")) return;
    if (!r->have[NEED_TA]) {
        fail(c, "TargetAllocator %s: %s", ta, NEEDS[NEED_TA].why);
        return;
    }
    char path[1024], err[512] = "", *body = NULL;
    snprintf(path, sizeof path, "/apis/opentelemetry.io/v1alpha1/namespaces/%s/targetallocators/%s", c->ns, ta);
    int code = request(r, "GET", path, NULL, NULL, &body, NULL, err, sizeof err);
    if (code == 404)
        snprintf(err, sizeof err, "not found (the label opentelemetry.io/target-allocator names it)");
    else if (code > 0 && code != 200)
        describe(err, sizeof err, code, body);
    free(body);
    if (code != 200) {
        fail(c, "TargetAllocator %s: %s", ta, err);
        logf_(r, "error: %s/%s: TargetAllocator %s: %s", c->ns, c->name, ta, err);
    }
}

/* Returns true when the collector reconciled. */
static bool reconcile_one(run *r, json_object *cr, const reconcile_options *opt) {
    json_object *m = jmap(cr, "metadata"), *spec = jmap(cr, "spec");
    collector c = {.cr = cr,
                   .ns = jstr(m, "namespace"),
                   .name = jstr(m, "name"),
                   .uid = jstr(m, "uid")};
    if (!c.ns || !c.name || !c.uid) return false;
    const char *state = jstr(spec, "managementState");
    if (jstr(m, "deletionTimestamp")) return true;
    if (state && strcmp(state, "unmanaged") == 0) {
        r->st->unmanaged++;
        return true;
    }
    c.kept = jnew_obj();
    reconcile_render_result rr = {0};
    char err[512] = "";
    bool rendered = reconcile_render(cr, c.ns, opt, &rr, err, sizeof err) == 0;
    if (!rendered) {
        fail(&c, "%s", err);
        logf_(r, "error: %s/%s: %s", c.ns, c.name, err);
    } else {
        for (size_t i = 0; i < rr.nwarnings; i++) logf_(r, "warning: %s/%s: %s", c.ns, c.name, rr.warnings[i]);
        /* A missing allocator: nothing is applied (the reference fails
         * before building), so no ConfigMap points at an allocator that
         * is not there. */
        check_target_allocator(r, &c);
        ranked *order = c.error[0] ? NULL : xcalloc(rr.nobjs + 1, sizeof *order);
        if (!c.error[0]) {
            for (size_t i = 0; i < rr.nobjs; i++) {
                const kind_info *k =
                    kind_of(jstr(rr.objs[i], "apiVersion"), jstr(rr.objs[i], "kind"));
                order[i] = (ranked){rr.objs[i], k ? k->rank : 99, i};
            }
            qsort(order, rr.nobjs, sizeof *order, by_rank);
            for (size_t i = 0; i < rr.nobjs; i++) apply_one(r, &c, order[i].obj);
            free(order);
        }
        if (!c.error[0]) prune(r, &c);
    }
    write_status(r, &c, &rr, rendered, jstr(spec, "mode"));
    bool ok = !c.error[0];
    json_object_put(c.workload_applied);
    json_object_put(c.workload_live);
    reconcile_render_result_free(&rr);
    json_object_put(c.kept);
    return ok;
}

/* ClusterRoles and bindings whose collector is not listed any more. */
static void sweep_cluster(run *r) {
    json_object_object_foreach(r->owned, okey, keys) {
        if (strncmp(okey, "cr:", 3) != 0 || json_object_object_get_ex(r->crs, okey + 3, NULL)) continue;
        if (r->o->ns) { /* only what belongs to the namespace this run covers */
            size_t l = strlen(r->o->ns);
            if (strncmp(okey + 3, r->o->ns, l) != 0 || okey[3 + l] != '/') continue;
        }
        for (size_t i = 0; i < json_object_array_length(keys); i++)
            remove_live(r, NULL, json_object_get_string(json_object_array_get_idx(keys, i)));
    }
}

static void keep_collector(run *r, json_object *cr, void *ctx) {
    (void)r;
    jpush(ctx, json_object_get(cr));
}

int reconcile_run(kube_api *api, const reconcile_run_opts *o, reconcile_run_stats *st) {
    run r = {.o = o, .st = st, .have = {[NEED_NONE] = true}};
    char err[1024] = "", path[512];
    int ret = 2;
    json_object *crs = jnew_arr();
    memset(st, 0, sizeof *st);
    r.live = jnew_obj();
    r.owned = jnew_obj();
    r.crs = jnew_obj();
    if (!(r.conn = kube_api_conn_new(api, NULL))) {
        logf_(&r, "error: cannot set up a connection to the API server");
        goto out;
    }
    if (discover(&r, err, sizeof err) != 0) {
        logf_(&r, "error: discovery (GET /apis): %s", err);
        goto out;
    }
    if (o->ns)
        snprintf(path, sizeof path, COLLECTORS "/namespaces/%s/opentelemetrycollectors", o->ns);
    else
        snprintf(path, sizeof path, COLLECTORS "/opentelemetrycollectors");
    if (list_all(&r, path, "", keep_collector, crs, err, sizeof err) != 0) {
        logf_(&r, "error: listing collectors: %s", err);
        goto out;
    }
    err[0] = 0;
    if (list_owned(&r, err, sizeof err) != 0) {
        logf_(&r, "error: %s", err);
        goto out;
    }
    reconcile_options opt;
    reconcile_options_default(&opt);
    opt.prometheus_crds = r.have[NEED_PROMETHEUS];
    opt.routes = r.have[NEED_ROUTE];
    opt.gateway = r.have[NEED_GATEWAY];
    st->collectors = json_object_array_length(crs);
    for (size_t i = 0; i < st->collectors; i++) {
        json_object *cr = json_object_array_get_idx(crs, i), *m = jmap(cr, "metadata");
        char key[600];
        /* Being deleted (someone else's finalizer holds it): treated as gone,
         * so its ClusterRoles go now rather than after the finalizer. */
        if (jstr(m, "deletionTimestamp")) continue;
        snprintf(key, sizeof key, "%s/%s", jstr(m, "namespace") ? jstr(m, "namespace") : "",
                 jstr(m, "name") ? jstr(m, "name") : "");
        jset(r.crs, key, jnew_bool(1));
    }
    for (size_t i = 0; i < st->collectors; i++)
        if (!reconcile_one(&r, json_object_array_get_idx(crs, i), &opt)) st->failed++;
    sweep_cluster(&r);
    ret = st->failed || r.sweep_failed ? 1 : 0;
out:
    json_object_put(crs);
    json_object_put(r.live);
    json_object_put(r.owned);
    json_object_put(r.crs);
    kube_api_conn_free(r.conn);
    return ret;
}
