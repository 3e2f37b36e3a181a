/* server/serve_h2.c - the request-body budget of one HTTP/2 connection,
 * its rapid-reset limit, and its streams' part in the process-wide cap
 * (serve_inflight.c) (--http2 only).
 *
 * What h2o 2.2.5 bounds by itself: one stream's body, by
 * max_request_entity_size (--max-body; REFUSED_STREAM beyond), and the
 * streams of a connection, 100 open at once (its fixed
 * SETTINGS_MAX_CONCURRENT_STREAMS, enforced: the 101st is refused). Their
 * product is not a bound anyone wants: one connection sending 100 bodies
 * of 6 MB held 600 MB of RSS (measured), whether it left them unfinished
 * or finished them and never read the answers (a complete request waits
 * behind max_concurrent_requests_per_connection with its body, and this
 * h2o keeps reading meanwhile). It replenishes the connection's
 * flow-control window as data arrives, so the window bounds nothing
 * either, and its config has no per-connection limit.
 *
 * So this file counts, per connection, the body bytes of its live streams:
 * from the HEADERS that announce a body, through END_STREAM and the queue,
 * until h2o disposes of the request (after the answer is sent) or the
 * stream is reset, or it passes --max-body (h2o refuses it then and frees
 * its body). Once they add up to more than the budget (cmd_serve.c:
 * 2 x --max-body) the connection is closed with GOAWAY ENHANCE_YOUR_CALM,
 * and h2o frees all it holds. The same counts, as the memory of the
 * bodies' buffers, are the connection's share of the process's request
 * bytes (serve_h2_held()), and a stream whose DATA would take that total
 * past --max-inflight-bytes is refused alone (refuse_over_cap below).
 * Resets the client sends are counted too (rapid reset, below).
 *
 * The hooks. h2o 2.2.5 parses a connection's input one frame at a time by
 * calling the connection's _read_expect function pointer (the preface,
 * then each frame; h2o switches it itself between the default and
 * "CONTINUATION expected"). The guard puts its own function there, which
 * calls h2o's, takes back the slot when h2o switched it, and accounts the
 * frame h2o just consumed; a negative return is h2o's own path for a
 * connection error (GOAWAY with that code, then the connection and its
 * streams are freed). The handler calls serve_h2_request() for every
 * HTTP/2 request, which finds the stream by the id h2o's access-log
 * callback gives and counts its body off when the request's pool is
 * disposed. h2o 2.2.5's struct st_h2o_http2_conn_t comes from its own
 * <h2o/http2_internal.h> (Debian installs it without the khash.h it
 * includes: server/h2o/khash.h declares what it needs), and
 * serve_h2_guard() checks it against the live connection (its socket, and
 * its link in the context's list of HTTP/2 connections) before it writes
 * anything. A connection that does not match is refused with an error
 * line, so a changed h2o fails loudly, and the black-box budget test fails
 * with it. */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/log.h"
#include "server/metrics.h"

#include <h2o/http2.h>
#include <h2o/http2_internal.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The real layout, from h2o's own header (server/h2o/khash.h says how it
 * compiles); only sock, _conns and _read_expect are used. */
typedef struct st_h2o_http2_conn_t h2_conn_head;
typedef ssize_t (*h2_expect_fn)(h2_conn_head *conn, const uint8_t *src, size_t len, const char **err_desc);

/* h2o refuses a connection's 101st open stream, and a stream lives from
 * its HEADERS until its answer is sent or it is reset. Streams past that
 * (or after resets we did not see) are counted as long as there is room;
 * a client that overflows the table is treated like one over its budget. */
#define H2_TRACKED 128

enum { F_DATA = 0x0, F_HEADERS = 0x1, F_RST_STREAM = 0x3 };
enum { FLAG_END_STREAM = 0x1, FLAG_PADDED = 0x8 };

/* A stream's body is RECEIVING until END_STREAM, then COMPLETE (perhaps
 * queued behind max_concurrent_requests_per_connection) until the handler
 * takes the request, then HANDED until h2o disposes of the request, which
 * it does when it closes the stream (after the answer is sent, or on a
 * reset) and frees the body with it. */
enum { RECEIVING, COMPLETE, HANDED };

struct serve_h2_guard {
    h2_expect_fn inner; /* h2o's current _read_expect */
    serve_conn *c;
    h2o_loop_t *loop;
    bool framed;        /* the preface has been read: every call is one frame */
    size_t budget, max_body, held;
    size_t memory;      /* what the bodies' buffers take (their capacities), for serve_inflight.c */
    double resets;      /* the rapid-reset bucket: resets the client may still send at once */
    uint64_t resets_at; /* h2o_now() when it was last filled */
    uint32_t n;
    struct {
        uint32_t sid, bytes, state;
    } s[H2_TRACKED];
};

