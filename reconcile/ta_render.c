/* reconcile/ta_render.c - one TargetAllocator's objects (targetallocator.md
 * 4 to 15); see targetallocator.h. The config text is ta_config.c's.
 *
 * The TargetAllocator CRD's schema defaults (1.2, 1.3) are applied in
 * memory, as the API server applies them to what it stores: only inside
 * objects that are there, so a `spec: null` allocator gets none (its
 * filter_strategy is ""). The reference's TargetAllocator webhook never
 * runs (1.4), so none of its defaults are applied.
 *
 * Trade-offs (each in docs/compat.md):
 * - A PDB the allocation strategy cannot have (least-weighted) is left out
 *   with a warning; the reference fails the whole build with "isn't not
 *   compatible" (21 item 8).
 * - The ServiceMonitor is rendered only when the Prometheus operator's CRDs
 *   exist, like the collector's (21 item 12).
 * - The version label is the reference's (from spec.image, "latest" by
 *   default), because it is part of the labels selectors and fixtures see.
 * - No proxy env: as for the collector (workload.c), render runs away from
 *   the cluster. */
#include "reconcile/targetallocator.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"
#include "base/versions.h"
#include "collector/defaults.h"
#include "collector/naming.h"
#include "reconcile/context.h"
#include "reconcile/hash.h"
#include "reconcile/ta_config.h"

#include <openssl/sha.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"
#define COMPONENT "opentelemetry-targetallocator"
#define CONFIG_KEY "targetallocator.yaml"

typedef struct ta_ctx {
    const reconcile_options *opt;
    json_object *ta, *meta, *spec; /* our defaulted copy */
    const char *name, *ns;
    json_object *collector; /* defaulted copy, or NULL */
    char *svc;              /* N("%s-targetallocator"): most objects' name */
    char hash[65];
    reconcile_render_result *out;
    char *err;
    size_t errlen;
} ta_ctx;

static void emit(ta_ctx *c, json_object *o) {
    reconcile_render_result *r = c->out;
    r->objs = xrealloc(r->objs, (r->nobjs + 1) * sizeof(*r->objs));
    r->objs[r->nobjs++] = o;
}

static void warn(ta_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(ta_ctx *c, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    c->out->warnings = xrealloc(c->out->warnings, (c->out->nwarnings + 1) * sizeof(char *));
    c->out->warnings[c->out->nwarnings++] = xvasprintf(fmt, ap);
    va_end(ap);
}

static char *ta_name(ta_ctx *c, const char *fmt) {
    return collector_name(fmt, c->name, NULL);
}

/* ---- schema defaults (1.2, 1.3) --------------------------------------- */

static void dflt_str(json_object *o, const char *k, const char *v) {
    if (!jget(o, k)) jset_str(o, k, v);
}

static void schema_defaults(json_object *spec) {
    json_object *v;
    if (!spec) return;
    dflt_str(spec, "managementState", "managed");
    if (!jget(spec, "replicas")) jset_int(spec, "replicas", 1);
    dflt_str(spec, "allocationStrategy", "consistent-hashing");
    dflt_str(spec, "filterStrategy", "relabel-config");
    dflt_str(spec, "collectorNotReadyGracePeriod", "30s");
    dflt_str(spec, "ipFamilyPolicy", "SingleStack");
    if ((v = jarr(spec, "ports")))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *p = json_object_array_get_idx(v, i);
            if (json_object_is_type(p, json_type_object)) dflt_str(p, "protocol", "TCP");
        }
    if ((v = jmap(spec, "prometheusCR"))) {
        static const char *const nss[] = {"serviceMonitorNamespaceSelector", "podMonitorNamespaceSelector",
                                          "scrapeConfigNamespaceSelector", "probeNamespaceSelector"};
        dflt_str(v, "scrapeInterval", "30s");
        dflt_str(v, "evaluationInterval", "30s");
        for (size_t i = 0; i < 4; i++)
            if (!jget(v, nss[i])) jset_obj(v, nss[i]);
    }
    if ((v = jmap(spec, "mtls"))) {
        if (!jget(v, "useCertManager")) jset_bool(v, "useCertManager", 1);
        json_object *cm = jmap(jmap(jmap(v, "tls"), "certificateAuthorityCertificate"), "configMap");
        if (cm) dflt_str(cm, "key", "ca.crt");
    }
}

/* ---- metadata (5) ----------------------------------------------------- */

