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
 * A file that no longer parses is reported as FILE:LINE: reason and its last
 * good objects stay in service; the others' changes are published. */
#ifndef KUBE_FILESOURCE_H
#define KUBE_FILESOURCE_H

#include "kube/log.h"
#include "kube/store.h"
#include "kube/trim.h"

typedef struct kube_filesource kube_filesource;

/* default_ns: the namespace of namespaced objects that name none. */
kube_filesource *kube_filesource_new(kube_store *store, const kube_prepare *prep, const char *const *dirs, size_t ndirs,
                                     const char *default_ns, const kube_logger *log);
/* Returns 1 when a new snapshot was published, 0 when nothing changed; the
 * number of files currently failing is in *failing (may be NULL). */
int kube_filesource_poll(kube_filesource *fs, int *failing);
void kube_filesource_free(kube_filesource *fs);

/* Reads the objects of one manifest text (YAML or JSON), trimmed and
 * prepared as above, appending to *objs. Returns 0, or -1 with
 * "NAME:LINE: reason" in err (nothing appended). Also used by `inject`. */
int kube_manifest_objects(const char *name, const char *text, size_t len, const kube_prepare *prep,
                          const char *default_ns, const kube_logger *log, json_object ***objs, size_t *nobjs,
                          char *err, size_t errlen);
#endif
