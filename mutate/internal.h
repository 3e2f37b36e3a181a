/* mutate/internal.h - what the engine's files share and nobody else sees.
 *
 * One mutation is one mctx: the request, the copy-on-write working pod, the
 * warnings so far and a per-request cache of the owner walk. Language files
 * are table entries (mutate_lang) in the style of h2o's handlers: static
 * callbacks behind one public descriptor each. */
#ifndef MUTATE_INTERNAL_H
#define MUTATE_INTERNAL_H

#include "base/alloc.h"
#include "base/json.h"
#include "base/sbuf.h"
#include "collector/container.h"
#include "mutate/mutate.h"

#include <stdbool.h>
#include <stddef.h>

#define ANN_PREFIX "instrumentation.opentelemetry.io/"
#define ANN_SIDECAR_PREFIX "sidecar.opentelemetry.io/"
#define LABEL_SIDECAR_INJECTED ANN_SIDECAR_PREFIX "injected"
/* Free-form: every key under it is a resource attribute (spec 3.7). */
#define ANN_RESOURCE "resource.opentelemetry.io/"

/* Every annotation key the engine reads besides the per-language ones
 * (ann_lang_key): this list is the only place they are spelled, so the
 * keys read and the keys annotations.c knows cannot drift apart. */
#define ANN_KEYS(X)                                                                                                    \
    X(SIDECAR_INJECT, ANN_SIDECAR_PREFIX "inject")                                                                     \
    X(CONTAINER_NAMES, ANN_PREFIX "container-names")                                                                   \
    X(PYTHON_PLATFORM, ANN_PREFIX "otel-python-platform")                                                              \
    X(PYTHON_MODE, ANN_PREFIX "python-mode")                                                                           \
    X(DOTNET_RUNTIME, ANN_PREFIX "otel-dotnet-auto-runtime")                                                           \
    X(GO_TARGET_EXE, ANN_PREFIX "otel-go-auto-target-exe")
#define ANN_ENUM_(id, key) ANN_##id,
typedef enum ann_id { ANN_KEYS(ANN_ENUM_) ANN_NKEYS } ann_id;
extern const char *const ann_keys[ANN_NKEYS];
#define ANN(id) (ann_keys[ANN_##id])
#define SIDECAR_NAME COLLECTOR_CONTAINER_NAME

/* What the owner walk found (spec 3.7); strings point into request objects. */
typedef struct owner_info {
    bool done;
    const char *name[6], *uid[6]; /* indexed by OWNER_* */
} owner_info;
enum { OWNER_DEPLOYMENT, OWNER_REPLICASET, OWNER_STATEFULSET, OWNER_DAEMONSET, OWNER_CRONJOB, OWNER_JOB };

typedef struct mctx {
    const mutate_request *req;
    const mutate_options *opt;
    const char *ns;        /* request namespace */
    json_object *in;       /* the request pod, read only */
    json_object *pod;      /* working copy */
    json_object *meta;     /* pod.metadata (copy) */
    json_object *spec;     /* pod.spec (copy) */
    mutate_result *res;
    owner_info owners;
    char *owner_fallback_rs; /* deployment name derived from pod-template-hash (owned) */
    /* The pod's and the namespace's annotations, read at the first
     * question (engine.c), their inject-<lang> values found in one pass
     * over each (any JSON type: the pod's wrong types are podcheck's), and
     * those values resolved. */
    bool ann_read;
    json_object *pod_ann, *ns_ann;
    json_object *pod_inject[MUTATE_NLANGS], *ns_inject[MUTATE_NLANGS];
    unsigned lang_resolved; /* MUTATE_BIT(id) when lang_value[id] is set */
    const char *lang_value[MUTATE_NLANGS];
} mctx;

struct lctx;

/* One language. Java/Node.js/Python/.NET share the init-container flow of
 * lang.c and fill in the hooks; SDK-only and the rest provide inject(). */
typedef struct mutate_lang {
    mutate_lang_id id;
    const char *name;      /* annotation suffix: inject-<name> */
    const char *display;   /* in messages: "Java", "NodeJS", ... */
    const char *config_key; /* the settings file's spelling (enable-<key>-auto-instrumentation); NULL: none */
    const char *spec_key;  /* spec.<key> of the Instrumentation */
    const char *res_key;   /* resources field inside spec.<key> */
    /* What the Instrumentation defaulting fills in (spec 2.9); NULL: nothing. */
    const char *default_image;
    const char *request_cpu, *request_memory;
    const char *volume;    /* volume and init container name */
    const char *init_mount;
    /* Skip the container (message in *why, static text) when the original
     * env makes injection impossible. */
    bool (*precheck)(struct lctx *l, json_object *c, const char **why);
    /* Once per pod, before any container: may reject the language (returns
     * false after adding a warning). */
    bool (*prepare)(struct lctx *l);
    /* Step 3: mount (and Python's PYTHONPATH). */
    void (*mount)(struct lctx *l, json_object *c);
    /* Step 5: the language's default env. */
    void (*defaults)(struct lctx *l, json_object *c);
    /* The init container command for this pod: *n words, static (the
     * cache compares them with its entries' before any JSON is made). */
    const char *const *(*command)(struct lctx *l, size_t *n);
    /* Replaces the whole flow (SDK-only). */
    void (*inject)(struct lctx *l);
} mutate_lang;

