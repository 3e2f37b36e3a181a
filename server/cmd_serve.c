/* server/cmd_serve.c - `otel-webhook serve`: the HTTPS admission server on
 * h2o, as a command: its flags, the set-up of everything the threads of
 * serve_loop.c and the handlers of serve_http.c use, and the release of it.
 *
 * HTTP/1.1 only by default. The API server then opens parallel connections
 * for concurrent admissions, which spreads them over the loops, and h2o
 * 2.2.5's HTTP/2, which carries unpatched denial-of-service issues, stays
 * off unless --http2 asks for it.
 *
 * With --kubeconfig or --in-cluster, the live source (kube/livesource.h)
 * adds its informer, publisher and version threads; the loops only read its
 * snapshots and, for owners, Secrets and ConfigMaps it does not watch, make
 * GETs bounded by --lookup-budget. Files and the live source are two layers
 * of one store; a live object wins over a file's for the same
 * kind/namespace/name. Both writers hold store_mu around their updates,
 * because the live objects are also in the informers' maps and json-c
 * reference counts are not atomic. */
#include "server/cli.h"

#include "base/alloc.h"
#include "kube/kubeconfig.h"
#include "mutate/defaults.h"
#include "server/log.h"
#include "server/metrics.h"
#include "server/serve.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
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

static struct {
    serve_server srv;
    mutate_settings cfg;
    kube_prepare prep; /* the operator's defaulting, for every store source */
    mutate_options mopt_native; /* --native-sidecars auto on a 1.29+ cluster */
} S;

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
    S.srv.grace = 10;
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
        case O_SDELAY: if (!parse_seconds(optarg, &S.srv.delay)) goto usage; break;
        case O_SGRACE: if (!parse_seconds(optarg, &S.srv.grace)) goto usage; break;
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
    if (!(S.srv.tls = tls_server_new(cert, key, &topt, err, sizeof err))) {
        log_kv(LOG_ERROR, "cannot load the serving certificate", "error", err, NULL);
        return 1;
    }
    h2o_ssl_register_alpn_protocols(tls_server_ctx(S.srv.tls), http2 ? h2o_alpn_protocols : http1_only);

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
        tls_server_free(S.srv.tls);
        mutate_settings_free(&S.cfg);
        free(dirs);
        return 1;
    }

    S.srv.store = kube_store_new();
    pthread_mutex_init(&S.srv.store_mu, NULL);
    S.srv.env = (review_env){S.srv.store, &S.cfg.opt, NULL, NULL};
    if (ndirs) {
        kube_logger lg = log_kube_sink("files");
        S.srv.fs = kube_filesource_new(S.srv.store, &S.prep, dirs, ndirs, ns, &lg);
        int failing = 0;
        pthread_mutex_lock(&S.srv.store_mu);
        kube_filesource_poll(S.srv.fs, &failing);
        pthread_mutex_unlock(&S.srv.store_mu);
        atomic_store(&S.srv.failing_files, failing);
        if (failing) metrics_error(ERR_SOURCE);
    }
    atomic_store(&S.srv.ready, tls_server_loaded(S.srv.tls));

    h2o_config_init(&S.srv.config);
    S.srv.config.max_request_entity_size = max_body;
    S.srv.config.http1.req_timeout = (uint64_t)(rtimeout * 1000);
    S.srv.config.handshake_timeout = (uint64_t)(rtimeout * 1000);
    S.srv.config.http2.idle_timeout = (uint64_t)(rtimeout * 1000);
    S.srv.config.http2.graceful_shutdown_timeout = (uint64_t)(S.srv.grace * 1000);
    S.srv.config.server_name = h2o_iovec_init(H2O_STRLIT(""));
    serve_http_routes(&S.srv);

    sigemptyset(&S.srv.signals);
    sigaddset(&S.srv.signals, SIGTERM);
    sigaddset(&S.srv.signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &S.srv.signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* After the signal mask: every thread it starts inherits it. */
    if (api) {
        kube_logger lg = log_kube_sink("cluster");
        kube_live_opts lo = {.watch_timeout_s = (long)wtimeout, .idle_timeout_s = (long)widle,
                             .lookup_budget_ms = (long)budget_ms, .check_version = S.cfg.native_sidecars == MUTATE_AUTO};
        S.srv.live = kube_livesource_new(S.srv.store, api, &S.prep, &S.srv.store_mu, &lo, &lg);
        if (!S.srv.live || kube_livesource_start(S.srv.live) != 0) {
            log_kv(LOG_ERROR, "cannot start the cluster watches", NULL);
            return 1;
        }
        S.srv.env.live = S.srv.live;
        if (S.cfg.native_sidecars == MUTATE_AUTO) S.srv.env.opt_native = &S.mopt_native;
        log_kv(LOG_INFO, "watching the cluster", "server", kube_api_server(api), NULL);
    }

    serve_loops_start(&S.srv, fd, threads);
    char nthr[16];
    snprintf(nthr, sizeof nthr, "%d", threads);
    log_kv(LOG_INFO, "serving", "listen", listen_addr, "threads", nthr, "http2", http2 ? "on" : "off",
           "native_sidecars", S.srv.env.opt_native ? "auto" : S.cfg.opt.native_sidecars ? "on" : "off", NULL);

    serve_loops_join(&S.srv);
    log_kv(LOG_INFO, "stopped", NULL);
    kube_livesource_free(S.srv.live);
    kube_filesource_free(S.srv.fs);
    kube_store_free(S.srv.store);
    tls_server_free(S.srv.tls);
    mutate_settings_free(&S.cfg);
    free(dirs);
    return 0;
usage:
    fputs(usage, stderr);
    free(dirs);
    return 2;
}
