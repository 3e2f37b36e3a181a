/* certs/tls.h - the serving TLS context, with certificate hot reload.
 *
 * One SSL_CTX lives as long as the process. Handshakes do not take their
 * certificate from the SSL_CTX: a certificate callback hands each handshake
 * the pair currently in service, so a rotated Secret takes effect for the
 * next handshake while established connections, the SSL_CTX pointer held by
 * every event loop and the session-ticket keys all stay as they are.
 *
 * tls_server_check_reload() is meant to be called once a second from a timer
 * on one thread; the certificate callback may run on any number of threads
 * at the same time. */
#ifndef CERTS_TLS_H
#define CERTS_TLS_H

#include <stddef.h>
#include <openssl/ssl.h>

typedef struct tls_server tls_server;

typedef struct tls_options {
    int min_tls13; /* refuse TLS 1.2 (the default minimum is TLS 1.2) */
} tls_options;

/* Loads the pair (leaf plus any intermediates from cert_file, the private key
 * from key_file; both PEM) and builds the context: TLS 1.2 or later, ECDHE
 * with AES-GCM or ChaCha20-Poly1305 for TLS 1.2, the default TLS 1.3 suites,
 * no compression, no renegotiation, server cipher preference. opt may be
 * NULL. Returns NULL with a one-line reason in err (naming the file) when the
 * pair cannot be loaded or the key does not belong to the certificate. */
tls_server *tls_server_new(const char *cert_file, const char *key_file, const tls_options *opt, char *err,
                           size_t errlen);
/* The caller must have closed every connection made with the context. */
void tls_server_free(tls_server *s);

/* For the caller's own settings (ALPN) and for h2o_accept_ctx_t.ssl_ctx.
 * Owned by s: do not free it or install certificates in it. */
SSL_CTX *tls_server_ctx(tls_server *s);

/* stat()s both files (following symlinks, so the kubelet's ..data swap is
 * seen) and, when either changed since the pair in service was loaded,
 * loads and checks the new pair and swaps it in. Returns
 *    1  a new pair is in service; msg describes it,
 *    0  nothing changed; msg is "",
 *   -1  the files changed but the pair was refused (unreadable, truncated,
 *       or a key that does not match); the previous pair stays in service,
 *       msg says why, and the next call tries again.
 * Call from one thread at a time. */
int tls_server_check_reload(tls_server *s, char *msg, size_t msglen);

/* notAfter of the leaf in service, as Unix seconds (for a metric). */
double tls_server_not_after(tls_server *s);
/* 1 when a pair is in service (always, once tls_server_new succeeded). */
int tls_server_loaded(tls_server *s);

#endif
