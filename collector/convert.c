/* collector/convert.c - v1alpha1 <-> v1beta1 OpenTelemetryCollectors; see
 * convert.h for the rules and where they differ from the reference.
 *
 * Both directions walk the input's keys in order and decide per key: mapped
 * (renamed or reshaped), copied, or (v1beta1 -> v1alpha1 only) kept aside in
 * the overlay that becomes the COLLECTOR_CONVERT_FIELDS annotation. Walking
 * the input rather than a table of the output keeps key order and passes
 * through what neither version's schema names, at the cost of a few
 * key-collision rules (a v1alpha1 object holding both updateStrategy and
 * daemonSetUpdateStrategy: the v1alpha1 field wins).
 *
 * The overlay is filled back level by level only where the structure is the
 * conversion's own (spec, targetAllocator, prometheusCR, observability,
 * metrics, status); below that, a field the v1alpha1 object has wins whole,
 * so an annotation never patches the inside of a value someone edited. */
#include "collector/convert.h"

#include "base/alloc.h"
#include "base/err.h"
#include "base/json.h"
#include "base/jtext.h"
#include "collector/config.h"
#include "kube/yaml.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALPHA COLLECTOR_CONVERT_V1ALPHA1
#define BETA COLLECTOR_CONVERT_V1BETA1

static bool has_key(json_object *o, const char *key) {
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, NULL);
}

/* 0 when v is absent, null or an object; else -1 with "PATH: expected an
 * object, got ..." (what the reference's decoder refuses). */
static int want_obj(json_object *v, const char *path, char *err, size_t errlen) {
    if (v == NULL || json_object_is_type(v, json_type_object)) return 0;
    return err_printf(err, errlen, "%s: expected an object, got %s", path, jtype_name(v));
}

static bool in_list(const char *const *list, const char *key) {
    for (; *list; list++)
        if (strcmp(*list, key) == 0) return true;
    return false;
}

/* ---------------------------------------------------------------------------
 * The config shape (6.4): receivers, exporters, processors, connectors,
 * extensions, service {extensions, telemetry, pipelines {<name>: {exporters,
 * processors, receivers}}}. Keys outside it are dropped, as the reference's
 * typed config drops them.
 */

/* A list of strings: scalars become their text, null "" (what a Go []string
 * decodes them to). */
static int shape_strings(json_object *v, const char *path, json_object **out, char *err, size_t errlen) {
    *out = NULL;
    if (v == NULL) return 0;
    if (!json_object_is_type(v, json_type_array))
        return err_printf(err, errlen, "%s: expected a list, got %s", path, jtype_name(v));
    json_object *a = jnew_arr();
    for (size_t i = 0; i < json_object_array_length(v); i++) {
        json_object *s = json_object_array_get_idx(v, i);
        if (json_object_is_type(s, json_type_array) || json_object_is_type(s, json_type_object)) {
            json_object_put(a);
            return err_printf(err, errlen, "%s[%zu]: expected a string, got %s", path, i, jtype_name(s));
        }
        jpush(a, s ? jnew_str(json_object_get_string(s)) : jnew_str(""));
    }
    *out = a;
    return 0;
}

/* Integral numbers as integers: the reference holds config numbers as Go
 * float64s, which print as 8888, never 8888.0. */
static void integral_numbers(json_object *v) {
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, x) {
            if (json_object_is_type(x, json_type_double)) {
                double d = json_object_get_double(x);
                if (isfinite(d) && d == trunc(d) && fabs(d) < 9.2e18) json_object_object_add(v, k, jnew_int((int64_t)d));
            } else {
                integral_numbers(x);
            }
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            json_object *x = json_object_array_get_idx(v, i);
            if (json_object_is_type(x, json_type_double)) {
                double d = json_object_get_double(x);
                if (isfinite(d) && d == trunc(d) && fabs(d) < 9.2e18)
                    json_object_array_put_idx(v, i, jnew_int((int64_t)d));
            } else {
                integral_numbers(x);
            }
        }
    }
}

/* A map-valued section: copied; null and absent are the same (omitted, or
 * {} when required). */
static int shape_section(json_object *in, json_object *out, const char *key, bool required, char *err,
                         size_t errlen) {
    json_object *v = jget(in, key);
    if (v == NULL) {
        if (required) jset_obj(out, key);
        return 0;
    }
    if (!json_object_is_type(v, json_type_object))
        return err_printf(err, errlen, "spec.config.%s: expected a map, got %s", key, jtype_name(v));
    json_object *c = jcopy(v);
    integral_numbers(c);
    jset(out, key, c);
    return 0;
}

