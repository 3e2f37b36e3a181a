/* reconcile/run.c - one reconcile pass against the API server (run.h): the
 * driver, the pass's requests and log, and the per-collector loop.
 *
 * Shape of a pass, and why (pass.h names the files):
 *   1. GET /apis once, then LIST the collectors and each owned kind, and
 *      index what is owned by its collector (discover.c).
 *   2. Per collector: render, then apply in dependency order with
 *      server-side apply, skipping what compares unchanged (apply.c,
 *      compare.c). Prune only when every apply succeeded (the reference's
 *      rule: a half-applied collector must not lose its running objects),
 *      then write the status (status.c).
 *   3. Delete the ClusterRoles and bindings of collectors that are gone
 *      (apply.c's sweep). This comes first, before step 2: a collector
 *      deleted and created again under the same name finds its names free.
 *
 * Nothing is written over or deleted that is not ours (owner.c): a name
 * collision fails that collector and leaves the object alone.
 *
 * A run has a budget (run.h: deletions, a deadline, LIST pages and bytes):
 * past it the pass is cut short, every later request is refused, and the
 * run returns 3. A CronJob run that deletes without end, or waits on an
 * API server that answers forever, is worse than one that stops and says
 * so; the next run starts again from what the cluster has.
 *
 * Errors are per collector: a render error, or a failed apply or prune, is
 * written into that collector's Ready condition and counted; the pass goes
 * on with the next collector. */
#include "reconcile/pass.h"

#include "base/json.h"
#include "reconcile/render.h"

#include <json-c/json.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIMEOUT_MS 30000L

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void reconcile_cut(reconcile_pass *r, const char *fmt, ...) {
    if (r->st->cut[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->st->cut, sizeof r->st->cut, fmt, ap);
    va_end(ap);
    reconcile_logf(r, "error: run cut short: %s; nothing more is written in this run", r->st->cut);
}

bool reconcile_alive(reconcile_pass *r) {
    if (r->st->cut[0]) return false;
    if (now_ms() >= r->deadline_ms) {
        reconcile_cut(r, "--deadline %lld s passed", (r->o->deadline_ms ? r->o->deadline_ms : RECONCILE_DEFAULT_DEADLINE_MS) / 1000LL);
        return false;
    }
    return true;
}

void reconcile_logf(reconcile_pass *r, const char *fmt, ...) {
    if (!r->o->log) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(r->o->log, fmt, ap);
    va_end(ap);
    fputc('\n', r->o->log);
}

void reconcile_collector_fail(reconcile_collector *c, const char *fmt, ...) {
    if (c->error[0]) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error, sizeof c->error, fmt, ap);
    va_end(ap);
}

int reconcile_request(reconcile_pass *r, const char *method, const char *path, const char *ctype, const char *body,
                      char **resp, json_object **json, char *err, size_t errlen) {
    size_t len = 0;
    if (!reconcile_alive(r)) {
        *resp = NULL;
        if (json) *json = NULL;
        snprintf(err, errlen, "run cut short: %s", r->st->cut);
        return -1;
    }
    long long left = r->deadline_ms - now_ms();
    r->st->requests++;
    int code = kube_api_request(r->conn, method, path, NULL, ctype, body, body ? strlen(body) : 0,
                                left < TIMEOUT_MS ? (long)left : TIMEOUT_MS, resp, &len, err, errlen);
    if (code < 0 && now_ms() >= r->deadline_ms) reconcile_alive(r);
    if (json) *json = code > 0 && *resp ? json_tokener_parse(*resp) : NULL;
    return code;
}

json_object *reconcile_get_json(reconcile_pass *r, const char *path, char *err, size_t errlen) {
    char *body = NULL;
    json_object *j = NULL;
    int code = reconcile_request(r, "GET", path, NULL, NULL, &body, &j, err, errlen);
    if (code != 200 || !j) {
        if (code > 0) reconcile_describe(err, errlen, code, body);
        json_object_put(j);
        j = NULL;
    }
    free(body);
    return j;
}

void reconcile_describe(char *err, size_t errlen, int code, const char *body) {
    json_object *j = body ? json_tokener_parse(body) : NULL;
    const char *msg = jstr(j, "message");
    snprintf(err, errlen, "%d %s", code, msg ? msg : "(no message)");
    json_object_put(j);
}

