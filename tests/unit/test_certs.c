/* tests/unit/test_certs.c - certificate generation, the serving context and hot
 * reload.
 *
 * Generated certificates are parsed back with OpenSSL and compared field by
 * field. TLS is exercised with real handshakes between an SSL_CTX client and
 * the server context over a non-blocking socketpair, both driven from one
 * loop in the test thread, so a failed handshake cannot hang and nothing
 * depends on timing. Rotations are done the way the kubelet updates a Secret
 * volume (a new timestamped directory, a ..data_tmp symlink renamed over
 * ..data) or in place with an explicit mtime, never by sleeping. */
#include "certs/gen.h"

#include "base/cli.h"
#include "certs/tls.h"
#include "tests/unit/util.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

static char root[PATH_MAX];

/* Paths in a ring of buffers, so one call can take several; keep a copy of
 * any path needed for longer than a few calls. Test thread only. */
static const char *P(const char *dir, const char *name) {
    static char ring[32][PATH_MAX];
    static int next;
    char *p = ring[next++ % 32];
    size_t a = strlen(dir), b = strlen(name);
    ck_assert_uint_lt(a + b + 1, PATH_MAX);
    memmove(p, dir, a);
    p[a] = '/';
    memmove(p + a + 1, name, b + 1);
    return p;
}

static const char *sub(const char *name) { return P(root, name); }

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void setup(void) {
    snprintf(root, sizeof root, "/tmp/test_certs.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(root));
    umask(022);
}

static void teardown(void) { nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static void gen(const char *dir, const char *svc, const char *ns, int days, int dev) {
    char err[512] = "";
    tls_gen_options o = {.service = svc, .ns = ns, .out_dir = dir, .days = days, .dev = dev};
    int rc = tls_generate(&o, err, sizeof err);
    ck_assert_msg(rc == 0, "tls_generate: %s", err);
}

static void write_file(const char *path, const char *data, size_t len) {
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

static void copy_file(const char *from, const char *to) {
    size_t n;
    char *data = tu_read_file(from, &n);
    write_file(to, data, n);
    free(data);
}

static X509 *load_cert(const char *path) {
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "open %s", path);
    X509 *x = PEM_read_X509(f, NULL, NULL, NULL);
    fclose(f);
    ck_assert_msg(x != NULL, "no certificate in %s", path);
    return x;
}

static int count_certs(const char *path) {
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    int n = 0;
    X509 *x;
    while ((x = PEM_read_X509(f, NULL, NULL, NULL)) != NULL) {
        n++;
        X509_free(x);
    }
    ERR_clear_error();
    fclose(f);
    return n;
}

static EVP_PKEY *load_key(const char *path) {
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    EVP_PKEY *k = PEM_read_PrivateKey(f, NULL, NULL, NULL);
    fclose(f);
    ck_assert_msg(k != NULL, "no key in %s", path);
    return k;
}

static time_t unix_time(const ASN1_TIME *t) {
    struct tm tm;
    ck_assert_int_eq(ASN1_TIME_to_tm(t, &tm), 1);
    return timegm(&tm);
}

static void fingerprint(X509 *x, unsigned char md[32]) {
    unsigned int n = 0;
    ck_assert_int_eq(X509_digest(x, EVP_sha256(), md, &n), 1);
    ck_assert_uint_eq(n, 32);
}

static void file_fingerprint(const char *path, unsigned char md[32]) {
    X509 *x = load_cert(path);
    fingerprint(x, md);
    X509_free(x);
}

static char *cn_of(X509_NAME *name) {
    static char buf[4][128];
    static int next;
    char *b = buf[next++ % 4];
    ck_assert_int_gt(X509_NAME_get_text_by_NID(name, NID_commonName, b, sizeof buf[0]), 0);
    ck_assert_int_eq(X509_NAME_entry_count(name), 1); /* CN and nothing else */
    return b;
}

/* "DNS:a,DNS:b,IP:127.0.0.1,IP:::1" in certificate order; malloc'ed. */
static char *sans_of(X509 *x) {
    int crit = -1;
    GENERAL_NAMES *names = X509_get_ext_d2i(x, NID_subject_alt_name, &crit, NULL);
    ck_assert_ptr_nonnull(names);
    ck_assert_int_eq(crit, 0);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *g = sk_GENERAL_NAME_value(names, i);
        int type;
        ASN1_STRING *v = GENERAL_NAME_get0_value(g, &type);
        if (i) fputc(',', m);
        if (type == GEN_DNS) {
            fprintf(m, "DNS:%.*s", ASN1_STRING_length(v), (const char *)ASN1_STRING_get0_data(v));
        } else if (type == GEN_IPADD) {
            char ip[INET6_ADDRSTRLEN];
            int fam = ASN1_STRING_length(v) == 4 ? AF_INET : AF_INET6;
            ck_assert_ptr_nonnull(inet_ntop(fam, ASN1_STRING_get0_data(v), ip, sizeof ip));
            fprintf(m, "IP:%s", ip);
        } else {
            fprintf(m, "type%d", type);
        }
    }
    fclose(m);
    GENERAL_NAMES_free(names);
    return out;
}

static int ext_critical(X509 *x, int nid) {
    int i = X509_get_ext_by_NID(x, nid, -1);
    ck_assert_msg(i >= 0, "extension %s missing", OBJ_nid2sn(nid));
    return X509_EXTENSION_get_critical(X509_get_ext(x, i));
}

static void assert_p256(EVP_PKEY *k) {
    char group[64];
    size_t n = 0;
    ck_assert_int_eq(EVP_PKEY_get_base_id(k), EVP_PKEY_EC);
    ck_assert_int_eq(EVP_PKEY_get_group_name(k, group, sizeof group, &n), 1);
    ck_assert_str_eq(group, "prime256v1");
}

static int mode_of(const char *path) {
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    return (int)(st.st_mode & 07777);
}

/* Names in dir, sorted, space-separated. */
static char *list_dir(const char *dir) {
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    ck_assert_int_ge(n, 0);
    char *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    int first = 1;
    for (int i = 0; i < n; i++) {
        if (strcmp(ents[i]->d_name, ".") && strcmp(ents[i]->d_name, "..")) {
            fprintf(m, "%s%s", first ? "" : " ", ents[i]->d_name);
            first = 0;
        }
        free(ents[i]);
    }
    free(ents);
    fclose(m);
    return out;
}

/* ---- generation ---- */

START_TEST(gen_ca_properties) {
    time_t t0 = time(NULL);
    gen(sub("out"), "otel-webhook", "observability", 0, 0);
    time_t t1 = time(NULL);
    X509 *ca = load_cert(P(sub("out"), "ca.crt"));
    ck_assert_int_eq(count_certs(P(sub("out"), "ca.crt")), 1);
    ck_assert_int_eq(X509_get_version(ca), X509_VERSION_3);
    ck_assert_str_eq(cn_of(X509_get_subject_name(ca)), "otel-webhook CA");
    ck_assert_int_eq(X509_NAME_cmp(X509_get_subject_name(ca), X509_get_issuer_name(ca)), 0);

    /* basicConstraints critical CA:TRUE without a path length; keyUsage exactly keyCertSign+cRLSign. */
    int crit = -1;
    BASIC_CONSTRAINTS *bc = X509_get_ext_d2i(ca, NID_basic_constraints, &crit, NULL);
    ck_assert_ptr_nonnull(bc);
    ck_assert_int_eq(crit, 1);
    ck_assert_int_ne(bc->ca, 0);
    ck_assert_ptr_null(bc->pathlen);
    BASIC_CONSTRAINTS_free(bc);
    ck_assert_int_eq(ext_critical(ca, NID_key_usage), 1);
    ck_assert_uint_eq(X509_get_key_usage(ca), KU_KEY_CERT_SIGN | KU_CRL_SIGN);
    ck_assert_int_eq(X509_get_ext_by_NID(ca, NID_ext_key_usage, -1), -1);
    ck_assert_int_eq(X509_get_ext_by_NID(ca, NID_subject_alt_name, -1), -1);
    ck_assert_int_eq(X509_check_ca(ca), 1);
    ck_assert_ptr_nonnull(X509_get0_subject_key_id(ca));

    EVP_PKEY *pub = X509_get0_pubkey(ca);
    assert_p256(pub);
    ck_assert_int_eq(X509_verify(ca, pub), 1); /* self-signed */
    ck_assert_int_eq(X509_get_signature_nid(ca), NID_ecdsa_with_SHA256);
    EVP_PKEY *key = load_key(P(sub("out"), "ca.key"));
    assert_p256(key);
    ck_assert_int_eq(X509_check_private_key(ca, key), 1);

    /* 128-bit serial, validity 5 minutes back to 365 days ahead. */
    BIGNUM *serial = ASN1_INTEGER_to_BN(X509_get0_serialNumber(ca), NULL);
    ck_assert_int_eq(BN_num_bits(serial), 128);
    ck_assert_int_eq(BN_is_negative(serial), 0);
    BN_free(serial);
    time_t nb = unix_time(X509_get0_notBefore(ca)), na = unix_time(X509_get0_notAfter(ca));
    ck_assert_int_ge(nb, t0 - 300);
    ck_assert_int_le(nb, t1 - 300);
    ck_assert_int_ge(na, t0 + 365 * 86400);
    ck_assert_int_le(na, t1 + 365 * 86400);
    EVP_PKEY_free(key);
    X509_free(ca);
}
END_TEST

/* Verifies leaf against ca for TLS server use and the given host name. */
static int verify_server(X509 *leaf, X509 *ca, const char *host) {
    X509_STORE *store = X509_STORE_new();
    X509_STORE_add_cert(store, ca);
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    X509_STORE_CTX_init(ctx, store, leaf, NULL);
    X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER);
    X509_VERIFY_PARAM_set1_host(X509_STORE_CTX_get0_param(ctx), host, 0);
    int ok = X509_verify_cert(ctx) == 1;
    int err = X509_STORE_CTX_get_error(ctx);
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    ERR_clear_error();
    return ok ? 0 : err;
}

