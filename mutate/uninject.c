/* mutate/uninject.c - undoing an injection from its status record, and
 * telling whether a record is stale (record.h).
 *
 * Uninject works on a deep copy and touches only what the record names, in
 * the reverse order of the injection: per container first (env entries and
 * mounts added, rewritten entries, other fields), then the containers and
 * volumes added, the elements taken out put back, and the pod's fields.
 * A record naming a container the pod lacks is refused rather than half
 * applied: the pod was changed since, and a guess would be a wrong output.
 *
 * Staleness is decided by running the engine again on the uninjected pod
 * with today's resources: whatever the engine would now choose (another
 * Instrumentation, a changed spec, a new default image) shows up as a
 * difference between the two records, with no second copy of the rules. */
#include "mutate/record.h"

#include "base/alloc.h"
#include "base/json.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *str_at(json_object *arr, size_t i) {
    json_object *s = json_object_array_get_idx(arr, i);
    return json_object_is_type(s, json_type_string) ? json_object_get_string(s) : NULL;
}

static bool listed(json_object *names, const char *name) {
    for (size_t i = 0; name && i < jlen(names); i++) {
        const char *n = str_at(names, i);
        if (n && !strcmp(n, name)) return true;
    }
    return false;
}

/* Removes the elements of arr whose string field key is in names. */
static void remove_listed(json_object *arr, const char *key, json_object *names) {
    for (size_t i = jlen(arr); i-- > 0;)
        if (listed(names, jstr(json_object_array_get_idx(arr, i), key))) json_object_array_del_idx(arr, i, 1);
}

static void apply_fields(json_object *o, json_object *e) {
    json_object *unset = jarr(e, "unset"), *was = jmap(e, "was");
    for (size_t i = 0; i < jlen(unset); i++)
        if (str_at(unset, i)) json_object_object_del(o, str_at(unset, i));
    if (was) {
        json_object_object_foreach(was, k, v) jset(o, k, jcopy(v));
    }
}

static void restore_env(json_object *c, json_object *e) {
    json_object *env = jarr(c, "env");
    if (env) remove_listed(env, "name", jarr(e, "env"));
    json_object *was = jarr(e, "envWas");
    for (size_t i = 0; i < jlen(was); i++) {
        json_object *w = json_object_array_get_idx(was, i);
        const char *name = jstr(w, "name");
        size_t at;
        if (!name) continue;
        if (!env) env = jset_arr(c, "env");
        if (jfind_named(env, name, &at)) json_object_array_put_idx(env, at, jcopy(w));
        else jpush(env, jcopy(w));
    }
    json_object *order = jarr(e, "envOrder");
    if (env && order) {
        json_object *sorted = jnew_arr();
        for (size_t i = 0; i < jlen(order); i++) {
            size_t at;
            const char *n = str_at(order, i);
            if (n && jfind_named(env, n, &at)) jpush(sorted, json_object_get(json_object_array_get_idx(env, at)));
        }
        for (size_t i = 0; i < jlen(env); i++) { /* anything else keeps its place after them */
            json_object *x = json_object_array_get_idx(env, i);
            if (!listed(order, jstr(x, "name"))) jpush(sorted, json_object_get(x));
        }
        jset(c, "env", sorted);
    }
    json_object *mounts = jarr(c, "volumeMounts");
    if (mounts) remove_listed(mounts, "mountPath", jarr(e, "volumeMounts"));
}

/* Walks a JSON pointer of objects; the parent of its last token (created
 * when create) and that token, unescaped, in last. */
static json_object *pointer_parent(json_object *root, const char *ptr, bool create, char **last) {
    json_object *o = root;
    *last = NULL;
    if (*ptr != '/') return NULL;
    const char *p = ptr + 1;
    for (;;) {
        const char *end = strchr(p, '/');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char *tok = xmalloc(n + 1), *w = tok;
        for (size_t i = 0; i < n; i++) {
            if (p[i] == '~' && i + 1 < n && (p[i + 1] == '0' || p[i + 1] == '1')) { *w++ = p[i + 1] == '0' ? '~' : '/'; i++; }
            else *w++ = p[i];
        }
        *w = 0;
        if (!end) { *last = tok; return o; }
        json_object *next = jget(o, tok);
        /* Created only where nothing is: a pointer through a list or a
         * string is not what the record writes, and would replace it. */
        if (!next && create) next = jset_obj(o, tok);
        free(tok);
        if (!json_object_is_type(next, json_type_object)) return NULL;
        o = next;
        p = end + 1;
    }
}

