/* mutate/engine.c - one mutation from request to patch.
 *
 * The working pod is copy-on-write: a new top-level object, shallow copies
 * of metadata and spec, and copies of only the lists the engine edits
 * (containers, initContainers, volumes, labels). Everything else is shared
 * with the request, so the patch diff skips it by pointer and a large pod
 * with big managedFields costs no more than a small one.
 *
 * Order follows the reference: the collector sidecar first, then the
 * instrumentation languages. Unlike the reference (spec 7.11), a failing
 * part never discards the others; it leaves a warning instead. */
#include "mutate/internal.h"

#include "base/jtext.h"
#include "base/versions.h"
#include "mutate/record.h"

#include <json-c/linkhash.h>

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *mutate_lang_name(mutate_lang_id id) { return id < MUTATE_NLANGS ? mutate_lang_get(id)->name : "?"; }

void mutate_options_init(mutate_options *o) {
    memset(o, 0, sizeof *o);
    /* Reference defaults (spec 0.1): Go off; Nginx off in code but on in the
     * shipped manifest, which is what users run. */
    o->enabled = ~0u & ~MUTATE_BIT(MUTATE_GO);
    o->implemented = ~0u;
    o->multi_instrumentation = true;
    o->native_sidecars = false;
    o->python_mode = MUTATE_PYTHON_PYTHONPATH;
    o->collector_image = DEFAULT_COLLECTOR_IMAGE;
    o->record = true;
}

void mctx_warn(mctx *m, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    m->res->warnings = xrealloc(m->res->warnings, sizeof *m->res->warnings * (m->res->nwarnings + 1));
    m->res->warnings[m->res->nwarnings++] = s;
}

void mctx_skip(mctx *m, mutate_skip why) { m->res->skips |= 1u << why; }

void mctx_injected(mctx *m, mutate_lang_id id, json_object *c) {
    const char *name = jw_str(c, "name");
    mutate_result *r = m->res;
    r->into[id] = xrealloc(r->into[id], sizeof *r->into[id] * (r->ninto[id] + 1));
    r->into[id][r->ninto[id]++] = xstrdup(name ? name : "");
}

bool streq_ci(const char *a, const char *b) { return a && b && strcasecmp(a, b) == 0; }

void split_ref(mctx *m, const char *value, char **ns, char **name) {
    const char *slash = strchr(value, '/');
    *ns = slash ? xstrndup(value, (size_t)(slash - value)) : xstrdup(m->ns);
    *name = xstrdup(slash ? slash + 1 : value);
}

#define INJECT_PREFIX ANN_PREFIX "inject-"
#define INJECT_PREFIX_LEN (sizeof INJECT_PREFIX - 1)

/* The inject-<lang> members of an annotation map, in one pass over it:
 * every pod is asked about each language (three lookups of a 40-byte key
 * apiece, each hashed and compared whole), and a map holds a handful of
 * keys, most not ours. The member found is the one a lookup finds (the
 * keys of an object are distinct). */
static void find_inject(json_object *ann, json_object *out[MUTATE_NLANGS]) {
    if (!json_object_is_type(ann, json_type_object)) return;
    for (struct lh_entry *e = lh_table_head(json_object_get_object(ann)); e; e = lh_entry_next(e)) {
        const char *k = lh_entry_k(e);
        if (k[0] != 'i' || strncmp(k, INJECT_PREFIX, INJECT_PREFIX_LEN) != 0) continue;
        for (int id = 0; id < MUTATE_NLANGS; id++)
            if (strcmp(k + INJECT_PREFIX_LEN, mutate_lang_name(id)) == 0) {
                out[id] = (json_object *)lh_entry_v(e);
                break;
            }
    }
}

/* Read once: every opt-in question asks both (a few dozen per pod). The
 * working pod's metadata is a shallow copy sharing the annotations, which
 * the engine never writes. */
