/* collector/shape.c - the field table of collector_check_shape; see
 * shape.h. Only fields something of ours reads are listed: the rest is the
 * API server's schema's business, and listing it would only copy it. */
#include "collector/shape.h"

#include "base/shape.h"

#define END {NULL, 0, NULL}

static const shape_field str_type[] = {{"type", SHAPE_STRING, NULL}, END};
static const shape_field metadata[] = {
    {"name", SHAPE_STRING, NULL},         {"namespace", SHAPE_STRING, NULL}, {"uid", SHAPE_STRING, NULL},
    {"labels", SHAPE_STRMAP, NULL},       {"annotations", SHAPE_STRMAP, NULL}, END};
static const shape_field ca_ref[] = {{"secret", SHAPE_OBJECT, NULL}, {"configMap", SHAPE_OBJECT, NULL}, END};
static const shape_field mtls_tls[] = {{"serverCertificate", SHAPE_OBJECT, NULL},
                                       {"clientCertificate", SHAPE_OBJECT, NULL},
                                       {"certificateAuthorityCertificate", SHAPE_OBJECT, ca_ref},
                                       END};
static const shape_field mtls[] = {{"enabled", SHAPE_BOOL, NULL}, {"useCertManager", SHAPE_BOOL, NULL},
                                   {"tls", SHAPE_OBJECT, mtls_tls}, END};
static const shape_field prometheus_cr[] = {{"enabled", SHAPE_BOOL, NULL}, END};
static const shape_field target_allocator[] = {
    {"enabled", SHAPE_BOOL, NULL},           {"replicas", SHAPE_INT, NULL},
    {"allocationStrategy", SHAPE_STRING, NULL}, {"filterStrategy", SHAPE_STRING, NULL},
    {"serviceAccount", SHAPE_STRING, NULL},  {"prometheusCR", SHAPE_OBJECT, prometheus_cr},
    {"mtls", SHAPE_OBJECT, mtls},            END};
static const shape_field scaling[] = {{"stabilizationWindowSeconds", SHAPE_INT, NULL}, END};
static const shape_field behavior[] = {{"scaleDown", SHAPE_OBJECT, scaling}, {"scaleUp", SHAPE_OBJECT, scaling}, END};
static const shape_field pods_target[] = {{"type", SHAPE_STRING, NULL},
                                          {"averageValue", SHAPE_QUANTITY, NULL},
                                          {"value", SHAPE_QUANTITY, NULL},
                                          END};
static const shape_field pods_metric[] = {{"target", SHAPE_OBJECT, pods_target}, END};
static const shape_field metric[] = {{"type", SHAPE_STRING, NULL}, {"pods", SHAPE_OBJECT, pods_metric}, END};
static const shape_field autoscaler[] = {
    {"minReplicas", SHAPE_INT, NULL},          {"maxReplicas", SHAPE_INT, NULL},
    {"targetCPUUtilization", SHAPE_INT, NULL}, {"targetMemoryUtilization", SHAPE_INT, NULL},
    {"behavior", SHAPE_OBJECT, behavior},      {"metrics", SHAPE_OBJECTS, metric},
    END};
static const shape_field route[] = {{"termination", SHAPE_STRING, NULL}, END};
static const shape_field ingress[] = {{"type", SHAPE_STRING, NULL}, {"ruleType", SHAPE_STRING, NULL},
                                      {"hostname", SHAPE_STRING, NULL}, {"route", SHAPE_OBJECT, route}, END};
static const shape_field network_policy[] = {{"enabled", SHAPE_BOOL, NULL}, END};
static const shape_field http_route[] = {{"enabled", SHAPE_BOOL, NULL}, END};
static const shape_field port[] = {{"name", SHAPE_STRING, NULL}, {"port", SHAPE_INT, NULL}, END};
static const shape_field spec[] = {
    {"mode", SHAPE_STRING, NULL},
    {"upgradeStrategy", SHAPE_STRING, NULL},
    {"managementState", SHAPE_STRING, NULL},
    {"replicas", SHAPE_INT, NULL},
    {"config", SHAPE_OBJECT, NULL},
    {"serviceAccount", SHAPE_STRING, NULL},
    {"priorityClassName", SHAPE_STRING, NULL},
    {"targetAllocator", SHAPE_OBJECT, target_allocator},
    {"autoscaler", SHAPE_OBJECT, autoscaler},
    {"ingress", SHAPE_OBJECT, ingress},
    {"networkPolicy", SHAPE_OBJECT, network_policy},
    {"httpRoute", SHAPE_OBJECT, http_route},
    {"ports", SHAPE_OBJECTS, port},
    {"volumeClaimTemplates", SHAPE_LIST, NULL},
    {"persistentVolumeClaimRetentionPolicy", SHAPE_OBJECT, NULL},
    {"tolerations", SHAPE_LIST, NULL},
    {"affinity", SHAPE_OBJECT, NULL},
    {"additionalContainers", SHAPE_LIST, NULL},
    {"daemonSetUpdateStrategy", SHAPE_OBJECT, str_type},
    {"deploymentUpdateStrategy", SHAPE_OBJECT, str_type},
    END};
static const shape_field collector[] = {{"metadata", SHAPE_OBJECT, metadata}, {"spec", SHAPE_OBJECT, spec}, END};

char *collector_check_shape(json_object *obj) { return shape_check(obj, collector, ""); }
