/* reconcile/rbac.c - the ClusterRole and ClusterRoleBinding a collector's
 * components need (reconcile.md 4): the rules are collector/rbac.c's, the
 * same the admission webhook holds a user to (cr-admission.md 3.7). */
#include "reconcile/context.h"

#include "base/json.h"
#include "collector/naming.h"
#include "collector/rbac.h"

#include <stdlib.h>

int reconcile_build_rbac(reconcile_ctx *c) {
    json_object *rules = NULL, *o, *subj, *ref;
    char *role = NULL, *binding = NULL;
    int rc = 0;
    if (!c->opt->rbac) goto out;
    rules = collector_rbac_rules(c->config);
    if (json_object_array_length(rules) == 0) goto out;
    role = collector_name("%s-%s-cluster-role", c->name, c->ns);
    binding = collector_name("%s-%s-collector", c->name, c->ns);
    o = reconcile_object(c, "rbac.authorization.k8s.io/v1", "ClusterRole", role, 0, reconcile_common_labels(c, role),
                         reconcile_object_annotations(c));
    jset(o, "rules", rules);
    rules = NULL;
    if ((rc = reconcile_emit(c, o))) goto out;
    o = reconcile_object(c, "rbac.authorization.k8s.io/v1", "ClusterRoleBinding", binding, 0,
                         reconcile_common_labels(c, binding), reconcile_object_annotations(c));
    subj = jpush(jset_arr(o, "subjects"), jnew_obj());
    jset_str(subj, "kind", "ServiceAccount");
    jset_str(subj, "name", c->sa_name);
    jset_str(subj, "namespace", c->ns);
    ref = jset_obj(o, "roleRef");
    jset_str(ref, "apiGroup", "rbac.authorization.k8s.io");
    jset_str(ref, "kind", "ClusterRole");
    jset_str(ref, "name", role);
    rc = reconcile_emit(c, o);
out:
    json_object_put(rules);
    free(role);
    free(binding);
    return rc ? -1 : 0;
}
