/* collector/config.h - a collector config as YAML text, the way the
 * reference serialises it into OTEL_CONFIG and the collector ConfigMap. */
#ifndef COLLECTOR_CONFIG_H
#define COLLECTOR_CONFIG_H

#include <json-c/json.h>

/* Top-level keys in struct order (receivers, exporters, processors,
 * connectors, extensions, service; in service: extensions, telemetry,
 * pipelines; in a pipeline: exporters, processors, receivers), every other
 * map sorted by key. config NULL is {}. Returns malloc'ed text, or NULL
 * when the config nests deeper than the writer goes (COLLECTOR_YAML_MAX_DEPTH). */
char *collector_config_yaml(json_object *config);

/* The same, quoted as goccy/go-yaml quotes (kube/yaml.h): the text of the
 * collector ConfigMap, which must be the reference's byte for byte
 * ("endpoint: 0.0.0.0:4317", managed-reconcile/02-assert.yaml). The
 * sidecar's OTEL_CONFIG and the conversion keep collector_config_yaml
 * (docs/compat.md). */
char *collector_configmap_yaml(json_object *config);

#define COLLECTOR_YAML_MAX_DEPTH 1000 /* beyond this we refuse rather than risk the stack */

#endif