static json_object *base_selector(ta_ctx *c) {
    const char *vals[2] = {c->ns, c->name};
    char *instance = collector_truncate("%s.%s", COLLECTOR_NAME_MAX, 2, vals);
    json_object *l = jnew_obj();
    jset_str(l, "app.kubernetes.io/component", COMPONENT);
    jset_str(l, "app.kubernetes.io/instance", instance);
    jset_str(l, "app.kubernetes.io/managed-by", "opentelemetry-operator");
    jset_str(l, "app.kubernetes.io/part-of", "opentelemetry");
    free(instance);
    return l;
}

/* The base set plus app.kubernetes.io/name (5.2). */
static json_object *ta_selector(ta_ctx *c) {
    json_object *l = base_selector(c), *s;
    const char *n = jstr(jmap(c->meta, "labels"), "app.kubernetes.io/name");
    jset_str(l, "app.kubernetes.io/name", n ? n : c->svc);
    s = jsorted(l);
    json_object_put(l);
    return s;
}

static json_object *match_labels(ta_ctx *c) {
    json_object *s = jnew_obj();
    jset(s, "matchLabels", ta_selector(c));
    return s;
}

/* Common labels (5.3); image: the string the version comes from. */
static json_object *labels_for(ta_ctx *c, const char *name, const char *image) {
    json_object *l = jnew_obj(), *crl = jmap(c->meta, "labels"), *sel, *sorted;
    char *version = reconcile_image_version(image);
    int has_name = 0;
    if (crl) {
        json_object_object_foreach(crl, k, v) {
            if (strcmp(k, "app.kubernetes.io/name") == 0) has_name = 1;
            jset(l, k, v ? jcopy(v) : jnew_str(""));
        }
    }
    sel = base_selector(c);
    json_object_object_foreach(sel, k, v) jset_copy(l, k, v);
    json_object_put(sel);
    jset_str(l, "app.kubernetes.io/version", version);
    if (!has_name) jset_str(l, "app.kubernetes.io/name", name);
    free(version);
    sorted = jsorted(l);
    json_object_put(l);
    return sorted;
}

static json_object *labels(ta_ctx *c, const char *name) {
    return labels_for(c, name, jstr(c->spec, "image"));
}

/* Resource annotations (5.4): the CR's minus the annotations filter. */
static json_object *annotations(ta_ctx *c) {
    json_object *a = jsorted(jmap(c->meta, "annotations"));
    if (!a) return jnew_obj();
    json_object_object_del(a, LAST_APPLIED);
    return a;
}

static json_object *object(ta_ctx *c, const char *api, const char *kind, const char *name, json_object *l,
                           json_object *a) {
    json_object *o = jnew_obj(), *m;
    const char *uid = jstr(c->meta, "uid");
    jset_str(o, "apiVersion", api);
    jset_str(o, "kind", kind);
    m = jset_obj(o, "metadata");
    jset_str(m, "name", name);
    jset_str(m, "namespace", c->ns);
    if (l && json_object_object_length(l)) jset(m, "labels", l);
    else json_object_put(l);
    if (a && json_object_object_length(a)) jset(m, "annotations", a);
    else json_object_put(a);
    if (uid && *uid) {
        json_object *r = jpush(jset_arr(m, "ownerReferences"), jnew_obj());
        jset_str(r, "apiVersion", "opentelemetry.io/v1alpha1");
        jset_str(r, "kind", "TargetAllocator");
        jset_str(r, "name", c->name);
        jset_str(r, "uid", uid);
        jset_bool(r, "controller", 1);
        jset_bool(r, "blockOwnerDeletion", 1);
    }
    return o;
}

static int mtls_enabled(ta_ctx *c) {
    return jbool(jmap(c->spec, "mtls"), "enabled");
}

static int mtls_user_provided(ta_ctx *c) {
    json_object *u = jget(jmap(c->spec, "mtls"), "useCertManager");
    return mtls_enabled(c) && json_object_is_type(u, json_type_boolean) && !json_object_get_boolean(u);
}

/* ---- objects ----------------------------------------------------------- */

static int build_configmap(ta_ctx *c) {
    reconcile_ta_config_in in = {.spec = c->spec, .collector = c->collector,
                                 .collector_ns = jstr(jmap(c->collector, "metadata"), "namespace"),
                                 .fallback_strategy = c->opt->ta_fallback_strategy};
    if (!in.collector_ns) in.collector_ns = c->ns;
    char *text = reconcile_ta_config_text(&in, c->err, c->errlen);
    unsigned char md[SHA256_DIGEST_LENGTH];
    if (!text) return -1;
    SHA256((const unsigned char *)text, strlen(text), md);
    for (int i = 0; i < SHA256_DIGEST_LENGTH; i++) snprintf(c->hash + 2 * i, 3, "%02x", md[i]);
    json_object *o = object(c, "v1", "ConfigMap", c->svc, labels(c, c->svc), annotations(c));
    jset_str(jset_obj(o, "data"), CONFIG_KEY, text);
    free(text);
    emit(c, o);
    return 0;
}

