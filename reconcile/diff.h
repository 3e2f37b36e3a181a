/* reconcile/diff.h - what `otel-reconcile run --dry-run` says about an
 * object that would be updated: the fields that differ, one line each,
 * from compare.c's walk (the same one that decided the object changed).
 * Pure: json-c objects in, text out. */
#ifndef RECONCILE_DIFF_H
#define RECONCILE_DIFF_H

#include <json-c/json.h>

/* The lines of want (the desired object, digest stamped) against have
 * (the live one), in want's order: "  PATH: OLD -> NEW\n", the values as
 * compact JSON, "(absent)" where there is none. The digest annotation
 * (RECONCILE_HASH_ANNOTATION) changes with every change of the desired
 * object, so it is left out next to other lines; alone, it is the one
 * line, saying that only fields no longer wanted go. malloc'ed; "" when
 * nothing differs. */
char *reconcile_diff_text(json_object *want, json_object *have);
#endif
