/* server/serve.c - `otel-webhook serve`: the HTTPS admission server on h2o.
 *
 * One h2o event loop per thread, all accepting from one listening socket
 * (each thread polls a dup() of it: the kernel wakes them all and the losers
 * see EAGAIN, which spreads connections better than SO_REUSEPORT hashing
 * with few clients). Requests are answered inline in the loop: a mutation
 * costs tens of microseconds, far less than handing it to another thread.
 *
 * HTTP/1.1 only by default. The API server then opens parallel connections
 * for concurrent admissions, which spreads them over the loops, and h2o
 * 2.2.5's HTTP/2, which carries unpatched denial-of-service issues, stays
 * off unless --http2 asks for it.
 *
 * Everything that may block runs on one watcher thread, once a second:
 * re-reading changed resource files (published to the loops through the
 * store's atomic snapshot swap) and reloading a rotated certificate (handed
 * to new handshakes by the TLS module's certificate callback).
 *
 * With --kubeconfig or --in-cluster, the live source (kube/livesource.h)
 * adds its informer, publisher and version threads; the loops only read its
 * snapshots and, for owners, Secrets and ConfigMaps it does not watch, make
 * GETs bounded by --lookup-budget. Files and the live source are two layers
 * of one store; a live object wins over a file's for the same
 * kind/namespace/name. Both writers hold S.store_mu around their updates,
 * because the live objects are also in the informers' maps and json-c
 * reference counts are not atomic.
 *
 * Shutdown (SIGTERM, SIGINT): keep serving for --shutdown-delay (endpoints
 * are removed asynchronously), stop accepting, let in-flight requests finish
 * (responses then carry Connection: close), close idle keep-alive
 * connections after at most a second, and exit 0 once no connection is
 * left or at the grace deadline. */
#include "server/cli.h"

#include "base/alloc.h"
#include "certs/tls.h"
#include "kube/filesource.h"
#include "kube/kubeconfig.h"
#include "kube/livesource.h"
#include "mutate/defaults.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/review.h"

#include <h2o.h>
#include <h2o/http1.h>
#include <h2o/http2.h>

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
    "usage: otel-webhook serve --listen HOST:PORT --tls-cert FILE --tls-key FILE\n"
    "                          [--resources DIR]... [--native-sidecars auto|on|off] [--config FILE]\n"
    "                          [--threads N] [options]\n"
    "\n"
    "Serves POST /mutate-v1-pod (AdmissionReview admission.k8s.io/v1), GET /healthz, /readyz, /metrics.\n"
    "\n"
    "  --listen HOST:PORT        address to listen on, e.g. 0.0.0.0:10250 or [::]:10250\n"
    "  --tls-cert FILE           serving certificate (PEM, leaf first); reloaded when it changes\n"
    "  --tls-key FILE            its private key (PEM); reloaded with the certificate\n"
    "  --resources DIR           folder of Instrumentation, OpenTelemetryCollector, Namespace (and other)\n"
    "                            manifests, re-read when a file changes; repeatable\n"
    "  --native-sidecars MODE    collector sidecar as a native sidecar: on, off, or auto (default; without\n"
    "                            a cluster to ask, auto means off)\n"
    "  --config FILE             settings file (default images, enabled languages, ...)\n"
    "  --kubeconfig FILE         watch Instrumentations, collectors and namespaces of the cluster in FILE's\n"
    "                            current context (token, tokenFile or client certificate)\n"
    "  --context NAME            use this kubeconfig context instead of current-context\n"
    "  --in-cluster              the same from inside a pod: KUBERNETES_SERVICE_HOST/PORT, service-account token\n"
    "  --service-account-dir DIR token and ca.crt for --in-cluster\n"
    "                            (default /var/run/secrets/kubernetes.io/serviceaccount)\n"
    "  --lookup-budget MS        time an admission may spend on owner/Secret/ConfigMap GETs (default 200)\n"
    "  --watch-timeout SEC       server-side timeout of each watch request (default 300)\n"
    "  --watch-idle-timeout SEC  reopen a watch that sent nothing, not even a bookmark, this long (default 120)\n"
    "  --threads N               event loops (default: the number of cores)\n"
    "  --namespace NS            namespace of resource objects that name none (default: default)\n"
    "  --max-body BYTES          largest request body accepted, larger gets 413 (default 6291456)\n"
    "  --request-timeout SEC     close connections idle or stalled this long (default 10)\n"
    "  --shutdown-delay SEC      keep serving this long after SIGTERM before closing the listener (default 0)\n"
    "  --shutdown-grace SEC      longest wait for in-flight requests after that (default 10)\n"
    "  --tls-min-version 1.2|1.3 oldest TLS version accepted (default 1.2)\n"
    "  --http2                   also offer HTTP/2 (off by default: h2o 2.2.5's HTTP/2 has known DoS issues)\n"
    "  --log-format json|text    log lines as JSON objects (default) or text\n"
    "  --log-level LEVEL         debug, info (default), warn or error\n";

