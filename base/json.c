/* base/json.c - json-c readers and builders; see json.h. */
#include "base/json.h"

#include "base/alloc.h"
#include "base/jhash.h"
#include "base/jtext.h"

#include <json-c/linkhash.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef BASE_JSON_TRAP
void (*base_json_trap)(json_object *holder, const char *key, json_object *value);
/* v (read from o[key]) is there but is not of type t. */
#define TRAP_UNLESS(o, key, v, t)                                                                                      \
    do {                                                                                                               \
        if (base_json_trap && (v) && !json_object_is_type((v), (t))) base_json_trap((o), (key), (v));                  \
    } while (0)
#else
#define TRAP_UNLESS(o, key, v, t) ((void)0)
#endif

json_object *jget(json_object *o, const char *key) {
    json_object *v = NULL;
    TRAP_UNLESS(o, key, o, json_type_object);
    if (!json_object_is_type(o, json_type_object) || !json_object_object_get_ex(o, key, &v)) return NULL;
    return v;
}

json_object *jmap(json_object *o, const char *key) {
    json_object *v = jget(o, key);
    TRAP_UNLESS(o, key, v, json_type_object);
    return json_object_is_type(v, json_type_object) ? v : NULL;
}

json_object *jarr(json_object *o, const char *key) {
    json_object *v = jget(o, key);
    TRAP_UNLESS(o, key, v, json_type_array);
    return json_object_is_type(v, json_type_array) ? v : NULL;
}

const char *jstr(json_object *o, const char *key) {
    json_object *v = jget(o, key);
    TRAP_UNLESS(o, key, v, json_type_string);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

bool jbool(json_object *o, const char *key) {
    json_object *v = jget(o, key);
    TRAP_UNLESS(o, key, v, json_type_boolean);
    return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

bool jint(json_object *o, const char *key, int64_t *out) {
    json_object *v = jget(o, key);
    if (json_object_is_type(v, json_type_int)) {
        *out = json_object_get_int64(v);
        return true;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        /* The range check keeps the conversion defined for huge values. */
        if (d >= -9.2e18 && d <= 9.2e18 && d == (double)(int64_t)d) {
            *out = (int64_t)d;
            return true;
        }
    }
    return false;
}

size_t jlen(json_object *a) {
    TRAP_UNLESS(a, NULL, a, json_type_array);
    return json_object_is_type(a, json_type_array) ? json_object_array_length(a) : 0;
}

bool jnonempty(json_object *v) {
    switch (json_object_get_type(v)) {
    case json_type_object: return json_object_object_length(v) > 0;
    case json_type_array: return json_object_array_length(v) > 0;
    case json_type_string: return json_object_get_string_len(v) > 0;
    case json_type_null: return false;
    default: return true;
    }
}

const char *jtype_name(json_object *v) {
    switch (json_object_get_type(v)) {
    case json_type_boolean: return "a boolean";
    case json_type_int:
    case json_type_double: return "a number";
    case json_type_string: return "a string";
    case json_type_array: return "a list";
    case json_type_object: return "an object";
    default: return "null";
    }
}

json_object *jfind_named(json_object *arr, const char *name, size_t *idx) {
    size_t n = jlen(arr);
    /* "name" is hashed once per scan, not once per element: json-c's
     * objects share one hash function (checked, not assumed). Env lists
     * are scanned for every variable the engine may add. */
    lh_hash_fn *fn = NULL;
    unsigned long h = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        TRAP_UNLESS(e, "name", e, json_type_object);
        if (!json_object_is_type(e, json_type_object)) continue;
        struct lh_table *t = json_object_get_object(e);
        if (t->hash_fn != fn) fn = t->hash_fn, h = lh_get_hash(t, "name");
        struct lh_entry *le = lh_table_lookup_entry_w_hash(t, "name", h);
        json_object *v = le ? (json_object *)lh_entry_v(le) : NULL;
        TRAP_UNLESS(e, "name", v, json_type_string);
        if (json_object_is_type(v, json_type_string) && strcmp(json_object_get_string(v), name) == 0) {
            if (idx) *idx = i;
            return e;
        }
    }
    return NULL;
}

static json_object *made(json_object *v) {
    if (!v) base_oom();
    return v;
}

json_object *jnew_obj(void) {
    json_object *o = made(json_object_new_object());
    jhash_adopt(o);
    return o;
}
json_object *jnew_arr(void) { return made(json_object_new_array()); }
json_object *jnew_str(const char *s) { return made(json_object_new_string(s)); }
json_object *jnew_strn(const char *s, size_t n) { return made(json_object_new_string_len(s, (int)n)); }
json_object *jnew_int(int64_t v) { return made(json_object_new_int64(v)); }
json_object *jnew_bool(bool v) { return made(json_object_new_boolean(v)); }
json_object *jnew_double(double v) { return made(json_object_new_double(v)); }

json_object *jstrs(int n, ...) {
    json_object *a = jnew_arr();
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++) jpush(a, jnew_str(va_arg(ap, const char *)));
    va_end(ap);
    return a;
}

json_object *jset(json_object *o, const char *key, json_object *v) {
    /* json-c fails only to allocate the new entry (the value is not taken then). */
    if (json_object_object_add(o, key, v) != 0) base_oom();
    return v;
}

