/* kube/filesource.c - manifest folders as a store layer; see filesource.h.
 *
 * Change detection is a stat() of every file per poll (device, inode, size,
 * mtime): a ConfigMap mounted by the kubelet changes by an atomic rename of
 * its ..data symlink, which shows up as a new inode through the symlink.
 * Polling costs a few syscalls per file and needs no inotify re-arming.
 * What each object becomes in the store (trimming, defaults) is
 * kube/trim.c's, shared with the live cluster source. */
#include "kube/filesource.h"

#include "base/alloc.h"
#include "kube/file.h"
#include "kube/trim.h"
#include "kube/yaml.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct file {
    char *path;
    struct stat st;
    json_object **objs; /* last good objects */
    size_t nobjs;
    bool failing, seen;
} file;

struct kube_filesource {
    kube_store *store;
    kube_prepare prep; /* by value: the caller's may be a temporary */
    char **dirs;
    size_t ndirs;
    char *default_ns;
    kube_logger log;
    file *files;
    size_t nfiles;
    bool published;
};

/* One parsed document (possibly a List) into the kept objects. */
static void take(json_object *doc, const char *name, int line, const kube_prepare *prep, const char *default_ns,
                 const kube_logger *log, json_object ***objs, size_t *n) {
    if (!json_object_is_type(doc, json_type_object)) {
        kube_logf(log, KUBE_LOG_WARN, "%s:%d: not an object; skipped", name, line);
        return;
    }
    const char *kind = kube_obj_str(doc, "kind");
    if (kind && !strcmp(kind, "List")) {
        json_object *items = kube_obj_get(doc, "items");
        size_t ni = json_object_is_type(items, json_type_array) ? json_object_array_length(items) : 0;
        for (size_t i = 0; i < ni; i++) take(json_object_array_get_idx(items, i), name, line, prep, default_ns, log, objs, n);
        return;
    }
    char where[512];
    snprintf(where, sizeof where, "%s:%d", name, line);
    json_object *keep = kube_trim_object(doc, prep, default_ns, where, log);
    if (!keep) return;
    json_object **v = xrealloc(*objs, sizeof *v * (*n + 1));
    *objs = v;
    v[(*n)++] = keep;
}

int kube_manifest_objects(const char *name, const char *text, size_t len, const kube_prepare *prep,
                          const char *default_ns, const kube_logger *log, json_object ***objs, size_t *nobjs,
                          char *err, size_t errlen) {
    size_t nl = strlen(name);
    size_t start = *nobjs;
    if (nl > 5 && !strcmp(name + nl - 5, ".json")) {
        int line;
        const char *reason;
        json_object *doc = kube_parse_json(text, len, &line, &reason);
        if (!doc) {
            snprintf(err, errlen, "%s:%d: %s", name, line, reason);
            return -1;
        }
        take(doc, name, 1, prep, default_ns, log, objs, nobjs);
        json_object_put(doc);
        return 0;
    }
    kube_yaml_doc *docs = NULL;
    size_t ndocs = 0;
    kube_yaml_error ye;
    if (kube_yaml_parse(text, len, &docs, &ndocs, &ye) != 0) {
        snprintf(err, errlen, "%s:%d: %s", name, ye.line, ye.msg);
        return -1;
    }
    for (size_t i = 0; i < ndocs; i++)
        if (docs[i].obj) take(docs[i].obj, name, docs[i].line, prep, default_ns, log, objs, nobjs);
    kube_yaml_docs_free(docs, ndocs);
    (void)start;
    return 0;
}

kube_filesource *kube_filesource_new(kube_store *store, const kube_prepare *prep, const char *const *dirs, size_t ndirs,
                                     const char *default_ns, const kube_logger *log) {
    kube_filesource *fs = xcalloc(1, sizeof *fs);
    fs->store = store;
    if (prep) fs->prep = *prep;
    fs->dirs = xcalloc(ndirs ? ndirs : 1, sizeof *fs->dirs);
    for (size_t i = 0; i < ndirs; i++) fs->dirs[i] = xstrdup(dirs[i]);
    fs->ndirs = ndirs;
    fs->default_ns = xstrdup(default_ns ? default_ns : "default");
    if (log) fs->log = *log;
    return fs;
}

static void file_clear(file *f) {
    for (size_t i = 0; i < f->nobjs; i++) json_object_put(f->objs[i]);
    free(f->objs);
    f->objs = NULL;
    f->nobjs = 0;
}

