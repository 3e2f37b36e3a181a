/* server/metrics.c - counters, latency histogram and their text format. */
#include "server/metrics.h"

#include "base/sbuf.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

static const char *const result_names[METRICS_NRESULTS] = {"mutated", "unchanged", "ignored", "failed_open",
                                                           "rejected"};
static const char *const error_names[METRICS_NERRORS] = {"bad_request", "too_large", "method_not_allowed",
                                                         "not_found", "internal", "resource_file",
                                                         "certificate_reload", "ambiguous_framing", "http2_budget"};
static const char *const skip_names[MUTATE_NSKIPS] = {"already_instrumented", "not_found", "ambiguous",
                                                      "disabled", "invalid", "container", "lookup", "limit",
                                                      "malformed"};
const char *const metrics_kinds[8] = {"Namespace", "Instrumentation", "OpenTelemetryCollector", "Secret",
                                      "ConfigMap", "ReplicaSet", "Job", "Deployment"};

/* Sub-millisecond buckets first: a mutation takes tens of microseconds. */
static const double bounds[] = {0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1};
#define NBUCKETS (sizeof bounds / sizeof bounds[0])

static atomic_ulong requests[METRICS_NRESULTS], errors[METRICS_NERRORS], skips[MUTATE_NSKIPS];
static atomic_ulong injections[MUTATE_NLANGS], sidecars[2], limits[MUTATE_NLIMITS];
static atomic_ulong buckets[NBUCKETS + 1], count;
static atomic_ullong sum_ns;
static atomic_ulong accept_pauses;

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

void metrics_error(metrics_err e) { atomic_fetch_add_explicit(&errors[e], 1, memory_order_relaxed); }

void metrics_accept_paused(void) { atomic_fetch_add_explicit(&accept_pauses, 1, memory_order_relaxed); }

/* Series of the live cluster source, only when it runs. */
static void render_live(sbuf *f, const kube_live_stats *l) {
    sbuf_puts(f, "# HELP otel_webhook_watch_synced 1 once the resource was listed from the API server.\n"
                 "# TYPE otel_webhook_watch_synced gauge\n");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_synced{resource=\"%s\"} %d\n", l->res[i].name, l->res[i].synced);
    sbuf_puts(f, "# HELP otel_webhook_watch_restarts_total Watches reopened after an error, a drop or a stall.\n"
                 "# TYPE otel_webhook_watch_restarts_total counter\n");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_restarts_total{resource=\"%s\"} %lu\n", l->res[i].name, l->res[i].restarts);
    sbuf_puts(f, "# HELP otel_webhook_watch_relists_total LISTs after the first (410 Gone, errors).\n"
                 "# TYPE otel_webhook_watch_relists_total counter\n");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_relists_total{resource=\"%s\"} %lu\n", l->res[i].name, l->res[i].relists);
    sbuf_puts(f, "# HELP otel_webhook_watch_last_event_seconds Seconds since the last change seen (list or event); "
                 "-1 before the first.\n# TYPE otel_webhook_watch_last_event_seconds gauge\n");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_last_event_seconds{resource=\"%s\"} %.3f\n", l->res[i].name,
                l->res[i].since_event);
    sbuf_puts(f, "# HELP otel_webhook_watch_objects Objects held per watched resource.\n"
                 "# TYPE otel_webhook_watch_objects gauge\n");
    for (int i = 0; i < KUBE_LIVE_NRES; i++)
        sbuf_printf(f, "otel_webhook_watch_objects{resource=\"%s\"} %lu\n", l->res[i].name, l->res[i].objects);
    sbuf_puts(f, "# HELP otel_webhook_owner_lookups_total On-demand lookups (owners, exporter Secrets and ConfigMaps), by "
                 "outcome.\n# TYPE otel_webhook_owner_lookups_total counter\n");
    for (int i = 0; i < KUBE_LOOKUP_NRESULTS; i++)
        sbuf_printf(f, "otel_webhook_owner_lookups_total{result=\"%s\"} %lu\n", kube_lookup_names[i], l->lookups[i]);
    sbuf_puts(f, "# HELP otel_webhook_owner_lookup_duration_seconds Time of the on-demand GETs sent to the API server.\n"
                 "# TYPE otel_webhook_owner_lookup_duration_seconds histogram\n");
    unsigned long cum = 0;
    for (int i = 0; i < KUBE_LOOKUP_NBUCKETS; i++) {
        cum += l->lookup_buckets[i];
        sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_bucket{le=\"%g\"} %lu\n", kube_lookup_bounds[i], cum);
    }
    cum += l->lookup_buckets[KUBE_LOOKUP_NBUCKETS];
    sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
    sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_sum %.6f\n", l->lookup_seconds);
    sbuf_printf(f, "otel_webhook_owner_lookup_duration_seconds_count %lu\n", cum);
    sbuf_puts(f, "# HELP otel_webhook_live_publishes_total Live-layer snapshots published (bursts coalesced).\n"
                 "# TYPE otel_webhook_live_publishes_total counter\n");
    sbuf_printf(f, "otel_webhook_live_publishes_total %lu\n", l->publishes);
    sbuf_puts(f, "# HELP otel_webhook_native_sidecars 1 when the server's version enables native sidecars, 0 when not, -1 "
                 "not known yet (--native-sidecars auto).\n# TYPE otel_webhook_native_sidecars gauge\n");
    sbuf_printf(f, "otel_webhook_native_sidecars %d\n", l->native_sidecars);
}

