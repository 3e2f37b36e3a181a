/* tests/unit/test_livesource.c - the parts of the live cluster source that
 * need no API server: kubeconfig reading (every accepted form and every refusal, with
 * its message), the namespace and owner answers of the live kube_reader
 * from a snapshot, and the on-demand lookup rules that decide before any
 * request (names that cannot exist, a spent budget, an unreachable server).
 * LIST/WATCH, tokens, TLS and timing are tested end to end against
 * tests/blackbox/fakeapi.py by tests/blackbox/cluster_test.py. */
#include "kube/kubeconfig.h"

#include "kube/livesource.h"
#include "kube/store.h"
#include "mutate/defaults.h"
#include "tests/unit/util.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256];

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static void setup(void) {
    snprintf(dir, sizeof dir, "/tmp/otel-test-live-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void) { nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS); }

static const char *write_file(const char *name, const char *text) {
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

/* A kubeconfig with one context "c" -> cluster "k", user "u". */
static const char *kc(const char *cluster, const char *user) {
    char *text = NULL;
    ck_assert_int_ge(asprintf(&text,
                              "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
                              "contexts:\n- name: c\n  context: {cluster: k, user: u}\n"
                              "- name: other\n  context: {cluster: k2, user: u}\n"
                              "clusters:\n- name: k\n  cluster:\n%s"
                              "- name: k2\n  cluster: {server: \"https://other:6443\", insecure-skip-tls-verify: true}\n"
                              "users:\n- name: u\n  user:\n%s",
                              cluster, user),
                     0);
    const char *p = write_file("config", text);
    free(text);
    return p;
}

static void expect_error(const char *path, const char *context, const char *needle) {
    char err[512] = "";
    kube_api *api = kube_api_new_kubeconfig(path, context, err, sizeof err);
    ck_assert_msg(api == NULL, "accepted, expected: %s", needle);
    ck_assert_msg(strstr(err, needle) != NULL, "error \"%s\" does not say \"%s\"", err, needle);
}

static kube_api *expect_ok(const char *path, const char *context) {
    char err[512] = "";
    kube_api *api = kube_api_new_kubeconfig(path, context, err, sizeof err);
    ck_assert_msg(api != NULL, "refused: %s", err);
    return api;
}

#define CA "    server: https://127.0.0.1:6443/\n    certificate-authority: ca.crt\n"

START_TEST(kubeconfig_forms) {
    write_file("ca.crt", "not read before the first request\n");
    write_file("token", "abc\n");
    /* token, trailing slash dropped from the server */
    kube_api *api = expect_ok(kc(CA, "    token: abc\n"), NULL);
    ck_assert_str_eq(kube_api_server(api), "https://127.0.0.1:6443");
    kube_api_free(api);
    /* tokenFile relative to the kubeconfig's folder */
    kube_api_free(expect_ok(kc(CA, "    tokenFile: token\n"), NULL));
    /* inline CA and client certificate (base64 of anything PEM-shaped) */
    kube_api_free(expect_ok(kc("    server: https://h:1\n    certificate-authority-data: LS0tLS1CRUdJTg==\n",
                               "    client-certificate-data: Y2VydA==\n    client-key-data: a2V5\n"),
                            NULL));
    /* files for the client certificate */
    kube_api_free(expect_ok(kc(CA, "    client-certificate: c.crt\n    client-key: c.key\n"), NULL));
    /* --context picks another cluster */
    api = expect_ok(kc(CA, "    token: abc\n"), "other");
    ck_assert_str_eq(kube_api_server(api), "https://other:6443");
    kube_api_free(api);
}
END_TEST

START_TEST(kubeconfig_refusals) {
    expect_error(kc(CA, "    exec:\n      command: aws\n      apiVersion: client.authentication.k8s.io/v1\n"), NULL,
                 "exec credential plugin (aws)");
    expect_error(kc(CA, "    auth-provider:\n      name: oidc\n"), NULL, "auth-provider plugin \"oidc\"");
    expect_error(kc(CA, "    username: a\n    password: b\n"), NULL, "basic authentication");
    expect_error(kc(CA, "    client-certificate: c.crt\n"), NULL, "needs its client key");
    expect_error(kc(CA, "    client-key-data: a2V5\n"), NULL, "needs its client key");
    expect_error(kc("    server: https://h:1\n    certificate-authority-data: '***'\n", "    token: a\n"), NULL,
                 "certificate-authority-data is not valid base64");
    expect_error(kc("    server: http://h:1\n", "    token: a\n"), NULL, "must start with https://");
    expect_error(kc(CA, "    tokenFile: missing-token\n"), NULL, "missing-token");
    expect_error(kc(CA, "    token: a\n"), "nope", "context \"nope\" not found");
    char path[512];
    snprintf(path, sizeof path, "%s/absent", dir);
    expect_error(path, NULL, "absent");
    expect_error(write_file("bad", "a: [\n"), NULL, "bad:");
    expect_error(write_file("noctx", "apiVersion: v1\nkind: Config\n"), NULL, "no current-context");
    expect_error(write_file("nocluster", "current-context: c\ncontexts:\n- name: c\n  context: {cluster: x, user: u}\n"),
                 NULL, "cluster \"x\" of context \"c\" not found");
    expect_error(write_file("nouser", "current-context: c\ncontexts:\n- name: c\n  context: {cluster: k, user: v}\n"
                                      "clusters:\n- name: k\n  cluster: {server: \"https://h\"}\n"),
                 NULL, "user \"v\" of context \"c\" not found");
}
END_TEST

START_TEST(incluster_needs_env) {
    char err[256] = "";
    unsetenv("KUBERNETES_SERVICE_HOST");
    ck_assert_ptr_null(kube_api_new_incluster(dir, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "KUBERNETES_SERVICE_HOST"));
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    ck_assert_ptr_null(kube_api_new_incluster(dir, err, sizeof err)); /* no ca.crt yet */
    ck_assert_ptr_nonnull(strstr(err, "ca.crt"));
    write_file("ca.crt", "x");
    write_file("token", "t");
    kube_api *api = kube_api_new_incluster(dir, err, sizeof err);
    ck_assert_msg(api != NULL, "%s", err);
    ck_assert_str_eq(kube_api_server(api), "https://10.0.0.1:443");
    kube_api_free(api);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    api = kube_api_new_incluster(dir, err, sizeof err);
    ck_assert_str_eq(kube_api_server(api), "https://[fd00::1]:443");
    kube_api_free(api);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
}
END_TEST

/* The live source's answers that need no request. The source is never
 * started; its API address refuses connections. */
static json_object *obj(const char *kind, const char *ns, const char *name) {
    json_object *o = json_object_new_object();
    json_object *m = json_object_new_object();
    json_object_object_add(o, "kind", json_object_new_string(kind));
    json_object_object_add(m, "name", json_object_new_string(name));
    if (ns) json_object_object_add(m, "namespace", json_object_new_string(ns));
    json_object_object_add(o, "metadata", m);
    return o;
}

START_TEST(live_source_answers) {
    char err[256];
    kube_api_settings st = {.server = "https://127.0.0.1:1", .token = "t"};
    kube_api *api = kube_api_new(&st, err, sizeof err);
    ck_assert_ptr_nonnull(api);
    kube_store *store = kube_store_new();
    pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    /* A budget no slow run can spend (valgrind's TLS set-up takes seconds
     * on a loaded machine): the refused connection must count as an error,
     * and the spent budget below is set by hand. */
    kube_live_opts o = {.lookup_budget_ms = 60000};
    kube_livesource *ls = kube_livesource_new(store, api, &MUTATE_PREPARE(&cfg), &mu, &o, NULL);
    json_object **objs = malloc(3 * sizeof *objs);
    objs[0] = obj("ReplicaSet", "a", "rs");
    objs[1] = obj("Namespace", NULL, "a");
    objs[2] = obj("Instrumentation", "a", "i");
    kube_store_set_layer(store, KUBE_LAYER_FILES, objs, 3);

    kube_view v = kube_store_acquire(store);
    kube_reader src;
    kube_live_req r;
    kube_live_begin(&r, ls, v.snap, &src);
    json_object *out = NULL;
    ck_assert_int_eq(src.get(src.ud, "ReplicaSet", "a", "rs", &out), KUBE_FOUND);  /* from the snapshot */
    ck_assert_int_eq(src.get(src.ud, "Namespace", "ignored", "a", &out), KUBE_FOUND);
    ck_assert_int_eq(src.get(src.ud, "Instrumentation", "a", "i", &out), KUBE_FOUND);
    /* watched kinds: the snapshot is the whole truth */
    ck_assert_int_eq(src.get(src.ud, "Instrumentation", "a", "j", &out), KUBE_NOT_FOUND);
    ck_assert_int_eq(src.get(src.ud, "OpenTelemetryCollector", "a", "c", &out), KUBE_NOT_FOUND);
    /* names that cannot exist are not asked for */
    ck_assert_int_eq(src.get(src.ud, "Secret", "a", "Bad_Name", &out), KUBE_NOT_FOUND);
    ck_assert_int_eq(src.get(src.ud, "ReplicaSet", "a/../b", "x", &out), KUBE_NOT_FOUND);
    /* an unreachable server: unknown, counted as an error */
    ck_assert_int_eq(src.get(src.ud, "Secret", "a", "s", &out), KUBE_UNKNOWN);
    /* a spent budget: unknown without a request */
    r.deadline = 0;
    ck_assert_int_eq(src.get(src.ud, "ReplicaSet", "a", "other", &out), KUBE_UNKNOWN);
    kube_live_end(&r);
    kube_store_release(store, &v);

    kube_live_stats s;
    kube_livesource_stats(ls, &s);
    ck_assert_uint_eq(s.lookups[KUBE_LOOKUP_ERROR], 1);
    ck_assert_uint_eq(s.lookups[KUBE_LOOKUP_BUDGET], 1);
    ck_assert_uint_eq(s.lookups[KUBE_LOOKUP_FOUND], 0);
    ck_assert_str_eq(s.res[0].name, "namespaces");
    ck_assert(!s.res[0].synced);
    ck_assert_int_eq(s.native_sidecars, -1);
    ck_assert(!kube_livesource_synced(ls));
    kube_livesource_free(ls);
    kube_store_free(store);
    mutate_settings_free(&cfg);
}
END_TEST

int main(void) {
    Suite *s = suite_create("live");
    TCase *tc = tcase_create("kubeconfig");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, kubeconfig_forms);
    tcase_add_test(tc, kubeconfig_refusals);
    tcase_add_test(tc, incluster_needs_env);
    suite_add_tcase(s, tc);
    TCase *lt = tcase_create("source");
    tcase_set_timeout(lt, 30);
    tcase_add_test(lt, live_source_answers);
    suite_add_tcase(s, lt);
    return tu_run(s);
}
