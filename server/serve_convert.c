/* server/serve_convert.c - the route POST /convert: the OpenTelemetryCollector
 * conversion webhook (server/conversion.h) on the pod webhook's server.
 *
 * Answered inline in the loop like admissions. A review of a large LIST
 * costs milliseconds (every object is converted, a v1alpha1 config written
 * as YAML), which the loop's other connections wait for; the API server
 * sends one review per read, so that is the price of one listener and one
 * certificate. What one review may cost is bounded as a whole
 * (conversion.h: objects, answer bytes, one YAML budget for all its
 * configs): at those limits a review takes well under a second (docs/custom-resources.md,
 * "Conversion"), so it stays on the loop rather than a worker. Its tokener is the request's own, deeper than the pod
 * path's loop tokener (stored collectors nest deeper than pods); making one
 * costs microseconds next to a conversion, and conversions are rare (reads
 * and writes through v1alpha1, storage migration). */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/conversion.h"
#include "server/log.h"
#include "server/metrics.h"

#include <stdio.h>
#include <string.h>

static void answer(h2o_req_t *req, int status, const char *reason, const char *body, size_t len) {
    static const char type[] = "application/json";
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len; /* h2o_send_inline does not set it */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type, sizeof type - 1);
    h2o_send_inline(req, body, len);
}

bool serve_convert_route(serve_server *srv, h2o_req_t *req) {
    h2o_iovec_t p = req->path_normalized, m = req->method;
    if (!h2o_memis(p.base, p.len, H2O_STRLIT("/convert"))) return false;
    if (!h2o_memis(m.base, m.len, H2O_STRLIT("POST"))) {
        static const char body[] = "{\"error\":\"method not allowed: use POST\"}\n";
        metrics_error(ERR_METHOD);
        answer(req, 405, "Method Not Allowed", body, sizeof body - 1);
        return true;
    }
    double t0 = serve_now_mono();
    conversion_out out;
    json_tokener *tok = json_tokener_new_ex(CONVERSION_MAX_DEPTH);
    if (!tok) base_oom();
    conversion_handle_within(tok, srv->env.max_tree, req->entity.base, req->entity.len, &out);
    json_tokener_free(tok);
    char us[32], nobj[32];
    snprintf(us, sizeof us, "%.0f", (serve_now_mono() - t0) * 1e6);
    snprintf(nobj, sizeof nobj, "%zu", out.nobjects);
    if (out.status == 400) {
        metrics_error(ERR_BAD_REQUEST);
        log_kv(LOG_WARN, "bad conversion request", "error", out.message, NULL);
        answer(req, 400, "Bad Request", out.body, out.len);
        conversion_out_free(&out);
        return true;
    }
    metrics_conversion_review(out.direction, out.failed, out.nobjects);
    if (out.failed)
        log_kv(LOG_WARN, "conversion failed", "uid", out.uid, "desired", out.desired, "error", out.message,
               LOG_NUM("micros"), us, NULL);
    else if (out.nnotes)
        log_kv(LOG_WARN, "converted with a loss", "uid", out.uid, "desired", out.desired, LOG_NUM("objects"), nobj,
               "note", out.first_note, NULL);
    else
        log_kv(LOG_DEBUG, "converted", "uid", out.uid, "desired", out.desired, LOG_NUM("objects"), nobj,
               LOG_NUM("micros"), us, NULL);
    answer(req, 200, "OK", out.body, out.len);
    conversion_out_free(&out);
    return true;
}
