/* server/serve_accept.c - taking connections off the listening socket:
 * the back-off at the file-descriptor limit, the TLS handshake, and the
 * protocol ALPN picked.
 *
 * At the fd limit accept4() fails with EMFILE (or ENFILE) and leaves the
 * connection in the kernel's queue, so the listener stays readable and a
 * loop that simply tries again spins at 100% CPU until a descriptor comes
 * free. Instead the loop stops reading the listener for 100 ms (h2o's
 * hundred_ms_timeout), keeps serving the connections it has, counts the
 * pause (otel_webhook_accept_paused_total) and says so in the log at most
 * every 10 s; then it tries again. Queued connections wait in the backlog
 * meanwhile, as they would behind a busy server.
 *
 * The handshake and the protocol dispatch are h2o_accept()'s (lib/core/
 * util.c in h2o 2.2.5: a handshake deadline of ctx->handshake_timeout,
 * then h2o_http2_accept() when ALPN selected h2, h2o_http1_accept()
 * otherwise), done here for one reason: h2o_accept() gives no hook between
 * "this is an HTTP/2 connection" and its first frames, and serve_h2.c must
 * put every HTTP/2 connection under its budget right there. Frames that
 * arrived with the handshake would be parsed inside h2o_http2_accept(),
 * before the guard exists, so they are held back and handed afterwards to
 * the socket's read callback (sock->_cb.read, set to h2o's on_read by
 * h2o_http2_accept(), which hands them to it the same way). Without
 * --http2 ALPN offers http/1.1 only, so the HTTP/2 branch is never taken.
 *
 * Every loop accepts, and hands what it accepted to the loop serving the
 * fewest connections (itself on a tie), through h2o's inter-thread queue.
 * Left to the kernel, whichever loop wins the wake-up race takes the
 * connections: the API server holds a few keep-alive connections for a
 * long time, and with --threads 2 all four of a benchmark's landed on one
 * loop while the other core sat idle (accepting one connection per wake-up
 * still gave 3 and 1: the winner's handshake is short). Counting is cheap
 * and exact; a hand-off costs a mutex and a wake-up, once per connection.
 * The accept itself is h2o_evloop_socket_accept()'s (accept4, then
 * TCP_NODELAY and an evloop socket on the loop that serves it). */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/log.h"
#include "server/metrics.h"

#include <h2o/http1.h>
#include <h2o/http2.h>

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static void on_accept(h2o_socket_t *listener, const char *err);

/* The connection the dispatch below is starting, so that on_conn_close can
 * tell it that the connection is gone already should h2o_http2_accept()
 * close it. One per thread: a loop is one thread. */
static __thread serve_conn *starting;

static void on_conn_close(void *data) {
    serve_conn *c = data;
    c->a->open_conns--;
    atomic_fetch_sub(&c->a->load, 1);
    if (h2o_timeout_is_linked(&c->handshake)) h2o_timeout_unlink(&c->handshake);
    serve_stall_forget(c);
    serve_inflight_close(c);
    if (starting == c) starting = NULL;
    serve_h2_guard_free(c->h2);
    free(c);
}

serve_conn *serve_conn_of(h2o_socket_t *sock) { return sock->on_close.cb == on_conn_close ? sock->on_close.data : NULL; }

/* serve_inflight.c counts a connection's bytes through its reads, which
 * start with the handshake's; one it did not see start is refused (said
 * once: every connection would be). */
static bool counted(serve_conn *c) {
    if (serve_inflight_hooked(c)) return true;
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        log_kv(LOG_ERROR, "connection refused: this h2o does not start its reads through h2o_socket_read_start, so the "
                          "request bytes held across connections cannot be bounded", NULL);
    return false;
}

static void on_handshake_timeout(h2o_timeout_entry_t *entry) {
    serve_conn *c = H2O_STRUCT_FROM_MEMBER(serve_conn, handshake, entry);
    h2o_socket_close(c->sock); /* frees c */
}