int reconcile_ta_mtls_check(json_object *mtls, int cert_manager, char *err, size_t errlen) {
    json_object *u = jget(mtls, "useCertManager"), *tls = jmap(mtls, "tls"), *ca;
    int user = json_object_is_type(u, json_type_boolean) && !json_object_get_boolean(u);
    if (!jbool(mtls, "enabled")) return 0;
    if (!user && !cert_manager)
        return err_printf(err, errlen,
                          "mTLS is enabled with useCertManager but cert-manager is not available; install cert-manager "
                          "and restart the operator, or set useCertManager to false");
    if (!user) return 0;
    if (!jmap(tls, "serverCertificate") || !jmap(tls, "clientCertificate"))
        return err_printf(err, errlen, "mTLS is enabled with useCertManager set to false; tls.serverCertificate and "
                                       "tls.clientCertificate must both be set");
    if (!(ca = jmap(tls, "certificateAuthorityCertificate")))
        return err_printf(err, errlen, "mTLS is enabled with useCertManager set to false; "
                                       "tls.certificateAuthorityCertificate must be set");
    if (!jmap(ca, "secret") == !jmap(ca, "configMap"))
        return err_printf(err, errlen, "tls.certificateAuthorityCertificate must set exactly one of secret or configMap");
    return 0;
}

void reconcile_ta_tls_mounts(json_object *mtls, const char *base, const char *which, json_object *volumes,
                             json_object *mounts) {
    json_object *tls = jmap(mtls, "tls"), *ref = jmap(tls, which), *u = jget(mtls, "useCertManager");
    int user = json_object_is_type(u, json_type_boolean) && !json_object_get_boolean(u);
    if (!user || !ref) {
        json_object *v = jpush(volumes, jnew_obj());
        jset_str(v, "name", base);
        jset_str(jset_obj(v, "secret"), "secretName", base);
        json_object *m = jpush(mounts, jnew_obj());
        jset_str(m, "name", base);
        jset_str(m, "mountPath", "/tls");
        return;
    }
    struct {
        const char *kind, *name, *key, *file;
    } files[3];
    int nf = 0;
    json_object *ca = jmap(tls, "certificateAuthorityCertificate");
    if (ca) {
        json_object *s = jmap(ca, "secret"), *cm = jmap(ca, "configMap");
        if (s) files[nf++] = (typeof(files[0])){"secret", jstr(s, "name"), jstr(s, "key"), "ca.crt"};
        else if (cm) files[nf++] = (typeof(files[0])){"configMap", jstr(cm, "name"), jstr(cm, "key"), "ca.crt"};
    }
    /* certificateSecret and keySecret (the spec's names), or certificate
     * and key (upstream's ta-collector-mtls-user-provided fixture). */
    json_object *cert = jmap(ref, "certificateSecret"), *key = jmap(ref, "keySecret");
    if (!cert) cert = jmap(ref, "certificate");
    if (!key) key = jmap(ref, "key");
    files[nf++] = (typeof(files[0])){"secret", jstr(cert, "name"), jstr(cert, "key"), "tls.crt"};
    files[nf++] = (typeof(files[0])){"secret", jstr(key, "name"), jstr(key, "key"), "tls.key"};
    char *vnames[3] = {0}; /* the volume of each file, set for the first of its source */
    int nv = 0;
    for (int i = 0; i < nf; i++) {
        const char *name = files[i].name ? files[i].name : "", *vol = NULL;
        for (int j = 0; j < i && !vol; j++)
            if (strcmp(files[j].kind, files[i].kind) == 0 && strcmp(files[j].name ? files[j].name : "", name) == 0)
                vol = vnames[j];
        if (!vol) {
            char num[16];
            snprintf(num, sizeof num, "%d", nv++);
            const char *vals[2] = {base, num};
            char *vn = collector_truncate("%s-%s", COLLECTOR_NAME_MAX, 2, vals);
            collector_dns_name(vn);
            json_object *v = jpush(volumes, jnew_obj());
            jset_str(v, "name", vn);
            if (strcmp(files[i].kind, "secret") == 0) jset_str(jset_obj(v, "secret"), "secretName", name);
            else jset_str(jset_obj(v, "configMap"), "name", name);
            vol = vnames[i] = vn;
        }
        json_object *m = jpush(mounts, jnew_obj());
        char path[64];
        snprintf(path, sizeof path, "/tls/%s", files[i].file);
        jset_str(m, "name", vol);
        jset_bool(m, "readOnly", 1);
        jset_str(m, "mountPath", path);
        jset_str(m, "subPath", files[i].key && *files[i].key ? files[i].key : files[i].file);
    }
    for (int i = 0; i < 3; i++) free(vnames[i]);
}

