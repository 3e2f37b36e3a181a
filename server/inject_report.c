/* server/inject_report.c - what became of each object `inject` looked at,
 * and the lines --report prints about it; see inject.h.
 *
 * The lines are for people and for grep alike, so their shape is fixed
 * (docs/cli.md, `otel-webhook inject`): "KIND NS/NAME: OUTCOME: DETAIL", one
 * word of a fixed set for the outcome, the skip reasons as the webhook's
 * metrics name them, then one summary line. */
#include "server/inject.h"

#include "base/alloc.h"
#include "base/sbuf.h"
#include "collector/container.h"
#include "server/metrics.h"

#include <stdlib.h>
#include <string.h>

static const char *const outcome_words[INJECT_NOUTCOMES] = {"injected", "changed", "skipped", "unchanged", "invalid"};

/* "java into app,web, sidecar otc-container": what went in, languages in
 * the engine's order; "" when nothing did. */
static void parts(sbuf *b, const mutate_result *res) {
    for (int l = 0; l < MUTATE_NLANGS; l++) {
        if (!res->ninto[l]) continue;
        sbuf_printf(b, "%s%s into ", b->len ? ", " : "", mutate_lang_name((mutate_lang_id)l));
        for (size_t i = 0; i < res->ninto[l]; i++) sbuf_printf(b, "%s%s", i ? "," : "", res->into[l][i]);
    }
    if (res->sidecar) sbuf_printf(b, "%ssidecar %s", b->len ? ", " : "", COLLECTOR_CONTAINER_NAME);
}

void inject_object_judge(inject_object *o, int mrc, const mutate_result *res) {
    /* Already instrumented is what a second run over the output finds: no
     * part was refused, so it is not a skip here. */
    unsigned skips = res->skips & ~(1u << MUTATE_SKIP_ALREADY_INSTRUMENTED);
    sbuf in = SBUF_INIT, d = SBUF_INIT;
    parts(&in, res);
    if (mrc != 0 || skips) {
        o->outcome = INJECT_SKIPPED;
        for (int s = 0; s < MUTATE_NSKIPS; s++)
            if (skips & (1u << s)) sbuf_printf(&d, "%s%s", d.len ? "," : "", metrics_skip_name((mutate_skip)s));
        if (in.len) sbuf_printf(&d, "; injected: %s", in.s);
    } else if (in.len) {
        o->outcome = INJECT_INJECTED;
        sbuf_puts(&d, in.s);
    } else if (!res->asked) {
        o->outcome = INJECT_UNCHANGED;
        sbuf_puts(&d, "nothing asked");
    } else if (json_object_array_length(res->patch)) {
        /* The one change that injects nothing: sidecar.opentelemetry.io/inject: "false". */
        o->outcome = INJECT_CHANGED;
        sbuf_puts(&d, "sidecar removed");
    } else {
        o->outcome = INJECT_UNCHANGED;
        sbuf_puts(&d, res->skips ? "already instrumented" : "nothing to do");
    }
    sbuf_free(&in);
    free(o->detail);
    o->detail = sbuf_take(&d, NULL);
}

void inject_object_invalid(inject_object *o, const char *why) {
    o->outcome = INJECT_INVALID;
    free(o->detail);
    o->detail = xstrdup(why);
}

void inject_object_free(inject_object *o) {
    free(o->kind);
    free(o->ns);
    free(o->name);
    free(o->detail);
}

void inject_report(FILE *f, const inject_object *objs, size_t n) {
    size_t count[INJECT_NOUTCOMES] = {0};
    for (size_t i = 0; i < n; i++) {
        const inject_object *o = &objs[i];
        fprintf(f, "%s %s/%s: %s: %s\n", o->kind, o->ns, o->name, outcome_words[o->outcome], o->detail);
        count[o->outcome]++;
    }
    fprintf(f, "%zu object%s: %zu injected, %zu skipped, %zu unchanged", n, n == 1 ? "" : "s", count[INJECT_INJECTED],
            count[INJECT_SKIPPED], count[INJECT_UNCHANGED]);
    /* Rare outcomes only when they happened, so the usual line stays short. */
    if (count[INJECT_CHANGED]) fprintf(f, ", %zu changed", count[INJECT_CHANGED]);
    if (count[INJECT_INVALID]) fprintf(f, ", %zu invalid", count[INJECT_INVALID]);
    fputc('\n', f);
}
