/* mutate/sdk.c - the OTEL_* environment every language shares (spec 3).
 *
 * The resource attributes are built as a small map, later sources
 * overriding earlier ones, and serialised sorted by key, exactly as the
 * reference does. Two deliberate differences (docs/compat.md): keys already
 * present in the container's own OTEL_RESOURCE_ATTRIBUTES are never written
 * again, k8s.pod.name and k8s.node.name included (spec 7.5), and a
 * valueFrom OTEL_RESOURCE_ATTRIBUTES is left alone instead of being given a
 * value too, which the API server would reject (spec 7.2).
 *
 * The owner walk (ReplicaSet -> Deployment, Job -> CronJob) runs once per
 * request whatever the number of containers and languages (spec 7.14). When
 * a ReplicaSet cannot be found, the Deployment name is its name minus the
 * pod-template-hash suffix, the rule the ReplicaSet controller names by. */
#include "mutate/internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POD_NAME_VAR "OTEL_RESOURCE_ATTRIBUTES_POD_NAME"
#define POD_UID_VAR "OTEL_RESOURCE_ATTRIBUTES_POD_UID"
#define NODE_NAME_VAR "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME"
#define ORA "OTEL_RESOURCE_ATTRIBUTES"

/* The attribute map of one container: key -> value, and the keys the
 * container's own OTEL_RESOURCE_ATTRIBUTES already has (never written).
 * Hash tables: with up to MUTATE_MAX_ANNOTATIONS annotations and
 * MUTATE_MAX_RESOURCE_ATTRIBUTES existing items per container, a list
 * scanned per key would be quadratic. Open addressing, one hash per put:
 * a dozen attributes per container, which json-c objects cost an
 * allocation, a key copy and two hashes each, and a sort of their members
 * to write out. The map lives for one call of sdk_configure or
 * sdk_service_name, so it borrows what outlives it (literals, the pod's,
 * the container's and the Instrumentation's strings, the owners) and owns
 * only what it was given as a copy (amap_set_copy: reused buffers) or a
 * malloc'ed string (amap_set_take), and the existing keys, cut out of a
 * value that may be replaced. */
typedef struct aslot {
    const char *key, *val; /* key NULL: free slot */
    char *own;             /* what to free: val when the map owns it */
} aslot;

typedef struct atable {
    aslot *slot;
    size_t n, mask; /* mask + 1 slots, a power of two, at most half used */
    bool own_keys;
} atable;

typedef struct amap {
    atable vals;
    atable existing; /* values unused, keys owned */
} amap;

/* Eight bytes a step, then murmur3's finaliser so that the low bits the
 * mask keeps depend on every byte: a dozen keys of twenty bytes are
 * hashed per container, which FNV-1a's byte loop made a thousand
 * instructions. Not collision-resistant, as FNV-1a was not: the annotations
 * a pod may have are bounded (MUTATE_MAX_ANNOTATIONS). */
static size_t ahash(const char *k) {
    size_t n = strlen(k);
    uint64_t h = n * 0x9e3779b97f4a7c15u, w;
    for (; n >= 8; n -= 8, k += 8) {
        memcpy(&w, k, 8);
        h = (h ^ w) * 0x100000001b3u + (h >> 41);
    }
    w = 0; /* the last 0-7 bytes, in loads of a constant size */
    if (n >= 4) {
        uint32_t lo, hi;
        memcpy(&lo, k, 4);
        memcpy(&hi, k + n - 4, 4);
        w = lo | (uint64_t)hi << 32;
    } else if (n) {
        w = (uint64_t)(unsigned char)k[0] | (uint64_t)(unsigned char)k[n / 2] << 8 | (uint64_t)(unsigned char)k[n - 1] << 16;
    }
    h ^= w;
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdu;
    h ^= h >> 33;
    return (size_t)h;
}

/* The slot of k, or the free slot where it would go. */
static aslot *at_slot(const atable *t, const char *k, size_t h) {
    for (size_t i = h & t->mask;; i = (i + 1) & t->mask)
        if (!t->slot[i].key || !strcmp(t->slot[i].key, k)) return &t->slot[i];
}

static aslot *at_find(const atable *t, const char *k) {
    if (!t->n) return NULL;
    aslot *s = at_slot(t, k, ahash(k));
    return s->key ? s : NULL;
}

/* The slot of k, made when absent (taking k when the table owns its keys;
 * k is freed when it was there already). */
static aslot *at_put(atable *t, const char *k) {
    size_t h = ahash(k);
    if (t->n) {
        aslot *s = at_slot(t, k, h);
        if (s->key) {
            if (t->own_keys) free((char *)k);
            return s;
        }
    }
    if (2 * (t->n + 1) > t->mask + 1) {
        atable g = {xcalloc(t->mask ? 2 * (t->mask + 1) : 32, sizeof *g.slot), t->n, t->mask ? 2 * t->mask + 1 : 31,
                    t->own_keys};
        for (size_t i = 0; t->mask && i <= t->mask; i++) {
            if (!t->slot[i].key) continue;
            size_t j = ahash(t->slot[i].key) & g.mask;
            while (g.slot[j].key) j = (j + 1) & g.mask;
            g.slot[j] = t->slot[i];
        }
        free(t->slot);
        *t = g;
    }
    aslot *s = at_slot(t, k, h);
    s->key = k;
    t->n++;
    return s;
}

