/* reconcile/render.h - the desired objects of one OpenTelemetryCollector
 * (reconcile.md 2 to 4), as a pure function: a collector object in, a list
 * of Kubernetes objects out, problems as strings. No I/O and no globals, so
 * `otel-reconcile render` prints it and the future `run` applies it.
 *
 * What the reference learns from the cluster at start-up (may it create
 * ClusterRoles, are the Prometheus, OpenShift Route CRDs there) is passed
 * in reconcile_options; render assumes everything is available. */
#ifndef RECONCILE_RENDER_H
#define RECONCILE_RENDER_H

#include <json-c/json.h>
#include <stddef.h>

typedef struct reconcile_options {
    const char *collector_image; /* the operator's --collector-image */
    int rbac;                    /* may create ClusterRoles and bindings */
    int prometheus_crds;         /* ServiceMonitor and PodMonitor exist */
    int routes;                  /* route.openshift.io exists */
    int gateway;                 /* gateway.networking.k8s.io/v1 exists */
    /* The Target Allocator (targetallocator.h). */
    const char *target_allocator_image; /* the operator's target-allocator-image */
    const char *ta_configmap_entry;     /* its target-allocator-configmap-entry */
    int cert_manager;                   /* cert-manager.io exists (mTLS certificates) */
    int ta_fallback_strategy;           /* gate operator.targetallocator.fallbackstrategy */
    long api_server_port;               /* the API server's endpoint port: NetworkPolicy egress */
    json_object *api_server_ips;        /* its endpoint addresses (strings); NULL: none known */
    /* The TargetAllocator a collector's opentelemetry.io/target-allocator
     * label names, when known (its mTLS decides the receiver rewrite). */
    json_object *target_allocator;
} reconcile_options;

/* Everything available, the default collector image. */
void reconcile_options_default(reconcile_options *o);

typedef struct reconcile_render_result {
    json_object **objs; /* in the reference's build order */
    size_t nobjs;
    char **warnings; /* what a status condition would say; objects still rendered */
    size_t nwarnings;
} reconcile_render_result;

/* Renders collector (not modified; v1beta1 or v1alpha1) into *out. ns is
 * the namespace when the object names none. Returns 0, or -1 with a
 * one-line reason in err and *out empty. */
int reconcile_render(json_object *collector, const char *ns, const reconcile_options *opt,
                     reconcile_render_result *out, char *err, size_t errlen);
void reconcile_render_result_free(reconcile_render_result *r);
#endif
