/* server/serve_stall.c - the write timeout: a connection whose client
 * does not read the answer is closed after --request-timeout.
 *
 * h2o 2.2.5 bounds the time a request takes to arrive (http1 req_timeout,
 * the HTTP/2 idle timeout), never the time an answer takes to leave: an
 * answer written to a client that stops reading waits in the socket for
 * as long as the client keeps the connection open (an unread 15 MB
 * /convert answer was held for 150 s and more), with the answer and its
 * request's pool alive all that time. A client that reads slowly but
 * steadily is not stalled, so the clock measures progress, not the
 * length of the write: every connection has a tick every half timeout;
 * a tick that finds an answer still being written (h2o_socket_is_writing,
 * or for HTTP/2 a stream whose body h2o is sending or holds back for the
 * client's flow-control window) and less than STALL_MIN_PROGRESS bytes
 * acknowledged by the client since the tick before counts as stalled,
 * and two such ticks in a row (no progress for a whole timeout) close the
 * connection. Progress is the kernel's count of bytes the peer
 * acknowledged (TCP_INFO tcpi_bytes_acked): h2o counts bytes_written when
 * a write is submitted, not as it leaves, and a client that does not read
 * closes its receive window, so nothing it does not read is acknowledged.
 *
 * Closing: h2o 2.2.5 cannot close one of its connections from outside,
 * but a shutdown() of the socket fails the write in progress, and h2o
 * then closes the connection itself and frees everything it holds (the
 * same path as a client that goes away); SO_LINGER 0 makes its close a
 * reset, so the kernel drops the unread bytes too. SIGPIPE is ignored
 * (cmd_serve.c).
 *
 * Threads: everything here runs on the connection's loop. */
#include "server/serve.h"

#include "server/log.h"
#include "server/metrics.h"

#include <linux/tcp.h>
#include <stdio.h>
#include <sys/socket.h>

/* Ticks in a row without progress before the connection is closed. */
#define STALL_TICKS 2
/* Progress is at least this many bytes acknowledged in a tick: a client
 * that takes a byte at a time would otherwise hold an answer forever. */
#define STALL_MIN_PROGRESS 1024

static uint64_t acked(h2o_socket_t *sock) {
    struct tcp_info ti = {0};
    socklen_t len = sizeof ti;
    if (getsockopt(h2o_socket_get_fd(sock), IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return 0;
    return ti.tcpi_bytes_acked;
}

static void stalled_close(serve_conn *c) {
    static serve_ratelimit rl;
    unsigned long quiet;
    metrics_error(ERR_WRITE_STALL);
    if (serve_ratelimit_ok(&rl, 10, &quiet)) {
        char t[24], n[24];
        snprintf(t, sizeof t, "%g", c->a->srv->write_timeout);
        snprintf(n, sizeof n, "%lu", quiet);
        log_kv(LOG_WARN, "connection closed: its client read nothing of the answer for --request-timeout",
               LOG_NUM("request_timeout_seconds"), t, LOG_NUM("closes_not_logged"), n, NULL);
    }
    /* An abortive close: what the client never read is dropped by the
     * kernel at once rather than kept for its retransmission timeouts. */
    int fd = h2o_socket_get_fd(c->sock);
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    shutdown(fd, SHUT_RDWR);
}

static void on_tick(h2o_timeout_entry_t *entry) {
    serve_conn *c = H2O_STRUCT_FROM_MEMBER(serve_conn, stall, entry);
    uint64_t now = acked(c->sock);
    bool answering = h2o_socket_is_writing(c->sock) || serve_h2_answering(c);
    if (!answering || now >= c->acked + STALL_MIN_PROGRESS) {
        c->stalled = 0;
    } else if (++c->stalled >= STALL_TICKS) {
        stalled_close(c); /* h2o closes it: on_conn_close forgets it */
        return;
    }
    c->acked = now;
    h2o_timeout_link(c->a->accept_ctx.ctx->loop, &c->a->stall_check, &c->stall);
}

void serve_stall_start(serve_acceptor *a) {
    uint64_t ms = (uint64_t)(a->srv->write_timeout * 1000 / STALL_TICKS);
    h2o_timeout_init(a->accept_ctx.ctx->loop, &a->stall_check, ms ? ms : 1);
}

void serve_stall_watch(serve_conn *c) {
    c->stall.cb = on_tick;
    c->acked = acked(c->sock);
    h2o_timeout_link(c->a->accept_ctx.ctx->loop, &c->a->stall_check, &c->stall);
}

void serve_stall_forget(serve_conn *c) {
    if (h2o_timeout_is_linked(&c->stall)) h2o_timeout_unlink(&c->stall);
}

void serve_stall_dispose(serve_acceptor *a) { h2o_timeout_dispose(a->accept_ctx.ctx->loop, &a->stall_check); }
