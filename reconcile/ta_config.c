/* reconcile/ta_config.c - targetallocator.yaml (targetallocator.md 6) and
 * the Go formats around it; see ta_config.h.
 *
 * The document is built as a json-c tree whose keys are inserted in the
 * order yaml.v2 writes them (its Go structs' fields sorted, user maps in
 * its "natural" key order) and written by kube/yaml.c in yaml.v2's style:
 * lists flush with their key, yaml.v2's quoting. The text is the pod
 * template's hash input, so any difference from the reference's would
 * roll every allocator pod.
 *
 * Trade-offs:
 * - Numbers in the TargetAllocator's own scrapeConfigs and scrapeClasses
 *   are written as the integers they are: the reference sends them through
 *   float64 and writes 1000000 as 1e+06, which Prometheus refuses for an
 *   integer field (spec 21 item 5; docs/compat.md).
 * - The text is yaml.v2's byte for byte, long scalars folded at 80 columns
 *   as its libyaml-derived emitter folds them (kube/yaml.c); reconcile_test.py
 *   holds it to libyaml's own output. */
#include "reconcile/ta_config.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"
#include "collector/naming.h"
#include "kube/yaml.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Go durations ------------------------------------------------------ */

bool reconcile_go_duration_parse(const char *s, int64_t *ns) {
    static const struct {
        const char *u;
        uint64_t mult;
    } units[] = {{"ns", 1}, {"us", 1000}, {"\xc2\xb5s", 1000}, {"\xce\xbcs", 1000}, {"ms", 1000000},
                 {"s", 1000000000ULL}, {"m", 60000000000ULL}, {"h", 3600000000000ULL}};
    const char *p = s;
    int neg = 0;
    long double total = 0;
    if (!s || !*s) return false;
    if (*p == '-' || *p == '+') neg = *p++ == '-';
    if (strcmp(p, "0") == 0) {
        *ns = 0;
        return true;
    }
    if (!*p) return false;
    while (*p) {
        long double v = 0, scale = 1;
        int digits = 0;
        while (*p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0'), digits++;
        if (*p == '.') {
            p++;
            while (*p >= '0' && *p <= '9') scale /= 10, v += (*p++ - '0') * scale, digits++;
        }
        if (!digits) return false;
        size_t best = 0, idx = 0;
        for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
            size_t l = strlen(units[i].u);
            if (strncmp(p, units[i].u, l) == 0 && l > best) best = l, idx = i;
        }
        if (!best) return false;
        p += best;
        total += v * (long double)units[idx].mult;
        if (total > 9223372036854775807.0L) return false;
    }
    *ns = (int64_t)(neg ? -total : total);
    return true;
}

/* The fraction of v below 10^prec, digits without trailing zeros, and v
 * divided (Go's fmtFrac). */
static uint64_t frac(char *out, uint64_t v, int prec) {
    char d[24];
    int n = 0, print = 0;
    out[0] = '\0';
    for (int i = 0; i < prec; i++) {
        int digit = (int)(v % 10);
        print = print || digit != 0;
        if (print) d[n++] = (char)('0' + digit);
        v /= 10;
    }
    if (n) {
        out[0] = '.';
        for (int i = 0; i < n; i++) out[1 + i] = d[n - 1 - i];
        out[1 + n] = '\0';
    }
    return v;
}

