/* tests/bench/bench_engine.c - engine mutations per second (make bench).
 *
 * Two pods: a typical Deployment pod asking for Java and the collector
 * sidecar (about 3 KB as the API server sends it, managedFields included),
 * and the same pod padded to 64 KiB with managedFields and env, the size
 * real pods reach. Each iteration is what the webhook does per admission
 * after parsing: mutate, then serialise the patch. The figures are CPU time
 * per mutation on one core; compare them side by side in one run, the
 * machines are shared.
 *
 * Then the admission handlers without HTTP: the pod review, and beside it a
 * typical collector (deployment mode, three pipelines, an autoscaler, about
 * 3 KB as the API server sends it) defaulted and validated, and the
 * Instrumentation of examples/, each with its time as a multiple of the
 * pod review's in the same run.
 *
 * The status record (mutate/record.h) is measured side by side: each pod
 * with it and without (status-record: false), and the re-invocation of an
 * injected pod, which the record answers at once. `bench_engine DIR
 * --calls LABEL N` runs N mutations of one case and nothing else, for
 * tests/bench/record_bench.py's callgrind instruction counts. */
#include "base/jtext.h"

#include "kube/filesource.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "kube/yaml.h"
#include "mutate/defaults.h"
#include "base/json.h"
#include "mutate/mutate.h"
#include "server/cr_admission.h"
#include "server/review.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(*len + 1);
    if (fread(b, 1, *len, f) != *len) exit(1);
    b[*len] = 0;
    fclose(f);
    return b;
}

static json_object *pad_pod(json_object *pod, size_t target) {
    json_object *copy = NULL;
    copy = jcopy(pod);
    json_object *mf = json_object_object_get(json_object_object_get(copy, "metadata"), "managedFields");
    json_object *c0 = json_object_array_get_idx(json_object_object_get(json_object_object_get(copy, "spec"), "containers"), 0);
    json_object *env = json_object_object_get(c0, "env");
    if (!env) { env = json_object_new_array(); json_object_object_add(c0, "env", env); }
    for (int i = 0; strlen(json_object_to_json_string(copy)) < target; i++) {
        char name[64], val[256];
        snprintf(name, sizeof name, "APP_SETTING_%d", i);
        memset(val, 'v', sizeof val - 1);
        val[sizeof val - 1] = 0;
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(name));
        json_object_object_add(e, "value", json_object_new_string(val));
        json_object_array_add(env, e);
        json_object *m = NULL;
        m = jcopy(json_object_array_get_idx(mf, 0));
        json_object_array_add(mf, m);
    }
    return copy;
}

static const char *only; /* run only benches whose label contains this */
/* BENCH_RUNS=N: the review benches run exactly N times through the
 * *_once functions below instead of for a second, so that
 * tests/bench/callgrind.sh can count their instructions per review
 * (valgrind --toggle-collect) apart from the set-up. */
static long fixed_runs;

__attribute__((noinline)) static void review_once(const review_env *env, json_tokener *tok, mutate_cache *cache,
                                                  const char *body, size_t len) {
    review_out out;
    review_handle(env, tok, cache, body, len, &out);
    review_out_free(&out);
}

__attribute__((noinline)) static void cr_once(const cr_env *env, cr_route route, json_tokener *tok, const char *body,
                                              size_t len) {
    cr_out out;
    cr_admission_handle(env, route, tok, body, len, &out);
    review_out_free(&out.r);
}

static long calls = -1; /* --calls: mutations to run, untimed */

static double bench(const char *label, json_object *pod, const kube_reader *src, const mutate_options *opt,
                    json_object *ns) {
    if (only && (calls >= 0 ? strcmp(label, only) : !strstr(label, only))) return 0;
    /* The patch as the server asks for it: text written while diffing,
     * with a cache as each of its loops has. */
    mutate_cache *cache = mutate_cache_new(0, 0);
    mutate_request req = {.pod = pod, .namespace = "default", .ns = ns, .src = src, .opt = opt, .patch_text = true,
                          .cache = cache};
    if (calls >= 0) {
        for (long i = 0; i < calls; i++) {
            mutate_result r;
            mutate_pod(&req, &r);
            mutate_result_free(&r);
        }
        mutate_cache_free(cache);
        return 0;
    }
    size_t bytes = strlen(json_object_to_json_string(pod)), plen = 0;
    /* Warm up, then run for about a second of CPU. */
    for (int i = 0; i < 200; i++) {
        mutate_result r;
        mutate_pod(&req, &r);
        mutate_result_free(&r);
    }
    long n = 0;
    double t0 = now(), t1;
    do {
        for (int i = 0; i < 500; i++, n++) {
            mutate_result r;
            mutate_pod(&req, &r);
            plen = r.patch_len;
            mutate_result_free(&r);
        }
        t1 = now();
    } while (t1 - t0 < 1.0);
    double us = (t1 - t0) / (double)n * 1e6;
    printf("engine %-36s pod %6zu B  patch %6zu B  %8.2f us/mutation  %9.0f mutations/s  (%ld runs)\n", label, bytes,
           plen, us, 1e6 / us, n);
    mutate_cache_free(cache);
    return us;
}

