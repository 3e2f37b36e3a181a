/* mutate/podcheck.c - the types of the pod fields the engine reads or
 * writes, checked against what core/v1 allows before anything else runs.
 *
 * The API server decodes a pod into Go structs before admission, so a real
 * admission never carries `containers:` as a map or an env value as a
 * number; `otel-webhook inject` reads YAML people wrote, and any client can
 * post a review. The engine's readers take a wrong type for absent
 * (base/json.h) and its writers replace what is not a list, which is how a
 * `containers:` map lost the app container to the collector. So the pod is
 * refused instead: -1, nothing injected, one warning naming the field the way
 * Kubernetes users write it (`spec.containers[0].env[2].name: expected a
 * string, got a number`), and the path, reason and offending value in
 * mutate_result for callers that format their own message.
 *
 * What is checked is the table below: exactly the fields the engine (mutate/)
 * reads or writes in a pod (the sidecar's part comes from the collector, not the
 * pod). Fields the engine never touches (ports, args, resources, probes,
 * ...) are shared with the request untouched and left to the API server:
 * checking them would only duplicate its validation. JSON null is what the
 * API server accepts for an optional field (absent), for a map value or a
 * list-of-strings item (""); a null where an object must be, or for a
 * required field, is refused as the API server refuses it.
 *
 * Two steps, both one pass over what they look at, allocating nothing
 * unless the pod is refused:
 *  - podcheck_shape, before the "does this pod ask for anything" test:
 *    metadata, metadata.annotations and spec. The test reads annotations,
 *    and a malformed map would be read as "asks for nothing"; these three
 *    cost three lookups, so a pod that asks for nothing still costs nothing.
 *    Labels are not read by the test and wait for the second step.
 *  - podcheck, after bounds_check: everything in the table. After, because
 *    bounds_check only counts (and counts wrong types as empty, safely), so
 *    a pod past a bound is refused without a walk, and this walk covers
 *    lists whose lengths are then bounded. Its cost is one hash lookup per
 *    table field per object plus one step per list item and map entry:
 *    linear in the pod, whatever unknown fields it carries.
 * The path is kept as a chain of stack frames, formatted only on refusal. */
#include "mutate/internal.h"

#include "base/sbuf.h"
#include "base/utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum pc_type {
    PC_STRING,
    PC_BOOL,
    PC_OBJECT,  /* an object; its fields in sub (NULL: not looked into) */
    PC_LIST,    /* a list of objects, each with the fields in sub */
    PC_STRINGS, /* a list of strings */
    PC_STRMAP,  /* a map of strings (annotations, labels) */
} pc_type;

typedef struct pc_field {
    const char *key;
    pc_type type;
    bool required; /* absent or null is refused too */
    const struct pc_field *sub;
} pc_field;

#define REQ true

