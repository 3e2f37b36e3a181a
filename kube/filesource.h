/* kube/filesource.h - resources read from manifest folders (--resources DIR).
 *
 * Every *.yaml, *.yml and *.json file directly in each folder (symlinks
 * followed, dot-files and the kubelet's ..data entries skipped), multi-
 * document. Kept kinds: Namespace, Instrumentation, OpenTelemetryCollector,
 * ConfigMap and Secret (names and keys only: a Secret value is never kept),
 * and the owner kinds Deployment, ReplicaSet, StatefulSet, DaemonSet, Job,
 * CronJob (metadata only). kind: List is expanded. Other kinds are skipped
 * with a debug message.
 *
 * kube_filesource_poll() re-stats every file and re-reads the changed ones.
 * Only a successful read changes what is in service:
 *
 *   - a file that no longer parses, or is larger than
 *     KUBE_FILESOURCE_MAX_FILE_BYTES, is reported as FILE:LINE: reason or
 *     FILE: reason and its last good objects stay in service until its
 *     content changes again;
 *   - a file that cannot be read (stat, open, read: EMFILE, EACCES, EIO...)
 *     and a folder that cannot be listed (opendir, readdir: renamed away,
 *     EMFILE...) keep the last good objects of that file, or of every file
 *     of that folder, and are retried on every poll. Such read errors are
 *     logged once per distinct reason, and once more when they end.
 *
 * A file is gone, and its objects with it, only when its folder was listed
 * without it (or its name is a dangling symlink, as the kubelet leaves a
 * removed ConfigMap key for a moment, or a symlink loop: one warning
 * "PATH: symlink loop; skipped" until it resolves again). A folder named
 * twice is read once. Each poll costs a few syscalls per file and a hash
 * lookup (linear in the number of files). A folder that could not be read on
 * the first poll, before anything was published, makes that poll fail. */
#ifndef KUBE_FILESOURCE_H
#define KUBE_FILESOURCE_H

#include "kube/log.h"
#include <stdbool.h>
#include "kube/store.h"
#include "kube/trim.h"

/* The largest resource file read: 1 MiB, the most a ConfigMap or Secret
 * (how resource files reach a pod) can hold. Parsed, a file costs up to
 * about 100 times its size for a moment (a file of one-line documents), so
 * the cap also keeps one file's read well inside a 256Mi container. */
#define KUBE_FILESOURCE_MAX_FILE_BYTES ((size_t)1 << 20)

/* A folder of more files than this is listed again (every file stat'ed)
 * when the folder's own stat changes, on kube_filesource_recheck, and
 * otherwise every (its files / this) seconds: at most this many stats a
 * second on average (10,000 files: every 5 s, under 1% of a core). */
#define KUBE_FILESOURCE_PACE_STATS 2000

typedef struct kube_filesource kube_filesource;

/* What the last poll found. */
typedef struct kube_filesource_status {
    int failing_files;       /* files not in service as they are now (unreadable, too large, not parsing) */
    int failing_dirs;        /* folders that could not be listed */
    int new_failures;        /* failures the last poll reported (a new failure, or a new reason) */
    double unreadable_since; /* CLOCK_MONOTONIC seconds from which every poll met a read error (a folder
                                or file that could not be read); 0 when the last poll read everything */
} kube_filesource_status;

/* default_ns: the namespace of namespaced objects that name none. */
kube_filesource *kube_filesource_new(kube_store *store, const kube_prepare *prep, const char *const *dirs, size_t ndirs,
                                     const char *default_ns, const kube_logger *log);
/* Returns 1 when a new snapshot was published, 0 when nothing changed, -1
 * when a folder could not be read and nothing was ever published (a
 * start-up error; the reason is logged), -2 when the cancel callback
 * stopped it (nothing changed, nothing published). *failing (may be NULL) is the
 * number of files and folders currently failing. Callers serialise polls
 * with every other writer of the store (they free store objects). */
int kube_filesource_poll(kube_filesource *fs, int *failing);
void kube_filesource_get_status(const kube_filesource *fs, kube_filesource_status *st);
/* The next poll lists every folder whatever its size (SIGHUP). */
void kube_filesource_recheck(kube_filesource *fs);
/* cancel(arg) is asked every few hundred entries of a poll (from the
 * polling thread); true stops the poll at once (a shutdown must not wait
 * for a listing of 100,000 files). */
void kube_filesource_set_cancel(kube_filesource *fs, bool (*cancel)(void *), void *arg);
void kube_filesource_free(kube_filesource *fs);

/* Reads the objects of one manifest text (YAML or JSON), trimmed and
 * prepared as above, appending to *objs. Returns 0, or -1 with
 * "NAME:LINE: reason" in err (nothing appended). Also used by `inject`. */
int kube_manifest_objects(const char *name, const char *text, size_t len, const kube_prepare *prep,
                          const char *default_ns, const kube_logger *log, json_object ***objs, size_t *nobjs,
                          char *err, size_t errlen);
#endif
