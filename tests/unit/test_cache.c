/* tests/unit/test_cache.c - the per-thread mutation cache (mutate/cache.c).
 *
 * engine_fixture.c runs every engine case of every suite again through the
 * test's cache, twice, and wants the same patch, pod and warnings as
 * without it. Here: what a cache may and may not serve. Different pods
 * from one entry (the pod-dependent env is not kept), languages injected
 * into the collector's own containers (the entry is not edited), a
 * collector replaced or re-versioned and every option collector_build reads
 * (never served stale), and eviction by count and by size. The same for
 * what an Instrumentation gives every pod (cache_inst_part): its env
 * entries shared by containers and pods, never edited (JAVA_TOOL_OPTIONS
 * and NODE_OPTIONS from spec.env extended in two containers, Node.js into
 * Java's init container), an Instrumentation changed in spec (its TLS
 * files, addK8sUIDAttributes and resourceAttributes too),
 * resourceVersion, uid or generation never served stale, Python's two
 * init container commands, and eviction. */
#include "base/versions.h"
#include "mutate/record.h"
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const COLLECTOR =
    "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
    "metadata: {name: col, namespace: ns1}\n"
    "spec:\n"
    "  mode: sidecar\n"
    "  command: [/otelcol-contrib]\n"
    "  env: [{name: USER_SET, value: u}]\n"
    "  initContainers: [{name: col-init, image: busybox, command: [sh, -c, 'true'], env: [{name: I, value: i}]}]\n"
    "  config:\n"
    "    receivers: {otlp: {protocols: {grpc: {}}}}\n"
    "    exporters: {debug: {}}\n"
    "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n"
    "  configmaps: [{name: extra, mountpath: /x}]\n";

static const char *const INST = "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                                "metadata: {name: inst, namespace: ns1}\n"
                                "spec:\n  exporter: {endpoint: 'http://otel:4317'}\n";

/* A pod of ReplicaSet <rs> asking for the sidecar, and for more in ann. */
static char *pod(const char *name, const char *rs, const char *ann) {
    char *s = NULL;
    if (asprintf(&s,
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: ns1\n"
                 "  annotations: {sidecar.opentelemetry.io/inject: col%s}\n"
                 "  ownerReferences: [{kind: ReplicaSet, name: %s, uid: %s-uid}]\n"
                 "spec:\n  containers: [{name: app, image: 'app:1', command: [python, app.py]}]\n",
                 name, ann, rs, rs) < 0)
        abort();
    return s;
}

static fx_run *run(const char *label, const char *name, const char *rs, const char *ann) {
    char *p = pod(name, rs, ann);
    fx_run *r = fx_mutate(label, p, "ns1");
    free(p);
    return r;
}

static mutate_cache_stats stats(void) {
    mutate_cache_stats st;
    mutate_cache_get_stats(fx_cache(), &st);
    return st;
}

/* fx_mutate goes through the cache four times (operations and text, twice
 * each). */
#define CACHED_RUNS 4

static void want_stats(size_t entries, unsigned long misses, unsigned long hits, unsigned long evictions) {
    mutate_cache_stats st = stats();
    ck_assert_uint_eq(st.entries, entries);
    ck_assert_uint_eq(st.misses, misses);
    ck_assert_uint_eq(st.hits, hits);
    ck_assert_uint_eq(st.evictions, evictions);
}

static char *env_line(fx_run *r, const char *list, const char *container, const char *name) {
    char *env = fx_env(fx_container(r, list, container)), *line = NULL;
    for (char *p = strtok(env, "\n"); p; p = strtok(NULL, "\n"))
        if (!strncmp(p, name, strlen(name)) && (p[strlen(name)] == '=' || p[strlen(name)] == '<')) line = strdup(p);
    free(env);
    return line ? line : strdup("(none)");
}

/* The record's uses entries, as text. */
static char *uses(fx_run *r) {
    const char *why = NULL;
    json_object *rec = mutate_record_read(r->res.pod, &why);
    ck_assert_msg(rec, "no record: %s", why ? why : "");
    char *t = fx_json(json_object_object_get(rec, "uses"));
    json_object_put(rec);
    return t;
}

