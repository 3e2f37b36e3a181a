/* kube/store.h - Kubernetes objects by kind/namespace/name, published as
 * immutable snapshots.
 *
 * Sources (files, the API server) each own a layer and replace it whole with
 * kube_store_set_layer(); the store merges the layers (a higher layer wins
 * for the same kind/namespace/name) into a new sorted snapshot and swaps it
 * in with one atomic store. Readers take no lock: kube_store_acquire() pins
 * the current snapshot through a hazard slot, and the writer frees a retired
 * snapshot only once no slot pins it. A reader therefore sees one complete
 * set from start to finish, however many updates happen meanwhile.
 *
 * Objects in a snapshot are shared by every thread. json-c reference counts
 * are not atomic, so readers must only read them (no json_object_get/put, no
 * json_object_to_json_string, which caches into the object); all reference
 * counting happens on the writer side, under the writer lock. */
#ifndef KUBE_STORE_H
#define KUBE_STORE_H

#include <stddef.h>
#include <stdint.h>
#include <json-c/json.h>

typedef struct kube_store kube_store;
typedef struct kube_snapshot kube_snapshot;

/* Later layers win: files < live API objects < objects given on a command line. */
enum { KUBE_LAYER_FILES = 0, KUBE_LAYER_LIVE = 1, KUBE_LAYER_INPUT = 2, KUBE_NLAYERS = 3 };

typedef struct kube_view {
    const kube_snapshot *snap;
    int slot;
} kube_view;

kube_store *kube_store_new(void);
void kube_store_free(kube_store *s);

/* Replaces a layer with objs[0..n) (each must carry kind, metadata.name and,
 * for namespaced kinds, metadata.namespace). Takes ownership of the objects
 * and of the array. Publishes a new snapshot. */
void kube_store_set_layer(kube_store *s, int layer, json_object **objs, size_t n);
/* Frees the retired snapshots no reader pins any more, and returns how
 * many it freed. set_layer does this too, but a snapshot a reader still
 * held then would otherwise wait for the next update, which for files may
 * never come, with every object it references (a replaced file's). */
size_t kube_store_reclaim(kube_store *s);
/* Marks a layer as loaded at least once (readiness), even when empty. */
int kube_store_layer_loaded(kube_store *s, int layer);

kube_view kube_store_acquire(kube_store *s);
void kube_store_release(kube_store *s, kube_view *v);

/* Borrowed; NULL when absent. ns is ignored (pass NULL) for cluster-scoped kinds. */
json_object *kube_snapshot_get(const kube_snapshot *snap, const char *kind, const char *ns, const char *name);
/* Calls fn for each object of kind in ns (every namespace when ns is NULL),
 * sorted by namespace then name. */
void kube_snapshot_each(const kube_snapshot *snap, const char *kind, const char *ns,
                        void (*fn)(void *arg, json_object *obj), void *arg);
size_t kube_snapshot_count(const kube_snapshot *snap, const char *kind);
size_t kube_snapshot_size(const kube_snapshot *snap);
uint64_t kube_snapshot_generation(const kube_snapshot *snap);

/* Helpers over object metadata, shared by every module that reads objects. */
const char *kube_obj_str(json_object *obj, const char *path); /* "metadata.name" style; NULL if absent/not string */
json_object *kube_obj_get(json_object *obj, const char *path);
#endif
