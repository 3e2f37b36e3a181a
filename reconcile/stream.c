/* reconcile/stream.c - rendering a manifest stream; see stream.h.
 *
 * Splitting on "---" lines before parsing costs a pass over the text but
 * buys per-document failure: kube_yaml_parse reports the first syntax error
 * of a stream and nothing else. A "---" at column 0 inside a block scalar
 * is impossible (block content is indented), so the split is safe for
 * everything but a multi-line quoted scalar containing such a line, which
 * no collector manifest has. */
#include "reconcile/stream.h"

#include "base/json.h"
#include "kube/yaml.h"

#include <stdlib.h>
#include <string.h>

static void render_one(const char *name, int line, json_object *obj, const char *ns, const reconcile_options *opt,
                       FILE *out, FILE *diag, reconcile_stream_stats *st) {
    reconcile_render_result r;
    char err[512];
    const char *kind = jstr(obj, "kind");
    const char *cname = jstr(jmap(obj, "metadata"), "name");
    if (!kind || strcmp(kind, "OpenTelemetryCollector") != 0) {
        fprintf(diag, "%s:%d: warning: skipped: kind %s is not OpenTelemetryCollector\n", name, line,
                kind ? kind : "(none)");
        return;
    }
    if (reconcile_render(obj, ns, opt, &r, err, sizeof(err)) != 0) {
        fprintf(diag, "%s:%d: %s%s%s\n", name, line, cname ? cname : "", cname ? ": " : "", err);
        st->failed++;
        return;
    }
    for (size_t i = 0; i < r.nwarnings; i++)
        fprintf(diag, "%s:%d: warning: %s: %s\n", name, line, cname, r.warnings[i]);
    for (size_t i = 0; i < r.nobjs; i++) {
        char *y = kube_yaml_emit(r.objs[i]);
        fputs("---\n", out);
        fputs(y, out);
        free(y);
        st->objects++;
    }
    st->collectors++;
    reconcile_render_result_free(&r);
}

static void render_doc(const char *name, const char *text, size_t len, int first_line, const char *ns,
                       const reconcile_options *opt, FILE *out, FILE *diag, reconcile_stream_stats *st) {
    kube_yaml_doc *docs = NULL;
    size_t ndocs = 0;
    kube_yaml_error ye = {0};
    if (kube_yaml_parse(text, len, &docs, &ndocs, &ye) != 0) {
        /* libyaml reports errors found at the end of input (an unclosed
         * flow collection) on the line after it: that is the next
         * document's "---" here, so point at our last line instead. */
        int last = first_line, line = first_line + (ye.line > 0 ? ye.line - 1 : 0);
        for (size_t i = 0; i + 1 < len; i++) last += text[i] == '\n';
        fprintf(diag, "%s:%d: %s\n", name, line > last ? last : line, ye.msg);
        st->failed++;
        return;
    }
    for (size_t d = 0; d < ndocs; d++) {
        json_object *obj = docs[d].obj;
        int line = first_line + docs[d].line - 1;
        const char *kind = jstr(obj, "kind");
        if (!obj) continue;
        if (!json_object_is_type(obj, json_type_object)) {
            fprintf(diag, "%s:%d: not a Kubernetes object\n", name, line);
            st->failed++;
            continue;
        }
        if (kind && strcmp(kind, "List") == 0) {
            json_object *items = jarr(obj, "items");
            for (size_t i = 0; items && i < json_object_array_length(items); i++)
                render_one(name, line, json_object_array_get_idx(items, i), ns, opt, out, diag, st);
            continue;
        }
        render_one(name, line, obj, ns, opt, out, diag, st);
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
    memset(st, 0, sizeof(*st));
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *next = nl ? nl + 1 : end;
        if (p != start && is_marker(p, end)) {
            render_doc(name, start, (size_t)(p - start), start_line, ns, opt, out, diag, st);
            start = p;
            start_line = line;
        }
        p = next;
        line++;
    }
    if (start < end) render_doc(name, start, (size_t)(end - start), start_line, ns, opt, out, diag, st);
}