static char *image(fx_run *r, const char *list) {
    return fx_json(json_object_object_get(fx_container(r, list, "otc-container"), "image"));
}

/* One entry serves pods of different owners: the resource-attribute env
 * is each pod's own (the fixture compares each with its uncached run). */
START_TEST(pods_share_the_collector_not_their_env) {
    fx_resources(COLLECTOR);
    fx_run *a = run("cache-pod-a", "a", "web-a-5d8f", "");
    want_stats(1, 1, CACHED_RUNS - 1, 0);
    fx_run *b = run("cache-pod-b", "b", "web-b-77aa", "");
    want_stats(1, 1, 2 * CACHED_RUNS - 1, 0);
    EQ(env_line(b, "containers", "otc-container", "OTEL_RESOURCE_ATTRIBUTES"),
       "OTEL_RESOURCE_ATTRIBUTES=k8s.namespace.name=ns1,"
       "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
       "k8s.pod.uid=$(OTEL_RESOURCE_ATTRIBUTES_POD_UID),k8s.replicaset.name=web-b-77aa,k8s.replicaset.uid=web-b-77aa-uid");
    EQ(fx_names(b, "initContainers"), "col-init");
    EQ(fx_names(b, "volumes"), "configmap-extra");
    fx_free(a);
    fx_free(b);
}
END_TEST

/* Languages injected into otc-container and the collector's init
 * container edit their env, mounts and command: copies, not the entry
 * (the second pod would carry the first one's edits). Both sidecar forms. */
START_TEST(languages_into_the_collector_containers) {
    char *buf = NULL;
    if (asprintf(&buf, "%s%s", COLLECTOR, INST) < 0) abort();
    fx_resources(buf);
    free(buf);
    const char *ann = ", instrumentation.opentelemetry.io/inject-python: 'true', "
                      "instrumentation.opentelemetry.io/python-mode: entrypoint, "
                      "instrumentation.opentelemetry.io/python-container-names: 'otc-container,col-init'";
    for (int native = 0; native < 2; native++) {
        fx_options()->native_sidecars = native;
        const char *list = native ? "initContainers" : "containers";
        fx_run *a = run("cache-lang-a", "a", "web-a-5d8f", ann);
        fx_run *b = run("cache-lang-b", "b", "web-b-77aa", ann);
        ck_assert_str_eq(b->warnings, "");
        EQ(fx_json(json_object_object_get(fx_container(b, list, "otc-container"), "command")),
           "[\"/otel-auto-instrumentation-python/bin/opentelemetry-instrument\",\"/otelcol-contrib\"]");
        EQ(fx_json(json_object_object_get(fx_container(b, "initContainers", "col-init"), "command")),
           "[\"/otel-auto-instrumentation-python/bin/opentelemetry-instrument\",\"sh\",\"-c\",\"true\"]");
        EQ(fx_mounts(fx_container(b, list, "otc-container")),
           "configmap-extra:/var/conf/x/configmap-extra\nopentelemetry-auto-instrumentation-python:/otel-auto-instrumentation-python\n");
        EQ(env_line(b, list, "otc-container", "OTEL_SERVICE_NAME"), "OTEL_SERVICE_NAME=otc-container");
        /* A pod asking for the sidecar alone after them: python's edits are
         * idempotent, so only this one shows them kept. */
        fx_run *c = run("cache-lang-c", "c", "web-c-1234", "");
        EQ(fx_json(json_object_object_get(fx_container(c, list, "otc-container"), "command")), "[\"/otelcol-contrib\"]");
        EQ(fx_mounts(fx_container(c, list, "otc-container")), "configmap-extra:/var/conf/x/configmap-extra\n");
        fx_free(a);
        fx_free(b);
        fx_free(c);
    }
    want_stats(2, 2, 6 * CACHED_RUNS - 2, 0);
    fx_options()->native_sidecars = false;
}
END_TEST

