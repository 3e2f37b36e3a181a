/* certs/gen.c - generation of the CA and the serving certificate.
 *
 * Everything is built in memory first and written only once every
 * certificate is signed, so a failure before that leaves no file behind
 * (a failed write can still leave the earlier files replaced). Each file
 * is written to a temporary name in the same directory and renamed, because
 * a webhook polling tls.crt (dev mode, or a mounted volume) must never see
 * half a file; a pair seen mid-regeneration, new key with old certificate,
 * is refused by tls_server_check_reload() and picked up a second later.
 *
 * Names are checked to be DNS labels before use, so they can never smuggle
 * extra SANs; the SANs themselves are built as GENERAL_NAMEs, not parsed
 * from an openssl.cnf-style string. */
#include "certs/gen.h"

#include "base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

const char *const tls_gen_files[5] = {"ca.key", "ca.crt", "tls.key", "tls.crt", "caBundle"};

#define SKEW_SECONDS (5 * 60)

static const char *ossl_reason(void) {
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    return r ? r : "unknown error";
}

/* RFC 1123 label as Kubernetes validates namespaces (and, a little more
 * loosely, Service names): lowercase alphanumerics and '-', alphanumeric at
 * both ends, at most 63 characters. */
static int dns_label(const char *s) {
    size_t n = strlen(s);
    if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-') return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-')) return 0;
    return 1;
}

/* mkdir -p with mode 0755 (less the umask) for each missing component. */
static int make_dirs(const char *dir, char *err, size_t errlen) {
    char path[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof path) {
        snprintf(err, errlen, "bad output directory \"%s\"", dir);
        return -1;
    }
    memcpy(path, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (path[i] != '/' && path[i] != 0) continue;
        char c = path[i];
        path[i] = 0;
        if (mkdir(path, 0755) != 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create directory %s: %s", path, strerror(errno));
            return -1;
        }
        path[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s is not a directory", dir);
        return -1;
    }
    return 0;
}

static int write_atomic(const char *dir, const char *name, const void *data, size_t len, mode_t mode, char *err,
                        size_t errlen) {
    char path[PATH_MAX], tmp[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s/.%s.XXXXXX", dir, name) >= sizeof tmp) {
        snprintf(err, errlen, "output directory path too long");
        return -1;
    }
    /* mkostemp creates with O_CREAT|O_EXCL and mode 0600, so a key is never
     * readable by others, not even between open and fchmod. */
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot create a file in %s: %s", dir, strerror(errno));
        return -1;
    }
    const char *p = data;
    size_t left = len;
    if (fchmod(fd, mode) != 0) goto err;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) goto err;
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0) goto err;
    if (close(fd) != 0) {
        fd = -1;
        goto err;
    }
    fd = -1;
    if (rename(tmp, path) != 0) goto err;
    return 0;
err:
    snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
    if (fd >= 0) close(fd);
    unlink(tmp);
    return -1;
}

/* Makes the renames durable. */
static void sync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

static int add_ext(X509 *x, X509 *issuer, int nid, const char *value) {
    X509V3_CTX v3;
    X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_nconf_nid(NULL, &v3, nid, value);
    if (!ext) return -1;
    int ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok ? 0 : -1;
}

static int add_dns(GENERAL_NAMES *names, const char *dns) {
    GENERAL_NAME *g = GENERAL_NAME_new();
    ASN1_IA5STRING *s = ASN1_IA5STRING_new();
    if (!g || !s || !ASN1_STRING_set(s, dns, (int)strlen(dns))) goto err;
    GENERAL_NAME_set0_value(g, GEN_DNS, s);
    s = NULL;
    if (!sk_GENERAL_NAME_push(names, g)) goto err;
    return 0;
err:
    ASN1_IA5STRING_free(s);
    GENERAL_NAME_free(g);
    return -1;
}

static int add_ip(GENERAL_NAMES *names, const char *ip) {
    GENERAL_NAME *g = GENERAL_NAME_new();
    ASN1_OCTET_STRING *a = a2i_IPADDRESS(ip);
    if (!g || !a) goto err;
    GENERAL_NAME_set0_value(g, GEN_IPADD, a);
    a = NULL;
    if (!sk_GENERAL_NAME_push(names, g)) goto err;
    return 0;
err:
    ASN1_OCTET_STRING_free(a);
    GENERAL_NAME_free(g);
    return -1;
}

