/* reconcile/obj.c - json-c building and reading helpers; see obj.h. The OOM
 * flag is per thread so that renders on several threads (the future `run`)
 * never see each other's failures. */
#include "reconcile/obj.h"

#include <stdlib.h>
#include <string.h>

static __thread int oom;

int reconcile_obj_oom(void) {
    int v = oom;
    oom = 0;
    return v;
}

json_object *reconcile_obj_set(json_object *o, const char *key, json_object *v) {
    if (!v || !o) {
        oom |= !v;
        json_object_put(v);
        return NULL;
    }
    if (json_object_object_add(o, key, v) != 0) {
        oom = 1;
        json_object_put(v);
        return NULL;
    }
    return v;
}

json_object *reconcile_obj_str(json_object *o, const char *key, const char *s) {
    return reconcile_obj_set(o, key, json_object_new_string(s ? s : ""));
}

json_object *reconcile_obj_int(json_object *o, const char *key, int64_t v) {
    return reconcile_obj_set(o, key, json_object_new_int64(v));
}

json_object *reconcile_obj_bool(json_object *o, const char *key, int v) {
    return reconcile_obj_set(o, key, json_object_new_boolean(v));
}

json_object *reconcile_obj_map(json_object *o, const char *key) {
    return reconcile_obj_set(o, key, json_object_new_object());
}

json_object *reconcile_obj_arr(json_object *o, const char *key) {
    return reconcile_obj_set(o, key, json_object_new_array());
}

json_object *reconcile_obj_push(json_object *a, json_object *v) {
    if (!v || !a) {
        oom |= !v;
        json_object_put(v);
        return NULL;
    }
    if (json_object_array_add(a, v) != 0) {
        oom = 1;
        json_object_put(v);
        return NULL;
    }
    return v;
}

json_object *reconcile_obj_clone(json_object *v) {
    json_object *c = NULL;
    if (!v) return NULL;
    if (json_object_deep_copy(v, &c, NULL) != 0) {
        oom = 1;
        return NULL;
    }
    return c;
}

void reconcile_obj_copy(json_object *o, const char *key, json_object *v) {
    if (v) reconcile_obj_set(o, key, reconcile_obj_clone(v));
}

typedef struct kv {
    const char *k;
    json_object *v;
} kv;

static int kv_cmp(const void *a, const void *b) {
    return strcmp(((const kv *)a)->k, ((const kv *)b)->k);
}

json_object *reconcile_obj_sorted(json_object *v) {
    size_t n, i = 0;
    kv *keys;
    json_object *out;
    if (!json_object_is_type(v, json_type_object)) return NULL;
    n = (size_t)json_object_object_length(v);
    if (!(out = json_object_new_object())) goto oom;
    if (n == 0) return out;
    if (!(keys = malloc(n * sizeof(*keys)))) {
        json_object_put(out);
        goto oom;
    }
    json_object_object_foreach(v, k, val) {
        keys[i].k = k;
        keys[i].v = val;
        i++;
    }
    qsort(keys, n, sizeof(*keys), kv_cmp);
    for (i = 0; i < n; i++) {
        if (keys[i].v)
            reconcile_obj_set(out, keys[i].k, reconcile_obj_clone(keys[i].v));
        else if (json_object_object_add(out, keys[i].k, NULL) != 0)
            oom = 1;
    }
    free(keys);
    return out;
oom:
    oom = 1;
    return NULL;
}

json_object *reconcile_get(json_object *o, const char *key) {
    json_object *v = NULL;
    if (!json_object_is_type(o, json_type_object)) return NULL;
    if (!json_object_object_get_ex(o, key, &v)) return NULL;
    return v;
}

json_object *reconcile_get_map(json_object *o, const char *key) {
    json_object *v = reconcile_get(o, key);
    return json_object_is_type(v, json_type_object) ? v : NULL;
}

json_object *reconcile_get_arr(json_object *o, const char *key) {
    json_object *v = reconcile_get(o, key);
    return json_object_is_type(v, json_type_array) ? v : NULL;
}

const char *reconcile_get_str(json_object *o, const char *key) {
    json_object *v = reconcile_get(o, key);
    return json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

int reconcile_get_bool(json_object *o, const char *key) {
    json_object *v = reconcile_get(o, key);
    return json_object_is_type(v, json_type_boolean) && json_object_get_boolean(v);
}

int reconcile_get_int(json_object *o, const char *key, int64_t *out) {
    json_object *v = reconcile_get(o, key);
    if (json_object_is_type(v, json_type_int)) {
        *out = json_object_get_int64(v);
        return 1;
    }
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (d == (double)(int64_t)d) {
            *out = (int64_t)d;
            return 1;
        }
    }
    return 0;
}

int reconcile_nonempty(json_object *v) {
    switch (json_object_get_type(v)) {
    case json_type_object:
        return json_object_object_length(v) > 0;
    case json_type_array:
        return json_object_array_length(v) > 0;
    case json_type_string:
        return json_object_get_string_len(v) > 0;
    case json_type_null:
        return 0;
    default:
        return 1;
    }
}
