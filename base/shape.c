/* base/shape.c - see shape.h. One recursive walk over the table; the path
 * is a chain of stack frames, formatted only when something does not fit. */
#include "base/shape.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/quantity.h"
#include "base/sbuf.h"

#include <math.h>
#include <string.h>

typedef struct seg {
    const struct seg *up;
    const char *key; /* NULL: an index */
    size_t idx;
} seg;

/* Keys are user text: long ones are cut so the message stays one line of
 * reasonable length. */
#define KEY_MAX 128

static void path_into(sbuf *b, const seg *s) {
    if (!s) return;
    path_into(b, s->up);
    if (s->key) {
        if (b->len) sbuf_putc(b, '.');
        size_t n = strlen(s->key);
        sbuf_add(b, s->key, n > KEY_MAX ? KEY_MAX : n);
        if (n > KEY_MAX) sbuf_puts(b, "...");
    } else {
        sbuf_printf(b, "[%zu]", s->idx);
    }
}

static char *wrong(const seg *at, json_object *v, const char *expected) {
    sbuf b = SBUF_INIT;
    path_into(&b, at);
    sbuf_printf(&b, ": expected %s, got %s", expected, jtype_name(v));
    /* YAML reads an unquoted 3 or true as a number or boolean. */
    if (!strcmp(expected, "a string") &&
        (json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_boolean)))
        sbuf_printf(&b, " (quote it: \"%s\")", json_object_get_string(v));
    return sbuf_take(&b, NULL);
}

static char *check_fields(json_object *obj, const shape_field *fields, const seg *at);

static bool is_int(json_object *v) {
    if (json_object_is_type(v, json_type_int)) return true;
    if (!json_object_is_type(v, json_type_double)) return false;
    double d = json_object_get_double(v);
    return isfinite(d) && d == floor(d);
}

static char *check_value(json_object *v, const shape_field *f, const seg *at) {
    switch (f->type) {
    case SHAPE_STRING: return json_object_is_type(v, json_type_string) ? NULL : wrong(at, v, "a string");
    case SHAPE_BOOL: return json_object_is_type(v, json_type_boolean) ? NULL : wrong(at, v, "a boolean");
    case SHAPE_INT: return is_int(v) ? NULL : wrong(at, v, "an integer");
    case SHAPE_NUMBER:
        return json_object_is_type(v, json_type_int) || json_object_is_type(v, json_type_double)
                   ? NULL
                   : wrong(at, v, "a number");
    case SHAPE_QUANTITY: {
        long double q;
        if (quantity_of(v, &q)) return NULL;
        if (!json_object_is_type(v, json_type_string)) return wrong(at, v, "a quantity");
        sbuf b = SBUF_INIT;
        path_into(&b, at);
        sbuf_printf(&b, ": \"%.64s\" is not a quantity", json_object_get_string(v));
        return sbuf_take(&b, NULL);
    }
    case SHAPE_OBJECT:
        if (!json_object_is_type(v, json_type_object)) return wrong(at, v, "an object");
        return f->sub ? check_fields(v, f->sub, at) : NULL;
    case SHAPE_STRMAP:
    case SHAPE_MAP: {
        if (!json_object_is_type(v, json_type_object))
            return wrong(at, v, f->type == SHAPE_STRMAP ? "a map of strings" : "a map");
        json_object_object_foreach(v, k, val) {
            seg s = {at, k, 0};
            if (!val) continue;
            if (f->type == SHAPE_STRMAP && !json_object_is_type(val, json_type_string)) return wrong(&s, val, "a string");
            if (f->type == SHAPE_MAP) {
                if (!json_object_is_type(val, json_type_object)) return wrong(&s, val, "an object");
                char *e = f->sub ? check_fields(val, f->sub, &s) : NULL;
                if (e) return e;
            }
        }
        return NULL;
    }
    case SHAPE_LIST:
    case SHAPE_OBJECTS: {
        if (!json_object_is_type(v, json_type_array)) return wrong(at, v, "a list");
        if (f->type == SHAPE_LIST) return NULL;
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            seg s = {at, NULL, i};
            if (!json_object_is_type(e, json_type_object)) return wrong(&s, e, "an object");
            char *r = f->sub ? check_fields(e, f->sub, &s) : NULL;
            if (r) return r;
        }
        return NULL;
    }
    }
    return NULL;
}

static char *check_fields(json_object *obj, const shape_field *fields, const seg *at) {
    for (const shape_field *f = fields; f->key; f++) {
        json_object *v = NULL;
        if (!json_object_object_get_ex(obj, f->key, &v) || !v) continue;
        seg s = {at, f->key, 0};
        char *e = check_value(v, f, &s);
        if (e) return e;
    }
    return NULL;
}

char *shape_check(json_object *obj, const shape_field *fields, const char *prefix) {
    if (!obj) return NULL;
    seg top = {NULL, prefix, 0};
    if (!json_object_is_type(obj, json_type_object)) return wrong(prefix && *prefix ? &top : NULL, obj, "an object");
    return check_fields(obj, fields, prefix && *prefix ? &top : NULL);
}
