/* mutate/webserver_scripts.h - the shell programs the Apache HTTPD and Nginx
 * init containers run (passed to /bin/sh -c, arguments after "--").
 *
 * Our own scripts, doing what the reference's do (spec 2.6, 2.7): stage the
 * server's configuration in a shared volume, copy the agent, render its
 * log4cxx configuration, write the agent configuration with the pod's name
 * as service.instance.id, and hook it into the server's configuration.
 * Arguments arrive positionally so configuration paths are never parsed by
 * the shell; the kubelet has already expanded $(OTEL_NODE_IP)-style
 * references in the agent configuration, because those variables are
 * defined earlier in the same env list. */
#ifndef MUTATE_WEBSERVER_SCRIPTS_H
#define MUTATE_WEBSERVER_SCRIPTS_H

#define WS_AGENT_DIR "/opt/opentelemetry-webserver/agent"
#define WS_STAGED_DIR "/opt/opentelemetry-webserver/source-conf"

/* Common part of both attach scripts: agent files and logging config. */
#define WS_SCRIPT_AGENT                                                                                                \
    "set -eu\n"                                                                                                        \
    "agent=" WS_AGENT_DIR "\n"                                                                                         \
    "staged=" WS_STAGED_DIR "\n"                                                                                       \
    "cp -r /opt/opentelemetry/* \"$agent\"\n"                                                                          \
    "logs=$(printf '%s' \"$agent/logs\" | sed 's,/,\\\\/,g')\n"                                                        \
    "sed \"s/__agent_log_dir__/$logs/g\" \"$agent/conf/opentelemetry_sdk_log4cxx.xml.template\" \\\n"                  \
    "    > \"$agent/conf/opentelemetry_sdk_log4cxx.xml\"\n"

/* $1: the Apache configuration directory. */
#define WS_SCRIPT_APACHE_ATTACH                                                                                        \
    WS_SCRIPT_AGENT                                                                                                    \
    "printf '%s\\n' \"$OTEL_APACHE_AGENT_CONF\" | sed \"s|<<SID-PLACEHOLDER>>|$APACHE_SERVICE_INSTANCE_ID|g\" \\\n"      \
    "    > \"$staged/opentelemetry_agent.conf\"\n"                                                                     \
    "printf '\\nInclude %s/opentelemetry_agent.conf\\n' \"$1\" >> \"$staged/httpd.conf\"\n"

/* $1: the Nginx configuration directory. Runs in a copy of the app
 * container, which has the nginx binary to ask its version. */
#define WS_SCRIPT_NGINX_CLONE                                                                                          \
    "set -eu\n"                                                                                                        \
    "cp -r \"$1\"/. " WS_STAGED_DIR "\n"                                                                               \
    "version=$(nginx -v 2>&1)\n"                                                                                       \
    "printf '%s\\n' \"${version##*/}\" > " WS_STAGED_DIR "/version.txt\n"

/* $1: the file name of the Nginx configuration to instrument. */
#define WS_SCRIPT_NGINX_ATTACH                                                                                         \
    WS_SCRIPT_AGENT                                                                                                    \
    "version=$(cat \"$staged/version.txt\")\n"                                                                         \
    "mkdir -p \"$staged/conf.d\"\n"                                                                                    \
    "printf '%s\\n' \"$OTEL_NGINX_AGENT_CONF\" | sed \"s|<<SID-PLACEHOLDER>>|$OTEL_NGINX_SERVICE_INSTANCE_ID|g\" \\\n"   \
    "    > \"$staged/conf.d/opentelemetry_agent.conf\"\n"                                                              \
    "{ printf 'env OTEL_RESOURCE_ATTRIBUTES;\\nload_module %s/WebServerModule/Nginx/%s/ngx_http_opentelemetry_module.so;\\n' \\\n" \
    "    \"$agent\" \"$version\"; cat \"$staged/$1\"; } > \"$staged/$1.otel\"\n"                                       \
    "mv \"$staged/$1.otel\" \"$staged/$1\"\n"

#endif