/* One selected language for this pod. */
typedef struct lctx {
    mctx *m;
    const mutate_lang *lang;
    json_object *inst;    /* the Instrumentation (borrowed from the source) */
    json_object *ispec;   /* inst.spec */
    json_object *lspec;   /* inst.spec.<lang>, may be NULL */
    const char *inst_ns;  /* namespace of the Instrumentation */
    char **names;         /* target container names (owned) */
    size_t nnames;
    const char *platform; /* python platform / dotnet runtime annotation value */
    bool entrypoint;      /* python: rewrite the command */
    const struct inst_part *part; /* lang_run's, while it runs; NULL elsewhere */
} lctx;

extern const mutate_lang mutate_lang_java, mutate_lang_nodejs, mutate_lang_python, mutate_lang_dotnet, mutate_lang_go,
    mutate_lang_apache, mutate_lang_nginx, mutate_lang_sdk;
const mutate_lang *mutate_lang_get(mutate_lang_id id);

/* engine.c */
void mctx_warn(mctx *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mctx_skip(mctx *m, mutate_skip why);
/* Records that language id went into container c. */
void mctx_injected(mctx *m, mutate_lang_id id, json_object *c);
json_object *pod_annotations(mctx *m); /* metadata.annotations, read once */
const char *pod_annotation(mctx *m, const char *key);
/* Pod/namespace precedence of spec 1.2; NULL-safe, returns "" when unset. */
const char *resolve_annotation(mctx *m, const char *key);
/* resolve_annotation of inject-<lang>, resolved once per mutation. */
const char *lang_annotation(mctx *m, mutate_lang_id id);
bool streq_ci(const char *a, const char *b);
/* "name" or "ns/name" (split at the first '/', spec 1.3) into malloc'ed parts;
 * a bare name is in the request's namespace. */
void split_ref(mctx *m, const char *value, char **ns, char **name);

/* jwalk.c: jget, jstr and jfind_named with the same answers, cheaper on
 * small objects; jw_add for members of objects the engine creates, under
 * a literal key the object does not have yet. Returns v. */
json_object *jw_get(json_object *o, const char *key);
const char *jw_str(json_object *o, const char *key);
json_object *jw_find_named(json_object *arr, const char *name, size_t *idx);
/* out[j] = jw_find_named(arr, names[j], NULL) for k distinct names, in one
 * pass over arr. */
void jw_find_named_many(json_object *arr, const char *const *names, size_t k, json_object **out);
/* json_object_object_get_ex's member (NULL for none, null or a non-object
 * o), for readers that check types themselves: no BASE_JSON_TRAP. */
json_object *jw_member(json_object *o, const char *key);
json_object *jw_add(json_object *o, const char *literal, json_object *v);
/* jcopy's copy, without json-c's lookup of each key it inserts. */
json_object *jw_copy(json_object *v);

/* env.c: the env merge rules of spec 2.0. */
json_object *env_find(json_object *c, const char *name, size_t *idx);
/* out[j] = env_find(c, names[j], NULL) for k distinct names, in one pass. */
void env_find_many(json_object *c, const char *const *names, size_t k, json_object **out);
json_object *env_new_value(const char *name, const char *value);
/* c's env list, created (or a value of another type replaced) as jarr_at
 * does: the list the appends below go to. */
json_object *env_list(json_object *c);
json_object *env_new_field(const char *name, const char *field_path); /* downward API fieldRef */
bool env_has_value_from(json_object *c, const char *name);
void env_append(json_object *c, const char *name, const char *value);
/* Sets the value of e, an entry of c's env (which may be shared with the
 * request: e is replaced by a copy, so e must not be used afterwards). */
void env_set_value(json_object *c, json_object *e, const char *value);
void env_append_field(json_object *c, const char *name, const char *field_path);
void env_prepend_field(json_object *c, const char *name, const char *field_path);
void env_append_if_not_set(json_object *c, json_object *list);
/* The same, the entries of list shared instead of copied: list's entries
 * must not be edited in place (inst_part's). names: env_names_of(list),
 * or NULL for them to be read. */
void env_share_if_not_set(json_object *c, json_object *list, json_object *names);
/* The same, as if the np names of pre (distinct) were set in c; found[j]:
 * env_find(c, pre[j], NULL) before, for the caller to add those missing. */
void env_append_if_not_set_but(json_object *c, json_object *list, const char *const *pre, size_t np,
                               json_object **found);
void env_share_if_not_set_but(json_object *c, json_object *list, json_object *names, const char *const *pre, size_t np,
                              json_object **found);
/* The names of list's entries (references to their string members), when
 * each has one and they are distinct; NULL otherwise (and for an empty or
 * very long list). What the shares above would read, kept with a list
 * that does not change (inst_part's). */
json_object *env_names_of(json_object *list);
/* Appends (prepends) a reference to e, an entry the engine never edits. */
void env_push(json_object *c, json_object *e);
void env_push_front(json_object *c, json_object *e);
/* The fieldRef entry of cache_const's slot, for cache_const (env.c). */
json_object *env_const_field(unsigned slot);
void env_move_to_end(json_object *c, const char *name);
void mount_add(json_object *c, const char *name, const char *path, bool readonly);
bool mount_path_taken(json_object *c, const char *path);

/* sdk.c: spec 3. */
void sdk_common_env(lctx *l, json_object *c);          /* 3.2, 3.3 */
void sdk_configure(lctx *l, json_object *c, json_object *app); /* 3.4-3.9 */
void sdk_tls_volumes(lctx *l);                          /* the pod volumes for 3.5 */
void sdk_inst_env(json_object *ispec, struct inst_part *p); /* inst_part's env values, flags, TLS */
char *sdk_service_name(lctx *l, json_object *app);      /* 3.4 alone (malloc'ed) */
bool sdk_tls_check(lctx *l);                            /* existence of the TLS objects */
const owner_info *owners_walk(mctx *m);

/* optin.c: spec 1. */
void optin_instrumentation(mctx *m);
bool already_instrumented(mctx *m);

/* lang.c: the shared flow of spec 2.0. */
void lang_run(lctx *l);
json_object *lang_volume(lctx *l, const char *name);

/* annotations.c: the keys the engine reads, and the warning for keys that
 * look meant for it but are none of them. */
#define ANN_KEY_MAX 96 /* longer than any key the engine reads */
/* ANN_PREFIX "inject-<lang>" (names false) or its container list key
 * "<lang>-container-names" (names true) into buf; returns buf. */
const char *ann_lang_key(char buf[ANN_KEY_MAX], mutate_lang_id id, bool names);
/* Edits (insert, delete, change, swap neighbours; ASCII case aside) from a
 * to b when at most k, else k + 1; strings of at most 128 bytes. */
unsigned ann_edits(const char *a, size_t la, const char *b, size_t lb, unsigned k);
/* Warns about each key of the pod's and the namespace's annotations that
 * is near, but not, one the engine reads (MUTATE_SKIP_UNKNOWN_ANNOTATION). */
void ann_check(mctx *m);

/* bounds.c: the bounds of mutate.h; false (with the warning) when the pod
 * is past one. */
bool bounds_check(mctx *m);

/* podcheck.c: the types core/v1 requires of what the engine touches; false
 * (with the warning and res->invalid_*) when the pod is malformed. The
 * shape step (metadata, annotations, spec) runs before the opt-in test,
 * the rest after bounds_check. */
bool podcheck_shape(mctx *m);
bool podcheck(mctx *m);

/* Appends "/" and tok escaped per RFC 6901 (~ -> ~0, / -> ~1): the JSON
 * pointers of the patch and of the record. */
void mutate_pointer_push(sbuf *p, const char *tok);

/* patch.c: the diff with its own account of what it found, which the
 * record is built from (record.c) instead of comparing the pods again: one
 * entry per operation, in the operations' order, with the pairs of nodes
 * the walk stood on. a[d], b[d] are the original's and the mutated pod's
 * nodes at depth d (a[0], b[0] the pods), key[d] the member name leading
 * to them (NULL: an array element). At the target (depth) a is the old
 * value (NULL for an add), b the new one (NULL for a remove). Depths past
 * PATCH_DEPTH - 1 keep only the first levels. */
#define PATCH_DEPTH 7
typedef struct patch_change {
    char op; /* 'a' add, 'r' replace, 'd' remove */
    unsigned depth;
    json_object *a[PATCH_DEPTH], *b[PATCH_DEPTH];
    const char *key[PATCH_DEPTH];
} patch_change;
typedef struct patch_log {
    patch_change *v;
    size_t n, cap;
} patch_log;
/* ops (a json-c array) and text (the array's members as JSON text, no
 * brackets) each NULL when not wanted; returns the number of operations. */
size_t patch_diff_logged(json_object *a, json_object *b, json_object *ops, sbuf *text, patch_log *log);

/* record_log.c: the record's text (record.h) from the diff's log, as
 * mutate_record_apply's comparison would write it, the annotation's own
 * unset or was included; false (o untouched) when the log holds what only
 * the comparison handles. */
bool record_text_from_log(json_object *orig, const mutate_result *res, const patch_log *log, sbuf *o);
/* record.c: mutate_record_apply with the diff's log (NULL: compare). */
/* The operation adding the record goes to res->patch when ops, and as
 * text (",{...}") to text when not NULL. */
void record_apply(json_object *orig, mutate_result *res, const patch_log *log, sbuf *text, bool ops);

/* record.c: notes that obj (an Instrumentation for language lang, or the
 * collector when lang is MUTATE_NLANGS) was injected from, for the record. */
void record_use(mctx *m, mutate_lang_id lang, json_object *obj);
/* record_use's entry alone (req_ns: the namespace of an object without
 * one), and its adding (u taken). res->uses is only read: an entry may be
 * shared (inst_part's). */
json_object *record_use_new(const char *req_ns, mutate_lang_id lang, json_object *obj);
void record_use_push(mctx *m, json_object *u);
/* The record the pod carries and whether it still matches the pod: true
 * when the engine must leave the pod alone. One it ignores is named by
 * mutate_record_apply when the injection replaces it. */
bool record_honoured(mctx *m);

/* engine.c: a copy of container e for the working pod: a new object
 * sharing e's members, with new env, volumeMounts and command lists (the
 * only members the engine edits in a container it did not create). */
json_object *cow_container(json_object *e);

/* cache.c: collector_build's answer for this request, from cache c (NULL:
 * built for it). out->volumes is then shared with the cache: read only.
 * *use: a reference to the record's uses entry for col, kept with the
 * part (shared: only read), or NULL for the caller to make it. */
int cache_collector_part(mutate_cache *c, json_object *col, const collector_build_opts *o, collector_pod *out,
                         json_object **use, char *err, size_t errlen);
/* A new reference to the object in slot, made by make(slot) once per cache
 * (every call without one): objects that are the same in every request,
 * which the engine never edits in place. Slots are the callers' own. */
enum {
    CACHE_CONST_POD_NAME,
    CACHE_CONST_POD_UID,
    CACHE_CONST_NODE_NAME,
    CACHE_CONST_POD_IP,
    CACHE_CONST_NODE_IP,
    CACHE_NCONST
};
json_object *cache_const(mutate_cache *c, unsigned slot, json_object *(*make)(unsigned slot));

/* What lang.c's flow derives from one Instrumentation for one language,
 * whatever the pod: copies of spec.env and spec.<lang>.env (entries
 * shared into the containers, never edited in place), the env entries of
 * the exporter endpoint, propagators and sampler (NULL: none), the shared
 * volume and the init containers without the securityContext taken from
 * the pod (inits; sc_from_pod: the Instrumentation names none), the
 * entry of res->uses (record_use), and the flags, exporter TLS names and
 * resource attributes sdk.c reads (sdk_inst_env). Every json-c member is a reference of the
 * holder's: inst_part_release drops them; the tls_* strings point into
 * tls, a copy of spec.exporter.tls. */
typedef struct inst_part {
    json_object *env, *lang_env;
    json_object *env_names, *lang_env_names; /* env_names_of each, NULL: read per pod */
    json_object *endpoint, *propagators, *sampler, *sampler_arg;
    json_object *volume, *inits, *command;
    json_object *use; /* record_use's entry; NULL: the Instrumentation has no namespace */
    json_object *tls; /* NULL: spec.exporter.tls is not an object */
    /* spec.resource.resourceAttributes as sdk.c reads them, every value a
     * string (scalars as sdk.c writes them, the rest left out); NULL when
     * it is not an object. */
    json_object *attrs;
    const char *tls_secret, *tls_configmap, *tls_ca, *tls_cert, *tls_key;
    bool sc_from_pod;
    bool uids, use_labels; /* addK8sUIDAttributes, useLabelsForResourceAttributes */
} inst_part;
/* lang.c: the part for l with command cmd (taken), built. */
void inst_part_build(lctx *l, json_object *cmd, inst_part *out);
void inst_part_release(inst_part *p);
/* cache.c: the part of l (its Instrumentation, language and init
 * container command of ncmd words), from cache c (NULL: built for it). */
void cache_inst_part(mutate_cache *c, lctx *l, const char *const *cmd, size_t ncmd, inst_part *out);

/* sidecar.c: spec 4. */
void sidecar_run(mctx *m);

#endif
