/* certs/tls.c - the serving SSL_CTX and the certificate pair in service.
 *
 * The pair is an immutable, reference-counted bundle (leaf, intermediates,
 * key). The certificate callback pins the current bundle under a mutex that
 * covers only "read the pointer, add a reference", then calls
 * SSL_use_cert_and_key() outside the lock: that call duplicates the chain
 * and compares the key with the certificate, and N event-loop threads doing
 * handshakes should not queue behind each other for it. A lock-free pointer
 * alone would not do, because between loading the pointer and incrementing
 * its count the reload thread could drop the last reference; the mutex makes
 * the two steps one. A reload builds a complete new bundle first and swaps
 * the pointer under the same mutex, so a handshake sees either the old pair
 * or the new one, never a new certificate with an old key.
 *
 * Change detection compares (st_dev, st_ino, st_size, st_mtim) of both files
 * with those of the pair in service. The identities recorded are fstat()s of
 * the descriptors the pair was actually read from, so a file replaced while
 * we read it shows up as a change on the next call. Nothing is recorded for
 * a refused pair: it is re-read on every call until it is fixed, which costs
 * one small PEM parse a second and covers writers that finish after us
 * without touching the timestamps we compare. */
#include "certs/tls.h"

#include "base/alloc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#define MAX_PEM (1024 * 1024) /* a certificate chain or key is a few KB */

typedef struct bundle {
    X509 *cert;
    STACK_OF(X509) *chain; /* intermediates after the leaf; may be empty */
    EVP_PKEY *key;
    double not_after;
    atomic_int refs;
} bundle;

typedef struct file_id {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtim;
} file_id;

struct tls_server {
    SSL_CTX *ctx;
    char *cert_file, *key_file;
    pthread_mutex_t mu; /* guards cur and the first reference taken on it */
    bundle *cur;
    file_id cert_id, key_id; /* of the pair in service; reload thread only */
};

enum { LOAD_OK = 0, LOAD_MISMATCH = 1, LOAD_ERROR = -1 };

static void bundle_put(bundle *b) {
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
    X509_free(b->cert);
    sk_X509_pop_free(b->chain, X509_free);
    EVP_PKEY_free(b->key);
    free(b);
}

static bundle *bundle_get(tls_server *s) {
    pthread_mutex_lock(&s->mu);
    bundle *b = s->cur;
    if (b) atomic_fetch_add(&b->refs, 1);
    pthread_mutex_unlock(&s->mu);
    return b;
}

static void bundle_swap(tls_server *s, bundle *b) {
    pthread_mutex_lock(&s->mu);
    bundle *old = s->cur;
    s->cur = b;
    pthread_mutex_unlock(&s->mu);
    bundle_put(old);
}

/* The most specific OpenSSL reason for the last failure, for one-line messages. */
static const char *ossl_reason(void) {
    unsigned long e = ERR_peek_last_error();
    const char *r = e ? ERR_reason_error_string(e) : NULL;
    return r ? r : "unknown error";
}

static void file_id_of(const struct stat *st, file_id *id) {
    id->dev = st->st_dev;
    id->ino = st->st_ino;
    id->size = st->st_size;
    id->mtim = st->st_mtim;
}

static int file_id_eq(const file_id *a, const struct stat *st) {
    return a->dev == st->st_dev && a->ino == st->st_ino && a->size == st->st_size &&
           a->mtim.tv_sec == st->st_mtim.tv_sec && a->mtim.tv_nsec == st->st_mtim.tv_nsec;
}

/* Reads a whole (small) file and the identity of what was read. Only a
 * regular file: opening a FIFO for reading blocks until a writer comes
 * (the watcher thread would hang, and SIGTERM with it), and a device or a
 * FIFO never ends. So the open does not block (O_NONBLOCK), and fstat() on
 * what was opened decides before anything is read; for a regular file the
 * flag changes nothing. */
static char *read_small(const char *path, size_t *len, file_id *id, char *err, size_t errlen) {
    char *buf = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot stat %s: %s", path, strerror(errno));
        goto err;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s is not a regular file (%s)", path,
                 S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISDIR(st.st_mode) ? "a directory"
                                                 : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                 : S_ISSOCK(st.st_mode) ? "a socket" : "not a file");
        goto err;
    }
    if (st.st_size > MAX_PEM) {
        snprintf(err, errlen, "%s is larger than 1 MiB", path);
        goto err;
    }
    buf = xmalloc((size_t)st.st_size + 1);
    size_t n = 0;
    while (n < (size_t)st.st_size) { /* a file that shrinks meanwhile is read as it is */
        ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
            goto err;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    buf[n] = 0;
    close(fd);
    file_id_of(&st, id);
    *len = n;
    return buf;
err:
    free(buf);
    close(fd);
    return NULL;
}