/* Never stale: a collector replaced (its spec, its resourceVersion, its
 * uid) is built again, and so is one asked for with other options; the
 * entries of the old versions stay until evicted, never served. */
START_TEST(replaced_collectors_and_options_are_not_served_stale) {
    fx_resources(COLLECTOR);
    fx_run *r = run("cache-v1", "a", "web-a-5d8f", "");
    EQ(image(r, "containers"), "\"" DEFAULT_COLLECTOR_IMAGE "\"");
    char *use1 = uses(r);
    ck_assert_ptr_nonnull(strstr(use1, "{\"kind\":\"OpenTelemetryCollector\",\"namespace\":\"ns1\",\"name\":\"col\",\"hash\":\""));
    fx_free(r);
    want_stats(1, 1, CACHED_RUNS - 1, 0);

    /* The spec changes, no resourceVersion (a file edited). */
    char *v2 = NULL;
    if (asprintf(&v2, "%s  image: 'otelcol:2'\n", COLLECTOR) < 0) abort();
    fx_resources(v2);
    r = run("cache-v2", "a", "web-a-5d8f", "");
    EQ(image(r, "containers"), "\"otelcol:2\"");
    char *use2 = uses(r); /* the record's entry is the new version's: another digest */
    ck_assert_str_ne(use1, use2);
    ck_assert_uint_eq(strlen(use1), strlen(use2));
    free(use1);
    free(use2);
    fx_free(r);
    want_stats(2, 2, 2 * CACHED_RUNS - 2, 0);

    /* The same spec with a resourceVersion, then another one, then another
     * uid: each a version of its own. */
    const char *versions[] = {"{name: col, namespace: ns1, resourceVersion: '7'}",
                              "{name: col, namespace: ns1, resourceVersion: '8'}",
                              "{name: col, namespace: ns1, resourceVersion: '8', uid: u2}",
                              "{name: col, namespace: ns1, resourceVersion: '8', uid: u2, generation: 3}"};
    const char *version_uses[] = {"\"resourceVersion\":\"7\",\"hash\"", "\"resourceVersion\":\"8\",\"hash\"",
                                  "\"resourceVersion\":\"8\",\"hash\"",
                                  "\"resourceVersion\":\"8\",\"generation\":3,\"hash\""};
    for (size_t i = 0; i < 4; i++) {
        char *y = strdup(v2), *at = strstr(y, "{name: col, namespace: ns1}"), *out = NULL;
        *at = 0;
        if (asprintf(&out, "%s%s%s", y, versions[i], at + strlen("{name: col, namespace: ns1}")) < 0) abort();
        fx_resources(out);
        r = run("cache-version", "a", "web-a-5d8f", "");
        EQ(image(r, "containers"), "\"otelcol:2\"");
        char *u = uses(r);
        ck_assert_msg(strstr(u, version_uses[i]), "%s has no %s", u, version_uses[i]);
        free(u);
        fx_free(r);
        free(y);
        free(out);
        want_stats(3 + i, 3 + i, (3 + i) * (CACHED_RUNS - 1), 0);
    }
    free(v2);

    /* Options: the default image (a collector without spec.image), native
     * sidecars, the proxy env. */
    fx_resources(COLLECTOR);
    fx_options()->collector_image = "my/otelcol:9";
    r = run("cache-image", "a", "web-a-5d8f", "");
    EQ(image(r, "containers"), "\"my/otelcol:9\"");
    fx_free(r);
    fx_options()->native_sidecars = true;
    r = run("cache-native", "a", "web-a-5d8f", "");
    EQ(fx_json(json_object_object_get(fx_container(r, "initContainers", "otc-container"), "restartPolicy")),
       "\"Always\"");
    fx_free(r);
    fx_options()->native_sidecars = false;
    const char *proxy1[] = {"HTTP_PROXY=http://p1:3128"}, *proxy2[] = {"HTTP_PROXY=http://p2:3128"};
    fx_options()->proxy_env = proxy1;
    fx_options()->nproxy_env = 1;
    r = run("cache-proxy1", "a", "web-a-5d8f", "");
    EQ(env_line(r, "containers", "otc-container", "HTTP_PROXY"), "HTTP_PROXY=http://p1:3128");
    fx_free(r);
    fx_options()->proxy_env = proxy2;
    r = run("cache-proxy2", "a", "web-a-5d8f", "");
    EQ(env_line(r, "containers", "otc-container", "HTTP_PROXY"), "HTTP_PROXY=http://p2:3128");
    fx_free(r);
    fx_options()->proxy_env = NULL;
    fx_options()->nproxy_env = 0;
    want_stats(10, 10, 10 * (CACHED_RUNS - 1), 0);
}
END_TEST