void reconcile_go_duration_format(int64_t ns, char out[RECONCILE_DURATION_MAX]) {
    uint64_t u = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
    const char *sign = ns < 0 ? "-" : "";
    char f[24];
    if (u == 0) {
        snprintf(out, RECONCILE_DURATION_MAX, "0s");
        return;
    }
    if (u < 1000000000ULL) {
        const char *unit = u < 1000 ? "ns" : u < 1000000 ? "\xc2\xb5s" : "ms";
        int prec = u < 1000 ? 0 : u < 1000000 ? 3 : 6;
        uint64_t w = frac(f, u, prec);
        snprintf(out, RECONCILE_DURATION_MAX, "%s%" PRIu64 "%s%s", sign, w, f, unit);
        return;
    }
    uint64_t secs = frac(f, u, 9);
    uint64_t s = secs % 60, m = (secs / 60) % 60, h = secs / 3600;
    if (h) snprintf(out, RECONCILE_DURATION_MAX, "%s%" PRIu64 "h%" PRIu64 "m%" PRIu64 "%ss", sign, h, m, s, f);
    else if (secs / 60) snprintf(out, RECONCILE_DURATION_MAX, "%s%" PRIu64 "m%" PRIu64 "%ss", sign, m, s, f);
    else snprintf(out, RECONCILE_DURATION_MAX, "%s%" PRIu64 "%ss", sign, s, f);
}

char *reconcile_go_duration_normal(const char *s) {
    int64_t ns;
    char buf[RECONCILE_DURATION_MAX];
    if (!reconcile_go_duration_parse(s, &ns)) return NULL;
    reconcile_go_duration_format(ns, buf);
    return xstrdup(buf);
}

/* ---- yaml.v2's key order ---------------------------------------------- */

static int is_letter(uint32_t c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xc0;
}

static int is_digit(uint32_t c) {
    return c >= '0' && c <= '9';
}

/* Code points of s (invalid bytes as themselves); *n set. */
static uint32_t *runes(const char *s, size_t *n) {
    size_t len = strlen(s), k = 0;
    uint32_t *r = xcalloc(len + 1, sizeof *r);
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        uint32_t c = p[i];
        size_t l = 1;
        if (c >= 0xc0 && c < 0xe0 && i + 1 < len) c = ((c & 0x1f) << 6) | (p[i + 1] & 0x3f), l = 2;
        else if (c >= 0xe0 && c < 0xf0 && i + 2 < len)
            c = ((c & 0x0f) << 12) | ((p[i + 1] & 0x3f) << 6) | (p[i + 2] & 0x3f), l = 3;
        else if (c >= 0xf0 && i + 3 < len)
            c = ((c & 0x07) << 18) | ((p[i + 1] & 0x3f) << 12) | ((p[i + 2] & 0x3f) << 6) | (p[i + 3] & 0x3f), l = 4;
        r[k++] = c;
        i += l;
    }
    *n = k;
    return r;
}

/* yaml.v2 keyList.Less for two string keys. */
static int natural_less(const char *a, const char *b) {
    size_t na, nb;
    uint32_t *ar = runes(a, &na), *br = runes(b, &nb);
    int res = na < nb;
    for (size_t i = 0; i < na && i < nb; i++) {
        if (ar[i] == br[i]) continue;
        int al = is_letter(ar[i]), bl = is_letter(br[i]);
        if (al && bl) {
            res = ar[i] < br[i];
            goto out;
        }
        if (al || bl) {
            res = bl;
            goto out;
        }
        int64_t an = 0, bn = 0;
        size_t ai, bi;
        if (ar[i] == '0' || br[i] == '0') {
            for (size_t j = i; j-- > 0 && is_digit(ar[j]);)
                if (ar[j] != '0') {
                    an = bn = 1;
                    break;
                }
        }
        for (ai = i; ai < na && is_digit(ar[ai]); ai++) an = an * 10 + (ar[ai] - '0');
        for (bi = i; bi < nb && is_digit(br[bi]); bi++) bn = bn * 10 + (br[bi] - '0');
        if (an != bn) res = an < bn;
        else if (ai != bi) res = ai < bi;
        else res = ar[i] < br[i];
        goto out;
    }
out:
    free(ar);
    free(br);
    return res;
}

static int by_natural(const void *x, const void *y) {
    const jkv *a = x, *b = y;
    if (natural_less(a->key, b->key)) return -1;
    if (natural_less(b->key, a->key)) return 1;
    return 0;
}