typedef struct worker {
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener;
    h2o_multithread_receiver_t wakeup;
    json_tokener *tok;
    size_t open_conns;
    pthread_t tid;
    int fd;
} worker;

static struct {
    h2o_globalconf_t config;
    tls_server *tls;
    kube_store *store;
    kube_filesource *fs;
    kube_livesource *live;
    pthread_mutex_t store_mu; /* every store writer: files and the live source */
    mutate_settings cfg;
    kube_prepare prep; /* the operator's defaulting, for every store source */
    mutate_options mopt_native; /* --native-sidecars auto on a 1.29+ cluster */
    review_env env;
    worker *workers;
    int nthreads;
    atomic_bool stopping;
    atomic_bool ready;
    atomic_int failing_files;
    double grace, delay;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    pthread_barrier_t started; /* workers registered their wake-up receivers */
} S;

static double now_mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void send_body(h2o_req_t *req, int status, const char *reason, const char *type, const char *body, size_t len) {
    req->res.status = status;
    req->res.reason = reason;
    req->res.content_length = len; /* h2o_send_inline does not set it */
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, type, strlen(type));
    h2o_send_inline(req, body, len);
}

static void send_json_error(h2o_req_t *req, int status, const char *reason, const char *msg) {
    char body[256];
    int n = snprintf(body, sizeof body, "{\"error\":\"%s\"}\n", msg);
    send_body(req, status, reason, "application/json", body, (size_t)n);
}

static const char *result_name(metrics_result r) {
    static const char *const n[] = {"mutated", "unchanged", "ignored", "failed open", "rejected"};
    return n[r];
}

static void on_mutate(h2o_req_t *req, worker *w) {
    if (log_enabled(LOG_DEBUG)) {
        char *b = xstrndup(req->entity.base ? req->entity.base : "", req->entity.len);
        log_kv(LOG_DEBUG, "admission request", "body", b, NULL);
        free(b);
    }
    double t0 = now_mono();
    review_out out;
    review_handle(&S.env, w->tok, req->entity.base, req->entity.len, &out);
    double dt = now_mono() - t0;
    metrics_request(out.result, dt);
    if (out.status == 400) {
        metrics_error(ERR_BAD_REQUEST);
        log_kv(LOG_WARN, "bad admission request", "error", out.error, NULL);
        send_body(req, 400, "Bad Request", "application/json", out.body, out.len);
        review_out_free(&out);
        return;
    }
    if (out.result == RESULT_MUTATED || out.result == RESULT_UNCHANGED || out.result == RESULT_FAILED_OPEN)
        metrics_mutation(&(mutate_result){.injected = out.injected, .sidecar = out.sidecar, .skips = out.skips},
                         out.native);
    if (out.result == RESULT_FAILED_OPEN) metrics_error(ERR_INTERNAL);
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
               "warnings", nw, "micros", us,
               /* the first warning, when there is one (a NULL key ends the list) */
               out.nwarnings ? "warning" : NULL, out.first_warning, NULL);
    }
    send_body(req, 200, "OK", "application/json", out.body, out.len);
    review_out_free(&out);
}

static bool is_ready(void) { return atomic_load(&S.ready) && (!S.live || kube_livesource_synced(S.live)); }

