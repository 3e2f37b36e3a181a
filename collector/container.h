/* collector/container.h - the one builder of the collector container, for
 * the sidecar the webhook injects and for the workloads otel-reconcile
 * renders (reconcile.md 2.5, mutation.md 4.2-4.7).
 *
 * The reference has one Container() for both, and so do we: mount paths,
 * env, ports, probes and volumes are decided here and nowhere else. The two
 * targets differ only where the reference makes them differ:
 *
 *                     workload                        sidecar
 *   args              --config=/conf/collector.yaml   sorted spec.args (a
 *                     first, then sorted spec.args    "config" key kept),
 *                     without a "config" key          then --config=env:OTEL_CONFIG
 *   config            mounted: otc-internal at /conf  inlined: OTEL_CONFIG env
 *   volumes           otc-internal first              -
 *   restartPolicy     -                               Always when native
 *
 * The resource-attribute env of a sidecar (OTEL_RESOURCE_ATTRIBUTES_*)
 * depends on the pod, not the collector, and is added by the sidecar
 * injector after it. Fields are written in Go's corev1.Container order. */
#ifndef COLLECTOR_CONTAINER_H
#define COLLECTOR_CONTAINER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define COLLECTOR_CONTAINER_NAME "otc-container"

typedef enum collector_target { COLLECTOR_WORKLOAD, COLLECTOR_SIDECAR } collector_target;

typedef struct collector_build_opts {
    collector_target target;
    const char *default_image;    /* for collectors without spec.image */
    const char *configmap;        /* workload: the ConfigMap otc-internal mounts */
    bool native;                  /* sidecar: a native sidecar (init container) */
    const char *const *proxy_env; /* "NAME=value" entries appended to the env */
    size_t nproxy_env;
} collector_build_opts;

/* What one collector adds to a pod. */
typedef struct collector_pod {
    json_object *container;       /* otc-container */
    json_object *volumes;         /* array: what the container mounts, in order */
    json_object *init_containers; /* array: a copy of spec.initContainers; NULL when it has none */
} collector_pod;

/* Builds from collector, a defaulted OpenTelemetryCollector (its config as
 * collector/defaults.h leaves it; the COLLECTOR_DERIVED_* values are used
 * when present). Returns 0 with *out filled, or -1 with a one-line reason
 * in err (the container ports or the config text cannot be built) and
 * *out empty. */
int collector_build(json_object *collector, const collector_build_opts *o, collector_pod *out, char *err,
                    size_t errlen);
void collector_pod_free(collector_pod *p);

/* path.Join("/var/conf", mountpath, name), with path.Clean's rules (".."
 * included): where a spec.configmaps entry is mounted. Malloc'ed. */
char *collector_configmap_path(const char *mountpath, const char *name);

#endif