/* Rapid reset (CVE-2023-44487): a client that opens streams and resets
 * them at once makes h2o start a request and throw it away, over and over,
 * never near the 100 open streams h2o allows (measured: 242k streams on
 * one connection, /healthz answered in 7.8 s). h2o 2.2.5 counts nothing
 * of it, so the guard does: the client's RST_STREAM frames come out of a
 * bucket of H2_RESET_BURST that refills at H2_RESET_RATE a second, and a
 * connection that empties it is closed with GOAWAY ENHANCE_YOUR_CALM. The
 * API server resets a stream when it gives up on its request (a timeout);
 * such a request is the handler's by then, and those resets are not
 * counted (account() below), so an overloaded webhook whose caller
 * cancels many requests at once is not closed for it. */
#define H2_RESET_BURST 100.0
#define H2_RESET_RATE 10.0

static bool reset_allowed(struct serve_h2_guard *g) {
    uint64_t now = h2o_now(g->loop);
    g->resets += (double)(now - g->resets_at) * H2_RESET_RATE / 1000;
    if (g->resets > H2_RESET_BURST) g->resets = H2_RESET_BURST;
    g->resets_at = now;
    if (g->resets < 1) return false;
    g->resets -= 1;
    return true;
}

static int find(const struct serve_h2_guard *g, uint32_t sid) {
    for (uint32_t i = 0; i < g->n; i++)
        if (g->s[i].sid == sid) return (int)i;
    return -1;
}

/* The capacity of the buffer h2o keeps a body of `bytes` in: it starts
 * from the socket buffer prototype (SERVE_READ_BUFFER, serve_loop.c) and
 * doubles until the body fits. */
static size_t body_memory(size_t bytes) {
    if (!bytes) return 0;
    size_t cap = h2o_socket_buffer_prototype._initial_buf.capacity;
    if (!cap) cap = 4096;
    while (cap < bytes) cap *= 2;
    return cap;
}

static void drop(struct serve_h2_guard *g, int i) {
    g->held -= g->s[i].bytes;
    g->memory -= body_memory(g->s[i].bytes);
    g->s[i] = g->s[--g->n];
}

enum h2_verdict { OK, OVER_BUDGET, RESET_FLOOD };

/* Accounts one frame h2o consumed; anything but OK closes the connection. */
static enum h2_verdict account(struct serve_h2_guard *g, const uint8_t *f) {
    uint32_t len = (uint32_t)f[0] << 16 | (uint32_t)f[1] << 8 | f[2], sid = ((uint32_t)f[5] << 24 | (uint32_t)f[6] << 16 |
                                                                            (uint32_t)f[7] << 8 | f[8]) & 0x7fffffffu;
    uint8_t type = f[3], flags = f[4];
    int i = find(g, sid);
    switch (type) {
    case F_HEADERS:
        if (i >= 0) { /* trailers */
            if ((flags & FLAG_END_STREAM) && g->s[i].state == RECEIVING) g->s[i].state = COMPLETE;
        } else if (!(flags & FLAG_END_STREAM)) { /* a body follows (none: nothing to hold) */
            if (g->n == H2_TRACKED) return OVER_BUDGET;
            g->s[g->n++] = (typeof(g->s[0])){sid, 0, RECEIVING};
        }
        return OK;
    case F_DATA:
        if (i < 0 || g->s[i].state != RECEIVING) return OK; /* h2o refuses DATA on such a stream and keeps none */
        if (flags & FLAG_PADDED) len = len > f[9] ? len - 1 - f[9] : 0; /* h2o keeps the data, not the padding */
        g->memory -= body_memory(g->s[i].bytes);
        g->s[i].bytes += len;
        g->held += len;
        g->memory += body_memory(g->s[i].bytes);
        if (g->s[i].bytes > g->max_body) drop(g, i); /* h2o refused the stream and freed its body */
        else if (flags & FLAG_END_STREAM) g->s[i].state = COMPLETE;
        return g->held <= g->budget ? OK : OVER_BUDGET;
    case F_RST_STREAM:
        /* h2o frees the stream at once; a HANDED one goes through the
         * request's disposal, counted off there. Cancelling a request the
         * handler has (the API server's timeout) is not counted: only
         * resets of streams with nothing handed, which is what rapid reset
         * sends (HEADERS with END_STREAM, answered or not, then reset). */
        if (i >= 0 && g->s[i].state == HANDED) return OK;
        if (i >= 0) drop(g, i);
        return reset_allowed(g) ? OK : RESET_FLOOD;
    default: return OK;
    }
}

