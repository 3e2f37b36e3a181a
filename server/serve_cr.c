/* server/serve_cr.c - the HTTP side of the custom resources' admission
 * routes (server/cr_admission.h): the answer, its metrics and its log
 * line. Apart from serve_http.c so that its routes stay a table lookup. */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/log.h"
#include "server/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void send_json(h2o_req_t *req, int status, const char *reason, const char *body, size_t len) {
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len;
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("application/json"));
    h2o_send_inline(req, body, len);
}

void serve_cr_admission(serve_server *srv, h2o_req_t *req, int route) {
    if (log_enabled(LOG_DEBUG)) {
        char *b = xstrndup(req->entity.base ? req->entity.base : "", req->entity.len);
        log_kv(LOG_DEBUG, "admission request", "path", cr_route_paths[route], "body", b, NULL);
        free(b);
    }
    double t0 = serve_now_mono();
    cr_out out;
    cr_admission_handle(&srv->cr, (cr_route)route, serve_loop_tokener(req->conn->ctx), req->entity.base,
                        req->entity.len, &out);
    double dt = serve_now_mono() - t0;
    metrics_cr_admission(out.kind, out.op, out.result, out.rule, dt);
    char us[32], nw[16];
    snprintf(us, sizeof us, "%.0f", dt * 1e6);
    snprintf(nw, sizeof nw, "%zu", out.nwarnings);
    if (out.r.status == 400) {
        metrics_error(ERR_BAD_REQUEST);
        log_kv(LOG_WARN, "bad admission request", "path", cr_route_paths[route], "error", out.r.error, NULL);
        send_json(req, 400, "Bad Request", out.r.body, out.r.len);
        review_out_free(&out.r);
        return;
    }
    /* One line per write of a resource: they are few, and who changed what,
     * and why it was refused, is what an operator looks for. */
    log_kv(out.result == CR_REJECTED ? LOG_WARN : LOG_INFO, metrics_cr_results[out.result], "uid", out.r.uid, "kind",
           metrics_cr_kinds[out.kind], "operation", metrics_cr_ops[out.op], "namespace", out.ns, "name", out.name,
           "user", out.user, "dry_run", out.dry_run ? "true" : "false", LOG_NUM("warnings"), nw, LOG_NUM("micros"), us,
           /* a NULL key ends the list: rule and message only when refused */
           out.rule ? "rule" : NULL, out.rule, out.message[0] ? "message" : NULL, out.message, NULL);
    send_json(req, 200, "OK", out.r.body, out.r.len);
    review_out_free(&out.r);
}
