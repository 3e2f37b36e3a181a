/* reconcile/hash.h - the config hash (reconcile.md 2.3): sha256 of the Go
 * encoding/json output of the operator's typed Config. It names the
 * ConfigMap (<n>-collector-<hash[:8]>) and is the pod template's
 * opentelemetry-operator-config/sha256, so it must match the reference
 * byte for byte or every collector a reference operator created would be
 * rolled on switch-over. */
#ifndef RECONCILE_HASH_H
#define RECONCILE_HASH_H

#include <json-c/json.h>
#include <stddef.h>

#define RECONCILE_HASH_HEX 65 /* 64 hex digits and the NUL */

/* The JSON text Go would produce for config (malloc'ed), or NULL with a
 * reason in err (a non-finite number; out of memory). */
char *reconcile_config_json(json_object *config, char *err, size_t errlen);
/* Lowercase hex sha256 of reconcile_config_json. 0, or -1 with err. */
int reconcile_config_hash(json_object *config, char out[RECONCILE_HASH_HEX], char *err, size_t errlen);
#endif
