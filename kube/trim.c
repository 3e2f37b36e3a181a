/* kube/trim.c - per-object trimming and defaulting; see trim.h.
 *
 * Metadata is copied key by key rather than deleting what we do not want
 * from a copy: whatever the API server adds tomorrow (managedFields today)
 * stays out of memory, which is what keeps 10,000 namespaces small. */
#include "kube/trim.h"

#include "base/json.h"
#include "kube/store.h"

#include <stdbool.h>
#include <string.h>

static const char *const owner_kinds[] = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", NULL};

int kube_is_owner_kind(const char *k) {
    for (int i = 0; owner_kinds[i]; i++)
        if (!strcmp(k, owner_kinds[i])) return 1;
    return 0;
}

static void copy_key(json_object *from, json_object *to, const char *key) {
    json_object *v;
    if (json_object_object_get_ex(from, key, &v) && v) jset(to, key, jcopy(v));
}

/* The metadata we keep: enough to find objects and walk owners. */
static json_object *slim_meta(json_object *meta, const char *ns, bool with_annotations) {
    json_object *m = jnew_obj();
    copy_key(meta, m, "name");
    if (ns) jset(m, "namespace", jnew_str(ns));
    copy_key(meta, m, "uid");
    copy_key(meta, m, "labels");
    if (with_annotations) copy_key(meta, m, "annotations");
    copy_key(meta, m, "ownerReferences");
    return m;
}

static json_object *slim(json_object *o, const char *kind, json_object *meta, const char *ns) {
    json_object *s = jnew_obj();
    copy_key(o, s, "apiVersion");
    jset(s, "kind", jnew_str(kind));
    jset(s, "metadata", slim_meta(meta, ns, !strcmp(kind, "Namespace")));
    if (!strcmp(kind, "Secret") || !strcmp(kind, "ConfigMap")) {
        json_object *keys = jnew_arr();
        const char *fields[] = {"data", "binaryData", "stringData", NULL};
        for (int i = 0; fields[i]; i++) {
            json_object *d;
            if (!json_object_object_get_ex(o, fields[i], &d) || !json_object_is_type(d, json_type_object)) continue;
            json_object_object_foreach(d, k, v) {
                (void)v;
                jpush(keys, jnew_str(k));
            }
        }
        jset(s, "keys", keys);
    }
    return s;
}

json_object *kube_trim_object(json_object *doc, const kube_prepare *prep, const char *default_ns, const char *where,
                              const kube_logger *log) {
    if (!json_object_is_type(doc, json_type_object)) {
        kube_logf(log, KUBE_LOG_WARN, "%s: not an object; skipped", where);
        return NULL;
    }
    const char *kind = kube_obj_str(doc, "kind");
    json_object *meta = kube_obj_get(doc, "metadata");
    const char *oname = kube_obj_str(doc, "metadata.name");
    if (!kind || !oname || !*oname) {
        kube_logf(log, KUBE_LOG_WARN, "%s: object without kind or metadata.name; skipped", where);
        return NULL;
    }
    const char *ns = kube_obj_str(doc, "metadata.namespace");
    if (!ns || !*ns) ns = default_ns;
    json_object *keep = NULL;
    if (!strcmp(kind, "Namespace")) {
        keep = slim(doc, kind, meta, NULL);
    } else if (!strcmp(kind, "Secret") || !strcmp(kind, "ConfigMap") || kube_is_owner_kind(kind)) {
        keep = slim(doc, kind, meta, ns);
    } else if (!strcmp(kind, "Instrumentation") || !strcmp(kind, "OpenTelemetryCollector")) {
        keep = jcopy(doc);
        json_object *km = kube_obj_get(keep, "metadata");
        jset(km, "namespace", jnew_str(ns));
        char err[256];
        if (prep && prep->fn(prep->ud, kind, keep, err, sizeof err) != 0)
            kube_logf(log, KUBE_LOG_WARN, "%s: %s %s/%s: %s", where, kind, ns, oname, err);
    } else {
        kube_logf(log, KUBE_LOG_DEBUG, "%s: kind %s is not used; skipped", where, kind);
        return NULL;
    }
    return keep;
}