json_object *reconcile_yaml_v2_sorted(json_object *v) {
    if (json_object_is_type(v, json_type_array)) {
        json_object *out = jnew_arr();
        for (size_t i = 0; i < json_object_array_length(v); i++)
            jpush(out, reconcile_yaml_v2_sorted(json_object_array_get_idx(v, i)));
        return out;
    }
    if (!json_object_is_type(v, json_type_object)) return jcopy(v);
    size_t n;
    jkv *m = jsorted_members(v, &n);
    if (n > 1) qsort(m, n, sizeof *m, by_natural);
    json_object *out = jnew_obj();
    for (size_t i = 0; i < n; i++) jset(out, m[i].key, reconcile_yaml_v2_sorted(m[i].val));
    free(m);
    return out;
}

/* ---- the collector's scrape configs (6.2) ----------------------------- */

json_object *reconcile_ta_find_prometheus(json_object *config, char *err, size_t errlen) {
    json_object *recv = jget(config, "receivers"), *prom;
    if (!recv || !json_object_is_type(recv, json_type_object)) {
        err_printf(err, errlen, "no receivers available as part of the configuration");
        return NULL;
    }
    if (!json_object_object_get_ex(recv, "prometheus", &prom)) {
        char names[512] = "";
        size_t n;
        jkv *m = jsorted_members(recv, &n);
        for (size_t i = 0; i < n; i++)
            if (strncmp(m[i].key, "prometheus/", 11) == 0) {
                size_t l = strlen(names);
                snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", m[i].key);
            }
        free(m);
        if (names[0])
            err_printf(err, errlen,
                       "the target allocator requires a receiver named exactly \"prometheus\", but only named "
                       "instances were found: %s; rename one of them to \"prometheus\"",
                       names);
        else
            err_printf(err, errlen, "no prometheus available as part of the configuration");
        return NULL;
    }
    if (prom && !json_object_is_type(prom, json_type_object)) {
        err_printf(err, errlen, "'prometheus' expected a map, got '%s'",
                   json_object_is_type(prom, json_type_array) ? "slice" : json_object_is_type(prom, json_type_string) ? "string" : json_type_to_name(json_object_get_type(prom)));
        return NULL;
    }
    return prom ? prom : recv; /* a null receiver: no config in it */
}

json_object *reconcile_ta_collector_scrape_configs(json_object *config, char *err, size_t errlen) {
    json_object *prom = reconcile_ta_find_prometheus(config, err, errlen), *pc, *list, *out;
    if (!prom) return NULL;
    if (prom == jget(config, "receivers")) return jnew_arr();
    out = jnew_arr();
    if (!json_object_object_get_ex(prom, "config", &pc)) return out;
    list = jget(pc, "scrape_configs");
    if (!json_object_is_type(pc, json_type_object) || !json_object_object_get_ex(pc, "scrape_configs", NULL)) {
        json_object_put(out);
        err_printf(err, errlen, "no scrape_configs available as part of the configuration");
        return NULL;
    }
    if (!json_object_is_type(list, json_type_array)) {
        json_object_put(out);
        err_printf(err, errlen, "scrape_configs must be a list in the config");
        return NULL;
    }
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *sc = json_object_array_get_idx(list, i);
        if (!json_object_is_type(sc, json_type_object)) {
            json_object_put(out);
            err_printf(err, errlen, "scrape_configs must be a list of maps in the config");
            return NULL;
        }
        sc = jpush(out, jcopy(sc));
        static const char *const relabels[] = {"relabel_configs", "metric_relabel_configs"};
        for (int r = 0; r < 2; r++) {
            json_object *rl = jarr(sc, relabels[r]);
            for (size_t k = 0; rl && k < json_object_array_length(rl); k++) {
                json_object *e = json_object_array_get_idx(rl, k);
                const char *rep = jstr(e, "replacement");
                if (!rep || !strstr(rep, "$$")) continue;
                char *u = xstrdup(rep), *w = u;
                for (const char *q = rep; *q; q++) {
                    *w++ = *q;
                    if (q[0] == '$' && q[1] == '$') q++;
                }
                *w = '\0';
                jset_str(e, "replacement", u);
                free(u);
            }
        }
    }
    return out;
}