static int add_sans(X509 *x, const tls_gen_options *o) {
    char name[4][200];
    snprintf(name[0], sizeof name[0], "%s", o->service);
    snprintf(name[1], sizeof name[1], "%s.%s", o->service, o->ns);
    snprintf(name[2], sizeof name[2], "%s.%s.svc", o->service, o->ns);
    snprintf(name[3], sizeof name[3], "%s.%s.svc.cluster.local", o->service, o->ns);
    int rc = -1;
    GENERAL_NAMES *names = sk_GENERAL_NAME_new_null();
    if (!names) return -1;
    for (int i = 0; i < 4; i++)
        if (add_dns(names, name[i]) != 0) goto err;
    if (o->dev && (add_dns(names, "localhost") != 0 || add_ip(names, "127.0.0.1") != 0 || add_ip(names, "::1") != 0))
        goto err;
    if (X509_add1_ext_i2d(x, NID_subject_alt_name, names, 0, X509V3_ADD_DEFAULT) != 1) goto err;
    rc = 0;
err:
    GENERAL_NAMES_free(names);
    return rc;
}

/* 128 random bits with the top one set: always 16 significant bytes, and a
 * positive INTEGER well within the 20 octets RFC 5280 allows. */
static int set_serial(X509 *x) {
    unsigned char r[16];
    if (RAND_bytes(r, sizeof r) != 1) return -1;
    r[0] |= 0x80;
    BIGNUM *bn = BN_bin2bn(r, sizeof r, NULL);
    int ok = bn && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x)) != NULL;
    BN_free(bn);
    return ok ? 0 : -1;
}

/* A v3 certificate for key; self-signed when issuer is NULL. */
static X509 *make_cert(EVP_PKEY *key, const char *cn, X509 *issuer, time_t now, int days) {
    X509 *x = X509_new();
    X509_NAME *name = X509_NAME_new();
    if (!x || !name) goto err;
    if (!X509_set_version(x, X509_VERSION_3) || set_serial(x) != 0) goto err;
    if (!X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)cn, -1, -1, 0)) goto err;
    if (!X509_set_subject_name(x, name)) goto err;
    if (!X509_set_issuer_name(x, issuer ? X509_get_subject_name(issuer) : name)) goto err;
    if (!X509_time_adj_ex(X509_getm_notBefore(x), 0, -SKEW_SECONDS, &now)) goto err;
    if (!X509_time_adj_ex(X509_getm_notAfter(x), days, 0, &now)) goto err;
    if (!X509_set_pubkey(x, key)) goto err;
    if (add_ext(x, issuer ? issuer : x, NID_subject_key_identifier, "hash") != 0) goto err;
    if (issuer && add_ext(x, issuer, NID_authority_key_identifier, "keyid:always") != 0) goto err;
    X509_NAME_free(name);
    return x;
err:
    X509_NAME_free(name);
    X509_free(x);
    return NULL;
}

static char *pem_of(int (*write)(BIO *, const void *), const void *obj, size_t *len) {
    BIO *bio = BIO_new(BIO_s_mem());
    char *out = NULL;
    if (!bio || !write(bio, obj)) goto done;
    char *data;
    long n = BIO_get_mem_data(bio, &data);
    if (n <= 0) goto done;
    out = xmalloc((size_t)n + 1);
    memcpy(out, data, (size_t)n);
    out[n] = 0;
    *len = (size_t)n;
done:
    if (bio) {
        /* the key's PEM must not linger in freed memory */
        char *data;
        long n = BIO_get_mem_data(bio, &data);
        if (n > 0) OPENSSL_cleanse(data, (size_t)n);
        BIO_free(bio);
    }
    return out;
}

static int write_cert(BIO *bio, const void *x) { return PEM_write_bio_X509(bio, (X509 *)x); }
static int write_key(BIO *bio, const void *k) {
    return PEM_write_bio_PrivateKey(bio, (EVP_PKEY *)k, NULL, NULL, 0, NULL, NULL);
}

