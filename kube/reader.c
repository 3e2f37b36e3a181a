/* kube/reader.c - the snapshot reader; see reader.h. */
#include "kube/reader.h"

#include <stdbool.h>
#include <string.h>

typedef struct any {
    bool found;
} any;

static void mark(void *arg, json_object *obj) {
    (void)obj;
    ((any *)arg)->found = true;
}

static kube_found snap_get(void *ud, const char *kind, const char *ns, const char *name, json_object **out) {
    const kube_snapshot *snap = ud;
    const char *lookup_ns = strcmp(kind, "Namespace") == 0 ? NULL : ns;
    *out = kube_snapshot_get(snap, kind, lookup_ns, name);
    if (*out) return KUBE_FOUND;
    if (!strcmp(kind, "Secret") || !strcmp(kind, "ConfigMap")) {
        any a = {false};
        kube_snapshot_each(snap, kind, ns, mark, &a);
        if (!a.found) return KUBE_UNKNOWN;
    }
    return KUBE_NOT_FOUND;
}

static kube_found snap_each(void *ud, const char *kind, const char *ns, void (*fn)(void *arg, json_object *obj),
                               void *arg) {
    kube_snapshot_each(ud, kind, ns, fn, arg);
    return KUBE_FOUND;
}

void kube_reader_snapshot(kube_reader *src, const kube_snapshot *snap) {
    src->ud = (void *)snap;
    src->get = snap_get;
    src->each = snap_each;
}
