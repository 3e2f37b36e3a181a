/* server/metrics.c - counters, latency histogram and their text format
 * (the rules the exposition keeps: metrics.h). */
#include "server/metrics.h"

#include "base/sbuf.h"
#include "base/versions.h"

#include <h2o/version.h>
#include <json-c/json_c_version.h>
#include <openssl/crypto.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const result_names[METRICS_NRESULTS] = {"mutated", "unchanged", "ignored", "failed_open",
                                                           "rejected"};
static const char *const error_names[METRICS_NERRORS] = {"bad_request", "too_large", "method_not_allowed",
                                                         "not_found", "internal", "resource_file",
                                                         "certificate_reload", "ambiguous_framing", "http2_budget",
                                                         "http2_rapid_reset", "requests_in_flight", "write_stalled"};
static const char *const skip_names[MUTATE_NSKIPS] = {"already_instrumented", "not_found", "ambiguous",
                                                      "disabled", "invalid", "container", "lookup", "limit",
                                                      "unknown_container", "unknown_annotation", "malformed"};
static const char *const sidecar_modes[2] = {"container", "native"}; /* index: native or not */
const char *metrics_skip_name(mutate_skip s) { return s < MUTATE_NSKIPS ? skip_names[s] : "?"; }

const char *const metrics_kinds[8] = {"Namespace", "Instrumentation", "OpenTelemetryCollector", "Secret",
                                      "ConfigMap", "ReplicaSet", "Job", "Deployment"};

const char *const metrics_cr_kinds[METRICS_CR_NKINDS] = {"OpenTelemetryCollector", "Instrumentation", "OpAMPBridge"};
const char *const metrics_cr_ops[METRICS_CR_NOPS] = {"CREATE", "UPDATE", "DELETE", "CONNECT", "other"};
const char *const metrics_cr_results[METRICS_CR_NRESULTS] = {"defaulted", "unchanged", "allowed", "denied", "rejected"};

/* The rule ids each kind's checks refuse with (collector/validate.c,
 * mutate/inst_validate.c, mutate/opampbridge.c, and "defaulting" for a
 * refusal of the mutating webhook); the last, "other", catches an id this
 * table does not know, so the label set stays bounded whatever happens. */
#define CR_MAX_RULES 20
static const char *const cr_rules[METRICS_CR_NKINDS][CR_MAX_RULES] = {
    {"defaulting", "bounds", "config", "mode_change", "statefulset_only", "sidecar", "target_allocator", "mtls", "target_allocator_rbac",
     "ports", "config_ports", "autoscaler", "ingress", "update_strategy", "fips", "rbac", "other", NULL},
    {"defaulting", "sampler", "volume", "other", NULL},
    {"defaulting", "endpoint", "tls", "capabilities", "ports", "replicas", "other", NULL},
};

/* Sub-millisecond buckets first: a mutation takes tens of microseconds. */
static const double bounds[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1};
#define NBUCKETS (sizeof bounds / sizeof bounds[0])

static atomic_ulong requests[METRICS_NRESULTS], errors[METRICS_NERRORS], skips[MUTATE_NSKIPS];
static atomic_ulong injections[MUTATE_NLANGS], sidecars[2], limits[MUTATE_NLIMITS];
static atomic_ulong buckets[NBUCKETS + 1], count;
static atomic_ullong sum_ns;
static atomic_ulong accept_pauses;
/* The mutation caches, by part (0 collectors, 1 Instrumentations): held
 * now (a sum of differences, so signed) and since start. */
static const char *const cache_parts[2] = {"collector", "instrumentation"};
static atomic_long cache_entries[2], cache_bytes[2];
static atomic_ulong cache_hits[2], cache_misses[2], cache_evictions[2];
static atomic_ulong cr_admissions[METRICS_CR_NKINDS][METRICS_CR_NOPS][METRICS_CR_NRESULTS];
static atomic_ulong cr_denials[METRICS_CR_NKINDS][CR_MAX_RULES];
/* CR admissions may wait for the authorizer: their own histogram, so they
 * do not move the pod admissions' latency (and its alert). */