/* The same pod with the record and without, one after the other. */
static void bench_record(const char *label, json_object *pod, const kube_reader *src, mutate_options *opt) {
    char with[96], without[96];
    snprintf(with, sizeof with, "%s", label);
    snprintf(without, sizeof without, "%s, no record", label);
    opt->record = true;
    double a = bench(with, pod, src, opt, NULL);
    opt->record = false;
    double b = bench(without, pod, src, opt, NULL);
    opt->record = true;
    if (a > 0 && b > 0) printf("record %-36s %+.1f%% time per mutation with the record\n", label, (a / b - 1) * 100);
}

/* A second admission of an injected pod: through its record, and (record
 * off, annotation removed) through the engine's own checks. */
static void bench_again(const char *label, json_object *pod, const kube_reader *src, mutate_options *opt) {
    mutate_request req = {.pod = pod, .namespace = "default", .src = src, .opt = opt};
    mutate_result r;
    opt->record = true;
    mutate_pod(&req, &r);
    json_object *injected = json_object_get(r.pod), *bare = NULL;
    mutate_result_free(&r);
    bare = jcopy(injected);
    json_object_object_del(json_object_object_get(json_object_object_get(bare, "metadata"), "annotations"),
                           "otel-webhook/status");
    char a[96], b[96];
    snprintf(a, sizeof a, "again: %s", label);
    snprintf(b, sizeof b, "again: %s, no record", label);
    bench(a, injected, src, opt, NULL);
    opt->record = false;
    bench(b, bare, src, opt, NULL);
    opt->record = true;
    json_object_put(injected);
    json_object_put(bare);
}

/* The whole admission handler minus HTTP and TLS: parse, mutate, respond.
 * Returns microseconds per review. */
static double bench_review(const char *label, const char *body, size_t len, kube_store *store, const mutate_options *opt) {
    if (only && !strstr(label, only)) return 0;
    review_env env = {.store = store, .opt = opt};
    json_tokener *tok = json_tokener_new();
    mutate_cache *cache = mutate_cache_new(0, 0); /* the server's, one per loop */
    long n = 0;
    double t0 = now(), t1;
    do {
        for (int i = 0; i < 200 && (!fixed_runs || n < fixed_runs); i++, n++) review_once(&env, tok, cache, body, len);
        t1 = now();
    } while (fixed_runs ? n < fixed_runs : t1 - t0 < 1.0);
    double us = (t1 - t0) / (double)n * 1e6;
    printf("review %-28s body %6zu B                 %8.2f us/review    %9.0f reviews/s    (%ld runs)\n", label, len, us,
           1e6 / us, n);
    json_tokener_free(tok);
    mutate_cache_free(cache);
    return us;
}

/* A custom resource admission on one route (server/cr_admission.c), in
 * microseconds per review and as a multiple of the pod review's. */
