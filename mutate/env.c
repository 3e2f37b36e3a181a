/* mutate/env.c - container env and mount primitives (spec 2.0 merge rules).
 *
 * Env lists are short (tens of entries), so every lookup is a linear scan by
 * name (jw_find_named: the name is nearly always an entry's first member);
 * keeping no index means nothing can go stale while entries move. A caller
 * checking many names before adding any of them (sdk_configure) asks for
 * them all in one scan (env_find_many) and answers for what it adds. */
#include "mutate/internal.h"

#include <json-c/arraylist.h>

#include <stdint.h>
#include <string.h>

json_object *env_find(json_object *c, const char *name, size_t *idx) {
    return jw_find_named(jw_get(c, "env"), name, idx);
}

void env_find_many(json_object *c, const char *const *names, size_t k, json_object **out) {
    jw_find_named_many(jw_get(c, "env"), names, k, out);
}

bool env_has_value_from(json_object *c, const char *name) {
    json_object *e = env_find(c, name, NULL);
    return e && jw_get(e, "valueFrom") != NULL;
}

static json_object *new_env(const char *name) {
    json_object *e = jnew_obj();
    jw_add(e, "name", jnew_str(name));
    return e;
}

json_object *env_new_value(const char *name, const char *value) {
    json_object *e = new_env(name);
    jw_add(e, "value", jnew_str(value));
    return e;
}

/* The engine's copy of a container shares its env entries with the request
 * (engine.c): an entry is copied before its value changes. */
void env_set_value(json_object *c, json_object *e, const char *value) {
    json_object *env = jw_get(c, "env");
    size_t n = jlen(env);
    for (size_t i = 0; i < n; i++) {
        if (json_object_array_get_idx(env, i) != e) continue;
        json_object *copy = jw_copy(e);
        jset(copy, "value", jnew_str(value));
        json_object_array_put_idx(env, i, copy); /* releases e */
        return;
    }
    jset(e, "value", jnew_str(value));
}

json_object *env_list(json_object *c) {
    json_object *v = jw_get(c, "env");
    return json_object_is_type(v, json_type_array) ? v : jarr_at(c, "env");
}

void env_append(json_object *c, const char *name, const char *value) {
    jpush(env_list(c), env_new_value(name, value));
}

json_object *env_new_field(const char *name, const char *field_path) {
    json_object *e = new_env(name), *vf = jnew_obj(), *fr = jnew_obj();
    jw_add(fr, "fieldPath", jnew_str(field_path));
    jw_add(vf, "fieldRef", fr);
    jw_add(e, "valueFrom", vf);
    return e;
}

void env_append_field(json_object *c, const char *name, const char *field_path) {
    jpush(env_list(c), env_new_field(name, field_path));
}

void env_prepend_field(json_object *c, const char *name, const char *field_path) {
    jinsert(env_list(c), 0, env_new_field(name, field_path));
}

/* list's entries whose names c's env lacks, appended: copies, or the
 * entries themselves when they are the cache's (never edited in place).
 * The env is scanned once for pre's names and all of list's (distinct, as
 * env_find_many wants them); an entry appended here counts as found for
 * the entries after it, which is what scanning the grown list again would
 * answer. A list longer than any Instrumentation's is checked name by
 * name. */
#define SHARE_MAX 32
static void add_if_not_set(json_object *c, json_object *list, json_object *known, bool share, const char *const *pre,
                           size_t np, json_object **pre_found) {
    size_t n = jlen(list);
    if (known && jlen(known) != n) known = NULL; /* not list's */
    if (n > SHARE_MAX || np > SHARE_MAX) {
        for (size_t j = 0; j < np; j++) pre_found[j] = env_find(c, pre[j], NULL);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(list, i);
            const char *name = jw_str(e, "name");
            bool set = false;
            for (size_t j = 0; name && j < np && !set; j++) set = strcmp(name, pre[j]) == 0;
            if (!name || set || env_find(c, name, NULL)) continue;
            jpush(env_list(c), share ? json_object_get(e) : jw_copy(e));
        }
        return;
    }
    const char *names[2 * SHARE_MAX];
    size_t of[SHARE_MAX], k = np; /* of[i]: the index of entry i's name in names; SIZE_MAX: none */
    json_object *found[2 * SHARE_MAX];
    if (np) memcpy(names, pre, np * sizeof *pre); /* pre and pre_found are NULL when np is 0 */
    for (size_t i = 0; known && i < n; i++) { /* distinct: compared with pre's alone */
        const char *name = json_object_get_string(json_object_array_get_idx(known, i));
        size_t j = 0;
        while (j < np && strcmp(pre[j], name) != 0) j++;
        if (j == np) names[j = k++] = name;
        of[i] = j;
    }
    for (size_t i = 0; !known && i < n; i++) {
        const char *name = jw_str(json_object_array_get_idx(list, i), "name");
        of[i] = SIZE_MAX;
        if (!name) continue;
        size_t j = 0;
        while (j < k && strcmp(names[j], name) != 0) j++;
        if (j == k) names[k++] = name;
        of[i] = j;
    }
    env_find_many(c, names, k, found);
    if (np) memcpy(pre_found, found, np * sizeof *found);
    for (size_t j = 0; j < np; j++) found[j] = c; /* set, by the caller */
    json_object *env = NULL; /* made at the first append, where env_list would make it */
    for (size_t i = 0; i < n; i++) {
        if (of[i] == SIZE_MAX || found[of[i]]) continue;
        json_object *e = json_object_array_get_idx(list, i);
        found[of[i]] = e;
        if (!env) env = env_list(c);
        jpush(env, share ? json_object_get(e) : jw_copy(e));
    }
}