static const char *const THREE =
    "apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata: {name: c1, namespace: ns1}\n"
    "spec: {mode: sidecar, config: {receivers: {otlp: {protocols: {grpc: {}}}}, exporters: {debug: {}}, "
    "service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}}\n"
    "---\napiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata: {name: c2, namespace: ns1}\n"
    "spec: {mode: sidecar, image: 'two:1', config: {receivers: {otlp: {protocols: {grpc: {}}}}, exporters: {debug: {}}, "
    "service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}}\n"
    "---\napiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\nmetadata: {name: c3, namespace: ns1}\n"
    "spec: {mode: sidecar, image: 'three:1', config: {receivers: {otlp: {protocols: {grpc: {}}}}, exporters: {debug: {}}, "
    "service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}}\n";

static void run_named(const char *col) {
    char *p = NULL;
    if (asprintf(&p,
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {sidecar.opentelemetry.io/inject: %s}\n"
                 "spec:\n  containers: [{name: app, image: 'app:1'}]\n",
                 col) < 0)
        abort();
    fx_free(fx_mutate("cache-evict", p, "ns1"));
    free(p);
}

/* Two entries, three collectors: the least recently used one goes. */
START_TEST(eviction_by_count_is_lru) {
    fx_cache_reset(2, 0);
    fx_resources(THREE);
    run_named("c1");
    run_named("c2");
    run_named("c1"); /* c1 is now the most recent */
    want_stats(2, 2, 3 * CACHED_RUNS - 2, 0);
    run_named("c3"); /* evicts c2 */
    want_stats(2, 3, 4 * CACHED_RUNS - 3, 1);
    run_named("c1"); /* still there */
    want_stats(2, 3, 5 * CACHED_RUNS - 3, 1);
    run_named("c2"); /* built again, evicts c3 */
    want_stats(2, 4, 6 * CACHED_RUNS - 4, 2);
}
END_TEST

/* A byte budget smaller than one entry keeps nothing (every request
 * builds its own, with the same patch); one for about two keeps two. */
START_TEST(eviction_by_size) {
    fx_cache_reset(0, 1000);
    fx_resources(THREE);
    run_named("c1");
    run_named("c1");
    mutate_cache_stats st = stats();
    ck_assert_uint_eq(st.entries, 0);
    ck_assert_uint_eq(st.bytes, 0);
    ck_assert_uint_eq(st.misses, 2 * CACHED_RUNS);

    fx_cache_reset(0, 0);
    run_named("c1");
    size_t one = stats().bytes;
    ck_assert_uint_gt(one, 1000);
    fx_cache_reset(0, 2 * one + one / 2);
    run_named("c1");
    run_named("c2");
    run_named("c3");
    st = stats();
    ck_assert_uint_eq(st.entries, 2);
    ck_assert_uint_eq(st.evictions, 1);
    ck_assert_uint_le(st.bytes, 2 * one + one / 2);
}
END_TEST

/* Instrumentations (cache_inst_part). */
static const char *const JINST =
    "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
    "metadata: {name: inst, namespace: ns1}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://otel:4317'}\n"
    "  propagators: [tracecontext, baggage]\n"
    "  sampler: {type: parentbased_traceidratio, argument: '0.25'}\n"
    "  env: [{name: JAVA_TOOL_OPTIONS, value: '-Xmx1g'}, {name: NODE_OPTIONS, value: '--max-old-space-size=100'},\n"
    "        {name: SHARED, value: s}]\n"
    "  java: {image: 'java:1', env: [{name: OTEL_JAVA_X, value: j}]}\n"
    "  nodejs: {image: 'node:1'}\n"
    "  python: {image: 'py:1'}\n";

