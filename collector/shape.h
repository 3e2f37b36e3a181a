/* collector/shape.h - the types of the OpenTelemetryCollector (v1beta1)
 * fields the defaulting and the validation read (base/shape.h says why),
 * checked before either runs: a collector that does not fit is what the
 * reference's decoder refuses with 400. */
#ifndef COLLECTOR_SHAPE_H
#define COLLECTOR_SHAPE_H

#include <json-c/json.h>

/* NULL when collector fits, else a malloc'ed "PATH: REASON". spec.config
 * must be an object here (a v1alpha1 string is converted before). */
char *collector_check_shape(json_object *collector);

#endif
