/* base/alloc.h - the one out-of-memory policy: when an allocation fails,
 * the process says so on stderr and aborts.
 *
 * Why not recover? Every caller would need an error path that no test can
 * reach on Linux (overcommit hands out address space; the OOM killer, not
 * malloc, answers real exhaustion), and such paths rot: before this module
 * the tree handled it three ways, one of them silently writing JSON nulls.
 * A process that cannot allocate a few hundred bytes cannot answer an
 * admission either; the webhook's failurePolicy (Ignore) and the CronJob's
 * next run are the recovery. Hostile input that would make us allocate a
 * lot is refused by explicit size bounds before it gets here, never by
 * running out.
 *
 * Every allocation of ours goes through these wrappers; json-c objects are
 * built through base/json.h, which applies the same rule to json-c. */
#ifndef BASE_ALLOC_H
#define BASE_ALLOC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/* Writes "out of memory" to stderr and aborts. */
_Noreturn void base_oom(void);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *xvasprintf(const char *fmt, va_list ap);
/* The strings given, up to a NULL, one after the other (malloc'ed): the
 * engine's concatenations, at a tenth of a format's cost. */
char *xcat(const char *s, ...) __attribute__((sentinel));

/* Gives the heap freed so far back to the system: glibc's malloc_trim,
 * and mimalloc's collection when the binary allocates through mimalloc
 * (the release webhook); both keep freed memory otherwise, and one large
 * resource file read once would stay in the RSS for good. Any thread. */
void base_trim(void);
/* A window in which large parts of the heap are freed (a resource file
 * replaced, a live snapshot published), closed by base_release_end, which
 * trims when told to. With mimalloc, memory freed inside the window goes
 * back to the system at once; outside, only after a delay and when its
 * thread touches it again, which a long-lived store's thread may never
 * do. The windows are short and rare: other threads freeing meanwhile
 * give their pages back at once too, which costs them a little. */
void base_release_begin(void);
void base_release_end(bool trim);

/* Grows the array p of *cap elements of elem bytes so that it holds at
 * least need elements (capacity doubling from 8), and returns it. The usual
 * append: `v = xgrow(v, &cap, n + 1, sizeof *v); v[n++] = x;` */
void *xgrow(void *p, size_t *cap, size_t need, size_t elem);

#endif
