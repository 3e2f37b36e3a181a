/* collector/naming.h - object names the way the reference builds them
 * (reconcile.md 2.1.1): Truncate to 63 bytes, trimming the *values* rather
 * than the suffix, then DNSName. Kept byte-exact, quirks included (the
 * 60-character CR's headless Service is "<53 a>--headless"), because these
 * names identify objects a reference operator may already have created. */
#ifndef COLLECTOR_NAMING_H
#define COLLECTOR_NAMING_H

#include <stddef.h>

#define COLLECTOR_NAME_MAX 63

/* Truncate(format, max, values...): fmt contains only "%s" conversions,
 * one per value (at most four). Returns a malloc'ed string. */
char *collector_truncate(const char *fmt, size_t max, size_t nvals, const char *const *vals);
/* DNSName(s) in place: lowercase; a character outside [a-z0-9] becomes 'a'
 * at either end and '-' elsewhere. Multi-byte characters become one byte,
 * as Go's rune walk does. */
void collector_dns_name(char *s);
/* DNSName(Truncate(fmt, 63, a[, b])): b may be NULL for one value. */
char *collector_name(const char *fmt, const char *a, const char *b);
#endif
