/* base/jtext.h - compact JSON text (RFC 8259) of json-c values, for
 * answers, patches and logs.
 *
 * About three times faster than json-c's writer on patches, which are
 * mostly long strings: runs of plain bytes are copied with one memcpy.
 * Bytes that are not valid UTF-8 are written as U+FFFD, so the output is
 * always valid JSON for the API server whatever came in; '/' is not
 * escaped; object members keep json-c's insertion order. */
#ifndef BASE_JTEXT_H
#define BASE_JTEXT_H

#include "base/sbuf.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* The text of v (malloc'ed, NUL-terminated; its length in *len when len
 * is not NULL). */
char *jtext(json_object *v, size_t *len);
/* Appends the text of v to b. */
void jtext_append(sbuf *b, json_object *v);
/* Keeps v's text with v (an object or an array; json-c's userdata, freed
 * with v), which jtext_append then writes as it is: for values made once
 * and written into many answers (mutate/cache.c), which must not change
 * after this (the checked builds, -DMUTATE_SELF_CHECK, write them afresh
 * and abort when they differ). Returns the bytes kept (0 for a scalar, or
 * a value carrying another userdata, which are written as before). */
size_t jtext_keep(json_object *v);
/* Whether v carries kept text (jcopy copies it without). */
bool jtext_kept(json_object *v);
/* Appends s (n bytes) as a quoted, escaped JSON string. */
void jtext_string(sbuf *b, const char *s, size_t n);
/* Appends s (n bytes), a JSON text jtext wrote (valid UTF-8, control
 * characters already escaped), as a JSON string: the bytes jtext_string
 * gives such a text, in one pass that looks for quotes and backslashes
 * only. For the status record, a JSON document with a quote every few
 * bytes, where jtext_string's run-copying pays per quote. */
void jtext_string_text(sbuf *b, const char *s, size_t n);

#endif
