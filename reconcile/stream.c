/* reconcile/stream.c - rendering a manifest stream; see stream.h.
 *
 * Splitting on "---" lines before parsing costs a pass over the text but
 * buys per-document failure: kube_yaml_parse reports the first syntax error
 * of a stream and nothing else. A "---" at column 0 inside a block scalar
 * is impossible (block content is indented), so the split is safe for
 * everything but a multi-line quoted scalar containing such a line, which
 * no collector manifest has. */
#include "reconcile/stream.h"

#include "base/alloc.h"
#include "base/json.h"
#include "kube/yaml.h"
#include "reconcile/targetallocator.h"

#include <stdlib.h>
#include <string.h>

/* What the first pass found: an object to render, or a document that did
 * not parse (its message), in input order. */
typedef struct item {
    json_object *obj; /* owned */
    int line;
    char *error; /* "LINE: reason" when the document did not parse */
} item;

typedef struct items {
    item *v;
    size_t n;
} items;

static void add(items *it, json_object *obj, int line, char *error) {
    it->v = xrealloc(it->v, (it->n + 1) * sizeof *it->v);
    it->v[it->n++] = (item){obj, line, error};
}

static const char *kind_of(json_object *o) {
    return jstr(o, "kind");
}

static const char *ns_of(json_object *o, const char *dflt) {
    const char *n = jstr(jmap(o, "metadata"), "namespace");
    return n && *n ? n : dflt;
}

static void print_objects(const reconcile_render_result *r, FILE *out, reconcile_stream_stats *st) {
    for (size_t i = 0; i < r->nobjs; i++) {
        char *y = kube_yaml_emit(r->objs[i]);
        fputs("---\n", out);
        fputs(y, out);
        free(y);
        st->objects++;
    }
}

/* A TargetAllocator: standalone (bound to the collector of the file that
 * names it in its label, if any) or the one a collector's render made. */
static void render_ta(const char *name, int line, json_object *ta, json_object *collector, const char *ns,
                      const reconcile_options *opt, FILE *out, FILE *diag, reconcile_stream_stats *st) {
    reconcile_render_result r;
    char err[512];
    const char *tname = jstr(jmap(ta, "metadata"), "name");
    if (reconcile_render_target_allocator(ta, collector, ns, opt, &r, err, sizeof err) != 0) {
        fprintf(diag, "%s:%d: TargetAllocator %s: %s\n", name, line, tname ? tname : "", err);
        st->failed++;
        return;
    }
    for (size_t i = 0; i < r.nwarnings; i++)
        fprintf(diag, "%s:%d: warning: TargetAllocator %s: %s\n", name, line, tname, r.warnings[i]);
    print_objects(&r, out, st);
    reconcile_render_result_free(&r);
}

/* The TargetAllocator of the file that the collector's label names. */
static json_object *labelled_ta(const items *all, json_object *col, const char *ns) {
    const char *want = jstr(jmap(jmap(col, "metadata"), "labels"), RECONCILE_TA_LABEL);
    for (size_t i = 0; want && i < all->n; i++) {
        json_object *o = all->v[i].obj;
        const char *k = kind_of(o), *n = jstr(jmap(o, "metadata"), "name");
        if (k && strcmp(k, "TargetAllocator") == 0 && n && strcmp(n, want) == 0 &&
            strcmp(ns_of(o, ns), ns_of(col, ns)) == 0)
            return o;
    }
    return NULL;
}

static void render_one(const char *name, const items *all, json_object *collectors, size_t idx, const char *ns,
                       const reconcile_options *opt, FILE *out, FILE *diag, reconcile_stream_stats *st) {
    reconcile_render_result r;
    char err[512];
    json_object *obj = all->v[idx].obj;
    int line = all->v[idx].line;
    const char *kind = kind_of(obj);
    const char *cname = jstr(jmap(obj, "metadata"), "name");
    if (kind && strcmp(kind, "TargetAllocator") == 0) {
        json_object *col = reconcile_ta_bound_collector(obj, collectors, err, sizeof err);
        if (!col && err[0]) {
            fprintf(diag, "%s:%d: TargetAllocator %s: %s\n", name, line, cname ? cname : "", err);
            st->failed++;
            return;
        }
        render_ta(name, line, obj, col, ns, opt, out, diag, st);
        return;
    }
    if (!kind || strcmp(kind, "OpenTelemetryCollector") != 0) {
        fprintf(diag, "%s:%d: warning: skipped: kind %s is not OpenTelemetryCollector or TargetAllocator\n", name,
                line, kind ? kind : "(none)");
        return;
    }
    reconcile_options o = *opt;
    o.target_allocator = labelled_ta(all, obj, ns);
    if (reconcile_render(obj, ns, &o, &r, err, sizeof(err)) != 0) {
        fprintf(diag, "%s:%d: %s%s%s\n", name, line, cname ? cname : "", cname ? ": " : "", err);
        st->failed++;
        return;
    }
    for (size_t i = 0; i < r.nwarnings; i++)
        fprintf(diag, "%s:%d: warning: %s: %s\n", name, line, cname, r.warnings[i]);
    print_objects(&r, out, st);
    st->collectors++;
    /* The allocator it generated, rendered as its controller would. */
    for (size_t i = 0; i < r.nobjs; i++) {
        const char *k = kind_of(r.objs[i]);
        if (k && strcmp(k, "TargetAllocator") == 0)
            render_ta(name, line, r.objs[i], obj, ns, opt, out, diag, st);
    }
    reconcile_render_result_free(&r);
}