static json_object *default_probe(const char *path) {
    json_object *p = jnew_obj(), *h = jset_obj(p, "httpGet");
    jset_str(h, "path", path);
    jset_int(h, "port", 8080);
    return p;
}

static json_object *container(ta_ctx *c, json_object *tls_mounts) {
    json_object *s = c->spec, *ct = jnew_obj(), *v, *ports, *env;
    const char *image = jstr(s, "image");
    jset_str(ct, "name", "ta-container");
    jset_str(ct, "image", image && *image ? image : c->opt->target_allocator_image);
    if ((v = jmap(s, "args")) && json_object_object_length(v)) {
        size_t n;
        jkv *m = jsorted_members(v, &n);
        char **args = xcalloc(n + 1, sizeof *args);
        for (size_t i = 0; i < n; i++) {
            const char *val = json_object_is_type(m[i].val, json_type_string) ? json_object_get_string(m[i].val)
                              : m[i].val ? json_object_to_json_string(m[i].val) : "";
            args[i] = xasprintf("--%s=%s", m[i].key, val);
        }
        /* sorted as whole strings */
        for (size_t i = 1; i < n; i++)
            for (size_t j = i; j > 0 && strcmp(args[j - 1], args[j]) > 0; j--) {
                char *t = args[j];
                args[j] = args[j - 1];
                args[j - 1] = t;
            }
        json_object *a = jset_arr(ct, "args");
        for (size_t i = 0; i < n; i++) {
            jpush(a, jnew_str(args[i]));
            free(args[i]);
        }
        free(args);
        free(m);
    }
    ports = jset_arr(ct, "ports");
    json_object *p = jpush(ports, jnew_obj());
    jset_str(p, "name", "http");
    jset_int(p, "containerPort", 8080);
    jset_str(p, "protocol", "TCP");
    if ((v = jarr(s, "ports")))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *sp = json_object_array_get_idx(v, i), *q = jpush(ports, jnew_obj());
            jset_copy(q, "name", jget(sp, "name"));
            jset_copy(q, "hostPort", jget(sp, "hostPort"));
            jset_copy(q, "containerPort", jget(sp, "port"));
            jset_copy(q, "protocol", jget(sp, "protocol"));
        }
    if (mtls_enabled(c)) {
        p = jpush(ports, jnew_obj());
        jset_str(p, "name", "https");
        jset_int(p, "containerPort", 8443);
        jset_str(p, "protocol", "TCP");
    }
    jset_copy(ct, "envFrom", jarr(s, "envFrom"));
    env = jset_arr(ct, "env");
    int has_ns = 0;
    if ((v = jarr(s, "env")))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *e = json_object_array_get_idx(v, i);
            const char *n = jstr(e, "name");
            if (n && strcmp(n, "OTELCOL_NAMESPACE") == 0) has_ns = 1;
            jpush(env, jcopy(e));
        }
    if (!has_ns) {
        json_object *e = jpush(env, jnew_obj());
        jset_str(e, "name", "OTELCOL_NAMESPACE");
        jset_str(jset_obj(jset_obj(e, "valueFrom"), "fieldRef"), "fieldPath", "metadata.namespace");
    }
    static const char *const golang[2][2] = {{"GOMEMLIMIT", "limits.memory"}, {"GOMAXPROCS", "limits.cpu"}};
    for (int i = 0; i < 2; i++) {
        json_object *e = jpush(env, jnew_obj()), *rf;
        jset_str(e, "name", golang[i][0]);
        rf = jset_obj(jset_obj(e, "valueFrom"), "resourceFieldRef");
        jset_str(rf, "containerName", "ta-container");
        jset_str(rf, "resource", golang[i][1]);
    }
    v = jmap(s, "resources");
    jset(ct, "resources", v ? jcopy(v) : jnew_obj());
    json_object *mounts = jset_arr(ct, "volumeMounts"), *m = jpush(mounts, jnew_obj());
    jset_str(m, "name", "ta-internal");
    jset_str(m, "mountPath", "/conf");
    if ((v = jarr(s, "volumeMounts")))
        for (size_t i = 0; i < json_object_array_length(v); i++) jpush(mounts, jcopy(json_object_array_get_idx(v, i)));
    for (size_t i = 0; tls_mounts && i < json_object_array_length(tls_mounts); i++)
        jpush(mounts, json_object_get(json_object_array_get_idx(tls_mounts, i)));
    v = jmap(s, "livenessProbe");
    jset(ct, "livenessProbe", v ? jcopy(v) : default_probe("/livez"));
    v = jmap(s, "readinessProbe");
    jset(ct, "readinessProbe", v ? jcopy(v) : default_probe("/readyz"));
    jset_copy(ct, "lifecycle", jmap(s, "lifecycle"));
    jset_copy(ct, "imagePullPolicy", jget(s, "imagePullPolicy"));
    jset_copy(ct, "securityContext", jmap(s, "securityContext"));
    return ct;
}

