/* tests/unit/test_languages.c - .NET, Go, Apache HTTPD and Nginx (spec 2.4-2.7),
 * and the seven-language pod. Exact, complete, ordered expectations. */
#include "tests/unit/engine_fixture.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_object *get(json_object *o, const char *k) { return json_object_object_get(o, k); }

static const char *const INST =
    "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
    "metadata: {name: inst, namespace: ns1}\n"
    "spec:\n"
    "  exporter: {endpoint: 'http://otel:4317'}\n"
    "  env: [{name: SPEC_X, value: s}]\n"
    "  dotnet: {env: [{name: DOTNET_X, value: '1'}]}\n"
    "  go: {image: 'go-agent:1'}\n"
    "  apacheHttpd: {image: 'apache-agent:1'}\n"
    "  nginx: {image: 'nginx-agent:1', attrs: [{name: NginxModuleOtelMaxQueueSize, value: ' 4096 '}]}\n";

#define POD(ann, containers)                                                                                           \
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: ns1\n  annotations: " ann "\nspec:\n  containers:\n" containers

#define TAIL(c, ver)                                                                                                   \
    "OTEL_SERVICE_NAME=web\n"                                                                                          \
    "OTEL_EXPORTER_OTLP_ENDPOINT=http://otel:4317\n"                                                                   \
    "OTEL_RESOURCE_ATTRIBUTES_POD_NAME<metadata.name\n"                                                                \
    "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME<spec.nodeName\n"                                                               \
    "OTEL_RESOURCE_ATTRIBUTES=k8s.container.name=" c ",k8s.namespace.name=ns1,"                                        \
    "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"           \
    "service.instance.id=ns1.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME)." c ",service.namespace=ns1" ver "\n"

START_TEST(dotnet_env_order) {
    fx_resources(INST);
    fx_run *r = fx_mutate("dotnet",
                          POD("{instrumentation.opentelemetry.io/inject-dotnet: 'true'}",
                              "  - name: app\n    image: 'app:2'\n    env:\n"
                              "    - {name: ASPNETCORE_URLS, value: 'http://+:8080'}\n"
                              "    - {name: DOTNET_STARTUP_HOOKS, value: /app/hook.dll}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_env(fx_container(r, "containers", "app")),
       "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
       "ASPNETCORE_URLS=http://+:8080\n"
       "DOTNET_STARTUP_HOOKS=/app/hook.dll:/otel-auto-instrumentation-dotnet/net/OpenTelemetry.AutoInstrumentation.StartupHook.dll\n"
       "DOTNET_X=1\nSPEC_X=s\n"
       "CORECLR_ENABLE_PROFILING=1\n"
       "CORECLR_PROFILER={918728DD-259F-4A6A-AC2B-B85E1B658318}\n"
       "CORECLR_PROFILER_PATH=/otel-auto-instrumentation-dotnet/linux/OpenTelemetry.AutoInstrumentation.Native.so\n"
       "DOTNET_ADDITIONAL_DEPS=/otel-auto-instrumentation-dotnet/AdditionalDeps\n"
       "OTEL_DOTNET_AUTO_HOME=/otel-auto-instrumentation-dotnet\n"
       "DOTNET_SHARED_STORE=/otel-auto-instrumentation-dotnet/store\n" TAIL("app", ",service.version=2"));
    EQ(fx_mounts(fx_container(r, "containers", "app")),
       "opentelemetry-auto-instrumentation-dotnet:/otel-auto-instrumentation-dotnet\n");
    json_object *init = fx_container(r, "initContainers", "opentelemetry-auto-instrumentation-dotnet");
    EQ(fx_json(get(init, "command")), "[\"cp\",\"-r\",\"/autoinstrumentation/.\",\"/otel-auto-instrumentation-dotnet\"]");
    EQ(fx_json(get(init, "resources")), "{\"limits\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"},\"requests\":{\"cpu\":\"50m\",\"memory\":\"128Mi\"}}");
    fx_free(r);
}
END_TEST

