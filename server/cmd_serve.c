/* server/cmd_serve.c - `otel-webhook serve`: the HTTPS admission server on
 * h2o, as a command: its flags, the set-up of everything the threads of
 * serve_loop.c and the handlers of serve_http.c use, and the release of it.
 *
 * Four phases. parse_args() turns the command line into a serve_opts and
 * does nothing else. serve() sets up, in order: the settings, TLS, the
 * listener, the API client, the store and its file source, the h2o config
 * and the live source. A step that fails logs why and jumps into one
 * release chain at the release of the last thing acquired (its own when it
 * fails half-way, as the settings and the live source can), so each
 * resource has one release point and they run in reverse order. Then the
 * threads run until a signal has shut them down, and the tear-down is the
 * same chain, entered at the top.
 *
 * HTTP/1.1 only by default. The API server then opens parallel connections
 * for concurrent admissions, which spreads them over the loops, and h2o
 * 2.2.5's HTTP/2, which carries unpatched denial-of-service issues, stays
 * off unless --http2 asks for it. Off means off: ALPN offers http/1.1
 * only, and h2o's two ways into HTTP/2 from an HTTP/1 connection (the h2c
 * Upgrade and the "PRI * HTTP/2.0" preface, http1.upgrade_to_http2) are
 * closed in any case; with --http2, HTTP/2 is reached through ALPN alone,
 * where serve_accept.c puts each connection under serve_h2.c's budget.
 *
 * With --kubeconfig or --in-cluster, the live source (kube/livesource.h)
 * adds its informer, publisher and version threads; the loops only read its
 * snapshots and, for owners, Secrets and ConfigMaps it does not watch, make
 * GETs bounded by --lookup-budget. The collector admissions' access reviews
 * are sent by serve_cr.c's two workers, started with the loops. Files and the live source are two layers
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
#include <signal.h>
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
    "Serves POST /convert (ConversionReview: OpenTelemetryCollector v1alpha1 <-> v1beta1).\n"
    "Serves the operator's defaulting and validation of its custom resources (AdmissionReview v1):\n"
    "  POST /mutate-opentelemetry-io-VERSION-KIND and /validate-opentelemetry-io-VERSION-KIND for\n"
    "  v1beta1-opentelemetrycollector, v1alpha1-instrumentation and v1alpha1-opampbridge; with\n"
    "  --kubeconfig or --in-cluster, collector writes are checked for privilege escalation.\n"
    "\n"
    "  --listen HOST:PORT        address to listen on, e.g. 0.0.0.0:10250 or [::]:10250\n"
    "  --tls-cert FILE           serving certificate (PEM, leaf first); reloaded when it changes\n"
    "  --tls-key FILE            its private key (PEM); reloaded with the certificate\n"
    "  --resources DIR           folder of Instrumentation, OpenTelemetryCollector, Namespace (and other)\n"
    "                            manifests, re-read when a file changes (checked every second; a folder\n"
    "                            of more than 2,000 files when it changes, every FILES/2000 s); repeatable\n"
    "  --resources-grace SEC     /readyz answers 503 once the resources could not be read this long\n"
    "                            (the last good ones are served meanwhile; default 30)\n"
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
    "  --access-review-budget MS time a collector admission may spend on its SubjectAccessReviews, from its\n"
    "                            arrival (default 3000; sent by two worker threads, never by the loops)\n"
    "  --watch-timeout SEC       server-side timeout of each watch request (default 300)\n"
    "  --watch-idle-timeout SEC  reopen a watch that completed no event, not even a bookmark, this long\n"
    "                            (a line dripped a byte at a time counts as nothing; default 120)\n"
    "  --stale-grace SEC         /readyz answers 503 once the API server has not answered a watch or list\n"
    "                            this long (the last good objects are served meanwhile; default 60)\n"
    "  --list-max-pages N        a LIST of more pages fails and is retried after the backoff (default 1000)\n"
    "  --list-max-bytes BYTES    a LIST of more bytes (all pages) fails likewise (default 33554432)\n"
    "  --threads N               event loops (default: the number of cores)\n"
    "  --namespace NS            namespace of resource objects that name none (default: default)\n"
    "  --max-body BYTES          largest request body accepted, larger gets 413 (default 6291456)\n"
    "  --max-tree-bytes BYTES    memory one request's JSON may take once read (estimated while it is read,\n"
    "                            before it is built): past it a pod is admitted untouched with a warning,\n"
    "                            a custom resource refused (413), a conversion failed (default 33554432)\n"
    "  --max-inflight-bytes BYTES\n"
    "                            request bytes all connections may hold at once, at least the buffer one\n"
    "                            --max-body request takes (8 MiB for 6 MiB: buffers double from 64 KiB); past\n"
    "                            it a request gets 503 with Retry-After (HTTP/2: its stream is refused with\n"
    "                            REFUSED_STREAM; default 33554432)\n"
    "  --request-timeout SEC     close connections idle or stalled this long, and those whose client reads\n"
    "                            nothing of an answer this long (default 10)\n"
    "  --shutdown-delay SEC      keep serving this long after SIGTERM before closing the listener (default 0)\n"
    "  --shutdown-grace SEC      longest wait for in-flight requests after that (default 10)\n"
    "  --tls-min-version 1.2|1.3 oldest TLS version accepted (default 1.2)\n"
    "  --http2                   also offer HTTP/2 through ALPN (off by default: h2o 2.2.5's HTTP/2 has known\n"
    "                            DoS issues); a connection holding more than 2 x --max-body of request\n"
    "                            bodies is closed, and 16 of its requests are answered at once\n"
    "  --log-format json|text    log lines as JSON objects (default) or text\n"
    "  --log-level LEVEL         debug, info (default), warn or error\n"
    "\n"
    "Signals: SIGTERM and SIGINT shut down (see --shutdown-delay, --shutdown-grace); SIGHUP checks the\n"
    "certificate and resource files at once (they are also checked every second; a folder of more than\n"
    "2,000 files when it changes and every FILES/2000 s) and never stops the server.\n";

typedef struct serve_opts {
    const char *listen, *cert, *key, *native, *config, *ns;
    const char **dirs; /* --resources, into argv */
    size_t ndirs, max_body, max_tree, max_inflight;
    const char *kubeconfig, *context, *sadir;
    bool incluster, http2, tls13, json_logs;
    int threads, level;
    double rtimeout, budget_ms, review_ms, wtimeout, widle, delay, grace, res_grace, stale_grace;
    long list_pages, list_bytes;
} serve_opts;

