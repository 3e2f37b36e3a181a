/* kube/apiclient.c - libcurl easy handles against the API server; see
 * apiclient.h.
 *
 * libcurl rather than h2o's client: h2o 2.2.5's client skips host name
 * verification under TLS 1.3 and cannot match IP SANs, which the in-cluster
 * address needs (tried against a TLS fake API server whose certificate
 * names 127.0.0.1 as an IP SAN). Each thread reuses one
 * easy handle so its connection is kept alive between requests; options are
 * reset and set again per request, which costs microseconds and means no
 * request inherits another's timeouts or callbacks.
 *
 * The token is behind a mutex because every thread reads it and any thread
 * may notice it has changed; the stat() per request is cheaper than one
 * syscall-free request would make a difference to. */
#include "kube/apiclient.h"

#include "base/alloc.h"
#include "base/sbuf.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_BODY (256u << 20) /* a runaway response, not a list page */

struct kube_api {
    char *server;
    char *ca_file, *cert_file, *key_file;
    char *ca_data, *cert_data, *key_data;
    size_t ca_len, cert_len, key_len;
    bool insecure;
    pthread_mutex_t mu; /* the token fields */
    char *token, *token_file;
    struct stat token_st;
    bool token_stale;
};

struct kube_api_conn {
    kube_api *api;
    CURL *h;
    const atomic_bool *stop;
    char errbuf[CURL_ERROR_SIZE];
    /* Stall detection of the current stream (idle_s 0: none). libcurl's
     * LOW_SPEED_TIME averages over a 5 s window, so with bookmarks a
     * stalled watch would be noticed seconds late; we time the gap since
     * the last byte ourselves in the progress callback. */
    long idle_s;
    double last_data; /* of the last complete line (watch event), not of the last byte */
    bool stalled;
    size_t max_body; /* 0: MAX_BODY (kube_api_conn_limit_body) */
    bool body_cut;   /* the last request's answer passed it */
    _Atomic double *failing_since;
    bool streaming_ok; /* the current stream answered 200 */
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init(void) { curl_global_init(CURL_GLOBAL_DEFAULT); }

static char *dupn(const char *s, size_t n) {
    char *d = xmalloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

static char *dup0(const char *s) { return s ? xstrdup(s) : NULL; }

kube_api *kube_api_new(const kube_api_settings *s, char *err, size_t errlen) {
    pthread_once(&curl_once, curl_init);
    if (!s->server || strncmp(s->server, "https://", 8) != 0) {
        snprintf(err, errlen, "the API server address must start with https:// (got \"%s\")", s->server ? s->server : "");
        return NULL;
    }
    kube_api *a = xcalloc(1, sizeof *a);
    pthread_mutex_init(&a->mu, NULL);
    a->server = xstrdup(s->server);
    size_t sl = strlen(a->server);
    while (sl > 8 && a->server[sl - 1] == '/') a->server[--sl] = 0; /* paths start with / */
    a->ca_file = dup0(s->ca_file);
    a->cert_file = dup0(s->cert_file);
    a->key_file = dup0(s->key_file);
    if (s->ca_data) a->ca_data = dupn(s->ca_data, a->ca_len = s->ca_len);
    if (s->cert_data) a->cert_data = dupn(s->cert_data, a->cert_len = s->cert_len);
    if (s->key_data) a->key_data = dupn(s->key_data, a->key_len = s->key_len);
    a->insecure = s->insecure;
    a->token = dup0(s->token);
    a->token_file = dup0(s->token_file);
    a->token_stale = true;
    if (a->token_file) {
        FILE *f = fopen(a->token_file, "r");
        if (!f) {
            snprintf(err, errlen, "cannot read the token file %s: %s", a->token_file, strerror(errno));
            kube_api_free(a);
            return NULL;
        }
        fclose(f);
    }
    return a;
}

kube_api *kube_api_new_incluster(const char *sa_dir, char *err, size_t errlen) {
    const char *host = getenv("KUBERNETES_SERVICE_HOST"), *port = getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host) {
        snprintf(err, errlen, "--in-cluster: KUBERNETES_SERVICE_HOST is not set (not running in a pod?)");
        return NULL;
    }
    if (!port || !*port) port = "443";
    if (!sa_dir) sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
    char server[512], token[1024], ca[1024];
    snprintf(server, sizeof server, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
    snprintf(token, sizeof token, "%s/token", sa_dir);
    snprintf(ca, sizeof ca, "%s/ca.crt", sa_dir);
    if (access(ca, R_OK) != 0) {
        snprintf(err, errlen, "--in-cluster: cannot read %s: %s", ca, strerror(errno));
        return NULL;
    }
    kube_api_settings s = {.server = server, .ca_file = ca, .token_file = token};
    return kube_api_new(&s, err, errlen);
}

void kube_api_free(kube_api *a) {
    if (!a) return;
    free(a->server);
    free(a->ca_file);
    free(a->cert_file);
    free(a->key_file);
    free(a->ca_data);
    free(a->cert_data);
    free(a->key_data);
    free(a->token);
    free(a->token_file);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

const char *kube_api_server(const kube_api *a) { return a->server; }

/* "Authorization: Bearer ..." (malloc'ed) or NULL without a token. The
 * file is re-read when stat() says it changed or after a 401. */
static char *auth_header(kube_api *a) {
    char *h = NULL;
    pthread_mutex_lock(&a->mu);
    if (a->token_file) {
        struct stat st;
        bool changed = stat(a->token_file, &st) == 0 &&
                       (st.st_ino != a->token_st.st_ino || st.st_size != a->token_st.st_size ||
                        st.st_mtim.tv_sec != a->token_st.st_mtim.tv_sec ||
                        st.st_mtim.tv_nsec != a->token_st.st_mtim.tv_nsec);
        if (changed || a->token_stale) {
            FILE *f = fopen(a->token_file, "r");
            if (f) {
                char buf[16384];
                size_t n = fread(buf, 1, sizeof buf - 1, f);
                fclose(f);
                while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r' || buf[n - 1] == ' ')) n--;
                buf[n] = 0;
                free(a->token);
                a->token = xstrdup(buf);
                a->token_st = st;
                a->token_stale = false;
            }
        }
    }
    if (a->token && *a->token && asprintf(&h, "Authorization: Bearer %s", a->token) < 0) h = NULL;
    pthread_mutex_unlock(&a->mu);
    return h;
}

static void token_rejected(kube_api *a) {
    pthread_mutex_lock(&a->mu);
    a->token_stale = true;
    pthread_mutex_unlock(&a->mu);
}

kube_api_conn *kube_api_conn_new(kube_api *api, const atomic_bool *stop) {
    kube_api_conn *c = xcalloc(1, sizeof *c);
    c->api = api;
    c->stop = stop;
    if (!(c->h = curl_easy_init())) {
        free(c);
        return NULL;
    }
    return c;
}

void kube_api_conn_limit_body(kube_api_conn *c, size_t max) {
    c->max_body = max < MAX_BODY ? max : MAX_BODY;
}

bool kube_api_conn_body_cut(const kube_api_conn *c) {
    return c->body_cut;
}

void kube_api_conn_free(kube_api_conn *c) {
    if (!c) return;
    curl_easy_cleanup(c->h);
    free(c);
}

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void answered(kube_api_conn *c, bool yes) {
    if (!c->failing_since) return;
    if (yes) atomic_store(c->failing_since, 0.0);
    else if (atomic_load(c->failing_since) == 0) atomic_store(c->failing_since, mono());
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c2, curl_off_t d) {
    (void)a, (void)b, (void)c2, (void)d;
    kube_api_conn *c = ud;
    if (c->stop && atomic_load(c->stop)) return 1;
    if (c->idle_s > 0 && c->failing_since) {
        long code = 0;
        if (!c->streaming_ok && curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code == 200)
            c->streaming_ok = true;
        if (c->streaming_ok) answered(c, true);
    }
    if (c->idle_s > 0 && mono() - c->last_data > (double)c->idle_s) {
        c->stalled = true;
        return 1;
    }
    return 0;
}

static void blob(CURL *h, CURLoption opt, const char *data, size_t len) {
    struct curl_blob b = {(void *)data, len, CURL_BLOB_COPY};
    curl_easy_setopt(h, opt, &b);
}

static struct curl_slist *setup(kube_api_conn *c, const char *path, const char *accept) {
    kube_api *a = c->api;
    CURL *h = c->h;
    curl_easy_reset(h);
    char *url = NULL;
    if (asprintf(&url, "%s%s", a->server, path) < 0) return NULL;
    curl_easy_setopt(h, CURLOPT_URL, url);
    free(url); /* libcurl copies string options */
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L); /* several threads: no SIGALRM for timeouts */
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(h, CURLOPT_USERAGENT, "otel-webhook");
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, ""); /* lists compress ~10x */
    if (a->ca_data) blob(h, CURLOPT_CAINFO_BLOB, a->ca_data, a->ca_len);
    else if (a->ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, a->ca_file);
    if (a->cert_data) blob(h, CURLOPT_SSLCERT_BLOB, a->cert_data, a->cert_len);
    else if (a->cert_file) curl_easy_setopt(h, CURLOPT_SSLCERT, a->cert_file);
    if (a->key_data) blob(h, CURLOPT_SSLKEY_BLOB, a->key_data, a->key_len);
    else if (a->key_file) curl_easy_setopt(h, CURLOPT_SSLKEY, a->key_file);
    if (a->insecure) {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
    }
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
    struct curl_slist *hdrs = NULL, *t;
    char acc[512];
    snprintf(acc, sizeof acc, "Accept: %s", accept ? accept : "application/json");
    hdrs = curl_slist_append(hdrs, acc);
    char *auth = auth_header(a);
    if (auth && (t = curl_slist_append(hdrs, auth))) hdrs = t;
    free(auth);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    c->errbuf[0] = 0;
    return hdrs;
}

static void describe(kube_api_conn *c, CURLcode rc, char *err, size_t errlen) {
    snprintf(err, errlen, "%s: %s", kube_api_server(c->api), c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
}

/* A response body, bounded: a server (or a proxy) sending more than
 * MAX_BODY is cut off rather than allowed to grow us without limit. */
typedef struct buf {
    sbuf s;
    bool overflow;
    size_t max; /* 0: MAX_BODY */
} buf;

static bool buf_add(buf *b, const char *d, size_t n) {
    if (b->s.len + n + 1 > (b->max ? b->max : MAX_BODY)) {
        b->overflow = true;
        return false;
    }
    sbuf_add(&b->s, d, n);
    return true;
}

static size_t on_body(char *d, size_t sz, size_t nm, void *ud) {
    return buf_add(ud, d, sz * nm) ? sz * nm : 0;
}

int kube_api_get(kube_api_conn *c, const char *path, const char *accept, long timeout_ms, char **body, size_t *len,
                 char *err, size_t errlen) {
    return kube_api_request(c, "GET", path, accept, NULL, NULL, 0, timeout_ms, body, len, err, errlen);
}

int kube_api_request(kube_api_conn *c, const char *method, const char *path, const char *accept,
                     const char *content_type, const char *req_body, size_t req_len, long timeout_ms, char **body,
                     size_t *len, char *err, size_t errlen) {
    *body = NULL;
    if (len) *len = 0;
    if (timeout_ms < 1) {
        snprintf(err, errlen, "no time left");
        return -1;
    }
    buf b = {.max = c->max_body};
    c->body_cut = false;
    struct curl_slist *hdrs = setup(c, path, accept);
    curl_easy_setopt(c->h, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &b);
    if (strcmp(method, "GET") != 0) curl_easy_setopt(c->h, CURLOPT_CUSTOMREQUEST, method);
    if (content_type) {
        char ct[256];
        snprintf(ct, sizeof ct, "Content-Type: %s", content_type);
        struct curl_slist *t = curl_slist_append(hdrs, ct);
        if (t) hdrs = t;
        /* No "Expect: 100-continue" (libcurl's default above 1 KiB): it costs
         * a round trip per write for bodies the server takes anyway. */
        if ((t = curl_slist_append(hdrs, "Expect:"))) hdrs = t;
        curl_easy_setopt(c->h, CURLOPT_HTTPHEADER, hdrs);
    }
    if (req_body) {
        /* The body only: CUSTOMREQUEST above keeps the method. */
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDS, req_body);
        curl_easy_setopt(c->h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)req_len);
    }
    CURLcode rc = curl_easy_perform(c->h);
    curl_slist_free_all(hdrs);
    long status = 0;
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    answered(c, status > 0);
    if (rc != CURLE_OK) {
        c->body_cut = b.overflow;
        if (b.overflow)
            snprintf(err, errlen, "%s%s: response larger than %zu bytes", c->api->server, path,
                     b.max ? b.max : (size_t)MAX_BODY);
        else
            describe(c, rc, err, errlen);
        sbuf_free(&b.s);
        return -1;
    }
    if (status == 401) token_rejected(c->api);
    *body = sbuf_take(&b.s, len);
    return (int)status;
}