/* Returns true when the collector reconciled. */
static bool reconcile_one(reconcile_pass *r, json_object *cr, const reconcile_options *opt) {
    json_object *m = jmap(cr, "metadata"), *spec = jmap(cr, "spec");
    reconcile_collector c = {.cr = cr, .ns = jstr(m, "namespace"), .name = jstr(m, "name"), .uid = jstr(m, "uid")};
    if (!c.ns || !c.name || !c.uid) return false;
    const char *state = jstr(spec, "managementState");
    if (jstr(m, "deletionTimestamp")) return true;
    if (state && strcmp(state, "unmanaged") == 0) {
        r->st->unmanaged++;
        return true;
    }
    c.kept = jnew_obj();
    reconcile_render_result rr = {0};
    char err[512] = "";
    /* A missing allocator: nothing is applied (the reference fails before
     * building), so no ConfigMap points at an allocator that is not there.
     * The one there decides the receiver's mTLS. */
    reconcile_options o = *opt;
    o.target_allocator = reconcile_check_target_allocator(r, &c);
    bool rendered = !c.error[0] && reconcile_render(cr, c.ns, &o, &rr, err, sizeof err) == 0;
    json_object_put(o.target_allocator);
    if (c.error[0]) {
        rendered = false;
    } else if (!rendered) {
        reconcile_collector_fail(&c, "%s", err);
        reconcile_logf(r, "error: %s/%s: %s", c.ns, c.name, err);
    } else {
        for (size_t i = 0; i < rr.nwarnings; i++) reconcile_logf(r, "warning: %s/%s: %s", c.ns, c.name, rr.warnings[i]);
        reconcile_apply_objects(r, &c, rr.objs, rr.nobjs);
        if (!c.error[0]) reconcile_prune(r, &c);
    }
    reconcile_write_status(r, &c, &rr, rendered, jstr(spec, "mode"));
    bool ok = !c.error[0];
    json_object_put(c.workload_applied);
    json_object_put(c.workload_live);
    reconcile_render_result_free(&rr);
    json_object_put(c.kept);
    return ok;
}

int reconcile_run(kube_api *api, const reconcile_run_opts *o, reconcile_run_stats *st) {
    reconcile_pass r = {.o = o, .st = st, .have = {[RECONCILE_NEED_NONE] = true}};
    char err[1024] = "";
    int ret = 2;
    json_object *crs = jnew_arr();
    memset(st, 0, sizeof *st);
    r.deadline_ms = now_ms() + (o->deadline_ms > 0 ? o->deadline_ms : RECONCILE_DEFAULT_DEADLINE_MS);
    r.live = jnew_obj();
    r.owned = jnew_obj();
    r.crs = jnew_obj();
    r.cr_uids = jnew_obj();
    r.ta_owners = jnew_obj();
    r.ta_uids = jnew_obj();
    if (!(r.conn = kube_api_conn_new(api, NULL))) {
        reconcile_logf(&r, "error: cannot set up a connection to the API server");
        goto out;
    }
    if (reconcile_discover(&r, err, sizeof err) != 0) {
        reconcile_logf(&r, "error: discovery (GET /apis): %s", err);
        goto out;
    }
    if (reconcile_list_collectors(&r, crs, err, sizeof err) != 0) {
        reconcile_logf(&r, "error: listing collectors: %s", err);
        goto out;
    }
    err[0] = 0;
    if (reconcile_list_owned(&r, err, sizeof err) != 0) {
        reconcile_logf(&r, "error: %s", err);
        goto out;
    }
    reconcile_options opt;
    reconcile_options_default(&opt);
    opt.prometheus_crds = r.have[RECONCILE_NEED_PROMETHEUS];
    opt.routes = r.have[RECONCILE_NEED_ROUTE];
    opt.gateway = r.have[RECONCILE_NEED_GATEWAY];
    opt.cert_manager = r.have[RECONCILE_NEED_CERT_MANAGER];
    if (o->target_allocator_image) opt.target_allocator_image = o->target_allocator_image;
    st->collectors = json_object_array_length(crs);
    for (size_t i = 0; i < st->collectors; i++) {
        json_object *cr = json_object_array_get_idx(crs, i), *m = jmap(cr, "metadata");
        char key[600];
        /* Being deleted (someone else's finalizer holds it): treated as gone,
         * so its ClusterRoles go now rather than after the finalizer. */
        if (jstr(m, "deletionTimestamp")) continue;
        snprintf(key, sizeof key, "%s/%s", jstr(m, "namespace") ? jstr(m, "namespace") : "",
                 jstr(m, "name") ? jstr(m, "name") : "");
        jset(r.crs, key, jnew_bool(1));
        if (jstr(m, "uid")) jset(r.cr_uids, jstr(m, "uid"), jnew_bool(1));
    }
    /* First: the names a gone collector held are free before a new
     * collector of the same name wants them. */
    reconcile_sweep(&r);
    for (size_t i = 0; i < st->collectors && reconcile_alive(&r); i++)
        if (!reconcile_one(&r, json_object_array_get_idx(crs, i), &opt)) st->failed++;
    /* After the collectors: the allocators they generated are applied. */
    if (reconcile_alive(&r)) reconcile_run_target_allocators(&r, crs, &opt);
    ret = st->failed || r.sweep_failed ? 1 : 0;
out:
    if (st->cut[0]) ret = 3;
    json_object_put(crs);
    json_object_put(r.live);
    json_object_put(r.owned);
    json_object_put(r.crs);
    json_object_put(r.cr_uids);
    json_object_put(r.ta_owners);
    json_object_put(r.ta_uids);
    kube_api_conn_free(r.conn);
    return ret;
}
