/* server/serve_http.c - the routes of `otel-webhook serve` and their
 * handlers: POST /mutate-v1-pod (AdmissionReview admission.k8s.io/v1), the
 * custom resources' admission paths (serve_cr.c), POST /convert
 * (serve_convert.c), GET /healthz, /readyz and /metrics; anything else is
 * a JSON 404 or 405.
 *
 * Requests are answered inline in the loop: a mutation costs tens of
 * microseconds, far less than handing it to another thread. The one
 * exception is a collector's validation while a live source is configured,
 * which may wait on the API server's access reviews: serve_cr.c hands it
 * to a worker so that no pod queues behind it. */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/log.h"
#include "server/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The handler h2o calls for every path, with the server it answers for. */
typedef struct route_handler {
    h2o_handler_t super;
    serve_server *srv;
} route_handler;

static void send_body(h2o_req_t *req, int status, const char *reason, const char *type, const char *body, size_t len) {
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len; /* h2o_send_inline does not set it */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type, strlen(type));
    h2o_send_inline(req, body, len);
}

/* body lives in req->pool already: sent as it is, where h2o_send_inline
 * would copy it there first (7 KB per mutated pod). */
static void send_pooled(h2o_req_t *req, int status, const char *reason, const char *type, char *body, size_t len) {
    static h2o_generator_t oneshot = {NULL, NULL};
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type, strlen(type));
    h2o_start_response(req, &oneshot);
    h2o_iovec_t buf = h2o_iovec_init(body, len);
    h2o_send(req, &buf, 1, H2O_SEND_STATE_FINAL);
}

static void *pool_alloc(void *pool, size_t n) { return h2o_mem_alloc_pool((h2o_mem_pool_t *)pool, n); }

static void send_json_error(h2o_req_t *req, int status, const char *reason, const char *msg) {
    char body[256];
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\"}\n", msg);
    send_body(req, status, reason, "application/json", body, (size_t)n);
}

static const char *result_name(metrics_result r) {
    static const char *const n[] = {"mutated", "unchanged", "ignored", "failed open", "rejected"};
    return n[r];
}

static void on_mutate(serve_server *srv, h2o_req_t *req) {
    if (log_enabled(LOG_DEBUG)) {
        char *b = xstrndup(req->entity.base ? req->entity.base : "", req->entity.len);
        log_kv(LOG_DEBUG, "admission request", "body", b, NULL);
        free(b);
    }
    double t0 = serve_now_mono();
    review_out out;
    mutate_cache *cache = serve_loop_cache(req->conn->ctx);
    mutate_cache_stats before, after;
    mutate_cache_get_stats(cache, &before);
    review_handle_into(&srv->env, serve_loop_tokener(req->conn->ctx), cache, req->entity.base, req->entity.len, &out,
                       pool_alloc, &req->pool);
    double dt = serve_now_mono() - t0;
    mutate_cache_get_stats(cache, &after);
    metrics_cache(&before, &after);
    metrics_request(out.result, dt);
    if (out.status == 400) {
        metrics_error(ERR_BAD_REQUEST);
        log_kv(LOG_WARN, "bad admission request", "error", out.error, NULL);
        send_body(req, 400, "Bad Request", "application/json", out.body, out.len);
        review_out_free(&out);
        return;
    }
    if (out.result == RESULT_MUTATED || out.result == RESULT_UNCHANGED || out.result == RESULT_FAILED_OPEN)
        metrics_mutation(&(mutate_result){.injected = out.injected, .sidecar = out.sidecar, .skips = out.skips,
                                          .limit = out.limit},
                         out.native);
    /* A pod past a bound, or one the API server would refuse (malformed),
     * is left alone on purpose: not an internal error. */
    if (out.result == RESULT_FAILED_OPEN && out.limit == MUTATE_LIMIT_NONE &&
        !(out.skips & (1u << MUTATE_SKIP_MALFORMED)))
        metrics_error(ERR_INTERNAL);
    log_level lvl = out.result == RESULT_FAILED_OPEN ? LOG_WARN
                    : out.result == RESULT_MUTATED || out.nwarnings ? LOG_INFO
                                                                     : LOG_DEBUG;
    if (log_enabled(lvl)) {
        char langs[128] = "", us[32], nw[16];
        for (int l = 0; l < MUTATE_NLANGS; l++)
            if (out.injected & MUTATE_BIT(l)) {
                if (*langs) strcat(langs, ",");
                strcat(langs, mutate_lang_name(l));
            }
        if (out.sidecar) strcat(langs, *langs ? ",sidecar" : "sidecar");
        snprintf(us, sizeof us, "%.0f", dt * 1e6);
        snprintf(nw, sizeof nw, "%zu", out.nwarnings);
        log_kv(lvl, result_name(out.result), "uid", out.uid, "namespace", out.ns, "pod", out.pod, "injected", langs,
               LOG_NUM("warnings"), nw, LOG_NUM("micros"), us,
               /* the first warning, when there is one (a NULL key ends the list) */
               out.nwarnings ? "warning" : NULL, out.first_warning, NULL);
    }
    if (out.owned) send_body(req, 200, "OK", "application/json", out.body, out.len);
    else send_pooled(req, 200, "OK", "application/json", out.body, out.len);
    review_out_free(&out);
}