static void at_free(atable *t) {
    for (size_t i = 0, left = t->n; left && i <= t->mask; i++) {
        if (!t->slot[i].key) continue;
        left--;
        if (t->own_keys) free((char *)t->slot[i].key);
        if (t->slot[i].own) free(t->slot[i].own);
    }
    free(t->slot);
}

static bool amap_existing(const amap *a, const char *k) { return at_find(&a->existing, k) != NULL; }

static const char *amap_get(const amap *a, const char *k) {
    aslot *s = at_find(&a->vals, k);
    return s ? s->val : NULL;
}

/* k -> v, both borrowed: they must outlive the map. own, when not NULL, is
 * v's malloc'ed block, freed with the map or when k is set again. */
static void amap_put(amap *a, const char *k, const char *v, char *own) {
    if (!k || !v || !*v || amap_existing(a, k)) {
        free(own);
        return;
    }
    aslot *s = at_put(&a->vals, k);
    free(s->own);
    s->val = v;
    s->own = own;
}

static void amap_set(amap *a, const char *k, const char *v) { amap_put(a, k, v, NULL); }

static void amap_set_take(amap *a, const char *k, char *v) { amap_put(a, k, v, v); }

static void amap_set_copy(amap *a, const char *k, const char *v) {
    if (!k || !v || !*v || amap_existing(a, k)) return;
    amap_set_take(a, k, xstrdup(v));
}

/* One attribute for the write-out: its key's first eight bytes as a
 * big-endian number (zero-padded), whose order is strcmp's on them, and
 * the lengths, which the write-out needs anyway. */
typedef struct sattr {
    uint64_t pre;
    const char *key, *val;
    size_t kl, vl;
} sattr;

static int sattr_cmp(const sattr *x, const sattr *y) {
    if (x->pre != y->pre) return x->pre < y->pre ? -1 : 1;
    return strcmp(x->key, y->key);
}

static int sattr_qcmp(const void *x, const void *y) { return sattr_cmp(x, y); }

/* The attributes sorted by key (bytewise), borrowed from a, in a malloc'ed
 * array of *n (free it). A dozen keys are sorted in place here, without
 * qsort's call per comparison, most of them told apart by their prefixes
 * without a strcmp; a pod's many annotations go to qsort. */