/* The members uninject reads, of the types the record writes; anything else
 * is a record otel-webhook did not write (an annotation anyone can set),
 * refused whole rather than half applied. NULL, or the member at fault. */
static const char *record_misshapen(json_object *rec) {
    static const char *const strings[] = {"containers", "initContainers", "volumes", "unset", NULL};
    for (int i = 0; strings[i]; i++) {
        json_object *v = jget(rec, strings[i]);
        if (!v) continue;
        if (!json_object_is_type(v, json_type_array)) return strings[i];
        for (size_t k = 0; k < jlen(v); k++)
            if (!json_object_is_type(json_object_array_get_idx(v, k), json_type_string)) return strings[i];
    }
    static const char *const objects[] = {"into", "removed", NULL};
    for (int i = 0; objects[i]; i++) {
        json_object *v = jget(rec, objects[i]);
        if (!v) continue;
        if (!json_object_is_type(v, json_type_array)) return objects[i];
        for (size_t k = 0; k < jlen(v); k++)
            if (!json_object_is_type(json_object_array_get_idx(v, k), json_type_object)) return objects[i];
    }
    json_object *was = jget(rec, "was");
    if (was && !json_object_is_type(was, json_type_object)) return "was";
    return NULL;
}

json_object *mutate_uninject(json_object *pod, json_object *rec, char *err, size_t errlen) {
    const char *bad = record_misshapen(rec);
    if (bad) {
        snprintf(err, errlen, "the record's %s is not what otel-webhook writes", bad);
        return NULL;
    }
    json_object *np = jcopy(pod), *spec = jmap(np, "spec");
    json_object *ann = jmap(jmap(np, "metadata"), "annotations");
    if (ann) json_object_object_del(ann, MUTATE_RECORD_KEY);

    json_object *into = jarr(rec, "into");
    for (size_t i = 0; i < jlen(into); i++) {
        json_object *e = json_object_array_get_idx(into, i);
        const char *name = jstr(e, "name");
        const char *list = jbool(e, "init") ? "initContainers" : "containers";
        json_object *c = name ? jfind_named(jarr(spec, list), name, NULL) : NULL;
        if (!c) {
            snprintf(err, errlen, "the record names the %s %s, which the pod does not have",
                     jbool(e, "init") ? "init container" : "container", name ? name : "?");
            goto fail;
        }
        restore_env(c, e);
        apply_fields(c, e);
    }
    static const char *const lists[] = {"containers", "initContainers", "volumes", NULL};
    for (int l = 0; lists[l]; l++) {
        json_object *names = jarr(rec, lists[l]), *arr = jarr(spec, lists[l]);
        for (size_t i = 0; i < jlen(names); i++)
            if (!str_at(names, i) || !jfind_named(arr, str_at(names, i), NULL)) {
                snprintf(err, errlen, "the record names the %s %s, which the pod does not have",
                         l == 0 ? "container" : l == 1 ? "init container" : "volume", str_at(names, i) ? str_at(names, i) : "?");
                goto fail;
            }
        remove_listed(arr, "name", names);
    }
    json_object *removed = jarr(rec, "removed");
    for (size_t i = 0; i < jlen(removed); i++) {
        json_object *r = json_object_array_get_idx(removed, i);
        const char *list = jstr(r, "list");
        int64_t at = 0;
        if (!list || !jint(r, "at", &at) || at < 0 || !spec) continue;
        jinsert(jarr_at(spec, list), (size_t)at, jcopy(jget(r, "value")));
    }
    json_object *was = jmap(rec, "was");
    if (was) {
        json_object_object_foreach(was, ptr, v) {
            char *last;
            json_object *parent = pointer_parent(np, ptr, true, &last);
            if (!parent || !last) {
                free(last);
                snprintf(err, errlen, "the record's was names %s, which does not lead through objects of the pod", ptr);
                goto fail;
            }
            jset(parent, last, jcopy(v));
            free(last);
        }
    }
    json_object *unset = jarr(rec, "unset");
    for (size_t i = 0; i < jlen(unset); i++) {
        char *last;
        json_object *parent = str_at(unset, i) ? pointer_parent(np, str_at(unset, i), false, &last) : NULL;
        if (parent && last) json_object_object_del(parent, last);
        if (str_at(unset, i)) free(last);
    }
    return np;
fail:
    json_object_put(np);
    return NULL;
}

