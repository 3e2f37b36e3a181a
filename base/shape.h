/* base/shape.h - the JSON types of the fields a custom resource's
 * defaulting and validation read, checked before either runs.
 *
 * The readers of base/json.h take a value of the wrong type for an absent
 * one. That is right for the pod engine, which must never misread, but a
 * defaulter that takes `replicas: "3"` for absent would write 1 over it.
 * The reference decodes a CR into Go structs first and answers 400 for
 * anything that does not fit; this is that decode, for the fields we read.
 * JSON null counts as absent everywhere (Go decodes it to the zero value).
 * A table per resource says what is checked; anything else is left to the
 * API server's schema. */
#ifndef BASE_SHAPE_H
#define BASE_SHAPE_H

#include <json-c/json.h>

typedef enum shape_type {
    SHAPE_STRING,
    SHAPE_BOOL,
    SHAPE_INT,      /* an integer (an integral double too) */
    SHAPE_NUMBER,   /* any number */
    SHAPE_OBJECT,   /* an object, its fields in sub (NULL: not looked into) */
    SHAPE_OBJECTS,  /* a list of objects, each with the fields in sub */
    SHAPE_LIST,     /* a list of anything */
    SHAPE_STRMAP,   /* a map of strings */
    SHAPE_MAP,      /* a map whose values are objects with the fields in sub */
    SHAPE_QUANTITY, /* an int-or-string Kubernetes quantity */
} shape_type;

typedef struct shape_field {
    const char *key; /* NULL ends a table */
    shape_type type;
    const struct shape_field *sub;
} shape_field;

/* NULL when obj (an object, or NULL) fits fields; else a malloc'ed one-line
 * "PATH: REASON", PATH starting with prefix ("spec.replicas: expected an
 * integer, got a string"). */
char *shape_check(json_object *obj, const shape_field *fields, const char *prefix);

#endif
