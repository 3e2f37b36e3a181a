/* reconcile/services.c - the four collector Services (reconcile.md 2.6):
 * base and headless over receiver and exporter ports, monitoring on the
 * telemetry port, extension over extension ports.
 *
 * The base Service's `clusterIP: ""` and `sessionAffinity: ""` of the
 * reference are Go zero values that omitempty drops on the wire, so they are
 * not written; `type` is left to the API server (ClusterIP), like the
 * reference does. */
#include "reconcile/context.h"
#include "reconcile/naming.h"
#include "reconcile/obj.h"
#include "reconcile/ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { BASE, HEADLESS, MONITORING, EXTENSION } svc_kind;

static const char *const type_names[] = {"base", "headless", "monitoring", "extension"};

static json_object *service(reconcile_ctx *c, svc_kind kind, const char *name, const char *name_label,
                            json_object *ports /* taken */) {
    json_object *labels = reconcile_common_labels(c, name_label), *ann = reconcile_object_annotations(c);
    json_object *o, *spec, *spec_in = c->spec;
    reconcile_obj_str(labels, "operator.opentelemetry.io/collector-service-type", type_names[kind]);
    if (kind == HEADLESS) {
        char *tls = NULL;
        reconcile_obj_str(labels, "operator.opentelemetry.io/collector-headless-service", "Exists");
        if (asprintf(&tls, "%s-tls", name) >= 0 &&
            !json_object_object_get_ex(ann, "service.beta.openshift.io/serving-cert-secret-name", NULL))
            reconcile_obj_str(ann, "service.beta.openshift.io/serving-cert-secret-name", tls);
        free(tls);
    }
    if (kind == MONITORING)
        reconcile_obj_str(labels, "operator.opentelemetry.io/collector-monitoring-service", "Exists");
    {
        json_object *sl = reconcile_obj_sorted(labels), *sa = reconcile_obj_sorted(ann);
        json_object_put(labels);
        json_object_put(ann);
        labels = sl;
        ann = sa;
    }
    o = reconcile_object(c, "v1", "Service", name, 1, labels, ann);
    spec = reconcile_obj_map(o, "spec");
    reconcile_obj_set(spec, "ports", ports);
    reconcile_obj_set(spec, "selector", reconcile_selector_labels(c));
    if (kind == HEADLESS) reconcile_obj_str(spec, "clusterIP", "None");
    if (kind != EXTENSION) {
        reconcile_obj_copy(spec, "ipFamilies", reconcile_get_arr(spec_in, "ipFamilies"));
        reconcile_obj_copy(spec, "ipFamilyPolicy", reconcile_get(spec_in, "ipFamilyPolicy"));
    }
    if (reconcile_nonempty(reconcile_get(spec_in, "sessionAffinity")))
        reconcile_obj_copy(spec, "sessionAffinity", reconcile_get(spec_in, "sessionAffinity"));
    reconcile_obj_copy(spec, "sessionAffinityConfig", reconcile_get_map(spec_in, "sessionAffinityConfig"));
    if (kind == BASE || kind == HEADLESS)
        reconcile_obj_str(spec, "internalTrafficPolicy", strcmp(c->mode, "daemonset") == 0 ? "Local" : "Cluster");
    if (reconcile_nonempty(reconcile_get(spec_in, "trafficDistribution")))
        reconcile_obj_copy(spec, "trafficDistribution", reconcile_get(spec_in, "trafficDistribution"));
    return o;
}

static int is_route(reconcile_ctx *c) {
    const char *t = reconcile_get_str(reconcile_get_map(c->spec, "ingress"), "type");
    return t && strcmp(t, "route") == 0;
}

int reconcile_build_services(reconcile_ctx *c) {
    char err[256] = "", *name = NULL;
    json_object *ports, *mports, *mp;
    int rc = 0;

    ports = reconcile_service_ports(c->config, RECONCILE_PORTS_RECEIVERS | RECONCILE_PORTS_EXPORTERS, is_route(c),
                                    reconcile_get(c->spec, "ports"), err, sizeof(err));
    if (!ports) return reconcile_fail(c, "%s", err);
    if (json_object_array_length(ports) > 0) {
        if (!(name = reconcile_name("%s-headless", c->collector_name, NULL))) goto oom;
        rc = reconcile_emit(c, service(c, BASE, c->collector_name, c->collector_name, reconcile_obj_clone(ports))) ||
             reconcile_emit(c, service(c, HEADLESS, name, c->collector_name, reconcile_obj_clone(ports)));
        free(name);
        if (rc) goto out;
    }

    if (!(name = reconcile_name("%s-monitoring", c->collector_name, NULL))) goto oom;
    mports = json_object_new_array();
    mp = reconcile_obj_push(mports, json_object_new_object());
    reconcile_obj_str(mp, "name", "monitoring");
    reconcile_obj_int(mp, "port", c->metrics_port);
    rc = reconcile_emit(c, service(c, MONITORING, name, name, mports));
    free(name);
    if (rc) goto out;

    json_object_put(ports);
    ports = reconcile_service_ports(c->config, RECONCILE_PORTS_EXTENSIONS, 0, NULL, err, sizeof(err));
    if (!ports) return reconcile_fail(c, "%s", err);
    if (json_object_array_length(ports) > 0) {
        if (!(name = reconcile_name("%s-extension", c->collector_name, NULL))) goto oom;
        rc = reconcile_emit(c, service(c, EXTENSION, name, name, reconcile_obj_clone(ports)));
        free(name);
    }
    goto out;
oom:
    rc = reconcile_fail(c, "out of memory");
out:
    json_object_put(ports);
    return rc ? -1 : 0;
}