int tls_generate(const tls_gen_options *o, char *err, size_t errlen) {
    int rc = -1;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    X509 *ca = NULL, *leaf = NULL;
    char *pem[4] = {NULL, NULL, NULL, NULL}, *bundle = NULL;
    size_t len[4] = {0, 0, 0, 0};
    int days = o->days ? o->days : TLS_GEN_DEFAULT_DAYS;

    if (!o->service || !dns_label(o->service)) {
        snprintf(err, errlen, "service name \"%s\" is not a DNS label (a-z, 0-9 and '-', at most 63)",
                 o->service ? o->service : "");
        return -1;
    }
    if (!o->ns || !dns_label(o->ns)) {
        snprintf(err, errlen, "namespace \"%s\" is not a DNS label (a-z, 0-9 and '-', at most 63)", o->ns ? o->ns : "");
        return -1;
    }
    if (days < 1 || days > TLS_GEN_MAX_DAYS) {
        snprintf(err, errlen, "days must be between 1 and %d, not %d", TLS_GEN_MAX_DAYS, days);
        return -1;
    }
    if (!o->out_dir || make_dirs(o->out_dir, err, errlen) != 0) {
        if (!o->out_dir) snprintf(err, errlen, "no output directory");
        return -1;
    }

    ERR_clear_error();
    time_t now = time(NULL);
    ca_key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    key = EVP_PKEY_Q_keygen(NULL, NULL, "EC", "P-256");
    if (!ca_key || !key) {
        snprintf(err, errlen, "cannot generate a P-256 key: %s", ossl_reason());
        goto err;
    }

    if (!(ca = make_cert(ca_key, "otel-webhook CA", NULL, now, days)) ||
        add_ext(ca, ca, NID_basic_constraints, "critical,CA:TRUE") != 0 ||
        add_ext(ca, ca, NID_key_usage, "critical,keyCertSign,cRLSign") != 0 || !X509_sign(ca, ca_key, EVP_sha256())) {
        snprintf(err, errlen, "cannot make the CA certificate: %s", ossl_reason());
        goto err;
    }

    /* X.520 caps a CN at 64 characters; clients match the SANs anyway, so a
     * long NAME.NS.svc falls back to NAME alone rather than failing. */
    char cn[200];
    if ((size_t)snprintf(cn, sizeof cn, "%s.%s.svc", o->service, o->ns) > 64) snprintf(cn, sizeof cn, "%s", o->service);
    if (!(leaf = make_cert(key, cn, ca, now, days)) ||
        add_ext(leaf, ca, NID_basic_constraints, "critical,CA:FALSE") != 0 ||
        add_ext(leaf, ca, NID_key_usage, "critical,digitalSignature") != 0 ||
        add_ext(leaf, ca, NID_ext_key_usage, "serverAuth") != 0 || add_sans(leaf, o) != 0 ||
        !X509_sign(leaf, ca_key, EVP_sha256())) {
        snprintf(err, errlen, "cannot make the serving certificate: %s", ossl_reason());
        goto err;
    }

    if (!(pem[0] = pem_of(write_key, ca_key, &len[0])) || !(pem[1] = pem_of(write_cert, ca, &len[1])) ||
        !(pem[2] = pem_of(write_key, key, &len[2])) || !(pem[3] = pem_of(write_cert, leaf, &len[3]))) {
        snprintf(err, errlen, "cannot encode PEM: %s", ossl_reason());
        goto err;
    }
    size_t blen = 4 * ((len[1] + 2) / 3);
    bundle = xmalloc(blen + 2);
    EVP_EncodeBlock((unsigned char *)bundle, (const unsigned char *)pem[1], (int)len[1]);
    bundle[blen] = '\n';
    bundle[blen + 1] = 0;

    static const mode_t modes[4] = {0600, 0644, 0600, 0644};
    for (int i = 0; i < 4; i++)
        if (write_atomic(o->out_dir, tls_gen_files[i], pem[i], len[i], modes[i], err, errlen) != 0) goto err;
    if (write_atomic(o->out_dir, tls_gen_files[4], bundle, blen + 1, 0644, err, errlen) != 0) goto err;
    sync_dir(o->out_dir);
    rc = 0;
err:
    ERR_clear_error();
    for (int i = 0; i < 4; i++)
        if (pem[i]) OPENSSL_clear_free(pem[i], len[i]);
    free(bundle);
    X509_free(ca);
    X509_free(leaf);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(key);
    return rc;
}