static int build_deployment(ta_ctx *c) {
    json_object *s = c->spec, *o, *spec, *t, *tm, *ps, *v, *vols, *tls_vols = jnew_arr(), *tls_mounts = jnew_arr();
    o = object(c, "apps/v1", "Deployment", c->svc, labels(c, c->svc), annotations(c));
    spec = jset_obj(o, "spec");
    jset_copy(spec, "replicas", jget(s, "replicas"));
    jset(spec, "selector", match_labels(c));
    t = jset_obj(spec, "template");
    tm = jset_obj(t, "metadata");
    jset(tm, "labels", labels(c, c->svc));
    {
        json_object *a = jnew_obj(), *ra = annotations(c), *sorted;
        if ((v = jmap(s, "podAnnotations"))) {
            json_object_object_foreach(v, k, val) jset_copy(a, k, val);
        }
        json_object_object_foreach(ra, k, val) jset_copy(a, k, val);
        json_object_put(ra);
        jset_str(a, "opentelemetry-targetallocator-config/hash", c->hash);
        sorted = jsorted(a);
        json_object_put(a);
        jset(tm, "annotations", sorted);
    }
    if (mtls_enabled(c)) {
        char *base = ta_name(c, "%s-ta-server-cert");
        reconcile_ta_tls_mounts(jmap(s, "mtls"), base, "serverCertificate", tls_vols, tls_mounts);
        free(base);
    }
    ps = jset_obj(t, "spec");
    vols = jset_arr(ps, "volumes");
    {
        json_object *cv = jpush(vols, jnew_obj()), *cm, *item;
        jset_str(cv, "name", "ta-internal");
        cm = jset_obj(cv, "configMap");
        jset_str(cm, "name", c->svc);
        item = jpush(jset_arr(cm, "items"), jnew_obj());
        jset_str(item, "key", c->opt->ta_configmap_entry);
        jset_str(item, "path", c->opt->ta_configmap_entry);
    }
    for (size_t i = 0; i < json_object_array_length(tls_vols); i++)
        jpush(vols, json_object_get(json_object_array_get_idx(tls_vols, i)));
    if ((v = jarr(s, "volumes")))
        for (size_t i = 0; i < json_object_array_length(v); i++) jpush(vols, jcopy(json_object_array_get_idx(v, i)));
    jset_copy(ps, "initContainers", jarr(s, "initContainers"));
    json_object *ctrs = jset_arr(ps, "containers");
    if ((v = jarr(s, "additionalContainers")))
        for (size_t i = 0; i < json_object_array_length(v); i++) jpush(ctrs, jcopy(json_object_array_get_idx(v, i)));
    jpush(ctrs, container(c, tls_mounts));
    jset_copy(ps, "terminationGracePeriodSeconds", jget(s, "terminationGracePeriodSeconds"));
    const char *dns = "ClusterFirst";
    if (jbool(s, "hostNetwork")) dns = "ClusterFirstWithHostNet";
    if (jget(jmap(s, "podDnsConfig"), "nameservers")) dns = "None";
    jset_str(ps, "dnsPolicy", dns);
    jset_copy(ps, "nodeSelector", jmap(s, "nodeSelector"));
    const char *sa = jstr(s, "serviceAccount");
    jset_str(ps, "serviceAccountName", sa && *sa ? sa : c->svc);
    if (jbool(s, "hostNetwork")) jset_bool(ps, "hostNetwork", 1);
    jset_bool(ps, "shareProcessNamespace", jbool(s, "shareProcessNamespace"));
    jset_copy(ps, "securityContext", jmap(s, "podSecurityContext"));
    jset_copy(ps, "affinity", jmap(s, "affinity"));
    jset_copy(ps, "tolerations", jarr(s, "tolerations"));
    jset_copy(ps, "hostAliases", jarr(s, "hostAliases"));
    jset_copy(ps, "priorityClassName", jget(s, "priorityClassName"));
    v = jmap(s, "podDnsConfig");
    jset(ps, "dnsConfig", v ? jcopy(v) : jnew_obj());
    jset_copy(ps, "topologySpreadConstraints", jarr(s, "topologySpreadConstraints"));
    jset_copy(ps, "hostUsers", jget(s, "hostUsers"));
    jset_obj(spec, "strategy");
    json_object_put(tls_vols);
    json_object_put(tls_mounts);
    emit(c, o);
    return 0;
}