/* A pod of two containers asking for the languages in ann. */
static fx_run *run_inst(const char *label, const char *name, const char *ann) {
    char *p = NULL;
    if (asprintf(&p,
                 "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n  namespace: ns1\n  annotations: {%s}\n"
                 "spec:\n  containers: [{name: app1, image: 'app:1', securityContext: {runAsUser: 1000}},"
                 " {name: app2, image: 'app:2'}]\n",
                 name, ann) < 0)
        abort();
    fx_run *r = fx_mutate(label, p, "ns1");
    free(p);
    return r;
}

static void want_inst_stats(size_t entries, unsigned long misses, unsigned long hits, unsigned long evictions) {
    mutate_cache_stats st = stats();
    ck_assert_uint_eq(st.inst_entries, entries);
    ck_assert_uint_eq(st.inst_misses, misses);
    ck_assert_uint_eq(st.inst_hits, hits);
    ck_assert_uint_eq(st.inst_evictions, evictions);
}

static char *member(fx_run *r, const char *list, const char *container, const char *key) {
    return fx_json(json_object_object_get(fx_container(r, list, container), key));
}

#define JAVA_INIT "opentelemetry-auto-instrumentation-java"

/* The Instrumentation's env entries are shared by the containers and pods
 * it serves: the one whose value the engine extends (JAVA_TOOL_OPTIONS,
 * NODE_OPTIONS from spec.env) is copied, never edited (each container and
 * each pod would otherwise carry the agents of those before it). Node.js
 * into Java's init container edits that container: a copy, not the
 * entry's. */
START_TEST(instrumentation_parts_are_shared_not_edited) {
    fx_resources(JINST);
    const char *ann = "instrumentation.opentelemetry.io/inject-java: 'true', "
                      "instrumentation.opentelemetry.io/java-container-names: 'app1,app2', "
                      "instrumentation.opentelemetry.io/inject-nodejs: 'true', "
                      "instrumentation.opentelemetry.io/nodejs-container-names: " JAVA_INIT;
    fx_run *a = run_inst("cache-inst-a", "a", ann);
    want_inst_stats(2, 2, 2 * CACHED_RUNS - 2, 0);
    fx_run *b = run_inst("cache-inst-b", "b", ann);
    want_inst_stats(2, 2, 4 * CACHED_RUNS - 2, 0);
    ck_assert_str_eq(b->warnings, "");
    for (int i = 0; i < 2; i++) {
        fx_run *r = i ? b : a;
        EQ(env_line(r, "containers", "app1", "JAVA_TOOL_OPTIONS"),
           "JAVA_TOOL_OPTIONS=-Xmx1g -javaagent:/otel-auto-instrumentation-java-app1/javaagent.jar");
        EQ(env_line(r, "containers", "app2", "JAVA_TOOL_OPTIONS"),
           "JAVA_TOOL_OPTIONS=-Xmx1g -javaagent:/otel-auto-instrumentation-java-app2/javaagent.jar");
        EQ(env_line(r, "containers", "app2", "OTEL_JAVA_X"), "OTEL_JAVA_X=j");
        EQ(env_line(r, "containers", "app2", "OTEL_PROPAGATORS"), "OTEL_PROPAGATORS=tracecontext,baggage");
        EQ(env_line(r, "containers", "app2", "OTEL_TRACES_SAMPLER_ARG"), "OTEL_TRACES_SAMPLER_ARG=0.25");
        EQ(env_line(r, "initContainers", JAVA_INIT, "NODE_OPTIONS"),
           "NODE_OPTIONS=--max-old-space-size=100 --require /otel-auto-instrumentation-nodejs/autoinstrumentation.js");
        EQ(fx_mounts(fx_container(r, "initContainers", JAVA_INIT)),
           JAVA_INIT ":/otel-auto-instrumentation-java\n"
           "opentelemetry-auto-instrumentation-nodejs:/otel-auto-instrumentation-nodejs\n");
        /* app1's securityContext, the first target's, on both. */
        EQ(member(r, "initContainers", JAVA_INIT, "securityContext"), "{\"runAsUser\":1000}");
        EQ(member(r, "initContainers", "opentelemetry-auto-instrumentation-nodejs", "securityContext"),
           "{\"runAsUser\":1000}");
    }
    /* A pod asking for Java alone after them: no Node.js in its init
     * container, nothing of the others' containers in its env. */
    fx_run *c = run_inst("cache-inst-c", "c", "instrumentation.opentelemetry.io/inject-java: 'true'");
    EQ(fx_env(fx_container(c, "initContainers", JAVA_INIT)), "");
    EQ(fx_mounts(fx_container(c, "initContainers", JAVA_INIT)), JAVA_INIT ":/otel-auto-instrumentation-java\n");
    EQ(member(c, "initContainers", JAVA_INIT, "command"),
       "[\"cp\",\"/javaagent.jar\",\"/otel-auto-instrumentation-java/javaagent.jar\"]");
    EQ(env_line(c, "containers", "app1", "JAVA_TOOL_OPTIONS"),
       "JAVA_TOOL_OPTIONS=-Xmx1g -javaagent:/otel-auto-instrumentation-java-app1/javaagent.jar");
    EQ(env_line(c, "containers", "app2", "JAVA_TOOL_OPTIONS"), "(none)");
    want_inst_stats(2, 2, 5 * CACHED_RUNS - 2, 0);
    fx_free(a);
    fx_free(b);
    fx_free(c);
}
END_TEST