static sattr *amap_sorted(const amap *a, size_t *n) {
    sattr *v = xmalloc((a->vals.n ? a->vals.n : 1) * sizeof *v);
    size_t k = 0;
    for (size_t i = 0; a->vals.mask && i <= a->vals.mask; i++) {
        const aslot *s = &a->vals.slot[i];
        if (!s->key) continue;
        sattr *x = &v[k++];
        x->key = s->key;
        x->val = s->val;
        x->kl = strlen(s->key);
        x->vl = strlen(s->val);
        x->pre = 0;
        if (x->kl >= 8) {
            memcpy(&x->pre, s->key, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            x->pre = __builtin_bswap64(x->pre);
#endif
        } else {
            for (size_t j = 0; j < x->kl; j++) x->pre |= (uint64_t)(unsigned char)s->key[j] << (56 - 8 * j);
        }
    }
    if (k > 24) qsort(v, k, sizeof *v, sattr_qcmp);
    else
        for (size_t i = 1; i < k; i++) {
            sattr x = v[i];
            size_t j = i;
            for (; j && sattr_cmp(&v[j - 1], &x) > 0; j--) v[j] = v[j - 1];
            v[j] = x;
        }
    *n = k;
    return v;
}

static void amap_free(amap *a) {
    at_free(&a->vals);
    at_free(&a->existing);
}

/* Keys of an existing attribute list: items split on ',', trimmed, with
 * exactly one '=' (the reference's rule). */
static void parse_existing(amap *a, const char *value) {
    const char *p = value;
    while (p && *p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (eq && !memchr(eq + 1, '=', (size_t)(end - eq - 1))) {
            const char *ks = p, *ke = eq;
            while (ks < ke && isspace((unsigned char)*ks)) ks++;
            while (ke > ks && isspace((unsigned char)ke[-1])) ke--;
            at_put(&a->existing, xstrndup(ks, (size_t)(ke - ks)));
        }
        p = comma ? comma + 1 : NULL;
    }
}

/* jstr's answer for a member already found: strings only. */
static const char *str_of(json_object *v) {
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

static const char *const owner_kinds[] = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "CronJob", "Job"};
static const char *const owner_name_keys[] = {"k8s.deployment.name", "k8s.replicaset.name", "k8s.statefulset.name",
                                              "k8s.daemonset.name", "k8s.cronjob.name", "k8s.job.name"};
static const char *const owner_uid_keys[] = {"k8s.deployment.uid", "k8s.replicaset.uid", "k8s.statefulset.uid",
                                             "k8s.daemonset.uid", "k8s.cronjob.uid", "k8s.job.uid"};

static int owner_index(const char *kind) {
    for (int i = 0; i < 6; i++)
        if (streq_ci(kind, owner_kinds[i])) return i;
    return -1;
}

/* Records the owners listed in refs; parents of ReplicaSets and Jobs are
 * looked up and walked one level further. */
static void walk_refs(mctx *m, json_object *refs, int depth) {
    for (size_t i = 0; i < jlen(refs); i++) {
        json_object *ref = json_object_array_get_idx(refs, i);
        /* One pass over the reference's few members: jstr's answers. */
        const char *kind = NULL, *name = NULL, *uid = NULL;
        if (json_object_is_type(ref, json_type_object)) {
            json_object_object_foreach(ref, rk, rv) {
                if (rk[0] == 'k' && !strcmp(rk, "kind")) kind = str_of(rv);
                else if (rk[0] == 'n' && !strcmp(rk, "name")) name = str_of(rv);
                else if (rk[0] == 'u' && !strcmp(rk, "uid")) uid = str_of(rv);
            }
        }
        int k = owner_index(kind);
        if (k < 0 || !name) continue;
        m->owners.name[k] = name;
        m->owners.uid[k] = uid;
        if (depth > 0 || (k != OWNER_REPLICASET && k != OWNER_JOB)) continue;
        const kube_reader *src = m->req->src;
        json_object *obj = NULL;
        kube_found r = src ? src->get(src->ud, owner_kinds[k], m->ns, name, &obj) : KUBE_NOT_FOUND;
        if (r == KUBE_FOUND && obj) {
            walk_refs(m, jget(jget(obj, "metadata"), "ownerReferences"), depth + 1);
            continue;
        }
        if (k != OWNER_REPLICASET) continue;
        const char *hash = jstr(jget(m->meta, "labels"), "pod-template-hash");
        size_t nl = strlen(name), hl = hash ? strlen(hash) : 0;
        if (hl && nl > hl + 1 && name[nl - hl - 1] == '-' && strcmp(name + nl - hl, hash) == 0) {
            free(m->owner_fallback_rs);
            m->owner_fallback_rs = xstrndup(name, nl - hl - 1);
            m->owners.name[OWNER_DEPLOYMENT] = m->owner_fallback_rs;
            m->owners.uid[OWNER_DEPLOYMENT] = NULL;
        }
        if (r == KUBE_UNKNOWN) {
            mctx_warn(m, "ReplicaSet %s/%s could not be read in time; the deployment name was derived from the "
                         "pod-template-hash label", m->ns, name);
            mctx_skip(m, MUTATE_SKIP_LOOKUP);
        }
    }
}

const owner_info *owners_walk(mctx *m) {
    if (!m->owners.done) {
        m->owners.done = true;
        walk_refs(m, jget(m->meta, "ownerReferences"), 0);
    }
    return &m->owners;
}

/* s (n bytes) at out + w, as much as fits before the last byte; the new w. */
static size_t put_cut(char *out, size_t outlen, size_t w, const char *s, size_t n) {
    if (n > outlen - 1 - w) n = outlen - 1 - w;
    memcpy(out + w, s, n);
    return w + n;
}

/* The version part of an image reference (spec 3.7 step 7): the tag, the
 * digest, or tag@digest; "" when there is neither or the reference does
 * not parse. */
static void image_version(const char *image, char *out, size_t outlen) {
    out[0] = 0;
    if (!image || !*image) return;
    const char *at = strchr(image, '@');
    const char *name_end = at ? at : image + strlen(image);
    const char *digest = at ? at + 1 : NULL;
    if (digest) {
        const char *colon = strchr(digest, ':');
        if (!colon || colon == digest || !colon[1]) return;
        for (const char *p = colon + 1; *p; p++)
            if (!isxdigit((unsigned char)*p)) return;
    }
    const char *slash = NULL, *colon = NULL;
    for (const char *p = image; p < name_end; p++) {
        if (*p == '/') slash = p;
        if (*p == ':') colon = p;
    }
    const char *tag = NULL;
    size_t taglen = 0;
    if (colon && (!slash || colon > slash)) {
        tag = colon + 1;
        taglen = (size_t)(name_end - tag);
        if (!taglen || taglen > 128 || !(isalnum((unsigned char)tag[0]) || tag[0] == '_')) return;
        for (size_t i = 0; i < taglen; i++)
            if (!isalnum((unsigned char)tag[i]) && tag[i] != '_' && tag[i] != '.' && tag[i] != '-') return;
    }
    /* Repository names are lowercase. isupper is the C locale's, which the
     * program never changes: 'A' to 'Z'. */
    for (const char *p = slash ? slash + 1 : image; p < (tag ? tag - 1 : name_end); p++)
        if (*p >= 'A' && *p <= 'Z') return;
    /* snprintf's "%.*s@%s" (cut to outlen - 1 bytes), without its parsing
     * of the format for each pod. */
    size_t w = 0;
    if (tag) w = put_cut(out, outlen, w, tag, taglen);
    if (tag && digest) w = put_cut(out, outlen, w, "@", 1);
    if (digest) w = put_cut(out, outlen, w, digest, strlen(digest));
    out[w] = 0;
}

static const char *scalar_str(json_object *v, char *buf, size_t len) {
    if (json_object_is_type(v, json_type_string)) return json_object_get_string(v);
    if (!v || json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array)) return NULL;
    snprintf(buf, len, "%s", json_object_get_string(v));
    return buf;
}

