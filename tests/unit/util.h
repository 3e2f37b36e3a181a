/* tests/unit/util.h - small helpers shared by the Check suites. */
#ifndef TESTS_UTIL_H
#define TESTS_UTIL_H
#include <check.h>
#include <stddef.h>
#include <json-c/json.h>

/* Runs the suite (Check's normal output, its CK_FORK setting) and frees
 * it: main's exit status, 0 when every test passed. */
int tu_run(Suite *s);

/* Reads a whole file (tests run from the repository root); aborts on error. */
char *tu_read_file(const char *path, size_t *len);
/* Parses JSON text; aborts with a message on error. */
json_object *tu_json(const char *text);
/* Compact, key-order-preserving JSON text of obj (static buffer per call site is not used: malloc'ed). */
char *tu_str(json_object *obj);
#endif