static const double cr_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
#define CR_NBUCKETS (sizeof cr_bounds / sizeof cr_bounds[0])
static atomic_ulong cr_buckets[CR_NBUCKETS + 1], cr_count;
static atomic_ullong cr_sum_ns;

void metrics_cr_admission(metrics_cr_kind kind, metrics_cr_op op, metrics_cr_result result, const char *rule,
                          double seconds) {
    atomic_fetch_add_explicit(&cr_admissions[kind][op][result], 1, memory_order_relaxed);
    if (result == CR_DENIED) {
        size_t r = 0, other = 0;
        for (; cr_rules[kind][r]; r++) {
            if (!strcmp(cr_rules[kind][r], "other")) other = r;
            if (rule && !strcmp(cr_rules[kind][r], rule)) break;
        }
        atomic_fetch_add_explicit(&cr_denials[kind][cr_rules[kind][r] ? r : other], 1, memory_order_relaxed);
    }
    size_t i = 0;
    while (i < CR_NBUCKETS && seconds > cr_bounds[i]) i++;
    atomic_fetch_add_explicit(&cr_buckets[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&cr_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&cr_sum_ns, (unsigned long long)(seconds * 1e9), memory_order_relaxed);
}

static atomic_ulong conversions[METRICS_NCONV][2], converted_objects[METRICS_NCONV];
static const char *const conv_names[METRICS_NCONV] = {"to_v1beta1", "to_v1alpha1", "other"};

void metrics_request(metrics_result r, double seconds) {
    atomic_fetch_add_explicit(&requests[r], 1, memory_order_relaxed);
    size_t i = 0;
    while (i < NBUCKETS && seconds > bounds[i]) i++;
    atomic_fetch_add_explicit(&buckets[i], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sum_ns, (unsigned long long)(seconds * 1e9), memory_order_relaxed);
}

void metrics_mutation(const mutate_result *res, int native_sidecar) {
    for (int l = 0; l < MUTATE_NLANGS; l++)
        if (res->injected & MUTATE_BIT(l)) atomic_fetch_add_explicit(&injections[l], 1, memory_order_relaxed);
    if (res->sidecar) atomic_fetch_add_explicit(&sidecars[native_sidecar ? 1 : 0], 1, memory_order_relaxed);
    for (int s = 0; s < MUTATE_NSKIPS; s++)
        if (res->skips & (1u << s)) atomic_fetch_add_explicit(&skips[s], 1, memory_order_relaxed);
    if (res->limit != MUTATE_LIMIT_NONE) atomic_fetch_add_explicit(&limits[res->limit], 1, memory_order_relaxed);
}

void metrics_conversion_review(metrics_conversion dir, int failed, size_t objects) {
    atomic_fetch_add_explicit(&conversions[dir][failed ? 1 : 0], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&converted_objects[dir], objects, memory_order_relaxed);
}

static void add_long(atomic_long *a, size_t before, size_t after) {
    if (after != before) atomic_fetch_add_explicit(a, (long)after - (long)before, memory_order_relaxed);
}

static void add_ulong(atomic_ulong *a, unsigned long before, unsigned long after) {
    if (after != before) atomic_fetch_add_explicit(a, after - before, memory_order_relaxed);
}

void metrics_cache(const mutate_cache_stats *b, const mutate_cache_stats *a) {
    add_long(&cache_entries[0], b->entries, a->entries);
    add_long(&cache_bytes[0], b->bytes, a->bytes);
    add_ulong(&cache_hits[0], b->hits, a->hits);
    add_ulong(&cache_misses[0], b->misses, a->misses);
    add_ulong(&cache_evictions[0], b->evictions, a->evictions);
    add_long(&cache_entries[1], b->inst_entries, a->inst_entries);
    add_long(&cache_bytes[1], b->inst_bytes, a->inst_bytes);
    add_ulong(&cache_hits[1], b->inst_hits, a->inst_hits);
    add_ulong(&cache_misses[1], b->inst_misses, a->inst_misses);
    add_ulong(&cache_evictions[1], b->inst_evictions, a->inst_evictions);
}

void metrics_error(metrics_err e) { atomic_fetch_add_explicit(&errors[e], 1, memory_order_relaxed); }

void metrics_accept_paused(void) { atomic_fetch_add_explicit(&accept_pauses, 1, memory_order_relaxed); }

/* The HELP and TYPE lines that open a family. */
static void family(sbuf *f, const char *name, const char *type, const char *help) {
    sbuf_printf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value as the text format wants it: \, " and newlines escaped.
 * Only the build information needs it: every other value is ours. */
static void label_value(sbuf *f, const char *v) {
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') sbuf_putc(f, '\\');
        if (*v == '\n') sbuf_puts(f, "\\n");
        else sbuf_putc(f, *v);
    }
}

/* What this binary was built as and runs with: the libraries' versions are
 * the ones linked at run time where they say (OpenSSL, json-c), h2o's the
 * headers' (it has no run-time call), which is what a rebuild changes. */
static void render_build_info(sbuf *f) {
    family(f, "otel_webhook_build_info", "gauge", "Always 1; the labels say which build is running.");
    sbuf_puts(f, "otel_webhook_build_info{version=\"");
    label_value(f, OTEL_WEBHOOK_VERSION);
    sbuf_puts(f, "\",h2o_version=\"");
    label_value(f, H2O_VERSION);
    sbuf_puts(f, "\",openssl_version=\"");
    label_value(f, OpenSSL_version(OPENSSL_VERSION_STRING));
    sbuf_puts(f, "\",json_c_version=\"");
    label_value(f, json_c_version());
    sbuf_puts(f, "\"} 1\n");
}

/* Series of the live cluster source, only when it runs. */
static void render_live(sbuf *f, const kube_live_stats *l) {
    family(f, "otel_webhook_watch_synced", "gauge", "1 once the resource was listed from the API server.");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_synced{resource=\"%s\"} %d\n", l->res[i].name, l->res[i].synced);
    family(f, "otel_webhook_watch_restarts_total", "counter", "Watches reopened after an error, a drop or a stall.");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_restarts_total{resource=\"%s\"} %lu\n", l->res[i].name, l->res[i].restarts);
    family(f, "otel_webhook_watch_relists_total", "counter", "LISTs after the first (410 Gone, errors).");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_relists_total{resource=\"%s\"} %lu\n", l->res[i].name, l->res[i].relists);
    family(f, "otel_webhook_watch_errors_total", "counter",
           "Watches reopened and LISTs given up, and objects refused, by reason.");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        for (int r = 0; r < KUBE_WATCH_NERRORS; r++)
            sbuf_printf(f, "otel_webhook_watch_errors_total{resource=\"%s\",reason=\"%s\"} %lu\n", l->res[i].name,
                        kube_watch_error_names[r], l->res[i].errors[r]);
    family(f, "otel_webhook_watch_last_event_timestamp_seconds", "gauge",
           "Unix time of the last change seen (list or event); no sample before the first.");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        if (l->res[i].last_event_unix > 0)
            sbuf_printf(f, "otel_webhook_watch_last_event_timestamp_seconds{resource=\"%s\"} %.3f\n", l->res[i].name,
                        l->res[i].last_event_unix);
    family(f, "otel_webhook_watch_objects", "gauge", "Objects held per watched resource.");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_objects{resource=\"%s\"} %lu\n", l->res[i].name, l->res[i].objects);
    family(f, "otel_webhook_owner_lookups_total", "counter",
           "On-demand lookups (owners, exporter Secrets and ConfigMaps), by outcome.");
    for (int i = 0; i < KUBE_LOOKUP_NRESULTS; i++)
        sbuf_printf(f, "otel_webhook_owner_lookups_total{result=\"%s\"} %lu\n", kube_lookup_names[i], l->lookups[i]);
    family(f, "otel_webhook_owner_lookup_duration_seconds", "histogram",
           "Time of the on-demand GETs sent to the API server.");
    unsigned long cum = 0;
    for (int i = 0; i < KUBE_LOOKUP_NBUCKETS; i++) {
        cum += l->lookup_buckets[i];
        sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_bucket{le=\"%g\"} %lu\n", kube_lookup_bounds[i], cum);
    }
    cum += l->lookup_buckets[KUBE_LOOKUP_NBUCKETS];
    sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
    sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_sum %.6f\n", l->lookup_seconds);
    sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_count %lu\n", cum);
    family(f, "otel_webhook_live_publishes_total", "counter", "Live-layer snapshots published (bursts coalesced).");
    sbuf_printf(f, "otel_webhook_live_publishes_total %lu\n", l->publishes);
    /* Not known (no answer from /version yet, or --native-sidecars on|off,
     * which does not ask): no sample rather than a value that means "none". */
    family(f, "otel_webhook_access_reviews_total", "counter",
           "SubjectAccessReviews the collector admissions asked (privilege escalation, the target allocator's "
           "account), by answer.");
    for (int i = 0; i < KUBE_REVIEW_NRESULTS; i++)
        sbuf_printf(f, "otel_webhook_access_reviews_total{result=\"%s\"} %lu\n", kube_review_names[i], l->reviews[i]);
    family(f, "otel_webhook_native_sidecars", "gauge",
           "1 when the API server's version enables native sidecars, 0 when not (--native-sidecars auto); no "
           "sample until it has answered.");
    if (l->native_sidecars >= 0) sbuf_printf(f, "otel_webhook_native_sidecars %d\n", l->native_sidecars);
}

static void render_cr(sbuf *f) {
    family(f, "otel_webhook_cr_admissions_total", "counter",
           "Admissions of Instrumentations, collectors and OpAMPBridges, by kind, operation and result.");
    for (int k = 0; k < METRICS_CR_NKINDS; k++)
        for (int o = 0; o < METRICS_CR_NOPS; o++)
            for (int r = 0; r < METRICS_CR_NRESULTS; r++)
                sbuf_printf(f, "otel_webhook_cr_admissions_total{kind=\"%s\",operation=\"%s\",result=\"%s\"} %lu\n",
                            metrics_cr_kinds[k], metrics_cr_ops[o], metrics_cr_results[r],
                            atomic_load(&cr_admissions[k][o][r]));
    family(f, "otel_webhook_cr_denials_total", "counter", "Custom resource admissions refused, by kind and rule.");
    for (int k = 0; k < METRICS_CR_NKINDS; k++)
        for (int r = 0; cr_rules[k][r]; r++)
            sbuf_printf(f, "otel_webhook_cr_denials_total{kind=\"%s\",rule=\"%s\"} %lu\n", metrics_cr_kinds[k],
                        cr_rules[k][r], atomic_load(&cr_denials[k][r]));
    family(f, "otel_webhook_cr_admission_duration_seconds", "histogram",
           "Time to answer a custom resource admission, body parsed to response built (access reviews included).");
    unsigned long cum = 0;
    for (size_t i = 0; i < CR_NBUCKETS; i++) {
        cum += atomic_load(&cr_buckets[i]);
        sbuf_printf(f, "otel_webhook_cr_admission_duration_seconds_bucket{le=\"%g\"} %lu\n", cr_bounds[i], cum);
    }
    cum += atomic_load(&cr_buckets[CR_NBUCKETS]);
    sbuf_printf(f, "otel_webhook_cr_admission_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
    sbuf_printf(f, "otel_webhook_cr_admission_duration_seconds_sum %.9f\n", (double)atomic_load(&cr_sum_ns) / 1e9);
    sbuf_printf(f, "otel_webhook_cr_admission_duration_seconds_count %lu\n", atomic_load(&cr_count));
}

char *metrics_render(const metrics_gauges *g, size_t *len) {
    sbuf b = SBUF_INIT, *f = &b;
    render_build_info(f);
    family(f, "otel_webhook_requests_total", "counter", "Admission requests answered, by result.");
    for (int i = 0; i < METRICS_NRESULTS; i++)
        sbuf_printf(f, "otel_webhook_requests_total{result=\"%s\"} %lu\n", result_names[i], atomic_load(&requests[i]));
    family(f, "otel_webhook_injections_total", "counter", "Pods injected, by language, and with a collector sidecar.");
    for (int l = 0; l < MUTATE_NLANGS; l++)
        sbuf_printf(f, "otel_webhook_injections_total{what=\"%s\"} %lu\n", mutate_lang_name(l),
                    atomic_load(&injections[l]));
    sbuf_printf(f, "otel_webhook_injections_total{what=\"sidecar\"} %lu\n",
                atomic_load(&sidecars[0]) + atomic_load(&sidecars[1]));
    family(f, "otel_webhook_sidecar_injections_total", "counter",
           "Pods given a collector sidecar, by form: a plain container or a native sidecar.");
    for (int m = 0; m < 2; m++)
        sbuf_printf(f, "otel_webhook_sidecar_injections_total{mode=\"%s\"} %lu\n", sidecar_modes[m],
                    atomic_load(&sidecars[m]));
    family(f, "otel_webhook_skips_total", "counter", "Parts of pods left out, by reason (see the warnings).");
    for (int s = 0; s < MUTATE_NSKIPS; s++)
        sbuf_printf(f, "otel_webhook_skips_total{reason=\"%s\"} %lu\n", skip_names[s], atomic_load(&skips[s]));
    family(f, "otel_webhook_limits_exceeded_total", "counter",
           "Pods left alone because they were past a bound, by bound (docs/serve.md: Bounds).");
    for (int l = 1; l < MUTATE_NLIMITS; l++)
        sbuf_printf(f, "otel_webhook_limits_exceeded_total{limit=\"%s\"} %lu\n", mutate_limit_name(l),
                    atomic_load(&limits[l]));
    family(f, "otel_webhook_errors_total", "counter", "Errors, by kind.");
    for (int e = 0; e < METRICS_NERRORS; e++)
        sbuf_printf(f, "otel_webhook_errors_total{kind=\"%s\"} %lu\n", error_names[e],
                    atomic_load(&errors[e]) + g->h2o_errors[e]);
    family(f, "otel_webhook_mutation_cache_lookups_total", "counter",
           "Lookups in the event loops' mutation caches, by part and result (hit: built before, miss: built now).");
    for (int p = 0; p < 2; p++) {
        sbuf_printf(f, "otel_webhook_mutation_cache_lookups_total{part=\"%s\",result=\"hit\"} %lu\n", cache_parts[p],
                    atomic_load(&cache_hits[p]));
        sbuf_printf(f, "otel_webhook_mutation_cache_lookups_total{part=\"%s\",result=\"miss\"} %lu\n", cache_parts[p],
                    atomic_load(&cache_misses[p]));
    }
    family(f, "otel_webhook_mutation_cache_evictions_total", "counter",
           "Entries the mutation caches let go to stay within their bounds, by part.");
    for (int p = 0; p < 2; p++)
        sbuf_printf(f, "otel_webhook_mutation_cache_evictions_total{part=\"%s\"} %lu\n", cache_parts[p],
                    atomic_load(&cache_evictions[p]));
    family(f, "otel_webhook_mutation_cache_entries", "gauge", "Entries the mutation caches hold, every loop's, by part.");
    for (int p = 0; p < 2; p++)
        sbuf_printf(f, "otel_webhook_mutation_cache_entries{part=\"%s\"} %ld\n", cache_parts[p],
                    atomic_load(&cache_entries[p]));
    family(f, "otel_webhook_mutation_cache_bytes", "gauge",
           "What the mutation caches hold, estimated in bytes (objects and their kept text), by part.");
    for (int p = 0; p < 2; p++)
        sbuf_printf(f, "otel_webhook_mutation_cache_bytes{part=\"%s\"} %ld\n", cache_parts[p], atomic_load(&cache_bytes[p]));
    family(f, "otel_webhook_accept_paused_total", "counter",
           "Times accepting stopped for 100 ms because the process had no file descriptor left.");
    sbuf_printf(f, "otel_webhook_accept_paused_total %lu\n", atomic_load(&accept_pauses));
    family(f, "otel_webhook_request_duration_seconds", "histogram",
           "Time to answer an admission request, body parsed to response built.");
    unsigned long cum = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        cum += atomic_load(&buckets[i]);
        sbuf_printf(f, "otel_webhook_request_duration_seconds_bucket{le=\"%g\"} %lu\n", bounds[i], cum);
    }
    cum += atomic_load(&buckets[NBUCKETS]);
    sbuf_printf(f, "otel_webhook_request_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
    sbuf_printf(f, "otel_webhook_request_duration_seconds_sum %.9f\n", (double)atomic_load(&sum_ns) / 1e9);
    sbuf_printf(f, "otel_webhook_request_duration_seconds_count %lu\n", atomic_load(&count));
    family(f, "otel_webhook_conversions_total", "counter",
           "ConversionReviews answered (POST /convert), by direction (the desired version) and result.");
    for (int d = 0; d < METRICS_NCONV; d++)
        for (int r = d == CONV_TO_OTHER; r < 2; r++) /* another version can only fail */
            sbuf_printf(f, "otel_webhook_conversions_total{direction=\"%s\",result=\"%s\"} %lu\n", conv_names[d],
                        r ? "failure" : "success", atomic_load(&conversions[d][r]));
    family(f, "otel_webhook_converted_objects_total", "counter",
           "OpenTelemetryCollectors converted by successful ConversionReviews, by direction.");
    for (int d = 0; d < CONV_TO_OTHER; d++)
        sbuf_printf(f, "otel_webhook_converted_objects_total{direction=\"%s\"} %lu\n", conv_names[d],
                    atomic_load(&converted_objects[d]));
    family(f, "otel_webhook_certificate_expiry_timestamp_seconds", "gauge",
           "Expiry of the serving certificate in use (Unix time).");
    if (g->cert_not_after > 0)
        sbuf_printf(f, "otel_webhook_certificate_expiry_timestamp_seconds %.0f\n", g->cert_not_after);
    family(f, "otel_webhook_store_objects", "gauge", "Objects known, by kind.");
    for (int k = 0; k < 8; k++) sbuf_printf(f, "otel_webhook_store_objects{kind=\"%s\"} %zu\n", metrics_kinds[k], g->objects[k]);
    family(f, "otel_webhook_resource_files_failing", "gauge",
           "Resource files not in service as they are now (cannot be read, too large, do not parse): their last "
           "good content is in use.");
    sbuf_printf(f, "otel_webhook_resource_files_failing %d\n", g->failing_files);
    family(f, "otel_webhook_resource_folders_failing", "gauge",
           "Resource folders that cannot be listed: the last good content of their files is in use.");
    sbuf_printf(f, "otel_webhook_resource_folders_failing %d\n", g->failing_dirs);
    /* A point in time, not a duration: the age is time() minus it, and an
     * alert compares that with --resources-grace. */
    family(f, "otel_webhook_resource_read_failure_since_timestamp_seconds", "gauge",
           "Unix time from which every read of the resources has met a folder or file that cannot be read; no "
           "sample while the last one read everything. /readyz answers 503 from --resources-grace on.");
    if (g->unreadable_since > 0)
        sbuf_printf(f, "otel_webhook_resource_read_failure_since_timestamp_seconds %.3f\n", g->unreadable_since);
    family(f, "otel_webhook_ready", "gauge",
           "1 when the certificate and every source are loaded, and the resources have not been unreadable for "
           "--resources-grace.");
    sbuf_printf(f, "otel_webhook_ready %d\n", g->ready);
    family(f, "otel_webhook_request_bytes_in_flight", "gauge",
           "Memory the connections hold for requests now (input buffers and HTTP/2 request bodies, this scrape's "
           "own included); past --max-inflight-bytes new request bytes are refused.");
    sbuf_printf(f, "otel_webhook_request_bytes_in_flight %zu\n", g->inflight_bytes);
    render_cr(f);
    if (g->live) render_live(f, g->live);
    return sbuf_take(&b, len);
}