/* A container and its env list, looked up (or made, as env_list does) at
 * the first append and kept for the next: sdk_configure appends half a
 * dozen entries, and nothing it does in between replaces the list. */
typedef struct cenv {
    json_object *c, *env;
} cenv;

static json_object *cenv_list(cenv *ce) { return ce->env ? ce->env : (ce->env = env_list(ce->c)); }
static void cenv_push(cenv *ce, json_object *e) { jpush(cenv_list(ce), json_object_get(e)); }
static void cenv_append(cenv *ce, const char *name, const char *value) {
    jpush(cenv_list(ce), env_new_value(name, value));
}

/* A downward-API entry the same in every pod, from the thread's cache:
 * appended to ce, or put first in c when ce is NULL. */
static void const_field(lctx *l, json_object *c, cenv *ce, unsigned slot) {
    json_object *e = cache_const(l->m->req->cache, slot, env_const_field);
    if (ce) cenv_push(ce, e);
    else env_push_front(c, e);
    json_object_put(e);
}

/* The two IP entries go first, then spec.env's entries the container
 * lacks; the IPs are looked up in the same scan as spec.env's names, each
 * counted as set (it is, or is about to be) for spec.env's entries. */
void sdk_common_env(lctx *l, json_object *c) {
    static const char *const ips[2] = {"OTEL_POD_IP", "OTEL_NODE_IP"};
    json_object *seen[2];
    if (l->part) env_share_if_not_set_but(c, l->part->env, l->part->env_names, ips, 2, seen);
    else env_append_if_not_set_but(c, jw_get(l->ispec, "env"), ips, 2, seen);
    /* Prepended after the appends, the order the other way round gives. */
    if (!seen[0]) const_field(l, c, NULL, CACHE_CONST_POD_IP);
    if (!seen[1]) const_field(l, c, NULL, CACHE_CONST_NODE_IP);
}

static bool inst_uids(json_object *ispec) {
    return json_object_get_boolean(jget(jget(ispec, "resource"), "addK8sUIDAttributes"));
}

static bool inst_use_labels(json_object *ispec) {
    return json_object_get_boolean(jget(jget(ispec, "defaults"), "useLabelsForResourceAttributes"));
}

/* spec.exporter.tls's names, pointing into tls; secret and configMap
 * names that are empty are none. */
static void tls_names(json_object *tls, const char **secret, const char **configmap, const char **ca,
                      const char **cert, const char **key) {
    *secret = jstr(tls, "secretName");
    *configmap = jstr(tls, "configMapName");
    *ca = jstr(tls, "ca_file");
    *cert = jstr(tls, "cert_file");
    *key = jstr(tls, "key_file");
    if (*secret && !**secret) *secret = NULL;
    if (*configmap && !**configmap) *configmap = NULL;
}

/* The env entries of spec.exporter.endpoint, spec.propagators and
 * spec.sampler, the same for every pod (NULL: not set), and the flags,
 * exporter TLS names and resource attributes sdk_configure reads: lang.c's inst_part, or
 * sdk_configure's own when it runs without one. */