enum { PARSED, PARSED_HELP, PARSED_USAGE };

static bool parse_seconds(const char *s, double *out) {
    char *end;
    double v = strtod(s, &end);
    if (*s == 0 || *end || v < 0 || v > 86400) return false;
    *out = v;
    return true;
}

/* A usage error, said (cli_usage_error) before parse_args gives up. */
#define BAD(...) return (cli_usage_error("serve", usage, __VA_ARGS__), PARSED_USAGE)

/* The command line into *o, nothing else. PARSED, PARSED_HELP for --help,
 * or PARSED_USAGE, after saying what is wrong, for an unknown flag, a bad
 * value or a missing one. The caller frees o->dirs in every case. */
static int parse_args(int argc, char **argv, serve_opts *o) {
    enum { O_LISTEN = 256, O_CERT, O_KEY, O_RES, O_NATIVE, O_CONFIG, O_THREADS, O_NS, O_MAXBODY, O_RTIMEOUT,
           O_SDELAY, O_SGRACE, O_TLSMIN, O_HTTP2, O_LOGFMT, O_LOGLVL, O_HELP, O_KUBECONFIG, O_CONTEXT, O_INCLUSTER,
           O_SADIR, O_BUDGET, O_WTIMEOUT, O_WIDLE, O_RESGRACE, O_REVIEWBUDGET, O_STALEGRACE, O_LISTPAGES,
           O_LISTBYTES, O_MAXTREE, O_MAXINFLIGHT };
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
        {"access-review-budget", required_argument, 0, O_REVIEWBUDGET},
        {"watch-timeout", required_argument, 0, O_WTIMEOUT}, {"watch-idle-timeout", required_argument, 0, O_WIDLE},
        {"resources-grace", required_argument, 0, O_RESGRACE}, {"stale-grace", required_argument, 0, O_STALEGRACE},
        {"list-max-pages", required_argument, 0, O_LISTPAGES}, {"list-max-bytes", required_argument, 0, O_LISTBYTES},
        {"max-tree-bytes", required_argument, 0, O_MAXTREE}, {"max-inflight-bytes", required_argument, 0, O_MAXINFLIGHT},
        {0, 0, 0, 0},
    };
    *o = (serve_opts){
        .native = "auto", .ns = "default", .dirs = xcalloc((size_t)argc + 1, sizeof *o->dirs),
        .max_body = 6u << 20, .max_tree = SERVE_MAX_TREE_BYTES, .max_inflight = SERVE_MAX_INFLIGHT_BYTES, .json_logs = true, .threads = (int)sysconf(_SC_NPROCESSORS_ONLN), .level = LOG_INFO,
        .rtimeout = 10, .budget_ms = 200, .review_ms = 3000, .wtimeout = 300, .widle = 120, .grace = 10, .res_grace = 30,
        .stale_grace = 60, .list_pages = KUBE_LIVE_LIST_MAX_PAGES, .list_bytes = KUBE_LIVE_LIST_MAX_BYTES,
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = cli_getopt(argc, argv, ":", opts)) != -1) {
        char *end = NULL;
        switch (c) {
        case O_LISTEN: o->listen = optarg; break;
        case O_CERT: o->cert = optarg; break;
        case O_KEY: o->key = optarg; break;
        case O_RES: o->dirs[o->ndirs++] = optarg; break;
        case O_NATIVE: o->native = optarg; break;
        case O_CONFIG: o->config = optarg; break;
        case O_NS: o->ns = optarg; break;
        case O_THREADS:
            o->threads = (int)strtol(optarg, &end, 10);
            if (*end || o->threads < 1 || o->threads > 256) BAD("--threads %s: expected a whole number from 1 to 256", optarg);
            break;
        case O_MAXBODY:
            o->max_body = (size_t)strtoull(optarg, &end, 10);
            if (*end || o->max_body < 1024) BAD("--max-body %s: expected a number of bytes, at least 1024", optarg);
            break;
        case O_MAXTREE:
            o->max_tree = (size_t)strtoull(optarg, &end, 10);
            if (*optarg == '-' || *end || o->max_tree < 65536 || o->max_tree > (size_t)1 << 40)
                BAD("--max-tree-bytes %s: expected a number of bytes from 65536 to 2^40", optarg);
            break;
        case O_MAXINFLIGHT:
            o->max_inflight = (size_t)strtoull(optarg, &end, 10);
            if (*optarg == '-' || *end || o->max_inflight < 65536 || o->max_inflight > (size_t)1 << 40)
                BAD("--max-inflight-bytes %s: expected a number of bytes from 65536 to 2^40", optarg);
            break;
        case O_RTIMEOUT:
            if (!parse_seconds(optarg, &o->rtimeout) || o->rtimeout < 0.1)
                BAD("--request-timeout %s: expected seconds from 0.1 to 86400", optarg);
            break;
        case O_SDELAY:
            if (!parse_seconds(optarg, &o->delay)) BAD("--shutdown-delay %s: expected seconds from 0 to 86400", optarg);
            break;
        case O_SGRACE:
            if (!parse_seconds(optarg, &o->grace)) BAD("--shutdown-grace %s: expected seconds from 0 to 86400", optarg);
            break;
        case O_TLSMIN:
            if (!strcmp(optarg, "1.3")) o->tls13 = true;
            else if (strcmp(optarg, "1.2")) BAD("--tls-min-version %s: expected 1.2 or 1.3", optarg);
            break;
        case O_HTTP2: o->http2 = true; break;
        case O_LOGFMT:
            if (!strcmp(optarg, "text")) o->json_logs = false;
            else if (strcmp(optarg, "json")) BAD("--log-format %s: expected json or text", optarg);
            break;
        case O_LOGLVL:
            if ((o->level = log_parse_level(optarg)) < 0) BAD("--log-level %s: expected debug, info, warn or error", optarg);
            break;
        case O_KUBECONFIG: o->kubeconfig = optarg; break;
        case O_CONTEXT: o->context = optarg; break;
        case O_INCLUSTER: o->incluster = true; break;
        case O_SADIR: o->sadir = optarg; break;
        case O_BUDGET:
            if (!parse_seconds(optarg, &o->budget_ms) || o->budget_ms < 1)
                BAD("--lookup-budget %s: expected milliseconds from 1 to 86400", optarg);
            break;
        case O_REVIEWBUDGET:
            if (!parse_seconds(optarg, &o->review_ms) || o->review_ms < 1)
                BAD("--access-review-budget %s: expected milliseconds from 1 to 86400", optarg);
            break;
        case O_WTIMEOUT:
            if (!parse_seconds(optarg, &o->wtimeout) || o->wtimeout < 1)
                BAD("--watch-timeout %s: expected seconds from 1 to 86400", optarg);
            break;
        case O_WIDLE:
            if (!parse_seconds(optarg, &o->widle) || o->widle < 1)
                BAD("--watch-idle-timeout %s: expected seconds from 1 to 86400", optarg);
            break;
        case O_RESGRACE:
            if (!parse_seconds(optarg, &o->res_grace)) BAD("--resources-grace %s: expected seconds from 0 to 86400", optarg);
            break;
        case O_STALEGRACE:
            if (!parse_seconds(optarg, &o->stale_grace) || o->stale_grace < 1)
                BAD("--stale-grace %s: expected seconds from 1 to 86400", optarg);
            break;
        case O_LISTPAGES:
            o->list_pages = strtol(optarg, &end, 10);
            if (!*optarg || *end || o->list_pages < 1 || o->list_pages > 1000000)
                BAD("--list-max-pages %s: expected a number from 1 to 1000000", optarg);
            break;
        case O_LISTBYTES:
            o->list_bytes = strtol(optarg, &end, 10);
            if (!*optarg || *end || o->list_bytes < 1024 || o->list_bytes > (1L << 30))
                BAD("--list-max-bytes %s: expected bytes from 1024 to 1073741824", optarg);
            break;
        case O_HELP: return PARSED_HELP;
        default: cli_bad_option("serve", usage, c, argv, opts); return PARSED_USAGE;
        }
    }
    if (optind != argc) BAD("unexpected argument \"%s\"", argv[optind]);
    if (!o->listen) BAD("--listen is required");
    if (!o->cert) BAD("--tls-cert is required");
    if (!o->key) BAD("--tls-key is required");
    if (o->max_inflight < serve_inflight_min_cap(o->max_body))
        BAD("--max-inflight-bytes %zu is less than the %zu bytes of buffer a request of --max-body %zu takes: no "
            "request of that size could be taken", o->max_inflight, serve_inflight_min_cap(o->max_body), o->max_body);
    if (o->kubeconfig && o->incluster) BAD("--kubeconfig and --in-cluster exclude each other");
    if (o->context && !o->kubeconfig) BAD("--context needs --kubeconfig");
    if (strcmp(o->native, "auto") && strcmp(o->native, "on") && strcmp(o->native, "off"))
        BAD("--native-sidecars %s: expected auto, on or off", o->native);
    return PARSED;
}
#undef BAD

