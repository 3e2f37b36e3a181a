/* mutate/record.c - the otel-webhook/status record (record.h): building it
 * from the pod before and after, reading it back, and the engine's check
 * that a pod carrying one is left alone.
 *
 * Derived by comparison, so it holds whatever the engine did, however the
 * patch was built (the engine's usual case is written from the diff's log
 * instead, record_log.c, to the same bytes; this comparison defines them): named list elements (containers, init containers,
 * volumes, env entries, mounts by path) as names added, anything else
 * changed as its original value. Both trees share unchanged subtrees, so
 * most comparisons stop at a pointer test; lists are indexed once (sorted
 * names, binary search) so the cost stays linear in what the pod holds.
 *
 * Read back, a record is the pod author's data: mutate_record_read parses
 * it only within its budget (record.h), and record_honoured skips a pod
 * only for a record that proves itself against it (record_check.c); any
 * other record is replaced by the injection, with a warning.
 *
 * Layout (keys left out when empty):
 *   v, engine                   record format and engine version
 *   containers, initContainers, volumes   names added
 *   removed                     [{list, at, value}] elements taken out
 *   into                        per existing container: name, init, env
 *                               (names added), envWas (original entries of
 *                               the variables rewritten), envOrder (when
 *                               the order changed), volumeMounts (paths
 *                               added), unset/was (other fields)
 *   unset, was                  the pod's other fields, as JSON pointers
 *   uses                        Instrumentations and collector used
 *   images                      image of each container added */
#include "mutate/record.h"

#include "base/jtext.h"
#include "base/versions.h"
#include "mutate/internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- what the engine injected from --------------------------------------- */

/* FNV-1a over a JSON tree, members combined by sum so the order of keys
 * (YAML file vs API server) does not matter. Read-only on purpose: the
 * objects are the store's, shared between threads, and serialising one
 * would cache a string inside it. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

static uint64_t tree_hash(json_object *v) {
    uint64_t h = 14695981039346656037ull;
    json_type t = json_object_get_type(v);
    h = fnv(h, &t, sizeof t);
    switch (t) {
    case json_type_null: break;
    case json_type_boolean: { int b = json_object_get_boolean(v); h = fnv(h, &b, sizeof b); break; }
    case json_type_int: { int64_t i = json_object_get_int64(v); h = fnv(h, &i, sizeof i); break; }
    case json_type_double: {
        double d = json_object_get_double(v);
        if (d == (double)(int64_t)d) { int64_t i = (int64_t)d; h = fnv(h, &i, sizeof i); }
        else h = fnv(h, &d, sizeof d);
        break;
    }
    case json_type_string: h = fnv(h, json_object_get_string(v), (size_t)json_object_get_string_len(v)); break;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            uint64_t e = tree_hash(json_object_array_get_idx(v, i));
            h = fnv(h, &e, sizeof e);
        }
        break;
    case json_type_object: {
        uint64_t sum = 0;
        json_object_object_foreach(v, k, m) {
            uint64_t e = fnv(14695981039346656037ull, k, strlen(k) + 1), mh = tree_hash(m);
            sum += fnv(e, &mh, sizeof mh);
        }
        h = fnv(h, &sum, sizeof sum);
        break;
    }
    }
    return h;
}

void mutate_spec_hash(json_object *spec, char out[17]) {
    snprintf(out, 17, "%016" PRIx64, tree_hash(spec));
}

json_object *record_use_new(const char *req_ns, mutate_lang_id lang, json_object *obj) {
    json_object *meta = jget(obj, "metadata"), *u = jnew_obj();
    jw_add(u, "kind", jnew_str(lang < MUTATE_NLANGS ? "Instrumentation" : "OpenTelemetryCollector"));
    if (lang < MUTATE_NLANGS) jw_add(u, "language", jnew_str(mutate_lang_name(lang)));
    const char *ns = jstr(meta, "namespace"), *name = jw_str(meta, "name");
    jw_add(u, "namespace", jnew_str(ns ? ns : req_ns));
    jw_add(u, "name", jnew_str(name ? name : ""));
    const char *rv = jstr(meta, "resourceVersion");
    if (rv) jw_add(u, "resourceVersion", jnew_str(rv));
    int64_t gen;
    if (jint(meta, "generation", &gen)) jw_add(u, "generation", jnew_int(gen));
    const char *h = jstr(obj, MUTATE_SPEC_HASH);
    char hex[17];
    if (!h || strlen(h) != 16) { /* an object that did not go through the store */
        mutate_spec_hash(jget(obj, "spec"), hex);
        h = hex;
    }
    jw_add(u, "hash", jnew_str(h));
    return u;
}

