/* reconcile/stream.h - `render` over a manifest stream: every document (and
 * every item of a kind: List) that is an OpenTelemetryCollector is rendered
 * and its objects printed as one YAML stream, in input order.
 *
 * Documents are split and parsed one by one, so a document that is not
 * valid YAML fails alone: the collectors around it are still rendered. */
#ifndef RECONCILE_STREAM_H
#define RECONCILE_STREAM_H

#include "reconcile/render.h"

#include <stddef.h>
#include <stdio.h>

typedef struct reconcile_stream_stats {
    size_t collectors; /* rendered */
    size_t failed;     /* documents or collectors that failed */
    size_t objects;    /* printed */
} reconcile_stream_stats;

/* Renders the manifests in text (named `name` in diagnostics) to out as
 * "---"-separated YAML documents. Diagnostics go to diag, one line each:
 * "NAME:LINE: reason" for failures, "NAME:LINE: warning: reason" for
 * warnings. */
void reconcile_render_stream(const char *name, const char *text, size_t len, const char *ns,
                             const reconcile_options *opt, FILE *out, FILE *diag, reconcile_stream_stats *stats);
#endif