static bool is_h2(h2o_iovec_t proto) {
    for (const h2o_iovec_t *p = h2o_http2_alpn_protocols; p->len; p++)
        if (proto.len == p->len && memcmp(proto.base, p->base, p->len) == 0) return true;
    return false;
}

static void on_handshake(h2o_socket_t *sock, const char *err) {
    serve_conn *c = sock->on_close.data;
    serve_acceptor *a = c->a;
    h2o_timeout_unlink(&c->handshake);
    if (err || !counted(c)) {
        h2o_socket_close(sock);
        return;
    }
    serve_stall_watch(c);
    if (!is_h2(h2o_socket_ssl_get_selected_protocol(sock))) {
        c->http1 = true;
        h2o_http1_accept(&a->accept_ctx, sock, c->connected_at);
        return;
    }
    /* Frames that came with the handshake wait until the guard is in place
     * (see the top of the file). */
    h2o_buffer_t *early = NULL;
    if (sock->input->size) {
        early = sock->input;
        h2o_buffer_init(&sock->input, &h2o_socket_buffer_prototype);
    }
    starting = c;
    h2o_http2_accept(&a->accept_ctx, sock, c->connected_at);
    if (starting != c) { /* closed already */
        if (early) h2o_buffer_dispose(&early);
        return;
    }
    starting = NULL;
    serve_server *srv = a->srv;
    c->h2 = serve_h2_guard(c, a->accept_ctx.ctx, srv->h2_budget, srv->max_body);
    if (early) {
        h2o_buffer_dispose(&sock->input);
        sock->input = early;
    }
    /* Unguarded, the connection is refused. h2o 2.2.5 cannot close one of
     * its connections from outside, but it closes one whose socket reads
     * end of file, and frees everything it holds. */
    if (!c->h2) shutdown(h2o_socket_get_fd(sock), SHUT_RDWR);
    else if (early && sock->_cb.read) sock->_cb.read(sock, NULL);
}

static void on_backoff_end(h2o_timeout_entry_t *entry) {
    serve_acceptor *a = H2O_STRUCT_FROM_MEMBER(serve_acceptor, backoff, entry);
    h2o_socket_read_start(a->listener, on_accept);
}

/* Out of descriptors: pause, count, and say so now and then. */
static void pause_accepting(serve_acceptor *a, int err) {
    static serve_ratelimit rl;
    unsigned long quiet;
    h2o_socket_read_stop(a->listener);
    h2o_context_t *ctx = a->accept_ctx.ctx;
    h2o_timeout_link(ctx->loop, &ctx->hundred_ms_timeout, &a->backoff);
    metrics_accept_paused();
    if (serve_ratelimit_ok(&rl, 10, &quiet)) {
        char n[24], open[24];
        snprintf(n, sizeof n, "%lu", quiet);
        snprintf(open, sizeof open, "%zu", a->open_conns);
        log_kv(LOG_WARN, "out of file descriptors: not accepting for 100 ms", "error", strerror(err),
               LOG_NUM("open_connections"), open, LOG_NUM("pauses_not_logged"), n, NULL);
    }
}

