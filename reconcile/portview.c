/* reconcile/portview.c - IPv6-safe view of the spec for port derivation;
 * see portview.h. Every string of spec.config is scanned, not just the
 * endpoint keys: the component parsers read endpoints from several places
 * (endpoint, listen_address, http.endpoint, api_server.server_config) and
 * rewriting a bracketed host anywhere else changes nothing they read. */
#include "reconcile/portview.h"

#include "reconcile/obj.h"

#include <stdlib.h>
#include <string.h>

#define PLACEHOLDER "ipv6"

/* A copy of s with every "[...]" replaced by PLACEHOLDER, or NULL when s
 * has none. */
static char *rewrite(const char *s) {
    const char *open = strchr(s, '['), *close;
    char *out, *w;
    if (!open || !(close = strchr(open, ']'))) return NULL;
    if (!(out = malloc(strlen(s) + sizeof(PLACEHOLDER)))) return NULL;
    w = out;
    for (const char *p = s; *p;) {
        if (*p == '[' && (close = strchr(p, ']'))) {
            memcpy(w, PLACEHOLDER, sizeof(PLACEHOLDER) - 1);
            w += sizeof(PLACEHOLDER) - 1;
            p = close + 1;
        } else {
            *w++ = *p++;
        }
    }
    *w = '\0';
    return out;
}

static int has_brackets(json_object *v, int depth) {
    if (depth > 100) return 0;
    switch (json_object_get_type(v)) {
    case json_type_string: {
        const char *s = json_object_get_string(v), *o = strchr(s, '[');
        return o && strchr(o, ']');
    }
    case json_type_object: {
        json_object_object_foreach(v, k, c) {
            (void)k;
            if (has_brackets(c, depth + 1)) return 1;
        }
        return 0;
    }
    case json_type_array:
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (has_brackets(json_object_array_get_idx(v, i), depth + 1)) return 1;
        return 0;
    default:
        return 0;
    }
}

static void fix(json_object *v, int depth) {
    if (depth > 100) return;
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, k, c) {
            if (json_object_is_type(c, json_type_string)) {
                char *r = rewrite(json_object_get_string(c));
                if (r) reconcile_obj_str(v, k, r); /* replaces in place: the walk stays valid */
                free(r);
            } else {
                fix(c, depth + 1);
            }
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++) fix(json_object_array_get_idx(v, i), depth + 1);
    }
}

json_object *reconcile_port_view(json_object *spec) {
    json_object *copy;
    if (!has_brackets(reconcile_get_map(spec, "config"), 0)) return NULL;
    if (!(copy = reconcile_obj_clone(spec))) return NULL;
    fix(reconcile_get_map(copy, "config"), 0);
    return copy;
}