START_TEST(gen_leaf_properties) {
    time_t t0 = time(NULL);
    gen(sub("out"), "otel-webhook", "observability", 0, 0);
    time_t t1 = time(NULL);
    X509 *ca = load_cert(P(sub("out"), "ca.crt"));
    X509 *leaf = load_cert(P(sub("out"), "tls.crt"));
    ck_assert_int_eq(count_certs(P(sub("out"), "tls.crt")), 1); /* leaf only, no chain */
    ck_assert_int_eq(X509_get_version(leaf), X509_VERSION_3);
    ck_assert_str_eq(cn_of(X509_get_subject_name(leaf)), "otel-webhook.observability.svc");
    ck_assert_int_eq(X509_NAME_cmp(X509_get_issuer_name(leaf), X509_get_subject_name(ca)), 0);

    char *sans = sans_of(leaf);
    ck_assert_str_eq(sans, "DNS:otel-webhook,DNS:otel-webhook.observability,DNS:otel-webhook.observability.svc,"
                           "DNS:otel-webhook.observability.svc.cluster.local");
    free(sans);

    /* keyUsage exactly digitalSignature (critical), EKU exactly serverAuth, not a CA. */
    ck_assert_int_eq(ext_critical(leaf, NID_key_usage), 1);
    ck_assert_uint_eq(X509_get_key_usage(leaf), KU_DIGITAL_SIGNATURE);
    ck_assert_int_eq(ext_critical(leaf, NID_ext_key_usage), 0);
    ck_assert_uint_eq(X509_get_extended_key_usage(leaf), XKU_SSL_SERVER);
    EXTENDED_KEY_USAGE *eku = X509_get_ext_d2i(leaf, NID_ext_key_usage, NULL, NULL);
    ck_assert_int_eq(sk_ASN1_OBJECT_num(eku), 1);
    ck_assert_int_eq(OBJ_obj2nid(sk_ASN1_OBJECT_value(eku, 0)), NID_server_auth);
    EXTENDED_KEY_USAGE_free(eku);
    ck_assert_int_eq(ext_critical(leaf, NID_basic_constraints), 1);
    ck_assert_int_eq(X509_check_ca(leaf), 0);
    ck_assert_int_eq(ASN1_OCTET_STRING_cmp(X509_get0_authority_key_id(leaf), X509_get0_subject_key_id(ca)), 0);

    assert_p256(X509_get0_pubkey(leaf));
    EVP_PKEY *key = load_key(P(sub("out"), "tls.key"));
    assert_p256(key);
    ck_assert_int_eq(X509_check_private_key(leaf, key), 1);
    ck_assert_int_eq(X509_verify(leaf, X509_get0_pubkey(ca)), 1);
    ck_assert_int_eq(X509_get_signature_nid(leaf), NID_ecdsa_with_SHA256);

    /* Every service name verifies; others and IPs do not. */
    ck_assert_int_eq(verify_server(leaf, ca, "otel-webhook.observability.svc"), 0);
    ck_assert_int_eq(verify_server(leaf, ca, "otel-webhook.observability.svc.cluster.local"), 0);
    ck_assert_int_eq(verify_server(leaf, ca, "otel-webhook"), 0);
    ck_assert_int_eq(verify_server(leaf, ca, "localhost"), X509_V_ERR_HOSTNAME_MISMATCH);
    ck_assert_int_eq(X509_check_ip_asc(leaf, "127.0.0.1", 0), 0);

    BIGNUM *s1 = ASN1_INTEGER_to_BN(X509_get0_serialNumber(leaf), NULL);
    BIGNUM *s2 = ASN1_INTEGER_to_BN(X509_get0_serialNumber(ca), NULL);
    ck_assert_int_eq(BN_num_bits(s1), 128);
    ck_assert_int_ne(BN_cmp(s1, s2), 0);
    BN_free(s1);
    BN_free(s2);
    time_t nb = unix_time(X509_get0_notBefore(leaf)), na = unix_time(X509_get0_notAfter(leaf));
    ck_assert_int_ge(nb, t0 - 300);
    ck_assert_int_le(nb, t1 - 300);
    ck_assert_int_ge(na, t0 + 365 * 86400);
    ck_assert_int_le(na, t1 + 365 * 86400);
    EVP_PKEY_free(key);
    X509_free(leaf);
    X509_free(ca);
}
END_TEST

START_TEST(gen_dev_sans) {
    gen(sub("out"), "wh", "default", 0, 1);
    X509 *ca = load_cert(P(sub("out"), "ca.crt"));
    X509 *leaf = load_cert(P(sub("out"), "tls.crt"));
    char *sans = sans_of(leaf);
    ck_assert_str_eq(sans, "DNS:wh,DNS:wh.default,DNS:wh.default.svc,DNS:wh.default.svc.cluster.local,"
                           "DNS:localhost,IP:127.0.0.1,IP:::1");
    free(sans);
    ck_assert_int_eq(verify_server(leaf, ca, "localhost"), 0);
    ck_assert_int_eq(X509_check_ip_asc(leaf, "127.0.0.1", 0), 1);
    ck_assert_int_eq(X509_check_ip_asc(leaf, "::1", 0), 1);
    ck_assert_int_eq(X509_check_ip_asc(leaf, "127.0.0.2", 0), 0);
    X509_free(leaf);
    X509_free(ca);
}
END_TEST

