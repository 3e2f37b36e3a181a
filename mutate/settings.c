/* mutate/settings.c - the settings file's keys; see settings.h. The
 * languages' keys and default images are their descriptors' (mutate_lang). */
#include "mutate/settings.h"

#include "base/alloc.h"
#include "base/versions.h"
#include "kube/yaml.h"
#include "mutate/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mutate_settings_init(mutate_settings *c) {
    memset(c, 0, sizeof *c);
    mutate_options_init(&c->opt);
    for (int i = 0; i < MUTATE_NLANGS; i++) {
        const char *img = mutate_lang_get(i)->default_image;
        c->images[i] = img ? xstrdup(img) : NULL;
    }
    c->collector_image = xstrdup(DEFAULT_COLLECTOR_IMAGE);
    c->opt.collector_image = c->collector_image;
    c->native_sidecars = MUTATE_AUTO;
}

void mutate_settings_free(mutate_settings *c) {
    for (int i = 0; i < MUTATE_NLANGS; i++) free(c->images[i]);
    free(c->collector_image);
    free(c->fips_disabled);
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

int mutate_settings_parse(mutate_settings *c, const char *path, const char *text, size_t len, char *err,
                          size_t errlen) {
    json_object *root = NULL;
    int rc = -1;
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
            const char *key = mutate_lang_get(i)->config_key;
            if (!key) continue;
            snprintf(name, sizeof name, "enable-%s-auto-instrumentation", key);
            if (!strcmp(k, name)) lang = i;
            /* The operator spells Apache's switch without "-auto". */
            if (i == MUTATE_APACHE && !strcmp(k, "enable-apache-httpd-instrumentation")) lang = i;
        }
        if (lang >= 0) {
            if (bool_value(v, &b)) { snprintf(err, errlen, "%s:%d: %s: expected true or false", path, line, k); goto out; }
            if (b) c->opt.enabled |= MUTATE_BIT(lang);
            else c->opt.enabled &= ~MUTATE_BIT(lang);
            continue;
        }
        for (int i = 0; i < MUTATE_NLANGS && lang < 0; i++) {
            const char *key = mutate_lang_get(i)->config_key;
            if (!key) continue;
            snprintf(name, sizeof name, "auto-instrumentation-%s-image", key);
            if (!strcmp(k, name)) lang = i;
        }
        if (lang >= 0 || !strcmp(k, "collector-image")) {
            if (!json_object_is_type(v, json_type_string) || !*json_object_get_string(v)) {
                snprintf(err, errlen, "%s:%d: %s: expected an image reference", path, line, k);
                goto out;
            }
            char **slot = lang >= 0 ? &c->images[lang] : &c->collector_image;
            free(*slot);
            *slot = xstrdup(json_object_get_string(v));
            c->opt.collector_image = c->collector_image;
            continue;
        }
        if (!strcmp(k, "enable-multi-instrumentation")) {
            if (bool_value(v, &b)) { snprintf(err, errlen, "%s:%d: %s: expected true or false", path, line, k); goto out; }
            c->opt.multi_instrumentation = b;
            continue;
        }
        if (!strcmp(k, "status-record")) {
            if (bool_value(v, &b)) { snprintf(err, errlen, "%s:%d: %s: expected true or false", path, line, k); goto out; }
            c->opt.record = b;
            continue;
        }
        const char *s = json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
        if (!strcmp(k, "fips-disabled-components")) {
            if (!s && v) { snprintf(err, errlen, "%s:%d: %s: expected a comma-separated list", path, line, k); goto out; }
            free(c->fips_disabled);
            c->fips_disabled = s && *s ? xstrdup(s) : NULL;
            continue;
        }
        if (!strcmp(k, "native-sidecars")) {
            /* YAML reads bare on/off as booleans; accept both spellings. */
            if (json_object_is_type(v, json_type_boolean)) c->native_sidecars = json_object_get_boolean(v) ? MUTATE_ON : MUTATE_OFF;
            else if (s && !strcmp(s, "auto")) c->native_sidecars = MUTATE_AUTO;
            else if (s && !strcmp(s, "on")) c->native_sidecars = MUTATE_ON;
            else if (s && !strcmp(s, "off")) c->native_sidecars = MUTATE_OFF;
            else { snprintf(err, errlen, "%s:%d: native-sidecars: expected auto, on or off", path, line); goto out; }
            continue;
        }
        if (!strcmp(k, "python-mode")) {
            if (s && !strcmp(s, "pythonpath")) c->opt.python_mode = MUTATE_PYTHON_PYTHONPATH;
            else if (s && !strcmp(s, "entrypoint")) c->opt.python_mode = MUTATE_PYTHON_ENTRYPOINT;
            else { snprintf(err, errlen, "%s:%d: python-mode: expected pythonpath or entrypoint", path, line); goto out; }
            continue;
        }
        snprintf(err, errlen, "%s:%d: unknown setting \"%s\"", path, line, k);
        goto out;
    }
    rc = 0;
out:
    json_object_put(root);
    return rc;
}