static int build_service_account(ta_ctx *c) {
    const char *sa = jstr(c->spec, "serviceAccount");
    if (sa && *sa) return 0;
    emit(c, object(c, "v1", "ServiceAccount", c->svc, labels(c, c->svc), annotations(c)));
    return 0;
}

static int build_service(ta_ctx *c) {
    json_object *o = object(c, "v1", "Service", c->svc, labels(c, c->svc), annotations(c));
    json_object *spec = jset_obj(o, "spec"), *ports = jset_arr(spec, "ports"), *p;
    p = jpush(ports, jnew_obj());
    jset_str(p, "name", "targetallocation");
    jset_int(p, "port", 80);
    jset_str(p, "targetPort", "http");
    if (mtls_enabled(c)) {
        p = jpush(ports, jnew_obj());
        jset_str(p, "name", "targetallocation-https");
        jset_int(p, "port", 443);
        jset_str(p, "targetPort", "https");
    }
    jset(spec, "selector", ta_selector(c));
    jset_copy(spec, "ipFamilies", jarr(c->spec, "ipFamilies"));
    jset_copy(spec, "ipFamilyPolicy", jget(c->spec, "ipFamilyPolicy"));
    jset_copy(spec, "trafficDistribution", jget(c->spec, "trafficDistribution"));
    emit(c, o);
    return 0;
}

static int build_pdb(ta_ctx *c) {
    const char *st = jstr(c->spec, "allocationStrategy");
    json_object *p = jmap(c->spec, "podDisruptionBudget"), *o, *spec;
    int compatible = st && (strcmp(st, "consistent-hashing") == 0 || strcmp(st, "per-node") == 0);
    if (p && !compatible) {
        /* spec 21 item 8: the reference fails every object here. */
        warn(c, "spec.podDisruptionBudget: the allocation strategy %s cannot have one: no PodDisruptionBudget",
             st && *st ? st : "\"\"");
        return 0;
    }
    if (!p && st && strcmp(st, "least-weighted") == 0) return 0;
    o = object(c, "policy/v1", "PodDisruptionBudget", c->svc, labels(c, c->svc), annotations(c));
    spec = jset_obj(o, "spec");
    if (p) {
        jset_copy(spec, "minAvailable", jget(p, "minAvailable"));
        jset(spec, "selector", match_labels(c));
        jset_copy(spec, "maxUnavailable", jget(p, "maxUnavailable"));
    } else {
        jset(spec, "selector", match_labels(c));
        jset_int(spec, "maxUnavailable", 1);
    }
    emit(c, o);
    return 0;
}

static json_object *tcp_port(int64_t n) {
    json_object *p = jnew_obj();
    jset_str(p, "protocol", "TCP");
    jset_int(p, "port", n);
    return p;
}

static int build_network_policy(ta_ctx *c) {
    json_object *np = jmap(c->spec, "networkPolicy"), *o, *spec, *ing, *eg, *ports, *v;
    if (!jbool(np, "enabled")) return 0;
    char *name = ta_name(c, "%s-targetallocator-networkpolicy");
    /* The reference takes the version from status.image, never written:
     * always "latest" (5.3). */
    o = object(c, "networking.k8s.io/v1", "NetworkPolicy", name, labels_for(c, name, jstr(jmap(c->ta, "status"), "image")),
               annotations(c));
    free(name);
    spec = jset_obj(o, "spec");
    jset(jset_obj(spec, "podSelector"), "matchLabels", base_selector(c));
    ing = jpush(jset_arr(spec, "ingress"), jnew_obj());
    ports = jset_arr(ing, "ports");
    jpush(ports, tcp_port(8080));
    if ((v = jarr(c->spec, "ports")))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            int64_t n = 0;
            jint(json_object_array_get_idx(v, i), "port", &n);
            jpush(ports, tcp_port(n));
        }
    if (mtls_enabled(c)) jpush(ports, tcp_port(8443));
    eg = jpush(jset_arr(spec, "egress"), jnew_obj());
    jpush(jset_arr(eg, "ports"), tcp_port(c->opt->api_server_port));
    if (c->opt->api_server_ips && jlen(c->opt->api_server_ips)) {
        json_object *to = jset_arr(eg, "to");
        for (size_t i = 0; i < jlen(c->opt->api_server_ips); i++) {
            char cidr[80];
            snprintf(cidr, sizeof cidr, "%s/32", json_object_get_string(json_object_array_get_idx(c->opt->api_server_ips, i)));
            jset_str(jset_obj(jpush(to, jnew_obj()), "ipBlock"), "cidr", cidr);
        }
    }
    json_object *types = jset_arr(spec, "policyTypes");
    jpush(types, jnew_str("Ingress"));
    jpush(types, jnew_str("Egress"));
    emit(c, o);
    return 0;
}

