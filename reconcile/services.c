/* reconcile/services.c - the four collector Services (reconcile.md 2.6):
 * base and headless over receiver and exporter ports, monitoring on the
 * telemetry port, extension over extension ports.
 *
 * The base Service's `clusterIP: ""` and `sessionAffinity: ""` of the
 * reference are Go zero values that omitempty drops on the wire, so they are
 * not written; `type` is left to the API server (ClusterIP), like the
 * reference does. */
#include "reconcile/context.h"

#include "base/json.h"
#include "collector/naming.h"
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
    jset_str(labels, "operator.opentelemetry.io/collector-service-type", type_names[kind]);
    if (kind == HEADLESS) {
        char *tls = NULL;
        jset_str(labels, "operator.opentelemetry.io/collector-headless-service", "Exists");
        if (asprintf(&tls, "%s-tls", name) >= 0 &&
            !json_object_object_get_ex(ann, "service.beta.openshift.io/serving-cert-secret-name", NULL))
            jset_str(ann, "service.beta.openshift.io/serving-cert-secret-name", tls);
        free(tls);
    }
    if (kind == MONITORING)
        jset_str(labels, "operator.opentelemetry.io/collector-monitoring-service", "Exists");
    {
        json_object *sl = jsorted(labels), *sa = jsorted(ann);
        json_object_put(labels);
        json_object_put(ann);
        labels = sl;
        ann = sa;
    }
    o = reconcile_object(c, "v1", "Service", name, 1, labels, ann);
    spec = jset_obj(o, "spec");
    jset(spec, "ports", ports);
    jset(spec, "selector", reconcile_selector_labels(c));
    if (kind == HEADLESS) jset_str(spec, "clusterIP", "None");
    if (kind != EXTENSION) {
        jset_copy(spec, "ipFamilies", jarr(spec_in, "ipFamilies"));
        jset_copy(spec, "ipFamilyPolicy", jget(spec_in, "ipFamilyPolicy"));
    }
    if (jnonempty(jget(spec_in, "sessionAffinity")))
        jset_copy(spec, "sessionAffinity", jget(spec_in, "sessionAffinity"));
    jset_copy(spec, "sessionAffinityConfig", jmap(spec_in, "sessionAffinityConfig"));
    if (kind == BASE || kind == HEADLESS)
        jset_str(spec, "internalTrafficPolicy", strcmp(c->mode, "daemonset") == 0 ? "Local" : "Cluster");
    if (jnonempty(jget(spec_in, "trafficDistribution")))
        jset_copy(spec, "trafficDistribution", jget(spec_in, "trafficDistribution"));
    return o;
}

static int is_route(reconcile_ctx *c) {
    const char *t = jstr(jmap(c->spec, "ingress"), "type");
    return t && strcmp(t, "route") == 0;
}

int reconcile_build_services(reconcile_ctx *c) {
    char err[256] = "", *name = NULL;
    json_object *ports, *mports, *mp;
    int rc = 0;

    ports = reconcile_service_ports(c->config, COLLECTOR_RECEIVERS | COLLECTOR_EXPORTERS, is_route(c),
                                    jget(c->spec, "ports"), err, sizeof(err));
    if (!ports) return reconcile_fail(c, "%s", err);
    if (json_object_array_length(ports) > 0) {
        name = collector_name("%s-headless", c->collector_name, NULL);
        rc = reconcile_emit(c, service(c, BASE, c->collector_name, c->collector_name, jcopy(ports))) ||
             reconcile_emit(c, service(c, HEADLESS, name, c->collector_name, jcopy(ports)));
        free(name);
        if (rc) goto out;
    }

    name = collector_name("%s-monitoring", c->collector_name, NULL);
    mports = jnew_arr();
    mp = jpush(mports, jnew_obj());
    jset_str(mp, "name", "monitoring");
    jset_int(mp, "port", c->metrics_port);
    rc = reconcile_emit(c, service(c, MONITORING, name, name, mports));
    free(name);
    if (rc) goto out;

    json_object_put(ports);
    ports = reconcile_service_ports(c->config, COLLECTOR_EXTENSIONS, 0, NULL, err, sizeof(err));
    if (!ports) return reconcile_fail(c, "%s", err);
    if (json_object_array_length(ports) > 0) {
        name = collector_name("%s-extension", c->collector_name, NULL);
        rc = reconcile_emit(c, service(c, EXTENSION, name, name, jcopy(ports)));
        free(name);
    }
out:
    json_object_put(ports);
    return rc ? -1 : 0;
}