/* The process holds too many request bytes (serve_inflight.c): a DATA
 * frame that would add to a body still arriving is not taken. The stream
 * is refused like h2o refuses one over --max-body, with RST_STREAM
 * REFUSED_STREAM (the client may retry it: it was never processed), and
 * its body freed: h2o is handed a RST_STREAM from the client for it (it
 * frees the stream and answers nothing), then the DATA frame itself, which
 * h2o now takes as DATA on a closed stream: it counts the bytes against
 * the connection's flow-control window as for any DATA (so the window
 * stays in step with the client's) and keeps none of them, answering
 * RST_STREAM STREAM_CLOSED, which a client ignores for a stream it has
 * seen reset. Returns h2o's answer for the DATA frame, or 0 when the frame
 * is not one to refuse. */
static ssize_t refuse_over_cap(h2_conn_head *conn, struct serve_h2_guard *g, const uint8_t *src, size_t len,
                               const char **err_desc) {
    if (!g->framed || len < 9 || src[3] != F_DATA) return 0;
    uint32_t flen = (uint32_t)src[0] << 16 | (uint32_t)src[1] << 8 | src[2];
    uint32_t sid = ((uint32_t)src[5] << 24 | (uint32_t)src[6] << 16 | (uint32_t)src[7] << 8 | src[8]) & 0x7fffffffu;
    int i = find(g, sid);
    if (!flen || len < 9 + (size_t)flen || i < 0 || g->s[i].state != RECEIVING) return 0;
    serve_server *srv = g->c->a->srv;
    size_t grows = body_memory(g->s[i].bytes + flen) - body_memory(g->s[i].bytes);
    if (atomic_load(&srv->inflight) + grows <= srv->max_inflight) return 0;
    drop(g, i);
    serve_inflight_refused(srv, "HTTP/2");
    h2o_http2_encode_rst_stream_frame(&conn->_write.buf, sid, -H2O_HTTP2_ERROR_REFUSED_STREAM);
    h2o_http2_conn_request_write(conn);
    const uint8_t rst[13] = {0, 0, 4, F_RST_STREAM, 0, src[5] & 0x7f, src[6], src[7], src[8], 0, 0, 0, 0x8 /* CANCEL */};
    ssize_t ret = g->inner(conn, rst, sizeof rst, err_desc);
    if (ret != (ssize_t)sizeof rst) return ret < 0 ? ret : H2O_HTTP2_ERROR_INTERNAL;
    ret = g->inner(conn, src, len, err_desc);
    serve_inflight_recount(g->c);
    return ret;
}

static void said(enum h2_verdict v, const struct serve_h2_guard *g) {
    static serve_ratelimit rl_budget, rl_resets;
    unsigned long quiet;
    metrics_error(v == OVER_BUDGET ? ERR_H2_BUDGET : ERR_H2_RESETS);
    if (!serve_ratelimit_ok(v == OVER_BUDGET ? &rl_budget : &rl_resets, 10, &quiet)) return;
    char b[24], n[24];
    snprintf(n, sizeof n, "%lu", quiet);
    if (v == OVER_BUDGET) {
        snprintf(b, sizeof b, "%zu", g->budget);
        log_kv(LOG_WARN, "HTTP/2 connection closed: request bodies over its budget", LOG_NUM("budget_bytes"), b,
               LOG_NUM("closes_not_logged"), n, NULL);
    } else {
        snprintf(b, sizeof b, "%g", H2_RESET_RATE);
        log_kv(LOG_WARN, "HTTP/2 connection closed: it resets streams faster than allowed (rapid reset)",
               LOG_NUM("resets_per_second"), b, LOG_NUM("closes_not_logged"), n, NULL);
    }
}

/* h2o closes streams by itself too (a HEADERS it refuses, a body whose
 * length is not its content-length, the 101st open stream), always
 * writing RST_STREAM for them into the connection's output buffer, which
 * it flushes later, never within a frame's handling. The RST_STREAM
 * frames it wrote from `from` on say which tracked streams are gone:
 * their bodies are freed, and so are their counts. */
static void reset_by_h2o(h2_conn_head *conn, struct serve_h2_guard *g, size_t from) {
    const h2o_buffer_t *w = conn->_write.buf;
    if (!w || w->size < from) return; /* not the buffer it was: nothing added */
    const uint8_t *b = (const uint8_t *)w->bytes;
    for (size_t at = from; at + 9 <= w->size;) {
        uint32_t flen = (uint32_t)b[at] << 16 | (uint32_t)b[at + 1] << 8 | b[at + 2];
        if (b[at + 3] == F_RST_STREAM) {
            uint32_t sid = ((uint32_t)b[at + 5] << 24 | (uint32_t)b[at + 6] << 16 | (uint32_t)b[at + 7] << 8 |
                            b[at + 8]) & 0x7fffffffu;
            int i = find(g, sid);
            if (i >= 0 && g->s[i].state != HANDED) drop(g, i);
        }
        at += 9 + (size_t)flen;
    }
}

