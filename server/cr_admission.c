/* server/cr_admission.c - the custom resources' admission answers; see
 * cr_admission.h.
 *
 * The answers follow controller-runtime's (cr-admission.md 1.3):
 *  - mutating, unchanged: allowed, nothing else; changed: allowed with a
 *    JSONPatch. Our patch is the difference between the object and its
 *    defaulted copy (mutate_patch_diff), not the reference's re-serialised
 *    struct, so it adds only what the defaulting adds (spec 8.18);
 *  - validating, allowed: allowed, status code 200, warnings;
 *  - a rule refuses (either kind): allowed false, code 403, reason
 *    Forbidden, the rule's message, and the warnings found before it;
 *  - an object that does not decode (not an object, another kind, a field
 *    of the wrong type): allowed false, code 400 and why. A body that is
 *    not an AdmissionReview at all gets HTTP 400 from the codec;
 *  - DELETE of a collector or an OpAMPBridge, and CONNECT, are allowed
 *    (code 200) without a look at the object: a stored object must stay
 *    deletable (spec 8.2). An Instrumentation's DELETE is validated like a
 *    create, as in the reference, whose tests pin it. Any other operation
 *    is the reference's 400 `unknown operation`;
 *  - a review whose JSON would take more memory than env->max_tree
 *    (--max-tree-bytes) is never built (server/review.c): what would read
 *    its object refuses it, allowed false, code 413 and why; an
 *    Instrumentation's DELETE is allowed with a warning instead, and what
 *    never reads the object (the other DELETEs, CONNECT) is answered as
 *    always.
 * The validating webhook checks the object as the API server sent it,
 * after the mutating webhooks, as the reference does.
 *
 * Warnings carry no prefix: they are the reference's texts, which users
 * and scripts may match. The privilege-escalation check asks the API
 * server through the live source's connection of the calling thread
 * (blocking, within env->review_budget): the server calls this for a
 * collector's validation on a worker thread, never on an event loop
 * (server/serve_cr.c). */
#include "server/cr_admission.h"

#include "base/alloc.h"
#include "base/json.h"
#include "base/jtext.h"
#include "collector/defaults.h"
#include "collector/shape.h"
#include "collector/validate.h"
#include "kube/livesource.h"
#include "mutate/defaults.h"
#include "mutate/inst_validate.h"
#include "mutate/mutate.h"
#include "mutate/opampbridge.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The one place each route's path is written: cr_admission_path and
 * cr_admission_route read it, and everything else (the log, the fuzzer)
 * reads those. */
static const struct {
    const char *path, *api_version, *kind;
    metrics_cr_kind metric;
    bool mutating;
} routes[CR_NROUTES] = {
    [CR_MUTATE_COLLECTOR] = {"/mutate-opentelemetry-io-v1beta1-opentelemetrycollector", "opentelemetry.io/v1beta1",
                             "OpenTelemetryCollector", CR_KIND_COLLECTOR, true},
    [CR_VALIDATE_COLLECTOR] = {"/validate-opentelemetry-io-v1beta1-opentelemetrycollector", "opentelemetry.io/v1beta1",
                               "OpenTelemetryCollector", CR_KIND_COLLECTOR, false},
    [CR_MUTATE_INSTRUMENTATION] = {"/mutate-opentelemetry-io-v1alpha1-instrumentation", "opentelemetry.io/v1alpha1",
                                   "Instrumentation", CR_KIND_INSTRUMENTATION, true},
    [CR_VALIDATE_INSTRUMENTATION] = {"/validate-opentelemetry-io-v1alpha1-instrumentation", "opentelemetry.io/v1alpha1",
                                     "Instrumentation", CR_KIND_INSTRUMENTATION, false},
    [CR_MUTATE_OPAMPBRIDGE] = {"/mutate-opentelemetry-io-v1alpha1-opampbridge", "opentelemetry.io/v1alpha1",
                               "OpAMPBridge", CR_KIND_OPAMPBRIDGE, true},
    [CR_VALIDATE_OPAMPBRIDGE] = {"/validate-opentelemetry-io-v1alpha1-opampbridge", "opentelemetry.io/v1alpha1",
                                 "OpAMPBridge", CR_KIND_OPAMPBRIDGE, false},
};