/* ---- staleness ------------------------------------------------------------ */

typedef struct reasons {
    char **v;
    size_t n;
} reasons;

static void add(reasons *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(reasons *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *s = xvasprintf(fmt, ap);
    va_end(ap);
    r->v = xrealloc(r->v, sizeof *r->v * (r->n + 1));
    r->v[r->n++] = s;
}

static const char *or_empty(const char *s) { return s ? s : ""; }

/* The use of the same kind and language in list, or NULL. */
static json_object *same_role(json_object *list, json_object *u) {
    for (size_t i = 0; i < jlen(list); i++) {
        json_object *x = json_object_array_get_idx(list, i);
        if (!strcmp(or_empty(jstr(x, "kind")), or_empty(jstr(u, "kind"))) &&
            !strcmp(or_empty(jstr(x, "language")), or_empty(jstr(u, "language"))))
            return x;
    }
    return NULL;
}

static char *label(json_object *u) {
    const char *lang = jstr(u, "language");
    return xasprintf("%s %s/%s%s%s%s", or_empty(jstr(u, "kind")), or_empty(jstr(u, "namespace")),
                     or_empty(jstr(u, "name")), lang ? " (" : "", lang ? lang : "", lang ? ")" : "");
}

static char *version(json_object *u) {
    int64_t g;
    if (jint(u, "generation", &g)) return xasprintf("generation %lld", (long long)g);
    if (jstr(u, "resourceVersion")) return xasprintf("resourceVersion %s", jstr(u, "resourceVersion"));
    return xasprintf("spec %s", or_empty(jstr(u, "hash")));
}

static void compare(reasons *r, json_object *old, json_object *now) {
    json_object *ou = jarr(old, "uses"), *nu = now ? jarr(now, "uses") : NULL;
    for (size_t i = 0; i < jlen(ou); i++) {
        json_object *u = json_object_array_get_idx(ou, i), *n = same_role(nu, u);
        char *lu = label(u);
        if (!n) add(r, "%s would not be injected now", lu);
        else if (strcmp(or_empty(jstr(u, "namespace")), or_empty(jstr(n, "namespace"))) ||
                 strcmp(or_empty(jstr(u, "name")), or_empty(jstr(n, "name")))) {
            char *ln = label(n);
            add(r, "%s would be %s now", lu, ln);
            free(ln);
        } else if (strcmp(or_empty(jstr(u, "hash")), or_empty(jstr(n, "hash")))) {
            char *a = version(u), *b = version(n);
            if (!strcmp(a, b)) add(r, "%s changed since the injection (its spec differs)", lu);
            else add(r, "%s changed since the injection (%s, now %s)", lu, a, b);
            free(a);
            free(b);
        }
        free(lu);
    }
    for (size_t i = 0; i < jlen(nu); i++) {
        json_object *n = json_object_array_get_idx(nu, i);
        if (same_role(ou, n)) continue;
        char *ln = label(n);
        add(r, "%s would be injected now", ln);
        free(ln);
    }
    json_object *oi = jmap(old, "images"), *ni = now ? jmap(now, "images") : NULL;
    if (oi) {
        json_object_object_foreach(oi, k, v) {
            const char *a = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : "";
            const char *b = jstr(ni, k);
            /* A container that is gone is already named by its resource. */
            if (b && strcmp(a, b)) add(r, "image of %s: %s, now %s", k, a, b);
        }
    }
}

int mutate_record_stale(const mutate_request *req, char ***why) {
    *why = NULL;
    const char *bad;
    json_object *rec = mutate_record_read(req->pod, &bad);
    if (!rec) return -1;
    reasons r = {0};
    char err[256];
    json_object *plain = mutate_uninject(req->pod, rec, err, sizeof err);
    if (!plain) {
        add(&r, "%s", err);
    } else {
        mutate_options opt = *req->opt;
        opt.record = true;
        mutate_request again = *req;
        again.pod = plain;
        again.opt = &opt;
        mutate_result res;
        json_object *now = NULL;
        if (mutate_pod(&again, &res) == 0 && json_object_array_length(res.patch)) now = mutate_record_read(res.pod, &bad);
        if (!now) add(&r, "nothing would be injected now");
        else compare(&r, rec, now);
        json_object_put(now);
        mutate_result_free(&res);
        json_object_put(plain);
    }
    json_object_put(rec);
    *why = r.v;
    return (int)r.n;
}