/* Serves fd on a's loop (a's thread): the TLS handshake under its deadline. */
static void conn_start(serve_acceptor *a, int fd) {
    int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    h2o_socket_t *sock = h2o_evloop_socket_create(a->accept_ctx.ctx->loop, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
    serve_conn *c = xcalloc(1, sizeof *c);
    c->a = a;
    c->sock = sock;
    c->connected_at = *h2o_get_timestamp(a->accept_ctx.ctx, NULL, NULL);
    c->handshake.cb = on_handshake_timeout;
    a->open_conns++;
    sock->on_close.cb = on_conn_close;
    sock->on_close.data = c;
    h2o_timeout_link(a->accept_ctx.ctx->loop, &a->accept_ctx.ctx->handshake_timeout, &c->handshake);
    h2o_socket_ssl_handshake(sock, a->accept_ctx.ssl_ctx, NULL, on_handshake);
}

typedef struct handoff_msg {
    h2o_multithread_message_t super;
    int fd;
} handoff_msg;

/* The loop that serves the fewest connections, self on a tie; its load
 * counts fd from now on. Under accept_mu, so that a loop stopping in the
 * meantime is never sent anything. */
static void assign(serve_acceptor *self, int fd) {
    serve_server *srv = self->srv;
    pthread_mutex_lock(&srv->accept_mu);
    serve_acceptor *best = self;
    size_t least = atomic_load(&self->load);
    for (int i = 0; i < srv->nloops; i++) {
        serve_acceptor *o = srv->acceptors[i];
        size_t l = atomic_load(&o->load);
        if (o != self && o->ready && !o->closed && l < least) best = o, least = l;
    }
    atomic_fetch_add(&best->load, 1);
    if (best != self) {
        handoff_msg *m = xcalloc(1, sizeof *m);
        m->fd = fd;
        atomic_fetch_add(&best->pending, 1);
        h2o_multithread_send_message(&best->handoff, &m->super);
    }
    pthread_mutex_unlock(&srv->accept_mu);
    if (best == self) conn_start(self, fd);
}

static void on_handoff(h2o_multithread_receiver_t *r, h2o_linklist_t *messages) {
    serve_acceptor *a = H2O_STRUCT_FROM_MEMBER(serve_acceptor, handoff, r);
    while (!h2o_linklist_is_empty(messages)) {
        handoff_msg *m = H2O_STRUCT_FROM_MEMBER(handoff_msg, super.link, messages->next);
        h2o_linklist_unlink(&m->super.link);
        /* Sent before this loop stopped accepting: closed as the listener's
         * queue is, the client retries elsewhere. */
        if (a->closed) {
            close(m->fd);
            atomic_fetch_sub(&a->load, 1);
        } else {
            conn_start(a, m->fd);
        }
        atomic_fetch_sub(&a->pending, 1);
        free(m);
    }
}

static void on_accept(h2o_socket_t *listener, const char *err) {
    serve_acceptor *a = listener->data;
    if (err) return;
    for (int i = 0; i < 16; i++) {
        int fd = accept4(h2o_socket_get_fd(listener), NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            /* Also when another loop won the connection (EAGAIN) or the
             * client gave up in the queue (ECONNABORTED). */
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) pause_accepting(a, errno);
            return;
        }
        assign(a, fd);
    }
}

void serve_accept_start(serve_acceptor *a, serve_server *srv, h2o_context_t *ctx, int fd) {
    pthread_mutex_lock(&srv->accept_mu);
    *a = (serve_acceptor){.srv = srv};
    a->accept_ctx = (h2o_accept_ctx_t){.ctx = ctx, .hosts = srv->config.hosts, .ssl_ctx = tls_server_ctx(srv->tls)};
    a->backoff.cb = on_backoff_end;
    h2o_multithread_register_receiver(ctx->queue, &a->handoff, on_handoff);
    a->listener = h2o_evloop_socket_create(ctx->loop, fd, H2O_SOCKET_FLAG_DONT_READ);
    a->listener->data = a;
    serve_stall_start(a);
    a->ready = true;
    pthread_mutex_unlock(&srv->accept_mu);
    h2o_socket_read_start(a->listener, on_accept);
}

void serve_accept_stop(serve_acceptor *a) {
    pthread_mutex_lock(&a->srv->accept_mu);
    a->closed = true;
    pthread_mutex_unlock(&a->srv->accept_mu);
    /* A pause that would end after the listener is gone must not. */
    if (h2o_timeout_is_linked(&a->backoff)) h2o_timeout_unlink(&a->backoff);
    if (h2o_socket_is_reading(a->listener)) h2o_socket_read_stop(a->listener);
    h2o_socket_close(a->listener);
    a->listener = NULL;
}

void serve_accept_dispose(serve_acceptor *a) {
    serve_stall_dispose(a);
    h2o_multithread_unregister_receiver(a->accept_ctx.ctx->queue, &a->handoff);
}