void sdk_inst_env(json_object *ispec, inst_part *p) {
    p->uids = inst_uids(ispec);
    p->use_labels = inst_use_labels(ispec);
    json_object *tls = jget(jget(ispec, "exporter"), "tls");
    p->tls = json_object_is_type(tls, json_type_object) ? jw_copy(tls) : NULL;
    if (p->tls) tls_names(p->tls, &p->tls_secret, &p->tls_configmap, &p->tls_ca, &p->tls_cert, &p->tls_key);
    else p->tls_secret = p->tls_configmap = p->tls_ca = p->tls_cert = p->tls_key = NULL;
    const char *endpoint = jstr(jget(ispec, "exporter"), "endpoint");
    p->endpoint = endpoint && *endpoint ? env_new_value("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint) : NULL;
    json_object *props = jget(ispec, "propagators");
    p->propagators = NULL;
    if (jlen(props)) {
        size_t cap = 1;
        for (size_t i = 0; i < jlen(props); i++) cap += strlen(json_object_get_string(json_object_array_get_idx(props, i))) + 1;
        char *v = xcalloc(1, cap);
        for (size_t i = 0; i < jlen(props); i++) {
            if (i) strcat(v, ",");
            strcat(v, json_object_get_string(json_object_array_get_idx(props, i)));
        }
        p->propagators = env_new_value("OTEL_PROPAGATORS", v);
        free(v);
    }
    json_object *sampler = jget(ispec, "sampler");
    const char *stype = jstr(sampler, "type"), *sarg = jstr(sampler, "argument");
    p->sampler = stype && *stype ? env_new_value("OTEL_TRACES_SAMPLER", stype) : NULL;
    p->sampler_arg = p->sampler && sarg && *sarg ? env_new_value("OTEL_TRACES_SAMPLER_ARG", sarg) : NULL;
    json_object *ra = jget(jget(ispec, "resource"), "resourceAttributes");
    p->attrs = NULL;
    if (json_object_is_type(ra, json_type_object)) {
        char buf[64];
        p->attrs = jnew_obj();
        json_object_object_foreach(ra, k, v) {
            const char *sv = scalar_str(v, buf, sizeof buf);
            if (sv) jset(p->attrs, k, jnew_str(sv));
        }
    }
}

/* Volume names must be DNS labels; secret and configmap names may hold dots
 * (spec 7.6). */
static void volume_name(char *out, size_t len, const char *prefix, const char *name) {
    snprintf(out, len < 64 ? len : 64, "%s%s", prefix, name);
    for (char *p = out; *p; p++)
        if (*p == '.' || *p == '_') *p = '-';
        else *p = (char)tolower((unsigned char)*p);
    size_t n = strlen(out);
    while (n && !isalnum((unsigned char)out[n - 1])) out[--n] = 0;
}

typedef struct tlsinfo {
    const char *secret, *configmap, *ca, *cert, *key;
} tlsinfo;

/* From the Instrumentation's part when the flow has one (lang.c). */
static bool tls_get(lctx *l, tlsinfo *t) {
    memset(t, 0, sizeof *t);
    if (l->part) {
        const inst_part *p = l->part;
        *t = (tlsinfo){p->tls_secret, p->tls_configmap, p->tls_ca, p->tls_cert, p->tls_key};
        return p->tls != NULL;
    }
    json_object *tls = jw_get(jw_get(l->ispec, "exporter"), "tls");
    if (!json_object_is_type(tls, json_type_object)) return false;
    tls_names(tls, &t->secret, &t->configmap, &t->ca, &t->cert, &t->key);
    return true;
}

bool sdk_tls_check(lctx *l) {
    tlsinfo t;
    if (!tls_get(l, &t)) return true;
    const kube_reader *src = l->m->req->src;
    const char *kinds[2] = {"Secret", "ConfigMap"}, *names[2] = {t.secret, t.configmap};
    for (int i = 0; i < 2; i++) {
        json_object *obj;
        if (!names[i] || !src) continue;
        /* Only a definite "not found" counts, as in the reference. */
        if (src->get(src->ud, kinds[i], l->m->ns, names[i], &obj) == KUBE_NOT_FOUND) {
            mctx_warn(l->m, "inject-%s: %s %s/%s with the exporter's certificates does not exist; %s not injected",
                      l->lang->name, i ? "configmap" : "secret", l->m->ns, names[i], l->lang->display);
            mctx_skip(l->m, MUTATE_SKIP_NOT_FOUND);
            return false;
        }
    }
    return true;
}

void sdk_tls_volumes(lctx *l) {
    tlsinfo t;
    if (!tls_get(l, &t)) return;
    json_object *vols = jarr_at(l->m->spec, "volumes");
    char vn[64];
    if (t.secret) {
        volume_name(vn, sizeof vn, "otel-auto-secret-", t.secret);
        if (!jw_find_named(vols, vn, NULL)) {
            json_object *v = jnew_obj(), *s = jnew_obj();
            jset(v, "name", jnew_str(vn));
            jset(s, "secretName", jnew_str(t.secret));
            jset(v, "secret", s);
            jpush(vols, v);
        }
    }
    if (t.configmap) {
        volume_name(vn, sizeof vn, "otel-auto-configmap-", t.configmap);
        if (!jw_find_named(vols, vn, NULL)) {
            json_object *v = jnew_obj(), *s = jnew_obj();
            jset(v, "name", jnew_str(vn));
            jset(s, "name", jnew_str(t.configmap));
            jset(v, "configMap", s);
            jpush(vols, v);
        }
    }
}

/* The variables sdk_configure may add, looked up in one pass over the
 * container's env when it starts. That gives each check the answer its own
 * scan would: each name is checked once, and what the function adds before
 * a check has another name, at the end of the list, so it cannot be the
 * first entry of the name checked. */
#define SDK_VARS(X)                                                                                                    \
    X(SERVICE_NAME, "OTEL_SERVICE_NAME")                                                                               \
    X(ENDPOINT, "OTEL_EXPORTER_OTLP_ENDPOINT")                                                                         \
    X(CERT, "OTEL_EXPORTER_OTLP_CERTIFICATE")                                                                          \
    X(CLIENT_CERT, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")                                                            \
    X(CLIENT_KEY, "OTEL_EXPORTER_OTLP_CLIENT_KEY")                                                                     \
    X(POD_NAME, POD_NAME_VAR)                                                                                          \
    X(POD_UID, POD_UID_VAR)                                                                                            \
    X(NODE_NAME, NODE_NAME_VAR)                                                                                        \
    X(PROPAGATORS, "OTEL_PROPAGATORS")                                                                                 \
    X(SAMPLER, "OTEL_TRACES_SAMPLER")                                                                                  \
    X(SAMPLER_ARG, "OTEL_TRACES_SAMPLER_ARG")                                                                          \
    X(ORA, ORA)
#define SV_ENUM_(id, name) SV_##id,
#define SV_NAME_(id, name) name,
#define SV_LEN_(id, name) sizeof name - 1,
enum { SDK_VARS(SV_ENUM_) SV_N };
static const char *const sdk_vars[SV_N] = {SDK_VARS(SV_NAME_)};
static const size_t sdk_var_len[SV_N] = {SDK_VARS(SV_LEN_)};
#define SV_PREFIX "OTEL_" /* every one of them begins so */

/* seen[j]: env_find(c, sdk_vars[j], NULL). Each entry's name is compared
 * by length first and only when it begins with OTEL_: a dozen names
 * against a dozen entries, which jw_find_named_many compares pairwise. */
static void find_sdk_vars(json_object *c, json_object **seen) {
    json_object *env = jw_get(c, "env");
    if (!json_object_is_type(env, json_type_array)) {
        env_find_many(c, sdk_vars, SV_N, seen);
        return;
    }
    memset(seen, 0, SV_N * sizeof *seen);
    size_t n = json_object_array_length(env);
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(env, i);
        const char *name = jw_str(e, "name");
        if (!name || name[0] != 'O' || strncmp(name, SV_PREFIX, sizeof SV_PREFIX - 1) != 0) continue;
        size_t len = strlen(name);
        for (int j = 0; j < SV_N; j++)
            if (len == sdk_var_len[j] && !seen[j] && memcmp(name, sdk_vars[j], len) == 0) {
                seen[j] = e;
                break;
            }
    }
#ifdef MUTATE_SELF_CHECK
    json_object *slow[SV_N];
    env_find_many(c, sdk_vars, SV_N, slow);
    if (memcmp(seen, slow, sizeof slow) != 0) {
        fprintf(stderr, "sdk: find_sdk_vars is not env_find_many\n");
        abort();
    }
#endif
}

/* One exporter TLS variable; relative file names resolve under the mount. */
static void tls_env(lctx *l, cenv *ce, json_object *const *seen, int var_id, const char *file,
                    const char *dirprefix, const char *obj) {
    const char *var = sdk_vars[var_id];
    if (!file || !*file || seen[var_id]) return;
    if (file[0] == '/') { cenv_append(ce, var, file); return; }
    if (!obj) {
        mctx_warn(l->m, "inject-%s: exporter.tls names %s relative to a %s that is not set; %s not set", l->lang->name,
                  file, strstr(dirprefix, "configmap") ? "configMapName" : "secretName", var);
        return;
    }
    char *v = NULL;
    v = xasprintf("%s%s/%s", dirprefix, obj, file);
    cenv_append(ce, var, v);
    free(v);
}

static void tls_configure(lctx *l, cenv *ce, json_object *const *seen) {
    tlsinfo t;
    json_object *c = ce->c;
    if (!tls_get(l, &t)) return;
    if (t.configmap) tls_env(l, ce, seen, SV_CERT, t.ca, "/otel-auto-instrumentation-configmap-", t.configmap);
    else tls_env(l, ce, seen, SV_CERT, t.ca, "/otel-auto-instrumentation-secret-", t.secret);
    tls_env(l, ce, seen, SV_CLIENT_CERT, t.cert, "/otel-auto-instrumentation-secret-", t.secret);
    tls_env(l, ce, seen, SV_CLIENT_KEY, t.key, "/otel-auto-instrumentation-secret-", t.secret);
    char vn[64], path[512];
    if (t.secret) {
        volume_name(vn, sizeof vn, "otel-auto-secret-", t.secret);
        snprintf(path, sizeof path, "/otel-auto-instrumentation-secret-%s", t.secret);
        if (!mount_path_taken(c, path)) mount_add(c, vn, path, true);
    }
    if (t.configmap) {
        volume_name(vn, sizeof vn, "otel-auto-configmap-", t.configmap);
        snprintf(path, sizeof path, "/otel-auto-instrumentation-configmap-%s", t.configmap);
        if (!mount_path_taken(c, path)) mount_add(c, vn, path, true);
    }
}

/* What sdk_configure reads of the pod, in one pass over its metadata and
 * one over its annotations (a handful of members each) instead of a hashed
 * lookup per field: jw_str's, jstr's and jget's answers (strings only, but
 * labels of any type). nres counts the resource.opentelemetry.io/ keys, so
 * that step 3 walks the annotations again only when there are some. Read
 * per call: the pod's metadata may be replaced between calls. */
typedef struct podinfo {
    const char *name, *uid;
    json_object *labels, *ann;
    const char *sid, *sns, *sname, *sver; /* resource.opentelemetry.io/service.* */
    size_t nres;
} podinfo;

static void pod_info(mctx *m, podinfo *p) {
    memset(p, 0, sizeof *p);
    if (json_object_is_type(m->meta, json_type_object)) {
        json_object_object_foreach(m->meta, k, v) {
            if (k[0] == 'n' && !strcmp(k, "name")) p->name = str_of(v);
            else if (k[0] == 'u' && !strcmp(k, "uid")) p->uid = str_of(v);
            else if (k[0] == 'l' && !strcmp(k, "labels")) p->labels = v;
        }
    }
    p->ann = pod_annotations(m);
    if (!json_object_is_type(p->ann, json_type_object)) return;
    json_object_object_foreach(p->ann, k, v) {
        if (k[0] != 'r' || strncmp(k, ANN_RESOURCE, sizeof ANN_RESOURCE - 1) != 0) continue;
        const char *key = k + sizeof ANN_RESOURCE - 1;
        p->nres++;
        if (strncmp(key, "service.", 8) != 0) continue;
        if (!strcmp(key + 8, "instance.id")) p->sid = str_of(v);
        else if (!strcmp(key + 8, "namespace")) p->sns = str_of(v);
        else if (!strcmp(key + 8, "name")) p->sname = str_of(v);
        else if (!strcmp(key + 8, "version")) p->sver = str_of(v);
    }
}

/* Steps 1-4 of spec 3.7: the attributes before the $(...) references, never
 * writing keys the container's own OTEL_RESOURCE_ATTRIBUTES (ora) has. ip:
 * the Instrumentation's part (its resource attributes as strings); NULL:
 * they are read from the Instrumentation. */
static void build_map(lctx *l, const podinfo *pi, const inst_part *ip, json_object *ora, const char *cname, bool uids,
                      amap *a_out) {
    mctx *m = l->m;
    json_object *ann = pi->ann;
    char buf[64];
    amap a = {{0}, {.own_keys = true}};
    if (ora && !jw_get(ora, "valueFrom")) parse_existing(&a, jw_str(ora, "value"));

    /* 1. Instrumentation-wide attributes, lowest precedence. */
    json_object *ra = ip ? ip->attrs : jget(jget(l->ispec, "resource"), "resourceAttributes");
    if (json_object_is_type(ra, json_type_object)) {
        json_object_object_foreach(ra, k, v) {
            const char *sv = scalar_str(v, buf, sizeof buf);
            if (sv == buf) amap_set_copy(&a, k, sv);
            else amap_set(&a, k, sv);
        }
    }
    /* 2. What Kubernetes tells about the pod. */
    amap_set(&a, "k8s.namespace.name", m->ns);
    amap_set(&a, "k8s.container.name", cname);
    amap_set(&a, "k8s.pod.name", pi->name);
    amap_set(&a, "k8s.pod.uid", pi->uid);
    amap_set(&a, "k8s.node.name", jstr(m->spec, "nodeName"));
    if (pi->sid) amap_set(&a, "service.instance.id", pi->sid);
    else if (*m->ns && *cname) {
        /* ns.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).cname */
        static const char mid[] = ".$(" POD_NAME_VAR ").";
        size_t nl = strlen(m->ns), cl = strlen(cname);
        char *v = xmalloc(nl + sizeof mid - 1 + cl + 1);
        memcpy(v, m->ns, nl);
        memcpy(v + nl, mid, sizeof mid - 1);
        memcpy(v + nl + sizeof mid - 1, cname, cl + 1);
        amap_set_take(&a, "service.instance.id", v);
    }
    const owner_info *o = owners_walk(m);
    for (int k = 0; k < 6; k++) {
        amap_set(&a, owner_name_keys[k], o->name[k]);
        if (uids) amap_set(&a, owner_uid_keys[k], o->uid[k]);
    }
    /* 3. resource.opentelemetry.io/<key> annotations. */
    if (pi->nres) {
        json_object_object_foreach(ann, k, v) {
            if (strncmp(k, ANN_RESOURCE, strlen(ANN_RESOURCE)) != 0) continue;
            const char *key = k + strlen(ANN_RESOURCE);
            if (strcmp(key, "service.name") == 0) continue;
            amap_set(&a, key, json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL);
        }
    }
    /* 4. */
    const char *sns = pi->sns;
    amap_set(&a, "service.namespace", sns && *sns ? sns : m->ns);
    *a_out = a;
}

/* Spec 3.4, read from the map before k8s.pod.name turns into a $(...)
 * reference. Points into the pod, the map or the container. */
static const char *pick_service_name(const podinfo *pi, const char *cname, bool use_labels, const amap *a) {
    const char *sn = pi->sname;
    if ((!sn || !*sn) && use_labels) {
        sn = jstr(pi->labels, "app.kubernetes.io/instance");
        if (!sn || !*sn) sn = jstr(pi->labels, "app.kubernetes.io/name");
    }
    static const char *const from_map[] = {"k8s.deployment.name", "k8s.replicaset.name", "k8s.statefulset.name",
                                           "k8s.daemonset.name", "k8s.cronjob.name", "k8s.job.name", "k8s.pod.name"};
    for (size_t i = 0; i < sizeof from_map / sizeof *from_map && (!sn || !*sn); i++) sn = amap_get(a, from_map[i]);
    return sn && *sn ? sn : cname;
}

char *sdk_service_name(lctx *l, json_object *app) {
    amap a;
    podinfo pi;
    pod_info(l->m, &pi);
    const char *cname = jw_str(app, "name");
    if (!cname) cname = "";
    build_map(l, &pi, NULL, env_find(app, ORA, NULL), cname, inst_uids(l->ispec), &a);
    char *sn = xstrdup(pick_service_name(&pi, cname, inst_use_labels(l->ispec), &a));
    amap_free(&a);
    return sn;
}

void sdk_configure(lctx *l, json_object *c, json_object *app) {
    mctx *m = l->m;
    json_object *ispec = l->ispec;
    podinfo pi;
    pod_info(m, &pi);
    inst_part own = {0};
    const inst_part *ip = l->part;
    if (!ip) {
        sdk_inst_env(ispec, &own);
        ip = &own;
    }
    bool uids = ip->uids, use_labels = ip->use_labels;
    const char *cname = jw_str(app, "name");
    if (!cname) cname = "";
    json_object *seen[SV_N];
    find_sdk_vars(c, seen);
    json_object *ora = seen[SV_ORA];
    bool ora_from = ora && jw_get(ora, "valueFrom");
    amap a;
    build_map(l, &pi, ip, ora, cname, uids, &a);

    cenv ce = {c, NULL};
    if (!seen[SV_SERVICE_NAME]) cenv_append(&ce, "OTEL_SERVICE_NAME", pick_service_name(&pi, cname, use_labels, &a));
    if (ip->endpoint && !seen[SV_ENDPOINT]) cenv_push(&ce, ip->endpoint);
    tls_configure(l, &ce, seen);

    if (!amap_existing(&a, "k8s.pod.name")) {
        /* Overwritten even when an annotation gave a literal name: the
         * downward API is the source of truth for the pod's own name. */
        amap_set(&a, "k8s.pod.name", "$(" POD_NAME_VAR ")");
    }
    if (!seen[SV_POD_NAME]) const_field(l, c, &ce, CACHE_CONST_POD_NAME);
    if (uids && !amap_get(&a, "k8s.pod.uid") && !amap_existing(&a, "k8s.pod.uid")) {
        amap_set(&a, "k8s.pod.uid", "$(" POD_UID_VAR ")");
        if (!seen[SV_POD_UID]) const_field(l, c, &ce, CACHE_CONST_POD_UID);
    }
    /* Step 7 overrides step 1: a service.version in spec.resource.resourceAttributes
     * gives way to the annotation, the label or the image's tag, as in the
     * reference (its TestSDKInjection "Resource attribute from CRD"); it is
     * kept only when none of them gives a version. */
    if (!amap_existing(&a, "service.version")) {
        const char *ver = pi.sver;
        if ((!ver || !*ver) && use_labels) ver = jstr(pi.labels, "app.kubernetes.io/version");
        char iv[512];
        if (!ver || !*ver) {
            image_version(jw_str(app, "image"), iv, sizeof iv);
            ver = iv;
        }
        if (ver == iv) amap_set_copy(&a, "service.version", ver);
        else amap_set(&a, "service.version", ver);
    }
    if (!amap_get(&a, "k8s.node.name") && !amap_existing(&a, "k8s.node.name")) {
        amap_set(&a, "k8s.node.name", "$(" NODE_NAME_VAR ")");
        if (!seen[SV_NODE_NAME]) const_field(l, c, &ce, CACHE_CONST_NODE_NAME);
    }

    if (ip->propagators && !seen[SV_PROPAGATORS]) cenv_push(&ce, ip->propagators);
    if (ip->sampler && !seen[SV_SAMPLER] && !seen[SV_SAMPLER_ARG]) {
        cenv_push(&ce, ip->sampler);
        if (ip->sampler_arg) cenv_push(&ce, ip->sampler_arg);
    }

    /* Write-out: sorted k=v list, appended to an existing value. */
    size_t nattrs;
    sattr *sorted = amap_sorted(&a, &nattrs);
    size_t len = 1;
    for (size_t i = 0; i < nattrs; i++) len += sorted[i].kl + sorted[i].vl + 2;
    char *list = xmalloc(len), *w = list;
    for (size_t i = 0; i < nattrs; i++) {
        size_t kl = sorted[i].kl, vl = sorted[i].vl;
        if (i) *w++ = ',';
        memcpy(w, sorted[i].key, kl);
        w += kl;
        *w++ = '=';
        memcpy(w, sorted[i].val, vl);
        w += vl;
    }
    *w = 0;
    free(sorted);
    if (ora_from) {
        mctx_warn(m, "inject-%s: OTEL_RESOURCE_ATTRIBUTES of container %s comes from valueFrom; Kubernetes attributes "
                     "not added", l->lang->name, cname);
    } else if (!ora) {
        cenv_append(&ce, ORA, list);
    } else if (nattrs) {
        const char *old = jw_str(ora, "value") ? jw_str(ora, "value") : "";
        size_t ol = strlen(old);
        char *v = NULL;
        v = xasprintf("%s%s%s", old, ol && old[ol - 1] != ',' ? "," : "", list);
        env_set_value(c, ora, v);
        free(v);
    }
    /* Appended just now, the only one of its name: already the last. */
    if (ora && !ora_from) env_move_to_end(c, ORA);
    free(list);
    amap_free(&a);
    inst_part_release(&own); /* after the map, which borrows own.attrs */
}