typedef struct stream {
    kube_api_conn *c;
    int (*on_line)(void *ud, char *line, size_t len);
    void *ud;
    buf b;
    size_t scanned; /* the first bytes of b known to hold no newline */
    long status;
    bool stopped;
} stream;

/* Lines are looked for only in what arrived since the last call: rescanning
 * the unfinished line from its start on every chunk made an 8 MiB event
 * cost 3.7 s of CPU. The idle clock restarts only with a complete line, so
 * a server dripping one byte a second cannot keep a watch open that never
 * delivers an event. */
static size_t on_stream(char *d, size_t sz, size_t nm, void *ud) {
    stream *s = ud;
    size_t n = sz * nm;
    if (!s->status) curl_easy_getinfo(s->c->h, CURLINFO_RESPONSE_CODE, &s->status);
    if (!buf_add(&s->b, d, n)) return 0;
    if (s->status != 200) return n; /* an error body: handed over whole at the end */
    size_t start = 0;
    char *p;
    while ((p = memchr(s->b.s.s + s->scanned, '\n', s->b.s.len - s->scanned))) {
        size_t i = (size_t)(p - s->b.s.s);
        *p = 0;
        s->c->last_data = mono();
        if (i > start && s->on_line(s->ud, s->b.s.s + start, i - start)) {
            s->stopped = true;
            return 0;
        }
        start = s->scanned = i + 1;
    }
    if (start) {
        memmove(s->b.s.s, s->b.s.s + start, s->b.s.len - start + 1);
        s->b.s.len -= start;
    }
    s->scanned = s->b.s.len;
    return n;
}