void env_append_if_not_set(json_object *c, json_object *list) { add_if_not_set(c, list, NULL, false, NULL, 0, NULL); }

void env_append_if_not_set_but(json_object *c, json_object *list, const char *const *pre, size_t np,
                               json_object **found) {
    add_if_not_set(c, list, NULL, false, pre, np, found);
}

void env_share_if_not_set_but(json_object *c, json_object *list, json_object *names, const char *const *pre, size_t np,
                              json_object **found) {
    add_if_not_set(c, list, names, true, pre, np, found);
}

json_object *env_names_of(json_object *list) {
    size_t n = jlen(list);
    if (!n || n > SHARE_MAX) return NULL;
    json_object *names = jnew_arr();
    for (size_t i = 0; i < n; i++) {
        json_object *v = jw_get(json_object_array_get_idx(list, i), "name");
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        for (size_t j = 0; s && j < i; j++)
            if (strcmp(json_object_get_string(json_object_array_get_idx(names, j)), s) == 0) s = NULL;
        if (!s) {
            json_object_put(names);
            return NULL;
        }
        jpush(names, json_object_get(v));
    }
    return names;
}

void env_move_to_end(json_object *c, const char *name) {
    size_t idx;
    json_object *env = jw_get(c, "env");
    json_object *e = jw_find_named(env, name, &idx);
    if (!e || idx + 1 == json_object_array_length(env)) return;
    json_object_get(e);
    json_object_array_del_idx(env, idx, 1);
    jpush(env, e);
}

bool mount_path_taken(json_object *c, const char *path) {
    json_object *mounts = jw_get(c, "volumeMounts");
    size_t n = jlen(mounts);
    for (size_t i = 0; i < n; i++) {
        const char *p = jw_str(json_object_array_get_idx(mounts, i), "mountPath");
        if (p && strcmp(p, path) == 0) return true;
    }
    return false;
}

void mount_add(json_object *c, const char *name, const char *path, bool readonly) {
    json_object *m = jnew_obj();
    jw_add(m, "name", jnew_str(name));
    jw_add(m, "mountPath", jnew_str(path));
    if (readonly) jw_add(m, "readOnly", jnew_bool(1));
    json_object *mounts = jw_get(c, "volumeMounts");
    jpush(json_object_is_type(mounts, json_type_array) ? mounts : jarr_at(c, "volumeMounts"), m);
}

void env_share_if_not_set(json_object *c, json_object *list, json_object *names) {
    add_if_not_set(c, list, names, true, NULL, 0, NULL);
}

void env_push(json_object *c, json_object *e) { jpush(env_list(c), json_object_get(e)); }

/* Appended, then moved to the front in place: jinsert takes the whole
 * list off and puts it back (json-c 0.16 has no insert), about 800
 * instructions for a dozen entries where a memmove is a few. */
void env_push_front(json_object *c, json_object *e) {
    json_object *env = env_list(c);
    jpush(env, json_object_get(e));
    struct array_list *al = json_object_get_array(env);
    memmove(al->array + 1, al->array, (al->length - 1) * sizeof *al->array);
    al->array[0] = e;
}

/* The downward-API entries the engine adds the same to every pod. */
json_object *env_const_field(unsigned slot) {
    static const char *const f[CACHE_NCONST][2] = {
        [CACHE_CONST_POD_NAME] = {"OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "metadata.name"},
        [CACHE_CONST_POD_UID] = {"OTEL_RESOURCE_ATTRIBUTES_POD_UID", "metadata.uid"},
        [CACHE_CONST_NODE_NAME] = {"OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "spec.nodeName"},
        [CACHE_CONST_POD_IP] = {"OTEL_POD_IP", "status.podIP"},
        [CACHE_CONST_NODE_IP] = {"OTEL_NODE_IP", "status.hostIP"},
    };
    return env_new_field(f[slot][0], f[slot][1]);
}
