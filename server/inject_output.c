/* server/inject_output.c - `inject -o yaml` and `-o json`; see inject.h.
 *
 * YAML: a file is written as it was read, piece by piece. A document the
 * engine did not change is its own bytes; one it changed is written anew
 * (kube_yaml_emit: keys in order, comments inside it gone, quoting made
 * uniform). What lies between documents (separators, comments, Helm's
 * "# Source:" lines, empty documents) and before the first and after the
 * last is always copied, so no separator is lost or doubled. Files follow
 * each other with a "---" between them when the next one does not start
 * with its own. JSON input and UTF-16 input, which have no spans, are
 * written anew throughout. Every document is written, a malformed one
 * (cmd_inject.c) unchanged. */
#include "server/inject.h"

#include "base/json.h"
#include "kube/yaml.h"

#include <stdlib.h>
#include <string.h>

typedef struct out {
    FILE *f;
    bool docs;    /* a document was written: the next file's first needs a separator */
    char last;    /* the last byte written, 0 before any */
} out;

static void put(out *o, const char *s, size_t n) {
    if (!n) return;
    fwrite(s, 1, n, o->f);
    o->last = s[n - 1];
}

static void put_emitted(out *o, json_object *obj) {
    char *y = kube_yaml_emit(obj);
    put(o, y, strlen(y));
    free(y);
}

/* Does text hold a "---" document marker line? (It holds no content:
 * only what lies between documents.) */
static bool has_marker(const char *s, size_t n) {
    for (size_t i = 0; i + 3 <= n; i++) {
        if ((i == 0 || s[i - 1] == '\n') && !memcmp(s + i, "---", 3) &&
            (i + 3 == n || s[i + 3] == ' ' || s[i + 3] == '\t' || s[i + 3] == '\n' || s[i + 3] == '\r'))
            return true;
    }
    return false;
}

/* Before the first document of a file, and each document of a file
 * written anew (head: the text before it, n bytes): a line break when the
 * output does not end with one, and a separator when documents came
 * before and head brings none. */
static void separate(out *o, const char *head, size_t n) {
    if (o->last && o->last != '\n') put(o, "\n", 1);
    if (o->docs && !has_marker(head, n)) put(o, "---\n", 4);
}

/* What precedes a document written anew: the text between documents, up
 * to the start of the content's line. A marker on that line ("--- " before
 * a flow mapping) stays, on a line of its own; indentation goes, since the
 * new text starts at column 0. */
static void put_head(out *o, const char *s, size_t n) {
    size_t ls = n;
    while (ls > 0 && s[ls - 1] != '\n') ls--;
    put(o, s, ls);
    size_t e = n;
    while (e > ls && (s[e - 1] == ' ' || s[e - 1] == '\t')) e--;
    if (e > ls) {
        put(o, s + ls, e - ls);
        put(o, "\n", 1);
    }
}

static void write_anew(out *o, const inject_input *in, const inject_file *f) {
    for (size_t i = f->first; i < f->first + f->ndocs; i++) {
        separate(o, "", 0);
        put_emitted(o, in->docs[i].obj);
        o->docs = true;
    }
}

void inject_write_yaml(FILE *f, const inject_input *in) {
    out o = {.f = f};
    for (size_t fi = 0; fi < in->nfiles; fi++) {
        const inject_file *file = &in->files[fi];
        /* Even a file of comments alone must not go on the last file's
         * last line. */
        if (o.last && o.last != '\n') put(&o, "\n", 1);
        bool spans = !file->json;
        for (size_t i = file->first; i < file->first + file->ndocs; i++) spans = spans && in->docs[i].end;
        if (!spans) {
            write_anew(&o, in, file);
            continue;
        }
        /* A byte order mark may open the stream, not a file in its middle. */
        size_t pos = o.last && file->len >= 3 && !memcmp(file->text, "\xef\xbb\xbf", 3) ? 3 : 0;
        bool first = true;
        for (size_t i = file->first; i < file->first + file->ndocs; i++) {
            const inject_doc *d = &in->docs[i];
            if (first) separate(&o, file->text + pos, d->start - pos);
            first = false;
            if (d->changed) {
                put_head(&o, file->text + pos, d->start - pos);
                put_emitted(&o, d->obj);
            } else {
                put(&o, file->text + pos, d->end - pos);
            }
            pos = d->end;
            o.docs = true;
        }
        put(&o, file->text + pos, file->len - pos);
    }
}

void inject_write_json(FILE *f, const inject_input *in) {
    json_object *top;
    if (in->ndocs == 1) {
        top = json_object_get(in->docs[0].obj);
    } else {
        /* Lists among several documents give their items: a List in a
         * List is nothing Kubernetes (or inject, reading this back) takes. */
        top = jnew_obj();
        jset_str(top, "apiVersion", "v1");
        jset_str(top, "kind", "List");
        json_object *items = jset_arr(top, "items");
        for (size_t i = 0; i < in->ndocs; i++) {
            json_object *d = in->docs[i].obj, *its = jarr(d, "items");
            const char *kind = jstr(d, "kind");
            if (!kind || strcmp(kind, "List") || !its) {
                jpush(items, json_object_get(d));
                continue;
            }
            for (size_t j = 0; j < jlen(its); j++) jpush(items, json_object_get(json_object_array_get_idx(its, j)));
        }
    }
    fprintf(f, "%s\n", json_object_to_json_string_ext(top, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(top);
}
