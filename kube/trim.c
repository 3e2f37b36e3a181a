/* kube/trim.c - per-object trimming and defaulting; see trim.h.
 *
 * Metadata is copied key by key rather than deleting what we do not want
 * from a copy: whatever the API server adds tomorrow (managedFields today)
 * stays out of memory, which is what keeps 10,000 namespaces small. */
#include "kube/trim.h"

#include "kube/defaults.h"
#include "kube/store.h"

#include <string.h>

static const char *const owner_kinds[] = {"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", NULL};

int kube_is_owner_kind(const char *k) {
    for (int i = 0; owner_kinds[i]; i++)
        if (!strcmp(k, owner_kinds[i])) return 1;
    return 0;
}

static void copy_key(json_object *from, json_object *to, const char *key) {
    json_object *v;
    if (json_object_object_get_ex(from, key, &v) && v) {
        json_object *c = NULL;
        json_object_deep_copy(v, &c, NULL);
        json_object_object_add(to, key, c);
    }
}

/* The metadata we keep: enough to find objects and walk owners. */
static json_object *slim_meta(json_object *meta, const char *ns, bool with_annotations) {
    json_object *m = json_object_new_object();
    copy_key(meta, m, "name");
    if (ns) json_object_object_add(m, "namespace", json_object_new_string(ns));
    copy_key(meta, m, "uid");
    copy_key(meta, m, "labels");
    if (with_annotations) copy_key(meta, m, "annotations");
    copy_key(meta, m, "ownerReferences");
    return m;
}

static json_object *slim(json_object *o, const char *kind, json_object *meta, const char *ns) {
    json_object *s = json_object_new_object();
    copy_key(o, s, "apiVersion");
    json_object_object_add(s, "kind", json_object_new_string(kind));
    json_object_object_add(s, "metadata", slim_meta(meta, ns, !strcmp(kind, "Namespace")));
    if (!strcmp(kind, "Secret") || !strcmp(kind, "ConfigMap")) {
        json_object *keys = json_object_new_array();
        const char *fields[] = {"data", "binaryData", "stringData", NULL};
        for (int i = 0; fields[i]; i++) {
            json_object *d;
            if (!json_object_object_get_ex(o, fields[i], &d) || !json_object_is_type(d, json_type_object)) continue;
            json_object_object_foreach(d, k, v) {
                (void)v;
                json_object_array_add(keys, json_object_new_string(k));
            }
        }
        json_object_object_add(s, "keys", keys);
    }
    return s;
}

json_object *kube_trim_object(json_object *doc, const kube_config *cfg, const char *default_ns, const char *where,
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
        if (json_object_deep_copy(doc, &keep, NULL) != 0) return NULL;
        json_object *km = kube_obj_get(keep, "metadata");
        json_object_object_add(km, "namespace", json_object_new_string(ns));
        if (!strcmp(kind, "Instrumentation")) {
            kube_default_instrumentation(keep, cfg);
        } else {
            char err[256];
            if (kube_default_collector(keep, err, sizeof err) != 0)
                kube_logf(log, KUBE_LOG_WARN, "%s: OpenTelemetryCollector %s/%s: %s", where, ns, oname, err);
        }
    } else {
        kube_logf(log, KUBE_LOG_DEBUG, "%s: kind %s is not used; skipped", where, kind);
        return NULL;
    }
    return keep;
}
