/* server/serve.h - what the parts of `otel-webhook serve` share.
 *
 *   cmd_serve.c     the command: flags, set-up in order, one release chain
 *   serve_http.c    the routes and their handlers
 *   serve_cr.c      the custom resources' admission routes (cr_admission.h)
 *                   and the workers that answer those that may wait on the
 *                   API server
 *   serve_convert.c POST /convert, the collector conversion webhook
 *   serve_framing.c HTTP/1 requests whose length is ambiguous (smuggling)
 *   serve_loop.c    the event loops, the watcher and the signal thread:
 *                   start, run, shutdown
 *   serve_accept.c  taking connections: the fd-limit back-off, the TLS
 *                   handshake and the protocol it picked
 *   serve_h2.c      the request-body budget of an HTTP/2 connection, and
 *                   its rapid-reset limit
 *   serve_inflight.c the request bytes held across all connections, and
 *                   the answer past --max-inflight-bytes
 *   serve_stall.c   the write timeout: answers their clients do not read
 *
 * cmd_serve.c fills a serve_server before any thread starts; while the
 * threads run, only the fields marked shared change. */
#ifndef SERVER_SERVE_H
#define SERVER_SERVE_H

#include "certs/tls.h"
#include "kube/filesource.h"
#include "kube/livesource.h"
#include "kube/store.h"
#include "server/cr_admission.h"
#include "server/review.h"

#include <h2o.h>

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* --max-tree-bytes' default: the JSON tree one request may cost (docs/serve.md,
 * "Bounds"). The loops (--threads=2 in the Deployment) and the two access
 * review workers may each hold one; a collector's defaulting on a loop
 * holds a second at most (its config shared, not copied; measured 2.0x
 * the tree), so (2 x 2 + 2) x 32 MiB = 192 MiB of trees, with the 13 MiB
 * the release build starts with, leaves 51 MiB of a 256 MiB replica for
 * the bodies in flight. */
#define SERVE_MAX_TREE_BYTES ((size_t)32 << 20)

/* The first size of a connection's read buffers (serve_loop.c's
 * loop_main says why); h2o doubles them from there. */
#define SERVE_READ_BUFFER 65536

/* --max-inflight-bytes' default: the request bytes all connections may
 * hold at once (serve_inflight.c). The count is taken after each socket
 * read, so one read per loop (up to the kernel's receive buffer, a few
 * MiB, in a buffer that doubles) comes on top before it is refused, and
 * TLS and allocator overheads with it: 32 MiB keeps the whole within
 * those 51 MiB (docs/serve.md, "Bounds", measured). */
#define SERVE_MAX_INFLIGHT_BYTES ((size_t)32 << 20)

typedef struct serve_server {
    h2o_globalconf_t config;
    tls_server *tls;
    kube_store *store;
    kube_filesource *fs;      /* NULL without --resources */
    kube_livesource *live;    /* NULL without --kubeconfig or --in-cluster */
    pthread_mutex_t store_mu; /* every store writer: files and the live source */
    review_env env;
    cr_env cr;                /* the custom resources' admissions */
    double grace, delay;      /* --shutdown-grace, --shutdown-delay (seconds) */
    double files_grace;       /* --resources-grace: read errors tolerated before /readyz says 503 */
    double live_grace;        /* --stale-grace: API server silence tolerated before /readyz says 503 */
    atomic_bool live_stale;   /* the watcher's verdict on live_grace */
    size_t max_body;          /* --max-body: one request body (HTTP/2: one stream's) */
    size_t h2_budget;         /* the request bodies one HTTP/2 connection may hold at once */
    size_t max_inflight;      /* --max-inflight-bytes: request bytes held across all connections */
    double write_timeout;     /* --request-timeout: an answer not read for this long closes its connection */
    sigset_t signals;         /* blocked everywhere, taken by the signal thread */

    /* Shared. */
    atomic_bool stopping;     /* set once by the signal thread */
    atomic_bool recheck;      /* SIGHUP: the watcher checks its files now (under mu) */
    atomic_bool ready;        /* a certificate is in service */
    atomic_int failing_files; /* written by the watcher */
    atomic_int failing_dirs;  /* written by the watcher */
    atomic_llong files_unreadable_since_ms; /* by the watcher: CLOCK_MONOTONIC ms, 0 while reads succeed */
    atomic_bool files_stale;  /* by the watcher: reads failing for files_grace or longer */
    atomic_size_t inflight;   /* serve_inflight.c's total: request bytes the connections hold now */

    /* serve_loop.c's, from serve_loops_start() to serve_loops_join(). */
    struct serve_loop *loops;
    int nloops;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    pthread_barrier_t started; /* the loops registered their wake-up receivers */
    struct serve_acceptor **acceptors; /* every loop's, for the hand-offs of serve_accept.c */
    pthread_mutex_t accept_mu;  /* the acceptors' ready and closed, and every hand-off */
    pthread_t watcher, sigthr;

    /* serve_cr.c's workers, from serve_cr_start() to serve_cr_stop(). */
    struct serve_cr_pool *cr_pool;
} serve_server;