#define ORA_APP1                                                                                                       \
    "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=app1,k8s.namespace.name=ns1,"                                         \
    "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"           \
    "service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app1,service.namespace=ns1,service.version=1,"

/* Never stale: an Instrumentation whose spec (endpoint, env, image),
 * resourceVersion, uid or generation changed is derived again, and each
 * language and init container command (Python's platform) is an entry of
 * its own. */
START_TEST(replaced_instrumentations_are_not_served_stale) {
    const char *ann = "instrumentation.opentelemetry.io/inject-java: 'true'";
    fx_resources(JINST);
    fx_run *r = run_inst("cache-inst-v1", "a", ann);
    EQ(env_line(r, "containers", "app1", "OTEL_EXPORTER_OTLP_ENDPOINT"), "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317");
    fx_free(r);
    want_inst_stats(1, 1, CACHED_RUNS - 1, 0);
    static const struct {
        const char *from, *to, *var, *want;
    } edits[] = {
        {"http://otel:4317", "http://otel-2:4317", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-2:4317"},
        {"value: s}", "value: s2}", "SHARED", "SHARED=s2"},
        {"name: SHARED,", "name: SHARED_2,", "SHARED_2", "SHARED_2=s"}, /* and the names kept with the list */
        {"value: j}", "value: j2}", "OTEL_JAVA_X", "OTEL_JAVA_X=j2"},
        {"argument: '0.25'", "argument: '0.5'", "OTEL_TRACES_SAMPLER_ARG", "OTEL_TRACES_SAMPLER_ARG=0.5"},
        {"{name: inst, namespace: ns1}", "{name: inst, namespace: ns1, resourceVersion: '7'}", "SHARED", "SHARED=s"},
        {"{name: inst, namespace: ns1}", "{name: inst, namespace: ns1, resourceVersion: '8'}", "SHARED", "SHARED=s"},
        {"{name: inst, namespace: ns1}", "{name: inst, namespace: ns1, resourceVersion: '8', uid: u2}", "SHARED", "SHARED=s"},
        {"{name: inst, namespace: ns1}", "{name: inst, namespace: ns1, resourceVersion: '8', uid: u2, generation: 3}",
         "SHARED", "SHARED=s"},
        /* What the part keeps for sdk_configure: the exporter's TLS names,
         * addK8sUIDAttributes and the resource attributes. */
        {"endpoint: 'http://otel:4317'}", "endpoint: 'http://otel:4317', tls: {ca_file: /ca.pem}}",
         "OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE=/ca.pem"},
        {"endpoint: 'http://otel:4317'}", "endpoint: 'http://otel:4317', tls: {ca_file: /ca2.pem, key_file: /k.pem}}",
         "OTEL_EXPORTER_OTLP_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY=/k.pem"},
        {"  nodejs:", "  resource: {addK8sUIDAttributes: true}\n  nodejs:", "OTEL_RESOURCE_ATTRIBUTES_POD_UID",
         "OTEL_RESOURCE_ATTRIBUTES_POD_UID<metadata.uid"},
        {"  nodejs:", "  resource: {addK8sUIDAttributes: false}\n  nodejs:", "OTEL_RESOURCE_ATTRIBUTES_POD_UID", "(none)"},
        {"  nodejs:", "  resource: {resourceAttributes: {team: a, tier: 1}}\n  nodejs:", "OTEL_RESOURCE_ATTRIBUTES",
         ORA_APP1 "team=a,tier=1"},
        {"  nodejs:", "  resource: {resourceAttributes: {team: b, tier: 2.5}}\n  nodejs:", "OTEL_RESOURCE_ATTRIBUTES",
         ORA_APP1 "team=b,tier=2.5"},
        {"{name: inst, namespace: ns1}\nspec:\n", "{name: inst, namespace: ns1, resourceVersion: '9'}\nspec:\n"
         "  resource: {resourceAttributes: {team: c}}\n", "OTEL_RESOURCE_ATTRIBUTES", ORA_APP1 "team=c"},
    };
    const size_t nedits = sizeof edits / sizeof *edits;
    for (size_t i = 0; i < sizeof edits / sizeof *edits; i++) {
        char *y = strdup(JINST), *at = strstr(y, edits[i].from), *out = NULL;
        ck_assert_ptr_nonnull(at);
        *at = 0;
        if (asprintf(&out, "%s%s%s", y, edits[i].to, at + strlen(edits[i].from)) < 0) abort();
        fx_resources(out);
        r = run_inst("cache-inst-version", "a", ann);
        EQ(env_line(r, "containers", "app1", edits[i].var), edits[i].want);
        fx_free(r);
        free(y);
        free(out);
        want_inst_stats(2 + i, 2 + i, (2 + i) * (CACHED_RUNS - 1), 0);
    }
    /* The first version read again (the same key): served; then its image
     * changed, in the init container. */
    fx_resources(JINST);
    r = run_inst("cache-inst-image1", "a", ann);
    EQ(member(r, "initContainers", JAVA_INIT, "image"), "\"java:1\"");
    fx_free(r);
    char *y = strdup(JINST);
    memcpy(strstr(y, "java:1"), "java:2", 6);
    fx_resources(y);
    free(y);
    r = run_inst("cache-inst-image2", "a", ann);
    EQ(member(r, "initContainers", JAVA_INIT, "image"), "\"java:2\"");
    fx_free(r);
    want_inst_stats(nedits + 2, nedits + 2, (nedits + 2) * (CACHED_RUNS - 1) + CACHED_RUNS, 0);

    /* Python for glibc, then musl, then glibc again: two commands, two
     * entries, each served its own. */
    fx_cache_reset(0, 0);
    fx_resources(JINST);
    const char *py = "instrumentation.opentelemetry.io/inject-python: 'true'",
               *musl = "instrumentation.opentelemetry.io/inject-python: 'true', "
                       "instrumentation.opentelemetry.io/otel-python-platform: musl";
    const char *wants[] = {"[\"cp\",\"-r\",\"/autoinstrumentation/.\",\"/otel-auto-instrumentation-python\"]",
                           "[\"cp\",\"-r\",\"/autoinstrumentation-musl/.\",\"/otel-auto-instrumentation-python\"]"};
    for (int i = 0; i < 3; i++) {
        r = run_inst("cache-inst-python", "a", i == 1 ? musl : py);
        EQ(member(r, "initContainers", "opentelemetry-auto-instrumentation-python", "command"), wants[i == 1]);
        fx_free(r);
    }
    want_inst_stats(2, 2, 3 * CACHED_RUNS - 2, 0);
}
END_TEST

static const char *const THREE_INST =
    "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: i1, namespace: ns1}\n"
    "spec: {exporter: {endpoint: 'http://one:4317'}}\n"
    "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: i2, namespace: ns1}\n"
    "spec: {exporter: {endpoint: 'http://two:4317'}}\n"
    "---\napiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: i3, namespace: ns1}\n"
    "spec: {exporter: {endpoint: 'http://three:4317'}}\n";

static void run_inst_named(const char *inst, const char *want_endpoint) {
    char *ann = NULL;
    if (asprintf(&ann, "instrumentation.opentelemetry.io/inject-java: %s", inst) < 0) abort();
    fx_run *r = run_inst("cache-inst-evict", "p", ann);
    EQ(env_line(r, "containers", "app1", "OTEL_EXPORTER_OTLP_ENDPOINT"), want_endpoint);
    fx_free(r);
    free(ann);
}

/* Two entries, three Instrumentations: the least recently used goes; a
 * budget smaller than one part keeps none (each request builds its own). */
START_TEST(instrumentation_eviction) {
    fx_cache_reset(2, 0);
    fx_resources(THREE_INST);
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    run_inst_named("i2", "OTEL_EXPORTER_OTLP_ENDPOINT=http://two:4317");
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    want_inst_stats(2, 2, 3 * CACHED_RUNS - 2, 0);
    run_inst_named("i3", "OTEL_EXPORTER_OTLP_ENDPOINT=http://three:4317"); /* evicts i2 */
    want_inst_stats(2, 3, 4 * CACHED_RUNS - 3, 1);
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    want_inst_stats(2, 3, 5 * CACHED_RUNS - 3, 1);
    run_inst_named("i2", "OTEL_EXPORTER_OTLP_ENDPOINT=http://two:4317"); /* evicts i3 */
    want_inst_stats(2, 4, 6 * CACHED_RUNS - 4, 2);
    /* The collectors' table is another one. */
    ck_assert_uint_eq(stats().entries, 0);

    fx_cache_reset(0, 200);
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    mutate_cache_stats st = stats();
    ck_assert_uint_eq(st.inst_entries, 0);
    ck_assert_uint_eq(st.inst_bytes, 0);
    ck_assert_uint_eq(st.inst_misses, 2 * CACHED_RUNS);

    fx_cache_reset(0, 0);
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    size_t one = stats().inst_bytes;
    ck_assert_uint_gt(one, 200);
    fx_cache_reset(0, 2 * one + one / 2);
    run_inst_named("i1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://one:4317");
    run_inst_named("i2", "OTEL_EXPORTER_OTLP_ENDPOINT=http://two:4317");
    run_inst_named("i3", "OTEL_EXPORTER_OTLP_ENDPOINT=http://three:4317");
    st = stats();
    ck_assert_uint_eq(st.inst_entries, 2);
    ck_assert_uint_eq(st.inst_evictions, 1);
    ck_assert_uint_le(st.inst_bytes, 2 * one + one / 2);
}
END_TEST

int main(void) {
    Suite *s = suite_create("cache");
    TCase *tc = tcase_create("cache");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, pods_share_the_collector_not_their_env);
    tcase_add_test(tc, languages_into_the_collector_containers);
    tcase_add_test(tc, replaced_collectors_and_options_are_not_served_stale);
    tcase_add_test(tc, eviction_by_count_is_lru);
    tcase_add_test(tc, eviction_by_size);
    tcase_add_test(tc, instrumentation_parts_are_shared_not_edited);
    tcase_add_test(tc, replaced_instrumentations_are_not_served_stale);
    tcase_add_test(tc, instrumentation_eviction);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
