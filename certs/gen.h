/* certs/gen.h - a throwaway CA and a serving certificate for the webhook's
 * Service, and the `otel-webhook certs` command that writes them.
 *
 * For clusters without cert-manager: the API server trusts the CA through
 * the caBundle of the MutatingWebhookConfiguration, and the webhook serves
 * tls.crt/tls.key from a Secret. */
#ifndef CERTS_GEN_H
#define CERTS_GEN_H

#include <stddef.h>

#define TLS_GEN_DEFAULT_DAYS 365
#define TLS_GEN_MAX_DAYS 36500

typedef struct tls_gen_options {
    const char *service; /* Service name, a DNS label */
    const char *ns;      /* its namespace, a DNS label */
    const char *out_dir; /* created (mode 0755, parents too) when missing */
    int days;            /* validity of both certificates; 0 means TLS_GEN_DEFAULT_DAYS */
    int dev;             /* also valid for localhost, 127.0.0.1 and ::1 */
} tls_gen_options;

/* Writes into out_dir, each file atomically (a temporary file in out_dir,
 * then rename), replacing files of the same name:
 *   ca.crt    self-signed CA "otel-webhook CA", ECDSA P-256
 *   ca.key    its key (PKCS#8 PEM, mode 0600)
 *   tls.crt   the serving certificate alone (no chain), CN service.ns.svc
 *             (service alone when that exceeds the 64-character CN limit),
 *             SANs service, service.ns, service.ns.svc,
 *             service.ns.svc.cluster.local (+ dev names), serverAuth
 *   tls.key   its key (PKCS#8 PEM, mode 0600)
 *   caBundle  base64 of ca.crt on one line, for clientConfig.caBundle
 * Certificates are mode 0644. Both are valid from 5 minutes ago (clock skew
 * between this machine and the API server) for `days` days.
 * Returns 0, or -1 with a one-line reason in err. */
int tls_generate(const tls_gen_options *o, char *err, size_t errlen);

/* The names tls_generate() writes, in the order it writes them. */
extern const char *const tls_gen_files[5];

/* `otel-webhook certs generate --service NAME --namespace NS --out DIR
 * [--days N] [--dev]`; argv[0] is "certs". Returns the exit status:
 * 0 done, 1 failure, 2 usage. */
int tls_cmd_certs(int argc, char **argv);

#endif