/* CLOCK_MONOTONIC, in seconds. */
static inline double serve_now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* At most one log line per interval for an event that may repeat fast (a
 * client can trigger it at will): ok() says whether this one may be
 * logged, and how many were kept quiet since the last. Any thread. */
typedef struct serve_ratelimit {
    atomic_llong next_ms; /* CLOCK_MONOTONIC ms before which lines are kept quiet */
    atomic_ulong quiet;
} serve_ratelimit;

static inline bool serve_ratelimit_ok(serve_ratelimit *r, double interval_s, unsigned long *quiet) {
    long long now = (long long)(serve_now_mono() * 1000), next = atomic_load(&r->next_ms);
    if (now < next || !atomic_compare_exchange_strong(&r->next_ms, &next, now + (long long)(interval_s * 1000))) {
        atomic_fetch_add(&r->quiet, 1);
        return false;
    }
    *quiet = atomic_exchange(&r->quiet, 0);
    return true;
}

/* serve_http.c: registers the one host and the handler of every route in
 * srv->config (after h2o_config_init; released by h2o_config_dispose). */
void serve_http_routes(serve_server *srv);

/* serve_cr.c: answers the request of a custom resource admission route
 * (a cr_route): on the loop, or, for a collector's validation while a
 * live source is set (it may wait on SubjectAccessReviews), on one of the
 * workers, whose answer the loop sends when it comes back. */
void serve_cr_admission(serve_server *srv, h2o_req_t *req, int route);
/* The workers: serve_cr_start() before the first loop starts (none
 * without a live source), serve_cr_stop() once every loop has ended and
 * the live source is stopped (which ends the reviews still in flight). */
void serve_cr_start(serve_server *srv);
void serve_cr_stop(serve_server *srv);
/* Each loop's end of them, on the loop's thread: serve_cr_loop_new()
 * after h2o_context_init (it registers a receiver on ctx->queue);
 * serve_cr_loop_inflight() counts the admissions handed off and not
 * answered yet; serve_cr_loop_close(), at the end of the shutdown and
 * before h2o_context_dispose, sends the answers already back, answers the
 * others at once without their access reviews (refused as "the webhook is
 * shutting down" when they need one), frees l and returns how many of
 * those it answered (their bytes may still need a turn of the loop). */
struct serve_cr_loop *serve_cr_loop_new(serve_server *srv, h2o_context_t *ctx);
size_t serve_cr_loop_inflight(const struct serve_cr_loop *l);
size_t serve_cr_loop_close(struct serve_cr_loop *l);
/* serve_convert.c: answers req and returns true when it is for /convert;
 * false (nothing sent) for any other path. */
bool serve_convert_route(serve_server *srv, h2o_req_t *req);

/* serve_framing.c: NULL when the HTTP/1 request being handled says its
 * length once, else why not (the caller answers 400 and closes). */
const char *serve_framing_check(h2o_req_t *req);

/* serve_accept.c: one per loop. Accepts from the loop's listening socket,
 * pauses for 100 ms when the process runs out of file descriptors (the
 * loop would spin on the listener otherwise), hands each connection to
 * the loop serving the fewest (itself on a tie), does the TLS handshake
 * and starts HTTP/1.1 or, when ALPN picked it, HTTP/2 under serve_h2.c's
 * budget. open_conns counts sockets this loop serves and has not closed
 * yet; load (any thread) adds the connections handed to it and not taken
 * yet, pending counts those alone. */
typedef struct serve_acceptor {
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener;
    h2o_timeout_entry_t backoff; /* linked while accepting is paused */
    h2o_timeout_t stall_check;   /* serve_stall.c's: every connection's write-progress tick */
    h2o_multithread_receiver_t handoff; /* connections another loop accepted for this one */
    size_t open_conns;
    atomic_size_t load, pending;
    bool ready, closed;          /* under srv->accept_mu: hand-offs are taken, no more are */
    serve_server *srv;
} serve_acceptor;

void serve_accept_start(serve_acceptor *a, serve_server *srv, h2o_context_t *ctx, int fd);
/* Stops accepting for good, from this listener and from other loops, and
 * closes the listening socket; hand-offs already sent are still taken
 * (and closed) while the loop runs: pending says how many are left. */
void serve_accept_stop(serve_acceptor *a);
/* After serve_accept_stop, once pending is 0: the hand-off receiver goes. */
void serve_accept_dispose(serve_acceptor *a);

/* What serve_accept.c keeps for each accepted socket (its on_close.data),
 * from accept to close. */