static void read_annotations(mctx *m) {
    if (m->ann_read) return;
    m->ann_read = true;
    m->pod_ann = jget(m->meta, "annotations");
    m->ns_ann = jget(jget(m->req->ns, "metadata"), "annotations");
    find_inject(m->pod_ann, m->pod_inject);
    find_inject(m->ns_ann, m->ns_inject);
}

json_object *pod_annotations(mctx *m) {
    read_annotations(m);
    return m->pod_ann;
}

const char *pod_annotation(mctx *m, const char *key) { return jstr(pod_annotations(m), key); }

/* The pod's value p over the namespace's n, as the reference resolves. */
static const char *resolve(const char *p, const char *n) {
    if (!p) p = "";
    if (!n || !*n) return p;
    if (!*p) return n;
    if (!streq_ci(p, "true")) return p;
    if (streq_ci(n, "false")) return p;
    return n;
}

const char *resolve_annotation(mctx *m, const char *key) {
    const char *p = pod_annotation(m, key);
    return resolve(p, jstr(m->ns_ann, key));
}

static const char *str_of(json_object *v) {
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

const char *lang_annotation(mctx *m, mutate_lang_id id) {
    if (!(m->lang_resolved & MUTATE_BIT(id))) {
        read_annotations(m);
        m->lang_value[id] = resolve(str_of(m->pod_inject[id]), str_of(m->ns_inject[id]));
#ifdef MUTATE_SELF_CHECK
        char key[ANN_KEY_MAX];
        if (strcmp(m->lang_value[id], resolve_annotation(m, ann_lang_key(key, id, false))) != 0) {
            fprintf(stderr, "engine: the inject-%s annotations found in one pass differ from their lookups\n",
                    mutate_lang_name(id));
            abort();
        }
#endif
        m->lang_resolved |= MUTATE_BIT(id);
    }
    return m->lang_value[id];
}

/* Shallow object copy: same children (new references), new container.
 * The keys of o are distinct: no lookup before each insert; and a key o
 * holds as constant is a literal (cow_container says which), not copied. */
static json_object *shallow(json_object *o) {
    json_object *c = jnew_obj();
    for (struct lh_entry *en = lh_table_head(json_object_get_object(o)); en; en = lh_entry_next(en)) {
        unsigned opts = JSON_C_OBJECT_ADD_KEY_IS_NEW | (lh_entry_k_is_constant(en) ? JSON_C_OBJECT_ADD_CONSTANT_KEY : 0);
        if (json_object_object_add_ex(c, lh_entry_k(en), json_object_get((json_object *)lh_entry_v(en)), opts) != 0)
            base_oom();
    }
    return c;
}

static void cow_deep(json_object *parent, const char *key) {
    json_object *v = jget(parent, key);
    if (v) jset(parent, key, jw_copy(v));
}

/* A list whose elements are never edited in place (volumes): a new array
 * holding the same elements, so appends do not touch the request. */
static void cow_list(json_object *parent, const char *key) {
    json_object *v = jget(parent, key);
    if (!json_object_is_type(v, json_type_array)) return;
    json_object *c = jnew_arr();
    for (size_t i = 0; i < jlen(v); i++) jpush(c, json_object_get(json_object_array_get_idx(v, i)));
    jset(parent, key, c);
}

/* Containers: the engine edits env, volumeMounts and command of a container
 * and nothing else, so only those are copied; probes, ports, resources and
 * the rest stay shared and the diff skips them by pointer. The three lists
 * are new but their elements are the request's: mounts and command words
 * are only added, inserted or removed, never edited, and the few env
 * entries whose value changes are copied then (env_set_value); the others
 * are skipped by pointer too. */
static bool edited_list(const char *k) {
    switch (k[0]) {
    case 'e': return strcmp(k, "env") == 0;
    case 'v': return strcmp(k, "volumeMounts") == 0;
    case 'c': return strcmp(k, "command") == 0;
    default: return false;
    }
}

/* One pass over e's entries, in order: a shallow copy with the three lists
 * replaced as cow_list would, without looking each up and replacing it. A
 * key json-c holds as constant is a string literal (container.c's put,
 * jw_add, patch.c's op_member and jfast's API field names, base/jkeys.c,
 * are the only ones adding such keys) and stays constant in the copy; the
 * others are copied. */
json_object *cow_container(json_object *e) {
    json_object *c = jnew_obj();
    for (struct lh_entry *en = lh_table_head(json_object_get_object(e)); en; en = lh_entry_next(en)) {
        const char *k = lh_entry_k(en);
        json_object *v = (json_object *)lh_entry_v(en), *nv;
        if (json_object_is_type(v, json_type_array) && edited_list(k)) {
            size_t n = json_object_array_length(v);
            nv = jnew_arr();
            for (size_t i = 0; i < n; i++) jpush(nv, json_object_get(json_object_array_get_idx(v, i)));
        } else {
            nv = json_object_get(v);
        }
        unsigned opts = JSON_C_OBJECT_ADD_KEY_IS_NEW | (lh_entry_k_is_constant(en) ? JSON_C_OBJECT_ADD_CONSTANT_KEY : 0);
        if (json_object_object_add_ex(c, k, nv, opts) != 0) base_oom();
    }
    return c;
}

static void cow_containers(json_object *parent, const char *key) {
    json_object *v = jget(parent, key);
    if (!json_object_is_type(v, json_type_array)) return;
    json_object *c = jnew_arr();
    for (size_t i = 0; i < jlen(v); i++) {
        json_object *e = json_object_array_get_idx(v, i);
        jpush(c, json_object_is_type(e, json_type_object) ? cow_container(e) : json_object_get(e));
    }
    jset(parent, key, c);
}

/* Does an annotation (of the pod or its namespace) ask for a sidecar, its
 * removal, or a language? An opt-in annotation of the pod that is not a
 * string (YAML's unquoted true) counts as asking: it was meant to, and
 * podcheck then says what to write instead of the pod going by silently. */
static bool asks(mctx *m) {
    if (*resolve_annotation(m, ANN(SIDECAR_INJECT))) return true;
    json_object *ann = m->pod_ann;
    if (jget(ann, ANN(SIDECAR_INJECT)) && !jstr(ann, ANN(SIDECAR_INJECT))) return true;
    for (int id = 0; id < MUTATE_NLANGS; id++) {
        const char *v = lang_annotation(m, id);
        if (*v && !streq_ci(v, "false")) return true;
        if (m->pod_inject[id] && !json_object_is_type(m->pod_inject[id], json_type_string)) return true;
    }
    return false;
}

void mutate_result_free(mutate_result *res) {
    if (!res) return;
    json_object_put(res->pod);
    json_object_put(res->patch);
    free(res->patch_text);
    json_object_put(res->uses);
    for (size_t i = 0; i < res->nwarnings; i++) free(res->warnings[i]);
    free(res->warnings);
    for (int l = 0; l < MUTATE_NLANGS; l++) {
        for (size_t i = 0; i < res->ninto[l]; i++) free(res->into[l][i]);
        free(res->into[l]);
    }
    free(res->invalid_path);
    free(res->invalid_reason);
    memset(res, 0, sizeof *res);
}

static int mutate(const mutate_request *req, mutate_result *res) {
    memset(res, 0, sizeof *res);
    res->patch = jnew_arr();
    mctx m = {.req = req, .opt = req->opt, .ns = req->namespace ? req->namespace : "", .in = req->pod, .res = res};
    if (!json_object_is_type(req->pod, json_type_object)) {
        mctx_warn(&m, "the object is not a pod");
        mctx_skip(&m, MUTATE_SKIP_MALFORMED);
        return -1;
    }
    if (!podcheck_shape(&m)) {
        res->pod = json_object_get(req->pod);
        return -1;
    }
    json_object *meta = jget(req->pod, "metadata"), *spec = jget(req->pod, "spec");

    /* Read-only until a pod asks for something: most pods do not, and they
     * must cost nothing whatever their size. Then the bounds and the types
     * of what the engine touches, before any copy is made; a pod past a
     * bound or malformed gets that one warning and nothing else. Misspelt
     * keys are looked for in every pod (a bounded, cheap pass): the pod
     * whose only opt-in is misspelt is one that asks for nothing. */
    m.meta = meta;
    m.spec = spec;
    bool asked = res->asked = asks(&m);
    if (asked && (!bounds_check(&m) || !podcheck(&m))) {
        res->pod = json_object_get(req->pod);
        return -1;
    }
    ann_check(&m);
    /* Injected before (a re-invocation): its record says so. After the
     * checks, so that a malformed pod is refused whatever it carries. */
    if (!asked || record_honoured(&m)) {
        res->pod = json_object_get(req->pod);
        return 0;
    }

    m.pod = shallow(req->pod);
    m.meta = meta ? shallow(meta) : jnew_obj();
    jset(m.pod, "metadata", m.meta);
    cow_deep(m.meta, "labels");
    m.spec = shallow(spec);
    jset(m.pod, "spec", m.spec);
    cow_containers(m.spec, "containers");
    cow_containers(m.spec, "initContainers");
    cow_list(m.spec, "volumes");
    /* Annotations are read, never written: an untouched metadata stays
     * pointer-equal in substance, and the diff finds no change there. */

    sidecar_run(&m);
    optin_instrumentation(&m);

    /* A metadata we created for a pod without one (absent, or null) must
     * not show up as a change unless something was put into it. */
    if (!meta && json_object_object_length(m.meta) == 0) {
        json_object *orig;
        if (json_object_object_get_ex(req->pod, "metadata", &orig))
            jset(m.pod, "metadata", json_object_get(orig));
        else json_object_object_del(m.pod, "metadata");
    }
    /* The record is written from what the diff found (its log), not from
     * a second comparison of the two pods. */
    patch_log log = {0};
    sbuf text = SBUF_INIT;
    bool want_text = req->patch_text, want_ops = !req->patch_text;
#ifdef MUTATE_SELF_CHECK
    want_text = want_ops = true; /* both, held to the same bytes below */
#endif
    /* Room for a typical patch (a sidecar and a language: about 6 KB with
     * the record) from the start: the text grows by doubling, and each
     * step copies what is written so far. */
    if (want_text) {
        sbuf_reserve(&text, 8192);
        sbuf_putc(&text, '[');
    }
    res->nops = patch_diff_logged(req->pod, m.pod, want_ops ? res->patch : NULL, want_text ? &text : NULL,
                                  req->opt->record ? &log : NULL);
    res->pod = m.pod;
    if (req->opt->record) record_apply(req->pod, res, &log, want_text ? &text : NULL, want_ops);
    free(log.v);
    if (want_text) sbuf_putc(&text, ']');
#ifdef MUTATE_SELF_CHECK
    size_t jlen_;
    char *j = jtext(res->patch, &jlen_);
    if (res->nops != json_object_array_length(res->patch) || jlen_ != text.len || memcmp(j, text.s, jlen_) != 0) {
        fprintf(stderr, "patch: the text written while diffing differs from the operations':\n%s\n%s\n", text.s, j);
        abort();
    }
    free(j);
    if (req->patch_text) { /* as without the check: no operations kept */
        json_object_put(res->patch);
        res->patch = jnew_arr();
    } else {
        sbuf_free(&text);
    }
#endif
    if (want_text && res->nops && req->patch_text) res->patch_text = sbuf_take(&text, &res->patch_len);
    sbuf_free(&text);

    free(m.owner_fallback_rs);
    return 0;
}

int mutate_pod(const mutate_request *req, mutate_result *res) {
    int rc = mutate(req, res);
    if (req->patch_text) { /* the text is the answer; the pod would lack the record (record_apply) */
        json_object_put(res->pod);
        res->pod = NULL;
    }
    return rc;
}
