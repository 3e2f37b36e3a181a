/* reconcile/ta_run.c - the TargetAllocator part of a pass (pass.h): what the
 * operator's TargetAllocator controller does (targetallocator.md 18), once
 * per run, after the collectors.
 *
 * After every collector has been reconciled (so the TargetAllocators they
 * generate are applied, and their uids known), the TargetAllocators are
 * LISTed (one paged LIST, every one: a standalone allocator carries no
 * label of ours) and each is bound to its collector (its controller owner,
 * else the collector its label names, 3.4), rendered (ta_render.c),
 * applied and pruned like a collector's objects, and given a status. Then
 * the objects of allocators that are gone are deleted: a cluster's garbage
 * collector does it through their ownerReferences, but not before the next
 * run of ours would have seen them, and a fake API server never does.
 *
 * The API server's endpoints, which the allocator's NetworkPolicy lets it
 * reach (13), are read once per pass and only when an allocator needs a
 * NetworkPolicy: one GET of the kubernetes Service's EndpointSlices in
 * default, as the reference reads them at start-up.
 *
 * Trade-offs:
 * - The reference never prunes an allocator's objects (18.1 step 7; spec
 *   21 item 3); we prune those no longer desired, matched by the
 *   controller ownerReference's uid, as for collectors.
 * - Status: the reference writes only version (with the default image);
 *   we add a Ready condition saying why a build or apply failed (spec 21
 *   items 2 and 16), written only when it changes. */
#include "reconcile/pass.h"

#include "base/json.h"
#include "base/versions.h"
#include "reconcile/compare.h"
#include "reconcile/targetallocator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TA_API "/apis/opentelemetry.io/v1alpha1"
#define SLICES "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dkubernetes"

static void keep_ta(reconcile_pass *r, json_object *ta, void *ctx) {
    (void)r;
    jpush(ctx, json_object_get(ta));
}

/* The API server's endpoint port (named https) and addresses, into opt. */
static int api_server_endpoints(reconcile_pass *r, reconcile_options *opt, json_object **ips, char *err,
                                size_t errlen) {
    json_object *j = reconcile_get_json(r, SLICES, err, errlen);
    if (!j) return -1;
    *ips = jnew_arr();
    json_object *items = jarr(j, "items");
    for (size_t i = 0; i < jlen(items); i++) {
        json_object *s = json_object_array_get_idx(items, i), *ports = jarr(s, "ports"), *eps = jarr(s, "endpoints");
        for (size_t p = 0; p < jlen(ports); p++) {
            json_object *port = json_object_array_get_idx(ports, p);
            const char *n = jstr(port, "name");
            int64_t v;
            if (n && strcmp(n, "https") == 0 && jint(port, "port", &v)) opt->api_server_port = (long)v;
        }
        for (size_t e = 0; e < jlen(eps); e++) {
            json_object *addrs = jarr(json_object_array_get_idx(eps, e), "addresses");
            for (size_t a = 0; a < jlen(addrs); a++) jpush(*ips, jcopy(json_object_array_get_idx(addrs, a)));
        }
    }
    json_object_put(j);
    opt->api_server_ips = *ips;
    return 0;
}

static void write_status(reconcile_pass *r, reconcile_collector *c, const reconcile_render_result *rr) {
    json_object *st = jnew_obj();
    const char *image = jstr(jmap(c->cr, "spec"), "image");
    if (!image || !*image) jset_str(st, "version", TARGET_ALLOCATOR_VERSION);
    char path[1024];
    snprintf(path, sizeof path, TA_API "/namespaces/%s/targetallocators/%s/status", c->ns, c->name);
    reconcile_status_send(r, c, rr, st, path, "TargetAllocator ");
}

/* Whether ta's controller owner is a collector this pass did not list: it
 * is being garbage collected with it. */
static bool owner_gone(reconcile_pass *r, json_object *ta) {
    json_object *m = jmap(ta, "metadata"), *refs = jarr(m, "ownerReferences");
    for (size_t i = 0; i < jlen(refs); i++) {
        json_object *ref = json_object_array_get_idx(refs, i);
        const char *k = jstr(ref, "kind"), *n = jstr(ref, "name");
        if (k && n && strcmp(k, "OpenTelemetryCollector") == 0) {
            char key[600];
            snprintf(key, sizeof key, "%s/%s", jstr(m, "namespace") ? jstr(m, "namespace") : "", n);
            return !json_object_object_get_ex(r->crs, key, NULL);
        }
    }
    return false;
}