static int shape_pipeline(const char *name, json_object *p, json_object **out, char *err, size_t errlen) {
    static const char *const keys[] = {"exporters", "processors", "receivers"};
    *out = NULL;
    if (p == NULL) return 0; /* a null pipeline stays null */
    if (!json_object_is_type(p, json_type_object))
        return err_printf(err, errlen, "spec.config.service.pipelines.%s: expected a map, got %s", name, jtype_name(p));
    json_object *o = jnew_obj();
    for (int i = 0; i < 3; i++) {
        char path[320];
        json_object *l;
        snprintf(path, sizeof path, "spec.config.service.pipelines.%s.%s", name, keys[i]);
        if (shape_strings(jget(p, keys[i]), path, &l, err, errlen) < 0) {
            json_object_put(o);
            return -1;
        }
        if (l) jset(o, keys[i], l);
    }
    *out = o;
    return 0;
}

static int shape_service(json_object *in, json_object *out, char *err, size_t errlen) {
    json_object *svc = jget(in, "service"), *o = jset_obj(out, "service"), *l, *v;
    if (svc != NULL && !json_object_is_type(svc, json_type_object))
        return err_printf(err, errlen, "spec.config.service: expected a map, got %s", jtype_name(svc));
    if (shape_strings(jget(svc, "extensions"), "spec.config.service.extensions", &l, err, errlen) < 0) return -1;
    if (l) jset(o, "extensions", l);
    if ((v = jget(svc, "telemetry")) != NULL) {
        if (!json_object_is_type(v, json_type_object))
            return err_printf(err, errlen, "spec.config.service.telemetry: expected a map, got %s", jtype_name(v));
        json_object *c = jcopy(v);
        integral_numbers(c);
        jset(o, "telemetry", c);
    }
    json_object *pipes = jset_obj(o, "pipelines");
    if ((v = jget(svc, "pipelines")) == NULL) return 0;
    if (!json_object_is_type(v, json_type_object))
        return err_printf(err, errlen, "spec.config.service.pipelines: expected a map, got %s", jtype_name(v));
    json_object_object_foreach(v, name, p) {
        json_object *po;
        if (shape_pipeline(name, p, &po, err, errlen) < 0) return -1;
        jset(pipes, name, po);
    }
    return 0;
}

/* in (NULL: none) in the shape, or NULL with err. */
static json_object *shape_config(json_object *in, char *err, size_t errlen) {
    json_object *out = jnew_obj();
    if (in != NULL && !json_object_is_type(in, json_type_object)) {
        err_printf(err, errlen, "spec.config is not a map");
        goto fail;
    }
    if (shape_section(in, out, "receivers", true, err, errlen) < 0 ||
        shape_section(in, out, "exporters", true, err, errlen) < 0 ||
        shape_section(in, out, "processors", false, err, errlen) < 0 ||
        shape_section(in, out, "connectors", false, err, errlen) < 0 ||
        shape_section(in, out, "extensions", false, err, errlen) < 0 || shape_service(in, out, err, errlen) < 0)
        goto fail;
    return out;
fail:
    json_object_put(out);
    return NULL;
}

static json_object *config_from_yaml(const char *text, size_t len, collector_convert_budget *budget, char *err,
                                     size_t errlen) {
    kube_yaml_doc *docs = NULL;
    size_t n = 0;
    kube_yaml_error ye;
    int rc = budget ? kube_yaml_parse_budget(text ? text : "", text ? len : 0, &docs, &n, &ye, &budget->yaml)
                    : kube_yaml_parse(text ? text : "", text ? len : 0, &docs, &n, &ye);
    if (rc != 0) {
        err_printf(err, errlen, "spec.config line %d: %s", ye.line, ye.msg);
        if (budget && budget->yaml.exceeded) budget->exceeded = 1;
        return NULL;
    }
    /* The first document, as the reference's YAML decoder reads it. */
    json_object *cfg = shape_config(n ? docs[0].obj : NULL, err, errlen);
    kube_yaml_docs_free(docs, n);
    return cfg;
}

json_object *collector_convert_config_from_yaml(const char *text, size_t len, char *err, size_t errlen) {
    return config_from_yaml(text, len, NULL, err, errlen);
}

static json_object *empty_config(void) { return shape_config(NULL, NULL, 0); }

/* ---------------------------------------------------------------------------
 * Shared pieces.
 */

/* The two monitor selectors: v1alpha1 maps of labels, v1beta1 selectors. */
static const char *const SELECTORS[] = {"podMonitorSelector", "serviceMonitorSelector", NULL};

