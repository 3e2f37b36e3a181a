/* server/serve_loop.c - the threads of `otel-webhook serve`: the event
 * loops, the watcher and the signal thread, from start to shutdown.
 *
 * One h2o event loop per thread, all accepting from one listening socket
 * (each thread polls a dup() of it: the kernel wakes them all and the losers
 * see EAGAIN); serve_accept.c takes the connections and gives each to the
 * loop serving the fewest, which SO_REUSEPORT's hashing would not.
 *
 * Everything that may block runs on one watcher thread, once a second:
 * re-reading changed resource files (published to the loops through the
 * store's atomic snapshot swap) and reloading a rotated certificate (handed
 * to new handshakes by the TLS module's certificate callback). When the
 * resources cannot be read (folder gone, EMFILE) the last good ones stay
 * in service; after --resources-grace of unbroken read errors the watcher
 * marks the files stale, which /readyz answers with 503 (docs/serve.md, "Resource
 * files"). SIGHUP makes it look at once instead of at its next tick (and
 * logs that it did); it never stops the process, so a stray SIGHUP (a
 * closed terminal, a process manager's reload) costs no requests.
 *
 * Nothing a loop runs waits on the API server for longer than an owner
 * lookup's budget: the collector admissions that may send
 * SubjectAccessReviews are answered by serve_cr.c's workers, whose answers
 * come back through a receiver on each loop's queue.
 *
 * Shutdown (SIGTERM, SIGINT): keep serving for --shutdown-delay (endpoints
 * are removed asynchronously), stop accepting, let in-flight requests finish
 * (responses then carry Connection: close; a collector admission with a
 * worker is in flight too), close idle keep-alive connections after at
 * most a second, and exit 0 once no connection is left or at the grace
 * deadline, where what the workers still hold is answered from the loop
 * (serve_cr_loop_close). The workers are joined after the loops. */
#include "server/serve.h"

#include "base/alloc.h"
#include "server/log.h"
#include "server/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


typedef struct serve_loop {
    h2o_context_t ctx; /* first: a connection's ctx is its loop */
    serve_acceptor acc;
    h2o_multithread_receiver_t wakeup;
    json_tokener *tok;
    mutate_cache *cache; /* the collector sidecars this loop built (mutate.h) */
    struct serve_cr_loop *cr; /* this loop's end of serve_cr.c's workers */
    pthread_t tid;
    int fd;
    serve_server *srv;
} serve_loop;

json_tokener *serve_loop_tokener(h2o_context_t *ctx) { return ((serve_loop *)ctx)->tok; }
mutate_cache *serve_loop_cache(h2o_context_t *ctx) { return ((serve_loop *)ctx)->cache; }
struct serve_cr_loop *serve_loop_cr(h2o_context_t *ctx) { return ((serve_loop *)ctx)->cr; }

void serve_loops_h2o_errors(const serve_server *srv, unsigned long *too_large, unsigned long *bad_request) {
    /* Aligned 64-bit loads. */
    *too_large = *bad_request = 0;
    for (int i = 0; i < srv->nloops; i++) {
        uint64_t *e = srv->loops[i].ctx.emitted_error_status;
        *too_large += __atomic_load_n(&e[H2O_STATUS_ERROR_413], __ATOMIC_RELAXED);
        *bad_request += __atomic_load_n(&e[H2O_STATUS_ERROR_400], __ATOMIC_RELAXED);
    }
}

static void on_wakeup(h2o_multithread_receiver_t *r, h2o_linklist_t *messages) {
    (void)r;
    (void)messages; /* wake-ups carry no message */
}

