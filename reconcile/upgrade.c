/* reconcile/upgrade.c - what the reference's version-upgrade routines
 * (reconcile.md 5.6) still mean for a v1beta1 collector, done in memory.
 *
 * The reference patches the user's spec when the operator is upgraded and
 * status.version is older: 0.104.0 adds two feature gates that 0.105.0 and
 * 0.110.0 remove again (no net change), 0.111.0 writes a telemetry address
 * and 0.122.0 turns that address into a prometheus pull reader. The net
 * effect is one rewrite: service.telemetry.metrics.address becomes a reader.
 *
 * Trade-offs:
 * - In memory, never written back (spec 7.19: a job that edits the user's
 *   spec makes GitOps tools report drift). Because nothing is persisted the
 *   rewrite cannot depend on status.version, which we bump: it is applied to
 *   every collector that still carries an address. For a collector the
 *   reference upgraded this renders the same ConfigMap (same hash); for one
 *   created with an address after 0.122.0 the reference would pass the
 *   address through to a collector that no longer accepts it.
 * - An address whose port is not a number (an env reference) is left as it
 *   is, as the reference's routine fails and leaves the CR alone; rendering
 *   then reports the port problem. */
#include "reconcile/upgrade.h"

#include "base/json.h"

#include <stdlib.h>
#include <string.h>

/* "host:port", "[v6]:port" or ":port" into host and port. 0, or -1 when
 * there is no numeric port. */
static int split_address(const char *addr, char *host, size_t hostlen, long *port) {
    const char *colon = strrchr(addr, ':');
    if (!colon || !colon[1]) return -1;
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (*end || p <= 0 || p > 65535) return -1;
    size_t n = (size_t)(colon - addr);
    const char *h = addr;
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
        h++;
        n -= 2;
    } else if (memchr(h, ':', n) && !memmem(h, n, "${", 2)) {
        return -1; /* an unbracketed IPv6 literal: ambiguous (an env reference is not) */
    }
    if (n >= hostlen) return -1;
    if (n == 0) {
        strcpy(host, "0.0.0.0");
    } else {
        memcpy(host, h, n);
        host[n] = '\0';
    }
    *port = p;
    return 0;
}

static bool same_reader(json_object *r, const char *host, long port) {
    json_object *prom = jmap(jmap(jmap(r, "pull"), "exporter"), "prometheus");
    const char *h = jstr(prom, "host");
    int64_t p;
    return h && strcmp(h, host) == 0 && jint(prom, "port", &p) && p == port;
}

int reconcile_upgrade_config(json_object *config) {
    json_object *metrics =
        jmap(jmap(jmap(config, "service"), "telemetry"), "metrics");
    const char *addr = jstr(metrics, "address");
    char host[256];
    long port;
    if (!addr) return 0;
    if (!*addr) { /* the reference's way of deleting it */
        json_object_object_del(metrics, "address");
        return 0;
    }
    if (split_address(addr, host, sizeof host, &port) != 0) return 0;
    json_object *readers = jget(metrics, "readers");
    if (readers && !json_object_is_type(readers, json_type_array)) return 0;
    if (!readers) readers = jset_arr(metrics, "readers");
    bool dup = false;
    for (size_t i = 0; readers && i < json_object_array_length(readers); i++)
        if (same_reader(json_object_array_get_idx(readers, i), host, port)) dup = true;
    if (!dup) {
        json_object *r = jpush(readers, jnew_obj());
        json_object *prom = jset_obj(jset_obj(jset_obj(r, "pull"), "exporter"), "prometheus");
        jset_str(prom, "host", host);
        jset_int(prom, "port", port);
    }
    json_object_object_del(metrics, "address");
    return 1;
}

/* Numeric dot-separated parts, a leading "v" and any "-pre" suffix ignored:
 * enough for collector versions. */
int reconcile_version_cmp(const char *a, const char *b) {
    if (*a == 'v') a++;
    if (*b == 'v') b++;
    for (int i = 0; i < 3; i++) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (x != y) return x < y ? -1 : 1;
        a = *ea == '.' ? ea + 1 : ea;
        b = *eb == '.' ? eb + 1 : eb;
    }
    return 0;
}

/* Empty or older: ours (after the in-memory upgrade above). Newer: kept,
 * as the reference skips a collector newer than itself. */
const char *reconcile_status_version(const char *live, const char *ours) {
    if (!live || !*live) return ours;
    return reconcile_version_cmp(live, ours) < 0 ? ours : live;
}