static void gauges(metrics_gauges *g, kube_live_stats *live) {
    memset(g, 0, sizeof *g);
    if (S.live) {
        kube_livesource_stats(S.live, live);
        g->live = live;
    }
    g->cert_not_after = S.tls ? tls_server_not_after(S.tls) : 0;
    kube_view v = kube_store_acquire(S.store);
    for (int k = 0; k < 8; k++) g->objects[k] = kube_snapshot_count(v.snap, metrics_kinds[k]);
    kube_store_release(S.store, &v);
    g->failing_files = atomic_load(&S.failing_files);
    g->ready = is_ready();
    /* Other loops' counters, read without their cooperation: a metric may
     * lag by a request, never tear (aligned 64-bit loads). */
    for (int i = 0; i < S.nthreads; i++) {
        uint64_t *e = S.workers[i].ctx.emitted_error_status;
        g->h2o_errors[ERR_TOO_LARGE] += __atomic_load_n(&e[H2O_STATUS_ERROR_413], __ATOMIC_RELAXED);
        g->h2o_errors[ERR_BAD_REQUEST] += __atomic_load_n(&e[H2O_STATUS_ERROR_400], __ATOMIC_RELAXED);
    }
}

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
    (void)self;
    worker *w = (worker *)req->conn->ctx; /* ctx is the first member */
    h2o_iovec_t p = req->path_normalized, m = req->method;
    bool get = h2o_memis(m.base, m.len, H2O_STRLIT("GET")) || h2o_memis(m.base, m.len, H2O_STRLIT("HEAD"));
    if (h2o_memis(p.base, p.len, H2O_STRLIT("/mutate-v1-pod"))) {
        if (!h2o_memis(m.base, m.len, H2O_STRLIT("POST"))) {
            metrics_error(ERR_METHOD);
            send_json_error(req, 405, "Method Not Allowed", "method not allowed: use POST");
            return 0;
        }
        on_mutate(req, w);
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
        if (is_ready()) send_body(req, 200, "OK", "text/plain", "ready\n", 6);
        else send_body(req, 503, "Service Unavailable", "text/plain", "not ready\n", 10);
    } else {
        metrics_gauges g;
        kube_live_stats live;
        gauges(&g, &live);
        size_t len;
        char *text = metrics_render(&g, &len);
        send_body(req, 200, "OK", "text/plain; version=0.0.4", text ? text : "", text ? len : 0);
        free(text);
    }
    return 0;
}

static void on_conn_close(void *data) { ((worker *)data)->open_conns--; }

static void on_accept(h2o_socket_t *listener, const char *err) {
    worker *w = listener->data;
    if (err) return;
    for (int i = 0; i < 16; i++) {
        h2o_socket_t *sock = h2o_evloop_socket_accept(listener);
        if (!sock) break; /* EAGAIN, or another loop took it */
        w->open_conns++;
        sock->on_close.cb = on_conn_close;
        sock->on_close.data = w;
        h2o_accept(&w->accept_ctx, sock);
    }
}

static void on_wakeup(h2o_multithread_receiver_t *r, h2o_linklist_t *messages) {
    (void)r;
    (void)messages; /* wake-ups carry no message */
}

