/* base/json.h - the one set of json-c readers and builders.
 *
 * Readers treat a value of the wrong JSON type as absent: what they read is
 * whatever a user, a file or a fuzzer wrote, and "not the shape we need"
 * must never be mistaken for a value. JSON null is json-c's NULL pointer,
 * so it reads as absent too.
 *
 * Builders take ownership of the values they are given and abort on a
 * failed allocation (base/alloc.h), so a builder chains calls without
 * checking each one. Fields are added in insertion order, which is the
 * order the YAML and JSON writers print them in.
 *
 * Threading: json-c reference counts are not atomic. A tree shared between
 * threads (store objects) is only read; anything inserted into a request's
 * tree is a copy (jcopy) or a new value. */
#ifndef BASE_JSON_H
#define BASE_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- reading ------------------------------------------------------------ */

/* Member key of o; NULL when o is not an object, key is absent or null. */
json_object *jget(json_object *o, const char *key);
json_object *jmap(json_object *o, const char *key);  /* NULL unless an object */
json_object *jarr(json_object *o, const char *key);  /* NULL unless an array */
const char *jstr(json_object *o, const char *key);   /* NULL unless a string */
bool jbool(json_object *o, const char *key);         /* true only for a true boolean */
/* true with *out when o[key] is an integer, or a double with an integral value. */
bool jint(json_object *o, const char *key, int64_t *out);
size_t jlen(json_object *a);                          /* 0 unless an array */
/* A non-empty object, array or string, or any other non-null scalar. */
bool jnonempty(json_object *v);
/* The first element of arr that is an object whose string "name" is name
 * (its index in *idx when idx is not NULL), or NULL. */
json_object *jfind_named(json_object *arr, const char *name, size_t *idx);
/* What v is, for "expected X, got Y" messages: "null" (a NULL v, which is
 * how json-c holds JSON null), "a boolean", "a number", "a string", "a list"
 * or "an object". The one wording every such message uses. */
const char *jtype_name(json_object *v);

#ifdef BASE_JSON_TRAP
/* Fuzz builds only (-DBASE_JSON_TRAP): called whenever a reader above meets
 * a value that is there but of the wrong type (holder is what was read from,
 * key NULL for jlen), so a fuzz target can tell "read as absent" from
 * "absent" and prove which inputs the engine never misreads. A global,
 * unlike anything in a release build: it exists in none. */
extern void (*base_json_trap)(json_object *holder, const char *key, json_object *value);
#endif

/* ---- building (abort on allocation failure) ----------------------------- */

json_object *jnew_obj(void);
json_object *jnew_arr(void);
json_object *jnew_str(const char *s);
json_object *jnew_strn(const char *s, size_t n);
json_object *jnew_int(int64_t v);
json_object *jnew_bool(bool v);
json_object *jnew_double(double v);
json_object *jstrs(int n, ...); /* a new array of n strings */

/* o[key] = v, taking v (NULL stores JSON null). Returns v. */
json_object *jset(json_object *o, const char *key, json_object *v);
json_object *jset_str(json_object *o, const char *key, const char *s); /* NULL s stores "" */
json_object *jset_int(json_object *o, const char *key, int64_t v);
json_object *jset_bool(json_object *o, const char *key, bool v);
json_object *jset_obj(json_object *o, const char *key); /* a new object at key */
json_object *jset_arr(json_object *o, const char *key); /* a new array at key */
/* o[key] = a deep copy of v, when v is not NULL. */
void jset_copy(json_object *o, const char *key, json_object *v);
/* The object or array at key, replacing (or creating) it when it is not one. */
json_object *jobj_at(json_object *o, const char *key);
json_object *jarr_at(json_object *o, const char *key);

/* Appends v (taken) to array a. Returns v. */
json_object *jpush(json_object *a, json_object *v);
/* Inserts v (taken) at idx, or appends when idx is past the end. */
void jinsert(json_object *a, size_t idx, json_object *v);

/* Deep copy; NULL stays NULL. */
json_object *jcopy(json_object *v);

/* ---- sorted views ------------------------------------------------------- */

/* Go writes map keys sorted bytewise; json-c keeps insertion order. */
typedef struct jkv {
    const char *key;
    json_object *val;
} jkv;

/* The members of object o sorted by key (bytewise), borrowed from o, in a
 * malloc'ed array of *n entries (free it); NULL with *n = 0 when o is not
 * an object or is empty. */
jkv *jsorted_members(json_object *o, size_t *n);
/* A deep copy of object o with its keys sorted; NULL unless o is an object. */
json_object *jsorted(json_object *o);

/* Parses body (len bytes) as exactly one JSON value with tok: strict, white
 * space around it allowed. 0 with *out the value when it is an object; 1
 * when it is another value (a request body that is not a review); -1 with
 * a one-line "invalid JSON: ..." in err. */
int jparse_object(json_tokener *tok, const char *body, size_t len, json_object **out, char *err, size_t errlen);
/* The string or literal (true, false) that is all of text, parsed strictly
 * (its escapes decoded), or NULL: anything else, a number included (json-c
 * keeps one open until a delimiter). For reading single values out of a
 * body that is not parsed whole. */
json_object *jparse_scalar(json_tokener *tok, const char *text, size_t len);

#endif