START_TEST(dotnet_musl_and_skips) {
    fx_resources(INST);
    fx_run *r = fx_mutate("dotnet-musl",
                          POD("{instrumentation.opentelemetry.io/inject-dotnet: 'true', "
                              "instrumentation.opentelemetry.io/otel-dotnet-auto-runtime: linux-musl-x64}",
                              "  - {name: app, image: 'app:2'}\n"),
                          "ns1");
    char *env = fx_env(fx_container(r, "containers", "app"));
    ck_assert_ptr_nonnull(strstr(env, "CORECLR_PROFILER_PATH=/otel-auto-instrumentation-dotnet/linux-musl/OpenTelemetry.AutoInstrumentation.Native.so\n"));
    free(env);
    fx_free(r);
    r = fx_mutate("dotnet-bad-runtime",
                  POD("{instrumentation.opentelemetry.io/inject-dotnet: 'true', "
                      "instrumentation.opentelemetry.io/otel-dotnet-auto-runtime: windows}",
                      "  - {name: app, image: 'app:2'}\n"),
                  "ns1");
    ck_assert_str_eq(r->warnings, "otel-dotnet-auto-runtime: unsupported value \"windows\" (expected linux-x64 or "
                                  "linux-musl-x64); .NET not injected");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_free(r);
    r = fx_mutate("dotnet-own-agent",
                  POD("{instrumentation.opentelemetry.io/inject-dotnet: 'true'}",
                      "  - {name: app, image: 'app:2', env: [{name: OTEL_DOTNET_AUTO_HOME, value: /agent}]}\n"),
                  "ns1");
    ck_assert_str_eq(r->warnings, "inject-dotnet: container app skipped: OTEL_DOTNET_AUTO_HOME is already set (the "
                                  "container ships its own agent)\n"
                                  "inject-dotnet: every target container was skipped; no init container added");
    fx_free(r);
}
END_TEST