static void *worker_main(void *arg) {
    worker *w = arg;
    h2o_context_init(&w->ctx, h2o_evloop_create(), &S.config);
    w->accept_ctx = (h2o_accept_ctx_t){.ctx = &w->ctx, .hosts = S.config.hosts, .ssl_ctx = tls_server_ctx(S.tls)};
    h2o_multithread_register_receiver(w->ctx.queue, &w->wakeup, on_wakeup);
    w->tok = json_tokener_new_ex(JSON_TOKENER_DEFAULT_DEPTH);
    w->listener = h2o_evloop_socket_create(w->ctx.loop, w->fd, H2O_SOCKET_FLAG_DONT_READ);
    w->listener->data = w;
    h2o_socket_read_start(w->listener, on_accept);
    pthread_barrier_wait(&S.started);
    while (!atomic_load(&S.stopping)) h2o_evloop_run(w->ctx.loop, INT32_MAX);

    h2o_socket_read_stop(w->listener);
    h2o_socket_close(w->listener);
    h2o_context_request_shutdown(&w->ctx);
    /* h2o 2.2.5 does not close idle HTTP/1 keep-alive connections on
     * shutdown, and the API server always holds some. Every connection
     * waiting for a request sits on the http1 request timer: shortening
     * it to a second lets h2o close them itself (after a second for those
     * that just answered, at once for the others), so the loop drains and
     * the context can be disposed. A request must arrive within that
     * second; one already being answered finishes with Connection: close. */
    if (w->ctx.http1.req_timeout.timeout > 1000) w->ctx.http1.req_timeout.timeout = 1000;
    double deadline = now_mono() + S.grace;
    while (w->open_conns > 0 && now_mono() < deadline) h2o_evloop_run(w->ctx.loop, 50);
    /* request_shutdown links a timer that dispose asserts on (h2o 2.2.5). */
    if (h2o_timeout_is_linked(&w->ctx.http2._graceful_shutdown_timeout))
        h2o_timeout_unlink(&w->ctx.http2._graceful_shutdown_timeout);
    size_t left = w->open_conns;
    h2o_multithread_unregister_receiver(w->ctx.queue, &w->wakeup);
    json_tokener_free(w->tok);
    /* Connections still open keep timers linked, and h2o cannot dispose a
     * context with live timers: the process exits without disposing then. */
    if (left == 0) {
        h2o_evloop_t *loop = w->ctx.loop;
        h2o_context_dispose(&w->ctx);
        h2o_evloop_destroy(loop);
    }
    return NULL;
}

/* Once a second: resource files and the certificate. */
static void *watcher_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&S.mu);
    while (!atomic_load(&S.stopping)) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&S.cond, &S.mu, &ts);
        if (atomic_load(&S.stopping)) break;
        pthread_mutex_unlock(&S.mu);
        char msg[512];
        static char refused[512]; /* watcher thread only */
        int r = tls_server_check_reload(S.tls, msg, sizeof msg);
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
        if (S.fs) {
            int failing = 0, before = atomic_load(&S.failing_files);
            pthread_mutex_lock(&S.store_mu);
            int changed = kube_filesource_poll(S.fs, &failing);
            pthread_mutex_unlock(&S.store_mu);
            if (changed > 0) log_kv(LOG_INFO, "resources reloaded", NULL);
            if (failing > before) metrics_error(ERR_SOURCE);
            atomic_store(&S.failing_files, failing);
        }
        pthread_mutex_lock(&S.mu);
    }
    pthread_mutex_unlock(&S.mu);
    return NULL;
}

static int listen_on(const char *hostport, char *err, size_t errlen) {
    char host[256];
    const char *port;
    if (hostport[0] == '[') {
        const char *close = strchr(hostport, ']');
        if (!close || close[1] != ':') goto bad;
        snprintf(host, sizeof host, "%.*s", (int)(close - hostport - 1), hostport + 1);
        port = close + 2;
    } else {
        const char *colon = strrchr(hostport, ':');
        if (!colon) goto bad;
        snprintf(host, sizeof host, "%.*s", (int)(colon - hostport), hostport);
        port = colon + 1;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(*host ? host : NULL, port, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "--listen %s: %s", hostport, gai_strerror(rc));
        return -1;
    }
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, 0), on = 1;
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on) != 0 ||
        bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 4096) != 0) {
        snprintf(err, errlen, "--listen %s: %s", hostport, strerror(errno));
        if (fd >= 0) close(fd);
        freeaddrinfo(res);
        return -1;
    }
    freeaddrinfo(res);
    return fd;
bad:
    snprintf(err, errlen, "--listen %s: expected HOST:PORT", hostport);
    return -1;
}

static const h2o_iovec_t http1_only[] = {{H2O_STRLIT("http/1.1")}, {NULL, 0}};