const char *cr_admission_path(cr_route route) {
    return routes[route].path;
}

int cr_admission_route(const char *path, size_t len) {
    for (int r = 0; r < CR_NROUTES; r++)
        if (strlen(routes[r].path) == len && !memcmp(routes[r].path, path, len)) return r;
    return -1;
}

static double now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static metrics_cr_op op_of(const char *op) {
    static const char *const names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
    for (int i = 0; op && i < 4; i++)
        if (!strcmp(op, names[i])) return (metrics_cr_op)i;
    return CR_OP_OTHER;
}

/* ---- answers -------------------------------------------------------------- */

static void allow(cr_out *out, const review_request *rq, int code, const char *patch, const verdict *v,
                  metrics_cr_result result) {
    review_answer a = {.allowed = true, .code = code, .patch_b64 = patch};
    if (v) a.warnings = v->warnings, a.nwarnings = v->nwarnings;
    out->nwarnings = a.nwarnings;
    out->result = result;
    review_respond(&out->r, rq, &a);
}

static void deny(cr_out *out, const review_request *rq, const verdict *v) {
    review_answer a = {.allowed = false, .code = 403, .reason = "Forbidden", .message = v->message,
                       .warnings = v->warnings, .nwarnings = v->nwarnings};
    out->nwarnings = v->nwarnings;
    out->result = CR_DENIED;
    out->rule = v->rule;
    snprintf(out->message, sizeof out->message, "%s", v->message);
    review_respond(&out->r, rq, &a);
}

