/* mutate/webserver.h - the shared Apache HTTPD / Nginx flow (webserver.c). */
#ifndef MUTATE_WEBSERVER_H
#define MUTATE_WEBSERVER_H

#include "mutate/internal.h"

typedef struct ws_kind {
    const char *conf_volume;  /* staged configuration volume */
    const char *agent_volume; /* agent files volume */
    const char *attach_name;  /* the agent's init container */
    const char *conf_env;     /* env carrying the agent configuration */
    const char *sid_env;      /* env carrying the pod name */
    const char *attr_prefix;  /* ApacheModule / NginxModule */
    bool nginx;
} ws_kind;

void ws_inject(lctx *l, const ws_kind *k);
#endif