static void *signal_main(void *arg) {
    sigset_t *set = arg;
    int sig = 0;
    sigwait(set, &sig);
    log_kv(LOG_INFO, "shutting down", "signal", sig == SIGTERM ? "SIGTERM" : "SIGINT", NULL);
    if (S.delay > 0) {
        struct timespec d = {(time_t)S.delay, (long)((S.delay - (double)(time_t)S.delay) * 1e9)};
        nanosleep(&d, NULL); /* keep serving while endpoints are withdrawn */
    }
    atomic_store(&S.stopping, true);
    pthread_mutex_lock(&S.mu);
    pthread_cond_broadcast(&S.cond);
    pthread_mutex_unlock(&S.mu);
    for (int i = 0; i < S.nthreads; i++) h2o_multithread_send_message(&S.workers[i].wakeup, NULL);
    return NULL;
}

static bool parse_seconds(const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (*s == 0 || *end || v < 0 || v > 86400) return false;
    *out = v;
    return true;
}

int cmd_serve(int argc, char **argv) {
    enum { O_LISTEN = 256, O_CERT, O_KEY, O_RES, O_NATIVE, O_CONFIG, O_THREADS, O_NS, O_MAXBODY, O_RTIMEOUT,
           O_SDELAY, O_SGRACE, O_TLSMIN, O_HTTP2, O_LOGFMT, O_LOGLVL, O_HELP, O_KUBECONFIG, O_CONTEXT, O_INCLUSTER,
           O_SADIR, O_BUDGET, O_WTIMEOUT, O_WIDLE };
    static const struct option opts[] = {
        {"listen", required_argument, 0, O_LISTEN},       {"tls-cert", required_argument, 0, O_CERT},
        {"tls-key", required_argument, 0, O_KEY},         {"resources", required_argument, 0, O_RES},
        {"native-sidecars", required_argument, 0, O_NATIVE}, {"config", required_argument, 0, O_CONFIG},
        {"threads", required_argument, 0, O_THREADS},     {"namespace", required_argument, 0, O_NS},
        {"max-body", required_argument, 0, O_MAXBODY},    {"request-timeout", required_argument, 0, O_RTIMEOUT},
        {"shutdown-delay", required_argument, 0, O_SDELAY}, {"shutdown-grace", required_argument, 0, O_SGRACE},
        {"tls-min-version", required_argument, 0, O_TLSMIN}, {"http2", no_argument, 0, O_HTTP2},
        {"log-format", required_argument, 0, O_LOGFMT},   {"log-level", required_argument, 0, O_LOGLVL},
        {"help", no_argument, 0, O_HELP},                 {"kubeconfig", required_argument, 0, O_KUBECONFIG},
        {"context", required_argument, 0, O_CONTEXT},     {"in-cluster", no_argument, 0, O_INCLUSTER},
        {"service-account-dir", required_argument, 0, O_SADIR}, {"lookup-budget", required_argument, 0, O_BUDGET},
        {"watch-timeout", required_argument, 0, O_WTIMEOUT}, {"watch-idle-timeout", required_argument, 0, O_WIDLE},
        {0, 0, 0, 0},
    };
    const char *listen_addr = NULL, *cert = NULL, *key = NULL, *native = "auto", *config = NULL, *ns = "default";
    const char **dirs = xcalloc((size_t)argc + 1, sizeof *dirs);
    size_t ndirs = 0, max_body = 6u << 20;
    double rtimeout = 10, budget_ms = 200, wtimeout = 300, widle = 120;
    const char *kubeconfig = NULL, *context = NULL, *sadir = NULL;
    int incluster = 0;
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), http2 = 0, json_logs = 1, level = LOG_INFO, tls13 = 0, c;
    S.grace = 10;
    optind = 1;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        char *end = NULL;
        switch (c) {
        case O_LISTEN: listen_addr = optarg; break;
        case O_CERT: cert = optarg; break;
        case O_KEY: key = optarg; break;
        case O_RES: dirs[ndirs++] = optarg; break;
        case O_NATIVE: native = optarg; break;
        case O_CONFIG: config = optarg; break;
        case O_NS: ns = optarg; break;
        case O_THREADS:
            threads = (int)strtol(optarg, &end, 10);
            if (*end || threads < 1 || threads > 256) goto usage;
            break;
        case O_MAXBODY:
            max_body = (size_t)strtoull(optarg, &end, 10);
            if (*end || max_body < 1024) goto usage;
            break;
        case O_RTIMEOUT: if (!parse_seconds(optarg, &rtimeout) || rtimeout < 0.1) goto usage; break;
        case O_SDELAY: if (!parse_seconds(optarg, &S.delay)) goto usage; break;
        case O_SGRACE: if (!parse_seconds(optarg, &S.grace)) goto usage; break;
        case O_TLSMIN:
            if (!strcmp(optarg, "1.3")) tls13 = 1;
            else if (strcmp(optarg, "1.2")) goto usage;
            break;
        case O_HTTP2: http2 = 1; break;
        case O_LOGFMT:
            if (!strcmp(optarg, "text")) json_logs = 0;
            else if (strcmp(optarg, "json")) goto usage;
            break;
        case O_LOGLVL:
            if ((level = log_parse_level(optarg)) < 0) goto usage;
            break;
        case O_KUBECONFIG: kubeconfig = optarg; break;
        case O_CONTEXT: context = optarg; break;
        case O_INCLUSTER: incluster = 1; break;
        case O_SADIR: sadir = optarg; break;
        case O_BUDGET: if (!parse_seconds(optarg, &budget_ms) || budget_ms < 1) goto usage; break;
        case O_WTIMEOUT: if (!parse_seconds(optarg, &wtimeout) || wtimeout < 1) goto usage; break;
        case O_WIDLE: if (!parse_seconds(optarg, &widle) || widle < 1) goto usage; break;
        case O_HELP: fputs(usage, stdout); free(dirs); return 0;
        default: goto usage;
        }
    }
    if (optind != argc || !listen_addr || !cert || !key || (kubeconfig && incluster) || (context && !kubeconfig) ||
        (strcmp(native, "auto") && strcmp(native, "on") && strcmp(native, "off")))
        goto usage;
    log_setup(json_logs, (log_level)level);

    char err[512];
    mutate_settings_init(&S.cfg);
    S.prep = MUTATE_PREPARE(&S.cfg);
    if (config && cli_load_settings(&S.cfg, config, err, sizeof err) != 0) {
        log_kv(LOG_ERROR, "cannot load the settings", "error", err, NULL);
        return 1;
    }
    if (strcmp(native, "auto")) S.cfg.native_sidecars = !strcmp(native, "on") ? MUTATE_ON : MUTATE_OFF;
    /* auto: without a cluster to ask the version of, the plain container,
     * which works everywhere; with one, the live source's answer picks
     * S.mopt_native per request. */
    S.cfg.opt.native_sidecars = S.cfg.native_sidecars == MUTATE_ON;
    S.mopt_native = S.cfg.opt;
    S.mopt_native.native_sidecars = true;

    tls_options topt = {.min_tls13 = tls13};
    if (!(S.tls = tls_server_new(cert, key, &topt, err, sizeof err))) {
        log_kv(LOG_ERROR, "cannot load the serving certificate", "error", err, NULL);
        return 1;
    }
    h2o_ssl_register_alpn_protocols(tls_server_ctx(S.tls), http2 ? h2o_alpn_protocols : http1_only);

    /* 1,000 concurrent connections need more than the usual 1,024 files. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int fd = listen_on(listen_addr, err, sizeof err);
    if (fd < 0) {
        log_kv(LOG_ERROR, "cannot listen", "error", err, NULL);
        return 1;
    }
    kube_api *api = NULL;
    if (kubeconfig) api = kube_api_new_kubeconfig(kubeconfig, context, err, sizeof err);
    else if (incluster) api = kube_api_new_incluster(sadir, err, sizeof err);
    if ((kubeconfig || incluster) && !api) {
        log_kv(LOG_ERROR, "cannot use the cluster", "error", err, NULL);
        close(fd);
        tls_server_free(S.tls);
        mutate_settings_free(&S.cfg);
        free(dirs);
        return 1;
    }

    S.store = kube_store_new();
    pthread_mutex_init(&S.store_mu, NULL);
    S.env = (review_env){S.store, &S.cfg.opt, NULL, NULL};
    if (ndirs) {
        kube_logger lg = log_kube_sink("files");
        S.fs = kube_filesource_new(S.store, &S.prep, dirs, ndirs, ns, &lg);
        int failing = 0;
        pthread_mutex_lock(&S.store_mu);
        kube_filesource_poll(S.fs, &failing);
        pthread_mutex_unlock(&S.store_mu);
        atomic_store(&S.failing_files, failing);
        if (failing) metrics_error(ERR_SOURCE);
    }
    atomic_store(&S.ready, tls_server_loaded(S.tls));

    h2o_config_init(&S.config);
    S.config.max_request_entity_size = max_body;
    S.config.http1.req_timeout = (uint64_t)(rtimeout * 1000);
    S.config.handshake_timeout = (uint64_t)(rtimeout * 1000);
    S.config.http2.idle_timeout = (uint64_t)(rtimeout * 1000);
    S.config.http2.graceful_shutdown_timeout = (uint64_t)(S.grace * 1000);
    S.config.server_name = h2o_iovec_init(H2O_STRLIT(""));
    h2o_hostconf_t *host = h2o_config_register_host(&S.config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *pc = h2o_config_register_path(host, "/", 0);
    h2o_handler_t *h = h2o_create_handler(pc, sizeof *h);
    h->on_req = on_req;

    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    pthread_mutex_init(&S.mu, NULL);
    pthread_cond_init(&S.cond, NULL);
    /* After the signal mask: every thread it starts inherits it. */
    if (api) {
        kube_logger lg = log_kube_sink("cluster");
        kube_live_opts lo = {.watch_timeout_s = (long)wtimeout, .idle_timeout_s = (long)widle,
                             .lookup_budget_ms = (long)budget_ms, .check_version = S.cfg.native_sidecars == MUTATE_AUTO};
        S.live = kube_livesource_new(S.store, api, &S.prep, &S.store_mu, &lo, &lg);
        if (!S.live || kube_livesource_start(S.live) != 0) {
            log_kv(LOG_ERROR, "cannot start the cluster watches", NULL);
            return 1;
        }
        S.env.live = S.live;
        if (S.cfg.native_sidecars == MUTATE_AUTO) S.env.opt_native = &S.mopt_native;
        log_kv(LOG_INFO, "watching the cluster", "server", kube_api_server(api), NULL);
    }

    S.nthreads = threads;
    S.workers = xcalloc((size_t)threads, sizeof *S.workers);
    pthread_barrier_init(&S.started, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++) {
        S.workers[i].fd = i == 0 ? fd : dup(fd);
        pthread_create(&S.workers[i].tid, NULL, worker_main, &S.workers[i]);
    }
    pthread_barrier_wait(&S.started);
    pthread_t watcher, sigthr;
    pthread_create(&watcher, NULL, watcher_main, NULL);
    pthread_create(&sigthr, NULL, signal_main, &set);
    char nthr[16];
    snprintf(nthr, sizeof nthr, "%d", threads);
    log_kv(LOG_INFO, "serving", "listen", listen_addr, "threads", nthr, "http2", http2 ? "on" : "off",
           "native_sidecars", S.env.opt_native ? "auto" : S.cfg.opt.native_sidecars ? "on" : "off", NULL);

    for (int i = 0; i < threads; i++) pthread_join(S.workers[i].tid, NULL);
    pthread_join(watcher, NULL);
    pthread_join(sigthr, NULL);
    log_kv(LOG_INFO, "stopped", NULL);
    kube_livesource_free(S.live);
    kube_filesource_free(S.fs);
    kube_store_free(S.store);
    tls_server_free(S.tls);
    mutate_settings_free(&S.cfg);
    /* A worker that hit the grace deadline could not dispose its context;
     * its loop stays reachable from here until exit. */
    bool disposed = true;
    for (int i = 0; i < threads; i++) disposed = disposed && S.workers[i].open_conns == 0;
    if (disposed) free(S.workers);
    free(dirs);
    return 0;
usage:
    fputs(usage, stderr);
    free(dirs);
    return 2;
}