START_TEST(gen_files_modes_and_bundle) {
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s", sub("a/b/out")); /* parents are created too */
    gen(out, "wh", "ns", 0, 0);
    char *names = list_dir(out);
    ck_assert_str_eq(names, "ca.crt ca.key caBundle tls.crt tls.key"); /* and no temporary files */
    free(names);
    ck_assert_int_eq(mode_of(out), 0755);
    ck_assert_int_eq(mode_of(sub("a")), 0755);
    ck_assert_int_eq(mode_of(P(out, "ca.key")), 0600);
    ck_assert_int_eq(mode_of(P(out, "tls.key")), 0600);
    ck_assert_int_eq(mode_of(P(out, "ca.crt")), 0644);
    ck_assert_int_eq(mode_of(P(out, "tls.crt")), 0644);
    ck_assert_int_eq(mode_of(P(out, "caBundle")), 0644);

    size_t blen, clen;
    char *b64 = tu_read_file(P(out, "caBundle"), &blen);
    char *pem = tu_read_file(P(out, "ca.crt"), &clen);
    ck_assert_uint_gt(blen, 1);
    ck_assert_int_eq(b64[blen - 1], '\n');
    ck_assert_ptr_eq(strchr(b64, '\n'), b64 + blen - 1); /* one line */
    ck_assert_uint_eq((blen - 1) % 4, 0);
    unsigned char *raw = malloc(blen);
    int n = EVP_DecodeBlock(raw, (unsigned char *)b64, (int)(blen - 1));
    ck_assert_int_gt(n, 0);
    n -= (b64[blen - 2] == '=') + (b64[blen - 3] == '='); /* DecodeBlock counts padding as zero bytes */
    ck_assert_uint_eq((size_t)n, clen);
    ck_assert_int_eq(memcmp(raw, pem, clen), 0);
    ck_assert_ptr_nonnull(strstr(pem, "-----BEGIN CERTIFICATE-----\n"));
    free(raw);
    free(b64);
    free(pem);

    char *key = tu_read_file(P(out, "tls.key"), NULL);
    ck_assert_int_eq(strncmp(key, "-----BEGIN PRIVATE KEY-----\n", 28), 0); /* PKCS#8, unencrypted */
    free(key);
}
END_TEST

START_TEST(gen_days_and_regenerate) {
    gen(sub("out"), "wh", "ns", 7, 0);
    X509 *first = load_cert(P(sub("out"), "tls.crt"));
    ck_assert_int_eq(unix_time(X509_get0_notAfter(first)) - unix_time(X509_get0_notBefore(first)), 7 * 86400 + 300);
    X509 *ca = load_cert(P(sub("out"), "ca.crt"));
    ck_assert_int_eq(unix_time(X509_get0_notAfter(ca)) - unix_time(X509_get0_notBefore(ca)), 7 * 86400 + 300);
    X509_free(ca);

    /* Running again replaces everything with a new CA and keeps the modes. */
    chmod(P(sub("out"), "tls.key"), 0644);
    gen(sub("out"), "wh", "ns", 30, 0);
    X509 *second = load_cert(P(sub("out"), "tls.crt"));
    ck_assert_int_ne(X509_cmp(first, second), 0);
    ck_assert_int_eq(unix_time(X509_get0_notAfter(second)) - unix_time(X509_get0_notBefore(second)), 30 * 86400 + 300);
    ca = load_cert(P(sub("out"), "ca.crt"));
    ck_assert_int_eq(X509_verify(second, X509_get0_pubkey(ca)), 1);
    ck_assert_int_eq(X509_verify(first, X509_get0_pubkey(ca)), 0);
    ERR_clear_error();
    ck_assert_int_eq(mode_of(P(sub("out"), "tls.key")), 0600);
    char *names = list_dir(sub("out"));
    ck_assert_str_eq(names, "ca.crt ca.key caBundle tls.crt tls.key");
    free(names);
    X509_free(ca);
    X509_free(first);
    X509_free(second);
}
END_TEST

START_TEST(gen_long_names) {
    char svc[64], ns[64], *want;
    memset(svc, 's', 63), svc[63] = 0;
    memset(ns, 'n', 63), ns[63] = 0;
    gen(sub("out"), svc, ns, 0, 0);
    X509 *leaf = load_cert(P(sub("out"), "tls.crt"));
    ck_assert_str_eq(cn_of(X509_get_subject_name(leaf)), svc); /* NAME.NS.svc would exceed 64 */
    ck_assert_int_gt(asprintf(&want, "DNS:%s,DNS:%s.%s,DNS:%s.%s.svc,DNS:%s.%s.svc.cluster.local", svc, svc, ns,
                              svc, ns, svc, ns),
                     0);
    char *sans = sans_of(leaf);
    ck_assert_str_eq(sans, want);
    free(sans);
    free(want);
    X509_free(leaf);
}
END_TEST

static const char *gen_error(const char *svc, const char *ns, const char *dir, int days) {
    static char err[512];
    tls_gen_options o = {.service = svc, .ns = ns, .out_dir = dir, .days = days};
    err[0] = 0;
    ck_assert_int_eq(tls_generate(&o, err, sizeof err), -1);
    return err;
}

START_TEST(gen_rejects_bad_input) {
    ck_assert_str_eq(gen_error("Web_hook", "ns", sub("o"), 0),
                     "service name \"Web_hook\" is not a DNS label (a-z, 0-9 and '-', at most 63)");
    ck_assert_str_eq(gen_error("wh", "-ns", sub("o"), 0),
                     "namespace \"-ns\" is not a DNS label (a-z, 0-9 and '-', at most 63)");
    ck_assert_str_eq(gen_error("wh,DNS:evil.com", "ns", sub("o"), 0),
                     "service name \"wh,DNS:evil.com\" is not a DNS label (a-z, 0-9 and '-', at most 63)");
    ck_assert_str_eq(gen_error("", "ns", sub("o"), 0),
                     "service name \"\" is not a DNS label (a-z, 0-9 and '-', at most 63)");
    char long_name[65];
    memset(long_name, 'a', 64), long_name[64] = 0;
    ck_assert_ptr_nonnull(strstr(gen_error(long_name, "ns", sub("o"), 0), "is not a DNS label"));
    ck_assert_str_eq(gen_error("wh", "ns", sub("o"), -1), "days must be between 1 and 36500, not -1");
    ck_assert_str_eq(gen_error("wh", "ns", sub("o"), 36501), "days must be between 1 and 36500, not 36501");
    ck_assert_int_eq(access(sub("o"), F_OK), -1); /* nothing created for bad input */

    write_file(sub("file"), "x", 1);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s is not a directory", sub("file"));
    ck_assert_str_eq(gen_error("wh", "ns", sub("file"), 0), want);
    snprintf(want, sizeof want, "cannot create directory %s: Not a directory", sub("file/x"));
    ck_assert_str_eq(gen_error("wh", "ns", sub("file/x/y"), 0), want);
}
END_TEST

