/* mutate/jwalk.c - the engine's reads and builds of small json-c objects.
 *
 * Every json-c object is a hash table: base/json.c's jget hashes the key
 * (a strlen and json-c's string hash), looks the bucket up and compares,
 * and jset looks the key up once more before copying it. The engine does
 * that hundreds of times per pod for the same few members ("name",
 * "value", "env") of small objects, the env entries and mounts above all,
 * and scans env lists by name once per variable it may add.
 *
 * Here a member is looked for first among the object's first few entries,
 * in json-c's own entry list (insertion order), comparing the key's first
 * byte before the rest. The keys of an object are distinct, so the entry
 * found is the one the hash lookup finds; an object with more members
 * falls back to it. Anything that is not the expected type goes through
 * base/json.c's reader, so what the readers treat as absent (and the fuzz
 * build's BASE_JSON_TRAP reports) stays exactly theirs.
 *
 * jw_add gives an object the engine created itself a member under a
 * literal key: added as new (no lookup for a duplicate) and constant (not
 * copied, never freed: json-c frees only the keys it copied, and its deep
 * copy copies every key, so a copy owns its keys). jw_copy copies what
 * the engine takes from the store (it must not share it: json-c's
 * reference counts are not atomic) with one hash per key, not json-c's
 * lookup and insert.
 *
 * The sanitizer, valgrind and fuzz builds (-DMUTATE_SELF_CHECK) ask
 * base/json.c too, wherever the walk answered, and abort when the two
 * answers differ. */
#include "mutate/internal.h"

#include "base/jtext.h"

