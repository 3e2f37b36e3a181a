/* reconcile/monitors.c - Prometheus Operator objects (reconcile.md 2.11):
 * ServiceMonitors over the monitoring and base Services, or a PodMonitor in
 * sidecar mode. Rendered only with observability.metrics.enableMetrics and
 * when the CRDs exist (reconcile_options.prometheus_crds).
 *
 * The PodMonitor is kept as the reference builds it although it does not
 * select injected sidecar pods (spec 7.14): changing what it selects would
 * start scraping pods users did not ask for. */
#include "reconcile/context.h"

#include "base/alloc.h"
#include "base/json.h"
#include "collector/naming.h"
#include "reconcile/ports.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names of exporter ports that contain "prometheus", as a new array. */
static json_object *prometheus_ports(reconcile_ctx *c) {
    char err[256] = "";
    json_object *ports = reconcile_service_ports(c->config, COLLECTOR_EXPORTERS, 0, NULL, err, sizeof(err));
    json_object *names = jnew_arr();
    for (size_t i = 0; ports && i < json_object_array_length(ports); i++) {
        const char *n = jstr(json_object_array_get_idx(ports, i), "name");
        if (n && strstr(n, "prometheus")) jpush(names, jnew_str(n));
    }
    json_object_put(ports);
    return names;
}

static json_object *monitor_labels(reconcile_ctx *c, const char *name) {
    json_object *l = reconcile_common_labels(c, name), *extra, *sorted;
    extra = jmap(jmap(jmap(c->spec, "observability"), "metrics"), "extraLabels");
    if (extra) {
        json_object_object_foreach(extra, k, v) jset_copy(l, k, v);
    }
    sorted = jsorted(l);
    json_object_put(l);
    return sorted;
}

static json_object *ns_selector(reconcile_ctx *c) {
    json_object *s = jnew_obj();
    jpush(jset_arr(s, "matchNames"), jnew_str(c->ns));
    return s;
}

static json_object *service_monitor(reconcile_ctx *c, const char *name, const char *svc_type, json_object *ports) {
    json_object *o = reconcile_object(c, "monitoring.coreos.com/v1", "ServiceMonitor", name, 1,
                                      monitor_labels(c, name), NULL);
    json_object *spec = jset_obj(o, "spec"), *eps = jset_arr(spec, "endpoints"), *sel, *ml;
    for (size_t i = 0; i < json_object_array_length(ports); i++)
        jset_str(jpush(eps, jnew_obj()), "port",
                          json_object_get_string(json_object_array_get_idx(ports, i)));
    sel = jset_obj(spec, "selector");
    ml = jset(sel, "matchLabels", reconcile_selector_labels(c));
    jset_str(ml, "operator.opentelemetry.io/collector-service-type", svc_type);
    jset(sel, "matchLabels", jsorted(ml));
    jset(spec, "namespaceSelector", ns_selector(c));
    return o;
}

int reconcile_build_monitors(reconcile_ctx *c) {
    json_object *prom, *mon;
    char *n1 = NULL, *n2 = NULL;
    int rc = 0;
    if (!jbool(jmap(jmap(c->spec, "observability"), "metrics"),
                            "enableMetrics") ||
        !c->opt->prometheus_crds)
        return 0;
    prom = prometheus_ports(c);
    if (strcmp(c->mode, "sidecar") == 0) {
        json_object *o = reconcile_object(c, "monitoring.coreos.com/v1", "PodMonitor", c->collector_name, 1,
                                          reconcile_common_labels(c, c->collector_name), NULL);
        json_object *spec = jset_obj(o, "spec"), *ptl, *eps;
        jset_str(spec, "jobLabel", "app.kubernetes.io/instance");
        ptl = jset_arr(spec, "podTargetLabels");
        jpush(ptl, jnew_str("app.kubernetes.io/name"));
        jpush(ptl, jnew_str("app.kubernetes.io/instance"));
        jpush(ptl, jnew_str("app.kubernetes.io/managed-by"));
        eps = jset_arr(spec, "podMetricsEndpoints");
        jset_str(jpush(eps, jnew_obj()), "port", "monitoring");
        for (size_t i = 0; i < json_object_array_length(prom); i++)
            jset_str(jpush(eps, jnew_obj()), "port",
                              json_object_get_string(json_object_array_get_idx(prom, i)));
        jset(spec, "selector", reconcile_label_selector(c));
        jset(spec, "namespaceSelector", ns_selector(c));
        rc = reconcile_emit(c, o);
        goto out;
    }
    /* Build order: the base monitor (13) before the monitoring one (14). */
    if (json_object_array_length(prom) > 0) {
        n1 = collector_name("%s-collector", c->name, NULL);
        if ((rc = reconcile_emit(c, service_monitor(c, n1, "base", prom)))) goto out;
    }
    {
        char *mname = xasprintf("%s-monitoring", c->name);
        n2 = collector_name("%s-collector", mname, NULL);
        free(mname);
        mon = jnew_arr();
        jpush(mon, jnew_str("monitoring"));
        rc = reconcile_emit(c, service_monitor(c, n2, "monitoring", mon));
        json_object_put(mon);
    }
out:
    free(n1);
    free(n2);
    json_object_put(prom);
    return rc ? -1 : 0;
}
