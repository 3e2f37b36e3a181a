/* reconcile/apply.c - the writes of a pass to a collector's objects:
 * server-side apply, recreate, prune, and the sweep of gone collectors'
 * cluster-scoped objects (pass.h).
 *
 * Objects are applied in dependency order (ServiceAccount, ConfigMap, RBAC
 * and Services before the workload, so pods do not start against a
 * missing mount or account) with server-side apply; one that compares
 * unchanged (compare.c) is not sent. A workload change the API server
 * refuses in place (immutable fields) is a delete and an apply in the same
 * pass. Prune only when every apply succeeded (the reference's rule: a
 * half-applied collector must not lose its running objects; run.c holds
 * that rule).
 *
 * The ClusterRoles and bindings of collectors that are gone are deleted by
 * the sweep at the start of the pass (the reference needs a finalizer for
 * this; we see it on the next run).
 *
 * Nothing is written over or deleted that is not ours (owner.c). Before a
 * write the object is read (GET): absent, it is created; ours, applied;
 * anyone else's, left alone and the collector fails with "name collision:"
 * (the reference takes such an object over). Every DELETE carries the uid
 * read in the LIST or GET as a precondition, so an object replaced since is
 * not deleted (the API server answers 409; we log it and go on), and is
 * counted against the run's --max-deletions.
 *
 * With --dry-run every decision is the same and only the writes are left
 * out: each is said instead (would create, would update with the changed
 * fields, would recreate, would delete). */
#include "reconcile/pass.h"

#include "base/alloc.h"
#include "base/json.h"
#include "reconcile/compare.h"
#include "reconcile/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct ranked {
    json_object *obj;
    int rank;
    size_t pos; /* qsort is not stable: build order breaks ties */
} ranked;

static int by_rank(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->rank != y->rank) return x->rank < y->rank ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

#define RECREATE_POLLS 40 /* 250 ms apart: 10 s for the old object to go */

/* DELETE path?query of the object whose uid we read: the uid is a
 * precondition (DeleteOptions), so a replaced object answers 409 and
 * stays. Counted against --max-deletions, which cuts the run short when
 * this one would pass it (-1 then, as for no answer). The status, or -1
 * with err; *body as reconcile_request. */
static int delete_object(reconcile_pass *r, const char *path, const char *query, const char *uid, char **body,
                         char *err, size_t errlen) {
    long max = r->o->max_deletions > 0 ? r->o->max_deletions : RECONCILE_DEFAULT_MAX_DELETIONS;
    *body = NULL;
    if (!uid || !*uid) {
        snprintf(err, errlen, "no uid was read for it, so it is not deleted");
        return -1;
    }
    if (r->deletions >= max) {
        reconcile_cut(r, "--max-deletions %ld reached", max);
        snprintf(err, errlen, "run cut short: %s", r->st->cut);
        return -1;
    }
    r->deletions++;
    if (r->o->dry_run) return 200;
    char url[1200], opts[400];
    snprintf(url, sizeof url, "%s%s%s", path, query ? "?" : "", query ? query : "");
    json_object *o = jnew_obj();
    jset_str(o, "apiVersion", "v1");
    jset_str(o, "kind", "DeleteOptions");
    jset_str(jset_obj(o, "preconditions"), "uid", uid);
    snprintf(opts, sizeof opts, "%s", reconcile_json_text(o));
    json_object_put(o);
    return reconcile_request(r, "DELETE", url, "application/json", opts, body, NULL, err, errlen);
}

/* Deletes the object at path so that it can be created again with fields
 * the API server will not change in place, and waits until it is gone
 * (an Orphan delete holds the object until the garbage collector has
 * released its pods). 0, or -1 with err. */
