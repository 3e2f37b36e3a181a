/* mutate/cache.c - what one thread's mutations keep between requests: the
 * collector's part of the sidecar (collector/container.c), built once per
 * collector version and options instead of once per pod (issue 15).
 *
 * collector_build is a function of the collector's spec (and the values the
 * store derives from it) and of the options it is given; what depends on
 * the pod is added by sidecar.c afterwards. An entry is keyed on the
 * collector's namespace, name, uid, resourceVersion and generation, on the
 * digest of its spec (MUTATE_SPEC_HASH: the store's, taken once per object;
 * computed here for an object that did not go through the store), and on
 * every option collector_build reads (default image, native, proxy env), all
 * compared by value: a collector replaced by the watch has a new
 * resourceVersion (the API server changes it on every write; the digest,
 * FNV-1a, is no defence against a crafted collision and is not needed for
 * one), one re-read from a file without one a new digest, and no key is a
 * pointer the store may free and reuse. Entries own everything
 * (collector_build copies what it takes from the collector), so a snapshot
 * released or a collector deleted leaves them valid; entries no longer
 * asked for are evicted, least recently used first, once the cache is past
 * its count or size (MUTATE_CACHE_ENTRIES, MUTATE_CACHE_BYTES).
 *
 * A request gets a copy-on-write copy (cow_container: what the engine edits
 * in a container, env, volumeMounts and command, is a new list; the rest,
 * OTEL_CONFIG's text included, is shared with the entry) and the volumes
 * read-only. The objects are json-c's, whose reference counts are not
 * atomic: a cache serves one thread, and the results it went into are
 * freed there too. cache_const keeps the few objects the engine adds the
 * same to every pod (the sidecar's downward-API env entries), shared the
 * same way: an env entry is never edited in place (env_set_value copies
 * it). What a request shares also carries its JSON text (jtext_keep, kept
 * once per entry and counted in its bytes), which each answer's patch
 * copies instead of writing the values again (about 6K instructions a
 * 4 KB review); the checked builds write them afresh and abort on a
 * difference, so an edit in place of a shared value cannot go unseen.
 * An entry also keeps the record's uses entry of its collector (built on
 * the miss from what the key holds, its text kept; a request pushes a
 * reference into res->uses, which is only read), unless the collector has
 * no namespace: the entry would then name the pod's.
 * Trade-off: a hit costs the key (one pass over the collector's
 * metadata) and the shallow copies, about 3K instructions, instead of the
 * whole build, about 28K for a small collector; a thread holds up to
 * MUTATE_CACHE_BYTES of the collectors it served.
 *
 * The Instrumentations' parts (cache_inst_part, at the end of this file)
 * are kept the same way in a table of their own. */
#include "mutate/internal.h"

#include "base/jtext.h"
#include "mutate/record.h"

#include <json-c/linkhash.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What the entries of both tables begin with: when last used, what they
 * hold, and the object's identity (its key's by-value part, ckey). */
typedef struct slot {
    uint64_t used; /* the tick of the last request served; 0: free slot */
    size_t bytes;
    char hash[17];
    char *ns, *name, *uid, *rv; /* owned; NULL when absent */
    bool has_gen;
    int64_t gen;
} slot;

typedef struct centry {
    slot s;
    char *image; /* owned; NULL when absent */
    bool native;
    char **proxy; /* owned copies of the proxy env entries */
    size_t nproxy;
    collector_pod part;
    json_object *use; /* record_use's entry; NULL: the collector has no namespace */
} centry;

/* One Instrumentation's part for one language (cache_inst_part). */
typedef struct ientry {
    slot s;
    mutate_lang_id lang;
    inst_part part; /* part.command is in the key too */
} ientry;

/* One table's entries and counts: the collectors' or the Instrumentations'. */
typedef struct table {
    void *v; /* cap entries of elem bytes, each beginning with a slot */
    size_t elem;
    size_t *entries, *bytes;
    unsigned long *evictions;
    void (*clear)(mutate_cache *c, slot *s);
} table;

