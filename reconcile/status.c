/* reconcile/status.c - a collector's status subresource: version, scale,
 * image and the Ready condition (reconcile.md 5.7) (pass.h), and the write
 * a TargetAllocator's status shares with it (ta_run.c).
 *
 * The status is built in full every pass and written with a merge patch
 * only when it is not a subset of the live one (the same rule as objects,
 * compare.c), so an unchanged collector costs no write. The workload's
 * figures come from the apply's answer when there was one, else from the
 * listed workload; the image is the desired one. */
#include "reconcile/pass.h"

#include "base/json.h"
#include "base/sbuf.h"
#include "base/versions.h"
#include "reconcile/compare.h"
#include "reconcile/upgrade.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* "k=v,k=v" of a label map, keys sorted (the reference's labels.String). */
static char *selector_string(json_object *labels) {
    size_t n;
    jkv *m = jsorted_members(labels, &n);
    sbuf s = SBUF_INIT;
    for (size_t i = 0; i < n; i++)
        sbuf_printf(&s, "%s%s=%s", i ? "," : "", m[i].key, json_object_get_string(m[i].val));
    free(m);
    return sbuf_take(&s, NULL);
}

static void now_rfc3339(char out[32]) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void reconcile_write_status(reconcile_pass *r, reconcile_collector *c, const reconcile_render_result *rr,
                            bool rendered, const char *mode) {
    json_object *live = jmap(c->cr, "status");
    json_object *st = jnew_obj();
    const char *lv = jstr(live, "version"), *strategy = jstr(jmap(c->cr, "spec"), "upgradeStrategy");
    bool pinned = strategy && strcmp(strategy, "none") == 0 && lv && *lv; /* not upgraded: not bumped */
    jset_str(st, "version", pinned ? lv : reconcile_status_version(lv, COLLECTOR_VERSION));
    if (rendered && !c->error[0]) {
        json_object *scale = jset_obj(st, "scale");
        if (mode && strcmp(mode, "sidecar") == 0) {
            jset_int(scale, "replicas", 0);
            jset_str(scale, "selector", "");
        } else if (c->workload_desired) {
            char *sel = selector_string(jmap(jmap(c->workload_desired, "metadata"), "labels"));
            json_object *ls = jmap(c->workload_applied ? c->workload_applied : c->workload_live, "status");
            const char *wk = jstr(c->workload_desired, "kind");
            int64_t want = 0, ready = 0;
            if (wk && strcmp(wk, "DaemonSet") == 0) {
                jint(ls, "desiredNumberScheduled", &want);
                jint(ls, "numberReady", &ready);
            } else {
                jint(ls, "replicas", &want);
                jint(ls, "readyReplicas", &ready);
            }
            char sr[64];
            snprintf(sr, sizeof sr, "%lld/%lld", (long long)ready, (long long)want);
            jset_int(scale, "replicas", want);
            jset_str(scale, "selector", sel ? sel : "");
            jset_str(scale, "statusReplicas", sr);
            free(sel);
            /* The desired image, not the listed one: the workload either
             * matched it or was just applied with it, and reading the list
             * from before the apply would cost a second status write. */
            json_object *ctrs = jarr(jmap(jmap(jmap(c->workload_desired, "spec"), "template"), "spec"), "containers");
            const char *image = ctrs ? jstr(json_object_array_get_idx(ctrs, 0), "image") : NULL;
            if (image) jset_str(st, "image", image);
        }
    }
    char path[1024];
    snprintf(path, sizeof path, RECONCILE_COLLECTORS_API "/namespaces/%s/opentelemetrycollectors/%s/status", c->ns,
             c->name);
    reconcile_status_send(r, c, rr, st, path, "");
}

void reconcile_status_send(reconcile_pass *r, reconcile_collector *c, const reconcile_render_result *rr,
                           json_object *st, const char *path, const char *what) {
    json_object *live = jmap(c->cr, "status");
    json_object *conds = jset_arr(st, "conditions");
    json_object *cond = jpush(conds, jnew_obj());
    jset_str(cond, "type", "Ready");
    jset_str(cond, "status", c->error[0] ? "False" : "True");
    jset_str(cond, "reason", c->error[0] ? "ReconcileError" : "Reconciled");
    /* Render warnings (an autoscaler without maxReplicas, spec 7.10, ...)
     * ride on the message: the reference has no other place for them, and
     * a log line alone is what spec 7.20 complains about. */
    char msg[2048] = "Successfully reconciled";
    for (size_t i = 0; !c->error[0] && rr && i < rr->nwarnings; i++) {
        size_t l = strlen(msg);
        snprintf(msg + l, sizeof msg - l, "%s%s", i ? "; " : " with warnings: ", rr->warnings[i]);
    }
    jset_str(cond, "message", c->error[0] ? c->error : msg);
    int64_t gen;
    if (jint(jmap(c->cr, "metadata"), "generation", &gen)) jset_int(st, "observedGeneration", gen);
    if (reconcile_subset(st, live)) goto out;

    /* lastTransitionTime moves only when the condition's status does. */
    json_object *lconds = jarr(live, "conditions");
    const char *ltt = NULL;
    for (size_t i = 0; i < jlen(lconds); i++) {
        json_object *lc = json_object_array_get_idx(lconds, i);
        const char *t = jstr(lc, "type"), *s = jstr(lc, "status");
        if (t && s && strcmp(t, "Ready") == 0 && strcmp(s, jstr(cond, "status")) == 0)
            ltt = jstr(lc, "lastTransitionTime");
    }
    char now[32];
    now_rfc3339(now);
    jset_str(cond, "lastTransitionTime", ltt ? ltt : now);
    r->st->statuses++;
    if (r->o->dry_run) {
        reconcile_logf(r, "would write status %s%s/%s", what, c->ns, c->name);
        goto out;
    }
    json_object *patch = jnew_obj();
    jset(patch, "status", json_object_get(st));
    char err[512] = "", *body = NULL;
    int code = reconcile_request(r, "PATCH", path, "application/merge-patch+json", reconcile_json_text(patch), &body,
                                 NULL, err, sizeof err);
    json_object_put(patch);
    if (code != 200) {
        if (code > 0) reconcile_describe(err, sizeof err, code, body);
        reconcile_logf(r, "error: %s%s/%s: writing the status: %s", what, c->ns, c->name, err);
        if (!c->error[0]) reconcile_collector_fail(c, "writing the status: %s", err);
    }
    free(body);
out:
    json_object_put(st);
}