char *metrics_render(const metrics_gauges *g, size_t *len) {
    sbuf b = SBUF_INIT, *f = &b;
    sbuf_puts(f, "# HELP otel_webhook_requests_total Admission requests answered, by result.\n"
                 "# TYPE otel_webhook_requests_total counter\n");
    for (int i = 0; i < METRICS_NRESULTS; i++)
        sbuf_printf(f, "otel_webhook_requests_total{result=\"%s\"} %lu\n", result_names[i], atomic_load(&requests[i]));
    sbuf_puts(f, "# HELP otel_webhook_injections_total Pods injected, by language or sidecar mode.\n"
                 "# TYPE otel_webhook_injections_total counter\n");
    for (int l = 0; l < MUTATE_NLANGS; l++)
        sbuf_printf(f, "otel_webhook_injections_total{what=\"%s\"} %lu\n", mutate_lang_name(l), atomic_load(&injections[l]));
    sbuf_printf(f, "otel_webhook_injections_total{what=\"sidecar\",mode=\"container\"} %lu\n", atomic_load(&sidecars[0]));
    sbuf_printf(f, "otel_webhook_injections_total{what=\"sidecar\",mode=\"native\"} %lu\n", atomic_load(&sidecars[1]));
    sbuf_puts(f, "# HELP otel_webhook_skips_total Parts of pods left out, by reason (see the warnings).\n"
                 "# TYPE otel_webhook_skips_total counter\n");
    for (int s = 0; s < MUTATE_NSKIPS; s++)
        sbuf_printf(f, "otel_webhook_skips_total{reason=\"%s\"} %lu\n", skip_names[s], atomic_load(&skips[s]));
    sbuf_puts(f, "# HELP otel_webhook_limits_exceeded_total Pods left alone because they were past a bound, by "
                 "bound (README: Bounds).\n# TYPE otel_webhook_limits_exceeded_total counter\n");
    for (int l = 1; l < MUTATE_NLIMITS; l++)
        sbuf_printf(f, "otel_webhook_limits_exceeded_total{limit=\"%s\"} %lu\n", mutate_limit_name(l),
                    atomic_load(&limits[l]));
    sbuf_puts(f, "# HELP otel_webhook_errors_total Errors, by kind.\n# TYPE otel_webhook_errors_total counter\n");
    for (int e = 0; e < METRICS_NERRORS; e++)
        sbuf_printf(f, "otel_webhook_errors_total{kind=\"%s\"} %lu\n", error_names[e], atomic_load(&errors[e]) + g->h2o_errors[e]);
    sbuf_puts(f, "# HELP otel_webhook_accept_paused_total Times accepting stopped for 100 ms because the process had no "
                 "file descriptor left.\n# TYPE otel_webhook_accept_paused_total counter\n");
    sbuf_printf(f, "otel_webhook_accept_paused_total %lu\n", atomic_load(&accept_pauses));
    sbuf_puts(f, "# HELP otel_webhook_request_duration_seconds Time to answer an admission request, body parsed to "
                 "response built.\n# TYPE otel_webhook_request_duration_seconds histogram\n");
    unsigned long cum = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        cum += atomic_load(&buckets[i]);
        sbuf_printf(f, "otel_webhook_request_duration_seconds_bucket{le=\"%g\"} %lu\n", bounds[i], cum);
    }
    cum += atomic_load(&buckets[NBUCKETS]);
    sbuf_printf(f, "otel_webhook_request_duration_seconds_bucket{le=\"+Inf\"} %lu\n", cum);
    sbuf_printf(f, "otel_webhook_request_duration_seconds_sum %.9f\n", (double)atomic_load(&sum_ns) / 1e9);
    sbuf_printf(f, "otel_webhook_request_duration_seconds_count %lu\n", atomic_load(&count));
    sbuf_puts(f, "# HELP otel_webhook_certificate_expiry_timestamp_seconds Expiry of the serving certificate in use.\n"
                 "# TYPE otel_webhook_certificate_expiry_timestamp_seconds gauge\n");
    sbuf_printf(f, "otel_webhook_certificate_expiry_timestamp_seconds %.0f\n", g->cert_not_after);
    sbuf_puts(f, "# HELP otel_webhook_store_objects Objects known, by kind.\n# TYPE otel_webhook_store_objects gauge\n");
    for (int k = 0; k < 8; k++) sbuf_printf(f, "otel_webhook_store_objects{kind=\"%s\"} %zu\n", metrics_kinds[k], g->objects[k]);
    sbuf_puts(f, "# HELP otel_webhook_resource_files_failing Resource files not in service as they are now (cannot be "
                 "read, too large, do not parse): their last good content is in use.\n"
                 "# TYPE otel_webhook_resource_files_failing gauge\n");
    sbuf_printf(f, "otel_webhook_resource_files_failing %d\n", g->failing_files);
    sbuf_puts(f, "# HELP otel_webhook_resource_folders_failing Resource folders that cannot be listed: the last good "
                 "content of their files is in use.\n# TYPE otel_webhook_resource_folders_failing gauge\n");
    sbuf_printf(f, "otel_webhook_resource_folders_failing %d\n", g->failing_dirs);
    sbuf_puts(f, "# HELP otel_webhook_resource_read_failure_seconds How long every read of the resources has met a folder "
                 "or file that cannot be read; 0 when the last one read everything. /readyz answers 503 from "
                 "--resources-grace on.\n# TYPE otel_webhook_resource_read_failure_seconds gauge\n");
    sbuf_printf(f, "otel_webhook_resource_read_failure_seconds %.3f\n", g->unreadable_seconds);
    sbuf_puts(f, "# HELP otel_webhook_ready 1 when the certificate and every source are loaded, and the resources have "
                 "not been unreadable for --resources-grace.\n"
                 "# TYPE otel_webhook_ready gauge\n");
    sbuf_printf(f, "otel_webhook_ready %d\n", g->ready);
    if (g->live) render_live(f, g->live);
    return sbuf_take(&b, len);
}
