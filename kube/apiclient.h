/* kube/apiclient.h - HTTPS requests to the Kubernetes API server, on libcurl.
 *
 * A kube_api holds where and how to connect (server URL, CA, credentials)
 * and is shared by every thread; a kube_api_conn is one thread's libcurl
 * easy handle (with its kept-alive connection) and must stay on that
 * thread. Everything here blocks: it runs on the informer threads, and on
 * the admission threads only for on-demand GETs with a hard time budget.
 *
 * TLS peer and host verification are always on, except when a kubeconfig
 * says insecure-skip-tls-verify. Bearer tokens read from a file (the
 * in-cluster service-account token, a kubeconfig tokenFile) are re-read
 * when the file changes (bound tokens are rotated by the kubelet) and after
 * any 401. */
#ifndef KUBE_APICLIENT_H
#define KUBE_APICLIENT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct kube_api kube_api;
typedef struct kube_api_conn kube_api_conn;

/* Connection settings; strings are copied. PEM blobs (the *_data fields)
 * take precedence over the matching file names. */
typedef struct kube_api_settings {
    const char *server;        /* https://host:port */
    const char *ca_file;
    const char *ca_data; size_t ca_len;
    const char *token;         /* a fixed bearer token */
    const char *token_file;    /* re-read when it changes */
    const char *cert_file, *key_file;
    const char *cert_data; size_t cert_len;
    const char *key_data; size_t key_len;
    bool insecure;             /* kubeconfig insecure-skip-tls-verify */
} kube_api_settings;

kube_api *kube_api_new(const kube_api_settings *s, char *err, size_t errlen);
/* In-cluster: KUBERNETES_SERVICE_HOST/PORT, sa_dir/token and sa_dir/ca.crt
 * (sa_dir NULL: /var/run/secrets/kubernetes.io/serviceaccount). */
kube_api *kube_api_new_incluster(const char *sa_dir, char *err, size_t errlen);
void kube_api_free(kube_api *api);
const char *kube_api_server(const kube_api *api);

/* A stop flag checked by streaming requests about once a second and by
 * on-demand requests between phases (may be NULL). */
kube_api_conn *kube_api_conn_new(kube_api *api, const atomic_bool *stop);
void kube_api_conn_free(kube_api_conn *c);
/* The most bytes an on-demand answer (kube_api_request) may have on c from
 * now on (0, or more than the built-in 256 MiB: that limit); a longer one
 * is cut off, the request fails, and kube_api_conn_body_cut says so until
 * the next request. otel-reconcile run and the webhook's informers spend
 * their LIST byte budgets so: each page gets what its total has left. */
void kube_api_conn_limit_body(kube_api_conn *c, size_t max);
bool kube_api_conn_body_cut(const kube_api_conn *c);

/* GET path (with query). accept may be NULL (application/json). The whole
 * request, connection included, is bounded by timeout_ms. Returns the HTTP
 * status with the body in *body (malloc'ed, NUL-terminated), or -1 with a
 * reason in err (then *body is NULL). */
int kube_api_get(kube_api_conn *c, const char *path, const char *accept, long timeout_ms, char **body, size_t *len,
                 char *err, size_t errlen);

/* Any method (GET, PATCH, DELETE, ...) with an optional request body of
 * content_type (both may be NULL); otherwise as kube_api_get, which is
 * this with "GET". Used by otel-reconcile run for server-side apply,
 * status merge patches and prunes. */
int kube_api_request(kube_api_conn *c, const char *method, const char *path, const char *accept,
                     const char *content_type, const char *req_body, size_t req_len, long timeout_ms, char **body,
                     size_t *len, char *err, size_t errlen);

/* The last stream was aborted for its idle timeout. */
bool kube_api_conn_stalled(const kube_api_conn *c);
/* *failing_since (CLOCK_MONOTONIC seconds) is set by the first request of
 * this connection that got no HTTP answer at all (refused, unreachable,
 * timed out) and back to 0 by any answer (any status; a watch open with 200
 * counts about once a second, quiet or not). For readiness: an API server
 * that answers badly is backed off, not gone. */
void kube_api_conn_set_health(kube_api_conn *c, _Atomic double *failing_since);

/* A watch line (one event) larger than this ends the stream: the API
 * server refuses objects over 3 MiB as requests (1.5 MiB in etcd). */
#define KUBE_API_MAX_LINE ((size_t)16 << 20)

/* Streaming GET (a watch): on_line is called for every newline-terminated
 * line as it arrives and stops the stream by returning nonzero. A stream
 * that completes no line for idle_s seconds (nothing at all, or a line
 * dripped a byte at a time) is aborted; a line longer than
 * KUBE_API_MAX_LINE too. Returns the HTTP status
 * once the stream ends (status 200: the server closed it, or on_line
 * stopped it), or -1 with a reason in err (stalled, dropped, stopped). For
 * a status other than 200 the body is collected and handed to on_line
 * once, whole. */
int kube_api_stream(kube_api_conn *c, const char *path, const char *accept, long idle_s,
                    int (*on_line)(void *ud, char *line, size_t len), void *ud, char *err, size_t errlen);
#endif