/* Runs tls_cmd_certs with stdout and stderr captured into malloc'ed strings. */
static int run_cli(char **out, char **err, int argc, ...) {
    char *argv[16];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc; i++) argv[i] = va_arg(ap, char *);
    va_end(ap);
    argv[argc] = NULL;
    fflush(stdout), fflush(stderr);
    int saved1 = dup(1), saved2 = dup(2);
    int f1 = open(sub("cli.out"), O_CREAT | O_TRUNC | O_RDWR, 0600);
    int f2 = open(sub("cli.err"), O_CREAT | O_TRUNC | O_RDWR, 0600);
    dup2(f1, 1), dup2(f2, 2);
    cli_set_program("otel-webhook"); /* as server/main.c does */
    int rc = tls_cmd_certs(argc, argv);
    fflush(stdout), fflush(stderr);
    dup2(saved1, 1), dup2(saved2, 2);
    close(saved1), close(saved2), close(f1), close(f2);
    *out = tu_read_file(sub("cli.out"), NULL);
    *err = tu_read_file(sub("cli.err"), NULL);
    return rc;
}

/* A usage error ends by saying where the usage is (base/cli.h), not with it. */
#define HINT "Run 'otel-webhook certs generate --help' for usage.\n"

START_TEST(cli_exit_codes_and_output) {
    char *out, *err;
    ck_assert_int_eq(run_cli(&out, &err, 2, "certs", "--help"), 0);
    ck_assert_int_eq(strncmp(out, "usage: otel-webhook certs generate --service NAME", 49), 0);
    ck_assert_str_eq(err, "");
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 3, "certs", "generate", "--help"), 0);
    ck_assert_int_eq(strncmp(out, "usage: ", 7), 0);
    free(out), free(err);

    ck_assert_int_eq(run_cli(&out, &err, 1, "certs"), 2);
    ck_assert_str_eq(out, "");
    ck_assert_str_eq(err, "otel-webhook certs: expected a subcommand: generate\n" HINT);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 2, "certs", "renew"), 2);
    ck_assert_str_eq(err, "otel-webhook certs: unknown subcommand \"renew\"\n" HINT);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 6, "certs", "generate", "--service", "wh", "--namespace", "ns"), 2);
    ck_assert_str_eq(err, "otel-webhook certs: --out is required\n" HINT);
    ck_assert_str_eq(out, "");
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 4, "certs", "generate", "--days", "1x"), 2);
    ck_assert_str_eq(err, "otel-webhook certs: --days wants a whole number from 1 to 36500, not \"1x\"\n" HINT);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 3, "certs", "generate", "--bogus"), 2);
    ck_assert_int_eq(strncmp(err, "otel-webhook certs: unknown option --bogus\n", 43), 0);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 3, "certs", "generate", "--out"), 2);
    ck_assert_int_eq(strncmp(err, "otel-webhook certs: --out needs a value\n", 40), 0);
    free(out), free(err);
    /* base/cli.h's wording, as every other command's: a flag given a value
     * was "unknown option -D" (getopt's internal value), a prefix of two
     * options "unknown". */
    ck_assert_int_eq(run_cli(&out, &err, 3, "certs", "generate", "--dev=x"), 2);
    ck_assert_str_eq(err, "otel-webhook certs: --dev takes no value\n" HINT);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 3, "certs", "generate", "--d"), 2);
    ck_assert_str_eq(err, "otel-webhook certs: ambiguous option --d\n" HINT);
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, &err, 4, "certs", "generate", "extra", "--dev"), 2);
    ck_assert_int_eq(strncmp(err, "otel-webhook certs: unexpected argument \"extra\"\n", 48), 0);
    free(out), free(err);

    /* Failure: one line, exit 1, nothing on stdout. */
    ck_assert_int_eq(run_cli(&out, &err, 8, "certs", "generate", "--service", "WH", "--namespace", "ns", "--out",
                             sub("o")),
                     1);
    ck_assert_str_eq(err,
                     "otel-webhook certs: service name \"WH\" is not a DNS label (a-z, 0-9 and '-', at most 63)\n");
    ck_assert_str_eq(out, "");
    free(out), free(err);

    /* Success, short options and --dev. */
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", sub("gen"));
    ck_assert_int_eq(run_cli(&out, &err, 11, "certs", "generate", "--service", "wh", "-n", "ns", "-o", dir, "--days",
                             "10", "--dev"),
                     0);
    ck_assert_str_eq(err, "");
    char *want;
    asprintf(&want,
             "wrote %s/ca.key\nwrote %s/ca.crt\nwrote %s/tls.key\nwrote %s/tls.crt\nwrote %s/caBundle\n\n"
             "Paste the one line of %s/caBundle into webhooks[].clientConfig.caBundle of the\n"
             "MutatingWebhookConfiguration, and serve tls.crt/tls.key, for example from\n"
             "  kubectl -n ns create secret tls wh-tls --cert=%s/tls.crt --key=%s/tls.key\n",
             dir, dir, dir, dir, dir, dir, dir, dir);
    ck_assert_str_eq(out, want);
    free(want), free(out), free(err);
    X509 *leaf = load_cert(P(dir, "tls.crt"));
    ck_assert_int_eq(unix_time(X509_get0_notAfter(leaf)) - unix_time(X509_get0_notBefore(leaf)), 10 * 86400 + 300);
    ck_assert_int_eq(X509_check_host(leaf, "localhost", 0, 0, NULL), 1);
    X509_free(leaf);
}
END_TEST

/* ---- handshakes ---- */

typedef struct client_opts {
    const char *ca_file; /* verify the server against this CA; NULL: no verification */
    const char *host;    /* SNI and the name to verify */
    int min_version, max_version;
    const char *ciphers; /* TLS 1.2 cipher list; NULL: the default */
    int legacy;          /* security level 0, so an old-protocol hello is actually sent */
    const char *alpn;    /* one protocol to offer */
} client_opts;

typedef struct hs_result {
    int ok;                                /* both sides completed */
    unsigned long client_err, server_err;  /* first OpenSSL error of a side that failed */
    long verify;                           /* client's verification result */
    int version;                           /* negotiated, from the client */
    char cipher[64], alpn[32];
    unsigned char fp[32];                  /* SHA-256 of the certificate the server presented */
} hs_result;

enum { HS_RUN, HS_DONE, HS_FAIL };

static void hs_step(SSL *ssl, int client, int *state, unsigned long *err, int fd) {
    ERR_clear_error();
    int r = client ? SSL_connect(ssl) : SSL_accept(ssl);
    if (r == 1) {
        *state = HS_DONE;
        return;
    }
    int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) return;
    *state = HS_FAIL;
    *err = ERR_peek_error();
    if (!*err) *err = (unsigned long)-1;
    shutdown(fd, SHUT_WR); /* the peer sees EOF instead of waiting */
    ERR_clear_error();
}

/* One handshake against s; returns -1 if it stalled (a test bug), else 0.
 * Usable from several threads at once: all state is local. */