/* The reference's answer to an object its decoder refuses. */
static void undecodable(cr_out *out, const review_request *rq, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void undecodable(cr_out *out, const review_request *rq, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *msg = xvasprintf(fmt, ap);
    va_end(ap);
    review_answer a = {.allowed = false, .code = 400, .message = msg};
    out->result = CR_REJECTED;
    snprintf(out->message, sizeof out->message, "%s", msg);
    review_respond(&out->r, rq, &a);
    free(msg);
}

/* A review whose tree would pass the budget (rq->over: only its names were
 * read) is refused where its object would have been read: fail closed, as
 * the reference fails on a body it cannot decode, with a code saying why
 * (413, as the API server's own answer to a request too large). */
static void too_large(cr_out *out, const review_request *rq, const cr_env *env) {
    char *msg = review_over_message("AdmissionReview", env->max_tree, "(--max-tree-bytes); refused unread");
    review_answer a = {.allowed = false, .code = 413, .reason = "RequestEntityTooLarge", .message = msg};
    out->result = CR_REJECTED;
    out->rule = "tree_bytes"; /* for the log: the bound, as a pod's warning names it */
    snprintf(out->message, sizeof out->message, "%s", msg);
    review_respond(&out->r, rq, &a);
    free(msg);
}

/* rq's object under `which` ("object", "oldObject"), when it is one of the
 * route's kind whose fields have the types the checks read; NULL after
 * answering 400. */
static json_object *decodable(cr_out *out, const review_request *rq, cr_route route, json_object *o, const char *which) {
    if (!json_object_is_type(o, json_type_object)) {
        undecodable(out, rq, "request.%s is missing or not an object", which);
        return NULL;
    }
    const char *api = jstr(o, "apiVersion"), *kind = jstr(o, "kind");
    if (!api || !kind || strcmp(api, routes[route].api_version) || strcmp(kind, routes[route].kind)) {
        undecodable(out, rq, "request.%s: expected an %s %s, got %s%s%s", which, routes[route].api_version,
                    routes[route].kind, api ? api : "no apiVersion", " ", kind ? kind : "no kind");
        return NULL;
    }
    char *bad = routes[route].metric == CR_KIND_COLLECTOR         ? collector_check_shape(o)
                : routes[route].metric == CR_KIND_INSTRUMENTATION ? mutate_check_instrumentation_shape(o)
                                                                  : mutate_check_opampbridge_shape(o);
    if (bad) {
        undecodable(out, rq, "request.%s: %s", which, bad);
        free(bad);
        return NULL;
    }
    return o;
}

/* A deep copy of a collector whose spec.config is the original's own (a
 * reference taken): the defaulting replaces the config with a defaulted
 * copy of its own (collector_default_spec) and never writes into it, so a
 * second copy of the largest part of the object (spec.config preserves
 * unknown fields) is not needed. Copying it too made a collector's
 * defaulting hold 2.8 times its tree, 1.9 times now. */
static json_object *copy_sharing_config(json_object *o) {
    json_object *spec = jget(o, "spec"), *config = jget(spec, "config");
    if (!json_object_is_type(o, json_type_object) || !json_object_is_type(spec, json_type_object) || !config)
        return jcopy(o);
    json_object *copy = jnew_obj();
    json_object_object_foreach(o, k, v) {
        if (v != spec) {
            jset(copy, k, jcopy(v));
            continue;
        }
        json_object *sc = jset_obj(copy, k);
        json_object_object_foreach(spec, sk, sv) jset(sc, sk, sv == config ? json_object_get(config) : jcopy(sv));
    }
    return copy;
}

/* A defaulted copy of o, or NULL with the reason in v. */
static json_object *defaulted(const mutate_settings *settings, metrics_cr_kind kind, json_object *o, verdict *v) {
    json_object *copy = kind == CR_KIND_COLLECTOR ? copy_sharing_config(o) : jcopy(o);
    char err[1024] = "";
    int rc = kind == CR_KIND_COLLECTOR         ? collector_default_spec(copy, err, sizeof err)
             : kind == CR_KIND_INSTRUMENTATION ? mutate_default_instrumentation(copy, settings, err, sizeof err)
                                               : mutate_default_opampbridge(copy, err, sizeof err);
    if (rc == 0) return copy;
    json_object_put(copy);
    verdict_deny(v, "defaulting", "%s", err);
    return NULL;
}

/* ---- the authorizer -------------------------------------------------------- */

typedef struct authz {
    const cr_env *env;
    double deadline;
} authz;

static int sar_allowed(void *ud, const collector_subject *who, const char *verb, const char *group, const char *resource,
                       const char *path, char *err, size_t errlen) {
    authz *a = ud;
    if (a->env->no_reviews) {
        snprintf(err, errlen, "%s", a->env->no_reviews);
        return -1;
    }
    json_object *spec = jnew_obj();
    jset_str(spec, "user", who->user);
    if (who->uid && *who->uid) jset_str(spec, "uid", who->uid);
    if (who->ngroups) {
        json_object *g = jset_arr(spec, "groups");
        for (size_t i = 0; i < who->ngroups; i++) jpush(g, jnew_str(who->groups[i]));
    }
    if (who->extra) jset(spec, "extra", jcopy(who->extra));
    if (resource) {
        json_object *ra = jset_obj(spec, "resourceAttributes");
        const char *slash = strchr(resource, '/');
        jset_str(ra, "verb", verb);
        jset_str(ra, "group", group);
        if (slash) {
            jset(ra, "resource", jnew_strn(resource, (size_t)(slash - resource)));
            jset_str(ra, "subresource", slash + 1);
        } else {
            jset_str(ra, "resource", resource);
        }
    } else {
        json_object *na = jset_obj(spec, "nonResourceAttributes");
        jset_str(na, "verb", verb);
        jset_str(na, "path", path);
    }
    int rc = kube_livesource_access_review(a->env->live, spec, a->deadline, err, errlen);
    json_object_put(spec);
    return rc;
}

/* ---- the handlers ------------------------------------------------------------ */

static void handle_mutating(const cr_env *env, cr_route route, const review_request *rq, cr_out *out) {
    if (out->op != CR_OP_CREATE && out->op != CR_OP_UPDATE) {
        /* No rule routes anything else here; the reference allows it. */
        allow(out, rq, 200, NULL, NULL, CR_UNCHANGED);
        return;
    }
    if (rq->over) {
        too_large(out, rq, env);
        return;
    }
    json_object *o = decodable(out, rq, route, rq->object, "object");
    if (!o) return;
    verdict v = VERDICT_INIT;
    /* Before the defaulting: once defaulted, the v1alpha1 round trip drops
     * the annotation that says the config did not read. */
    if (routes[route].metric == CR_KIND_COLLECTOR && collector_check_unread_config(o, &v) != 0) {
        deny(out, rq, &v);
        verdict_free(&v);
        return;
    }
    json_object *d = defaulted(env->settings, routes[route].metric, o, &v);
    if (!d) {
        deny(out, rq, &v);
        verdict_free(&v);
        return;
    }
    json_object *ops = jnew_arr();
    mutate_patch_diff(o, d, ops);
    if (json_object_array_length(ops) == 0) {
        allow(out, rq, 0, NULL, NULL, CR_UNCHANGED);
    } else {
        size_t n;
        char *text = jtext(ops, &n), *b64 = review_base64(text, n);
        allow(out, rq, 0, b64, NULL, CR_DEFAULTED);
        free(text);
        free(b64);
    }
    json_object_put(ops);
    json_object_put(d);
}

int cr_admission_verdict(const cr_check *c, json_object *obj, json_object *old, verdict_op op, verdict *v) {
    verdict dv = VERDICT_INIT;
    json_object *d = c->as_received ? json_object_get(obj) : defaulted(c->settings, c->kind, obj, &dv);
    if (!d) {
        *v = dv;
        return -1;
    }
    int rc;
    if (c->kind == CR_KIND_COLLECTOR) {
        collector_validate_opts vo = c->collector ? *c->collector : (collector_validate_opts){.cert_manager = -1};
        if (!vo.fips_disabled && c->settings) vo.fips_disabled = c->settings->fips_disabled;
        rc = collector_validate(d, old, op, &vo, v);
        if (rc == 0 && op != VERDICT_DELETE) collector_build_warnings(d, v);
    } else if (c->kind == CR_KIND_INSTRUMENTATION) {
        rc = mutate_validate_instrumentation(d, op, c->settings, v);
    } else {
        rc = mutate_validate_opampbridge(d, op, v);
    }
    json_object_put(d);
    return rc;
}

static void handle_validating(const cr_env *env, cr_route route, const review_request *rq, cr_out *out) {
    metrics_cr_kind kind = routes[route].metric;
    switch (out->op) {
    case CR_OP_CREATE:
    case CR_OP_UPDATE: break;
    case CR_OP_DELETE:
        /* Instrumentations are checked on delete as the reference does
         * (its tests expect the refusals and warnings of a create); the
         * others stay deletable whatever they hold (spec 8.2). */
        if (kind == CR_KIND_INSTRUMENTATION) break;
        allow(out, rq, 200, NULL, NULL, CR_ALLOWED);
        return;
    case CR_OP_CONNECT: allow(out, rq, 200, NULL, NULL, CR_ALLOWED); return;
    default: undecodable(out, rq, "unknown operation \"%s\"", rq->operation ? rq->operation : ""); return;
    }
    json_object *o, *old = NULL;
    if (out->op == CR_OP_DELETE && rq->over) {
        /* An Instrumentation too large to read stays deletable: allowed,
         * unchecked, with a warning (refusing would leave it stored for
         * good, and the checks of a delete protect nothing). */
        char *w = review_over_message("AdmissionReview", env->max_tree,
                                      "(--max-tree-bytes); its deletion is allowed unchecked");
        verdict v = VERDICT_INIT;
        verdict_warn(&v, "%s", w);
        allow(out, rq, 200, NULL, &v, CR_ALLOWED);
        verdict_free(&v);
        free(w);
        return;
    }
    if (rq->over) {
        too_large(out, rq, env);
        return;
    }
    if (out->op == CR_OP_DELETE) {
        if (!(o = decodable(out, rq, route, rq->old_object, "oldObject"))) return;
        cr_check c = {kind, env->settings, NULL, true};
        verdict v = VERDICT_INIT;
        if (cr_admission_verdict(&c, o, NULL, VERDICT_DELETE, &v) != 0) deny(out, rq, &v);
        else allow(out, rq, 200, NULL, &v, CR_ALLOWED);
        verdict_free(&v);
        return;
    }
    if (!(o = decodable(out, rq, route, rq->object, "object"))) return;
    if (out->op == CR_OP_UPDATE && !(old = decodable(out, rq, route, rq->old_object, "oldObject"))) return;
    /* The requesting user, for the privilege-escalation check. */
    json_object *ui = rq->user_info, *groups = jarr(ui, "groups");
    size_t ng = jlen(groups), k = 0;
    const char **gs = xcalloc(ng + 1, sizeof *gs);
    for (size_t i = 0; i < ng; i++) {
        json_object *g = json_object_array_get_idx(groups, i);
        if (json_object_is_type(g, json_type_string)) gs[k++] = json_object_get_string(g);
    }
    collector_subject user = {jstr(ui, "username"), jstr(ui, "uid"), gs, k, jmap(ui, "extra")};
    authz az = {env, now_mono() + env->review_budget};
    collector_access acc = {sar_allowed, &az};
    collector_validate_opts vo = {.access = env->live ? &acc : NULL,
                                  .user = user.user && *user.user ? &user : NULL,
                                  .cert_manager = -1,
                                  .ns = rq->ns};
    cr_check c = {kind, env->settings, &vo, true};
    verdict v = VERDICT_INIT;
    if (cr_admission_verdict(&c, o, old, out->op == CR_OP_CREATE ? VERDICT_CREATE : VERDICT_UPDATE, &v) != 0)
        deny(out, rq, &v);
    else
        allow(out, rq, 200, NULL, &v, CR_ALLOWED);
    verdict_free(&v);
    free(gs);
}

void cr_admission_handle(const cr_env *env, cr_route route, json_tokener *tok, const char *body, size_t len,
                         cr_out *out) {
    memset(out, 0, sizeof *out);
    out->kind = routes[route].metric;
    out->op = CR_OP_OTHER;
    review_request rq;
    if (review_decode(tok, env->max_tree, body, len, &rq, &out->r) != 0) {
        out->result = CR_REJECTED;
        snprintf(out->message, sizeof out->message, "%s", out->r.error);
        return;
    }
    out->op = op_of(rq.operation);
    out->dry_run = rq.dry_run;
    json_object *meta = jmap(json_object_is_type(rq.object, json_type_object) ? rq.object : rq.old_object, "metadata");
    const char *ns = rq.ns && *rq.ns ? rq.ns : jstr(meta, "namespace");
    const char *name = rq.name && *rq.name ? rq.name : jstr(meta, "name");
    const char *user = jstr(rq.user_info, "username");
    snprintf(out->ns, sizeof out->ns, "%s", ns ? ns : "");
    snprintf(out->name, sizeof out->name, "%s", name ? name : "");
    snprintf(out->user, sizeof out->user, "%s", user ? user : "");
    if (routes[route].mutating) handle_mutating(env, route, &rq, out);
    else handle_validating(env, route, &rq, out);
    review_request_free(&rq);
}
