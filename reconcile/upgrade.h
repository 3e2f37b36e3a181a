/* reconcile/upgrade.h - the reference's collector upgrade routines, in
 * memory (reconcile.md 5.6; see upgrade.c for why in memory). */
#ifndef RECONCILE_UPGRADE_H
#define RECONCILE_UPGRADE_H

#include <json-c/json.h>
#include <stdbool.h>

/* Moves service.telemetry.metrics.address of a defaulted config map into
 * a prometheus pull reader (unless an equal reader is there). 1 when the
 * config changed, 0 when not. */
int reconcile_upgrade_config(json_object *config);

/* <0, 0, >0 like strcmp, for "1.2.3" versions. */
int reconcile_version_cmp(const char *a, const char *b);

/* The status.version to write given the live one and ours. */
const char *reconcile_status_version(const char *live, const char *ours);
#endif