struct mutate_cache {
    json_object *consts[CACHE_NCONST]; /* cache_const's, made at first use */
    ientry *iv; /* cap of them, within their own max_bytes (st.inst_bytes) */
    centry *v;
    size_t cap, max_bytes;
    uint64_t tick;
    mutate_cache_stats st;
};

mutate_cache *mutate_cache_new(size_t entries, size_t max_bytes) {
    mutate_cache *c = xcalloc(1, sizeof *c);
    c->cap = entries ? entries : MUTATE_CACHE_ENTRIES;
    c->max_bytes = max_bytes ? max_bytes : MUTATE_CACHE_BYTES;
    c->v = xcalloc(c->cap, sizeof *c->v);
    c->iv = xcalloc(c->cap, sizeof *c->iv);
    return c;
}

static void slot_free(slot *s) {
    free(s->ns);
    free(s->name);
    free(s->uid);
    free(s->rv);
}

static void entry_clear(mutate_cache *c, slot *s) {
    centry *e = (centry *)s;
    if (!s->used) return;
    collector_pod_free(&e->part);
    json_object_put(e->use);
    slot_free(s);
    free(e->image);
    for (size_t i = 0; i < e->nproxy; i++) free(e->proxy[i]);
    free(e->proxy);
    c->st.entries--;
    c->st.bytes -= s->bytes;
    memset(e, 0, sizeof *e);
}

static void ientry_clear(mutate_cache *c, slot *s) {
    ientry *e = (ientry *)s;
    if (!s->used) return;
    inst_part_release(&e->part);
    slot_free(s);
    c->st.inst_entries--;
    c->st.inst_bytes -= s->bytes;
    memset(e, 0, sizeof *e);
}

static table collectors(mutate_cache *c) {
    return (table){c->v, sizeof(centry), &c->st.entries, &c->st.bytes, &c->st.evictions, entry_clear};
}

static table insts(mutate_cache *c) {
    return (table){c->iv, sizeof(ientry), &c->st.inst_entries, &c->st.inst_bytes, &c->st.inst_evictions, ientry_clear};
}

static slot *slot_at(const table *t, size_t i) { return (slot *)((char *)t->v + i * t->elem); }

void mutate_cache_free(mutate_cache *c) {
    if (!c) return;
    for (size_t i = 0; i < c->cap; i++) entry_clear(c, &c->v[i].s);
    for (size_t i = 0; i < c->cap; i++) ientry_clear(c, &c->iv[i].s);
    free(c->iv);
    for (unsigned i = 0; i < CACHE_NCONST; i++) json_object_put(c->consts[i]);
    free(c->v);
    free(c);
}

void mutate_cache_get_stats(const mutate_cache *c, mutate_cache_stats *st) { *st = c->st; }

json_object *cache_const(mutate_cache *c, unsigned slot, json_object *(*make)(unsigned slot)) {
    if (!c || slot >= CACHE_NCONST) return make(slot);
    if (!c->consts[slot]) {
        c->consts[slot] = make(slot);
        jtext_keep(c->consts[slot]);
    }
    return json_object_get(c->consts[slot]);
}

/* What the collector's fields are, read once per request. */
typedef struct ckey {
    char hash[17];
    const char *ns, *name, *uid, *rv;
    bool has_gen;
    int64_t gen;
} ckey;