/* Returns true when the allocator reconciled (or was left alone). */
static bool reconcile_ta(reconcile_pass *r, json_object *ta, json_object *crs, reconcile_options *opt,
                         json_object **ips, bool *endpoints_read) {
    json_object *m = jmap(ta, "metadata"), *spec = jmap(ta, "spec");
    reconcile_collector c = {.cr = ta, .ns = jstr(m, "namespace"), .name = jstr(m, "name"), .uid = jstr(m, "uid")};
    const char *state = jstr(spec, "managementState");
    if (!c.ns || !c.name || !c.uid) return false;
    jset(r->ta_uids, c.uid, jnew_bool(1));
    if (jstr(m, "deletionTimestamp") || owner_gone(r, ta)) return true;
    if (state && strcmp(state, "unmanaged") == 0) return true;
    c.kept = jnew_obj();
    reconcile_render_result rr = {0};
    char err[512] = "";
    bool rendered = false;
    json_object *col = reconcile_ta_bound_collector(ta, crs, err, sizeof err);
    if (!col && err[0]) {
        reconcile_collector_fail(&c, "%s", err);
    } else {
        if (jbool(jmap(spec, "networkPolicy"), "enabled") && !*endpoints_read) {
            *endpoints_read = true;
            char why[512] = "";
            if (api_server_endpoints(r, opt, ips, why, sizeof why) != 0)
                reconcile_logf(r, "warning: the API server's endpoints (EndpointSlices of default/kubernetes): %s; "
                                  "NetworkPolicy egress allows port %ld anywhere",
                               why, opt->api_server_port);
        }
        rendered = reconcile_render_target_allocator(ta, col, c.ns, opt, &rr, err, sizeof err) == 0;
        if (!rendered) reconcile_collector_fail(&c, "%s", err);
    }
    if (c.error[0]) {
        reconcile_logf(r, "error: TargetAllocator %s/%s: %s", c.ns, c.name, c.error);
    } else {
        for (size_t i = 0; i < rr.nwarnings; i++)
            reconcile_logf(r, "warning: TargetAllocator %s/%s: %s", c.ns, c.name, rr.warnings[i]);
        reconcile_apply_objects(r, &c, rr.objs, rr.nobjs);
        if (!c.error[0]) reconcile_prune(r, &c);
    }
    write_status(r, &c, rendered ? &rr : NULL);
    bool ok = !c.error[0];
    json_object_put(c.workload_applied);
    json_object_put(c.workload_live);
    reconcile_render_result_free(&rr);
    json_object_put(c.kept);
    return ok;
}

void reconcile_run_target_allocators(reconcile_pass *r, json_object *crs, const reconcile_options *base) {
    char path[512], err[512] = "";
    json_object *tas = jnew_arr(), *ips = NULL;
    bool endpoints_read = false;
    reconcile_options opt = *base;
    if (!r->have[RECONCILE_NEED_TA]) goto out;
    if (r->o->ns) snprintf(path, sizeof path, TA_API "/namespaces/%s/targetallocators", r->o->ns);
    else snprintf(path, sizeof path, TA_API "/targetallocators");
    if (reconcile_list(r, path, "opentelemetry.io/v1alpha1", "TargetAllocator", tas, keep_ta, err, sizeof err) != 0) {
        reconcile_logf(r, "error: listing targetallocators: %s", err);
        r->st->failed++;
        goto out;
    }
    for (size_t i = 0; i < jlen(tas) && reconcile_alive(r); i++) {
        json_object *ta = json_object_array_get_idx(tas, i);
        r->st->allocators++;
        if (!reconcile_ta(r, ta, crs, &opt, &ips, &endpoints_read)) r->st->failed++;
    }
    /* The objects of allocators that are gone. */
    json_object_object_foreach(r->ta_owners, uid, v) {
        (void)v;
        if (json_object_object_get_ex(r->ta_uids, uid, NULL)) continue;
        char key[300];
        json_object *keys = NULL;
        snprintf(key, sizeof key, "uid:%s", uid);
        if (!json_object_object_get_ex(r->owned, key, &keys)) continue;
        for (size_t i = 0; i < jlen(keys); i++)
            reconcile_remove_live(r, NULL, json_object_get_string(json_object_array_get_idx(keys, i)));
    }
out:
    json_object_put(ips);
    json_object_put(tas);
}