static int handshake_raw(tls_server *s, const client_opts *co, hs_result *res) {
    memset(res, 0, sizeof *res);
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0) return -1;
    SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
    if (co->legacy) {
        SSL_CTX_set_security_level(cctx, 0);
        SSL_CTX_set_cipher_list(cctx, "ALL:@SECLEVEL=0");
    }
    if (co->ciphers) SSL_CTX_set_cipher_list(cctx, co->ciphers);
    if (co->min_version) SSL_CTX_set_min_proto_version(cctx, co->min_version);
    if (co->max_version) SSL_CTX_set_max_proto_version(cctx, co->max_version);
    if (co->ca_file) {
        SSL_CTX_load_verify_locations(cctx, co->ca_file, NULL);
        SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
    }
    SSL *cli = SSL_new(cctx), *srv = SSL_new(tls_server_ctx(s));
    SSL_set_fd(cli, sv[1]);
    SSL_set_fd(srv, sv[0]);
    if (co->host) {
        SSL_set_tlsext_host_name(cli, co->host);
        SSL_set1_host(cli, co->host);
    }
    if (co->alpn) {
        unsigned char wire[32];
        size_t n = strlen(co->alpn);
        wire[0] = (unsigned char)n;
        memcpy(wire + 1, co->alpn, n);
        SSL_set_alpn_protos(cli, wire, (unsigned)n + 1);
    }
    int cs = HS_RUN, ss = HS_RUN, rc = 0, rounds = 0;
    while (cs == HS_RUN || ss == HS_RUN) {
        if (++rounds > 200) {
            rc = -1;
            break;
        }
        if (cs == HS_RUN) hs_step(cli, 1, &cs, &res->client_err, sv[1]);
        if (ss == HS_RUN) hs_step(srv, 0, &ss, &res->server_err, sv[0]);
    }
    res->ok = cs == HS_DONE && ss == HS_DONE;
    res->verify = SSL_get_verify_result(cli);
    if (res->ok) {
        res->version = SSL_version(cli);
        snprintf(res->cipher, sizeof res->cipher, "%s", SSL_get_cipher_name(cli));
        const unsigned char *p;
        unsigned int plen;
        SSL_get0_alpn_selected(cli, &p, &plen);
        snprintf(res->alpn, sizeof res->alpn, "%.*s", (int)plen, (const char *)p);
        X509 *peer = SSL_get0_peer_certificate(cli);
        unsigned int n = 0;
        if (peer) X509_digest(peer, EVP_sha256(), res->fp, &n);
    }
    SSL_free(cli);
    SSL_free(srv);
    SSL_CTX_free(cctx);
    close(sv[0]);
    close(sv[1]);
    ERR_clear_error();
    return rc;
}

static hs_result handshake(tls_server *s, const client_opts *co) {
    hs_result r;
    ck_assert_msg(handshake_raw(s, co, &r) == 0, "handshake stalled");
    return r;
}

/* A verified TLS 1.3 handshake for service wh in ns; returns the fingerprint presented. */
static void assert_presents(tls_server *s, const char *ca_file, const char *want_cert_file) {
    client_opts co = {.ca_file = ca_file, .host = "wh.ns.svc"};
    hs_result r = handshake(s, &co);
    ck_assert_msg(r.ok, "handshake failed: client %s, server %s", ERR_reason_error_string(r.client_err),
                  ERR_reason_error_string(r.server_err));
    ck_assert_int_eq(r.verify, X509_V_OK);
    unsigned char want[32];
    file_fingerprint(want_cert_file, want);
    ck_assert_int_eq(memcmp(r.fp, want, 32), 0);
}

static tls_server *server_on(const char *dir, const tls_options *opt) {
    char err[512] = "";
    tls_server *s = tls_server_new(P(dir, "tls.crt"), P(dir, "tls.key"), opt, err, sizeof err);
    ck_assert_msg(s != NULL, "tls_server_new: %s", err);
    ck_assert_str_eq(err, "");
    return s;
}

START_TEST(server_context_settings) {
    gen(sub("a"), "wh", "ns", 0, 0);
    tls_server *s = server_on(sub("a"), NULL);
    SSL_CTX *ctx = tls_server_ctx(s);
    ck_assert_int_eq(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
    uint64_t want = SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION;
    ck_assert_uint_eq(SSL_CTX_get_options(ctx) & want, want);

    /* The whole list: TLS 1.3 defaults, then ECDHE with AEAD only. */
    STACK_OF(SSL_CIPHER) *ciphers = SSL_CTX_get_ciphers(ctx);
    char *names = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&names, &len);
    for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); i++)
        fprintf(m, "%s%s", i ? " " : "", SSL_CIPHER_get_name(sk_SSL_CIPHER_value(ciphers, i)));
    fclose(m);
    ck_assert_str_eq(names, "TLS_AES_256_GCM_SHA384 TLS_CHACHA20_POLY1305_SHA256 TLS_AES_128_GCM_SHA256 "
                            "ECDHE-ECDSA-AES256-GCM-SHA384 ECDHE-RSA-AES256-GCM-SHA384 "
                            "ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-RSA-AES128-GCM-SHA256 "
                            "ECDHE-ECDSA-CHACHA20-POLY1305 ECDHE-RSA-CHACHA20-POLY1305");
    free(names);
    ck_assert_int_eq(tls_server_loaded(s), 1);
    tls_server_free(s);

    tls_options o13 = {.min_tls13 = 1};
    s = server_on(sub("a"), &o13);
    ck_assert_int_eq(SSL_CTX_get_min_proto_version(tls_server_ctx(s)), TLS1_3_VERSION);
    tls_server_free(s);
}
END_TEST