/* spec fields both versions have under the same name and shape. */
static const char *const SPEC_SHARED[] = {
    "managementState", "resources", "nodeSelector", "args", "replicas", "securityContext", "podSecurityContext",
    "podAnnotations", "serviceAccount", "image", "imagePullPolicy", "volumeMounts", "env", "envFrom", "tolerations",
    "volumes", "affinity", "lifecycle", "terminationGracePeriodSeconds", "topologySpreadConstraints", "hostNetwork",
    "shareProcessNamespace", "priorityClassName", "initContainers", "additionalContainers", "trafficDistribution",
    "volumeClaimTemplates", "mode", "upgradeStrategy", "configmaps", "podDisruptionBudget", "ingress", "ports",
    "livenessProbe", "autoscaler", "deploymentUpdateStrategy", "serviceName", NULL};
static const char *const TA_SHARED[] = {"replicas", "nodeSelector", "resources", "serviceAccount", "image", "enabled",
                                        "affinity", "securityContext", "podSecurityContext",
                                        "topologySpreadConstraints", "tolerations", "env", "podDisruptionBudget",
                                        "allocationStrategy", "filterStrategy", NULL};
static const char *const PCR_SHARED[] = {"enabled", "scrapeInterval", "scrapeClasses", "denyFSAccessThroughSMs",
                                         NULL};
static const char *const STATUS_SHARED[] = {"scale", "version", "image", NULL};

/* metadata (a copy) with its annotations, created when asked. */
static json_object *annotations_of(json_object *meta, bool create) {
    json_object *a = jmap(meta, "annotations");
    if (!a && create) a = jset_obj(meta, "annotations");
    return a;
}

/* Removes key from the annotations; an annotations map left empty by it
 * goes too (it was there for our key only). */
static void drop_annotation(json_object *meta, const char *key) {
    json_object *a = annotations_of(meta, false);
    if (!a || !json_object_object_get_ex(a, key, NULL)) return;
    json_object_object_del(a, key);
    if (json_object_object_length(a) == 0) json_object_object_del(meta, "annotations");
}

static int check_meta(json_object *o, char *err, size_t errlen) {
    json_object *meta = jget(o, "metadata");
    if (want_obj(meta, "metadata", err, errlen) < 0) return -1;
    return want_obj(jget(meta, "annotations"), "metadata.annotations", err, errlen);
}

/* ---------------------------------------------------------------------------
 * v1beta1 -> v1alpha1. The overlay holds the fields v1alpha1 cannot hold,
 * at the path they came from; its inner objects are made only when
 * something is kept in them (an empty {} in the overlay is a value).
 */

typedef struct ovnode {
    struct ovnode *up;
    const char *key;
    json_object *obj;
} ovnode;

static json_object *ov_obj(ovnode *n) {
    if (!n->obj) n->obj = jobj_at(ov_obj(n->up), n->key);
    return n->obj;
}

static void keep(ovnode *n, const char *key, json_object *v) { jset(ov_obj(n), key, jcopy(v)); }

/* A deep copy with every object's keys sorted: the annotation's text
 * depends on what it holds, not on the order fields came in. */
static json_object *sorted_deep(json_object *v) {
    if (json_object_is_type(v, json_type_array)) {
        json_object *a = jnew_arr();
        for (size_t i = 0; i < json_object_array_length(v); i++) jpush(a, sorted_deep(json_object_array_get_idx(v, i)));
        return a;
    }
    if (!json_object_is_type(v, json_type_object)) return jcopy(v);
    size_t n;
    jkv *m = jsorted_members(v, &n);
    json_object *o = jnew_obj();
    for (size_t i = 0; i < n; i++) jset(o, m[i].key, sorted_deep(m[i].val));
    free(m);
    return o;
}

/* observability: metrics.{enableMetrics, disablePrometheusAnnotations}
 * map; the rest (extraLabels, ...) is kept aside. */
static int obs_to_alpha(json_object *v, const char *path, json_object *out, ovnode *up, char *err, size_t errlen) {
    char p[96];
    ovnode on = {up, "observability", NULL}, mn = {&on, "metrics", NULL};
    if (want_obj(v, path, err, errlen) < 0) return -1;
    if (v == NULL) {
        jset(out, "observability", NULL);
        return 0;
    }
    json_object *o = jset_obj(out, "observability");
    json_object_object_foreach(v, k, x) {
        if (strcmp(k, "metrics") != 0) {
            keep(&on, k, x);
            continue;
        }
        snprintf(p, sizeof p, "%s.metrics", path);
        if (want_obj(x, p, err, errlen) < 0) return -1;
        if (x == NULL) {
            jset(o, "metrics", NULL);
            continue;
        }
        json_object *m = jset_obj(o, "metrics");
        json_object_object_foreach(x, mk, mv) {
            if (strcmp(mk, "enableMetrics") == 0) jset(m, mk, jcopy(mv));
            else if (strcmp(mk, "disablePrometheusAnnotations") == 0) jset(m, "DisablePrometheusAnnotations", jcopy(mv));
            else keep(&mn, mk, mv);
        }
    }
    return 0;
}