static const char *str_of(json_object *v) {
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

/* One pass over the collector's members and one over its metadata's (a
 * few each) instead of a hashed lookup per field: jstr's and jint's
 * answers (a string, an integer or an integral double). */
static void key_of(json_object *col, ckey *k) {
    json_object *meta = NULL, *gen = NULL;
    const char *h = NULL;
    memset(k, 0, sizeof *k);
    json_object_object_foreach(col, ck, cv) {
        if (ck[0] == 'm' && strcmp(ck, "metadata") == 0) meta = cv;
        else if (ck[0] == '@' && strcmp(ck, MUTATE_SPEC_HASH) == 0) h = str_of(cv);
    }
    if (json_object_is_type(meta, json_type_object)) {
        json_object_object_foreach(meta, mk, mv) {
            switch (mk[0]) {
            case 'n':
                if (strcmp(mk, "name") == 0) k->name = str_of(mv);
                else if (strcmp(mk, "namespace") == 0) k->ns = str_of(mv);
                break;
            case 'u':
                if (strcmp(mk, "uid") == 0) k->uid = str_of(mv);
                break;
            case 'r':
                if (strcmp(mk, "resourceVersion") == 0) k->rv = str_of(mv);
                break;
            case 'g':
                if (strcmp(mk, "generation") == 0) gen = mv;
                break;
            default: break;
            }
        }
    }
    if (gen) k->has_gen = jint(meta, "generation", &k->gen);
    if (h && strlen(h) == 16) memcpy(k->hash, h, 17);
    else mutate_spec_hash(jget(col, "spec"), k->hash);
}

static bool same(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }
static char *dup_or_null(const char *s) { return s ? xstrdup(s) : NULL; }

/* The object's identity, the same by value. */
static bool slot_is(const slot *s, const ckey *k) {
    if (memcmp(s->hash, k->hash, 17) != 0) return false;
    if (!same(s->ns, k->ns) || !same(s->name, k->name) || !same(s->uid, k->uid) || !same(s->rv, k->rv)) return false;
    return s->has_gen == k->has_gen && (!k->has_gen || s->gen == k->gen);
}

/* A newly taken slot: k's identity copied, bytes held, used now. */
static void slot_take(mutate_cache *c, const table *t, slot *s, const ckey *k, size_t bytes) {
    memcpy(s->hash, k->hash, 17);
    s->ns = dup_or_null(k->ns);
    s->name = dup_or_null(k->name);
    s->uid = dup_or_null(k->uid);
    s->rv = dup_or_null(k->rv);
    s->has_gen = k->has_gen;
    s->gen = k->gen;
    s->bytes = bytes;
    s->used = c->tick;
    ++*t->entries;
    *t->bytes += bytes;
}

static bool matches(const centry *e, const ckey *k, const collector_build_opts *o) {
    if (!slot_is(&e->s, k)) return false;
    if (e->native != o->native || !same(e->image, o->default_image) || e->nproxy != o->nproxy_env) return false;
    for (size_t i = 0; i < e->nproxy; i++)
        if (!same(e->proxy[i], o->proxy_env[i])) return false;
    return true;
}

/* What an entry holds, roughly: json-c's objects and the text they own. */
static size_t tree_bytes(json_object *v) {
    size_t n = 64;
    switch (json_object_get_type(v)) {
    case json_type_string: n += (size_t)json_object_get_string_len(v); break;
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++) n += 8 + tree_bytes(json_object_array_get_idx(v, i));
        break;
    case json_type_object: {
        json_object_object_foreach(v, key, m) n += 48 + strlen(key) + tree_bytes(m);
        break;
    }
    default: break;
    }
    return n;
}

/* The least recently used entries of t go until one slot is free and bytes
 * more fit (NULL for one larger than the whole budget: served, never kept). */
static slot *make_room(mutate_cache *c, const table *t, size_t bytes) {
    if (bytes > c->max_bytes) return NULL;
    for (;;) {
        slot *lru = NULL, *free_slot = NULL;
        for (size_t i = 0; i < c->cap; i++) {
            slot *e = slot_at(t, i);
            if (!e->used) {
                if (!free_slot) free_slot = e;
            } else if (!lru || e->used < lru->used) {
                lru = e;
            }
        }
        if (free_slot && *t->bytes + bytes <= c->max_bytes) return free_slot;
        if (!lru) return NULL;
        t->clear(c, lru);
        ++*t->evictions;
    }
}

/* A request's own copy of an entry's part: new containers whose edited
 * lists are new (the engine may inject a language into otc-container or
 * into the collector's init containers), the volumes shared (sidecar.c
 * only reads them; the pod's volumes list takes references). */
static void lend(const collector_pod *from, collector_pod *out) {
    out->container = cow_container(from->container);
    out->volumes = json_object_get(from->volumes);
    out->init_containers = NULL;
    if (!from->init_containers) return;
    out->init_containers = jnew_arr();
    for (size_t i = 0; i < jlen(from->init_containers); i++) {
        json_object *e = json_object_array_get_idx(from->init_containers, i);
        jpush(out->init_containers, json_object_is_type(e, json_type_object) ? cow_container(e) : json_object_get(e));
    }
}

