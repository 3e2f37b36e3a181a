/* mutate/lang_nginx.c - Nginx: the OpenTelemetry web server module (spec 2.7). */
#include "mutate/webserver.h"

#include "base/versions.h"

static const ws_kind nginx = {
    .conf_volume = "otel-nginx-conf-dir",
    .agent_volume = "otel-nginx-agent",
    .attach_name = "otel-agent-attach-nginx",
    .conf_env = "OTEL_NGINX_AGENT_CONF",
    .sid_env = "OTEL_NGINX_SERVICE_INSTANCE_ID",
    .attr_prefix = "NginxModule",
    .nginx = true,
};

static void nginx_inject(lctx *l) { ws_inject(l, &nginx); }

const mutate_lang mutate_lang_nginx = {
    .id = MUTATE_NGINX,
    .name = "nginx",
    .display = "Nginx",
    .config_key = "nginx",
    .spec_key = "nginx",
    .res_key = "resourceRequirements",
    .default_image = DEFAULT_NGINX_IMAGE,
    .request_cpu = "1m",
    .request_memory = "128Mi",
    .inject = nginx_inject,
};