static int pcr_to_alpha(json_object *v, json_object *out, ovnode *up, char *err, size_t errlen) {
    static const char path[] = "spec.targetAllocator.prometheusCR";
    char p[128];
    ovnode pn = {up, "prometheusCR", NULL};
    if (want_obj(v, path, err, errlen) < 0) return -1;
    if (v == NULL) {
        jset(out, "prometheusCR", NULL);
        return 0;
    }
    json_object *o = jset_obj(out, "prometheusCR");
    json_object_object_foreach(v, k, x) {
        if (in_list(PCR_SHARED, k)) {
            jset(o, k, jcopy(x));
        } else if (in_list(SELECTORS, k)) {
            ovnode sn = {&pn, k, NULL};
            snprintf(p, sizeof p, "%s.%s", path, k);
            if (want_obj(x, p, err, errlen) < 0) return -1;
            json_object *ml = jget(x, "matchLabels");
            snprintf(p, sizeof p, "%s.%s.matchLabels", path, k);
            if (want_obj(ml, p, err, errlen) < 0) return -1;
            if (ml && json_object_object_length(ml) > 0) jset(o, k, jcopy(ml));
            if (x) {
                json_object_object_foreach(x, sk, sv) {
                    if (strcmp(sk, "matchLabels") != 0) keep(&sn, sk, sv);
                }
            }
        } else {
            keep(&pn, k, x);
        }
    }
    /* Absent in v1beta1 selects nothing; absent in v1alpha1 comes back as
     * {} (everything): a null in the overlay says which it was. */
    for (const char *const *s = SELECTORS; *s; s++)
        if (jget(v, *s) == NULL) jset(ov_obj(&pn), *s, NULL);
    return 0;
}

static int ta_to_alpha(json_object *v, json_object *out, ovnode *up, char *err, size_t errlen) {
    ovnode tn = {up, "targetAllocator", NULL};
    if (want_obj(v, "spec.targetAllocator", err, errlen) < 0) return -1;
    if (v == NULL) {
        jset(out, "targetAllocator", NULL);
        return 0;
    }
    json_object *o = jset_obj(out, "targetAllocator");
    json_object_object_foreach(v, k, x) {
        if (strcmp(k, "prometheusCR") == 0) {
            if (pcr_to_alpha(x, o, &tn, err, errlen) < 0) return -1;
        } else if (strcmp(k, "observability") == 0) {
            if (obs_to_alpha(x, "spec.targetAllocator.observability", o, &tn, err, errlen) < 0) return -1;
        } else if (in_list(TA_SHARED, k)) {
            jset(o, k, jcopy(x));
        } else {
            keep(&tn, k, x);
        }
    }
    return 0;
}

/* The config as v1alpha1's YAML string (6.4). */
static int config_to_alpha(json_object *cfg, json_object *meta, json_object *out, collector_convert_budget *budget,
                           char *err, size_t errlen) {
    if (want_obj(cfg, "spec.config", err, errlen) < 0) return -1;
    json_object *shaped = shape_config(cfg, err, errlen);
    if (!shaped) return -1;
    /* Still exactly what an unreadable v1alpha1 config became: the text it
     * was (convert.h). */
    const char *kept = jstr(annotations_of(meta, false), COLLECTOR_CONVERT_CONFIG);
    json_object *empty = empty_config();
    bool restore = kept && json_object_equal(shaped, empty);
    json_object_put(empty);
    if (restore) {
        jset_str(out, "config", kept);
        json_object_put(shaped);
        return 0;
    }
    /* Changed since: the text is history, and the v1alpha1 object that is
     * written back (if one is) has a config that reads. */
    drop_annotation(meta, COLLECTOR_CONVERT_CONFIG);
    bool too_big = false;
    size_t cap = budget ? budget->yaml_bytes : 0;
    char *yaml = collector_config_yaml_capped(shaped, cap, &too_big);
    json_object_put(shaped);
    if (too_big) {
        budget->exceeded = 1;
        return err_printf(err, errlen, "failed to convert to v1alpha1: spec.config as YAML takes more than the %zu bytes left of the review's answer limit",
                          cap);
    }
    if (!yaml)
        return err_printf(err, errlen, "failed to convert to v1alpha1: spec.config nests deeper than %d levels",
                          COLLECTOR_YAML_MAX_DEPTH);
    jset_str(out, "config", yaml);
    free(yaml);
    return 0;
}

