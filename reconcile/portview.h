/* reconcile/portview.h - the collector spec as port derivation should see
 * it: IPv6 literals in endpoints ("[::1]:4317", "http://[fd00::1]:9411")
 * replaced by a placeholder host, so that the reference's "first :<digits>"
 * rule finds the port instead of a piece of the address (spec 7.11: the
 * reference derives port 1 from "[::1]:4317").
 *
 * Only port derivation (container and Service ports, probes, the
 * NetworkPolicy) reads the view; the ConfigMap and the config hash use the
 * config as written. Doing it here rather than in kube/collector.c keeps
 * the sidecar injector on the reference's behaviour until that is decided
 * there. */
#ifndef RECONCILE_PORTVIEW_H
#define RECONCILE_PORTVIEW_H

#include <json-c/json.h>

/* NULL when spec.config has no bracketed address (the usual case: no copy
 * is made); otherwise a new deep copy of spec with those rewritten. */
json_object *reconcile_port_view(json_object *spec);
#endif
