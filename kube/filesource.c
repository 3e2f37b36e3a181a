/* kube/filesource.c - manifest folders as a store layer; see filesource.h.
 *
 * Change detection is a stat() of every file per poll (device, inode, size,
 * mtime): a ConfigMap mounted by the kubelet changes by an atomic rename of
 * its ..data symlink, which shows up as a new inode through the symlink.
 * Polling costs a few syscalls per file and needs no inotify re-arming.
 * Files are found by a hash of (folder, name), so a poll is linear in the
 * number of files. A folder of more than KUBE_FILESOURCE_PACE_STATS files
 * is listed at once when its own stat changes (a file added, removed or
 * renamed) and otherwise once every nfiles / KUBE_FILESOURCE_PACE_STATS
 * seconds: a file of it rewritten in place is seen that late.
 * What each object becomes in the store (trimming, defaults) is
 * kube/trim.c's, shared with the live cluster source.
 *
 * Failures are of two sorts. A file's content that is refused (does not
 * parse, too large) is remembered with the stat it was read at, so it is
 * not read again until it changes. A read error (the folder or file could
 * not be read at all) says nothing about the content: it keeps what was in
 * service and is retried on every poll, because the causes we know are
 * passing ones (EMFILE while connections peak, a folder swapped by a sync
 * tool). Taking "could not list the folder" for "the folder is empty" once
 * dropped every Instrumentation of a running webhook.
 *
 * What a replaced or refused file cost is given back: parsed documents are
 * freed as they are trimmed, retired snapshots are reclaimed on every poll
 * (a reader may pin one past the update), and the allocator is asked to return the
 * freed heap (base_release_end) after a poll that freed content; otherwise one
 * large file read once stays in the process's RSS for good. */
#include "kube/filesource.h"

#include "base/alloc.h"
#include "kube/file.h"
#include "kube/trim.h"
#include "kube/yaml.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

typedef struct file {
    char *path;
    size_t dir;         /* index into fs->dirs */
    size_t name_off;    /* path + name_off: the name within the folder */
    uint64_t hash;      /* of (dir, name): the index's key */
    struct stat st;     /* at the last read of the content (in service or refused); zero: read it */
    json_object **objs; /* last good objects */
    size_t nobjs;
    char *err;          /* the failure reported; NULL while the content is in service */
    bool read_error;    /* err is a read error: retried on every poll */
    bool looped;        /* the name is a symlink loop: skipped, said once */
    bool seen;
} file;

typedef struct folder {
    char *path;
    char *err;        /* the read error reported; NULL while it can be listed */
    struct stat st;   /* the folder itself at its last complete listing; zero: none */
    size_t nfiles;    /* the files that listing found */
    double next_full; /* CLOCK_MONOTONIC: a large folder's next listing */
} folder;

struct kube_filesource {
    kube_store *store;
    kube_prepare prep; /* by value: the caller's may be a temporary */
    folder *dirs;
    size_t ndirs;
    char *default_ns;
    kube_logger log;
    file *files;
    size_t nfiles, files_cap;
    /* (dir, name) -> index into files + 1, open addressing, 0 = empty;
     * rebuilt when files is compacted or sorted. A listing's lookups are
     * then linear in the folder's size: the linear search it replaced made
     * a poll of 10,000 files cost 50 million compares (a third of a core,
     * once a second) and the first read of 100,000 files 208 s. */
    size_t *index;
    size_t index_cap; /* a power of two, at least twice nfiles */
    bool (*cancel)(void *);
    void *cancel_arg;
    bool recheck; /* the next poll lists every folder, however large */
    bool published;
    kube_filesource_status status;
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
    /* Each document goes as soon as it is trimmed: the parsed and the
     * trimmed form of a large file are not held in full at once. */
    for (size_t i = 0; i < ndocs; i++) {
        if (docs[i].obj) take(docs[i].obj, name, docs[i].line, prep, default_ns, log, objs, nobjs);
        json_object_put(docs[i].obj);
        docs[i].obj = NULL;
    }
    kube_yaml_docs_free(docs, ndocs);
    return 0;
}