static int build_service_monitor(ta_ctx *c) {
    json_object *m = jmap(jmap(c->spec, "observability"), "metrics"), *o, *spec, *l, *extra;
    if (!jbool(m, "enableMetrics")) return 0;
    if (!c->opt->prometheus_crds) {
        warn(c, "spec.observability.metrics.enableMetrics: the Prometheus operator CRDs are not installed: no "
                "ServiceMonitor");
        return 0;
    }
    l = labels(c, c->svc);
    if ((extra = jmap(m, "extraLabels"))) {
        json_object_object_foreach(extra, k, v) jset_copy(l, k, v);
        json_object *s = jsorted(l);
        json_object_put(l);
        l = s;
    }
    o = object(c, "monitoring.coreos.com/v1", "ServiceMonitor", c->svc, l, annotations(c));
    spec = jset_obj(o, "spec");
    jset_str(jpush(jset_arr(spec, "endpoints"), jnew_obj()), "port", "targetallocation");
    jpush(jset_arr(jset_obj(spec, "namespaceSelector"), "matchNames"), jnew_str(c->ns));
    jset(spec, "selector", match_labels(c));
    emit(c, o);
    return 0;
}

static json_object *cm_object(ta_ctx *c, const char *kind, const char *name) {
    return object(c, "cert-manager.io/v1", kind, name, labels(c, name), NULL);
}

static json_object *certificate(ta_ctx *c, const char *name, const char *issuer) {
    json_object *o = cm_object(c, "Certificate", name), *spec = jset_obj(o, "spec"), *dns, *ir, *us;
    char *full = xasprintf("%s.%s.svc", c->svc, c->ns), *local = xasprintf("%s.%s.svc.cluster.local", c->svc, c->ns);
    dns = jset_arr(spec, "dnsNames");
    jpush(dns, jnew_str(c->svc));
    jpush(dns, jnew_str(full));
    jpush(dns, jnew_str(local));
    free(full);
    free(local);
    ir = jset_obj(spec, "issuerRef");
    jset_str(ir, "kind", "Issuer");
    jset_str(ir, "name", issuer);
    jset_str(spec, "secretName", name);
    jpush(jset_arr(jset_obj(spec, "subject"), "organizationalUnits"), jnew_str("opentelemetry-operator"));
    us = jset_arr(spec, "usages");
    jpush(us, jnew_str("client auth"));
    jpush(us, jnew_str("server auth"));
    jset_str(spec, "duration", "2160h0m0s");
    return o;
}

static int build_cert_manager(ta_ctx *c) {
    if (!mtls_enabled(c) || mtls_user_provided(c)) return 0;
    char *self = ta_name(c, "%s-self-signed-issuer"), *ca = ta_name(c, "%s-ca-cert"),
         *cai = ta_name(c, "%s-ca-issuer"), *server = ta_name(c, "%s-ta-server-cert"),
         *client = ta_name(c, "%s-ta-client-cert");
    json_object *o = cm_object(c, "Issuer", self);
    jset_obj(jset_obj(o, "spec"), "selfSigned");
    emit(c, o);
    o = cm_object(c, "Certificate", ca);
    json_object *spec = jset_obj(o, "spec"), *ir;
    jset_bool(spec, "isCA", 1);
    jset_str(spec, "commonName", ca);
    ir = jset_obj(spec, "issuerRef");
    jset_str(ir, "kind", "Issuer");
    jset_str(ir, "name", self);
    jset_str(spec, "secretName", ca);
    jpush(jset_arr(jset_obj(spec, "subject"), "organizationalUnits"), jnew_str("opentelemetry-operator"));
    jset_str(spec, "duration", "17280h0m0s");
    jset_str(spec, "renewBefore", "4344h0m0s");
    emit(c, o);
    o = cm_object(c, "Issuer", cai);
    jset_str(jset_obj(jset_obj(o, "spec"), "ca"), "secretName", ca);
    emit(c, o);
    emit(c, certificate(c, server, cai));
    emit(c, certificate(c, client, cai));
    free(self);
    free(ca);
    free(cai);
    free(server);
    free(client);
    return 0;
}

/* ---- entry points ------------------------------------------------------ */

