/* reconcile/ta_config.h - the Target Allocator's config file,
 * targetallocator.yaml (targetallocator.md 6), and the Go value formats it
 * and the collector's receiver rewrite share (durations, yaml.v2's key
 * order). Pure: json-c in, text out, no I/O. */
#ifndef RECONCILE_TA_CONFIG_H
#define RECONCILE_TA_CONFIG_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A Go duration string ("1h30m", "1.5s", "300ms") in nanoseconds; false
 * when s is not one (time.ParseDuration's grammar and range). */
bool reconcile_go_duration_parse(const char *s, int64_t *ns);
/* time.Duration.String(): "30s", "2m0s", "1h0m0s", "1.5s", "300ms", "0s". */
#define RECONCILE_DURATION_MAX 80
void reconcile_go_duration_format(int64_t ns, char out[RECONCILE_DURATION_MAX]);
/* s parsed and formatted again ("2m" -> "2m0s"); NULL when s is not a
 * duration. Malloc'ed. */
char *reconcile_go_duration_normal(const char *s);

/* A deep copy of v whose maps are in yaml.v2's key order (numbers within
 * keys compared as numbers, non-letters before letters, 6.5 item 2). */
json_object *reconcile_yaml_v2_sorted(json_object *v);

/* receivers.prometheus of a collector config (the name exactly
 * "prometheus"), or receivers itself when that receiver is null; NULL with
 * the reference's message in err when there is none ("no prometheus
 * available as part of the configuration", ...). Borrowed. */
json_object *reconcile_ta_find_prometheus(json_object *config, char *err, size_t errlen);

/* The scrape configs the collector's prometheus receiver contributes
 * (6.2 step 3), "$$" unescaped in relabel replacements, as a new array
 * (empty: none); config is the collector's spec.config. NULL with the
 * reference's message in err when the receiver cannot be read ("no
 * prometheus available as part of the configuration", ...). */
json_object *reconcile_ta_collector_scrape_configs(json_object *config, char *err, size_t errlen);

typedef struct reconcile_ta_config_in {
    json_object *spec;        /* the TargetAllocator's spec, schema defaults applied (may be NULL) */
    json_object *collector;   /* the bound collector, defaulted (NULL: none) */
    const char *collector_ns; /* its namespace */
    bool fallback_strategy;   /* gate operator.targetallocator.fallbackstrategy */
} reconcile_ta_config_in;

/* targetallocator.yaml, byte-exact (yaml.v2's layout and quoting). NULL
 * with a one-line reason in err. Malloc'ed. */
char *reconcile_ta_config_text(const reconcile_ta_config_in *in, char *err, size_t errlen);

#endif