kube_filesource *kube_filesource_new(kube_store *store, const kube_prepare *prep, const char *const *dirs, size_t ndirs,
                                     const char *default_ns, const kube_logger *log) {
    kube_filesource *fs = xcalloc(1, sizeof *fs);
    fs->store = store;
    if (prep) fs->prep = *prep;
    fs->dirs = xcalloc(ndirs ? ndirs : 1, sizeof *fs->dirs);
    /* A folder named twice (or with a trailing slash once) is read once:
     * read twice, each of its objects would be in the store two times. */
    for (size_t i = 0; i < ndirs; i++) {
        size_t l = strlen(dirs[i]);
        while (l > 1 && dirs[i][l - 1] == '/') l--;
        bool dup = false;
        for (size_t j = 0; j < fs->ndirs && !dup; j++) dup = strlen(fs->dirs[j].path) == l && !memcmp(fs->dirs[j].path, dirs[i], l);
        if (!dup) fs->dirs[fs->ndirs++].path = xstrndup(dirs[i], l);
    }
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

static void file_free(file *f) {
    file_clear(f);
    free(f->path);
    free(f->err);
}

void kube_filesource_free(kube_filesource *fs) {
    if (!fs) return;
    for (size_t i = 0; i < fs->nfiles; i++) file_free(&fs->files[i]);
    free(fs->files);
    free(fs->index);
    for (size_t i = 0; i < fs->ndirs; i++) {
        free(fs->dirs[i].path);
        free(fs->dirs[i].err);
    }
    free(fs->dirs);
    free(fs->default_ns);
    free(fs);
}

void kube_filesource_get_status(const kube_filesource *fs, kube_filesource_status *st) { *st = fs->status; }

void kube_filesource_recheck(kube_filesource *fs) { fs->recheck = true; }

void kube_filesource_set_cancel(kube_filesource *fs, bool (*cancel)(void *), void *arg) {
    fs->cancel = cancel;
    fs->cancel_arg = arg;
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

static double now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What one poll is finding out. */
typedef struct pass {
    bool changed;    /* the published set differs: publish */
    bool released;   /* content was freed or refused after a read: give memory back */
    bool read_error; /* a folder or file could not be read */
    bool cancelled;  /* the cancel callback said stop */
} pass;

/* A read error of a folder: every file of it stays as it is; reported
 * when the reason is new. */
static void folder_failed(kube_filesource *fs, size_t d, const char *what, int e, pass *p) {
    folder *dir = &fs->dirs[d];
    char *msg = xasprintf("%s: %s: %s", dir->path, what, strerror(e));
    p->read_error = true;
    for (size_t i = 0; i < fs->nfiles; i++)
        if (fs->files[i].dir == d) fs->files[i].seen = true;
    if (dir->err && !strcmp(dir->err, msg)) {
        free(msg);
        return;
    }
    /* Before the first publication there is no last good content to keep. */
    kube_logf(&fs->log, KUBE_LOG_ERROR, "%s%s", msg,
              fs->published ? " (the last good content of its files stays in service)" : "");
    fs->status.new_failures++;
    free(dir->err);
    dir->err = msg;
}

static void folder_ok(kube_filesource *fs, size_t d) {
    folder *dir = &fs->dirs[d];
    if (!dir->err) return;
    kube_logf(&fs->log, KUBE_LOG_INFO, "%s: the folder can be read again", dir->path);
    free(dir->err);
    dir->err = NULL;
}

/* A read error of a file: its last good content stays, and it is read
 * again on the next poll whatever its stat says. */
static void file_read_failed(kube_filesource *fs, file *f, const char *what, int e, pass *p) {
    char *msg = xasprintf("%s: %s: %s", f->path, what, strerror(e));
    p->read_error = true;
    if (f->err && f->read_error && !strcmp(f->err, msg)) {
        free(msg);
        return;
    }
    kube_logf(&fs->log, KUBE_LOG_ERROR, "%s (the last good content stays in service)", msg);
    fs->status.new_failures++;
    free(f->err);
    f->err = msg;
    f->read_error = true;
}

/* Refused content (err is "FILE[:LINE]: reason"): not read again until
 * it changes, so reported each time a new content is refused. */
static void file_refused(kube_filesource *fs, file *f, const struct stat *st, const char *err, pass *p) {
    kube_logf(&fs->log, KUBE_LOG_ERROR, "%s (the last good content stays in service)", err);
    fs->status.new_failures++;
    free(f->err);
    f->err = xstrdup(err);
    f->read_error = false;
    f->st = *st;
    p->released = true;
}

static uint64_t name_hash(size_t d, const char *name) {
    uint64_t h = 1469598103934665603ull ^ d; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 1099511628211ull;
    return h;
}

static void index_put(kube_filesource *fs, size_t i) {
    size_t m = fs->index_cap - 1, k = fs->files[i].hash & m;
    while (fs->index[k]) k = (k + 1) & m;
    fs->index[k] = i + 1;
}

static void index_rebuild(kube_filesource *fs) {
    size_t cap = 64;
    while (cap < 2 * fs->nfiles + 2) cap *= 2;
    if (cap != fs->index_cap) {
        free(fs->index);
        fs->index = xmalloc(sizeof *fs->index * cap);
        fs->index_cap = cap;
    }
    memset(fs->index, 0, sizeof *fs->index * cap);
    for (size_t i = 0; i < fs->nfiles; i++) index_put(fs, i);
}

static file *file_find(kube_filesource *fs, size_t d, const char *name, uint64_t h) {
    if (!fs->index_cap) return NULL;
    size_t m = fs->index_cap - 1;
    for (size_t k = h & m; fs->index[k]; k = (k + 1) & m) {
        file *f = &fs->files[fs->index[k] - 1];
        if (f->hash == h && f->dir == d && !strcmp(f->path + f->name_off, name)) return f;
    }
    return NULL;
}

/* The record of NAME in folder d, created when it has none. */
static file *file_for(kube_filesource *fs, size_t d, const char *name) {
    uint64_t h = name_hash(d, name);
    file *f = file_find(fs, d, name, h);
    if (f) return f;
    if (fs->nfiles == fs->files_cap) { /* doubling: ASan's realloc copies every time */
        fs->files_cap = fs->files_cap ? 2 * fs->files_cap : 64;
        fs->files = xrealloc(fs->files, sizeof *fs->files * fs->files_cap);
    }
    f = &fs->files[fs->nfiles++];
    memset(f, 0, sizeof *f);
    f->path = xasprintf("%s/%s", fs->dirs[d].path, name);
    f->name_off = strlen(fs->dirs[d].path) + 1;
    f->dir = d;
    f->hash = h;
    if (2 * fs->nfiles + 2 > fs->index_cap) index_rebuild(fs);
    else index_put(fs, fs->nfiles - 1);
    return f;
}

/* Reads f if it changed, or if its last read failed. */
static void file_read(kube_filesource *fs, file *f, const struct stat *st, pass *p) {
    if (!f->read_error && f->st.st_ino && same_stat(&f->st, st)) return;
    char err[512];
    if ((size_t)st->st_size > KUBE_FILESOURCE_MAX_FILE_BYTES) {
        snprintf(err, sizeof err, "%s: %lld bytes, larger than the %zu bytes a resource file may have", f->path,
                 (long long)st->st_size, KUBE_FILESOURCE_MAX_FILE_BYTES);
        file_refused(fs, f, st, err, p);
        return;
    }
    size_t len = 0;
    char *text = kube_read_regular_file(f->path, KUBE_FILESOURCE_MAX_FILE_BYTES, &len);
    if (!text && errno == EFBIG) { /* grew since the stat */
        snprintf(err, sizeof err, "%s: larger than the %zu bytes a resource file may have", f->path,
                 KUBE_FILESOURCE_MAX_FILE_BYTES);
        file_refused(fs, f, st, err, p);
        return;
    }
    if (!text) {
        file_read_failed(fs, f, "cannot read", errno, p);
        return;
    }
    json_object **objs = NULL;
    size_t n = 0;
    int rc = kube_manifest_objects(f->path, text, len, &fs->prep, fs->default_ns, &fs->log, &objs, &n, err, sizeof err);
    free(text);
    if (rc != 0) {
        file_refused(fs, f, st, err, p);
        return;
    }
    if (f->err) kube_logf(&fs->log, KUBE_LOG_INFO, "%s: recovered, its current content is in service", f->path);
    free(f->err);
    f->err = NULL;
    f->read_error = false;
    p->released |= f->nobjs > 0;
    file_clear(f);
    f->objs = objs;
    f->nobjs = n;
    f->st = *st;
    p->changed = true;
}

/* One directory entry. A name that resolves to nothing while the entry
 * itself is there (a dangling symlink) has no content to keep; any other
 * failure to stat it is a read error. */
static void entry(kube_filesource *fs, size_t d, int dfd, const char *name, pass *p) {
    struct stat st, lst;
    if (fstatat(dfd, name, &st, 0) != 0) {
        int e = errno;
        if (e == ENOENT && fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode)) {
            kube_logf(&fs->log, KUBE_LOG_DEBUG, "%s/%s: dangling symlink; skipped", fs->dirs[d].path, name);
            return;
        }
        file *f = file_for(fs, d, name);
        f->seen = true;
        if (e == ELOOP) {
            /* No content, like a dangling symlink, but it stays so until
             * someone fixes it: said once, as a warning, not retried as a
             * read error (which would make the replica not ready). */
            if (!f->looped) kube_logf(&fs->log, KUBE_LOG_WARN, "%s: symlink loop; skipped", f->path);
            f->looped = true;
            p->changed |= f->nobjs > 0;
            p->released |= f->nobjs > 0;
            file_clear(f);
            free(f->err);
            f->err = NULL;
            f->read_error = false;
            memset(&f->st, 0, sizeof f->st);
            return;
        }
        file_read_failed(fs, f, "cannot read", e, p);
        return;
    }
    if (!S_ISREG(st.st_mode)) return;
    file *f = file_for(fs, d, name);
    f->seen = true;
    f->looped = false;
    file_read(fs, f, &st, p);
}

/* Asked every this many entries whether the poll should stop. */
#define CANCEL_EVERY 256

static void folder_read(kube_filesource *fs, size_t d, pass *p) {
    folder *fd = &fs->dirs[d];
    struct stat dst;
    bool dst_ok = stat(fd->path, &dst) == 0;
    double now = now_mono();
    /* A large folder whose own stat is unchanged (nothing added, removed
     * or renamed in it, the kubelet's ..data swap included) is listed
     * again only when its turn comes: at most KUBE_FILESOURCE_PACE_STATS
     * files stat'ed a second on average, so that 10,000 files cost under
     * 1% of a core and not 2.5%. */
    if (!fs->recheck && !fd->err && dst_ok && fd->st.st_ino && same_stat(&fd->st, &dst) &&
        fd->nfiles > KUBE_FILESOURCE_PACE_STATS && now < fd->next_full) {
        /* Its unreadable files are retried at its next listing; until then
         * they still count as read errors (readiness, the metrics). */
        for (size_t i = 0; i < fs->nfiles; i++)
            if (fs->files[i].dir == d) {
                fs->files[i].seen = true;
                p->read_error |= fs->files[i].read_error;
            }
        return;
    }
    DIR *dir = opendir(fd->path);
    if (!dir) {
        folder_failed(fs, d, "cannot read the folder", errno, p);
        return;
    }
    int dfd = dirfd(dir);
    for (unsigned n = 0;; n++) {
        if (n % CANCEL_EVERY == CANCEL_EVERY - 1 && fs->cancel && fs->cancel(fs->cancel_arg)) {
            p->cancelled = true;
            closedir(dir);
            return;
        }
        errno = 0;
        struct dirent *de = readdir(dir);
        if (!de) break;
        if (wanted(de->d_name)) entry(fs, d, dfd, de->d_name, p);
    }
    int e = errno;
    closedir(dir);
    /* Recovered once listed to the end: a readdir error that persists
     * must not alternate with "readable again" on every poll. */
    if (e) {
        folder_failed(fs, d, "cannot list the folder", e, p);
        memset(&fd->st, 0, sizeof fd->st);
        return;
    }
    folder_ok(fs, d);
    size_t n = 0;
    for (size_t i = 0; i < fs->nfiles; i++) n += fs->files[i].dir == d && fs->files[i].seen;
    fd->nfiles = n;
    if (dst_ok) fd->st = dst;
    else memset(&fd->st, 0, sizeof fd->st);
    /* From the listing's end: a slow listing (valgrind, a loaded node)
     * must not make every poll a full one. */
    fd->next_full = now_mono() + (double)n / KUBE_FILESOURCE_PACE_STATS;
}

int kube_filesource_poll(kube_filesource *fs, int *failing) {
    pass p = {.changed = !fs->published};
    base_release_begin();
    fs->status.new_failures = 0;
    for (size_t i = 0; i < fs->nfiles; i++) fs->files[i].seen = false;
    for (size_t d = 0; d < fs->ndirs && !p.cancelled; d++) folder_read(fs, d, &p);
    if (!p.cancelled) fs->recheck = false;
    if (p.cancelled) {
        /* Half a listing says nothing about the files not reached: all
         * stay as they are, and nothing is published. */
        base_release_end(p.released);
        return -2;
    }
    /* Files whose folder was listed without them take their objects along. */
    size_t w = 0;
    for (size_t i = 0; i < fs->nfiles; i++) {
        if (fs->files[i].seen) {
            fs->files[w++] = fs->files[i];
            continue;
        }
        p.released |= fs->files[i].nobjs > 0;
        p.changed = true;
        file_free(&fs->files[i]);
    }
    if (w != fs->nfiles) {
        fs->nfiles = w;
        index_rebuild(fs);
    }
    kube_filesource_status *s = &fs->status;
    s->failing_files = s->failing_dirs = 0;
    for (size_t i = 0; i < fs->nfiles; i++) s->failing_files += fs->files[i].err != NULL;
    for (size_t d = 0; d < fs->ndirs; d++) s->failing_dirs += fs->dirs[d].err != NULL;
    if (!p.read_error) s->unreadable_since = 0;
    else if (s->unreadable_since == 0) s->unreadable_since = now_mono();
    if (failing) *failing = s->failing_files + s->failing_dirs;

    int rc = 0;
    if (!fs->published && s->failing_dirs) {
        rc = -1; /* never published: there is no last good content to keep */
    } else if (p.changed) {
        if (fs->nfiles) {
            qsort(fs->files, fs->nfiles, sizeof *fs->files, cmp_path);
            index_rebuild(fs);
        }
        size_t total = 0;
        for (size_t i = 0; i < fs->nfiles; i++) total += fs->files[i].nobjs;
        json_object **all = xmalloc(sizeof *all * (total ? total : 1));
        size_t k = 0;
        for (size_t i = 0; i < fs->nfiles; i++)
            for (size_t j = 0; j < fs->files[i].nobjs; j++) all[k++] = json_object_get(fs->files[i].objs[j]);
        kube_store_set_layer(fs->store, KUBE_LAYER_FILES, all, k);
        fs->published = true;
        rc = 1;
    }
    /* The freed heap goes back to the system; the allocator keeps it otherwise. */
    base_release_end(kube_store_reclaim(fs->store) > 0 || p.released);
    return rc;
}