bool kube_api_conn_stalled(const kube_api_conn *c) { return c->stalled; }
void kube_api_conn_set_health(kube_api_conn *c, _Atomic double *failing_since) { c->failing_since = failing_since; }

int kube_api_stream(kube_api_conn *c, const char *path, const char *accept, long idle_s,
                    int (*on_line)(void *ud, char *line, size_t len), void *ud, char *err, size_t errlen) {
    stream s = {.c = c, .on_line = on_line, .ud = ud, .b = {.max = KUBE_API_MAX_LINE}};
    struct curl_slist *hdrs = setup(c, path, accept);
    curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    /* Stall detection instead of a total timeout: the server ends the
     * watch itself (timeoutSeconds), and bookmarks keep a healthy one busy. */
    c->idle_s = idle_s;
    c->last_data = mono();
    c->stalled = false;
    c->streaming_ok = false;
    curl_easy_setopt(c->h, CURLOPT_WRITEFUNCTION, on_stream);
    curl_easy_setopt(c->h, CURLOPT_WRITEDATA, &s);
    CURLcode rc = curl_easy_perform(c->h);
    curl_slist_free_all(hdrs);
    c->idle_s = 0;
    long status = 0;
    curl_easy_getinfo(c->h, CURLINFO_RESPONSE_CODE, &status);
    answered(c, status > 0);
    int ret;
    if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && s.stopped)) {
        if (status == 401) token_rejected(c->api);
        if (status != 200) on_line(ud, s.b.s.s ? s.b.s.s : (char *)"", s.b.s.len);
        ret = (int)status;
    } else if (rc == CURLE_ABORTED_BY_CALLBACK && c->stalled) {
        snprintf(err, errlen, "the watch sent no complete event for %ld s", idle_s);
        ret = -1;
    } else if (rc == CURLE_WRITE_ERROR && s.b.overflow) {
        snprintf(err, errlen, "a watch event larger than %zu bytes", (size_t)KUBE_API_MAX_LINE);
        ret = -1;
    } else if (rc == CURLE_ABORTED_BY_CALLBACK) {
        snprintf(err, errlen, "stopped");
        ret = -1;
    } else {
        describe(c, rc, err, errlen);
        ret = -1;
    }
    sbuf_free(&s.b.s);
    return ret;
}
