/* collector/config.h - a collector config as YAML text, the way the
 * reference serialises it into OTEL_CONFIG and the collector ConfigMap. */
#ifndef COLLECTOR_CONFIG_H
#define COLLECTOR_CONFIG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Quoted as goccy/go-yaml quotes (kube/yaml.h), the reference's writer:
 * the text of the collector ConfigMap, the sidecar's OTEL_CONFIG and the
 * v1alpha1 config string must be its byte for byte ("endpoint:
 * 0.0.0.0:4317", managed-reconcile/02-assert.yaml). Top-level keys in struct order (receivers, exporters, processors,
 * connectors, extensions, service; in service: extensions, telemetry,
 * pipelines; in a pipeline: exporters, processors, receivers), every other
 * map sorted by key. config NULL is {}. Returns malloc'ed text, or NULL
 * when the config nests deeper than the writer goes (COLLECTOR_YAML_MAX_DEPTH). */
char *collector_config_yaml(json_object *config);
/* The same, NULL with *too_big set when the text would pass max_bytes
 * (0: no limit; too_big may be NULL). */
char *collector_config_yaml_capped(json_object *config, size_t max_bytes, bool *too_big);

#define COLLECTOR_YAML_MAX_DEPTH 1000 /* beyond this we refuse rather than risk the stack */

#endif