void record_use_push(mctx *m, json_object *u) {
    if (!m->res->uses) m->res->uses = jnew_arr();
    jpush(m->res->uses, u);
}

void record_use(mctx *m, mutate_lang_id lang, json_object *obj) { record_use_push(m, record_use_new(m->ns, lang, obj)); }

/* ---- indexes of named list elements -------------------------------------- */

typedef struct nentry {
    const char *name;
    size_t idx;
} nentry;

typedef struct nindex {
    nentry *v;
    size_t n;
} nindex;

static int nentry_cmp(const void *a, const void *b) {
    const nentry *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

/* Elements of arr by their string field key (first one of a name wins). */
static void nindex_build(nindex *ix, json_object *arr, const char *key) {
    size_t n = jlen(arr);
    ix->v = xmalloc(sizeof *ix->v * (n ? n : 1));
    ix->n = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i), *s;
        if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, key, &s) &&
            json_object_is_type(s, json_type_string))
            ix->v[ix->n++] = (nentry){json_object_get_string(s), i};
    }
    qsort(ix->v, ix->n, sizeof *ix->v, nentry_cmp);
}

static bool nindex_find(const nindex *ix, const char *name, size_t *idx) {
    size_t lo = 0, hi = ix->n;
    while (lo < hi) { /* lower bound: the first of equal names */
        size_t mid = lo + (hi - lo) / 2;
        if (strcmp(ix->v[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo < ix->n && !strcmp(ix->v[lo].name, name)) {
        if (idx) *idx = ix->v[lo].idx;
        return true;
    }
    return false;
}

/* Whether no two elements share a name (ix is sorted by name). */
static bool nindex_unique(const nindex *ix) {
    for (size_t i = 1; i < ix->n; i++)
        if (!strcmp(ix->v[i - 1].name, ix->v[i].name)) return false;
    return true;
}

static const char *field_str(json_object *e, const char *key) {
    json_object *s;
    if (json_object_is_type(e, json_type_object) && json_object_object_get_ex(e, key, &s) &&
        json_object_is_type(s, json_type_string))
        return json_object_get_string(s);
    return NULL;
}

/* Deep equality that stops at shared subtrees: the mutated pod shares
 * everything the engine did not touch with the request (json_object_equal
 * would walk those too). */
static bool same(json_object *a, json_object *b) {
    if (a == b) return true;
    json_type t = json_object_get_type(a);
    if (!a || !b || t != json_object_get_type(b)) return false;
    switch (t) {
    case json_type_object: {
        if (json_object_object_length(a) != json_object_object_length(b)) return false;
        json_object_object_foreach(a, k, av) {
            json_object *bv;
            if (!json_object_object_get_ex(b, k, &bv) || !same(av, bv)) return false;
        }
        return true;
    }
    case json_type_array: {
        size_t n = json_object_array_length(a);
        if (n != json_object_array_length(b)) return false;
        for (size_t i = 0; i < n; i++)
            if (!same(json_object_array_get_idx(a, i), json_object_array_get_idx(b, i))) return false;
        return true;
    }
    default: return json_object_equal(a, b);
    }
}

static bool member(json_object *o, const char *key, json_object **v) {
    *v = NULL;
    return json_object_is_type(o, json_type_object) && json_object_object_get_ex(o, key, v);
}

static bool in_list(const char *const *list, const char *key) {
    for (; list && *list; list++)
        if (!strcmp(*list, key)) return true;
    return false;
}

static json_object *lazy_arr(json_object *o, const char *key) {
    json_object *a = jarr(o, key);
    return a ? a : jset_arr(o, key);
}

static json_object *lazy_obj(json_object *o, const char *key) {
    json_object *a = jmap(o, key);
    return a ? a : jset_obj(o, key);
}

/* prefix + "/" + key, escaped per RFC 6901. */
static char *pointer(const char *prefix, const char *key) {
    sbuf p = SBUF_INIT;
    sbuf_puts(&p, prefix);
    mutate_pointer_push(&p, key);
    return sbuf_take(&p, NULL);
}

/* Keys b has and a lacks go to unset; keys whose value changed or that
 * are gone, with a's value, to was. Keys are pointers under prefix, or
 * plain keys when prefix is NULL. */
static void delta(json_object *a, json_object *b, const char *const *skip, const char *prefix, json_object *out) {
    json_object_object_foreach(b, k, bv) {
        json_object *av;
        if (in_list(skip, k)) continue;
        bool had = json_object_object_get_ex(a, k, &av);
        if (had && same(av, bv)) continue;
        char *key = prefix ? pointer(prefix, k) : xstrdup(k);
        if (!had) jpush(lazy_arr(out, "unset"), jnew_str(key));
        else jset(lazy_obj(out, "was"), key, jcopy(av));
        free(key);
    }
    json_object_object_foreach(a, ka, av2) {
        json_object *bv;
        if (in_list(skip, ka) || json_object_object_get_ex(b, ka, &bv)) continue;
        char *key = prefix ? pointer(prefix, ka) : xstrdup(ka);
        jset(lazy_obj(out, "was"), key, jcopy(av2));
        free(key);
    }
}

/* A list field of o (env, volumes, ...) as the engine found it: whether it
 * is to be unset or restored wholesale when it was absent or not a list. */
static void list_field(json_object *o, json_object *n, const char *key, const char *prefix, json_object *out) {
    json_object *ov, *nv;
    bool had = member(o, key, &ov);
    if (!member(n, key, &nv) || (had && json_object_is_type(ov, json_type_array)) || (had && same(ov, nv))) return;
    char *k = prefix ? pointer(prefix, key) : xstrdup(key);
    if (!had) jpush(lazy_arr(out, "unset"), jnew_str(k));
    else jset(lazy_obj(out, "was"), k, jcopy(ov));
    free(k);
}

/* Env of one container: names added, original entries rewritten or gone,
 * and the original order when what uninject would rebuild differs. */
static void env_delta(json_object *oenv, json_object *nenv, json_object *out) {
    if (oenv == nenv) return;
    nindex oi, ni;
    nindex_build(&oi, oenv, "name");
    nindex_build(&ni, nenv, "name");
    size_t on = jlen(oenv), nn = jlen(nenv);
    /* Unnamed entries, or names repeated in the original (the API server
     * accepts both): names cannot say which entry was which, so the whole
     * original is kept. */
    if (oi.n != on || ni.n != nn || !nindex_unique(&oi)) {
        if (!same(oenv, nenv)) jset(lazy_obj(out, "was"), "env", jcopy(oenv));
        goto out;
    }
    for (size_t i = 0; i < nn; i++) {
        const char *name = field_str(json_object_array_get_idx(nenv, i), "name");
        if (!nindex_find(&oi, name, NULL)) jpush(lazy_arr(out, "env"), jnew_str(name));
    }
    /* The order uninject rebuilds: survivors in their new order, then the
     * entries that went, in their old order. */
    const char **order = xmalloc(sizeof *order * (on ? on : 1));
    size_t no = 0;
    for (size_t i = 0; i < nn; i++) {
        const char *name = field_str(json_object_array_get_idx(nenv, i), "name");
        if (nindex_find(&oi, name, NULL)) order[no++] = name;
    }
    for (size_t i = 0; i < on; i++) {
        json_object *oe = json_object_array_get_idx(oenv, i);
        const char *name = field_str(oe, "name");
        size_t at;
        bool kept = nindex_find(&ni, name, &at);
        if (!kept) order[no++] = name;
        if (!kept || !same(oe, json_object_array_get_idx(nenv, at))) jpush(lazy_arr(out, "envWas"), jcopy(oe));
    }
    bool reordered = false;
    for (size_t i = 0; i < on && !reordered; i++)
        reordered = strcmp(order[i], field_str(json_object_array_get_idx(oenv, i), "name")) != 0;
    if (reordered) {
        json_object *names = jset_arr(out, "envOrder");
        for (size_t i = 0; i < on; i++) jpush(names, jnew_str(field_str(json_object_array_get_idx(oenv, i), "name")));
    }
    free(order);
out:
    free(oi.v);
    free(ni.v);
}

/* Mounts: paths added; anything else changed keeps the original list. */
static void mounts_delta(json_object *om, json_object *nm, json_object *out) {
    if (om == nm) return;
    nindex oi, ni;
    nindex_build(&oi, om, "mountPath");
    nindex_build(&ni, nm, "mountPath");
    bool whole = oi.n != jlen(om) || ni.n != jlen(nm);
    for (size_t i = 0; i < jlen(nm) && !whole; i++) {
        const char *path = field_str(json_object_array_get_idx(nm, i), "mountPath");
        if (!nindex_find(&oi, path, NULL)) jpush(lazy_arr(out, "volumeMounts"), jnew_str(path));
    }
    /* Survivors must be the original list, in order and unchanged. */
    size_t k = 0;
    for (size_t i = 0; i < jlen(nm) && !whole; i++) {
        json_object *ne = json_object_array_get_idx(nm, i);
        if (!nindex_find(&oi, field_str(ne, "mountPath"), NULL)) continue;
        whole = k >= jlen(om) || !same(json_object_array_get_idx(om, k), ne);
        k++;
    }
    if (whole || k != jlen(om)) jset(lazy_obj(out, "was"), "volumeMounts", jcopy(om));
    free(oi.v);
    free(ni.v);
}

static json_object *container_delta(json_object *o, json_object *n, bool init) {
    if (o == n) return NULL;
    json_object *e = jnew_obj();
    jset_str(e, "name", field_str(n, "name"));
    if (init) jset_bool(e, "init", true);
    static const char *const skip[] = {"name", "env", "volumeMounts", NULL};
    json_object *ov, *nv;
    member(o, "env", &ov);
    member(n, "env", &nv);
    env_delta(json_object_is_type(ov, json_type_array) ? ov : NULL, json_object_is_type(nv, json_type_array) ? nv : NULL, e);
    member(o, "volumeMounts", &ov);
    member(n, "volumeMounts", &nv);
    mounts_delta(json_object_is_type(ov, json_type_array) ? ov : NULL,
                 json_object_is_type(nv, json_type_array) ? nv : NULL, e);
    list_field(o, n, "env", NULL, e);
    list_field(o, n, "volumeMounts", NULL, e);
    delta(o, n, skip, NULL, e);
    if (json_object_object_length(e) == (init ? 2 : 1)) { /* the name alone: nothing changed */
        json_object_put(e);
        return NULL;
    }
    return e;
}

/* Names added to a list (and their images), the elements taken out. */
static void list_delta(json_object *rec, const char *key, json_object *oarr, json_object *narr, json_object *images) {
    nindex oi, ni;
    nindex_build(&oi, oarr, "name");
    nindex_build(&ni, narr, "name");
    for (size_t i = 0; i < jlen(narr); i++) {
        json_object *e = json_object_array_get_idx(narr, i);
        const char *name = field_str(e, "name");
        if (!name || nindex_find(&oi, name, NULL)) continue;
        jpush(lazy_arr(rec, key), jnew_str(name));
        const char *img = field_str(e, "image");
        if (images && img) jset_str(images, name, img);
    }
    for (size_t i = 0; i < jlen(oarr); i++) {
        json_object *e = json_object_array_get_idx(oarr, i);
        const char *name = field_str(e, "name");
        if (!name || nindex_find(&ni, name, NULL)) continue;
        json_object *r = jpush(lazy_arr(rec, "removed"), jnew_obj());
        jset_str(r, "list", key);
        jset_int(r, "at", (int64_t)i);
        jset(r, "value", jcopy(e));
    }
    free(oi.v);
    free(ni.v);
}

static void containers_into(json_object *rec, json_object *oarr, json_object *narr, bool init) {
    if (oarr == narr) return;
    nindex oi;
    nindex_build(&oi, oarr, "name");
    for (size_t i = 0; i < jlen(narr); i++) {
        json_object *n = json_object_array_get_idx(narr, i);
        size_t at;
        const char *name = field_str(n, "name");
        if (!name || !nindex_find(&oi, name, &at)) continue;
        json_object *e = container_delta(json_object_array_get_idx(oarr, at), n, init);
        if (e) jpush(lazy_arr(rec, "into"), e);
    }
    free(oi.v);
}

static json_object *record_build(json_object *orig, json_object *pod, const mutate_result *res) {
    json_object *rec = jnew_obj(), *images = jnew_obj(), *rest = jnew_obj();
    jset_int(rec, "v", MUTATE_RECORD_VERSION);
    jset_str(rec, "engine", OTEL_WEBHOOK_VERSION);
    json_object *ospec = jmap(orig, "spec"), *nspec = jmap(pod, "spec");
    json_object *oc = jarr(ospec, "containers"), *nc = jarr(nspec, "containers");
    json_object *oi = jarr(ospec, "initContainers"), *ni = jarr(nspec, "initContainers");
    list_delta(rec, "containers", oc, nc, images);
    list_delta(rec, "initContainers", oi, ni, images);
    list_delta(rec, "volumes", jarr(ospec, "volumes"), jarr(nspec, "volumes"), NULL);
    containers_into(rec, oi, ni, true);
    containers_into(rec, oc, nc, false);

    static const char *const top_skip[] = {"metadata", "spec", NULL};
    static const char *const meta_skip[] = {"labels", "annotations", NULL};
    static const char *const spec_skip[] = {"containers", "initContainers", "volumes", NULL};
    delta(orig, pod, top_skip, "", rest);
    json_object *om, *nm;
    bool had_meta = member(orig, "metadata", &om);
    member(pod, "metadata", &nm);
    if (json_object_is_type(om, json_type_object) && json_object_is_type(nm, json_type_object)) {
        delta(om, nm, meta_skip, "/metadata", rest);
        json_object *ol, *nl;
        member(om, "labels", &ol);
        member(nm, "labels", &nl);
        if (json_object_is_type(ol, json_type_object) && json_object_is_type(nl, json_type_object))
            delta(ol, nl, NULL, "/metadata/labels", rest);
        else if (!same(ol, nl))
            list_field(om, nm, "labels", "/metadata", rest);
    } else if (!same(om, nm)) {
        if (!had_meta) jpush(lazy_arr(rest, "unset"), jnew_str("/metadata"));
        else jset(lazy_obj(rest, "was"), "/metadata", jcopy(om));
    }
    if (ospec && nspec) {
        delta(ospec, nspec, spec_skip, "/spec", rest);
        for (int i = 0; spec_skip[i]; i++) list_field(ospec, nspec, spec_skip[i], "/spec", rest);
    }
    json_object_object_foreach(rest, k, v) jset(rec, k, json_object_get(v));
    json_object_put(rest);
    if (res->uses) jset(rec, "uses", jcopy(res->uses));
    if (json_object_object_length(images)) jset(rec, "images", images);
    else json_object_put(images);
    return rec;
}

/* ---- putting it on the pod ------------------------------------------------ */

static bool record_mismatch(json_object *pod, char *buf, size_t len);

static json_object *shallow(json_object *o) {
    json_object *c = jnew_obj();
    if (json_object_is_type(o, json_type_object)) {
        /* The keys of o are distinct: no lookup before each insert. */
        json_object_object_foreach(o, k, v)
            if (json_object_object_add_ex(c, k, json_object_get(v), JSON_C_OBJECT_ADD_KEY_IS_NEW) != 0) base_oom();
    }
    return c;
}

static bool has_str(json_object *arr, const char *s) {
    for (size_t i = 0; i < jlen(arr); i++)
        if (!strcmp(json_object_get_string(json_object_array_get_idx(arr, i)), s)) return true;
    return false;
}

/* The record's text by comparing the pods (malloc'ed). */
static char *record_compared(json_object *orig, mutate_result *res) {
    json_object *rec = record_build(orig, res->pod, res);

    /* What the annotation itself adds, so that uninject takes it out whole. */
    json_object *om, *oa;
    bool had_meta = member(orig, "metadata", &om);
    if (!had_meta) {
        if (!has_str(jarr(rec, "unset"), "/metadata")) jpush(lazy_arr(rec, "unset"), jnew_str("/metadata"));
    } else if (!json_object_is_type(om, json_type_object)) {
        jset(lazy_obj(rec, "was"), "/metadata", NULL);
    } else if (!member(om, "annotations", &oa)) {
        jpush(lazy_arr(rec, "unset"), jnew_str("/metadata/annotations"));
    } else if (!json_object_is_type(oa, json_type_object)) {
        jset(lazy_obj(rec, "was"), "/metadata/annotations", NULL);
    } else {
        json_object *old;
        if (json_object_object_get_ex(oa, MUTATE_RECORD_KEY, &old))
            jset(lazy_obj(rec, "was"), "/metadata/annotations/otel-webhook~1status", jcopy(old));
    }
    char *text = jtext(rec, NULL);
    json_object_put(rec);
    return text;
}

void mutate_record_apply(json_object *orig, mutate_result *res) {
    res->nops = json_object_array_length(res->patch);
    record_apply(orig, res, NULL, NULL, true);
}

/* The record's text as the patch's string value: it is jtext's own output,
 * so only its quotes and backslashes need escaping (jtext_string_text). */
static void record_string(sbuf *o, const char *text, size_t n) {
    size_t at = o->len;
    jtext_string_text(o, text, n);
#ifdef MUTATE_SELF_CHECK
    sbuf c = SBUF_INIT;
    jtext_string(&c, text, n);
    if (c.len != o->len - at || memcmp(c.s, o->s + at, c.len) != 0) {
        fprintf(stderr, "record: jtext_string_text differs from jtext_string:\n%s\n%.*s\n", c.s, (int)(o->len - at),
                o->s + at);
        abort();
    }
    sbuf_free(&c);
#else
    (void)at;
#endif
}

void record_apply(json_object *orig, mutate_result *res, const patch_log *log, sbuf *ptext, bool ops) {
    /* A pod only changed (a sidecar removed) is not an injection. */
    if (!res->pod || !res->nops || (!res->injected && !res->sidecar)) return;
    json_object *pod = res->pod;
    char why[320];
    if (record_mismatch(orig, why, sizeof why)) {
        res->warnings = xrealloc(res->warnings, sizeof *res->warnings * (res->nwarnings + 1));
        res->warnings[res->nwarnings++] = xasprintf("%s; replaced by this injection's record", why);
    }
    sbuf b = SBUF_INIT;
    sbuf_reserve(&b, 2048); /* a typical record: about 1.4 KB */
    char *text;
    size_t n;
    if (log && record_text_from_log(orig, res, log, &b)) {
        text = sbuf_take(&b, &n);
#ifdef MUTATE_SELF_CHECK
        /* The sanitizer and valgrind builds: every suite holds the two
         * ways of writing the record to the same bytes. */
        char *cmp = record_compared(orig, res);
        if (strcmp(cmp, text) != 0) {
            fprintf(stderr, "record_log: the record from the diff's log differs from the compared one:\n%s\n%s\n", text, cmp);
            abort();
        }
        free(cmp);
#endif
    } else {
        sbuf_free(&b);
        text = record_compared(orig, res);
        n = strlen(text);
        res->record_compared = true;
    }

    json_object *pm, *pa;
    member(pod, "metadata", &pm);
    member(pm, "annotations", &pa);
    if (ptext) { /* the operation below, as jtext writes it */
        sbuf_lit(ptext, ",{\"op\":\"add\",\"path\":");
        if (!json_object_is_type(pm, json_type_object)) {
            sbuf_lit(ptext, "\"/metadata\",\"value\":{\"annotations\":{\"" MUTATE_RECORD_KEY "\":");
            record_string(ptext, text, n);
            sbuf_lit(ptext, "}}}");
        } else if (!json_object_is_type(pa, json_type_object)) {
            sbuf_lit(ptext, "\"/metadata/annotations\",\"value\":{\"" MUTATE_RECORD_KEY "\":");
            record_string(ptext, text, n);
            sbuf_lit(ptext, "}}");
        } else {
            sbuf_lit(ptext, "\"/metadata/annotations/otel-webhook~1status\",\"value\":");
            record_string(ptext, text, n);
            sbuf_putc(ptext, '}');
        }
    }
    res->nops++;
    json_object *op = ops ? jnew_obj() : NULL;
    if (op) jset_str(op, "op", "add");
    if (!op) {
    } else if (!json_object_is_type(pm, json_type_object)) {
        json_object *v = jnew_obj();
        jset_str(jset_obj(v, "annotations"), MUTATE_RECORD_KEY, text);
        jset_str(op, "path", "/metadata");
        jset(op, "value", v);
    } else if (!json_object_is_type(pa, json_type_object)) {
        json_object *v = jnew_obj();
        jset_str(v, MUTATE_RECORD_KEY, text);
        jset_str(op, "path", "/metadata/annotations");
        jset(op, "value", v);
    } else {
        jset_str(op, "path", "/metadata/annotations/otel-webhook~1status");
        jset_str(op, "value", text);
    }
    if (op) jpush(res->patch, op);
    if (!ops) { /* the text is the answer (patch_text): no pod to carry the record */
        free(text);
        return;
    }

    /* New objects down to the annotations: the patch's values share the
     * old ones and must not change. */
    json_object *np = shallow(pod), *nmeta = shallow(pm), *nann = shallow(pa);
    jset_str(nann, MUTATE_RECORD_KEY, text);
    jset(nmeta, "annotations", nann);
    jset(np, "metadata", nmeta);
    free(text);
    json_object_put(res->pod);
    res->pod = np;
}

/* ---- reading it back ------------------------------------------------------ */

json_object *mutate_record_read(json_object *pod, const char **why) {
    *why = NULL;
    json_object *meta, *ann, *v;
    if (!member(pod, "metadata", &meta) || !member(meta, "annotations", &ann) ||
        !member(ann, MUTATE_RECORD_KEY, &v))
        return NULL;
    if (!json_object_is_type(v, json_type_string)) {
        *why = "not a string";
        return NULL;
    }
    /* Bounded before any tree exists: the text is the pod author's. */
    size_t len = (size_t)json_object_get_string_len(v);
    const char *text = json_object_get_string(v);
    if (len > MUTATE_RECORD_MAX_BYTES) {
        *why = "longer than the 262144 bytes the API server keeps of a pod's annotations";
        return NULL;
    }
    size_t nests = 0;
    bool quoted = false;
    for (size_t i = 0; i < len; i++) {
        char ch = text[i];
        if (quoted) {
            if (ch == '\\') i++;
            else if (ch == '"') quoted = false;
        } else if (ch == '"') quoted = true;
        else if (ch == '{' || ch == '[') nests++;
    }
    if (nests > MUTATE_RECORD_MAX_NESTS) {
        *why = "more than the 16384 objects and lists a record may hold";
        return NULL;
    }
    json_tokener *tok = json_tokener_new_ex(32);
    if (!tok) base_oom();
    json_object *rec = json_tokener_parse_ex(tok, text, (int)len);
    if (json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != len) {
        json_object_put(rec);
        rec = NULL;
    }
    json_tokener_free(tok);
    int64_t ver = 0;
    if (!json_object_is_type(rec, json_type_object)) *why = "not a JSON object";
    else if (!jint(rec, "v", &ver) || ver != MUTATE_RECORD_VERSION) *why = "a record version this engine does not know";
    if (*why) {
        json_object_put(rec);
        return NULL;
    }
    return rec;
}

/* Why the pod's record (if any) cannot be trusted, into buf; false when
 * there is none or it proves itself against the pod (record_check.c): a
 * forged record (`{"v":1}` on a pod with none of our parts) must not turn
 * injection off. */
static bool record_mismatch(json_object *pod, char *buf, size_t len) {
    const char *why;
    json_object *rec = mutate_record_read(pod, &why);
    if (!rec) {
        if (why) snprintf(buf, len, "%s: %s", MUTATE_RECORD_KEY, why);
        return why != NULL;
    }
    char err[256];
    bool bad = !mutate_record_check(pod, rec, err, sizeof err);
    if (bad) snprintf(buf, len, "%s: %s", MUTATE_RECORD_KEY, err);
    json_object_put(rec);
    return bad;
}

/* Silent: a record that cannot be trusted is named when the injection
 * replaces it (mutate_record_apply), so that a pod refused for another
 * reason (malformed, past a bound) gets that one reason alone. */
bool record_honoured(mctx *m) {
    char why[320];
    json_object *meta, *ann, *v;
    if (!member(m->in, "metadata", &meta) || !member(meta, "annotations", &ann) || !member(ann, MUTATE_RECORD_KEY, &v))
        return false;
    if (record_mismatch(m->in, why, sizeof why)) return false;
    mctx_skip(m, MUTATE_SKIP_ALREADY_INSTRUMENTED);
    return true;
}

void mutate_strings_free(char **v, size_t n) {
    for (size_t i = 0; i < n; i++) free(v[i]);
    free(v);
}