static void *loop_main(void *arg) {
    serve_loop *w = arg;
    serve_server *srv = w->srv;
    /* A socket's read buffers (the TLS records and what they decrypt to)
     * start at this size instead of h2o's 8 KB: a review up to 64 KB (a
     * pod with its managedFields is often 20-60 KB) then arrives without
     * the buffer doubling four times and copying what it held each time
     * (-108K instructions per 60 KB review; docs/performance.md). h2o
     * frees a buffer once it is consumed and keeps up to 16 per thread for
     * reuse, so an idle keep-alive connection holds none; the cost is 64 KB
     * instead of 8 KB for a connection in the middle of a request. The
     * prototype is thread-local in h2o 2.2.5: set here, on the loop's own
     * thread, before its first socket. */
    h2o_socket_buffer_prototype._initial_buf.capacity = SERVE_READ_BUFFER;
    h2o_context_init(&w->ctx, h2o_evloop_create(), &srv->config);
    h2o_multithread_register_receiver(w->ctx.queue, &w->wakeup, on_wakeup);
    w->tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    w->cache = mutate_cache_new(0, 0);
    w->cr = serve_cr_loop_new(srv, &w->ctx);
    serve_accept_start(&w->acc, srv, &w->ctx, w->fd);
    pthread_barrier_wait(&srv->started);
    while (!atomic_load(&srv->stopping)) h2o_evloop_run(w->ctx.loop, INT32_MAX);

    serve_accept_stop(&w->acc);
    h2o_context_request_shutdown(&w->ctx);
    /* h2o 2.2.5 does not close idle HTTP/1 keep-alive connections on
     * shutdown, and the API server always holds some. Every connection
     * waiting for a request sits on the http1 request timer: shortening
     * it to a second lets h2o close them itself (after a second for those
     * that just answered, at once for the others), so the loop drains and
     * the context can be disposed. A request must arrive within that
     * second; one already being answered finishes with Connection: close. */
    if (w->ctx.http1.req_timeout.timeout > 1000) w->ctx.http1.req_timeout.timeout = 1000;
    double deadline = serve_now_mono() + srv->grace;
    /* A collector admission with a worker keeps its connection open; one
     * whose client left is waited for too, so that its log line and
     * metrics are not lost. */
    while ((w->acc.open_conns > 0 || atomic_load(&w->acc.pending) > 0 || serve_cr_loop_inflight(w->cr) > 0) &&
           serve_now_mono() < deadline)
        h2o_evloop_run(w->ctx.loop, 50);
    /* At the deadline, the admissions still with a worker are answered
     * from here (refused when they need the API server); a tenth of a
     * second more lets those answers out (HTTP/2 writes on the loop's
     * next turn) and their connections close. */
    size_t answered = serve_cr_loop_close(w->cr);
    w->cr = NULL;
    for (double end = serve_now_mono() + 0.1; answered > 0 && w->acc.open_conns > 0 && serve_now_mono() < end;)
        h2o_evloop_run(w->ctx.loop, 10);
    /* request_shutdown links a timer that dispose asserts on (h2o 2.2.5). */
    if (h2o_timeout_is_linked(&w->ctx.http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&w->ctx.http2._graceful_shutdown_timeout);
    size_t left = w->acc.open_conns + atomic_load(&w->acc.pending);
    h2o_multithread_unregister_receiver(w->ctx.queue, &w->wakeup);
    json_tokener_free(w->tok);
    /* Every request this loop answered has freed its result (the handlers
     * run to the end on this thread): nothing refers to the entries. */
    mutate_cache_free(w->cache);
    w->cache = NULL;
    /* Connections still open keep timers linked, and h2o cannot dispose a
     * context with live timers: the process exits without disposing then. */
    if (left == 0) {
        serve_accept_dispose(&w->acc);
        h2o_evloop_t *loop = w->ctx.loop;
        h2o_context_dispose(&w->ctx);
        h2o_evloop_destroy(loop);
    }
    return NULL;
}

/* One poll of the resource folders, and what it tells the routes: the
 * failing counts, the start of unbroken read errors, and whether they have
 * lasted --resources-grace (said once when readiness changes because of
 * it). The caller must not hold store_mu. */
int serve_loop_poll_files(serve_server *srv, bool first) {
    kube_filesource_status st;
    pthread_mutex_lock(&srv->store_mu);
    int changed = kube_filesource_poll(srv->fs, NULL);
    kube_filesource_get_status(srv->fs, &st);
    pthread_mutex_unlock(&srv->store_mu);
    if (changed == -2) return changed; /* stopped for the shutdown: nothing learnt */
    if (changed > 0 && !first) log_kv(LOG_INFO, "resources reloaded", NULL);
    for (int i = 0; i < st.new_failures; i++) metrics_error(ERR_SOURCE);
    atomic_store(&srv->failing_files, st.failing_files);
    atomic_store(&srv->failing_dirs, st.failing_dirs);
    atomic_store(&srv->files_unreadable_since_ms, (long long)(st.unreadable_since * 1000));
    bool stale = st.unreadable_since > 0 && serve_now_mono() - st.unreadable_since >= srv->files_grace;
    if (stale != atomic_exchange(&srv->files_stale, stale)) {
        char g[32];
        snprintf(g, sizeof g, "%g", srv->files_grace);
        if (stale)
            log_kv(LOG_ERROR, "resources unreadable past the grace period: not ready", LOG_NUM("grace_seconds"), g,
                   NULL);
        else log_kv(LOG_INFO, "resources readable again: ready", NULL);
    }
    return changed;
}

/* The API server silent past --stale-grace (every request failing, not a
 * quiet watch: an open one counts as an answer) makes the replica not
 * ready, said once when it starts and once when it ends. Only once synced:
 * before, /readyz is 503 anyway. */
static void check_live(serve_server *srv) {
    double silent = kube_livesource_silence(srv->live);
    bool stale = kube_livesource_synced(srv->live) && silent >= srv->live_grace;
    if (stale == atomic_exchange(&srv->live_stale, stale)) return;
    char g[32];
    snprintf(g, sizeof g, "%g", srv->live_grace);
    if (stale)
        log_kv(LOG_ERROR, "the API server has not answered past the grace period: not ready", LOG_NUM("grace_seconds"),
               g, NULL);
    else log_kv(LOG_INFO, "the API server answers again: ready", NULL);
}

/* Once a second, and at once after SIGHUP: the certificate, the resource
 * files and the API server's silence. */
static void *watcher_main(void *arg) {
    serve_server *srv = arg;
    pthread_mutex_lock(&srv->mu);
    while (!atomic_load(&srv->stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        while (!atomic_load(&srv->stopping) && !atomic_load(&srv->recheck) &&
               pthread_cond_timedwait(&srv->cond, &srv->mu, &ts) == 0) {
        }
        if (atomic_load(&srv->stopping)) break;
        bool hup = atomic_exchange(&srv->recheck, false);
        pthread_mutex_unlock(&srv->mu);
        char msg[512];
        static char refused[512]; /* watcher thread only */
        int r = tls_server_check_reload(srv->tls, msg, sizeof msg);
        if (r > 0) {
            log_kv(LOG_INFO, "serving certificate reloaded", "cert", msg, NULL);
            refused[0] = 0;
        } else if (r < 0 && strcmp(msg, refused) != 0) {
            /* A refused pair is re-read every second until fixed: say it
             * once per distinct reason, not once a second. */
            metrics_error(ERR_CERT_RELOAD);
            log_kv(LOG_ERROR, "rotated certificate refused", "error", msg, NULL);
            snprintf(refused, sizeof refused, "%s", msg);
        }
        if (srv->fs && hup) {
            pthread_mutex_lock(&srv->store_mu);
            kube_filesource_recheck(srv->fs);
            pthread_mutex_unlock(&srv->store_mu);
        }
        if (srv->fs) serve_loop_poll_files(srv, false);
        if (srv->live) check_live(srv);
        /* After the checks, so that whoever sent the signal can tell from
         * the log that what changed before it is in service. */
        if (hup) log_kv(LOG_INFO, "SIGHUP: certificate and resource files checked", NULL);
        pthread_mutex_lock(&srv->mu);
    }
    pthread_mutex_unlock(&srv->mu);
    return NULL;
}

/* SIGHUP: a look at the files now, and wait on. SIGTERM, SIGINT: the
 * shutdown; SIGHUPs after it stay pending, blocked in every thread. */
static void *signal_main(void *arg) {
    serve_server *srv = arg;
    int sig = 0;
    for (;;) {
        sigwait(&srv->signals, &sig);
        if (sig != SIGHUP) break;
        pthread_mutex_lock(&srv->mu);
        atomic_store(&srv->recheck, true);
        pthread_cond_broadcast(&srv->cond);
        pthread_mutex_unlock(&srv->mu);
    }
    log_kv(LOG_INFO, "shutting down", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
    if (srv->delay > 0) {
        struct timespec d = {(time_t)srv->delay, (long)((srv->delay - (double)(time_t)srv->delay) * 1e9)};
        nanosleep(&d, NULL); /* keep serving while endpoints are withdrawn */
    }
    atomic_store(&srv->stopping, true);
    pthread_mutex_lock(&srv->mu);
    pthread_cond_broadcast(&srv->cond);
    pthread_mutex_unlock(&srv->mu);
    for (int i = 0; i < srv->nloops; i++) h2o_multithread_send_message(&srv->loops[i].wakeup, NULL);
    return NULL;
}

void serve_loops_start(serve_server *srv, int fd, int n) {
    pthread_mutex_init(&srv->mu, NULL);
    pthread_cond_init(&srv->cond, NULL);
    srv->nloops = n;
    srv->loops = xcalloc((size_t)n, sizeof *srv->loops);
    pthread_barrier_init(&srv->started, NULL, (unsigned)n + 1);
    serve_cr_start(srv);
    pthread_mutex_init(&srv->accept_mu, NULL);
    srv->acceptors = xcalloc((size_t)n, sizeof *srv->acceptors);
    for (int i = 0; i < n; i++) srv->acceptors[i] = &srv->loops[i].acc;
    for (int i = 0; i < n; i++) {
        serve_loop *w = &srv->loops[i];
        w->srv = srv;
        w->fd = i == 0 ? fd : dup(fd);
        pthread_create(&w->tid, NULL, loop_main, w);
    }
    pthread_barrier_wait(&srv->started);
    pthread_create(&srv->watcher, NULL, watcher_main, srv);
    pthread_create(&srv->sigthr, NULL, signal_main, srv);
}

void serve_loops_join(serve_server *srv) {
    for (int i = 0; i < srv->nloops; i++) pthread_join(srv->loops[i].tid, NULL);
    /* No loop takes answers any more. A worker may still wait on the API
     * server for an admission its loop answered at the grace deadline:
     * stopping the live source ends that request (the loops, which read
     * its snapshots, are gone), and the workers can be joined. */
    kube_livesource_stop(srv->live);
    serve_cr_stop(srv);
    pthread_join(srv->watcher, NULL);
    pthread_join(srv->sigthr, NULL);
    pthread_barrier_destroy(&srv->started);
    pthread_cond_destroy(&srv->cond);
    pthread_mutex_destroy(&srv->mu);
    bool disposed = true;
    for (int i = 0; i < srv->nloops; i++)
        disposed = disposed && srv->loops[i].acc.open_conns == 0 && atomic_load(&srv->loops[i].acc.pending) == 0;
    /* A loop that hit the grace deadline could not dispose its context; its
     * loop stays reachable from srv until exit. */
    if (disposed) {
        pthread_mutex_destroy(&srv->accept_mu);
        free(srv->acceptors);
        srv->acceptors = NULL;
        free(srv->loops);
        srv->loops = NULL;
        srv->nloops = 0;
    }
}
