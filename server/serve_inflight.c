/* server/serve_inflight.c - the request bytes the whole process holds at
 * once, and the answer past its cap (--max-inflight-bytes).
 *
 * Each connection's own bound (--max-body, and serve_h2.c's budget for an
 * HTTP/2 connection) says nothing of how many connections hold that much
 * at the same time: 40 slow uploads of 7 MiB each, every one within its
 * limits, were enough to OOM-kill a 256 MiB replica. So every byte a
 * connection holds for requests is counted into one process-wide total:
 *
 *   HTTP/1.1  the connection's input buffer, where h2o 2.2.5 keeps the
 *             request line, the headers and the whole body until the
 *             answer is sent (the body is read in place, never copied);
 *             counted as the buffer's capacity, the memory it takes;
 *   HTTP/2    the same buffer (frames not parsed yet) plus the bodies
 *             serve_h2.c counts for the connection's streams.
 *
 * Past the cap, the connection whose bytes crossed it is refused and its
 * bytes freed: an HTTP/1.1 request gets 503 with Retry-After and the
 * connection is closed (after a lingering close, below); an HTTP/2 stream
 * still receiving its body is
 * reset with REFUSED_STREAM (serve_h2.c). The API server retries both (a
 * 5xx with Retry-After, and a stream the server says it never processed),
 * and so does any HTTP client built on Go's. Connections holding nothing
 * new are never refused, so answers in progress are not cut.
 *
 * When the count changes. h2o 2.2.5 gives no hook where a connection's
 * input grows or shrinks, but it always passes through
 * h2o_socket_read_start(): when a connection starts reading (after the
 * TLS handshake, and on HTTP/1.1 after each answer, right after it
 * consumed the request just answered) it registers its read callback
 * there. This file defines h2o_socket_read_start itself: the executable's
 * definition takes precedence over the library's for the library's own
 * calls (they go through its PLT; the build exports the symbol, see the
 * Makefile), and ours calls h2o's (dlsym RTLD_NEXT) with a callback of its
 * own in front of h2o's. That callback recounts the connection (new bytes
 * in) before h2o parses them, and refuses it when the total is over the
 * cap. A recount also happens when h2o restarts reading (bytes consumed)
 * and when the connection closes (all of it goes). Sockets that are not
 * connections of serve_accept.c (the listeners, h2o's own queues) pass
 * through untouched. serve_accept.c checks on every connection that the
 * hook saw its handshake's reads start, so an h2o that no longer calls
 * through its PLT fails loudly (the connection is refused with an error
 * line) rather than unbounded.
 *
 * Threads: the total is atomic; a connection's own share (serve_conn's
 * inflight) is its loop's. The cap is read-only once the loops run. */
#include "server/serve.h"

#include "server/log.h"
#include "server/metrics.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

typedef void (*read_start_fn)(h2o_socket_t *sock, h2o_socket_cb cb);
static read_start_fn h2o_read_start;

static void resolve(void) {
    if (!h2o_read_start) h2o_read_start = (read_start_fn)dlsym(RTLD_NEXT, "h2o_socket_read_start");
}

const char *serve_inflight_init(void) {
    resolve();
    if (!h2o_read_start) return "h2o_socket_read_start was not found in libh2o-evloop";
    if (dlsym(RTLD_DEFAULT, "h2o_socket_read_start") != (void *)h2o_socket_read_start)
        return "this executable does not export h2o_socket_read_start (built without the Makefile's link flags)";
    return NULL;
}

/* The connection whose read h2o is handling on this thread, so that the
 * count can be taken again once h2o has parsed (and consumed) what came,
 * unless h2o closed the connection meanwhile (serve_inflight_close()
 * clears it then). One per thread: a loop is one thread. */
static __thread serve_conn *reading;

static size_t buffer_bytes(const h2o_buffer_t *b) { return b && b->bytes ? b->capacity : 0; }

/* The connection's bytes now, into the total; true when they grew. */
static bool recount(serve_conn *c) {
    size_t now = buffer_bytes(c->sock->input) + serve_h2_held(c->h2);
    serve_server *srv = c->a->srv;
    bool grew = now > c->inflight;
    if (grew) atomic_fetch_add(&srv->inflight, now - c->inflight);
    else atomic_fetch_sub(&srv->inflight, c->inflight - now);
    c->inflight = now;
    return grew;
}

void serve_inflight_recount(serve_conn *c) { recount(c); }

void serve_inflight_close(serve_conn *c) {
    if (reading == c) reading = NULL;
    atomic_fetch_sub(&c->a->srv->inflight, c->inflight);
    c->inflight = 0;
}

bool serve_inflight_over(const serve_server *srv) { return atomic_load(&srv->inflight) > srv->max_inflight; }