static void bench_cr(const char *label, cr_route route, const char *body, size_t len, const mutate_settings *cfg,
                     double pod_us) {
    if (only && !strstr(label, only)) return;
    cr_env env = {.settings = cfg, .review_budget = 1.0};
    json_tokener *tok = json_tokener_new();
    cr_out out;
    cr_admission_handle(&env, route, tok, body, len, &out);
    const char *result = metrics_cr_results[out.result];
    review_out_free(&out.r);
    long n = 0;
    double t0 = now(), t1;
    do {
        for (int i = 0; i < 200 && (!fixed_runs || n < fixed_runs); i++, n++) cr_once(&env, route, tok, body, len);
        t1 = now();
    } while (fixed_runs ? n < fixed_runs : t1 - t0 < 1.0);
    double us = (t1 - t0) / (double)n * 1e6;
    printf("cr     %-28s body %6zu B  %-9s      %8.2f us/review    %9.0f reviews/s    %5.2fx the pod review\n", label,
           len, result, us, 1e6 / us, pod_us > 0 ? us / pod_us : 0);
    json_tokener_free(tok);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "tests/bench";
    only = argc > 2 ? argv[2] : NULL;
    const char *runs = getenv("BENCH_RUNS");
    fixed_runs = runs ? atol(runs) : 0;
    if (argc > 4 && !strcmp(argv[2], "--calls")) {
        only = argv[3];
        calls = atol(argv[4]);
    }
    mutate_settings cfg;
    mutate_settings_init(&cfg);
    kube_store *store = kube_store_new();
    const char *dirs[] = {"examples/resources", "tests/bench/resources"};
    cfg.opt.enabled |= MUTATE_BIT(MUTATE_GO);
    kube_filesource *fs = kube_filesource_new(store, &MUTATE_PREPARE(&cfg), dirs, 2, "default", NULL);
    kube_filesource_poll(fs, NULL);
    char path[512];
    size_t len;
    snprintf(path, sizeof path, "%s/typical-pod.json", dir);
    char *text = slurp(path, &len);
    json_object *pod = json_tokener_parse(text);
    if (!pod) { fprintf(stderr, "%s: bad JSON\n", path); return 1; }
    kube_view v = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, v.snap);
    json_object *big = pad_pod(pod, 64 * 1024);
    bench_record("java+sidecar (typical)", pod, &src, &cfg.opt);
    bench_record("java+sidecar (64 KiB pod)", big, &src, &cfg.opt);
    cfg.opt.native_sidecars = true;
    bench("java+native sidecar", pod, &src, &cfg.opt, NULL);
    snprintf(path, sizeof path, "%s/seven-pod.json", dir);
    char *seven_text = slurp(path, &len);
    json_object *seven = json_tokener_parse(seven_text);
    cfg.opt.native_sidecars = false;
    bench_record("7 languages+sidecar, 7 containers", seven, &src, &cfg.opt);
    bench_again("java+sidecar (typical)", pod, &src, &cfg.opt);
    bench_again("java+sidecar (64 KiB pod)", big, &src, &cfg.opt);
    json_object_put(seven);
    free(seven_text);
    if (calls >= 0) goto done;
    size_t rlen;
    char *review = slurp("examples/review-java.json", &rlen);
    double pod_us = bench_review("parse+mutate+respond (~4 KB)", review, rlen, store, &cfg.opt);
    free(review);
    snprintf(path, sizeof path, "%s/collector-review.json", dir);
    char *col = slurp(path, &rlen);
    bench_cr("collector: default (patch)", CR_MUTATE_COLLECTOR, col, rlen, &cfg, pod_us);
    bench_cr("collector: default+validate", CR_VALIDATE_COLLECTOR, col, rlen, &cfg, pod_us);
    free(col);
    /* The example Instrumentation, as a CREATE review. */
    size_t ilen;
    char *itext = slurp("examples/resources/instrumentation.yaml", &ilen);
    kube_yaml_error ye;
    json_object *inst = kube_yaml_parse_one(itext, ilen, &ye), *rv = json_object_new_object(), *rq = json_object_new_object();
    json_object_object_add(rv, "apiVersion", json_object_new_string("admission.k8s.io/v1"));
    json_object_object_add(rv, "kind", json_object_new_string("AdmissionReview"));
    json_object_object_add(rq, "uid", json_object_new_string("bench"));
    json_object_object_add(rq, "operation", json_object_new_string("CREATE"));
    json_object_object_add(rq, "object", inst);
    json_object_object_add(rv, "request", rq);
    const char *ibody = json_object_to_json_string(rv);
    bench_cr("instrumentation: default", CR_MUTATE_INSTRUMENTATION, ibody, strlen(ibody), &cfg, pod_us);
    bench_cr("instrumentation: validate", CR_VALIDATE_INSTRUMENTATION, ibody, strlen(ibody), &cfg, pod_us);
    json_object_put(rv);
    free(itext);
done:
    kube_store_release(store, &v);
    json_object_put(pod);
    json_object_put(big);
    free(text);
    kube_filesource_free(fs);
    kube_store_free(store);
    mutate_settings_free(&cfg);
    return 0;
}