/* ---- the document (6.4) ----------------------------------------------- */

/* A label selector as yaml.v2 writes the Go struct: matchlabels then
 * matchexpressions, lowercase; null stays null. */
static json_object *selector_struct(json_object *sel) {
    if (!json_object_is_type(sel, json_type_object)) return NULL;
    json_object *o = jnew_obj(), *ml = jmap(sel, "matchLabels"), *me = jarr(sel, "matchExpressions");
    jset(o, "matchlabels", ml ? reconcile_yaml_v2_sorted(ml) : jnew_obj());
    json_object *exprs = jset_arr(o, "matchexpressions");
    for (size_t i = 0; me && i < json_object_array_length(me); i++) {
        json_object *e = json_object_array_get_idx(me, i), *x = jpush(exprs, jnew_obj());
        jset_str(x, "key", jstr(e, "key"));
        jset_str(x, "operator", jstr(e, "operator"));
        json_object *vals = jarr(e, "values");
        jset(x, "values", vals ? jcopy(vals) : jnew_arr());
    }
    return o;
}

static int set_duration(json_object *o, const char *key, json_object *spec, const char *field, char *err,
                        size_t errlen) {
    json_object *v = jget(spec, field);
    if (!v) return 0;
    char *d = json_object_is_type(v, json_type_string) ? reconcile_go_duration_normal(json_object_get_string(v)) : NULL;
    if (!d) return err_printf(err, errlen, "spec.%s: not a duration: %s", field, json_object_to_json_string(v));
    jset_str(o, key, d);
    free(d);
    return 0;
}

static void set_list(json_object *o, const char *key, json_object *spec, const char *field) {
    json_object *v = jget(spec, field);
    if (json_object_is_type(v, json_type_array)) jset(o, key, reconcile_yaml_v2_sorted(v));
}

static int prometheus_cr(json_object *doc, json_object *cr, char *err, size_t errlen) {
    json_object *p = jset_obj(doc, "prometheus_cr");
    set_list(p, "allow_namespaces", cr, "allowNamespaces");
    if (jbool(cr, "denyFSAccessThroughSMs")) jset_bool(p, "deny_fs_access_through_sms", 1);
    set_list(p, "deny_namespaces", cr, "denyNamespaces");
    jset_bool(p, "enabled", 1);
    if (set_duration(p, "evaluation_interval", cr, "evaluationInterval", err, errlen)) return -1;
    jset(p, "pod_monitor_namespace_selector", selector_struct(jget(cr, "podMonitorNamespaceSelector")));
    jset(p, "pod_monitor_selector", selector_struct(jget(cr, "podMonitorSelector")));
    jset(p, "probe_namespace_selector", selector_struct(jget(cr, "probeNamespaceSelector")));
    jset(p, "probe_selector", selector_struct(jget(cr, "probeSelector")));
    set_list(p, "scrape_classes", cr, "scrapeClasses");
    jset(p, "scrape_config_namespace_selector", selector_struct(jget(cr, "scrapeConfigNamespaceSelector")));
    jset(p, "scrape_config_selector", selector_struct(jget(cr, "scrapeConfigSelector")));
    if (set_duration(p, "scrape_interval", cr, "scrapeInterval", err, errlen)) return -1;
    set_list(p, "scrape_protocols", cr, "scrapeProtocols");
    set_list(p, "secret_namespaces", cr, "secretNamespaces");
    jset(p, "service_monitor_namespace_selector", selector_struct(jget(cr, "serviceMonitorNamespaceSelector")));
    jset(p, "service_monitor_selector", selector_struct(jget(cr, "serviceMonitorSelector")));
    return 0;
}

