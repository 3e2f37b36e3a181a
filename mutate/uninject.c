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

static int scmp(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* The strings of names, sorted for bsearch (n set; free the result). */
static const char **sorted_names(json_object *names, size_t *n) {
    const char **v = xmalloc(sizeof *v * (jlen(names) ? jlen(names) : 1));
    *n = 0;
    for (size_t i = 0; i < jlen(names); i++)
        if (str_at(names, i)) v[(*n)++] = str_at(names, i);
    if (*n > 1) qsort(v, *n, sizeof *v, scmp);
    return v;
}

static bool in_sorted(const char **v, size_t n, const char *name) {
    return name && n && bsearch(&name, v, n, sizeof *v, scmp) != NULL;
}

static bool listed(json_object *names, const char *name) {
    for (size_t i = 0; name && i < jlen(names); i++) {
        const char *n = str_at(names, i);
        if (n && !strcmp(n, name)) return true;
    }
    return false;
}

/* holder[key] without the elements whose string field key is in names:
 * one pass into a new list (deleting one at a time moves the tail each
 * time). */
static void remove_listed(json_object *holder, const char *key, const char *field, json_object *names) {
    json_object *arr = jarr(holder, key);
    if (!arr || !jlen(names)) return;
    size_t n;
    const char **v = sorted_names(names, &n);
    json_object *kept = jnew_arr();
    for (size_t i = 0; i < jlen(arr); i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        if (!in_sorted(v, n, jstr(e, field))) jpush(kept, json_object_get(e));
    }
    free(v);
    jset(holder, key, kept);
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
    remove_listed(c, "env", "name", jarr(e, "env"));
    json_object *env = jarr(c, "env");
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
    remove_listed(c, "volumeMounts", "mountPath", jarr(e, "volumeMounts"));
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

/* The elements rec says were taken out of spec's lists, put back at their
 * places in one merge per list: the record lists them in ascending order of
 * place (record.c: list_delta), which is the order the inserts need; any
 * other order is put in that one (stable by place). */
typedef struct back {
    int64_t at;
    size_t seq;
    json_object *value;
} back;

static int back_cmp(const void *a, const void *b) {
    const back *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static void put_back(json_object *spec, json_object *removed) {
    static const char *const lists[] = {"containers", "initContainers", "volumes", NULL};
    back *b = xmalloc(sizeof *b * (jlen(removed) ? jlen(removed) : 1));
    for (int l = 0; lists[l] && spec; l++) {
        size_t n = 0;
        for (size_t i = 0; i < jlen(removed); i++) {
            json_object *r = json_object_array_get_idx(removed, i);
            int64_t at = 0;
            const char *list = jstr(r, "list");
            if (!list || strcmp(list, lists[l]) || !jint(r, "at", &at) || at < 0) continue;
            b[n] = (back){at, n, jget(r, "value")};
            n++;
        }
        if (!n) continue;
        qsort(b, n, sizeof *b, back_cmp);
        json_object *arr = jarr(spec, lists[l]), *out = jnew_arr();
        size_t j = 0, len = jlen(arr);
        for (size_t k = 0; k < n; k++) {
            while (j < len && (int64_t)json_object_array_length(out) < b[k].at)
                jpush(out, json_object_get(json_object_array_get_idx(arr, j++)));
            jpush(out, jcopy(b[k].value));
        }
        while (j < len) jpush(out, json_object_get(json_object_array_get_idx(arr, j++)));
        jset(spec, lists[l], out);
    }
    free(b);
}

json_object *mutate_uninject(json_object *pod, json_object *rec, char *err, size_t errlen) {
    /* Nothing is done that the record does not prove (record_check.c). */
    if (!mutate_record_check(pod, rec, err, errlen)) return NULL;
    json_object *np = jcopy(pod), *spec = jmap(np, "spec");
    json_object *ann = jmap(jmap(np, "metadata"), "annotations");
    if (ann) json_object_object_del(ann, MUTATE_RECORD_KEY);

    json_object *into = jarr(rec, "into");
    for (size_t i = 0; i < jlen(into); i++) {
        json_object *e = json_object_array_get_idx(into, i);
        const char *list = jbool(e, "init") ? "initContainers" : "containers";
        json_object *c = jfind_named(jarr(spec, list), jstr(e, "name"), NULL);
        restore_env(c, e);
        json_object *unset = jarr(e, "unset");
        for (size_t k = 0; k < jlen(unset); k++)
            if (jlen(jarr(c, str_at(unset, k)))) {
                snprintf(err, errlen, "the record's into[%zu].unset takes out %s, which still holds more than "
                                      "otel-webhook added", i, str_at(unset, k));
                goto fail;
            }
        apply_fields(c, e);
    }
    static const char *const lists[] = {"containers", "initContainers", "volumes", NULL};
    for (int l = 0; lists[l]; l++)
        if (spec) remove_listed(spec, lists[l], "name", jarr(rec, lists[l]));
    put_back(spec, jarr(rec, "removed"));
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
        json_object *parent = str_at(unset, i) ? pointer_parent(np, str_at(unset, i), false, &last) : NULL, *v = NULL;
        if (parent && last && json_object_object_get_ex(parent, last, &v) &&
            (json_object_is_type(v, json_type_object) || json_object_is_type(v, json_type_array)) &&
            !mutate_record_only_ours(v)) {
            snprintf(err, errlen, "the record's unset takes out %s, which still holds more than otel-webhook added",
                     str_at(unset, i));
            free(last);
            goto fail;
        }
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

/* ---- what the pod itself shows ------------------------------------------ */

/* Variables whose value comes from the pod's own identity (its name, its
 * owner), which a second run on the stored pod may derive otherwise: not
 * evidence of a changed resource. */
static bool identity_env(const char *n) {
    return !strcmp(n, "OTEL_SERVICE_NAME") || !strncmp(n, "OTEL_RESOURCE_ATTRIBUTES", 24);
}

static void seen_containers(reasons *r, json_object *pod, json_object *old, json_object *now_pod, json_object *now,
                            const char *list) {
    json_object *have = jarr(jmap(pod, "spec"), list), *want = jarr(jmap(now_pod, "spec"), list);
    json_object *names = jarr(now, list), *was = jarr(old, list);
    for (size_t i = 0; i < jlen(names); i++) {
        const char *n = str_at(names, i);
        json_object *h = jfind_named(have, n, NULL), *w = jfind_named(want, n, NULL);
        if (!h) add(r, "the pod has no %s, which would be added now", n);
        else if (strcmp(or_empty(jstr(h, "image")), or_empty(jstr(w, "image"))))
            add(r, "the pod's %s runs %s, now %s", n, or_empty(jstr(h, "image")), or_empty(jstr(w, "image")));
    }
    for (size_t i = 0; i < jlen(was); i++)
        if (!listed(names, str_at(was, i))) add(r, "the pod's %s would not be added now", str_at(was, i));
}

static void seen_env(reasons *r, json_object *pod, json_object *now_pod, json_object *now) {
    json_object *into = jarr(now, "into");
    for (size_t i = 0; i < jlen(into); i++) {
        json_object *e = json_object_array_get_idx(into, i);
        const char *list = jbool(e, "init") ? "initContainers" : "containers", *cn = jstr(e, "name");
        json_object *h = jfind_named(jarr(jmap(pod, "spec"), list), cn, NULL);
        json_object *w = jfind_named(jarr(jmap(now_pod, "spec"), list), cn, NULL);
        json_object *henv = jarr(h, "env"), *wenv = jarr(w, "env");
        for (size_t k = 0; k < jlen(wenv); k++) {
            json_object *we = json_object_array_get_idx(wenv, k);
            const char *n = jstr(we, "name"), *wv = jstr(we, "value");
            if (!n || !wv || identity_env(n)) continue;
            json_object *he = jfind_named(henv, n, NULL);
            const char *hv = jstr(he, "value");
            if (!he) add(r, "the pod's container %s has no %s, which would be %s now", or_empty(cn), n, wv);
            else if (hv && strcmp(hv, wv)) add(r, "the pod's container %s has %s=%s, now %s", or_empty(cn), n, hv, wv);
        }
    }
}

static int stale_core(const mutate_request *req, char ***why, char ***seen, size_t *nseen) {
    *why = NULL;
    if (seen) {
        *seen = NULL;
        *nseen = 0;
    }
    const char *bad;
    json_object *rec = mutate_record_read(req->pod, &bad);
    if (!rec) return -1;
    reasons r = {0}, s = {0};
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
        if (seen && r.n) {
            if (!now) {
                json_object *names[2] = {jarr(rec, "containers"), jarr(rec, "initContainers")};
                for (int l = 0; l < 2; l++)
                    for (size_t i = 0; i < jlen(names[l]); i++)
                        add(&s, "the pod's %s would not be added now", str_at(names[l], i));
            } else {
                seen_containers(&s, req->pod, rec, res.pod, now, "containers");
                seen_containers(&s, req->pod, rec, res.pod, now, "initContainers");
                seen_env(&s, req->pod, res.pod, now);
            }
        }
        json_object_put(now);
        mutate_result_free(&res);
        json_object_put(plain);
    }
    json_object_put(rec);
    *why = r.v;
    if (seen) {
        *seen = s.v;
        *nseen = s.n;
    } else {
        mutate_strings_free(s.v, s.n);
    }
    return (int)r.n;
}

int mutate_record_stale(const mutate_request *req, char ***why) { return stale_core(req, why, NULL, NULL); }

int mutate_record_stale_seen(const mutate_request *req, char ***why, char ***seen, size_t *nseen) {
    return stale_core(req, why, seen, nseen);
}