/* Resources that cannot be read stop readiness only after the grace
 * period (the watcher's files_stale): the last good ones are still served
 * meanwhile, and a moment's EMFILE must not drop the pod's endpoints. */
static bool is_ready(serve_server *srv) {
    return atomic_load(&srv->ready) && (!srv->live || kube_livesource_synced(srv->live)) &&
           !atomic_load(&srv->files_stale) && !atomic_load(&srv->live_stale);
}

static void gauges(serve_server *srv, metrics_gauges *g, kube_live_stats *live) {
    memset(g, 0, sizeof *g);
    if (srv->live) {
        kube_livesource_stats(srv->live, live);
        g->live = live;
    }
    g->cert_not_after = srv->tls ? tls_server_not_after(srv->tls) : 0;
    kube_view v = kube_store_acquire(srv->store);
    for (int k = 0; k < 8; k++) g->objects[k] = kube_snapshot_count(v.snap, metrics_kinds[k]);
    kube_store_release(srv->store, &v);
    g->failing_files = atomic_load(&srv->failing_files);
    g->failing_dirs = atomic_load(&srv->failing_dirs);
    /* The watcher keeps monotonic times (what the grace period needs); the
     * metric is a Unix timestamp, so the age is taken back from now. */
    long long since = atomic_load(&srv->files_unreadable_since_ms);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double unix_now = (double)now.tv_sec + (double)now.tv_nsec / 1e9;
    if (since) g->unreadable_since = unix_now - (serve_now_mono() - (double)since / 1000);
    g->ready = is_ready(srv);
    g->inflight_bytes = atomic_load(&srv->inflight);
    serve_loops_h2o_errors(srv, &g->h2o_errors[ERR_TOO_LARGE], &g->h2o_errors[ERR_BAD_REQUEST]);
}

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
    serve_server *srv = ((route_handler *)self)->srv;
    if (req->version >= 0x200) serve_h2_request(req);
    const char *ambiguous = serve_framing_check(req);
    if (ambiguous) {
        /* Whatever came after this request in the connection may be a
         * request smuggled in its body: the connection closes after the
         * answer, so none of it is read. */
        metrics_error(ERR_FRAMING);
        log_kv(LOG_WARN, "refused a request", "error", ambiguous, NULL);
        req->http1_is_persistent = 0;
        send_json_error(req, 400, "Bad Request", ambiguous);
        return 0;
    }
    if (serve_convert_route(srv, req)) return 0;
    h2o_iovec_t p = req->path_normalized, m = req->method;
    bool get = h2o_memis(m.base, m.len, H2O_STRLIT("GET")) || h2o_memis(m.base, m.len, H2O_STRLIT("HEAD"));
    int cr = cr_admission_route(p.base, p.len);
    if (cr >= 0) {
        if (!h2o_memis(m.base, m.len, H2O_STRLIT("POST"))) {
            metrics_error(ERR_METHOD);
            send_json_error(req, 405, "Method Not Allowed", "method not allowed: use POST");
            return 0;
        }
        serve_cr_admission(srv, req, cr);
        return 0;
    }
    if (h2o_memis(p.base, p.len, H2O_STRLIT("/mutate-v1-pod"))) {
        if (!h2o_memis(m.base, m.len, H2O_STRLIT("POST"))) {
            metrics_error(ERR_METHOD);
            send_json_error(req, 405, "Method Not Allowed", "method not allowed: use POST");
            return 0;
        }
        on_mutate(srv, req);
        return 0;
    }
    bool healthz = h2o_memis(p.base, p.len, H2O_STRLIT("/healthz"));
    bool readyz = h2o_memis(p.base, p.len, H2O_STRLIT("/readyz"));
    bool metrics = h2o_memis(p.base, p.len, H2O_STRLIT("/metrics"));
    if (!healthz && !readyz && !metrics) {
        metrics_error(ERR_NOT_FOUND);
        send_json_error(req, 404, "Not Found", "not found");
        return 0;
    }
    if (!get) {
        metrics_error(ERR_METHOD);
        send_json_error(req, 405, "Method Not Allowed", "method not allowed: use GET");
        return 0;
    }
    if (healthz) {
        send_body(req, 200, "OK", "text/plain", "ok\n", 3);
    } else if (readyz) {
        if (is_ready(srv)) send_body(req, 200, "OK", "text/plain", "ready\n", 6);
        else send_body(req, 503, "Service Unavailable", "text/plain", "not ready\n", 10);
    } else {
        metrics_gauges g;
        kube_live_stats live;
        gauges(srv, &g, &live);
        size_t len;
        char *text = metrics_render(&g, &len);
        send_body(req, 200, "OK", "text/plain; version=0.0.4", text ? text : "", text ? len : 0);
        free(text);
    }
    return 0;
}

void serve_http_routes(serve_server *srv) {
    h2o_hostconf_t *host = h2o_config_register_host(&srv->config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *pc = h2o_config_register_path(host, "/", 0);
    route_handler *h = (route_handler *)h2o_create_handler(pc, sizeof *h);
    h->super.on_req = on_req;
    h->srv = srv;
}