static void parse_doc(const char *name, const char *text, size_t len, int first_line, items *all,
                      reconcile_stream_stats *st) {
    kube_yaml_doc *docs = NULL;
    size_t ndocs = 0;
    kube_yaml_error ye = {0};
    (void)st;
    if (kube_yaml_parse(text, len, &docs, &ndocs, &ye) != 0) {
        /* libyaml reports errors found at the end of input (an unclosed
         * flow collection) on the line after it: that is the next
         * document's "---" here, so point at our last line instead. */
        int last = first_line, line = first_line + (ye.line > 0 ? ye.line - 1 : 0);
        for (size_t i = 0; i + 1 < len; i++) last += text[i] == '\n';
        add(all, NULL, line > last ? last : line, xasprintf("%s", ye.msg));
        (void)name;
        return;
    }
    for (size_t d = 0; d < ndocs; d++) {
        json_object *obj = docs[d].obj;
        int line = first_line + docs[d].line - 1;
        const char *kind = jstr(obj, "kind");
        if (!obj) continue;
        if (!json_object_is_type(obj, json_type_object)) {
            add(all, NULL, line, xstrdup("not a Kubernetes object"));
            continue;
        }
        if (kind && strcmp(kind, "List") == 0) {
            json_object *list = jarr(obj, "items");
            for (size_t i = 0; list && i < json_object_array_length(list); i++)
                add(all, json_object_get(json_object_array_get_idx(list, i)), line, NULL);
            continue;
        }
        add(all, json_object_get(obj), line, NULL);
    }
    kube_yaml_docs_free(docs, ndocs);
}

static int is_marker(const char *p, const char *end) {
    return end - p >= 3 && memcmp(p, "---", 3) == 0 &&
           (end - p == 3 || p[3] == '\n' || p[3] == '\r' || p[3] == ' ' || p[3] == '\t');
}

void reconcile_render_stream(const char *name, const char *text, size_t len, const char *ns,
                             const reconcile_options *opt, FILE *out, FILE *diag, reconcile_stream_stats *st) {
    const char *end = text + len, *start = text, *p = text;
    int line = 1, start_line = 1;
    items all = {0};
    memset(st, 0, sizeof(*st));
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *next = nl ? nl + 1 : end;
        if (p != start && is_marker(p, end)) {
            parse_doc(name, start, (size_t)(p - start), start_line, &all, st);
            start = p;
            start_line = line;
        }
        p = next;
        line++;
    }
    if (start < end) parse_doc(name, start, (size_t)(end - start), start_line, &all, st);
    /* Second pass: every collector of the file is known, so a standalone
     * TargetAllocator finds the one its label binds, wherever it is. */
    json_object *collectors = jnew_arr();
    for (size_t i = 0; i < all.n; i++) {
        const char *k = kind_of(all.v[i].obj);
        if (k && strcmp(k, "OpenTelemetryCollector") == 0) {
            json_object *c = jcopy(all.v[i].obj), *m = jobj_at(c, "metadata");
            if (!jstr(m, "namespace")) jset_str(m, "namespace", ns && *ns ? ns : "default");
            jpush(collectors, c);
        }
    }
    for (size_t i = 0; i < all.n; i++) {
        if (all.v[i].error) {
            fprintf(diag, "%s:%d: %s\n", name, all.v[i].line, all.v[i].error);
            st->failed++;
        } else {
            render_one(name, &all, collectors, i, ns, opt, out, diag, st);
        }
        json_object_put(all.v[i].obj);
        free(all.v[i].error);
    }
    json_object_put(collectors);
    free(all.v);
}
