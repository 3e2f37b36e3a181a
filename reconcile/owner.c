/* reconcile/owner.c - one question of a pass (pass.h): is this object ours?
 *
 * `otel-reconcile run` holds cluster-wide rights to write and delete
 * workloads and RBAC, and the names it writes are derived from a name
 * anyone who may create a collector chooses. So an object of the right name
 * proves nothing: before an object is applied over, pruned or swept it must
 * carry our mark, otherwise it is someone else's and is left alone (the
 * caller reports the name collision).
 *
 *   namespaced objects: a controller ownerReference whose uid is the uid
 *     of the collector or TargetAllocator being reconciled (what we write,
 *     and what the garbage collector follows); the kind and name in it are
 *     not trusted, the uid is unique;
 *   cluster-scoped objects (ClusterRole, ClusterRoleBinding: no owner
 *     reference can point into a namespace): our managed-by label, the
 *     otel-reconcile/collector annotation naming the collector and the
 *     otel-reconcile/collector-uid annotation carrying its uid. A collector
 *     created again under the same name has a new uid, so it never inherits
 *     the old one's objects; those are swept as a gone collector's.
 *
 * What the upstream operator created (no uid annotation) is not adopted:
 * docs/reconcile.md says how to hand such an object over (kubectl annotate). */
#include "reconcile/pass.h"

#include "base/json.h"

#include <stdio.h>
#include <string.h>

#define MANAGED_BY "app.kubernetes.io/managed-by"
#define MANAGED_BY_US "opentelemetry-operator"

/* The controller ownerReference of meta, or NULL. */
static json_object *controller_ref(json_object *meta) {
    json_object *refs = jarr(meta, "ownerReferences");
    for (size_t i = 0; i < jlen(refs); i++) {
        json_object *ref = json_object_array_get_idx(refs, i);
        if (jbool(ref, "controller")) return ref;
    }
    return NULL;
}

bool reconcile_owner_is_ours(const reconcile_kind *k, json_object *obj, const char *ns, const char *name,
                             const char *uid, char *why, size_t whylen) {
    json_object *m = jmap(obj, "metadata");
    if (k->namespaced) {
        json_object *ref = controller_ref(m);
        const char *ruid = jstr(ref, "uid");
        if (ref && ruid && uid && strcmp(ruid, uid) == 0) return true;
        if (!ref) {
            snprintf(why, whylen, "it has no controller ownerReference");
        } else {
            const char *rk = jstr(ref, "kind"), *rn = jstr(ref, "name");
            snprintf(why, whylen, "its controller is %s %s (uid %s), not this one (uid %s)", rk ? rk : "?",
                     rn ? rn : "?", ruid ? ruid : "none", uid ? uid : "none");
        }
        return false;
    }
    json_object *labels = jmap(m, "labels"), *ann = jmap(m, "annotations");
    const char *by = jstr(labels, MANAGED_BY), *cr = jstr(ann, RECONCILE_OWNER_ANNOTATION),
               *cuid = jstr(ann, RECONCILE_OWNER_UID_ANNOTATION);
    char want[600];
    snprintf(want, sizeof want, "%s/%s", ns ? ns : "", name ? name : "");
    if (!by || strcmp(by, MANAGED_BY_US) != 0)
        snprintf(why, whylen, "it lacks the label " MANAGED_BY "=" MANAGED_BY_US);
    else if (!cr)
        snprintf(why, whylen, "it has no " RECONCILE_OWNER_ANNOTATION " annotation");
    else if (strcmp(cr, want) != 0)
        snprintf(why, whylen, "its " RECONCILE_OWNER_ANNOTATION " annotation names %s", cr);
    else if (!cuid)
        snprintf(why, whylen, "it has no " RECONCILE_OWNER_UID_ANNOTATION " annotation");
    else if (!uid || strcmp(cuid, uid) != 0)
        snprintf(why, whylen, "its " RECONCILE_OWNER_UID_ANNOTATION " annotation is %s, not this collector's %s", cuid,
                 uid ? uid : "none");
    else
        return true;
    return false;
}

const char *reconcile_owner_uid(const reconcile_kind *k, json_object *obj, bool *allocator) {
    json_object *m = jmap(obj, "metadata");
    *allocator = false;
    if (!k->namespaced) {
        json_object *ann = jmap(m, "annotations");
        const char *by = jstr(jmap(m, "labels"), MANAGED_BY);
        if (!by || strcmp(by, MANAGED_BY_US) != 0 || !jstr(ann, RECONCILE_OWNER_ANNOTATION)) return NULL;
        return jstr(ann, RECONCILE_OWNER_UID_ANNOTATION);
    }
    json_object *ref = controller_ref(m);
    const char *kind = jstr(ref, "kind");
    if (!kind) return NULL;
    *allocator = strcmp(kind, "TargetAllocator") == 0;
    if (!*allocator && strcmp(kind, "OpenTelemetryCollector") != 0) return NULL;
    return jstr(ref, "uid");
}