/* What serve() sets up, and what only this file needs. Static: a loop that
 * could not be disposed stays reachable from here until the process exits. */
static struct {
    serve_server srv;
    mutate_settings cfg;
    kube_prepare prep;          /* the operator's defaulting, for every store source */
    mutate_options mopt_native; /* --native-sidecars auto on a 1.29+ cluster */
} S;

static const h2o_iovec_t http1_only[] = {{H2O_STRLIT("http/1.1")}, {NULL, 0}};

/* The settings file over the defaults, then --native-sidecars. Released
 * by mutate_settings_free(&S.cfg), also when this fails. */
static int setup_settings(const serve_opts *o, char *err, size_t errlen) {
    mutate_settings_init(&S.cfg);
    S.prep = MUTATE_PREPARE(&S.cfg);
    if (o->config && cli_load_settings(&S.cfg, o->config, err, errlen) != 0) return -1;
    if (strcmp(o->native, "auto")) S.cfg.native_sidecars = !strcmp(o->native, "on") ? MUTATE_ON : MUTATE_OFF;
    /* auto: without a cluster to ask the version of, the plain container,
     * which works everywhere; with one, the live source's answer picks
     * S.mopt_native per request. */
    S.cfg.opt.native_sidecars = S.cfg.native_sidecars == MUTATE_ON;
    S.mopt_native = S.cfg.opt;
    S.mopt_native.native_sidecars = true;
    return 0;
}