char *reconcile_ta_config_text(const reconcile_ta_config_in *in, char *err, size_t errlen) {
    static const kube_yaml_style v2 = {2, 1, KUBE_YAML_QUOTE_YAML_V2, 0};
    json_object *spec = in->spec, *doc = jnew_obj(), *global = NULL, *scs = jnew_arr(), *v;
    char *text = NULL;
    const char *strategy = jstr(spec, "allocationStrategy");

    if ((v = jarr(spec, "scrapeConfigs")))
        for (size_t i = 0; i < json_object_array_length(v); i++) jpush(scs, jcopy(json_object_array_get_idx(v, i)));
    if (jnonempty(jmap(spec, "global"))) global = jcopy(jmap(spec, "global"));
    if (in->collector) {
        json_object *config = jmap(jmap(in->collector, "spec"), "config");
        json_object *cs = reconcile_ta_collector_scrape_configs(config, err, errlen);
        if (!cs) goto out;
        for (size_t i = 0; i < json_object_array_length(cs); i++)
            jpush(scs, json_object_get(json_object_array_get_idx(cs, i)));
        json_object_put(cs);
        if (!global) {
            json_object *g = jget(jmap(jmap(jmap(config, "receivers"), "prometheus"), "config"), "global");
            if (jnonempty(g)) global = jcopy(g);
        }
    }

    if (in->fallback_strategy) jset_str(doc, "allocation_fallback_strategy", "consistent-hashing");
    jset_str(doc, "allocation_strategy", strategy && *strategy ? strategy : "consistent-hashing");
    if (jbool(spec, "allowInsecureAuthSecrets")) jset_bool(doc, "allow_insecure_auth_secrets", 1);
    if (set_duration(doc, "collector_not_ready_grace_period", spec, "collectorNotReadyGracePeriod", err, errlen))
        goto out;
    if (in->collector) {
        const char *vals[2] = {in->collector_ns, jstr(jmap(in->collector, "metadata"), "name")};
        char *instance = collector_truncate("%s.%s", COLLECTOR_NAME_MAX, 2, vals);
        json_object *sel = jset_obj(doc, "collector_selector"), *ml = jset_obj(sel, "matchlabels");
        jset_str(ml, "app.kubernetes.io/component", "opentelemetry-collector");
        jset_str(ml, "app.kubernetes.io/instance", instance);
        jset_str(ml, "app.kubernetes.io/managed-by", "opentelemetry-operator");
        jset_str(ml, "app.kubernetes.io/part-of", "opentelemetry");
        jset_arr(sel, "matchexpressions");
        free(instance);
    } else {
        jset(doc, "collector_selector", NULL);
    }
    if (global || json_object_array_length(scs) > 0) {
        json_object *c = jset_obj(doc, "config");
        if (global) jset(c, "global", reconcile_yaml_v2_sorted(global));
        if (json_object_array_length(scs) > 0) jset(c, "scrape_configs", reconcile_yaml_v2_sorted(scs));
    }
    v = jget(spec, "filterStrategy");
    jset_str(doc, "filter_strategy", json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "");
    if (jbool(jmap(spec, "mtls"), "enabled")) {
        json_object *h = jset_obj(doc, "https");
        jset_str(h, "ca_file_path", "/tls/ca.crt");
        jset_bool(h, "enabled", 1);
        jset_str(h, "listen_addr", ":8443");
        jset_str(h, "tls_cert_file_path", "/tls/tls.crt");
        jset_str(h, "tls_key_file_path", "/tls/tls.key");
    }
    if (jbool(jmap(spec, "prometheusCR"), "enabled") && prometheus_cr(doc, jmap(spec, "prometheusCR"), err, errlen))
        goto out;
    text = kube_yaml_emit_style(doc, &v2);
out:
    json_object_put(doc);
    json_object_put(global);
    json_object_put(scs);
    return text;
}
