/* mutate/lang_apache.c - Apache HTTPD: the OpenTelemetry web server module (spec 2.6). */
#include "mutate/webserver.h"

#include "base/versions.h"

static const ws_kind apache = {
    .conf_volume = "otel-apache-conf-dir",
    .agent_volume = "otel-apache-agent",
    .attach_name = "otel-agent-attach-apache",
    .conf_env = "OTEL_APACHE_AGENT_CONF",
    .sid_env = "APACHE_SERVICE_INSTANCE_ID",
    .attr_prefix = "ApacheModule",
    .nginx = false,
};

static void apache_inject(lctx *l) { ws_inject(l, &apache); }

const mutate_lang mutate_lang_apache = {
    .id = MUTATE_APACHE,
    .name = "apache-httpd",
    .display = "Apache HTTPD",
    .config_key = "apache-httpd",
    .spec_key = "apacheHttpd",
    .res_key = "resourceRequirements",
    .default_image = DEFAULT_APACHE_HTTPD_IMAGE,
    .request_cpu = "1m",
    .request_memory = "128Mi",
    .inject = apache_inject,
};
