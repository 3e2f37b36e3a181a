/* kube/source.c - snapshot-backed lookups for the engine; see source.h. */
#include "kube/source.h"

#include <string.h>

typedef struct any {
    bool found;
} any;

static void mark(void *arg, json_object *obj) {
    (void)obj;
    ((any *)arg)->found = true;
}

static mutate_lookup snap_get(void *ud, const char *kind, const char *ns, const char *name, json_object **out) {
    const kube_snapshot *snap = ud;
    const char *lookup_ns = strcmp(kind, "Namespace") == 0 ? NULL : ns;
    *out = kube_snapshot_get(snap, kind, lookup_ns, name);
    if (*out) return MUTATE_FOUND;
    if (!strcmp(kind, "Secret") || !strcmp(kind, "ConfigMap")) {
        any a = {false};
        kube_snapshot_each(snap, kind, ns, mark, &a);
        if (!a.found) return MUTATE_UNKNOWN;
    }
    return MUTATE_NOT_FOUND;
}

static mutate_lookup snap_each(void *ud, const char *kind, const char *ns, void (*fn)(void *arg, json_object *obj),
                               void *arg) {
    kube_snapshot_each(ud, kind, ns, fn, arg);
    return MUTATE_FOUND;
}

void kube_source_snapshot(mutate_source *src, const kube_snapshot *snap) {
    src->ud = (void *)snap;
    src->get = snap_get;
    src->each = snap_each;
}