static const pc_field env_var[] = {
    {"name", PC_STRING, REQ, NULL},
    {"value", PC_STRING, false, NULL},
    {"valueFrom", PC_OBJECT, false, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field volume_mount[] = {
    {"name", PC_STRING, REQ, NULL},
    {"mountPath", PC_STRING, REQ, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field container[] = {
    {"name", PC_STRING, REQ, NULL},
    {"image", PC_STRING, false, NULL},
    {"imagePullPolicy", PC_STRING, false, NULL},
    {"command", PC_STRINGS, false, NULL},
    {"env", PC_LIST, false, env_var},
    {"envFrom", PC_LIST, false, NULL},
    {"volumeMounts", PC_LIST, false, volume_mount},
    {"securityContext", PC_OBJECT, false, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field volume[] = {
    {"name", PC_STRING, REQ, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field owner_ref[] = {
    {"kind", PC_STRING, false, NULL},
    {"name", PC_STRING, false, NULL},
    {"uid", PC_STRING, false, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field metadata[] = {
    {"name", PC_STRING, false, NULL},
    {"namespace", PC_STRING, false, NULL},
    {"uid", PC_STRING, false, NULL},
    {"annotations", PC_STRMAP, false, NULL},
    {"labels", PC_STRMAP, false, NULL},
    {"ownerReferences", PC_LIST, false, owner_ref},
    {NULL, 0, false, NULL},
};
static const pc_field spec[] = {
    {"containers", PC_LIST, false, container},
    {"initContainers", PC_LIST, false, container},
    {"volumes", PC_LIST, false, volume},
    {"nodeName", PC_STRING, false, NULL},
    {"shareProcessNamespace", PC_BOOL, false, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field pod[] = {
    {"metadata", PC_OBJECT, false, metadata},
    {"spec", PC_OBJECT, REQ, spec},
    {NULL, 0, false, NULL},
};

/* The shape step: the same types, no deeper than the opt-in test reads. */
static const pc_field shape_metadata[] = {
    {"annotations", PC_STRMAP, false, NULL},
    {NULL, 0, false, NULL},
};
static const pc_field shape_pod[] = {
    {"metadata", PC_OBJECT, false, shape_metadata},
    {"spec", PC_OBJECT, REQ, NULL},
    {NULL, 0, false, NULL},
};

/* One step of the path: a member key, or (key NULL) a list index. */
typedef struct seg {
    const struct seg *up;
    const char *key;
    size_t idx;
} seg;

typedef struct pc {
    mctx *m;
    bool shallow; /* the shape step: map values are not looked at */
} pc;

/* Annotation keys reach 317 bytes in Kubernetes; anything longer is cut at
 * a character boundary, so a hostile key cannot make the warning huge. */
#define KEY_MAX 320

static void put_key(sbuf *b, const char *k) {
    size_t n = strlen(k);
    if (n <= KEY_MAX) {
        sbuf_add(b, k, n);
        return;
    }
    const unsigned char *s = (const unsigned char *)k;
    size_t i = 0;
    while (i < KEY_MAX) {
        size_t l = s[i] < 0x80 ? 1 : utf8_len(s + i, n - i);
        if (!l) l = 1; /* a stray byte: one at a time, the JSON writer replaces it */
        if (i + l > KEY_MAX) break;
        i += l;
    }
    sbuf_add(b, k, i);
    sbuf_puts(b, "...");
}

static char *path_text(const seg *at) {
    const seg *v[16];
    size_t n = 0;
    for (const seg *s = at; s && n < sizeof v / sizeof *v; s = s->up) v[n++] = s;
    sbuf b = SBUF_INIT;
    while (n--) {
        if (v[n]->key) {
            if (b.len) sbuf_putc(&b, '.');
            put_key(&b, v[n]->key);
        } else {
            sbuf_printf(&b, "[%zu]", v[n]->idx);
        }
    }
    return sbuf_take(&b, NULL);
}

/* Refuses the pod: at is the field, where the value (or the object holding
 * it, when the value is missing or null), reason the text after the path. */
static bool refuse(pc *c, const seg *at, json_object *where, char *reason) {
    mutate_result *res = c->m->res;
    res->invalid_path = path_text(at);
    res->invalid_reason = reason;
    res->invalid_at = where;
    mctx_warn(c->m, "%s: %s; nothing injected", res->invalid_path, reason);
    mctx_skip(c->m, MUTATE_SKIP_MALFORMED);
    return false;
}

static bool wrong(pc *c, const seg *at, json_object *v, json_object *holder, const char *expected) {
    return refuse(c, at, v ? v : holder, xasprintf("expected %s, got %s", expected, jtype_name(v)));
}

/* A scalar where a string belongs: YAML read an unquoted true, yes or 8080
 * as a boolean or a number; the hint says what to write instead. */
static bool not_a_string(pc *c, const seg *at, json_object *v, json_object *holder) {
    if (json_object_is_type(v, json_type_boolean) || json_object_is_type(v, json_type_int))
        return refuse(c, at, v, xasprintf("expected a string, got %s (quote it: \"%s\")", jtype_name(v),
                                          json_object_get_string(v)));
    if (json_object_is_type(v, json_type_double))
        return refuse(c, at, v, xasprintf("expected a string, got a number (quote it)"));
    return wrong(c, at, v, holder, "a string");
}

static bool check_fields(pc *c, json_object *obj, const pc_field *fields, const seg *at);

static bool check_value(pc *c, json_object *v, const pc_field *f, const seg *at, json_object *holder) {
    switch (f->type) {
    case PC_STRING:
        return json_object_is_type(v, json_type_string) || not_a_string(c, at, v, holder);
    case PC_BOOL:
        return json_object_is_type(v, json_type_boolean) || wrong(c, at, v, holder, "a boolean");
    case PC_OBJECT:
        if (!json_object_is_type(v, json_type_object)) return wrong(c, at, v, holder, "an object");
        return !f->sub || check_fields(c, v, f->sub, at);
    case PC_STRMAP: {
        if (!json_object_is_type(v, json_type_object)) return wrong(c, at, v, holder, "a map of strings");
        if (c->shallow) return true;
        json_object_object_foreach(v, k, val) {
            seg s = {at, k, 0};
            if (val && !json_object_is_type(val, json_type_string)) return not_a_string(c, &s, val, v);
        }
        return true;
    }
    case PC_LIST:
    case PC_STRINGS: {
        if (!json_object_is_type(v, json_type_array)) return wrong(c, at, v, holder, "a list");
        size_t n = json_object_array_length(v);
        for (size_t i = 0; i < n; i++) {
            json_object *e = json_object_array_get_idx(v, i);
            seg s = {at, NULL, i};
            if (f->type == PC_STRINGS) {
                if (e && !json_object_is_type(e, json_type_string)) return not_a_string(c, &s, e, v);
                continue;
            }
            if (!json_object_is_type(e, json_type_object)) return wrong(c, &s, e, v, "an object");
            if (f->sub && !check_fields(c, e, f->sub, &s)) return false;
        }
        return true;
    }
    }
    return true;
}

static bool check_fields(pc *c, json_object *obj, const pc_field *fields, const seg *at) {
    for (const pc_field *f = fields; f->key; f++) {
        json_object *v = jw_member(obj, f->key); /* env entries and mounts: no hashing */
        seg s = {at, f->key, 0};
        if (!v) {
            if (f->required) return refuse(c, &s, obj, xstrdup("required, not set"));
            continue;
        }
        if (!check_value(c, v, f, &s, obj)) return false;
    }
    return true;
}

bool podcheck_shape(mctx *m) {
    pc c = {m, true};
    return check_fields(&c, m->in, shape_pod, NULL);
}

bool podcheck(mctx *m) {
    pc c = {m, false};
    return check_fields(&c, m->in, pod, NULL);
}