static int select_alpn(SSL *ssl, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
                       unsigned int inlen, void *arg) {
    (void)ssl, (void)arg;
    static const unsigned char ours[] = "\x02h2\x08http/1.1";
    unsigned char *sel;
    if (SSL_select_next_proto(&sel, outlen, ours, sizeof ours - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_ALERT_FATAL;
    *out = sel;
    return SSL_TLSEXT_ERR_OK;
}

START_TEST(handshake_default_tls13) {
    time_t t0 = time(NULL);
    gen(sub("a"), "wh", "ns", 20, 0);
    tls_server *s = server_on(sub("a"), NULL);
    SSL_CTX_set_alpn_select_cb(tls_server_ctx(s), select_alpn, NULL); /* what the caller does for h2o */
    client_opts co = {.ca_file = P(sub("a"), "ca.crt"), .host = "wh.ns.svc.cluster.local", .alpn = "h2"};
    hs_result r = handshake(s, &co);
    ck_assert(r.ok);
    ck_assert_int_eq(r.verify, X509_V_OK);
    ck_assert_int_eq(r.version, TLS1_3_VERSION);
    ck_assert_str_eq(r.cipher, "TLS_AES_256_GCM_SHA384");
    ck_assert_str_eq(r.alpn, "h2");
    unsigned char want[32];
    file_fingerprint(P(sub("a"), "tls.crt"), want);
    ck_assert_int_eq(memcmp(r.fp, want, 32), 0);

    /* A client that trusts another CA, or expects another name, refuses. */
    gen(sub("other"), "wh", "ns", 0, 0);
    co.ca_file = P(sub("other"), "ca.crt");
    r = handshake(s, &co);
    ck_assert(!r.ok);
    ck_assert_int_eq(r.verify, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY);
    co = (client_opts){.ca_file = P(sub("a"), "ca.crt"), .host = "wh.other.svc"};
    r = handshake(s, &co);
    ck_assert(!r.ok);
    ck_assert_int_eq(r.verify, X509_V_ERR_HOSTNAME_MISMATCH);

    double na = tls_server_not_after(s);
    ck_assert(na >= (double)(t0 + 20 * 86400) && na <= (double)(time(NULL) + 20 * 86400));
    tls_server_free(s);
}
END_TEST

START_TEST(handshake_protocol_policy) {
    gen(sub("a"), "wh", "ns", 0, 0);
    tls_server *s = server_on(sub("a"), NULL);
    const char *ca = P(sub("a"), "ca.crt");

    /* TLS 1.0 and 1.1: the server answers with a protocol_version alert. */
    for (int v = TLS1_VERSION; v <= TLS1_1_VERSION; v++) {
        client_opts co = {.ca_file = ca, .min_version = v, .max_version = v, .legacy = 1};
        hs_result r = handshake(s, &co);
        ck_assert(!r.ok);
        ck_assert_int_eq(ERR_GET_REASON(r.server_err), SSL_R_UNSUPPORTED_PROTOCOL);
        ck_assert_int_eq(ERR_GET_REASON(r.client_err), SSL_R_TLSV1_ALERT_PROTOCOL_VERSION);
    }
    /* TLS 1.2 offering only CBC suites, or only plain RSA key exchange: no shared cipher. */
    const char *refused[] = {"ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA", "AES128-GCM-SHA256",
                             "ECDHE-ECDSA-AES128-SHA256:ECDHE-RSA-AES128-SHA:AES256-SHA256"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        client_opts co = {.ca_file = ca, .max_version = TLS1_2_VERSION, .ciphers = refused[i]};
        hs_result r = handshake(s, &co);
        ck_assert_msg(!r.ok, "%s accepted", refused[i]);
        ck_assert_int_eq(ERR_GET_REASON(r.server_err), SSL_R_NO_SHARED_CIPHER);
    }
    /* TLS 1.2 with an ECDHE-ECDSA AEAD suite works, and verifies. */
    const char *accepted[] = {"ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384",
                              "ECDHE-ECDSA-CHACHA20-POLY1305"};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        client_opts co = {.ca_file = ca, .host = "wh.ns.svc", .max_version = TLS1_2_VERSION, .ciphers = accepted[i]};
        hs_result r = handshake(s, &co);
        ck_assert_msg(r.ok, "%s refused", accepted[i]);
        ck_assert_int_eq(r.version, TLS1_2_VERSION);
        ck_assert_str_eq(r.cipher, accepted[i]);
        ck_assert_int_eq(r.verify, X509_V_OK);
    }
    /* Server preference: offered AES128 first, AES256 is chosen. */
    client_opts co = {.max_version = TLS1_2_VERSION,
                      .ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384"};
    hs_result r = handshake(s, &co);
    ck_assert(r.ok);
    ck_assert_str_eq(r.cipher, "ECDHE-ECDSA-AES256-GCM-SHA384");
    tls_server_free(s);
}
END_TEST

START_TEST(handshake_min_tls13) {
    gen(sub("a"), "wh", "ns", 0, 0);
    tls_options o = {.min_tls13 = 1};
    tls_server *s = server_on(sub("a"), &o);
    client_opts co = {.ca_file = P(sub("a"), "ca.crt"), .max_version = TLS1_2_VERSION,
                      .ciphers = "ECDHE-ECDSA-AES128-GCM-SHA256"};
    hs_result r = handshake(s, &co);
    ck_assert(!r.ok);
    ck_assert_int_eq(ERR_GET_REASON(r.server_err), SSL_R_UNSUPPORTED_PROTOCOL);
    ck_assert_int_eq(ERR_GET_REASON(r.client_err), SSL_R_TLSV1_ALERT_PROTOCOL_VERSION);
    co = (client_opts){.ca_file = P(sub("a"), "ca.crt"), .host = "wh.ns.svc"};
    r = handshake(s, &co);
    ck_assert(r.ok);
    ck_assert_int_eq(r.version, TLS1_3_VERSION);
    tls_server_free(s);
}
END_TEST

/* ---- loading and reload ---- */

static const char *new_error(const char *cert, const char *key) {
    static char err[1024];
    snprintf(err, sizeof err, "(unset)");
    tls_server *s = tls_server_new(cert, key, NULL, err, sizeof err);
    ck_assert_ptr_null(s);
    ck_assert_ptr_null(strchr(err, '\n'));
    return err;
}

START_TEST(server_new_errors) {
    gen(sub("a"), "wh", "ns", 0, 0);
    gen(sub("b"), "wh", "ns", 0, 0);
    char want[3 * PATH_MAX];

    snprintf(want, sizeof want, "cannot open %s: No such file or directory", sub("a/missing.crt"));
    ck_assert_str_eq(new_error(sub("a/missing.crt"), sub("a/tls.key")), want);
    snprintf(want, sizeof want, "cannot open %s: No such file or directory", sub("a/missing.key"));
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("a/missing.key")), want);

    snprintf(want, sizeof want, "the key in %s does not match the certificate in %s", sub("b/tls.key"),
             sub("a/tls.crt"));
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("b/tls.key")), want);

    write_file(sub("empty"), "", 0);
    snprintf(want, sizeof want, "no PEM certificate in %s", sub("empty"));
    ck_assert_str_eq(new_error(sub("empty"), sub("a/tls.key")), want);
    snprintf(want, sizeof want, "no PEM private key in %s", sub("empty"));
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("empty")), want);
    /* A key file holding a certificate is not a key either. */
    snprintf(want, sizeof want, "no PEM private key in %s", sub("a/tls.crt"));
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("a/tls.crt")), want);

    size_t n;
    char *pem = tu_read_file(sub("a/tls.crt"), &n);
    write_file(sub("half.crt"), pem, n / 2);
    free(pem);
    snprintf(want, sizeof want, "cannot parse the certificate in %s: bad end line", sub("half.crt"));
    ck_assert_str_eq(new_error(sub("half.crt"), sub("a/tls.key")), want);
    pem = tu_read_file(sub("a/tls.key"), &n);
    write_file(sub("half.key"), pem, n / 2);
    snprintf(want, sizeof want, "cannot parse the private key in %s: bad end line", sub("half.key"));
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("half.key")), want);
    free(pem);

    snprintf(want, sizeof want, "%s is not a regular file (a directory)", root);
    ck_assert_str_eq(new_error(root, sub("a/tls.key")), want);
    /* A FIFO is refused at once: opening one for reading would wait for a writer. */
    ck_assert_int_eq(mkfifo(sub("fifo"), 0600), 0);
    snprintf(want, sizeof want, "%s is not a regular file (a FIFO)", sub("fifo"));
    ck_assert_str_eq(new_error(sub("fifo"), sub("a/tls.key")), want);
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("fifo")), want);
    snprintf(want, sizeof want, "/dev/null is not a regular file (a device)");
    ck_assert_str_eq(new_error("/dev/null", sub("a/tls.key")), want);

    /* An encrypted key is refused without prompting on the terminal. */
    EVP_PKEY *k = load_key(sub("a/tls.key"));
    FILE *f = fopen(sub("enc.key"), "w");
    ck_assert_int_eq(PEM_write_PKCS8PrivateKey(f, k, EVP_aes_128_cbc(), NULL, 0, NULL, (void *)"secret"), 1);
    fclose(f);
    EVP_PKEY_free(k);
    snprintf(want, sizeof want, "the private key in %s is encrypted, which is not supported", sub("enc.key"));
    ck_assert_str_eq(new_error(sub("a/tls.crt"), sub("enc.key")), want);
}
END_TEST

/* The kubelet's update of a Secret volume: the files go into a new
 * timestamped directory, ..data is switched to it by renaming a symlink over
 * it, the old directory is removed; tls.crt and tls.key are symlinks into
 * ..data created once. */