/* Never prompt on a terminal for the passphrase of an encrypted key. */
static int no_passphrase(char *buf, int size, int rwflag, void *u) {
    (void)buf, (void)size, (void)rwflag, (void)u;
    return -1;
}

/* OpenSSL 3 reads keys through its decoders, which report a missing or
 * damaged PEM block only as "unsupported". A structural pass over the PEM
 * blocks first gives a reason worth logging. */
static int check_key_pem(const char *buf, size_t len, const char *key_file, char *err, size_t errlen) {
    BIO *bio = BIO_new_mem_buf(buf, (int)len);
    if (!bio) base_oom(); /* OpenSSL's only failure here */
    int found = 0, encrypted = 0;
    while (!found) {
        char *name = NULL, *header = NULL;
        unsigned char *data = NULL;
        long dlen = 0;
        if (!PEM_read_bio(bio, &name, &header, &data, &dlen)) break;
        if (strstr(name, "PRIVATE KEY")) {
            found = 1;
            encrypted = !strcmp(name, "ENCRYPTED PRIVATE KEY") || strstr(header, "ENCRYPTED");
        }
        OPENSSL_free(name);
        OPENSSL_free(header);
        OPENSSL_clear_free(data, (size_t)dlen);
    }
    BIO_free(bio);
    if (!found) {
        unsigned long e = ERR_peek_last_error();
        if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
            snprintf(err, errlen, "no PEM private key in %s", key_file);
        else
            snprintf(err, errlen, "cannot parse the private key in %s: %s", key_file, ossl_reason());
        return -1;
    }
    ERR_clear_error();
    if (encrypted) {
        snprintf(err, errlen, "the private key in %s is encrypted, which is not supported", key_file);
        return -1;
    }
    return 0;
}

static double asn1_time_unix(const ASN1_TIME *t) {
    struct tm tm;
    if (!t || ASN1_TIME_to_tm(t, &tm) != 1) return 0;
    return (double)timegm(&tm);
}

/* Loads a pair into a new bundle. LOAD_ERROR leaves a reason naming the file
 * in err; LOAD_MISMATCH leaves err alone, since callers word it differently. */
static int load_pair(const char *cert_file, const char *key_file, bundle **out, file_id *cert_id, file_id *key_id,
                     char *err, size_t errlen) {
    int rc = LOAD_ERROR;
    size_t clen = 0, klen = 0;
    char *cbuf = NULL, *kbuf = NULL;
    BIO *bio = NULL;
    bundle *b = xcalloc(1, sizeof *b);
    atomic_init(&b->refs, 1);
    ERR_clear_error();

    if (!(cbuf = read_small(cert_file, &clen, cert_id, err, errlen))) goto err;
    if (!(kbuf = read_small(key_file, &klen, key_id, err, errlen))) goto err;

    if (!(bio = BIO_new_mem_buf(cbuf, (int)clen))) base_oom();
    if (!(b->cert = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL))) {
        unsigned long e = ERR_peek_last_error();
        if (ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)
            snprintf(err, errlen, "no PEM certificate in %s", cert_file);
        else
            snprintf(err, errlen, "cannot parse the certificate in %s: %s", cert_file, ossl_reason());
        goto err;
    }
    if (!(b->chain = sk_X509_new_null())) base_oom();
    for (;;) {
        X509 *x = PEM_read_bio_X509(bio, NULL, no_passphrase, NULL);
        if (!x) break;
        if (!sk_X509_push(b->chain, x)) base_oom();
    }
    /* The loop ends at "no start line" after the last certificate; any other
     * error is a damaged intermediate, typically a file caught mid-write. */
    unsigned long e = ERR_peek_last_error();
    if (!(ERR_GET_LIB(e) == ERR_LIB_PEM && ERR_GET_REASON(e) == PEM_R_NO_START_LINE)) {
        snprintf(err, errlen, "cannot parse certificate %d of the chain in %s: %s", sk_X509_num(b->chain) + 2,
                 cert_file, ossl_reason());
        goto err;
    }
    ERR_clear_error();
    BIO_free(bio);
    bio = NULL;

    if (check_key_pem(kbuf, klen, key_file, err, errlen) != 0) goto err;
    if (!(bio = BIO_new_mem_buf(kbuf, (int)klen))) base_oom();
    if (!(b->key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL))) {
        snprintf(err, errlen, "cannot parse the private key in %s: %s", key_file, ossl_reason());
        goto err;
    }
    if (X509_check_private_key(b->cert, b->key) != 1) {
        rc = LOAD_MISMATCH;
        goto err;
    }
    b->not_after = asn1_time_unix(X509_get0_notAfter(b->cert));
    BIO_free(bio);
    free(cbuf);
    OPENSSL_clear_free(kbuf, klen);
    ERR_clear_error();
    *out = b;
    return LOAD_OK;