void kube_filesource_free(kube_filesource *fs) {
    if (!fs) return;
    for (size_t i = 0; i < fs->nfiles; i++) {
        file_clear(&fs->files[i]);
        free(fs->files[i].path);
    }
    free(fs->files);
    for (size_t i = 0; i < fs->ndirs; i++) free(fs->dirs[i]);
    free(fs->dirs);
    free(fs->default_ns);
    free(fs);
}

static bool wanted(const char *n) {
    size_t l = strlen(n);
    if (n[0] == '.') return false;
    return (l > 5 && !strcmp(n + l - 5, ".yaml")) || (l > 4 && !strcmp(n + l - 4, ".yml")) ||
           (l > 5 && !strcmp(n + l - 5, ".json"));
}

static int cmp_path(const void *a, const void *b) { return strcmp(((const file *)a)->path, ((const file *)b)->path); }

static bool same_stat(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

int kube_filesource_poll(kube_filesource *fs, int *failing) {
    bool changed = !fs->published;
    for (size_t i = 0; i < fs->nfiles; i++) fs->files[i].seen = false;
    for (size_t d = 0; d < fs->ndirs; d++) {
        DIR *dir = opendir(fs->dirs[d]);
        if (!dir) {
            kube_logf(&fs->log, KUBE_LOG_ERROR, "%s: cannot read the folder: %s", fs->dirs[d], strerror(errno));
            continue;
        }
        struct dirent *de;
        while ((de = readdir(dir))) {
            if (!wanted(de->d_name)) continue;
            char *path = NULL;
            if (asprintf(&path, "%s/%s", fs->dirs[d], de->d_name) < 0) continue;
            struct stat st;
            if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) { free(path); continue; }
            file *f = NULL;
            for (size_t i = 0; i < fs->nfiles && !f; i++)
                if (!strcmp(fs->files[i].path, path)) f = &fs->files[i];
            if (!f) {
                file *v = xrealloc(fs->files, sizeof *v * (fs->nfiles + 1));
                fs->files = v;
                f = &v[fs->nfiles++];
                memset(f, 0, sizeof *f);
                f->path = path;
                path = NULL;
            }
            free(path);
            f->seen = true;
            if (f->st.st_ino && same_stat(&f->st, &st)) continue;
            f->st = st;
            size_t len = 0;
            char *text = kube_read_file(f->path, &len);
            json_object **objs = NULL;
            size_t n = 0;
            char err[512];
            if (!text) {
                kube_logf(&fs->log, KUBE_LOG_ERROR, "%s: cannot read: %s", f->path, strerror(errno));
                f->failing = true;
            } else if (kube_manifest_objects(f->path, text, len, &fs->prep, fs->default_ns, &fs->log, &objs, &n, err,
                                             sizeof err) != 0) {
                kube_logf(&fs->log, KUBE_LOG_ERROR, "%s (the last good content stays in service)", err);
                f->failing = true;
            } else {
                file_clear(f);
                f->objs = objs;
                f->nobjs = n;
                f->failing = false;
                changed = true;
            }
            free(text);
        }
        closedir(dir);
    }
    /* Files that disappeared take their objects with them. */
    size_t w = 0;
    for (size_t i = 0; i < fs->nfiles; i++) {
        if (fs->files[i].seen) { fs->files[w++] = fs->files[i]; continue; }
        file_clear(&fs->files[i]);
        free(fs->files[i].path);
        changed = true;
    }
    fs->nfiles = w;
    int nfail = 0;
    for (size_t i = 0; i < fs->nfiles; i++) nfail += fs->files[i].failing;
    if (failing) *failing = nfail;
    if (!changed) return 0;

    if (fs->nfiles) qsort(fs->files, fs->nfiles, sizeof *fs->files, cmp_path);
    size_t total = 0;
    for (size_t i = 0; i < fs->nfiles; i++) total += fs->files[i].nobjs;
    json_object **all = xmalloc(sizeof *all * (total ? total : 1));
    size_t k = 0;
    for (size_t i = 0; i < fs->nfiles; i++)
        for (size_t j = 0; j < fs->files[i].nobjs; j++) all[k++] = json_object_get(fs->files[i].objs[j]);
    kube_store_set_layer(fs->store, KUBE_LAYER_FILES, all, k);
    fs->published = true;
    return 1;
}