static void kubelet_publish(const char *dir_arg, const char *cert_src_arg, const char *key_src_arg) {
    static int gen_no;
    char ts[64], old[PATH_MAX] = "", dir[PATH_MAX], cert_src[PATH_MAX], key_src[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", dir_arg);
    snprintf(cert_src, sizeof cert_src, "%s", cert_src_arg);
    snprintf(key_src, sizeof key_src, "%s", key_src_arg);
    snprintf(ts, sizeof ts, "..2025_01_01_00_00_00.%d", ++gen_no);
    ck_assert_int_eq(mkdir(dir, 0755) == 0 || errno == EEXIST, 1);
    ck_assert_int_eq(mkdir(P(dir, ts), 0755), 0);
    copy_file(cert_src, P(P(dir, ts), "tls.crt"));
    copy_file(key_src, P(P(dir, ts), "tls.key"));
    ssize_t n = readlink(P(dir, "..data"), old, sizeof old - 1);
    old[n > 0 ? n : 0] = 0;
    ck_assert_int_eq(symlink(ts, P(dir, "..data_tmp")), 0);
    ck_assert_int_eq(rename(P(dir, "..data_tmp"), P(dir, "..data")), 0);
    if (access(P(dir, "tls.crt"), F_OK) != 0) {
        ck_assert_int_eq(symlink("..data/tls.crt", P(dir, "tls.crt")), 0);
        ck_assert_int_eq(symlink("..data/tls.key", P(dir, "tls.key")), 0);
    }
    if (old[0]) {
        ck_assert_int_eq(unlink(P(P(dir, old), "tls.crt")), 0);
        ck_assert_int_eq(unlink(P(P(dir, old), "tls.key")), 0);
        ck_assert_int_eq(rmdir(P(dir, old)), 0);
    }
}

/* Gives path an mtime no earlier write can have: file timestamps come from
 * a coarse clock, so writes a few milliseconds apart may share one. */
static void unique_mtime(const char *path) {
    static int bump;
    struct timespec ts[2] = {{0, UTIME_OMIT}, {time(NULL) + 1000 + ++bump, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

/* Rewrites a file in place (same inode), as a careless writer would. */
static void rewrite_in_place(const char *path, const char *data, size_t len) {
    struct stat before, after;
    ck_assert_int_eq(stat(path, &before), 0);
    write_file(path, data, len);
    unique_mtime(path);
    ck_assert_int_eq(stat(path, &after), 0);
    ck_assert(before.st_ino == after.st_ino);
}

static int reload(tls_server *s, char *msg) {
    return tls_server_check_reload(s, msg, 512);
}

/* Three independent pairs, each with its own CA, and A published in live/. */
static tls_server *rig(void) {
    gen(sub("a"), "wh", "ns", 30, 0);
    gen(sub("b"), "wh", "ns", 60, 0);
    gen(sub("c"), "wh", "ns", 90, 0);
    kubelet_publish(sub("live"), sub("a/tls.crt"), sub("a/tls.key"));
    return server_on(sub("live"), NULL);
}

START_TEST(reload_kubelet_rotation) {
    tls_server *s = rig();
    char msg[512];
    ck_assert_int_eq(reload(s, msg), 0);
    ck_assert_str_eq(msg, "");
    assert_presents(s, sub("a/ca.crt"), sub("a/tls.crt"));
    X509 *a = load_cert(sub("a/tls.crt"));
    ck_assert(tls_server_not_after(s) == (double)unix_time(X509_get0_notAfter(a)));
    X509_free(a);

    kubelet_publish(sub("live"), sub("b/tls.crt"), sub("b/tls.key"));
    ck_assert_int_eq(reload(s, msg), 1);
    X509 *b = load_cert(sub("b/tls.crt"));
    char want[512], expires[32];
    time_t t = unix_time(X509_get0_notAfter(b));
    strftime(expires, sizeof expires, "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
    snprintf(want, sizeof want, "loaded a new certificate for /CN=wh.ns.svc, expiring %s", expires);
    ck_assert_str_eq(msg, want);
    ck_assert(tls_server_not_after(s) == (double)t);
    X509_free(b);
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));
    ck_assert_int_eq(reload(s, msg), 0);
    ck_assert_int_eq(reload(s, msg), 0);

    /* And again: C replaces B. */
    kubelet_publish(sub("live"), sub("c/tls.crt"), sub("c/tls.key"));
    ck_assert_int_eq(reload(s, msg), 1);
    assert_presents(s, sub("c/ca.crt"), sub("c/tls.crt"));
    ck_assert_int_eq(reload(s, msg), 0);
    ck_assert_int_eq(tls_server_loaded(s), 1);
    tls_server_free(s);
}
END_TEST

START_TEST(reload_refuses_mismatch) {
    tls_server *s = rig();
    char msg[512];
    kubelet_publish(sub("live"), sub("b/tls.crt"), sub("b/tls.key"));
    ck_assert_int_eq(reload(s, msg), 1);
    double b_expiry = tls_server_not_after(s);

    /* C's certificate with B's key. */
    kubelet_publish(sub("live"), sub("c/tls.crt"), sub("b/tls.key"));
    ck_assert_int_eq(reload(s, msg), -1);
    ck_assert_str_eq(msg, "certificate and key do not match; keeping the previous pair");
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));
    ck_assert(tls_server_not_after(s) == b_expiry);
    /* Retried on every call until fixed. */
    ck_assert_int_eq(reload(s, msg), -1);
    ck_assert_str_eq(msg, "certificate and key do not match; keeping the previous pair");
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));

    /* B's directory went with the refused update, so the new files may get
     * B's inode numbers back, and have B's sizes; a real update comes seconds
     * later with a later mtime, which the stamp stands for. */
    kubelet_publish(sub("live"), sub("c/tls.crt"), sub("c/tls.key"));
    unique_mtime(sub("live/tls.crt"));
    ck_assert_int_eq(reload(s, msg), 1);
    assert_presents(s, sub("c/ca.crt"), sub("c/tls.crt"));
    ck_assert(tls_server_not_after(s) > b_expiry);
    tls_server_free(s);
}
END_TEST

START_TEST(reload_refuses_half_written) {
    tls_server *s = rig();
    char msg[512], want[PATH_MAX + 128];
    kubelet_publish(sub("live"), sub("b/tls.crt"), sub("b/tls.key"));
    ck_assert_int_eq(reload(s, msg), 1);
    struct stat b_st;
    ck_assert_int_eq(stat(sub("live/tls.crt"), &b_st), 0);

    /* A writer caught mid-way through rewriting tls.crt in place with C's certificate. */
    size_t clen, klen;
    char *cpem = tu_read_file(sub("c/tls.crt"), &clen);
    char *kpem = tu_read_file(sub("c/tls.key"), &klen);
    rewrite_in_place(sub("live/tls.crt"), cpem, clen / 2);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "cannot parse the certificate in %s: bad end line; keeping the previous pair",
             sub("live/tls.crt"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));

    /* The size alone gives a change away: same inode, B's mtime put back. */
    rewrite_in_place(sub("live/tls.crt"), cpem, clen / 3);
    struct timespec ts[2] = {{0, UTIME_OMIT}, b_st.st_mtim};
    ck_assert_int_eq(utimensat(AT_FDCWD, sub("live/tls.crt"), ts, 0), 0);
    ck_assert_int_eq(reload(s, msg), -1);
    ck_assert_str_eq(msg, want);

    /* Just the BEGIN line, and an empty file (open with O_TRUNC, nothing written yet). */
    rewrite_in_place(sub("live/tls.crt"), cpem, 28);
    ck_assert_int_eq(reload(s, msg), -1);
    ck_assert_str_eq(msg, want);
    rewrite_in_place(sub("live/tls.crt"), "", 0);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "no PEM certificate in %s; keeping the previous pair", sub("live/tls.crt"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));

    /* The certificate completes: C's cert with B's key still. */
    rewrite_in_place(sub("live/tls.crt"), cpem, clen);
    ck_assert_int_eq(reload(s, msg), -1);
    ck_assert_str_eq(msg, "certificate and key do not match; keeping the previous pair");
    /* A half-written key. */
    rewrite_in_place(sub("live/tls.key"), kpem, klen / 2);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "cannot parse the private key in %s: bad end line; keeping the previous pair",
             sub("live/tls.key"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));

    /* The key completes; same inodes as B's files, found by size and mtime. */
    rewrite_in_place(sub("live/tls.key"), kpem, klen);
    ck_assert_int_eq(reload(s, msg), 1);
    assert_presents(s, sub("c/ca.crt"), sub("c/tls.crt"));
    ck_assert_int_eq(reload(s, msg), 0);

    /* Rewriting the same bytes with only a new mtime is a change: reloaded. */
    rewrite_in_place(sub("live/tls.crt"), cpem, clen);
    ck_assert_int_eq(reload(s, msg), 1);
    ck_assert_int_eq(reload(s, msg), 0);
    free(cpem);
    free(kpem);
    tls_server_free(s);
}
END_TEST