static int spec_to_alpha(json_object *spec, json_object *meta, json_object *out, ovnode *ov,
                         collector_convert_budget *budget, char *err, size_t errlen) {
    bool config = false;
    if (spec) {
        json_object_object_foreach(spec, k, v) {
            if (strcmp(k, "config") == 0) {
                if (config_to_alpha(v, meta, out, budget, err, errlen) < 0) return -1;
                config = true;
            } else if (strcmp(k, "daemonSetUpdateStrategy") == 0) {
                jset(out, "updateStrategy", jcopy(v));
            } else if (strcmp(k, "observability") == 0) {
                if (obs_to_alpha(v, "spec.observability", out, ov, err, errlen) < 0) return -1;
            } else if (strcmp(k, "targetAllocator") == 0) {
                if (ta_to_alpha(v, out, ov, err, errlen) < 0) return -1;
            } else if (in_list(SPEC_SHARED, k)) {
                jset(out, k, jcopy(v));
            } else {
                keep(ov, k, v);
            }
        }
    }
    /* v1alpha1 requires the config. */
    if (!config && config_to_alpha(NULL, meta, out, budget, err, errlen) < 0) return -1;
    return 0;
}

static json_object *to_alpha_fn(json_object *beta, collector_convert_budget *budget, char *err, size_t errlen) {
    json_object *out = NULL, *fields = jnew_obj(), *meta, *spec, *status;
    ovnode root = {NULL, NULL, fields}, sn = {&root, "spec", NULL}, stn = {&root, "status", NULL};
    if (!json_object_is_type(beta, json_type_object)) {
        err_printf(err, errlen, "expected an object, got %s", jtype_name(beta));
        goto fail;
    }
    spec = jget(beta, "spec");
    status = jget(beta, "status");
    if (check_meta(beta, err, errlen) < 0 || want_obj(spec, "spec", err, errlen) < 0 ||
        want_obj(status, "status", err, errlen) < 0)
        goto fail;
    out = jnew_obj();
    jset_str(out, "apiVersion", ALPHA);
    jset_str(out, "kind", "OpenTelemetryCollector");
    meta = jset(out, "metadata", jmap(beta, "metadata") ? jcopy(jmap(beta, "metadata")) : jnew_obj());
    json_object_object_foreach(beta, k, v) {
        if (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")) continue;
        if (strcmp(k, "spec") == 0) {
            if (spec_to_alpha(v, meta, jset_obj(out, "spec"), &sn, budget, err, errlen) < 0) goto fail;
        } else if (strcmp(k, "status") == 0 && v) {
            json_object *s = jset_obj(out, "status");
            json_object_object_foreach(v, sk, sv) {
                if (in_list(STATUS_SHARED, sk)) jset(s, sk, jcopy(sv));
                else keep(&stn, sk, sv);
            }
        } else {
            jset(out, k, jcopy(v));
        }
    }
    if (!has_key(out, "spec") && spec_to_alpha(NULL, meta, jset_obj(out, "spec"), &sn, budget, err, errlen) < 0)
        goto fail;
    /* A stale copy of ours never survives: this conversion says what is kept. */
    drop_annotation(meta, COLLECTOR_CONVERT_FIELDS);
    if (json_object_object_length(fields) > 0) {
        json_object *sorted = sorted_deep(fields);
        char *text = jtext(sorted, NULL);
        jset_str(annotations_of(meta, true), COLLECTOR_CONVERT_FIELDS, text);
        free(text);
        json_object_put(sorted);
    }
    json_object_put(fields);
    return out;
fail:
    json_object_put(out);
    json_object_put(fields);
    return NULL;
}

json_object *collector_convert_to_v1alpha1(json_object *beta, char *err, size_t errlen) {
    return to_alpha_fn(beta, NULL, err, errlen);
}

/* ---------------------------------------------------------------------------
 * v1alpha1 -> v1beta1.
 */

static int obs_to_beta(json_object *v, const char *path, json_object *out, char *err, size_t errlen) {
    char p[96];
    if (want_obj(v, path, err, errlen) < 0) return -1;
    if (v == NULL) {
        jset(out, "observability", NULL);
        return 0;
    }
    json_object *o = jset_obj(out, "observability");
    json_object_object_foreach(v, k, x) {
        if (strcmp(k, "metrics") != 0 || x == NULL) {
            jset(o, k, jcopy(x));
            continue;
        }
        snprintf(p, sizeof p, "%s.metrics", path);
        if (want_obj(x, p, err, errlen) < 0) return -1;
        bool real = has_key(x, "DisablePrometheusAnnotations");
        json_object *m = jset_obj(o, "metrics");
        json_object_object_foreach(x, mk, mv) {
            /* The capital D is v1alpha1's real JSON key. */
            if (strcmp(mk, "DisablePrometheusAnnotations") == 0) jset(m, "disablePrometheusAnnotations", jcopy(mv));
            else if (!(real && strcmp(mk, "disablePrometheusAnnotations") == 0)) jset(m, mk, jcopy(mv));
        }
    }
    return 0;
}

static int pcr_to_beta(json_object *v, json_object *out, char *err, size_t errlen) {
    static const char path[] = "spec.targetAllocator.prometheusCR";
    char p[128];
    if (want_obj(v, path, err, errlen) < 0) return -1;
    if (v == NULL) {
        jset(out, "prometheusCR", NULL);
        return 0;
    }
    json_object *o = jset_obj(out, "prometheusCR");
    json_object_object_foreach(v, k, x) {
        if (!in_list(SELECTORS, k)) {
            jset(o, k, jcopy(x));
            continue;
        }
        snprintf(p, sizeof p, "%s.%s", path, k);
        if (want_obj(x, p, err, errlen) < 0) return -1;
    }
    /* Always there: an absent v1alpha1 map selects every monitor, which in
     * v1beta1 is {}, not absent. */
    for (const char *const *s = SELECTORS; *s; s++) {
        json_object *m = jget(v, *s), *sel = jset_obj(o, *s);
        if (m && json_object_object_length(m) > 0) jset(sel, "matchLabels", jcopy(m));
    }
    return 0;
}

static int ta_to_beta(json_object *v, json_object *out, char *err, size_t errlen) {
    static const char *const strategies[] = {"least-weighted", "consistent-hashing", "per-node", NULL};
    if (want_obj(v, "spec.targetAllocator", err, errlen) < 0) return -1;
    if (v == NULL) {
        jset(out, "targetAllocator", NULL);
        return 0;
    }
    json_object *o = jset_obj(out, "targetAllocator");
    json_object_object_foreach(v, k, x) {
        const char *s = json_object_is_type(x, json_type_string) ? json_object_get_string(x) : NULL;
        if (strcmp(k, "allocationStrategy") == 0) {
            /* The known strategies map one to one; any other becomes the
             * empty one, which v1beta1 leaves out. */
            if (s && in_list(strategies, s)) jset_str(o, k, s);
        } else if (strcmp(k, "filterStrategy") == 0) {
            if (s && strcmp(s, "relabel-config") == 0) jset_str(o, k, s);
        } else if (strcmp(k, "prometheusCR") == 0) {
            if (pcr_to_beta(x, o, err, errlen) < 0) return -1;
        } else if (strcmp(k, "observability") == 0) {
            if (obs_to_beta(x, "spec.targetAllocator.observability", o, err, errlen) < 0) return -1;
        } else {
            jset(o, k, jcopy(x));
        }
    }
    return 0;
}

/* The deprecated spec.minReplicas/maxReplicas fill the autoscaler's own
 * where it has none. */
static int fold_replicas(json_object *alpha_spec, json_object *out, char *err, size_t errlen) {
    static const char *const keys[] = {"minReplicas", "maxReplicas"};
    json_object *as = jget(out, "autoscaler");
    bool any = false;
    for (int i = 0; i < 2; i++) {
        json_object *v = jget(alpha_spec, keys[i]);
        if (v && !json_object_is_type(v, json_type_int))
            return err_printf(err, errlen, "spec.%s: expected an integer, got %s", keys[i], jtype_name(v));
        any |= v != NULL;
    }
    if (!any) return 0;
    if (!as) as = jset_obj(out, "autoscaler");
    for (int i = 0; i < 2; i++)
        if (jget(as, keys[i]) == NULL && jget(alpha_spec, keys[i])) jset(as, keys[i], jcopy(jget(alpha_spec, keys[i])));
    return 0;
}

/* The overlay back where the v1alpha1 object says nothing (convert.c's
 * header: only the conversion's own levels are merged into). */
typedef enum { L_SPEC, L_TA, L_PCR, L_OBS, L_METRICS, L_STATUS, L_LEAF } level;

static level child_level(level l, const char *key) {
    if (l == L_SPEC && strcmp(key, "targetAllocator") == 0) return L_TA;
    if ((l == L_SPEC || l == L_TA) && strcmp(key, "observability") == 0) return L_OBS;
    if (l == L_TA && strcmp(key, "prometheusCR") == 0) return L_PCR;
    if (l == L_OBS && strcmp(key, "metrics") == 0) return L_METRICS;
    return L_LEAF;
}

static void fill(json_object *dst, json_object *src, level l) {
    json_object_object_foreach(src, k, v) {
        json_object *d = NULL;
        bool present = json_object_object_get_ex(dst, k, &d);
        if (l == L_PCR && in_list(SELECTORS, k)) {
            /* The selector conversion made it: a null says v1beta1 had none
             * (kept unless the v1alpha1 map now names labels), an object
             * holds what is not matchLabels. */
            if (!json_object_is_type(d, json_type_object)) {
                if (!present && v) jset(dst, k, jcopy(v));
                continue;
            }
            if (v == NULL) {
                if (!has_key(d, "matchLabels")) json_object_object_del(dst, k);
            } else if (json_object_is_type(v, json_type_object)) {
                json_object_object_foreach(v, sk, sv) {
                    if (!has_key(d, sk)) jset(d, sk, jcopy(sv));
                }
            }
            continue;
        }
        if (!present) {
            jset(dst, k, jcopy(v));
            continue;
        }
        level c = child_level(l, k);
        if (c != L_LEAF && json_object_is_type(d, json_type_object) && json_object_is_type(v, json_type_object))
            fill(d, v, c);
    }
}

static void config_unread(collector_convert_notes *notes, json_object *meta, const char *text, size_t len,
                          const char *why) {
    if (len > COLLECTOR_CONVERT_CONFIG_MAX) {
        drop_annotation(meta, COLLECTOR_CONVERT_CONFIG);
        if (notes)
            snprintf(notes->config, sizeof notes->config, "%s (the text, %zu bytes, is over %d: not kept)", why, len,
                     COLLECTOR_CONVERT_CONFIG_MAX);
        return;
    }
    jset(annotations_of(meta, true), COLLECTOR_CONVERT_CONFIG, jnew_strn(text, len));
    if (notes) snprintf(notes->config, sizeof notes->config, "%s", why);
}

static int spec_to_beta(json_object *spec, json_object *meta, json_object *out, collector_convert_notes *notes,
                        collector_convert_budget *budget, char *err, size_t errlen) {
    bool config = false, real_update = has_key(spec, "updateStrategy");
    if (spec) {
        json_object_object_foreach(spec, k, v) {
            if (strcmp(k, "config") == 0) {
                if (v != NULL && !json_object_is_type(v, json_type_string))
                    return err_printf(err, errlen, "spec.config: expected a string, got %s", jtype_name(v));
                const char *text = v ? json_object_get_string(v) : "";
                size_t len = v ? (size_t)json_object_get_string_len(v) : 0;
                char why[256];
                json_object *cfg = config_from_yaml(text, len, budget, why, sizeof why);
                if (!cfg && budget && budget->exceeded) return err_printf(err, errlen, "%s", why);
                if (cfg) {
                    drop_annotation(meta, COLLECTOR_CONVERT_CONFIG);
                } else {
                    /* Never a failure (6.4): the empty config, and the text kept. */
                    cfg = empty_config();
                    config_unread(notes, meta, text, len, why);
                }
                jset(out, "config", cfg);
                config = true;
            } else if (strcmp(k, "updateStrategy") == 0) {
                jset(out, "daemonSetUpdateStrategy", jcopy(v));
            } else if (strcmp(k, "daemonSetUpdateStrategy") == 0 && real_update) {
                continue; /* v1alpha1's own field wins */
            } else if (strcmp(k, "minReplicas") == 0 || strcmp(k, "maxReplicas") == 0) {
                continue; /* folded into the autoscaler below */
            } else if (strcmp(k, "autoscaler") == 0) {
                if (want_obj(v, "spec.autoscaler", err, errlen) < 0) return -1;
                jset(out, k, jcopy(v));
            } else if (strcmp(k, "observability") == 0) {
                if (obs_to_beta(v, "spec.observability", out, err, errlen) < 0) return -1;
            } else if (strcmp(k, "targetAllocator") == 0) {
                if (ta_to_beta(v, out, err, errlen) < 0) return -1;
            } else {
                jset(out, k, jcopy(v));
            }
        }
    }
    if (!config) {
        jset(out, "config", empty_config());
        drop_annotation(meta, COLLECTOR_CONVERT_CONFIG);
    }
    return fold_replicas(spec, out, err, errlen);
}

/* The overlay of a v1alpha1 object, or NULL (then said in notes). */
static json_object *read_fields(json_object *meta, collector_convert_notes *notes) {
    json_object *a = annotations_of(meta, false), *v = jget(a, COLLECTOR_CONVERT_FIELDS), *o = NULL;
    if (!v) return NULL;
    if (json_object_is_type(v, json_type_string)) {
        json_tokener *t = json_tokener_new_ex(64);
        if (!t) base_oom();
        const char *s = json_object_get_string(v);
        int n = json_object_get_string_len(v);
        o = json_tokener_parse_ex(t, s, n);
        if (json_tokener_get_error(t) != json_tokener_success || (size_t)json_tokener_get_parse_end(t) != (size_t)n) {
            json_object_put(o);
            o = NULL;
        }
        json_tokener_free(t);
    }
    if (!json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = NULL;
        if (notes)
            snprintf(notes->fields, sizeof notes->fields,
                     "metadata.annotations." COLLECTOR_CONVERT_FIELDS ": not a JSON object; the fields it kept are lost");
    }
    return o;
}

static json_object *to_beta_fn(json_object *alpha, collector_convert_notes *notes, collector_convert_budget *budget,
                            char *err, size_t errlen) {
    json_object *out = NULL, *fields = NULL, *meta, *spec, *status;
    if (notes) memset(notes, 0, sizeof *notes);
    if (!json_object_is_type(alpha, json_type_object)) {
        err_printf(err, errlen, "expected an object, got %s", jtype_name(alpha));
        return NULL;
    }
    spec = jget(alpha, "spec");
    status = jget(alpha, "status");
    if (check_meta(alpha, err, errlen) < 0 || want_obj(spec, "spec", err, errlen) < 0 ||
        want_obj(status, "status", err, errlen) < 0)
        return NULL;
    out = jnew_obj();
    jset_str(out, "apiVersion", BETA);
    jset_str(out, "kind", "OpenTelemetryCollector");
    meta = jset(out, "metadata", jmap(alpha, "metadata") ? jcopy(jmap(alpha, "metadata")) : jnew_obj());
    fields = read_fields(meta, notes);
    drop_annotation(meta, COLLECTOR_CONVERT_FIELDS);
    json_object_object_foreach(alpha, k, v) {
        if (!strcmp(k, "apiVersion") || !strcmp(k, "kind") || !strcmp(k, "metadata")) continue;
        if (strcmp(k, "spec") == 0) {
            if (spec_to_beta(v, meta, jset_obj(out, "spec"), notes, budget, err, errlen) < 0) goto fail;
        } else if (strcmp(k, "status") == 0 && v) {
            /* messages and replicas: deprecated, and v1beta1 has no place for them. */
            json_object *s = jset_obj(out, "status");
            json_object_object_foreach(v, sk, sv) {
                if (strcmp(sk, "messages") != 0 && strcmp(sk, "replicas") != 0) jset(s, sk, jcopy(sv));
            }
        } else {
            jset(out, k, jcopy(v));
        }
    }
    if (!has_key(out, "spec") && spec_to_beta(NULL, meta, jset_obj(out, "spec"), notes, budget, err, errlen) < 0)
        goto fail;
    if (jmap(fields, "spec")) fill(jmap(out, "spec"), jmap(fields, "spec"), L_SPEC);
    if (jmap(fields, "status")) {
        json_object *s = jmap(out, "status");
        if (!s) s = jset_obj(out, "status");
        fill(s, jmap(fields, "status"), L_STATUS);
    }
    json_object_put(fields);
    return out;
fail:
    json_object_put(out);
    json_object_put(fields);
    return NULL;
}

json_object *collector_convert_to_v1beta1(json_object *alpha, collector_convert_notes *notes, char *err,
                                          size_t errlen) {
    return to_beta_fn(alpha, notes, NULL, err, errlen);
}

json_object *collector_convert(json_object *obj, const char *desired, collector_convert_notes *notes, char *err,
                               size_t errlen) {
    return collector_convert_budgeted(obj, desired, notes, NULL, err, errlen);
}

json_object *collector_convert_budgeted(json_object *obj, const char *desired, collector_convert_notes *notes,
                                        collector_convert_budget *budget, char *err, size_t errlen) {
    if (notes) memset(notes, 0, sizeof *notes);
    if (!json_object_is_type(obj, json_type_object)) {
        err_printf(err, errlen, "expected an object, got %s", jtype_name(obj));
        return NULL;
    }
    const char *api = jstr(obj, "apiVersion"), *kind = jstr(obj, "kind");
    bool to_alpha = desired && strcmp(desired, ALPHA) == 0, to_beta = desired && strcmp(desired, BETA) == 0;
    if (!to_alpha && !to_beta) {
        err_printf(err, errlen, "desired version \"%s\": expected " ALPHA " or " BETA, desired ? desired : "");
        return NULL;
    }
    if (!kind || strcmp(kind, "OpenTelemetryCollector") != 0 || !api || (strcmp(api, ALPHA) && strcmp(api, BETA))) {
        err_printf(err, errlen, "not an " ALPHA " or " BETA " OpenTelemetryCollector (apiVersion \"%s\", kind \"%s\")",
                   api ? api : "", kind ? kind : "");
        return NULL;
    }
    if (strcmp(api, desired) == 0) {
        err_printf(err, errlen, "already %s: converting to the same version is not allowed", api);
        return NULL;
    }
    return to_beta ? to_beta_fn(obj, notes, budget, err, errlen) : to_alpha_fn(obj, budget, err, errlen);
}