static ssize_t guarded_expect(h2_conn_head *conn, const uint8_t *src, size_t len, const char **err_desc) {
    serve_conn *c = conn->sock->on_close.data;
    struct serve_h2_guard *g = c->h2;
    ssize_t refused = refuse_over_cap(conn, g, src, len, err_desc);
    if (refused != 0) return refused;
    size_t written = conn->_write.buf ? conn->_write.buf->size : 0;
    ssize_t ret = g->inner(conn, src, len, err_desc);
    if (conn->_read_expect != guarded_expect) { /* h2o moved on to another state */
        g->inner = conn->_read_expect;
        conn->_read_expect = guarded_expect;
    }
    if (ret <= 0) return ret; /* incomplete, or h2o's own error */
    if (!g->framed) {
        g->framed = true; /* that was the preface */
        return ret;
    }
    enum h2_verdict v = account(g, src);
    reset_by_h2o(conn, g, written);
    serve_inflight_recount(c);
    if (v == OK) return ret;
    said(v, g);
    *err_desc = v == OVER_BUDGET ? "request bodies over the connection's budget" : "too many streams reset";
    return H2O_HTTP2_ERROR_ENHANCE_YOUR_CALM;
}

struct serve_h2_guard *serve_h2_guard(serve_conn *c, h2o_context_t *ctx, size_t budget, size_t max_body) {
    h2_conn_head *conn = c->sock->data; /* h2o_http2_accept() made it the socket's */
    h2o_linklist_t *list = &ctx->http2._conns;
    bool listed = conn && (list->prev == &conn->_conns || list->next == &conn->_conns);
    if (!listed || conn->sock != c->sock || !conn->_read_expect) {
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            log_kv(LOG_ERROR, "HTTP/2 refused: this h2o's connection is not laid out as h2o 2.2.5's, so its request "
                              "bodies cannot be bounded", NULL);
        return NULL;
    }
    struct serve_h2_guard *g = xcalloc(1, sizeof *g);
    g->c = c;
    g->loop = ctx->loop;
    g->budget = budget;
    g->max_body = max_body;
    g->resets = H2_RESET_BURST;
    g->resets_at = h2o_now(ctx->loop);
    g->inner = conn->_read_expect;
    conn->_read_expect = guarded_expect;
    return g;
}

void serve_h2_guard_free(struct serve_h2_guard *g) { free(g); }

size_t serve_h2_held(const struct serve_h2_guard *g) { return g ? g->memory : 0; }

bool serve_h2_answering(const serve_conn *c) {
    const h2_conn_head *conn = c->h2 ? c->sock->data : NULL;
    return conn && conn->num_streams.pull.send_body > 0;
}

/* Lives in the request's pool; h2o calls on_request_disposed when it
 * disposes of the request, before it frees the connection (and with it
 * the guard). */
typedef struct h2_release {
    struct serve_h2_guard *g;
    uint32_t sid;
} h2_release;

static void on_request_disposed(void *p) {
    h2_release *r = p;
    int i = find(r->g, r->sid);
    if (i >= 0) {
        drop(r->g, i);
        serve_inflight_recount(r->g->c);
    }
}

void serve_h2_request(h2o_req_t *req) {
    h2_conn_head *conn = (h2_conn_head *)req->conn;
    serve_conn *c = conn->sock->on_close.data;
    struct serve_h2_guard *g = c->h2;
    /* The stream id, through h2o's access-log callback (the stream struct
     * is not in a header that compiles here). */
    h2o_iovec_t id = req->conn->callbacks->log_.http2.stream_id ? req->conn->callbacks->log_.http2.stream_id(req)
                                                                 : h2o_iovec_init(NULL, 0);
    uint32_t sid = 0;
    for (size_t k = 0; k < id.len && id.base[k] >= '0' && id.base[k] <= '9'; k++)
        sid = sid * 10 + (uint32_t)(id.base[k] - '0');
    int i = g ? find(g, sid) : -1;
    if (i < 0 || g->s[i].state == HANDED) return; /* no body held */
    g->s[i].state = HANDED;
    h2_release *r = h2o_mem_alloc_shared(&req->pool, sizeof *r, on_request_disposed);
    *r = (h2_release){g, sid};
}
