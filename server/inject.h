/* server/inject.h - what the files of `otel-webhook inject` share.
 *
 * The input is files (each -f FILE, every manifest of a -f DIR, standard
 * input) cut into documents that remember where they came from; the
 * command walks the objects in them (each document, and each item of a
 * kind: List) and keeps one record per Pod or workload it gave the engine;
 * the output writes the documents back, unchanged ones as their original
 * bytes.
 *
 *   inject_input.c   reading files and folders into documents (inject_input.h,
 *                    shared with `otel-webhook validate`)
 *   inject_report.c  what happened to each object, and --report's lines
 *   inject_output.c  -o yaml and -o json
 *   cmd_inject.c     the command line and the walk over the objects
 *
 * `uninject` (cmd_uninject.c) and `explain` (cmd_explain.c) read and write
 * the same way. */
#ifndef SERVER_INJECT_H
#define SERVER_INJECT_H

#include "kube/log.h"
#include "kube/store.h"
#include "kube/trim.h"
#include "mutate/mutate.h"
#include "server/inject_input.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Where a kind keeps its pod template (Deployment, StatefulSet, DaemonSet,
 * ReplicaSet, Job: spec.template; CronJob: spec.jobTemplate.spec.template);
 * NULL for kinds without one. */
json_object *inject_template_of(json_object *o, const char *kind);

/* The pod the webhook would be asked about for a workload's template: the
 * template, with the workload as its owner (new object). */
json_object *inject_stand_in(json_object *o, const char *kind, json_object *tmpl);
/* The Instrumentation, OpenTelemetryCollector and Namespace objects of the
 * input (Lists' items included) as the store's input layer. */
void inject_input_resources(const inject_input *in, kube_store *store, const kube_prepare *prep, const char *ns,
                            const kube_logger *log);

/* What became of one object. */
typedef enum inject_outcome {
    INJECT_INJECTED,  /* everything asked for went in */
    INJECT_CHANGED,   /* changed without injecting: a sidecar removed */
    INJECT_SKIPPED,   /* a part asked for was left out (or the pod is past a bound) */
    INJECT_UNCHANGED, /* nothing asked, already instrumented, nothing to do */
    INJECT_INVALID,   /* not a usable object: the reason was printed */
    INJECT_NOUTCOMES
} inject_outcome;

#define INJECT_NO_ITEM ((size_t)-1)

/* One Pod or workload the command looked at. */
typedef struct inject_object {
    const char *file; /* the inject_file's name */
    int line;
    size_t doc, item; /* docs[doc], or item `item` of its List (INJECT_NO_ITEM: the document itself) */
    char *kind, *ns, *name; /* owned: the object itself may be replaced */
    inject_outcome outcome;
    char *detail;     /* owned: the report's text after the outcome */
} inject_object;

/* Sets o->outcome and o->detail from mutate_pod's return and result. */
void inject_object_judge(inject_object *o, int mrc, const mutate_result *res);
/* Sets an INJECT_INVALID outcome with its reason. */
void inject_object_invalid(inject_object *o, const char *why);
void inject_object_free(inject_object *o);
/* --report: one line per object, then the counts. */
void inject_report(FILE *f, const inject_object *objs, size_t n);

/* -o yaml: documents the engine did not change as the bytes they were,
 * the others written anew; see docs/cli.md for what is kept. */
void inject_write_yaml(FILE *f, const inject_input *in);
/* -o json: one document as itself, several as the items of one List. */
void inject_write_json(FILE *f, const inject_input *in);

#endif
