/* server/h2o/khash.h - the declarations h2o 2.2.5's <h2o/http2_internal.h>
 * needs from khash to compile. Debian installs that header without the
 * khash.h it includes; serve_h2.c includes it for the real layout of an
 * HTTP/2 connection (struct st_h2o_http2_conn_t) instead of restating it.
 * Only the hash's type is used (the connection holds a pointer to one).
 * The lookups appear in static inline helpers we never call; they expand
 * to a function nobody defines, so a call that starts using one fails at
 * link time instead of answering wrongly. This folder is on the include
 * path of serve_h2.c alone (Makefile). */
#ifndef SERVER_H2O_KHASH_H
#define SERVER_H2O_KHASH_H

typedef unsigned int khint_t;
typedef khint_t khiter_t;

/* Never defined: see above. */
khiter_t serve_h2_khash_is_not_available(void);

#define khash_t(name) struct kh_##name##_s
#define KHASH_MAP_INIT_INT64(name, khval_t) struct kh_##name##_s;
#define kh_get(name, h, k) ((void)(h), (void)(k), serve_h2_khash_is_not_available())
#define kh_end(h) ((void)(h), serve_h2_khash_is_not_available())
#define kh_val(h, x) ((void)(h), (void)(x), (void *)serve_h2_khash_is_not_available())

#endif
