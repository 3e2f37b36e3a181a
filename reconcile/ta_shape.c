/* reconcile/ta_shape.c - what a standalone TargetAllocator must look like
 * before it is rendered: the JSON types of the fields the renderer reads
 * (base/shape.h) and the CRD's enums. In a cluster the API server's schema
 * refuses the rest already; `otel-reconcile render` reads files, where
 * nothing did, and a loose reader would take `allocationStrategy: 7` for
 * absent and `bogus` into the allocator's config (which then fails at run
 * time). Only fields the renderer reads are listed, as in collector/shape.c. */
#include "reconcile/targetallocator.h"

#include "base/err.h"
#include "base/json.h"
#include "base/shape.h"

#include <stdlib.h>
#include <string.h>

#define END {NULL, 0, NULL}

static const shape_field metadata[] = {{"name", SHAPE_STRING, NULL},   {"namespace", SHAPE_STRING, NULL},
                                       {"labels", SHAPE_STRMAP, NULL}, {"annotations", SHAPE_STRMAP, NULL},
                                       END};
static const shape_field port[] = {{"name", SHAPE_STRING, NULL},     {"port", SHAPE_INT, NULL},
                                   {"protocol", SHAPE_STRING, NULL}, {"hostPort", SHAPE_INT, NULL},
                                   END};
static const shape_field selector_ref[] = {{"name", SHAPE_STRING, NULL}, {"key", SHAPE_STRING, NULL}, END};
static const shape_field ca_ref[] = {{"secret", SHAPE_OBJECT, selector_ref}, {"configMap", SHAPE_OBJECT, selector_ref},
                                     END};
static const shape_field cert_ref[] = {{"certificateSecret", SHAPE_OBJECT, selector_ref},
                                       {"keySecret", SHAPE_OBJECT, selector_ref},
                                       {"certificate", SHAPE_OBJECT, selector_ref},
                                       {"key", SHAPE_OBJECT, selector_ref},
                                       END};
static const shape_field mtls_tls[] = {{"certificateAuthorityCertificate", SHAPE_OBJECT, ca_ref},
                                       {"serverCertificate", SHAPE_OBJECT, cert_ref},
                                       {"clientCertificate", SHAPE_OBJECT, cert_ref},
                                       END};
static const shape_field mtls[] = {{"enabled", SHAPE_BOOL, NULL}, {"useCertManager", SHAPE_BOOL, NULL},
                                   {"tls", SHAPE_OBJECT, mtls_tls}, END};
static const shape_field prometheus_cr[] = {{"enabled", SHAPE_BOOL, NULL},
                                            {"scrapeInterval", SHAPE_STRING, NULL},
                                            {"evaluationInterval", SHAPE_STRING, NULL},
                                            END};
static const shape_field metrics[] = {{"enableMetrics", SHAPE_BOOL, NULL}, {"extraLabels", SHAPE_STRMAP, NULL}, END};
static const shape_field observability[] = {{"metrics", SHAPE_OBJECT, metrics}, END};
static const shape_field enabled[] = {{"enabled", SHAPE_BOOL, NULL}, END};
static const shape_field spec[] = {
    {"managementState", SHAPE_STRING, NULL},
    {"replicas", SHAPE_INT, NULL},
    {"image", SHAPE_STRING, NULL},
    {"imagePullPolicy", SHAPE_STRING, NULL},
    {"args", SHAPE_STRMAP, NULL},
    {"env", SHAPE_OBJECTS, NULL},
    {"envFrom", SHAPE_OBJECTS, NULL},
    {"resources", SHAPE_OBJECT, NULL},
    {"securityContext", SHAPE_OBJECT, NULL},
    {"podSecurityContext", SHAPE_OBJECT, NULL},
    {"podAnnotations", SHAPE_STRMAP, NULL},
    {"serviceAccount", SHAPE_STRING, NULL},
    {"nodeSelector", SHAPE_STRMAP, NULL},
    {"tolerations", SHAPE_OBJECTS, NULL},
    {"affinity", SHAPE_OBJECT, NULL},
    {"topologySpreadConstraints", SHAPE_OBJECTS, NULL},
    {"priorityClassName", SHAPE_STRING, NULL},
    {"terminationGracePeriodSeconds", SHAPE_INT, NULL},
    {"volumes", SHAPE_OBJECTS, NULL},
    {"volumeMounts", SHAPE_OBJECTS, NULL},
    {"ports", SHAPE_OBJECTS, port},
    {"initContainers", SHAPE_OBJECTS, NULL},
    {"additionalContainers", SHAPE_OBJECTS, NULL},
    {"lifecycle", SHAPE_OBJECT, NULL},
    {"hostNetwork", SHAPE_BOOL, NULL},
    {"shareProcessNamespace", SHAPE_BOOL, NULL},
    {"podDnsConfig", SHAPE_OBJECT, NULL},
    {"ipFamilies", SHAPE_LIST, NULL},
    {"ipFamilyPolicy", SHAPE_STRING, NULL},
    {"podDisruptionBudget", SHAPE_OBJECT, NULL},
    {"allocationStrategy", SHAPE_STRING, NULL},
    {"filterStrategy", SHAPE_STRING, NULL},
    {"global", SHAPE_OBJECT, NULL},
    {"scrapeConfigs", SHAPE_OBJECTS, NULL},
    {"prometheusCR", SHAPE_OBJECT, prometheus_cr},
    {"observability", SHAPE_OBJECT, observability},
    {"networkPolicy", SHAPE_OBJECT, enabled},
    {"allowInsecureAuthSecrets", SHAPE_BOOL, NULL},
    {"collectorNotReadyGracePeriod", SHAPE_STRING, NULL},
    {"mtls", SHAPE_OBJECT, mtls},
    {"livenessProbe", SHAPE_OBJECT, NULL},
    {"readinessProbe", SHAPE_OBJECT, NULL},
    END};
static const shape_field allocator[] = {{"metadata", SHAPE_OBJECT, metadata}, {"spec", SHAPE_OBJECT, spec}, END};

/* The CRD's enums (targetallocator.md 1.2), with the API server's message. */
static int one_of(json_object *spec, const char *key, const char *const *values, const char *shown, char *err,
                  size_t errlen) {
    const char *v = jstr(spec, key);
    if (!v) return 0;
    for (size_t i = 0; values[i]; i++)
        if (!strcmp(v, values[i])) return 0;
    return err_printf(err, errlen, "spec.%s: Unsupported value: \"%s\": supported values: %s", key, v, shown);
}

int reconcile_ta_check_shape(json_object *ta, char *err, size_t errlen) {
    char *bad = shape_check(ta, allocator, "");
    if (bad) {
        err_printf(err, errlen, "%s", bad);
        free(bad);
        return -1;
    }
    static const char *const strategies[] = {"least-weighted", "consistent-hashing", "per-node", NULL};
    static const char *const filters[] = {"", "relabel-config", NULL};
    static const char *const states[] = {"managed", "unmanaged", NULL};
    json_object *spec = jmap(ta, "spec");
    if (one_of(spec, "allocationStrategy", strategies, "\"least-weighted\", \"consistent-hashing\", \"per-node\"", err,
               errlen) ||
        one_of(spec, "filterStrategy", filters, "\"\", \"relabel-config\"", err, errlen) ||
        one_of(spec, "managementState", states, "\"managed\", \"unmanaged\"", err, errlen))
        return -1;
    return 0;
}
