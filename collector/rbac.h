/* collector/rbac.h - the RBAC rules a collector's components need
 * (reconcile.md 4.2): what otel-reconcile grants the collector's
 * ServiceAccount in a ClusterRole, and so what the admission webhook holds
 * a user to before letting them create such a collector (cr-admission.md
 * 3.7). One function for both, so the check and the grant cannot differ. */
#ifndef COLLECTOR_RBAC_H
#define COLLECTOR_RBAC_H

#include <json-c/json.h>

/* The rules of the enabled components of config (receivers, processors,
 * extensions; exporters need none): a new array of {verbs, apiGroups:
 * [group], resources} in a stable order, each rule once. Empty when the
 * config needs nothing. */
json_object *collector_rbac_rules(json_object *config);

#endif
