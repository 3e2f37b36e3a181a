/* mutate/opampbridge.c - see opampbridge.h. ReportsStatus is forced to
 * true, an explicit false included, as the reference does (spec 8.23 calls
 * that a bug; upstream's test "enable ReportsStatus capability if not
 * enabled already" expects it). */
#include "mutate/opampbridge.h"

#include "base/json.h"
#include "base/shape.h"
#include "collector/validate.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define END {NULL, 0, NULL}

static const shape_field tls[] = {{"insecure", SHAPE_BOOL, NULL}, {"insecure_skip_verify", SHAPE_BOOL, NULL}, END};
static const shape_field port[] = {{"name", SHAPE_STRING, NULL}, {"port", SHAPE_INT, NULL}, END};
static const shape_field capabilities[] = {{"ReportsStatus", SHAPE_BOOL, NULL}, END};
static const shape_field spec[] = {{"endpoint", SHAPE_STRING, NULL},
                                   {"upgradeStrategy", SHAPE_STRING, NULL},
                                   {"replicas", SHAPE_INT, NULL},
                                   {"capabilities", SHAPE_OBJECT, capabilities},
                                   {"tls", SHAPE_OBJECT, tls},
                                   {"ports", SHAPE_OBJECTS, port},
                                   END};
static const shape_field metadata[] = {{"name", SHAPE_STRING, NULL}, {"labels", SHAPE_STRMAP, NULL}, END};
static const shape_field bridge[] = {{"metadata", SHAPE_OBJECT, metadata}, {"spec", SHAPE_OBJECT, spec}, END};

char *mutate_check_opampbridge_shape(json_object *obj) { return shape_check(obj, bridge, ""); }

int mutate_default_opampbridge(json_object *obj, char *err, size_t errlen) {
    if (!json_object_is_type(obj, json_type_object)) return 0;
    char *bad = shape_check(obj, bridge, "");
    if (bad) {
        snprintf(err, errlen, "%s", bad);
        free(bad);
        return -1;
    }
    json_object *s = jobj_at(obj, "spec");
    const char *us = jstr(s, "upgradeStrategy");
    if (!us || !*us) jset_str(s, "upgradeStrategy", "automatic");
    if (!jget(s, "replicas")) jset_int(s, "replicas", 1);
    json_object *caps = jobj_at(s, "capabilities");
    jset_bool(caps, "ReportsStatus", 1);
    return 0;
}

int mutate_validate_opampbridge(json_object *obj, verdict_op op, verdict *v) {
    if (op == VERDICT_DELETE) return 0;
    char *bad = shape_check(obj, bridge, "");
    if (bad) {
        verdict_deny(v, "shape", "%s", bad);
        free(bad);
        return -1;
    }
    json_object *s = jmap(obj, "spec"), *t = jmap(s, "tls"), *caps = jmap(s, "capabilities");
    const char *ep = jstr(s, "endpoint");
    while (ep && isspace((unsigned char)*ep)) ep++;
    if (!ep || !*ep) return verdict_deny(v, "endpoint", "the OpAMP server endpoint is not specified");
    if (jbool(t, "insecure") && jbool(t, "insecure_skip_verify"))
        return verdict_deny(v, "tls", "tls.insecure and tls.insecure_skip_verify cannot both be true");
    if (!caps || json_object_object_length(caps) == 0)
        return verdict_deny(v, "capabilities", "the capabilities supported by OpAMP Bridge are not specified");
    if (collector_check_spec_ports(jget(s, "ports"), "OpAMPBridge", "ports", v)) return -1;
    int64_t replicas;
    if (jint(s, "replicas", &replicas) && replicas > 1)
        return verdict_deny(v, "replicas", "replica count must not be greater than 1");
    return 0;
}