/* The text of what a request shares from an entry, kept with it
 * (jtext_keep) so that each answer copies it instead of writing it again:
 * a container's members but the lists lend() makes anew (of those, each
 * element), and each volume. Returns the bytes kept. */
static size_t keep_container(json_object *ct) {
    size_t n = 0;
    if (!json_object_is_type(ct, json_type_object)) return jtext_keep(ct);
    json_object_object_foreach(ct, k, v) {
        if (!strcmp(k, "env") || !strcmp(k, "volumeMounts")) {
            for (size_t i = 0; i < jlen(v); i++) n += jtext_keep(json_object_array_get_idx(v, i));
        } else if (strcmp(k, "command") != 0) {
            n += jtext_keep(v);
        }
    }
    return n;
}

static size_t keep_part(const collector_pod *p) {
    size_t n = keep_container(p->container);
    for (size_t i = 0; i < jlen(p->volumes); i++) n += jtext_keep(json_object_array_get_idx(p->volumes, i));
    for (size_t i = 0; i < jlen(p->init_containers); i++) n += keep_container(json_object_array_get_idx(p->init_containers, i));
    return n;
}

int cache_collector_part(mutate_cache *c, json_object *col, const collector_build_opts *o, collector_pod *out,
                         json_object **use, char *err, size_t errlen) {
    *use = NULL;
    if (!c || o->target != COLLECTOR_SIDECAR) return collector_build(col, o, out, err, errlen);
    ckey k;
    key_of(col, &k);
    c->tick++;
    for (size_t i = 0; i < c->cap; i++) {
        centry *e = &c->v[i];
        if (e->s.used && matches(e, &k, o)) {
            e->s.used = c->tick;
            c->st.hits++;
            lend(&e->part, out);
            *use = json_object_get(e->use);
            return 0;
        }
    }
    c->st.misses++;
    collector_pod part;
    /* A collector that cannot be built is not kept: its reason is found at
     * once (the store's) or it did not go through the store. */
    if (collector_build(col, o, &part, err, errlen) != 0) return -1;
    /* The record's uses entry reads only what the key holds (namespace,
     * name, resourceVersion, generation, digest); without a namespace it
     * would name the pod's, so it is then made per request. */
    json_object *u = k.ns ? record_use_new(NULL, MUTATE_NLANGS, col) : NULL;
    size_t bytes = tree_bytes(part.container) + tree_bytes(part.volumes) +
                   (part.init_containers ? tree_bytes(part.init_containers) : 0) + (u ? tree_bytes(u) : 0);
    bytes += keep_part(&part) + jtext_keep(u);
    table t = collectors(c);
    centry *e = (centry *)make_room(c, &t, bytes);
    if (!e) { /* larger than the budget: this request's alone */
        *out = part;
        *use = u;
        return 0;
    }
    slot_take(c, &t, &e->s, &k, bytes);
    e->use = u;
    e->native = o->native;
    e->image = dup_or_null(o->default_image);
    e->nproxy = o->nproxy_env;
    e->proxy = xcalloc(e->nproxy ? e->nproxy : 1, sizeof *e->proxy);
    for (size_t i = 0; i < e->nproxy; i++) e->proxy[i] = dup_or_null(o->proxy_env[i]);
    e->part = part;
    lend(&e->part, out);
    *use = json_object_get(u);
    return 0;
}

/* Instrumentations (cache_inst_part): what lang.c derives from one for a
 * language whatever the pod (inst_part: the env copies of spec.env and
 * spec.<lang>.env, the endpoint, propagators and sampler entries, the
 * volume, the init containers, the resource attributes), built once per Instrumentation version and
 * init container command instead of once per pod. Keyed as collectors are
 * (namespace, name, uid, resourceVersion, generation, spec digest, by
 * value) and on the language and the command words by value (Python's
 * depends on the pod's platform annotation); the part reads no option (the
 * store's defaulting put the default images into the object, and that is
 * in the digest). Entries own their objects (copies), so a released
 * snapshot leaves them valid. A request holds new references for the time
 * of lang_run, so an eviction by a later language of the same request
 * frees nothing it uses. Kept in their own table, up to the same count and
 * max_bytes as the collectors' (st.inst_*), least recently used first. */