typedef struct serve_conn {
    serve_acceptor *a;
    h2o_socket_t *sock;
    h2o_timeout_entry_t handshake; /* linked until the TLS handshake ends */
    struct timeval connected_at;
    struct serve_h2_guard *h2;     /* HTTP/2 connections only */
    bool http1;                    /* serving HTTP/1.1 (after the handshake) */
    size_t inflight;               /* serve_inflight.c: this connection's share of srv->inflight */
    h2o_socket_cb inner_read;      /* serve_inflight.c: h2o's read callback, behind its own */
    bool read_hooked;              /* serve_inflight.c saw a read start (the handshake's first) */
    h2o_timeout_entry_t stall;     /* serve_stall.c: linked from the handshake's end to close */
    uint64_t acked;                /* serve_stall.c: the kernel's count of bytes the client acknowledged */
    int stalled;                   /* serve_stall.c: ticks in a row with an answer pending and no progress */
} serve_conn;

/* The serve_conn of a connection serve_accept.c accepted; NULL for any
 * other socket (the listeners). */
serve_conn *serve_conn_of(h2o_socket_t *sock);

/* serve_inflight.c. serve_inflight_init(), once before any loop starts:
 * NULL, or why the count cannot work in this executable (cmd_serve.c
 * exits with it). recount() after a connection's held bytes changed
 * outside a read (serve_h2.c's counts), close() when it closes; over()
 * says whether the total is past the cap; refused() counts and logs one
 * refusal (serve_h2.c's, of a stream). hooked() says whether the count
 * saw this connection's reads start (checked after its handshake). */
const char *serve_inflight_init(void);
void serve_inflight_recount(serve_conn *c);
void serve_inflight_close(serve_conn *c);
bool serve_inflight_over(const serve_server *srv);
void serve_inflight_refused(serve_server *srv, const char *proto);
bool serve_inflight_hooked(const serve_conn *c);
/* The least --max-inflight-bytes that lets a request of max_body through:
 * the buffer it takes (capacities double from SERVE_READ_BUFFER). */
size_t serve_inflight_min_cap(size_t max_body);

/* serve_stall.c, on the acceptor's loop. start() with the acceptor (the
 * tick: half of srv->write_timeout), watch() once the connection speaks
 * HTTP, forget() when it closes, dispose() with the acceptor once no
 * connection is left. */
void serve_stall_start(serve_acceptor *a);
void serve_stall_watch(serve_conn *c);
void serve_stall_forget(serve_conn *c);
void serve_stall_dispose(serve_acceptor *a);

/* serve_h2.c. serve_h2_guard() is called right after h2o_http2_accept(sock)
 * and puts the new connection under the budget: more than `budget` bytes
 * of request bodies held for its streams (arriving, queued or being
 * answered), and the connection is closed with GOAWAY ENHANCE_YOUR_CALM.
 * The client's RST_STREAM frames past a rate close it the same way (rapid
 * reset), and a stream whose DATA would take the process past
 * --max-inflight-bytes is refused with RST_STREAM REFUSED_STREAM.
 * NULL when this h2o is not laid out as the one the guard was written for
 * (logged; the caller closes the connection). The handler calls
 * serve_h2_request() for every HTTP/2 request it takes, so that its body
 * is counted until h2o disposes of it. */
struct serve_h2_guard *serve_h2_guard(serve_conn *c, h2o_context_t *ctx, size_t budget, size_t max_body);
void serve_h2_guard_free(struct serve_h2_guard *g);
/* The memory the request bodies of the guard's streams take now (their
 * buffers' capacities; 0 for NULL). */
size_t serve_h2_held(const struct serve_h2_guard *g);
/* Whether an HTTP/2 connection has answers being sent (streams whose body
 * h2o is sending, or holding back for the client's flow-control window);
 * false for any other connection. */
bool serve_h2_answering(const serve_conn *c);
void serve_h2_request(h2o_req_t *req);

/* serve_loop.c. serve_loops_start() starts n event loops accepting from fd
 * (which they then own and close), waits until every loop can be woken,
 * then starts the watcher and the signal thread; srv is complete by then.
 * serve_loops_join() returns after a signal and the shutdown, once every
 * thread serve_loops_start() started has ended, and releases what it took,
 * except when a loop hit the grace deadline with connections still open:
 * such a loop cannot be disposed, and the loops stay allocated (reachable
 * from srv) until the process exits. */
void serve_loops_start(serve_server *srv, int fd, int n);
void serve_loops_join(serve_server *srv);
/* One poll of srv->fs (the watcher's, and the first one at set-up: first
 * says nothing of a reload): kube_filesource_poll's answer, with the
 * failing counts, the read-error start and files_stale updated (not after
 * -2: a poll stopped by the shutdown). */
int serve_loop_poll_files(serve_server *srv, bool first);
/* The JSON tokener and the mutation cache of the loop that owns ctx (for
 * its handlers; the loop's own, never shared with another thread). */
json_tokener *serve_loop_tokener(h2o_context_t *ctx);
mutate_cache *serve_loop_cache(h2o_context_t *ctx);
/* That loop's end of serve_cr.c's workers; NULL once it has closed it. */
struct serve_cr_loop *serve_loop_cr(h2o_context_t *ctx);
/* Errors h2o answered itself on every loop, read without the loops'
 * cooperation: a count may lag by a request, never tear. */
void serve_loops_h2o_errors(const serve_server *srv, unsigned long *too_large, unsigned long *bad_request);

#endif