err:
    BIO_free(bio);
    free(cbuf);
    if (kbuf) OPENSSL_clear_free(kbuf, klen);
    bundle_put(b);
    ERR_clear_error();
    return rc;
}

static int on_cert(SSL *ssl, void *arg) {
    bundle *b = bundle_get(arg);
    if (!b) return 0;
    int ok = SSL_use_cert_and_key(ssl, b->cert, b->key, b->chain, 1) == 1;
    bundle_put(b);
    return ok;
}

tls_server *tls_server_new(const char *cert_file, const char *key_file, const tls_options *opt, char *err,
                           size_t errlen) {
    tls_server *s = xcalloc(1, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
    s->cert_file = xstrdup(cert_file);
    s->key_file = xstrdup(key_file);

    bundle *b = NULL;
    int rc = load_pair(cert_file, key_file, &b, &s->cert_id, &s->key_id, err, errlen);
    if (rc == LOAD_MISMATCH)
        snprintf(err, errlen, "the key in %s does not match the certificate in %s", key_file, cert_file);
    if (rc != LOAD_OK) goto err;
    s->cur = b;

    if (!(s->ctx = SSL_CTX_new(TLS_server_method()))) goto ossl;
    int min = opt && opt->min_tls13 ? TLS1_3_VERSION : TLS1_2_VERSION;
    if (SSL_CTX_set_min_proto_version(s->ctx, min) != 1) goto ossl;
    /* Forward secrecy and AEAD only; these are also the suites HTTP/2 allows. */
    if (SSL_CTX_set_cipher_list(s->ctx, "ECDHE+AESGCM:ECDHE+CHACHA20") != 1) goto ossl;
    SSL_CTX_set_options(s->ctx, SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION);
    SSL_CTX_set_cert_cb(s->ctx, on_cert, s);
    return s;

ossl:
    snprintf(err, errlen, "cannot set up the TLS context: %s", ossl_reason());
err:
    ERR_clear_error();
    tls_server_free(s);
    return NULL;
}

void tls_server_free(tls_server *s) {
    if (!s) return;
    SSL_CTX_free(s->ctx);
    bundle_put(s->cur);
    pthread_mutex_destroy(&s->mu);
    free(s->cert_file);
    free(s->key_file);
    free(s);
}

SSL_CTX *tls_server_ctx(tls_server *s) { return s->ctx; }

int tls_server_check_reload(tls_server *s, char *msg, size_t msglen) {
    struct stat cst, kst;
    if (msglen) msg[0] = 0;
    if (stat(s->cert_file, &cst) != 0) {
        snprintf(msg, msglen, "cannot stat %s: %s; keeping the previous pair", s->cert_file, strerror(errno));
        return -1;
    }
    if (stat(s->key_file, &kst) != 0) {
        snprintf(msg, msglen, "cannot stat %s: %s; keeping the previous pair", s->key_file, strerror(errno));
        return -1;
    }
    if (file_id_eq(&s->cert_id, &cst) && file_id_eq(&s->key_id, &kst)) return 0;

    char why[512];
    bundle *b = NULL;
    file_id cid, kid;
    int rc = load_pair(s->cert_file, s->key_file, &b, &cid, &kid, why, sizeof why);
    if (rc == LOAD_MISMATCH) {
        snprintf(msg, msglen, "certificate and key do not match; keeping the previous pair");
        return -1;
    }
    if (rc != LOAD_OK) {
        snprintf(msg, msglen, "%s; keeping the previous pair", why);
        return -1;
    }
    s->cert_id = cid;
    s->key_id = kid;

    char subject[256] = "", expires[32] = "";
    X509_NAME_oneline(X509_get_subject_name(b->cert), subject, sizeof subject);
    time_t t = (time_t)b->not_after;
    struct tm tm;
    if (gmtime_r(&t, &tm)) strftime(expires, sizeof expires, "%Y-%m-%dT%H:%M:%SZ", &tm);
    snprintf(msg, msglen, "loaded a new certificate for %s, expiring %s", subject, expires);
    bundle_swap(s, b);
    return 1;
}

double tls_server_not_after(tls_server *s) {
    bundle *b = bundle_get(s);
    double t = b ? b->not_after : 0;
    bundle_put(b);
    return t;
}

int tls_server_loaded(tls_server *s) {
    bundle *b = bundle_get(s);
    int loaded = b != NULL;
    bundle_put(b);
    return loaded;
}