json_object *reconcile_ta_bound_collector(json_object *ta, json_object *collectors, char *err, size_t errlen) {
    json_object *m = jmap(ta, "metadata"), *refs = jarr(m, "ownerReferences"), *found = NULL;
    const char *name = jstr(m, "name"), *ns = jstr(m, "namespace");
    err[0] = '\0';
    for (size_t i = 0; refs && i < json_object_array_length(refs); i++) {
        json_object *r = json_object_array_get_idx(refs, i);
        const char *k = jstr(r, "kind"), *n = jstr(r, "name");
        if (!k || strcmp(k, "OpenTelemetryCollector") != 0) continue;
        for (size_t j = 0; j < jlen(collectors); j++) {
            json_object *cm = jmap(json_object_array_get_idx(collectors, j), "metadata");
            const char *cns = jstr(cm, "namespace");
            if (n && jstr(cm, "name") && strcmp(jstr(cm, "name"), n) == 0 && (!ns || !cns || strcmp(cns, ns) == 0))
                return json_object_array_get_idx(collectors, j);
        }
        err_printf(err, errlen, "error getting owner for TargetAllocator %s/%s: collector %s not found",
                   ns ? ns : "", name ? name : "", n ? n : "");
        return NULL;
    }
    for (size_t j = 0; name && j < jlen(collectors); j++) {
        json_object *col = json_object_array_get_idx(collectors, j), *cm = jmap(col, "metadata");
        const char *l = jstr(jmap(cm, "labels"), RECONCILE_TA_LABEL), *cns = jstr(cm, "namespace");
        if (!l || strcmp(l, name) != 0 || (ns && cns && strcmp(cns, ns) != 0)) continue;
        if (found) {
            err_printf(err, errlen, "found multiple OpenTelemetry collectors annotated with the same Target Allocator: "
                       "%s/%s", ns ? ns : "", name);
            return NULL;
        }
        found = col;
    }
    return found;
}

int reconcile_render_target_allocator(json_object *ta, json_object *collector, const char *ns,
                                      const reconcile_options *opt, reconcile_render_result *out, char *err,
                                      size_t errlen) {
    ta_ctx c = {.opt = opt, .out = out, .err = err, .errlen = errlen};
    int rc = -1;
    memset(out, 0, sizeof *out);
    err[0] = '\0';
    const char *kind = jstr(ta, "kind"), *api = jstr(ta, "apiVersion");
    if (!kind || strcmp(kind, "TargetAllocator") != 0 || !api || strcmp(api, "opentelemetry.io/v1alpha1") != 0)
        return err_printf(err, errlen, "not an opentelemetry.io/v1alpha1 TargetAllocator");
    if (reconcile_ta_check_shape(ta, err, errlen) != 0) return -1;
    c.ta = jcopy(ta);
    c.meta = jmap(c.ta, "metadata");
    c.name = jstr(c.meta, "name");
    if (!c.name || !*c.name) {
        err_printf(err, errlen, "metadata.name is missing");
        goto out;
    }
    c.ns = jstr(c.meta, "namespace");
    if (!c.ns || !*c.ns) c.ns = ns && *ns ? ns : "default";
    c.spec = jmap(c.ta, "spec");
    if (jget(c.ta, "spec") && !c.spec) {
        err_printf(err, errlen, "spec: expected a map");
        goto out;
    }
    schema_defaults(c.spec);
    {
        const char *state = jstr(c.spec, "managementState");
        if (state && strcmp(state, "unmanaged") == 0) {
            warn(&c, "spec.managementState is unmanaged: nothing is rendered");
            rc = 0;
            goto out;
        }
    }
    if (collector) {
        char derr[256] = "";
        c.collector = jcopy(collector);
        if (collector_default(c.collector, derr, sizeof derr) != 0) {
            err_printf(err, errlen, "collector %s: %s", jstr(jmap(collector, "metadata"), "name"), derr);
            goto out;
        }
        collector_drop_derived(c.collector);
        json_object *cm = jmap(c.collector, "metadata");
        if (!jstr(cm, "namespace")) jset_str(cm, "namespace", c.ns);
    }
    /* spec 21 items 2 and 10: the reference's TargetAllocator webhook never
     * runs, and without it a pod that mounts a Secret nobody issues is
     * built; we refuse what the collector webhook refuses. */
    if (reconcile_ta_mtls_check(jmap(c.spec, "mtls"), opt->cert_manager, err, errlen)) goto out;
    c.svc = ta_name(&c, "%s-targetallocator");
    if (build_configmap(&c) || build_deployment(&c) || build_service_account(&c) || build_service(&c) ||
        build_pdb(&c) || build_network_policy(&c) || build_service_monitor(&c) || build_cert_manager(&c))
        goto out;
    rc = 0;
out:
    free(c.svc);
    json_object_put(c.collector);
    json_object_put(c.ta);
    if (rc != 0) {
        if (!err[0]) snprintf(err, errlen, "render failed");
        reconcile_render_result_free(out);
    }
    return rc;
}
