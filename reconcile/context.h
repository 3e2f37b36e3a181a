/* reconcile/context.h - what every object builder of one render shares
 * (internal to reconcile/): the defaulted CR, its derived names and hash,
 * and the output list. Builders append to the list and report problems
 * through the context, so the build order lives in one place (render.c). */
#ifndef RECONCILE_CONTEXT_H
#define RECONCILE_CONTEXT_H

#include "reconcile/hash.h"
#include "reconcile/render.h"

#include <json-c/json.h>
#include <stddef.h>

typedef struct reconcile_ctx {
    const reconcile_options *opt;
    json_object *cr;     /* our defaulted copy */
    json_object *spec, *config, *meta;
    const char *name, *ns, *mode;
    char hash[RECONCILE_HASH_HEX];
    char *collector_name; /* <n>-collector: workload, SA, PDB, HPA, base Service */
    char *configmap_name;
    const char *sa_name; /* spec.serviceAccount or collector_name */
    long metrics_port;
    reconcile_render_result *out;
    char *err;
    size_t errlen;
} reconcile_ctx;

/* Appends obj (taken; NULL means OOM and fails the render). */
int reconcile_emit(reconcile_ctx *c, json_object *obj);
void reconcile_warn(reconcile_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sets the render's error (first one wins) and returns -1. */
int reconcile_fail(reconcile_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Selector labels (2.1.2), sorted. */
json_object *reconcile_selector_labels(reconcile_ctx *c);
/* app.kubernetes.io/version from an image string (2.1.3 step 3; the
 * allocator's 5.3 step 3 too): the tag, the digest's name, or "latest". */
char *reconcile_image_version(const char *image);
/* Common labels (2.1.3) for an object called `name`, sorted. */
json_object *reconcile_common_labels(reconcile_ctx *c, const char *name);
/* CR annotations minus the annotations filter (2.1.4), sorted. */
json_object *reconcile_object_annotations(reconcile_ctx *c);
/* {apiVersion, kind, metadata{name, namespace?, labels, annotations?,
 * ownerReferences?}}; labels and annotations taken (may be NULL). */
json_object *reconcile_object(reconcile_ctx *c, const char *api_version, const char *kind, const char *name,
                              int namespaced, json_object *labels, json_object *annotations);
/* The controller ownerReference to the collector, in meta, when the
 * collector's uid is known (2.1.5). */
void reconcile_owner_reference(reconcile_ctx *c, json_object *meta);
/* {matchLabels: selector labels}. */
json_object *reconcile_label_selector(reconcile_ctx *c);

/* The builders, one file each. */
int reconcile_build_workload(reconcile_ctx *c);        /* workload.c */
int reconcile_build_services(reconcile_ctx *c);        /* services.c */
int reconcile_build_ingress(reconcile_ctx *c);         /* exposure.c */
int reconcile_build_routes(reconcile_ctx *c);          /* exposure.c: Routes, HTTPRoutes */
int reconcile_build_rbac(reconcile_ctx *c);            /* rbac.c */
int reconcile_build_monitors(reconcile_ctx *c);        /* monitors.c */
int reconcile_build_targetallocator(reconcile_ctx *c); /* targetallocator.c */
/* The collector has an allocator: its label names one, or it enables its own. */
int reconcile_ta_enabled(reconcile_ctx *c);
/* That allocator serves mTLS (the collector mounts its client certificate). */
int reconcile_ta_mtls(reconcile_ctx *c);
/* The client certificate's volumes and mounts (targetallocator.md 15.3) the
 * collector's pod gets when its allocator serves mTLS. */
void reconcile_ta_client_mounts(reconcile_ctx *c, json_object *volumes, json_object *mounts);
/* *yaml: the ConfigMap text when the collector has an allocator (the
 * prometheus receiver rewritten, 17.1), NULL otherwise. 0, or -1 (failed). */
int reconcile_ta_config_yaml(reconcile_ctx *c, char **yaml);
#endif
