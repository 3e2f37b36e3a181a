/* collector/probes.h - the collector container's probes (reconcile.md
 * 2.5.4, mutation.md 4.5): generated only from an enabled health_check
 * extension, tuned by spec.livenessProbe/readinessProbe/startupProbe. */
#ifndef COLLECTOR_PROBES_H
#define COLLECTOR_PROBES_H

#include <json-c/json.h>

/* Sets *liveness, *readiness, *startup (each may be NULL to skip it) to new
 * objects, or to NULL each when there is no enabled health_check. spec is
 * the collector spec (with its defaulted config). */
void collector_probes(json_object *spec, json_object **liveness, json_object **readiness, json_object **startup);

#endif
