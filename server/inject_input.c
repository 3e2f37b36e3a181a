/* server/inject_input.c - `inject -f` and `validate -f`: files, folders and
 * standard input into documents that remember their file, line and bytes;
 * see inject_input.h.
 *
 * Folders are read as kubectl reads them (manifests in name order, files
 * of other extensions ignored, subfolders only with -R), except that
 * dot-files and dot-folders are skipped as the resource folders skip them:
 * .git or an editor's swap file is never a manifest. */
#include "server/inject_input.h"

#include "base/alloc.h"
#include "kube/file.h"
#include "kube/yaml.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool is_manifest_name(const char *n) {
    size_t l = strlen(n);
    return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")) ||
           (l > 5 && !strcmp(n + l - 5, ".json"));
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Cuts one file's text into documents. -1 after printing why. */
static int parse_file(inject_input *in, size_t fi) {
    inject_file *f = &in->files[fi];
    const char *p = f->text, *e = f->text + f->len;
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')) p++;
    f->first = in->ndocs;
    if (p < e && (*p == '{' || *p == '[')) {
        int line;
        const char *reason;
        json_object *o = kube_parse_json(f->text, f->len, &line, &reason);
        if (!o) {
            fprintf(stderr, "%s:%d: %s\n", f->name, line, reason);
            return -1;
        }
        f->json = true;
        in->docs = xrealloc(in->docs, sizeof *in->docs * (in->ndocs + 1));
        in->docs[in->ndocs++] = (inject_doc){.obj = o, .file = fi, .line = 1};
        f->ndocs = 1;
        return 0;
    }
    kube_yaml_doc *yd = NULL;
    size_t n = 0;
    kube_yaml_error ye;
    if (kube_yaml_parse_lines(f->text, f->len, &yd, &n, &ye, &f->lines) != 0) {
        fprintf(stderr, "%s:%d: %s\n", f->name, ye.line, ye.msg);
        return -1;
    }
    in->docs = xrealloc(in->docs, sizeof *in->docs * (in->ndocs + n + 1));
    for (size_t i = 0; i < n; i++) {
        in->docs[in->ndocs++] = (inject_doc){.obj = yd[i].obj, .file = fi, .line = yd[i].line, .start = yd[i].start,
                                             .end = yd[i].end, .item_lines = yd[i].item_lines,
                                             .nitem_lines = yd[i].nitem_lines};
        yd[i].obj = NULL;
        yd[i].item_lines = NULL;
    }
    kube_yaml_docs_free(yd, n);
    f->ndocs = n;
    return 0;
}

static int read_one(inject_input *in, const char *path) {
    bool is_stdin = !strcmp(path, "-");
    size_t len = 0;
    char *text = kube_read_file(path, &len);
    if (!text) {
        fprintf(stderr, "%s: cannot read: %s\n", path, strerror(errno));
        return -1;
    }
    in->files = xrealloc(in->files, sizeof *in->files * (in->nfiles + 1));
    in->files[in->nfiles] = (inject_file){.name = xstrdup(is_stdin ? "<stdin>" : path), .text = text, .len = len};
    return parse_file(in, in->nfiles++);
}

/* The manifests of one folder, in name order; *found counts them. */
static int read_dir(inject_input *in, const char *dir, bool recursive, size_t *found) {
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot read the folder: %s\n", dir, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;
    errno = 0;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        names = xgrow(names, &cap, n + 1, sizeof *names);
        names[n++] = xstrdup(de->d_name);
    }
    int rc = 0;
    if (errno) {
        fprintf(stderr, "%s: cannot read the folder: %s\n", dir, strerror(errno));
        rc = -1;
    }
    closedir(d);
    if (n) qsort(names, n, sizeof *names, by_name);
    size_t dl = strlen(dir);
    const char *sep = dl && dir[dl - 1] == '/' ? "" : "/";
    for (size_t i = 0; i < n; i++) {
        char *path = xasprintf("%s%s%s", dir, sep, names[i]);
        struct stat st, lst;
        /* A symlink to a manifest is read; one to a folder is not walked
         * (as kubectl), which also keeps -R out of loops. */
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (recursive && lstat(path, &lst) == 0 && S_ISDIR(lst.st_mode) && read_dir(in, path, true, found) != 0)
                rc = -1;
        } else if (is_manifest_name(names[i])) {
            (*found)++;
            if (read_one(in, path) != 0) rc = -1;
        }
        free(path);
    }
    for (size_t i = 0; i < n; i++) free(names[i]);
    free(names);
    return rc;
}

int inject_input_read(inject_input *in, const char *const *paths, size_t npaths, bool recursive) {
    int rc = 0;
    for (size_t i = 0; i < npaths; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
            size_t found = 0;
            if (read_dir(in, paths[i], recursive, &found) != 0) rc = -1;
            else if (!found) {
                fprintf(stderr, "%s: no .yaml, .yml or .json file in the folder\n", paths[i]);
                rc = -1;
            }
        } else if (read_one(in, paths[i]) != 0) {
            rc = -1;
        }
    }
    return rc;
}

void inject_input_free(inject_input *in) {
    for (size_t i = 0; i < in->ndocs; i++) {
        json_object_put(in->docs[i].obj);
        free(in->docs[i].item_lines);
    }
    for (size_t i = 0; i < in->nfiles; i++) {
        free(in->files[i].name);
        free(in->files[i].text);
        kube_yaml_lines_free(in->files[i].lines);
    }
    free(in->docs);
    free(in->files);
    memset(in, 0, sizeof *in);
}

int inject_item_line(const inject_doc *d, size_t i) { return i < d->nitem_lines ? d->item_lines[i] : d->line; }
