/* reconcile/ports.h - Service ports derived from the collector config
 * (reconcile.md 3.3, 3.5): unlike container ports (collector/ports.c, which
 * the pod uses) they carry appProtocol and targetPort, are split by
 * component kind (receivers for Ingress/Route/HTTPRoute, receivers and
 * exporters for the Services, extensions for the extension Service) and
 * are not validated. The component table, the endpoint parsing and the
 * port names are collector/'s (collector_component_ports), so both always
 * agree. */
#ifndef RECONCILE_PORTS_H
#define RECONCILE_PORTS_H

#include "collector/components.h"

#include <json-c/json.h>
#include <stddef.h>

/* A new array of ServicePort objects ({name, protocol?, appProtocol?, port,
 * targetPort?}) for the enabled components of the kinds in `which`
 * (COLLECTOR_RECEIVERS | ... bits), sorted
 * by name. When route is set, appProtocol grpc becomes h2c. With spec_ports
 * (spec.ports, may be NULL), the reference's merge: inferred ports clashing
 * by number+protocol dropped, by name renamed port-<n>, then spec.ports
 * prepended as given (hostPort dropped). NULL with err on a build error
 * (unknown protocols key, portless tcp_log/udp_log). */
json_object *reconcile_service_ports(json_object *config, unsigned which, int route, json_object *spec_ports,
                                     char *err, size_t errlen);
#endif