static tls_server *setup_tls(const serve_opts *o, char *err, size_t errlen) {
    tls_options topt = {.min_tls13 = o->tls13};
    tls_server *tls = tls_server_new(o->cert, o->key, &topt, err, errlen);
    if (tls) h2o_ssl_register_alpn_protocols(tls_server_ctx(tls), o->http2 ? h2o_alpn_protocols : http1_only);
    return tls;
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

static int setup_listener(const char *hostport, char *err, size_t errlen) {
    /* 1,000 concurrent connections need more than the usual 1,024 files. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    return listen_on(hostport, err, errlen);
}

/* A poll of the resource folders stops at shutdown. Before the signal
 * thread runs (the first read, which may be of 100,000 files), a SIGTERM
 * is only pending: it is looked for there. */
static bool files_cancel(void *arg) {
    serve_server *srv = arg;
    if (atomic_load(&srv->stopping)) return true;
    sigset_t pend;
    return sigpending(&pend) == 0 && (sigismember(&pend, SIGTERM) == 1 || sigismember(&pend, SIGINT) == 1);
}

/* The files' layer is read once before the first request. A folder that
 * cannot be read then fails the start: there is no last good content to
 * serve, and starting empty would inject nothing and say so nowhere. */
static int setup_store(const serve_opts *o) {
    S.srv.store = kube_store_new();
    pthread_mutex_init(&S.srv.store_mu, NULL);
    S.srv.env = (review_env){.store = S.srv.store, .opt = &S.cfg.opt, .max_tree = o->max_tree};
    /* The access reviews of one collector admission (cr-admission.md 3.7),
     * within the registration's 5 s timeout by default, with room for the
     * rest. */
    S.srv.cr = (cr_env){.settings = &S.cfg, .review_budget = o->review_ms / 1000.0, .max_tree = o->max_tree};
    S.srv.files_grace = o->res_grace;
    if (o->ndirs) {
        kube_logger lg = log_kube_sink("files");
        S.srv.fs = kube_filesource_new(S.srv.store, &S.prep, o->dirs, o->ndirs, o->ns, &lg);
        kube_filesource_set_cancel(S.srv.fs, files_cancel, &S.srv);
        int r = serve_loop_poll_files(&S.srv, true);
        if (r == -2) return 1; /* SIGTERM or SIGINT during the first read */
        if (r < 0) return -1;  /* the reason is logged */
    }
    atomic_store(&S.srv.ready, tls_server_loaded(S.srv.tls));
    return 0;
}

/* Answers an HTTP/2 connection may have in progress at once (h2o's default
 * is 100); complete requests beyond wait in h2o's queue, their bodies
 * counted in the connection's budget (serve_h2.c). This bounds the answers
 * held for a client that does not read them. Ours are built inline, so a
 * client that reads them hardly ever waits for this. */
#define H2_ANSWERING 16

static void setup_h2o(const serve_opts *o) {
    h2o_globalconf_t *c = &S.srv.config;
    h2o_config_init(c);
    c->max_request_entity_size = o->max_body; /* HTTP/2: per stream */
    c->http1.upgrade_to_http2 = 0;
    c->http2.max_concurrent_requests_per_connection = H2_ANSWERING;
    S.srv.max_body = o->max_body;
    S.srv.h2_budget = 2 * o->max_body;
    S.srv.max_inflight = o->max_inflight;
    S.srv.write_timeout = o->rtimeout;
    c->http1.req_timeout = (uint64_t)(o->rtimeout * 1000);
    c->handshake_timeout = (uint64_t)(o->rtimeout * 1000);
    c->http2.idle_timeout = (uint64_t)(o->rtimeout * 1000);
    c->http2.graceful_shutdown_timeout = (uint64_t)(o->grace * 1000);
    c->server_name = h2o_iovec_init(H2O_STRLIT(""));
    serve_http_routes(&S.srv);
}

/* SIGTERM, SIGINT and SIGHUP go to the signal thread only: every thread
 * started from here on inherits the mask, and it is set before anything
 * else, so a signal during the set-up waits for that thread too. The mask
 * is never lifted, so a second signal during the shutdown changes
 * nothing. */
static void setup_signals(void) {
    sigemptyset(&S.srv.signals);
    sigaddset(&S.srv.signals, SIGTERM);
    sigaddset(&S.srv.signals, SIGINT);
    sigaddset(&S.srv.signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &S.srv.signals, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Takes api (released by kube_livesource_free from now on). */
static int setup_live(const serve_opts *o, kube_api *api) {
    kube_logger lg = log_kube_sink("cluster");
    S.srv.live_grace = o->stale_grace;
    kube_live_opts lo = {.watch_timeout_s = (long)o->wtimeout, .idle_timeout_s = (long)o->widle,
                         .list_max_pages = o->list_pages, .list_max_bytes = o->list_bytes,
                         .lookup_budget_ms = (long)o->budget_ms, .check_version = S.cfg.native_sidecars == MUTATE_AUTO};
    S.srv.live = kube_livesource_new(S.srv.store, api, &S.prep, &S.srv.store_mu, &lo, &lg);
    if (kube_livesource_start(S.srv.live) != 0) return -1;
    S.srv.env.live = S.srv.live;
    S.srv.cr.live = S.srv.live;
    if (S.cfg.native_sidecars == MUTATE_AUTO) S.srv.env.opt_native = &S.mopt_native;
    log_kv(LOG_INFO, "watching the cluster", "server", kube_api_server(api), NULL);
    return 0;
}

/* Set up, run, tear down: 0 after a signal, 1 when a step failed (said in
 * the log). The release chain at the end is in the reverse order of the
 * set-up; a failed step enters it at the release of the last thing
 * acquired. */
static int serve(const serve_opts *o) {
    serve_server *srv = &S.srv;
    char err[512];
    int rc = 1, fd = -1;
    kube_api *api = NULL;

    setup_signals();
    log_setup(o->json_logs, (log_level)o->level);
    const char *why = serve_inflight_init();
    if (why) {
        log_kv(LOG_ERROR, "cannot bound the request bytes in flight", "error", why, NULL);
        return 1;
    }
    if (setup_settings(o, err, sizeof err) != 0) {
        log_kv(LOG_ERROR, "cannot load the settings", "error", err, NULL);
        goto out_settings;
    }
    if (!(srv->tls = setup_tls(o, err, sizeof err))) {
        log_kv(LOG_ERROR, "cannot load the serving certificate", "error", err, NULL);
        goto out_settings;
    }
    if ((fd = setup_listener(o->listen, err, sizeof err)) < 0) {
        log_kv(LOG_ERROR, "cannot listen", "error", err, NULL);
        goto out_tls;
    }
    if (o->kubeconfig) api = kube_api_new_kubeconfig(o->kubeconfig, o->context, err, sizeof err);
    else if (o->incluster) api = kube_api_new_incluster(o->sadir, err, sizeof err);
    if ((o->kubeconfig || o->incluster) && !api) {
        log_kv(LOG_ERROR, "cannot use the cluster", "error", err, NULL);
        goto out_listener;
    }
    int st = setup_store(o);
    if (st > 0) {
        /* Stopped while reading the resources: nothing was served yet. */
        int sig = 0;
        struct timespec now = {0, 0};
        sig = sigtimedwait(&srv->signals, NULL, &now);
        log_kv(LOG_INFO, "shutting down", "signal", sig == SIGINT ? "SIGINT" : "SIGTERM", NULL);
        log_kv(LOG_INFO, "stopped", NULL);
        rc = 0;
        goto out_store;
    }
    if (st != 0) {
        log_kv(LOG_ERROR, "cannot read the resources", NULL);
        goto out_store;
    }
    setup_h2o(o);
    srv->grace = o->grace;
    srv->delay = o->delay;
    if (api) {
        kube_api *owned = api;
        api = NULL; /* the live source's from here, even when it fails to start */
        if (setup_live(o, owned) != 0) {
            log_kv(LOG_ERROR, "cannot start the cluster watches", NULL);
            goto out_live;
        }
    }

    serve_loops_start(srv, fd, o->threads);
    fd = -1; /* the loops' now: each closes its own */
    char nthr[16];
    snprintf(nthr, sizeof nthr, "%d", o->threads);
    log_kv(LOG_INFO, "serving", "listen", o->listen, LOG_NUM("threads"), nthr, "http2", o->http2 ? "on" : "off",
           "native_sidecars", srv->env.opt_native ? "auto" : S.cfg.opt.native_sidecars ? "on" : "off", NULL);
    serve_loops_join(srv);
    log_kv(LOG_INFO, "stopped", NULL);
    rc = 0;

out_live:
    kube_livesource_free(srv->live);
    h2o_config_dispose(&srv->config);
out_store:
    kube_filesource_free(srv->fs);
    kube_store_free(srv->store);
    pthread_mutex_destroy(&srv->store_mu);
    kube_api_free(api); /* the client's, until the live source takes it */
out_listener:
    if (fd >= 0) close(fd);
out_tls:
    tls_server_free(srv->tls);
out_settings:
    mutate_settings_free(&S.cfg);
    return rc;
}

int cmd_serve(int argc, char **argv) {
    serve_opts o;
    int rc;
    switch (parse_args(argc, argv, &o)) {
    case PARSED_HELP: fputs(usage, stdout); rc = 0; break;
    case PARSED_USAGE: rc = 2; break; /* said by parse_args */
    default: rc = serve(&o); break;
    }
    free(o.dirs);
    return rc;
}