START_TEST(go_sidecar) {
    fx_resources(INST);
    fx_options()->enabled |= MUTATE_BIT(MUTATE_GO);
    fx_run *r = fx_mutate("go",
                          POD("{instrumentation.opentelemetry.io/inject-go: 'true', "
                              "instrumentation.opentelemetry.io/otel-go-auto-target-exe: /app/server}",
                              "  - {name: app, image: 'app:3'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "containers"), "app,opentelemetry-auto-instrumentation");
    json_object *sc = fx_container(r, "containers", "opentelemetry-auto-instrumentation");
    EQ(fx_env(sc), "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
                   "OTEL_GO_AUTO_TARGET_EXE=/app/server\nSPEC_X=s\n" TAIL("app", ",service.version=3"));
    EQ(fx_json(get(sc, "securityContext")), "{\"privileged\":true,\"runAsUser\":0}");
    EQ(fx_json(get(sc, "image")), "\"go-agent:1\"");
    EQ(fx_mounts(sc), "kernel-debug:/sys/kernel/debug\n");
    ck_assert_ptr_null(get(fx_container(r, "containers", "app"), "env"));
    EQ(fx_json(get(get(r->res.pod, "spec"), "shareProcessNamespace")), "true");
    EQ(fx_json(get(get(r->res.pod, "spec"), "volumes")), "[{\"name\":\"kernel-debug\",\"hostPath\":{\"path\":\"/sys/kernel/debug\"}}]");
    EQ(fx_into(r), "go:app"); /* the container the Go sidecar instruments */
    fx_free(r);

    /* Spec 7.8: a target that does not exist is not replaced by another. */
    r = fx_mutate("go-missing",
                  POD("{instrumentation.opentelemetry.io/inject-go: 'true', instrumentation.opentelemetry.io/container-names: "
                      "nope, instrumentation.opentelemetry.io/otel-go-auto-target-exe: /app/server}",
                      "  - {name: app, image: 'app:3'}\n"),
                  "ns1");
    ck_assert_str_eq(r->warnings, "inject-go: no container named nope in the pod; Go not injected");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    EQ(fx_into(r), "");
    fx_free(r);
    r = fx_mutate("go-no-exe", POD("{instrumentation.opentelemetry.io/inject-go: 'true'}", "  - {name: app, image: 'app:3'}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "inject-go: no OTEL_GO_AUTO_TARGET_EXE (annotation instrumentation.opentelemetry.io/"
                                  "otel-go-auto-target-exe or the Instrumentation's go.env); Go not injected");
    ck_assert_uint_eq(json_object_array_length(r->res.patch), 0);
    fx_free(r);
    r = fx_mutate("go-no-share",
                  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  annotations: {instrumentation.opentelemetry.io/inject-go: "
                  "'true', instrumentation.opentelemetry.io/otel-go-auto-target-exe: /x}\n"
                  "spec:\n  shareProcessNamespace: false\n  containers: [{name: app, image: a}]\n",
                  "ns1");
    ck_assert_str_eq(r->warnings, "inject-go: shareProcessNamespace is false and the Go sidecar needs it; Go not injected");
    fx_free(r);
    fx_options()->enabled &= ~MUTATE_BIT(MUTATE_GO);
    r = fx_mutate("go-disabled", POD("{instrumentation.opentelemetry.io/inject-go: 'true'}", "  - {name: app, image: 'app:3'}\n"), "ns1");
    ck_assert_str_eq(r->warnings, "support for Go auto instrumentation is not enabled");
    fx_free(r);
}
END_TEST

#define APACHE_CONF_HEAD                                                                                               \
    "\n#Load the Otel Webserver SDK\n"                                                                                 \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_common.so\n"                             \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_resources.so\n"                          \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_trace.so\n"                              \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_otlp_recordable.so\n"                    \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_exporter_ostream_span.so\n"              \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_exporter_otlp_grpc.so\n"                 \
    "#Load the Otel ApacheModule SDK\n"                                                                                \
    "LoadFile /opt/opentelemetry-webserver/agent/sdk_lib/lib/libopentelemetry_webserver_sdk.so\n"                      \
    "#Load the Apache Module. In this example for Apache 2.4\n"                                                        \
    "#LoadModule otel_apache_module /opt/opentelemetry-webserver/agent/WebServerModule/Apache/libmod_apache_otel.so\n" \
    "#Load the Apache Module. In this example for Apache 2.2\n"                                                        \
    "#LoadModule otel_apache_module /opt/opentelemetry-webserver/agent/WebServerModule/Apache/libmod_apache_otel22.so\n"

START_TEST(apache_chain) {
    fx_resources(INST);
    fx_run *r = fx_mutate("apache",
                          POD("{instrumentation.opentelemetry.io/inject-apache-httpd: 'true'}",
                              "  - name: app\n    image: 'httpd:2.4'\n    imagePullPolicy: Always\n"
                              "    env: [{name: APP_ENV, value: prod}]\n"
                              "    volumeMounts: [{name: extra, mountPath: /usr/local/apache2/conf/extra}, {name: data, mountPath: /data}]\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "initContainers"), "otel-agent-source-container-clone,otel-agent-attach-apache");
    EQ(fx_names(r, "volumes"), "otel-apache-conf-dir,otel-apache-agent");
    json_object *clone = fx_container(r, "initContainers", "otel-agent-source-container-clone");
    EQ(fx_json(get(clone, "command")), "[\"cp\",\"-r\",\"/usr/local/apache2/conf/.\",\"/opt/opentelemetry-webserver/source-conf\"]");
    EQ(fx_json(get(clone, "image")), "\"httpd:2.4\"");
    EQ(fx_json(get(clone, "imagePullPolicy")), "\"Always\"");
    EQ(fx_env(clone), "APP_ENV=prod\n"); /* a snapshot taken before the OTEL_* env */
    EQ(fx_mounts(clone), "extra:/usr/local/apache2/conf/extra\ndata:/data\notel-apache-conf-dir:/opt/opentelemetry-webserver/source-conf\n");
    json_object *attach = fx_container(r, "initContainers", "otel-agent-attach-apache");
    EQ(fx_json(get(attach, "command")), "[\"/bin/sh\",\"-c\"]");
    EQ(fx_json(get(attach, "image")), "\"apache-agent:1\"");
    json_object *args = get(attach, "args");
    ck_assert_uint_eq(json_object_array_length(args), 3);
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(args, 1)), "--");
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(args, 2)), "/usr/local/apache2/conf");
    EQ(fx_env(attach), "SPEC_X=s\nOTEL_POD_IP<status.podIP\nOTEL_NODE_IP<status.hostIP\n"
                       "OTEL_APACHE_AGENT_CONF=" APACHE_CONF_HEAD
                       "LoadModule otel_apache_module /opt/opentelemetry-webserver/agent/WebServerModule/Apache/libmod_apache_otel.so\n"
                       "#Attributes\n"
                       "ApacheModuleEnabled ON\n"
                       "ApacheModuleOtelExporterEndpoint http://otel:4317\n"
                       "ApacheModuleOtelSpanExporter otlp\n"
                       "ApacheModuleResolveBackends ON\n"
                       "ApacheModuleServiceInstanceId <<SID-PLACEHOLDER>>\n"
                       "ApacheModuleServiceName web\n"
                       "ApacheModuleServiceNamespace ns1\n"
                       "ApacheModuleTraceAsError ON\n\n"
                       "APACHE_SERVICE_INSTANCE_ID<metadata.name\n");
    EQ(fx_mounts(attach), "otel-apache-agent:/opt/opentelemetry-webserver/agent\n"
                          "otel-apache-conf-dir:/opt/opentelemetry-webserver/source-conf\n");
    json_object *app = fx_container(r, "containers", "app");
    EQ(fx_mounts(app), "data:/data\notel-apache-agent:/opt/opentelemetry-webserver/agent\n"
                       "otel-apache-conf-dir:/usr/local/apache2/conf\n");
    EQ(fx_env(app), "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\nAPP_ENV=prod\nSPEC_X=s\n" TAIL("app", ",service.version=2.4"));
    EQ(fx_json(get(get(r->res.pod, "spec"), "volumes")),
       "[{\"name\":\"otel-apache-conf-dir\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}},"
       "{\"name\":\"otel-apache-agent\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}}]");
    fx_free(r);
}
END_TEST

/* Spec 7.21 and the node-IP endpoint: the env's service name reaches the
 * module, $(OTEL_NODE_IP) stays literal and is defined before it. */
START_TEST(apache_service_name_and_node_ip) {
    fx_resources("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: inst, namespace: ns1}\n"
                 "spec:\n  exporter: {endpoint: 'http://$(OTEL_NODE_IP):4317'}\n"
                 "  apacheHttpd: {version: '2.2', env: [{name: OTEL_SERVICE_NAME, value: apache-httpd-app}]}\n");
    fx_run *r = fx_mutate("apache-env-name",
                          POD("{instrumentation.opentelemetry.io/inject-apache-httpd: 'true'}", "  - {name: app, image: 'httpd:2.2'}\n"),
                          "ns1");
    char *env = fx_env(fx_container(r, "initContainers", "otel-agent-attach-apache"));
    ck_assert_ptr_nonnull(strstr(env, "ApacheModuleServiceName apache-httpd-app\n"));
    ck_assert_ptr_nonnull(strstr(env, "ApacheModuleOtelExporterEndpoint http://$(OTEL_NODE_IP):4317\n"));
    ck_assert_ptr_nonnull(strstr(env, "/WebServerModule/Apache/libmod_apache_otel22.so\n#Attributes"));
    ck_assert_ptr_nonnull(strstr(env, "OTEL_NODE_IP<status.hostIP\nOTEL_APACHE_AGENT_CONF="));
    free(env);
    fx_free(r);
}
END_TEST

START_TEST(nginx_chain) {
    fx_resources(INST);
    fx_run *r = fx_mutate("nginx",
                          POD("{instrumentation.opentelemetry.io/inject-nginx: 'true'}",
                              "  - {name: app, image: 'nginx:1.25', env: [{name: LD_LIBRARY_PATH, value: /usr/lib}]}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "initContainers"), "otel-agent-source-container-clone,otel-agent-attach-nginx");
    EQ(fx_json(get(get(r->res.pod, "spec"), "volumes")),
       "[{\"name\":\"otel-nginx-conf-dir\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}},"
       "{\"name\":\"otel-nginx-agent\",\"emptyDir\":{\"sizeLimit\":\"200Mi\"}}]");
    json_object *clone = fx_container(r, "initContainers", "otel-agent-source-container-clone");
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(get(clone, "args"), 2)), "/etc/nginx");
    json_object *attach = fx_container(r, "initContainers", "otel-agent-attach-nginx");
    ck_assert_str_eq(json_object_get_string(json_object_array_get_idx(get(attach, "args"), 2)), "nginx.conf");
    EQ(fx_env(attach), "SPEC_X=s\nOTEL_POD_IP<status.podIP\nOTEL_NODE_IP<status.hostIP\n"
                       "OTEL_NGINX_AGENT_CONF=NginxModuleEnabled ON;\n"
                       "NginxModuleOtelExporterEndpoint http://otel:4317;\n"
                       "NginxModuleOtelMaxQueueSize 4096;\n"
                       "NginxModuleOtelSpanExporter otlp;\n"
                       "NginxModuleResolveBackends ON;\n"
                       "NginxModuleServiceInstanceId <<SID-PLACEHOLDER>>;\n"
                       "NginxModuleServiceName web;\n"
                       "NginxModuleServiceNamespace ns1;\n"
                       "NginxModuleTraceAsError ON;\n\n"
                       "OTEL_NGINX_SERVICE_INSTANCE_ID<metadata.name\n");
    json_object *app = fx_container(r, "containers", "app");
    EQ(fx_env(app), "OTEL_NODE_IP<status.hostIP\nOTEL_POD_IP<status.podIP\n"
                    "LD_LIBRARY_PATH=/usr/lib:/opt/opentelemetry-webserver/agent/sdk_lib/lib\nSPEC_X=s\n"
                    TAIL("app", ",service.version=1.25"));
    EQ(fx_mounts(app), "otel-nginx-agent:/opt/opentelemetry-webserver/agent\notel-nginx-conf-dir:/etc/nginx\n");
    /* The clone's env is a copy taken before LD_LIBRARY_PATH changed (spec 7.7). */
    EQ(fx_env(clone), "LD_LIBRARY_PATH=/usr/lib\n");
    fx_free(r);
}
END_TEST

/* Spec 7.3 and 7.4: Apache and Nginx together; several targets each. */
START_TEST(webservers_together_and_several_targets) {
    fx_resources(INST);
    fx_run *r = fx_mutate("apache-nginx",
                          POD("{instrumentation.opentelemetry.io/inject-apache-httpd: 'true', instrumentation.opentelemetry.io/inject-nginx: 'true', "
                              "instrumentation.opentelemetry.io/apache-httpd-container-names: 'a,b', "
                              "instrumentation.opentelemetry.io/inject-nginx-container-names: 'n'}",
                              "  - {name: a, image: 'httpd:2.4'}\n  - {name: b, image: 'httpd:2.4'}\n  - {name: 'n', image: 'nginx:1'}\n"),
                          "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "initContainers"),
       "otel-agent-source-container-clone,otel-agent-attach-apache,otel-agent-source-container-clone-b,"
       "otel-agent-attach-apache-b,otel-agent-source-container-clone-nginx,otel-agent-attach-nginx");
    EQ(fx_names(r, "volumes"), "otel-apache-conf-dir,otel-apache-agent,otel-apache-conf-dir-b,otel-nginx-conf-dir,otel-nginx-agent");
    EQ(fx_mounts(fx_container(r, "containers", "b")),
       "otel-apache-agent:/opt/opentelemetry-webserver/agent\notel-apache-conf-dir-b:/usr/local/apache2/conf\n");
    EQ(fx_mounts(fx_container(r, "initContainers", "otel-agent-attach-apache-b")),
       "otel-apache-agent:/opt/opentelemetry-webserver/agent\notel-apache-conf-dir-b:/opt/opentelemetry-webserver/source-conf\n");
    EQ(fx_into(r), "apache-httpd:a,b nginx:n");
    fx_free(r);
}
END_TEST

/* Seven containers, one language each, plus the sidecar: the order of init
 * containers, containers and volumes follows the language order. */
START_TEST(seven_languages_one_pod) {
    char res[4096];
    snprintf(res, sizeof res, "%s---\napiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
                              "metadata: {name: sc, namespace: ns1}\nspec:\n  mode: sidecar\n"
                              "  config: {receivers: {otlp: {protocols: {grpc: {}}}}, exporters: {debug: {}}, "
                              "service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}}\n",
             INST);
    fx_resources(res);
    fx_options()->enabled |= MUTATE_BIT(MUTATE_GO);
    fx_run *r = fx_mutate(
        "seven",
        POD("{sidecar.opentelemetry.io/inject: 'true', "
            "instrumentation.opentelemetry.io/inject-java: 'true', instrumentation.opentelemetry.io/java-container-names: j, "
            "instrumentation.opentelemetry.io/inject-nodejs: 'true', instrumentation.opentelemetry.io/nodejs-container-names: 'n', "
            "instrumentation.opentelemetry.io/inject-python: 'true', instrumentation.opentelemetry.io/python-container-names: p, "
            "instrumentation.opentelemetry.io/inject-dotnet: 'true', instrumentation.opentelemetry.io/dotnet-container-names: d, "
            "instrumentation.opentelemetry.io/inject-go: 'true', instrumentation.opentelemetry.io/go-container-names: g, "
            "instrumentation.opentelemetry.io/otel-go-auto-target-exe: /app/g, "
            "instrumentation.opentelemetry.io/inject-apache-httpd: 'true', instrumentation.opentelemetry.io/apache-httpd-container-names: a, "
            "instrumentation.opentelemetry.io/inject-nginx: 'true', instrumentation.opentelemetry.io/inject-nginx-container-names: x}",
            "  - {name: j, image: 'j:1'}\n  - {name: 'n', image: 'n:1'}\n  - {name: p, image: 'p:1'}\n  - {name: d, image: 'd:1'}\n"
            "  - {name: g, image: 'g:1'}\n  - {name: a, image: 'a:1'}\n  - {name: x, image: 'x:1'}\n"),
        "ns1");
    ck_assert_str_eq(r->warnings, "");
    EQ(fx_names(r, "containers"), "j,n,p,d,g,a,x,otc-container,opentelemetry-auto-instrumentation");
    EQ(fx_names(r, "initContainers"),
       "opentelemetry-auto-instrumentation-java,opentelemetry-auto-instrumentation-nodejs,"
       "opentelemetry-auto-instrumentation-python,opentelemetry-auto-instrumentation-dotnet,"
       "otel-agent-source-container-clone,otel-agent-attach-apache,otel-agent-source-container-clone-nginx,otel-agent-attach-nginx");
    EQ(fx_names(r, "volumes"),
       "opentelemetry-auto-instrumentation-java,opentelemetry-auto-instrumentation-nodejs,"
       "opentelemetry-auto-instrumentation-python,opentelemetry-auto-instrumentation-dotnet,kernel-debug,"
       "otel-apache-conf-dir,otel-apache-agent,otel-nginx-conf-dir,otel-nginx-agent");
    ck_assert_uint_eq(r->res.injected, MUTATE_BIT(MUTATE_JAVA) | MUTATE_BIT(MUTATE_NODEJS) | MUTATE_BIT(MUTATE_PYTHON) |
                                           MUTATE_BIT(MUTATE_DOTNET) | MUTATE_BIT(MUTATE_GO) | MUTATE_BIT(MUTATE_APACHE) |
                                           MUTATE_BIT(MUTATE_NGINX));
    ck_assert(r->res.sidecar);
    EQ(fx_into(r), "java:j nodejs:n python:p dotnet:d go:g apache-httpd:a nginx:x");
    /* Each app container carries only its own language's hook. */
    char *env = fx_env(fx_container(r, "containers", "j"));
    ck_assert_ptr_nonnull(strstr(env, "JAVA_TOOL_OPTIONS= -javaagent:/otel-auto-instrumentation-java-j/javaagent.jar\n"));
    ck_assert_ptr_null(strstr(env, "NODE_OPTIONS"));
    free(env);
    env = fx_env(fx_container(r, "containers", "d"));
    ck_assert_ptr_nonnull(strstr(env, "CORECLR_ENABLE_PROFILING=1\n"));
    ck_assert_ptr_null(strstr(env, "JAVA_TOOL_OPTIONS"));
    free(env);
    fx_options()->enabled &= ~MUTATE_BIT(MUTATE_GO);
    fx_free(r);
}
END_TEST

int main(void) {
    Suite *s = suite_create("languages");
    TCase *tc = tcase_create("languages");
    tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
    tcase_add_test(tc, dotnet_env_order);
    tcase_add_test(tc, dotnet_musl_and_skips);
    tcase_add_test(tc, go_sidecar);
    tcase_add_test(tc, apache_chain);
    tcase_add_test(tc, apache_service_name_and_node_ip);
    tcase_add_test(tc, nginx_chain);
    tcase_add_test(tc, webservers_together_and_several_targets);
    tcase_add_test(tc, seven_languages_one_pod);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
