/* kube/kubeconfig.c - kubeconfig to kube_api settings; see kubeconfig.h.
 *
 * The YAML goes through kube/yaml.c like every manifest, so quoting and
 * anchors behave as in kubectl. The *-data fields are base64 PEM, decoded
 * here and handed to libcurl as memory blobs: no temporary key files. */
#include "kube/kubeconfig.h"

#include "base/alloc.h"
#include "kube/file.h"
#include "kube/store.h"
#include "kube/yaml.h"

#include <errno.h>
#include <libgen.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The entry of a named list (clusters, users, contexts) called name. */
static json_object *named(json_object *root, const char *list, const char *name, const char *field) {
    json_object *arr = kube_obj_get(root, list);
    size_t n = json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(arr, i);
        const char *nm = kube_obj_str(e, "name");
        if (nm && !strcmp(nm, name)) return kube_obj_get(e, field);
    }
    return NULL;
}

/* base64 text to bytes (malloc'ed); NULL when it is not base64. */
static char *b64(const char *in, size_t *out_len) {
    size_t n = strlen(in), k = 0;
    char *clean = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++)
        if (in[i] != '\n' && in[i] != '\r' && in[i] != ' ' && in[i] != '\t') clean[k++] = in[i];
    clean[k] = 0;
    char *out = xmalloc(k / 4 * 3 + 4);
    int r = k % 4 == 0 && out ? EVP_DecodeBlock((unsigned char *)out, (unsigned char *)clean, (int)k) : -1;
    if (r < 0) {
        free(clean);
        free(out);
        return NULL;
    }
    /* EVP_DecodeBlock counts the padding as zero bytes. */
    if (k && clean[k - 1] == '=') r--;
    if (k > 1 && clean[k - 2] == '=') r--;
    free(clean);
    *out_len = (size_t)r;
    return out;
}

static char *rel(const char *dir, const char *p) {
    char *r = NULL;
    if (!p) return NULL;
    if (p[0] == '/') return xstrdup(p);
    if (asprintf(&r, "%s/%s", dir, p) < 0) return NULL;
    return r;
}

kube_api *kube_api_new_kubeconfig(const char *path, const char *context, char *err, size_t errlen) {
    kube_api *api = NULL;
    char *text = NULL, *dir = NULL, *pathcopy = NULL;
    char *ca_file = NULL, *cert_file = NULL, *key_file = NULL, *token_file = NULL;
    char *ca = NULL, *cert = NULL, *key = NULL;
    size_t ca_len = 0, cert_len = 0, key_len = 0, len = 0;
    json_object *root = NULL;
    kube_yaml_error ye = {0};
    if (!(text = kube_read_file(path, &len))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto done;
    }
    if (!(root = kube_yaml_parse_one(text, len, &ye))) {
        snprintf(err, errlen, "%s:%d: %s", path, ye.line, ye.msg[0] ? ye.msg : "not a kubeconfig");
        goto done;
    }
    pathcopy = xstrdup(path);
    dir = xstrdup(dirname(pathcopy));
    const char *ctx = context ? context : kube_obj_str(root, "current-context");
    if (!ctx || !*ctx) {
        snprintf(err, errlen, "%s: no current-context", path);
        goto done;
    }
    json_object *c = named(root, "contexts", ctx, "context");
    if (!c) {
        snprintf(err, errlen, "%s: context \"%s\" not found", path, ctx);
        goto done;
    }
    const char *cname = kube_obj_str(c, "cluster"), *uname = kube_obj_str(c, "user");
    json_object *cl = cname ? named(root, "clusters", cname, "cluster") : NULL;
    if (!cl) {
        snprintf(err, errlen, "%s: cluster \"%s\" of context \"%s\" not found", path, cname ? cname : "", ctx);
        goto done;
    }
    json_object *u = uname ? named(root, "users", uname, "user") : NULL;
    if (uname && !u) {
        snprintf(err, errlen, "%s: user \"%s\" of context \"%s\" not found", path, uname, ctx);
        goto done;
    }
    if (kube_obj_get(u, "exec")) {
        snprintf(err, errlen, "%s: user \"%s\" uses an exec credential plugin (%s), which otel-webhook does not run; "
                 "use a token, tokenFile or client certificate", path, uname,
                 kube_obj_str(u, "exec.command") ? kube_obj_str(u, "exec.command") : "exec");
        goto done;
    }
    if (kube_obj_get(u, "auth-provider")) {
        snprintf(err, errlen, "%s: user \"%s\" uses the auth-provider plugin \"%s\", which is not supported; "
                 "use a token, tokenFile or client certificate", path, uname,
                 kube_obj_str(u, "auth-provider.name") ? kube_obj_str(u, "auth-provider.name") : "");
        goto done;
    }
    if (kube_obj_get(u, "username") || kube_obj_get(u, "password")) {
        snprintf(err, errlen, "%s: user \"%s\": basic authentication (username/password) is not supported", path, uname);
        goto done;
    }
    const char *server = kube_obj_str(cl, "server");
    json_object *insecure = kube_obj_get(cl, "insecure-skip-tls-verify");
    const char *ca_data = kube_obj_str(cl, "certificate-authority-data");
    const char *cert_data = kube_obj_str(u, "client-certificate-data"), *key_data = kube_obj_str(u, "client-key-data");
    ca_file = rel(dir, kube_obj_str(cl, "certificate-authority"));
    cert_file = rel(dir, kube_obj_str(u, "client-certificate"));
    key_file = rel(dir, kube_obj_str(u, "client-key"));
    token_file = rel(dir, kube_obj_str(u, "tokenFile"));
    struct { const char *in, *what; char **out; size_t *len; } blobs[] = {
        {ca_data, "certificate-authority-data", &ca, &ca_len},
        {cert_data, "client-certificate-data", &cert, &cert_len},
        {key_data, "client-key-data", &key, &key_len},
    };
    for (int i = 0; i < 3; i++) {
        if (blobs[i].in && !(*blobs[i].out = b64(blobs[i].in, blobs[i].len))) {
            snprintf(err, errlen, "%s: %s is not valid base64", path, blobs[i].what);
            goto done;
        }
    }
    if ((cert || cert_file) != (key || key_file)) {
        snprintf(err, errlen, "%s: user \"%s\": a client certificate needs its client key (and the other way round)",
                 path, uname ? uname : "");
        goto done;
    }
    kube_api_settings s = {
        .server = server,
        .ca_file = ca_file, .ca_data = ca, .ca_len = ca_len,
        .token = kube_obj_str(u, "token"), .token_file = token_file,
        .cert_file = cert_file, .key_file = key_file,
        .cert_data = cert, .cert_len = cert_len, .key_data = key, .key_len = key_len,
        .insecure = json_object_is_type(insecure, json_type_boolean) && json_object_get_boolean(insecure),
    };
    char e2[400];
    if (!(api = kube_api_new(&s, e2, sizeof e2))) snprintf(err, errlen, "%s: cluster \"%s\": %s", path, cname, e2);
done:
    json_object_put(root);
    free(text);
    free(dir);
    free(pathcopy);
    free(ca_file);
    free(cert_file);
    free(key_file);
    free(token_file);
    free(ca);
    free(cert);
    if (key) OPENSSL_cleanse(key, key_len);
    free(key);
    return api;
}