START_TEST(reload_missing_files) {
    tls_server *s = rig();
    char msg[512], want[PATH_MAX + 128];
    /* The volume is momentarily without ..data. */
    ck_assert_int_eq(rename(sub("live/..data"), sub("live/..data_saved")), 0);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "cannot stat %s: No such file or directory; keeping the previous pair",
             sub("live/tls.crt"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("a/ca.crt"), sub("a/tls.crt"));
    /* Back as it was: nothing to reload. */
    ck_assert_int_eq(rename(sub("live/..data_saved"), sub("live/..data")), 0);
    ck_assert_int_eq(reload(s, msg), 0);
    /* Only the key gone. */
    ck_assert_int_eq(unlink(sub("live/tls.key")), 0);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "cannot stat %s: No such file or directory; keeping the previous pair",
             sub("live/tls.key"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("a/ca.crt"), sub("a/tls.crt"));
    tls_server_free(s);
}
END_TEST

/* A certificate path replaced by a FIFO (or another file that is not a
 * regular one): refused at once, without waiting for a writer, and the pair
 * in service stays; a regular file again is reloaded. */
START_TEST(reload_refuses_fifo) {
    tls_server *s = rig();
    char msg[512], want[PATH_MAX + 128];
    ck_assert_int_eq(unlink(sub("live/tls.crt")), 0);
    ck_assert_int_eq(mkfifo(sub("live/tls.crt"), 0600), 0);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "%s is not a regular file (a FIFO); keeping the previous pair", sub("live/tls.crt"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("a/ca.crt"), sub("a/tls.crt"));
    ck_assert_int_eq(reload(s, msg), -1); /* retried, and refused again */
    ck_assert_str_eq(msg, want);
    /* The key a FIFO too, the certificate back: the key is refused now. */
    ck_assert_int_eq(unlink(sub("live/tls.crt")), 0);
    ck_assert_int_eq(symlink("..data/tls.crt", sub("live/tls.crt")), 0);
    ck_assert_int_eq(unlink(sub("live/tls.key")), 0);
    ck_assert_int_eq(mkfifo(sub("live/tls.key"), 0600), 0);
    ck_assert_int_eq(reload(s, msg), -1);
    snprintf(want, sizeof want, "%s is not a regular file (a FIFO); keeping the previous pair", sub("live/tls.key"));
    ck_assert_str_eq(msg, want);
    assert_presents(s, sub("a/ca.crt"), sub("a/tls.crt"));
    /* A new pair published the kubelet's way replaces both links' target. */
    ck_assert_int_eq(unlink(sub("live/tls.key")), 0);
    ck_assert_int_eq(symlink("..data/tls.key", sub("live/tls.key")), 0);
    kubelet_publish(sub("live"), sub("b/tls.crt"), sub("b/tls.key"));
    ck_assert_int_eq(reload(s, msg), 1);
    assert_presents(s, sub("b/ca.crt"), sub("b/tls.crt"));
    tls_server_free(s);
}
END_TEST

/* Handshakes on two threads while the main thread rotates: every handshake
 * must complete and present one of the two whole pairs. The main thread
 * waits for a few handshakes after each swap, so they interleave. */
typedef struct hs_worker {
    tls_server *s;
    atomic_int *stop, *total;
    unsigned char fp_a[32], fp_b[32];
    int failed, stray;
} hs_worker;

static void *hs_loop(void *arg) {
    hs_worker *w = arg;
    client_opts co = {.host = "wh.ns.svc"};
    while (!atomic_load(w->stop)) {
        hs_result r;
        if (handshake_raw(w->s, &co, &r) != 0 || !r.ok)
            w->failed++;
        else if (memcmp(r.fp, w->fp_a, 32) && memcmp(r.fp, w->fp_b, 32))
            w->stray++;
        atomic_fetch_add(w->total, 1);
    }
    return NULL;
}

START_TEST(reload_under_handshakes) {
    tls_server *s = rig();
    atomic_int stop, total;
    atomic_init(&stop, 0);
    atomic_init(&total, 0);
    hs_worker w[2];
    pthread_t th[2];
    for (int i = 0; i < 2; i++) {
        w[i] = (hs_worker){.s = s, .stop = &stop, .total = &total};
        file_fingerprint(sub("a/tls.crt"), w[i].fp_a);
        file_fingerprint(sub("b/tls.crt"), w[i].fp_b);
        ck_assert_int_eq(pthread_create(&th[i], NULL, hs_loop, &w[i]), 0);
    }
    char msg[512];
    for (int i = 0; i < 20; i++) {
        const char *d = i % 2 ? sub("a") : sub("b");
        kubelet_publish(sub("live"), P(d, "tls.crt"), P(d, "tls.key"));
        ck_assert_int_eq(reload(s, msg), 1);
        (void)tls_server_not_after(s);
        int seen = atomic_load(&total);
        while (atomic_load(&total) < seen + 3) sched_yield();
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < 2; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].failed, 0);
        ck_assert_int_eq(w[i].stray, 0);
    }
    ck_assert_int_ge(atomic_load(&total), 60);
    tls_server_free(s);
}
END_TEST

int main(void) {
    Suite *s = suite_create("certs");
    TCase *gen_tc = tcase_create("generate");
    tcase_add_checked_fixture(gen_tc, setup, teardown);
    tcase_set_timeout(gen_tc, 60);
    tcase_add_test(gen_tc, gen_ca_properties);
    tcase_add_test(gen_tc, gen_leaf_properties);
    tcase_add_test(gen_tc, gen_dev_sans);
    tcase_add_test(gen_tc, gen_files_modes_and_bundle);
    tcase_add_test(gen_tc, gen_days_and_regenerate);
    tcase_add_test(gen_tc, gen_long_names);
    tcase_add_test(gen_tc, gen_rejects_bad_input);
    tcase_add_test(gen_tc, cli_exit_codes_and_output);
    suite_add_tcase(s, gen_tc);

    TCase *tls_tc = tcase_create("serve");
    tcase_add_checked_fixture(tls_tc, setup, teardown);
    tcase_set_timeout(tls_tc, 120);
    tcase_add_test(tls_tc, server_context_settings);
    tcase_add_test(tls_tc, handshake_default_tls13);
    tcase_add_test(tls_tc, handshake_protocol_policy);
    tcase_add_test(tls_tc, handshake_min_tls13);
    tcase_add_test(tls_tc, server_new_errors);
    tcase_add_test(tls_tc, reload_kubelet_rotation);
    tcase_add_test(tls_tc, reload_refuses_mismatch);
    tcase_add_test(tls_tc, reload_refuses_half_written);
    tcase_add_test(tls_tc, reload_missing_files);
    tcase_add_test(tls_tc, reload_refuses_fifo);
    tcase_add_test(tls_tc, reload_under_handshakes);
    suite_add_tcase(s, tls_tc);

    return tu_run(s);
}