/* The entry's command (an array of strings, cmd_new's) has words w. */
static bool same_words(json_object *a, const char *const *w, size_t n) {
    if (n != jlen(a)) return false;
    for (size_t i = 0; i < n; i++)
        if (!same(str_of(json_object_array_get_idx(a, i)), w[i])) return false;
    return true;
}

static bool imatches(const ientry *e, const ckey *k, mutate_lang_id lang, const char *const *cmd, size_t ncmd) {
    return e->lang == lang && slot_is(&e->s, k) && same_words(e->part.command, cmd, ncmd);
}

static json_object *cmd_new(const char *const *w, size_t n) {
    json_object *a = jnew_arr();
    for (size_t i = 0; i < n; i++) jpush(a, jnew_str(w[i]));
    return a;
}

static void ilend(const inst_part *from, inst_part *out) {
    *out = *from;
    json_object *refs[] = {out->env,    out->lang_env, out->endpoint, out->propagators, out->sampler, out->sampler_arg,
                           out->volume, out->inits,    out->command,  out->use,         out->tls, out->attrs,
                           out->env_names, out->lang_env_names};
    for (size_t i = 0; i < sizeof refs / sizeof *refs; i++) json_object_get(refs[i]);
}

static size_t part_bytes(const inst_part *p) {
    json_object *v[] = {p->env,    p->lang_env, p->endpoint, p->propagators, p->sampler, p->sampler_arg,
                        p->volume, p->inits,    p->command,  p->use,         p->tls, p->attrs,
                        p->env_names, p->lang_env_names};
    size_t n = sizeof *p;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        if (v[i]) n += tree_bytes(v[i]);
    return n;
}

/* The text of what pods share from an Instrumentation's part (as
 * keep_part does for a collector's): each env entry, the volume, the init
 * containers' members, the record's uses entry. */
static size_t keep_inst_part(const inst_part *p) {
    size_t n = 0;
    json_object *lists[] = {p->env, p->lang_env};
    for (size_t l = 0; l < 2; l++)
        for (size_t i = 0; i < jlen(lists[l]); i++) n += jtext_keep(json_object_array_get_idx(lists[l], i));
    json_object *one[] = {p->endpoint, p->propagators, p->sampler, p->sampler_arg, p->volume, p->use};
    for (size_t i = 0; i < sizeof one / sizeof *one; i++) n += jtext_keep(one[i]);
    for (size_t i = 0; i < jlen(p->inits); i++) n += keep_container(json_object_array_get_idx(p->inits, i));
    return n;
}

/* The command's words are compared before its JSON is made: a hit makes
 * none (the words are the language's static arrays). */
void cache_inst_part(mutate_cache *c, lctx *l, const char *const *cmd, size_t ncmd, inst_part *out) {
    if (!c) {
        inst_part_build(l, cmd_new(cmd, ncmd), out);
        return;
    }
    ckey k;
    key_of(l->inst, &k);
    c->tick++;
    for (size_t i = 0; i < c->cap; i++) {
        ientry *e = &c->iv[i];
        if (e->s.used && imatches(e, &k, l->lang->id, cmd, ncmd)) {
            e->s.used = c->tick;
            c->st.inst_hits++;
            ilend(&e->part, out);
            return;
        }
    }
    c->st.inst_misses++;
    inst_part part;
    inst_part_build(l, cmd_new(cmd, ncmd), &part);
    size_t bytes = part_bytes(&part) + keep_inst_part(&part);
    table t = insts(c);
    ientry *e = (ientry *)make_room(c, &t, bytes);
    if (!e) { /* larger than the budget: this request's alone */
        *out = part;
        return;
    }
    slot_take(c, &t, &e->s, &k, bytes);
    e->lang = l->lang->id;
    e->part = part;
    ilend(&e->part, out);
}