static int delete_for_recreate(reconcile_pass *r, const char *path, const char *uid, bool orphan, char *err,
                               size_t errlen) {
    char *body = NULL;
    int code = delete_object(r, path, orphan ? "propagationPolicy=Orphan" : "propagationPolicy=Background", uid, &body,
                             err, errlen);
    if (code == 409) {
        char why[400];
        reconcile_describe(why, sizeof why, code, body);
        snprintf(err, errlen, "it was replaced since it was read, so it is not deleted: %s", why);
        free(body);
        return -1;
    }
    if (code != 200 && code != 202 && code != 404) {
        if (code > 0) reconcile_describe(err, errlen, code, body);
        free(body);
        return -1;
    }
    free(body);
    for (int i = 0; i < RECREATE_POLLS; i++) {
        body = NULL;
        json_object *j = NULL;
        code = reconcile_request(r, "GET", path, NULL, NULL, &body, &j, err, errlen);
        free(body);
        const char *now = jstr(jmap(j, "metadata"), "uid");
        bool other = code == 200 && (!now || strcmp(now, uid) != 0);
        json_object_put(j);
        if (code == 404) return 0;
        if (other) { /* someone else's object took the name meanwhile */
            snprintf(err, errlen, "another object of this name was created while the old one was going; it is "
                                  "left alone");
            return -1;
        }
        if (code != 200) {
            if (code > 0) snprintf(err, errlen, "%d while waiting for the old object to go", code);
            return -1;
        }
        struct timespec ts = {0, 250 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    snprintf(err, errlen, "the old object is still being deleted; it is created again on the next run");
    return -1;
}

/* Asks the API server, without writing, whether obj would be accepted as
 * a new object (validation, admission webhooks and policies all run on a
 * dry-run create): only then is the old one deleted, so that a refusal
 * does not leave the collector with no workload. The object exists, so
 * the answer to watch for is 409 AlreadyExists, which the storage gives
 * after everything else passed. 0, or -1 with err. */
static int would_create(reconcile_pass *r, const reconcile_kind *k, const char *ns, json_object *obj, char *err,
                        size_t errlen) {
    char url[1100], *body = NULL;
    reconcile_collection_path(url, sizeof url, k, ns);
    size_t l = strlen(url);
    snprintf(url + l, sizeof url - l, "?dryRun=All&fieldManager=" RECONCILE_FIELD_MANAGER);
    int code = reconcile_request(r, "POST", url, "application/json", reconcile_json_text(obj), &body, NULL, err,
                                 errlen);
    if (code == 409 || code == 200 || code == 201) {
        free(body);
        return 0;
    }
    if (code > 0) {
        char why[400];
        reconcile_describe(why, sizeof why, code, body);
        snprintf(err, errlen, "the new object would be refused, so the old one stays: %s", why);
    }
    free(body);
    return -1;
}

/* What an apply would do, and to which fields: "would create" for an object
 * that does not exist, "would update" or "would recreate" (with why) for
 * one that does, followed by the fields that differ (diff.h). */
static void dry_run_apply(reconcile_pass *r, reconcile_collector *c, const reconcile_kind *k, json_object *obj,
                          json_object *live, const char *immutable) {
    const char *kind = jstr(obj, "kind"), *name = jstr(jmap(obj, "metadata"), "name");
    const char *ns = k->namespaced ? c->ns : "", *slash = k->namespaced ? "/" : "";
    if (!live) {
        reconcile_logf(r, "would create %s %s%s%s", kind, ns, slash, name);
        return;
    }
    char *fields = reconcile_diff_text(obj, live);
    size_t n = strlen(fields);
    if (n) fields[n - 1] = '\0'; /* reconcile_logf ends the line */
    if (immutable) reconcile_logf(r, "would recreate %s %s%s%s (%s):\n%s", kind, ns, slash, name, immutable, fields);
    else reconcile_logf(r, "would update %s %s%s%s:\n%s", kind, ns, slash, name, fields);
    free(fields);
}

/* A name collision: obj's name is taken by someone else's object, which is
 * left alone; c fails with why (the Ready condition says it). */
static void collision(reconcile_pass *r, reconcile_collector *c, const reconcile_kind *k, const char *name,
                      const char *why) {
    const char *ns = k->namespaced ? c->ns : "", *slash = k->namespaced ? "/" : "";
    r->st->collisions++;
    reconcile_collector_fail(c, "name collision: %s %s%s%s exists and is not ours (%s); it is left alone", k->kind, ns,
                             slash, name, why);
    reconcile_logf(r, "warning: %s/%s: name collision: %s %s%s%s exists and is not ours (%s); left alone", c->ns,
                   c->name, k->kind, ns, slash, name, why);
}

/* GET path: 0 with *cur (NULL: absent), or -1 with err. */
static int read_current(reconcile_pass *r, const char *path, json_object **cur, char *err, size_t errlen) {
    char *body = NULL;
    *cur = NULL;
    int code = reconcile_request(r, "GET", path, NULL, NULL, &body, cur, err, errlen);
    if (code == 200 && *cur && json_object_is_type(*cur, json_type_object)) {
        free(body);
        return 0;
    }
    json_object_put(*cur);
    *cur = NULL;
    if (code == 404) {
        free(body);
        return 0;
    }
    if (code > 0) reconcile_describe(err, errlen, code, body);
    free(body);
    return -1;
}

static void apply_one(reconcile_pass *r, reconcile_collector *c, json_object *obj) {
    const char *api = jstr(obj, "apiVersion"), *kind = jstr(obj, "kind");
    const reconcile_kind *k = reconcile_kind_of(api, kind);
    json_object *m = jmap(obj, "metadata");
    const char *name = jstr(m, "name");
    char key[768], path[1024], url[1100], err[512] = "", why[512] = "";
    if (!k || !r->have[k->need]) {
        const char *why = k ? reconcile_needs[k->need].why : "this kind is not applied by otel-reconcile run";
        reconcile_collector_fail(c, "%s %s: %s", kind ? kind : "?", name ? name : "?", why);
        reconcile_logf(r, "error: %s/%s: %s %s not applied: %s", c->ns, c->name, kind ? kind : "?", name ? name : "?",
                       why);
        return;
    }
    if (!k->namespaced) {
        char owner[600];
        snprintf(owner, sizeof owner, "%s/%s", c->ns, c->name);
        json_object *ann = jobj_at(m, "annotations");
        jset_str(ann, RECONCILE_OWNER_ANNOTATION, owner);
        jset_str(ann, RECONCILE_OWNER_UID_ANNOTATION, c->uid);
    }
    reconcile_stamp_digest(obj);

    snprintf(key, sizeof key, "%s/%s/%s", k->plural, k->namespaced ? c->ns : "", name);
    json_object *live = reconcile_live_get(r, key);
    if (live && !reconcile_owner_is_ours(k, live, c->ns, c->name, c->uid, why, sizeof why)) {
        collision(r, c, k, name, why);
        json_object_put(live);
        return;
    }
    if (live) jset(c->kept, key, jnew_bool(1));
    bool workload = k->rank == RECONCILE_RANK_WORKLOAD && !c->workload_desired;
    if (workload) {
        c->workload_desired = obj;
        c->workload_live = json_object_get(live);
    }
    if (live && reconcile_subset(obj, live)) {
        r->st->unchanged++;
        json_object_put(live);
        return;
    }
    reconcile_collection_path(path, sizeof path, k, k->namespaced ? c->ns : NULL);
    size_t pl = strlen(path);
    snprintf(path + pl, sizeof path - pl, "/%s", name);
    /* About to write: what is there now? Listed by our label is no proof,
     * and not listed is no proof of absence (the name may be taken by an
     * object without our label). */
    json_object *cur = NULL;
    if (read_current(r, path, &cur, err, sizeof err) != 0) {
        reconcile_collector_fail(c, "reading %s %s: %s", kind, name, err);
        reconcile_logf(r, "error: %s/%s: reading %s %s: %s", c->ns, c->name, kind, name, err);
        json_object_put(live);
        return;
    }
    if (cur && !reconcile_owner_is_ours(k, cur, c->ns, c->name, c->uid, why, sizeof why)) {
        collision(r, c, k, name, why);
        json_object_put(cur);
        json_object_put(live);
        return;
    }
    if (!live && cur) { /* ours, but not listed (our label removed) */
        live = cur;
        cur = NULL;
    }
    char uid[200]; /* what a recreate's delete is conditioned on */
    const char *u = jstr(jmap(cur ? cur : live, "metadata"), "uid");
    snprintf(uid, sizeof uid, "%s", u ? u : "");
    json_object_put(cur);
    bool orphan = false;
    const char *immutable =
        k->rank == RECONCILE_RANK_WORKLOAD ? reconcile_immutable_change(obj, live, &orphan) : NULL;
    r->st->applied++;
    if (r->o->dry_run) {
        dry_run_apply(r, c, k, obj, live, immutable);
        json_object_put(live);
        return;
    }
    json_object_put(live); /* immutable points into static strings only */
    snprintf(url, sizeof url, "%s?fieldManager=" RECONCILE_FIELD_MANAGER "&force=true", path);
    char *body = NULL;
    int code = 0;
    bool recreated = false;
    /* Twice at most: an immutable change of a workload we did not see
     * coming (the server's 422) gets one delete and one more apply. */
    for (int attempt = 0; attempt < 2; attempt++) {
        if (immutable) {
            free(body);
            body = NULL;
            reconcile_logf(r, "recreating %s %s/%s: %s (%s)", kind, c->ns, name, immutable,
                           orphan ? "Orphan delete: its pods wait for the new one"
                                  : "Background delete: its pods go with it");
            if (would_create(r, k, c->ns, obj, err, sizeof err) != 0 ||
                delete_for_recreate(r, path, uid, orphan, err, sizeof err) != 0) {
                reconcile_collector_fail(c, "recreating %s %s (%s): %s", kind, name, immutable, err);
                reconcile_logf(r, "error: %s/%s: recreating %s %s: %s", c->ns, c->name, kind, name, err);
                return;
            }
            r->st->recreated++;
            recreated = true;
        }
        code = reconcile_request(r, "PATCH", url, "application/apply-patch+yaml", reconcile_json_text(obj), &body,
                                 NULL, err, sizeof err);
        if (attempt == 0 && !immutable && k->rank == RECONCILE_RANK_WORKLOAD &&
            reconcile_immutable_refusal(code, body)) {
            immutable = "the API server refused an immutable change";
            orphan = strcmp(kind, "StatefulSet") == 0;
            continue;
        }
        break;
    }
    if (code == 200 || code == 201) {
        reconcile_logf(r, "applied %s %s%s%s", kind, k->namespaced ? c->ns : "", k->namespaced ? "/" : "", name);
        /* The answer is the object as it is now: its status is fresher
         * than the listed one, except for one just created again, whose
         * status is empty while the pods it adopts are still running. */
        if (workload && !recreated) c->workload_applied = body ? json_tokener_parse(body) : NULL;
    } else {
        if (code > 0) reconcile_describe(err, sizeof err, code, body);
        reconcile_collector_fail(c, "applying %s %s: %s", kind, name, err);
        reconcile_logf(r, "error: %s/%s: applying %s %s: %s", c->ns, c->name, kind, name, err);
    }
    free(body);
}

void reconcile_apply_objects(reconcile_pass *r, reconcile_collector *c, json_object **objs, size_t n) {
    ranked *order = xcalloc(n + 1, sizeof *order);
    for (size_t i = 0; i < n; i++) {
        const reconcile_kind *k = reconcile_kind_of(jstr(objs[i], "apiVersion"), jstr(objs[i], "kind"));
        order[i] = (ranked){objs[i], k ? k->rank : 99, i};
    }
    qsort(order, n, sizeof *order, by_rank);
    for (size_t i = 0; i < n; i++) apply_one(r, c, order[i].obj);
    free(order);
}

/* Deletes the listed object under key ("plural/ns/name": list items carry
 * no kind, so the plural names it). A failure fails c (NULL: the sweep). */
void reconcile_remove_live(reconcile_pass *r, reconcile_collector *c, const char *key) {
    char path[1024], err[512] = "", *body = NULL, nsbuf[256];
    const reconcile_kind *k = NULL;
    size_t plen = strcspn(key, "/");
    for (size_t i = 0; i < reconcile_nkinds; i++)
        if (strlen(reconcile_kinds[i].plural) == plen && strncmp(key, reconcile_kinds[i].plural, plen) == 0)
            k = &reconcile_kinds[i];
    /* Neither names nor namespaces contain '/'. */
    const char *nsp = key[plen] ? key + plen + 1 : key + plen, *name = strchr(nsp, '/');
    if (!k || !name || (size_t)(name - nsp) >= sizeof nsbuf) return;
    memcpy(nsbuf, nsp, (size_t)(name - nsp));
    nsbuf[name - nsp] = '\0';
    name++;
    const char *ns = nsbuf[0] ? nsbuf : NULL;
    json_object *live = reconcile_live_get(r, key);
    char uid[200];
    const char *u = jstr(jmap(live, "metadata"), "uid");
    snprintf(uid, sizeof uid, "%s", u ? u : "");
    json_object_put(live);
    reconcile_collection_path(path, sizeof path, k, k->namespaced ? ns : NULL);
    size_t pl = strlen(path);
    snprintf(path + pl, sizeof path - pl, "/%s", name);
    int code = delete_object(r, path, NULL, uid, &body, err, sizeof err);
    /* Gone (or as good as, in a dry run): a later apply of the name in this
     * pass creates it, rather than seeing the deleted one. */
    if (r->o->dry_run && code == 200) {
        r->st->pruned++;
        reconcile_logf(r, "would delete %s %s%s%s", k->kind, ns ? ns : "", ns ? "/" : "", name);
        json_object_object_del(r->live, key);
        return;
    }
    if (code == 200 || code == 202 || code == 404) {
        json_object_object_del(r->live, key);
        r->st->pruned++;
        reconcile_logf(r, "pruned %s %s%s%s", k->kind, ns ? ns : "", ns ? "/" : "", name);
    } else if (code == 409) {
        /* The uid precondition failed: what has this name now was created
         * after our LIST, by someone else or by us; not ours to delete. */
        reconcile_describe(err, sizeof err, code, body);
        reconcile_logf(r, "warning: not deleting %s %s%s%s: it was replaced since it was listed (%s)", k->kind,
                       ns ? ns : "", ns ? "/" : "", name, err);
    } else {
        if (code > 0) reconcile_describe(err, sizeof err, code, body);
        if (c) reconcile_collector_fail(c, "pruning %s %s: %s", k->kind, name, err);
        else r->sweep_failed = true;
        reconcile_logf(r, "error: pruning %s %s%s%s: %s", k->kind, ns ? ns : "", ns ? "/" : "", name, err);
    }
    free(body);
}

typedef struct aged {
    const char *key;
    char created[40];
} aged;

static int newest_first(const void *a, const void *b) {
    const aged *x = a, *y = b;
    int d = strcmp(y->created, x->created);
    return d ? d : strcmp(x->key, y->key);
}

/* Owned objects that are not desired go, except the newest
 * max(configVersions, 1) older ConfigMaps (kept for rollbacks, as the
 * reference keeps them; see docs/compat.md for the count). */
void reconcile_prune(reconcile_pass *r, reconcile_collector *c) {
    json_object *keys = NULL;
    char ok[700];
    /* One index for both scopes, by uid: a TargetAllocator of the
     * collector's name (the one it generates) never reaches the
     * collector's ClusterRoles, which a by-name index once let it prune. */
    snprintf(ok, sizeof ok, "uid:%s", c->uid);
    json_object_object_get_ex(r->owned, ok, &keys);
    int64_t versions = 3;
    jint(jmap(c->cr, "spec"), "configVersions", &versions);
    if (versions < 1) versions = 1;
    size_t n = keys ? json_object_array_length(keys) : 0, ncm = 0;
    aged *cms = xcalloc(n + 1, sizeof *cms);
    json_object *lists[1] = {keys};
    for (int l = 0; l < 1; l++)
        for (size_t i = 0; lists[l] && i < json_object_array_length(lists[l]); i++) {
            const char *key = json_object_get_string(json_object_array_get_idx(lists[l], i));
            if (json_object_object_get_ex(c->kept, key, NULL)) continue;
            if (strncmp(key, "configmaps/", 11) == 0) {
                json_object *live = reconcile_live_get(r, key);
                const char *ts = jstr(jmap(live, "metadata"), "creationTimestamp");
                cms[ncm].key = key;
                snprintf(cms[ncm++].created, sizeof cms->created, "%s", ts ? ts : "");
                json_object_put(live);
                continue;
            }
            reconcile_remove_live(r, c, key);
        }
    qsort(cms, ncm, sizeof *cms, newest_first);
    for (size_t i = (size_t)versions; i < ncm; i++) reconcile_remove_live(r, c, cms[i].key);
    free(cms);
}

/* ClusterRoles and bindings whose collector (by the uid annotation) is not
 * listed any more, or is being deleted. */
void reconcile_sweep(reconcile_pass *r) {
    json_object_object_foreach(r->owned, okey, keys) {
        if (strncmp(okey, "uid:", 4) != 0 || json_object_object_get_ex(r->cr_uids, okey + 4, NULL)) continue;
        for (size_t i = 0; i < json_object_array_length(keys) && reconcile_alive(r); i++) {
            const char *key = json_object_get_string(json_object_array_get_idx(keys, i));
            if (strncmp(key, "clusterrole", 11) != 0) continue; /* namespaced: the garbage collector's */
            if (r->o->ns) { /* only what belongs to the namespace this run covers */
                json_object *live = reconcile_live_get(r, key);
                const char *cr = jstr(jmap(jmap(live, "metadata"), "annotations"), RECONCILE_OWNER_ANNOTATION);
                size_t l = strlen(r->o->ns);
                bool mine = cr && strncmp(cr, r->o->ns, l) == 0 && cr[l] == '/';
                json_object_put(live);
                if (!mine) continue;
            }
            reconcile_remove_live(r, NULL, key);
        }
    }
}