#include <json-c/linkhash.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef MUTATE_SELF_CHECK
#define SAME(fast, slow)                                                                                               \
    do {                                                                                                               \
        if ((fast) != (slow)) {                                                                                        \
            fprintf(stderr, "jwalk: %s is not %s\n", #fast, #slow);                                                    \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)
#else
#define SAME(fast, slow) ((void)0)
#endif

/* Entries walked before the hash: env entries, mounts, fieldRefs and
 * most containers' "name" are within them. */
#define JW_WALK 4

/* The member key of object o (NULL when absent or null), with *found
 * false when the walk could not tell (o has more members). */
static json_object *walk(json_object *o, const char *key, bool *found) {
    struct lh_table *t = json_object_get_object(o);
    int k = 0;
    for (struct lh_entry *e = lh_table_head(t); e && k < JW_WALK; e = lh_entry_next(e), k++) {
        const char *ek = lh_entry_k(e);
        if (ek == key || (ek[0] == key[0] && strcmp(ek, key) == 0)) { /* a merged literal, or the same text */
            *found = true;
            return (json_object *)lh_entry_v(e);
        }
    }
    *found = t->count <= JW_WALK;
    return NULL;
}

json_object *jw_member(json_object *o, const char *key) {
    bool found;
    json_object *v = NULL;
    if (!json_object_is_type(o, json_type_object)) return NULL;
    json_object *w = walk(o, key, &found);
    if (!found) {
        json_object_object_get_ex(o, key, &v);
        return v;
    }
#ifdef MUTATE_SELF_CHECK
    json_object_object_get_ex(o, key, &v);
    SAME(w, v);
#endif
    return w;
}

json_object *jw_get(json_object *o, const char *key) {
    bool found;
    if (!json_object_is_type(o, json_type_object)) return jget(o, key);
    json_object *v = walk(o, key, &found);
    if (!found) return jget(o, key);
    SAME(v, jget(o, key));
    return v;
}

const char *jw_str(json_object *o, const char *key) {
    bool found;
    if (!json_object_is_type(o, json_type_object)) return jstr(o, key);
    json_object *v = walk(o, key, &found);
    if (!found || (v && !json_object_is_type(v, json_type_string))) return jstr(o, key);
    const char *str = v ? json_object_get_string(v) : NULL;
    SAME(str, jstr(o, key));
    return str;
}

/* strcmp(k, "name") == 0, reading no byte past k's end. */
static bool is_name(const char *k) { return k[0] == 'n' && k[1] == 'a' && k[2] == 'm' && k[3] == 'e' && !k[4]; }

/* The name of an env list's element, for the scans below: the usual
 * element, an object whose first member is its string "name", is read with
 * four json-c calls; any other goes through jw_str. *len is the string's
 * length, which may hold a NUL (compared up to the NUL by named()). */
static const char *elem_name(json_object *e, size_t *len) {
    json_object *v;
    struct lh_entry *h;
    if (json_object_get_type(e) == json_type_object && (h = lh_table_head(json_object_get_object(e))) &&
        is_name(lh_entry_k(h)) && json_object_get_type(v = (json_object *)lh_entry_v(h)) == json_type_string) {
        *len = (size_t)json_object_get_string_len(v);
        return json_object_get_string(v);
    }
    const char *s = jw_str(e, "name");
    *len = s ? strlen(s) : 0;
    return s;
}

/* strcmp(s, name) == 0 for s of length len, name of length n, comparing
 * lengths first (many names share a long OTEL_ prefix). */
static bool named(const char *s, size_t len, const char *name, size_t n) {
    return s && !((len != n && (len < n || s[n])) || memcmp(s, name, n) != 0);
}

/* The scan of an env list, run for every variable the engine may add. */
static json_object *find_named(json_object *arr, const char *name, size_t *idx) {
    if (!json_object_is_type(arr, json_type_array)) return jfind_named(arr, name, idx);
    struct array_list *al = json_object_get_array(arr);
    size_t n = strlen(name);
    for (size_t i = 0; i < al->length; i++) {
        size_t len;
        const char *s = elem_name(al->array[i], &len);
        if (!named(s, len, name, n)) continue;
        if (idx) *idx = i;
        return al->array[i];
    }
    return NULL;
}

void jw_find_named_many(json_object *arr, const char *const *names, size_t k, json_object **out) {
    memset(out, 0, k * sizeof *out);
    if (!json_object_is_type(arr, json_type_array)) {
        for (size_t j = 0; j < k; j++) out[j] = jfind_named(arr, names[j], NULL);
        return;
    }
    struct array_list *al = json_object_get_array(arr);
    size_t n[k ? k : 1], left = k;
    for (size_t j = 0; j < k; j++) n[j] = strlen(names[j]);
    for (size_t i = 0; i < al->length && left; i++) {
        size_t len;
        const char *s = elem_name(al->array[i], &len);
        for (size_t j = 0; s && j < k; j++) {
            if (out[j] || !named(s, len, names[j], n[j])) continue;
            out[j] = al->array[i];
            left--;
            break; /* the names are distinct: no other one matches */
        }
    }
#ifdef MUTATE_SELF_CHECK
    for (size_t j = 0; j < k; j++) SAME(out[j], jfind_named(arr, names[j], NULL));
#endif
}

json_object *jw_find_named(json_object *arr, const char *name, size_t *idx) {
    json_object *e = find_named(arr, name, idx);
#ifdef MUTATE_SELF_CHECK
    size_t fast = e && idx ? *idx : 0, slow = 0;
    SAME(e, jfind_named(arr, name, &slow));
    if (e && idx) SAME(fast, slow);
#endif
    return e;
}

static json_object *copy(json_object *v) {
    switch (json_object_get_type(v)) {
    case json_type_null: return NULL;
    case json_type_string: return jnew_strn(json_object_get_string(v), (size_t)json_object_get_string_len(v));
    case json_type_object: {
        json_object *c = jnew_obj();
        json_object_object_foreach(v, k, m) /* distinct keys: no lookup before each insert */
            if (json_object_object_add_ex(c, k, copy(m), JSON_C_OBJECT_ADD_KEY_IS_NEW) != 0) base_oom();
        return c;
    }
    case json_type_array: {
        size_t n = json_object_array_length(v);
        json_object *c = json_object_new_array_ext((int)n);
        if (!c) base_oom();
        for (size_t i = 0; i < n; i++)
            if (json_object_array_add(c, copy(json_object_array_get_idx(v, i))) != 0) base_oom();
        return c;
    }
    default: return jcopy(v); /* numbers and booleans: json-c's copy keeps a number's text */
    }
}

json_object *jw_copy(json_object *v) {
    json_object *c = copy(v);
#ifdef MUTATE_SELF_CHECK
    json_object *ref = jcopy(v);
    size_t na, nb;
    char *ta = jtext(c, &na), *tb = jtext(ref, &nb);
    if (na != nb || memcmp(ta, tb, na) != 0) {
        fprintf(stderr, "jwalk: jw_copy wrote %s, jcopy %s\n", ta, tb);
        abort();
    }
    free(ta);
    free(tb);
    json_object_put(ref);
#endif
    return c;
}

json_object *jw_add(json_object *o, const char *literal, json_object *v) {
    if (json_object_object_add_ex(o, literal, v, JSON_C_OBJECT_ADD_KEY_IS_NEW | JSON_C_OBJECT_ADD_CONSTANT_KEY) != 0)
        base_oom();
    return v;
}
