/* reconcile/targetallocator.h - the objects of one TargetAllocator
 * (opentelemetry.io/v1alpha1; targetallocator.md 4 to 15), as a pure
 * function like render.h's: the allocator resource and the collector bound
 * to it in, its Deployment, ConfigMap, ServiceAccount, Service, PDB,
 * NetworkPolicy, ServiceMonitor and cert-manager objects out, in the
 * reference's build order.
 *
 * Where the TargetAllocator comes from does not matter here: the one a
 * collector's spec.targetAllocator generates (render.h emits it) and a
 * standalone one are rendered alike; the caller finds the collector
 * (reconcile_ta_bound_collector). */
#ifndef RECONCILE_TARGETALLOCATOR_H
#define RECONCILE_TARGETALLOCATOR_H

#include "reconcile/render.h"

#include <json-c/json.h>
#include <stddef.h>

#define RECONCILE_TA_LABEL "opentelemetry.io/target-allocator"

/* Renders ta (not modified) into *out. collector: the collector bound to it
 * (any version, not defaulted; NULL: none); ns: the namespace when ta names
 * none. 0, or -1 with a one-line reason in err and *out empty. A
 * managementState: unmanaged allocator renders nothing, with a warning. */
int reconcile_render_target_allocator(json_object *ta, json_object *collector, const char *ns,
                                      const reconcile_options *opt, reconcile_render_result *out, char *err,
                                      size_t errlen);

/* 0 when ta's fields have the JSON types the renderer reads and the CRD's
 * enums' values; else -1 with "PATH: REASON" in err (ta_shape.c). */
int reconcile_ta_check_shape(json_object *ta, char *err, size_t errlen);

/* The volumes and mounts of one side's certificate (15.3), appended to the
 * arrays: base names the Secret (or the "-N" volumes of user-provided
 * certificates), which the "serverCertificate" or "clientCertificate"
 * reference of mtls.tls when useCertManager is false. */
void reconcile_ta_tls_mounts(json_object *mtls, const char *base, const char *which, json_object *volumes,
                             json_object *mounts);

/* mtls (spec.mtls, schema defaults applied) as the reference's webhooks
 * validate it (15.4): 0, or -1 with their message in err. cert_manager:
 * cert-manager is installed. */
int reconcile_ta_mtls_check(json_object *mtls, int cert_manager, char *err, size_t errlen);

/* The collector ta belongs to (targetallocator.md 3.4), among collectors
 * (an array of collector objects of ta's namespace or more): the
 * controller-owner collector, else the one labelled
 * opentelemetry.io/target-allocator: <ta>. NULL when none; NULL with err
 * set when two are labelled, or the owner is not among them. Borrowed. */
json_object *reconcile_ta_bound_collector(json_object *ta, json_object *collectors, char *err, size_t errlen);

#endif