json_object *jset_str(json_object *o, const char *key, const char *s) { return jset(o, key, jnew_str(s ? s : "")); }
json_object *jset_int(json_object *o, const char *key, int64_t v) { return jset(o, key, jnew_int(v)); }
json_object *jset_bool(json_object *o, const char *key, bool v) { return jset(o, key, jnew_bool(v)); }
json_object *jset_obj(json_object *o, const char *key) { return jset(o, key, jnew_obj()); }
json_object *jset_arr(json_object *o, const char *key) { return jset(o, key, jnew_arr()); }

void jset_copy(json_object *o, const char *key, json_object *v) {
    if (v) jset(o, key, jcopy(v));
}

json_object *jobj_at(json_object *o, const char *key) {
    json_object *v = jmap(o, key);
    return v ? v : jset_obj(o, key);
}

json_object *jarr_at(json_object *o, const char *key) {
    json_object *v = jarr(o, key);
    return v ? v : jset_arr(o, key);
}

json_object *jpush(json_object *a, json_object *v) {
    if (json_object_array_add(a, v) != 0) base_oom();
    return v;
}

void jinsert(json_object *a, size_t idx, json_object *v) {
    /* json-c 0.16 has no insert: take the tail off, append, put it back. */
    size_t n = json_object_array_length(a);
    if (idx >= n) {
        jpush(a, v);
        return;
    }
    json_object **tail = xmalloc(sizeof *tail * (n - idx));
    for (size_t i = idx; i < n; i++) tail[i - idx] = json_object_get(json_object_array_get_idx(a, i));
    json_object_array_del_idx(a, idx, n - idx);
    jpush(a, v);
    for (size_t i = 0; i < n - idx; i++) jpush(a, tail[i]);
    free(tail);
}

/* json-c's copy of one value, the objects with our key hash; a value
 * with kept text (jtext_keep) is copied without it (2: json-c would refuse
 * userdata it does not know), a parsed double with its text (1). */
static int copy_one(json_object *src, json_object *parent, const char *key, size_t index, json_object **dst) {
    int rc = json_c_shallow_copy_default(src, parent, key, index, dst);
    if (rc != 1) return rc;
    if (json_object_is_type(*dst, json_type_object)) jhash_adopt(*dst);
    return jtext_kept(src) ? 2 : 1;
}

json_object *jcopy(json_object *v) {
    json_object *c = NULL;
    if (v && json_object_deep_copy(v, &c, copy_one) != 0) base_oom();
    return c;
}

static int jkv_cmp(const void *a, const void *b) { return strcmp(((const jkv *)a)->key, ((const jkv *)b)->key); }

jkv *jsorted_members(json_object *o, size_t *n) {
    *n = 0;
    if (!json_object_is_type(o, json_type_object) || json_object_object_length(o) == 0) return NULL;
    size_t len = (size_t)json_object_object_length(o), i = 0;
    jkv *v = xmalloc(len * sizeof *v);
    json_object_object_foreach(o, k, val) {
        v[i].key = k;
        v[i].val = val;
        i++;
    }
    qsort(v, i, sizeof *v, jkv_cmp);
    *n = i;
    return v;
}

json_object *jsorted(json_object *o) {
    if (!json_object_is_type(o, json_type_object)) return NULL;
    size_t n;
    jkv *m = jsorted_members(o, &n);
    json_object *out = jnew_obj();
    for (size_t i = 0; i < n; i++) jset(out, m[i].key, jcopy(m[i].val));
    free(m);
    return out;
}

json_object *jparse_scalar(json_tokener *tok, const char *text, size_t len) {
    if (!len || (*text != '"' && *text != 't' && *text != 'f') || len > INT32_MAX) return NULL;
    json_tokener_reset(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    if (json_tokener_get_error(tok) == json_tokener_success && (size_t)json_tokener_get_parse_end(tok) == len) return o;
    json_object_put(o);
    return NULL;
}

int jparse_object(json_tokener *tok, const char *body, size_t len, json_object **out, char *err, size_t errlen) {
    *out = NULL;
    json_tokener_reset(tok);
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS);
    json_object *root = json_tokener_parse_ex(tok, body, (int)len);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    if (jerr == json_tokener_continue && !root) {
        /* A top-level number ("42") stays open until a delimiter arrives. */
        root = json_tokener_parse_ex(tok, " ", 1);
        jerr = json_tokener_get_error(tok);
        if (jerr == json_tokener_success) {
            json_object_put(root);
            return 1;
        }
    }
    if (jerr == json_tokener_continue) {
        snprintf(err, errlen, "invalid JSON: the body ends in the middle of a value");
        goto bad;
    }
    if (jerr != json_tokener_success) {
        snprintf(err, errlen, "invalid JSON: %s", json_tokener_error_desc(jerr));
        goto bad;
    }
    size_t end = json_tokener_get_parse_end(tok);
    while (end < len && (body[end] == ' ' || body[end] == '\n' || body[end] == '\r' || body[end] == '\t')) end++;
    if (end != len) {
        snprintf(err, errlen, "invalid JSON: unexpected data after the value");
        goto bad;
    }
    if (!json_object_is_type(root, json_type_object)) {
        json_object_put(root);
        return 1;
    }
    *out = root;
    return 0;
bad:
    json_object_put(root);
    return -1;
}
