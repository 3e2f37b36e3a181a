/* kube/config.c - loading the settings file; see config.h for the keys. */
#include "kube/config.h"

#include "kube/file.h"
#include "kube/yaml.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Versions follow the reference snapshot (spec 2.9). */
static const char *const default_images[MUTATE_NLANGS] = {
    [MUTATE_JAVA] = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0",
    [MUTATE_NODEJS] = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-nodejs:0.78.0",
    [MUTATE_PYTHON] = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-python:0.64b0",
    [MUTATE_DOTNET] = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-dotnet:1.16.0",
    [MUTATE_GO] = "ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go:v0.24.0",
    [MUTATE_APACHE] = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-apache-httpd:1.0.4",
    [MUTATE_NGINX] = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-apache-httpd:1.0.4",
};
#define DEFAULT_COLLECTOR "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.158.0"

/* Config-file spelling of each language (the operator's, e.g. node-js). */
static const char *const keys[MUTATE_NLANGS] = {
    "java", "node-js", "python", "dot-net", "go", "apache-httpd", "nginx", NULL,
};

void kube_config_init(kube_config *c) {
    memset(c, 0, sizeof *c);
    mutate_options_init(&c->mopt);
    for (int i = 0; i < MUTATE_NLANGS; i++) c->images[i] = default_images[i] ? strdup(default_images[i]) : NULL;
    c->collector_image = strdup(DEFAULT_COLLECTOR);
    c->mopt.collector_image = c->collector_image;
    c->native_sidecars = KUBE_AUTO;
}

void kube_config_free(kube_config *c) {
    for (int i = 0; i < MUTATE_NLANGS; i++) free(c->images[i]);
    free(c->collector_image);
    memset(c, 0, sizeof *c);
}

/* Line of "key:" in text, for messages; 0 when not found. */
static int key_line(const char *text, const char *key) {
    size_t kl = strlen(key);
    int line = 1;
    for (const char *p = text; *p; p++) {
        if ((p == text || p[-1] == '\n') && strncmp(p, key, kl) == 0 && p[kl] == ':') return line;
        if (*p == '\n') line++;
    }
    return 0;
}

static int bool_value(json_object *v, bool *out) {
    if (json_object_is_type(v, json_type_boolean)) { *out = json_object_get_boolean(v); return 0; }
    if (json_object_is_type(v, json_type_string)) {
        const char *s = json_object_get_string(v);
        if (!strcmp(s, "true")) { *out = true; return 0; }
        if (!strcmp(s, "false")) { *out = false; return 0; }
    }
    return -1;
}

int kube_config_load(kube_config *c, const char *path, char *err, size_t errlen) {
    size_t len = 0;
    json_object *root = NULL;
    int rc = -1;
    char *text = kube_read_file(path, &len);
    if (!text) { snprintf(err, errlen, "%s: cannot read: %m", path); return -1; }
    kube_yaml_error ye;
    root = kube_yaml_parse_one(text, len, &ye);
    if (!root && ye.line) { snprintf(err, errlen, "%s:%d: %s", path, ye.line, ye.msg); goto out; }
    if (!root) { rc = 0; goto out; } /* an empty file is all defaults */
    if (!json_object_is_type(root, json_type_object)) { snprintf(err, errlen, "%s:1: expected a map of settings", path); goto out; }
    json_object_object_foreach(root, k, v) {
        int line = key_line(text, k);
        bool b;
        int lang = -1;
        char name[96];
        for (int i = 0; i < MUTATE_NLANGS && lang < 0; i++) {
            if (!keys[i]) continue;
            snprintf(name, sizeof name, "enable-%s-auto-instrumentation", keys[i]);
            if (!strcmp(k, name)) lang = i;
            /* The operator spells Apache's switch without "-auto". */
            if (i == MUTATE_APACHE && !strcmp(k, "enable-apache-httpd-instrumentation")) lang = i;
        }
        if (lang >= 0) {
            if (bool_value(v, &b)) { snprintf(err, errlen, "%s:%d: %s: expected true or false", path, line, k); goto out; }
            if (b) c->mopt.enabled |= MUTATE_BIT(lang);
            else c->mopt.enabled &= ~MUTATE_BIT(lang);
            continue;
        }
        for (int i = 0; i < MUTATE_NLANGS && lang < 0; i++) {
            if (!keys[i]) continue;
            snprintf(name, sizeof name, "auto-instrumentation-%s-image", keys[i]);
            if (!strcmp(k, name)) lang = i;
        }
        if (lang >= 0 || !strcmp(k, "collector-image")) {
            if (!json_object_is_type(v, json_type_string) || !*json_object_get_string(v)) {
                snprintf(err, errlen, "%s:%d: %s: expected an image reference", path, line, k);
                goto out;
            }
            char **slot = lang >= 0 ? &c->images[lang] : &c->collector_image;
            free(*slot);
            *slot = strdup(json_object_get_string(v));
            c->mopt.collector_image = c->collector_image;
            continue;
        }
        if (!strcmp(k, "enable-multi-instrumentation")) {
            if (bool_value(v, &b)) { snprintf(err, errlen, "%s:%d: %s: expected true or false", path, line, k); goto out; }
            c->mopt.multi_instrumentation = b;
            continue;
        }
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        if (!strcmp(k, "native-sidecars")) {
            /* YAML reads bare on/off as booleans; accept both spellings. */
            if (json_object_is_type(v, json_type_boolean)) c->native_sidecars = json_object_get_boolean(v) ? KUBE_ON : KUBE_OFF;
            else if (s && !strcmp(s, "auto")) c->native_sidecars = KUBE_AUTO;
            else if (s && !strcmp(s, "on")) c->native_sidecars = KUBE_ON;
            else if (s && !strcmp(s, "off")) c->native_sidecars = KUBE_OFF;
            else { snprintf(err, errlen, "%s:%d: native-sidecars: expected auto, on or off", path, line); goto out; }
            continue;
        }
        if (!strcmp(k, "python-mode")) {
            if (s && !strcmp(s, "pythonpath")) c->mopt.python_mode = MUTATE_PYTHON_PYTHONPATH;
            else if (s && !strcmp(s, "entrypoint")) c->mopt.python_mode = MUTATE_PYTHON_ENTRYPOINT;
            else { snprintf(err, errlen, "%s:%d: python-mode: expected pythonpath or entrypoint", path, line); goto out; }
            continue;
        }
        snprintf(err, errlen, "%s:%d: unknown setting \"%s\"", path, line, k);
        goto out;
    }
    rc = 0;
out:
    json_object_put(root);
    free(text);
    return rc;
}
