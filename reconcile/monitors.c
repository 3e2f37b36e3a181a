/* reconcile/monitors.c - Prometheus Operator objects (reconcile.md 2.11):
 * ServiceMonitors over the monitoring and base Services, or a PodMonitor in
 * sidecar mode. Rendered only with observability.metrics.enableMetrics and
 * when the CRDs exist (reconcile_options.prometheus_crds).
 *
 * The PodMonitor is kept as the reference builds it although it does not
 * select injected sidecar pods (spec 7.14): changing what it selects would
 * start scraping pods users did not ask for. */
#include "reconcile/context.h"
#include "reconcile/naming.h"
#include "reconcile/obj.h"
#include "reconcile/ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names of exporter ports that contain "prometheus", as a new array. */
static json_object *prometheus_ports(reconcile_ctx *c) {
    char err[256] = "";
    json_object *ports = reconcile_service_ports(c->config, RECONCILE_PORTS_EXPORTERS, 0, NULL, err, sizeof(err));
    json_object *names = json_object_new_array();
    for (size_t i = 0; ports && i < json_object_array_length(ports); i++) {
        const char *n = reconcile_get_str(json_object_array_get_idx(ports, i), "name");
        if (n && strstr(n, "prometheus")) reconcile_obj_push(names, json_object_new_string(n));
    }
    json_object_put(ports);
    return names;
}

static json_object *monitor_labels(reconcile_ctx *c, const char *name) {
    json_object *l = reconcile_common_labels(c, name), *extra, *sorted;
    extra = reconcile_get_map(reconcile_get_map(reconcile_get_map(c->spec, "observability"), "metrics"), "extraLabels");
    if (extra) {
        json_object_object_foreach(extra, k, v) reconcile_obj_copy(l, k, v);
    }
    sorted = reconcile_obj_sorted(l);
    json_object_put(l);
    return sorted;
}

static json_object *ns_selector(reconcile_ctx *c) {
    json_object *s = json_object_new_object();
    reconcile_obj_push(reconcile_obj_arr(s, "matchNames"), json_object_new_string(c->ns));
    return s;
}

static json_object *service_monitor(reconcile_ctx *c, const char *name, const char *svc_type, json_object *ports) {
    json_object *o = reconcile_object(c, "monitoring.coreos.com/v1", "ServiceMonitor", name, 1,
                                      monitor_labels(c, name), NULL);
    json_object *spec = reconcile_obj_map(o, "spec"), *eps = reconcile_obj_arr(spec, "endpoints"), *sel, *ml;
    for (size_t i = 0; i < json_object_array_length(ports); i++)
        reconcile_obj_str(reconcile_obj_push(eps, json_object_new_object()), "port",
                          json_object_get_string(json_object_array_get_idx(ports, i)));
    sel = reconcile_obj_map(spec, "selector");
    ml = reconcile_obj_set(sel, "matchLabels", reconcile_selector_labels(c));
    reconcile_obj_str(ml, "operator.opentelemetry.io/collector-service-type", svc_type);
    reconcile_obj_set(sel, "matchLabels", reconcile_obj_sorted(ml));
    reconcile_obj_set(spec, "namespaceSelector", ns_selector(c));
    return o;
}

int reconcile_build_monitors(reconcile_ctx *c) {
    json_object *prom, *mon;
    char *n1 = NULL, *n2 = NULL;
    int rc = 0;
    if (!reconcile_get_bool(reconcile_get_map(reconcile_get_map(c->spec, "observability"), "metrics"),
                            "enableMetrics") ||
        !c->opt->prometheus_crds)
        return 0;
    prom = prometheus_ports(c);
    if (strcmp(c->mode, "sidecar") == 0) {
        json_object *o = reconcile_object(c, "monitoring.coreos.com/v1", "PodMonitor", c->collector_name, 1,
                                          reconcile_common_labels(c, c->collector_name), NULL);
        json_object *spec = reconcile_obj_map(o, "spec"), *ptl, *eps;
        reconcile_obj_str(spec, "jobLabel", "app.kubernetes.io/instance");
        ptl = reconcile_obj_arr(spec, "podTargetLabels");
        reconcile_obj_push(ptl, json_object_new_string("app.kubernetes.io/name"));
        reconcile_obj_push(ptl, json_object_new_string("app.kubernetes.io/instance"));
        reconcile_obj_push(ptl, json_object_new_string("app.kubernetes.io/managed-by"));
        eps = reconcile_obj_arr(spec, "podMetricsEndpoints");
        reconcile_obj_str(reconcile_obj_push(eps, json_object_new_object()), "port", "monitoring");
        for (size_t i = 0; i < json_object_array_length(prom); i++)
            reconcile_obj_str(reconcile_obj_push(eps, json_object_new_object()), "port",
                              json_object_get_string(json_object_array_get_idx(prom, i)));
        reconcile_obj_set(spec, "selector", reconcile_label_selector(c));
        reconcile_obj_set(spec, "namespaceSelector", ns_selector(c));
        rc = reconcile_emit(c, o);
        goto out;
    }
    /* Build order: the base monitor (13) before the monitoring one (14). */
    if (json_object_array_length(prom) > 0) {
        if (!(n1 = reconcile_name("%s-collector", c->name, NULL))) goto oom;
        if ((rc = reconcile_emit(c, service_monitor(c, n1, "base", prom)))) goto out;
    }
    {
        char *mname = NULL;
        if (asprintf(&mname, "%s-monitoring", c->name) < 0) goto oom;
        n2 = reconcile_name("%s-collector", mname, NULL);
        free(mname);
        if (!n2) goto oom;
        mon = json_object_new_array();
        reconcile_obj_push(mon, json_object_new_string("monitoring"));
        rc = reconcile_emit(c, service_monitor(c, n2, "monitoring", mon));
        json_object_put(mon);
    }
    goto out;
oom:
    rc = reconcile_fail(c, "out of memory");
out:
    free(n1);
    free(n2);
    json_object_put(prom);
    return rc ? -1 : 0;
}