void serve_inflight_refused(serve_server *srv, const char *proto) {
    static serve_ratelimit rl;
    unsigned long quiet;
    metrics_error(ERR_INFLIGHT);
    if (serve_ratelimit_ok(&rl, 10, &quiet)) {
        char cap[24], held[24], n[24];
        snprintf(cap, sizeof cap, "%zu", srv->max_inflight);
        snprintf(held, sizeof held, "%zu", atomic_load(&srv->inflight));
        snprintf(n, sizeof n, "%lu", quiet);
        log_kv(LOG_WARN, "request refused: the request bytes held across connections are over --max-inflight-bytes",
               "protocol", proto, LOG_NUM("max_inflight_bytes"), cap, LOG_NUM("held_bytes"), held,
               LOG_NUM("refusals_not_logged"), n, NULL);
    }
}

#define REFUSAL_BODY "{\"error\":\"the webhook holds too many request bytes at once; retry\"}\n"
static const char refusal[] = "HTTP/1.1 503 Service Unavailable\r\n"
                              "Content-Type: application/json\r\n"
                              "Retry-After: 1\r\n"
                              "Connection: close\r\n"
                              "Content-Length: " "68" "\r\n\r\n" REFUSAL_BODY;
_Static_assert(sizeof REFUSAL_BODY - 1 == 68, "the refusal's Content-Length");

/* After the 503, the rest of the request is read and dropped until the
 * client closes, or until --request-timeout (the handshake deadline, whose
 * entry is free by now), so that the client reads the answer: closing a
 * socket with unread input resets the connection, and a client still
 * sending its body may then lose the 503 before it reads it (a lingering
 * close, as Apache's). What is read is freed at once. Any end goes
 * through h2o's own read callback with an error: h2o closes the
 * connection and frees all it holds, as for a client that went away. */
static void on_discard(h2o_socket_t *sock, const char *err) {
    serve_conn *c = serve_conn_of(sock);
    if (err) {
        c->inner_read(sock, err);
        return;
    }
    h2o_buffer_consume(&sock->input, sock->input->size);
    recount(c);
}

static void on_linger_end(h2o_timeout_entry_t *entry) {
    serve_conn *c = H2O_STRUCT_FROM_MEMBER(serve_conn, handshake, entry);
    c->inner_read(c->sock, "the refused request did not end in time");
}

static void on_refusal_sent(h2o_socket_t *sock, const char *err) {
    serve_conn *c = serve_conn_of(sock);
    if (err) {
        c->inner_read(sock, err);
        return;
    }
    shutdown(h2o_socket_get_fd(sock), SHUT_WR);
    h2o_context_t *ctx = c->a->accept_ctx.ctx;
    c->handshake.cb = on_linger_end;
    h2o_timeout_link(ctx->loop, &ctx->handshake_timeout, &c->handshake);
    h2o_read_start(sock, on_discard); /* h2o's own: inner_read stays h2o's callback */
}

/* Whether this read of an HTTP/1.1 connection is refused: it made the
 * connection hold more, past one initial buffer (so a request with a
 * body: requests without, /healthz and the kubelet's probes, always fit
 * in one and are never refused), while the process is over the cap, and
 * h2o is not writing on the socket (h2o 2.2.5 answers a malformed request
 * with 400 while still reading: the socket is not ours then). */
static bool refused(serve_conn *c, h2o_socket_t *sock) {
    bool grew = recount(c);
    return grew && c->http1 && c->inflight > h2o_socket_buffer_prototype._initial_buf.capacity &&
           !h2o_socket_is_writing(sock) && serve_inflight_over(c->a->srv);
}

static void on_read(h2o_socket_t *sock, const char *err) {
    serve_conn *c = serve_conn_of(sock);
    if (!err && refused(c, sock)) {
        /* h2o is reading a request (it never reads while answering), so
         * it writes nothing meanwhile: the socket is ours until the 503
         * is out. What it held is freed with the connection. */
        serve_inflight_refused(c->a->srv, "HTTP/1.1");
        h2o_socket_read_stop(sock);
        /* Freed now, not once the 503 is out (a turn of the loop later,
         * after every other connection this turn reads): h2o is only ever
         * told to close this connection from here on, which reads none of
         * it. */
        h2o_buffer_consume(&sock->input, sock->input->size);
        recount(c);
        h2o_iovec_t res = h2o_iovec_init(refusal, sizeof refusal - 1);
        h2o_socket_write(sock, &res, 1, on_refusal_sent);
        return;
    }
    serve_conn *outer = reading;
    reading = c;
    c->inner_read(sock, err);
    if (reading == c) recount(c); /* still open: what h2o consumed is gone */
    reading = outer;
}

size_t serve_inflight_min_cap(size_t max_body) {
    /* The largest request in one buffer: the body, its headers (h2o 2.2.5
     * takes 8 KiB of them at most) and the room h2o reserves for a read. */
    size_t need = max_body + 16384, cap = SERVE_READ_BUFFER;
    while (cap < need) cap *= 2;
    return cap;
}

bool serve_inflight_hooked(const serve_conn *c) { return c->read_hooked; }

void h2o_socket_read_start(h2o_socket_t *sock, h2o_socket_cb cb) {
    resolve();
    serve_conn *c = serve_conn_of(sock);
    if (c && cb != on_read) {
        c->read_hooked = true;
        c->inner_read = cb;
        cb = on_read;
        recount(c);
    }
    h2o_read_start(sock, cb);
}
