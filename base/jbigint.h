/* base/jbigint.h - JSON integers past 64 bits, kept exactly through json-c.
 *
 * json-c 0.16's tokener clamps an integer literal outside int64/uint64 to
 * INT64_MIN or UINT64_MAX, even in strict mode, without an error: a stored
 * 18446744073709552000 (what the API server's Go writes for a float64 it
 * holds, 2^64) would come back as 18446744073709551615. Such literals are
 * kept as json-c doubles that print their exact source text instead: the
 * body is scanned first (one pass, strings skipped), and only when it has
 * one is a copy made with "e0" after each (a double to the tokener, the same
 * number), whose text jbigint_restore then gives back without the "e0". */
#ifndef BASE_JBIGINT_H
#define BASE_JBIGINT_H

#include <json-c/json.h>
#include <stddef.h>

/* NULL when body has no integer literal past 64 bits; else a malloc'ed copy
 * (its length in *outlen) to parse instead. */
char *jbigint_mark(const char *body, size_t len, size_t *outlen);

/* After parsing a marked copy: every double whose text is a marked integer
 * ("-?digits" + "e0") prints the digits alone again. */
void jbigint_restore(json_object *root);

#endif
