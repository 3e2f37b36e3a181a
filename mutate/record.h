/* mutate/record.h - the status record: what one injection did to a pod,
 * kept on the pod as the otel-webhook/status annotation, and what reads it
 * back (the engine's re-invocation check, uninject, explain, outdated).
 *
 * The record is derived, not collected: it is what the request pod and the
 * engine's mutated pod differ by, so it does not depend on how the engine
 * edits the pod. The engine writes it from the patch diff's own log of
 * what it found (record_log.c); mutate_record_apply, and the engine for
 * what the log form does not cover, compare the two pods (record.c), with
 * the same bytes. It lists the containers, init containers and
 * volumes added; per existing container the env names and mount paths
 * added, the original entries of every variable rewritten (JAVA_TOOL_OPTIONS,
 * NODE_OPTIONS, PYTHONPATH, ...) and the original value of any other field
 * changed (a Python command); the original value of anything else changed
 * in the pod (a label, shareProcessNamespace) as JSON pointers; the
 * Instrumentations and the collector used, with their versions; the images
 * added; the engine version. Pure: no I/O, no globals. */
#ifndef MUTATE_RECORD_H
#define MUTATE_RECORD_H

#include "mutate/mutate.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define MUTATE_RECORD_KEY "otel-webhook/status"
#define MUTATE_RECORD_VERSION 1

/* When something was injected (res->injected, res->sidecar): builds the record of orig -> res->pod,
 * puts it into res->pod (a new top-level object; the patch's values are
 * not touched) and appends the operation that adds it to res->patch. */
void mutate_record_apply(json_object *orig, mutate_result *res);

/* The record's budget: the API server keeps at most 256 KiB of a pod's
 * annotations together (TotalAnnotationSizeLimitB), so no stored pod can
 * carry a longer one, and the longest our injection writes for the
 * largest pod within mutate.h's bounds is far less (docs/cli.md, "The status
 * record"). Objects and lists are counted before parsing: json-c spends
 * about 800 bytes on each, and a legitimate record's smallest (an env
 * entry) takes 20 bytes of text. */
#define MUTATE_RECORD_MAX_BYTES (256 * 1024)
#define MUTATE_RECORD_MAX_NESTS 16384

/* The pod's record, parsed (owned), or NULL. A record that is there but
 * unreadable (not a string, not JSON, an unknown version) gives NULL with
 * the reason in *why (static text); *why is NULL when there is none. */
json_object *mutate_record_read(json_object *pod, const char **why);

/* Whether rec proves itself against pod (record_check.c): everything it
 * says was added is ours and in the pod, everything it would put back is
 * of the shape injection replaces and adds no privilege, host access,
 * service account or namespace. False with the field at fault in err. */
bool mutate_record_check(json_object *pod, json_object *rec, char *err, size_t errlen);
/* Whether v (an object or list uninject would unset) holds nothing but our
 * label and record. */
bool mutate_record_only_ours(json_object *v);

/* Undoes what rec says was done to pod: returns the pod as it was before
 * the injection (a new tree; pod is not modified). The record's annotation
 * goes too. NULL with a reason in err when rec does not prove itself
 * (mutate_record_check), names a container the pod does not have (the pod
 * was changed since in ways uninject cannot undo exactly) or would unset
 * a field that holds more than ours. Linear in the record and the pod. */
json_object *mutate_uninject(json_object *pod, json_object *rec, char *err, size_t errlen);

/* Whether the record of req->pod is stale: req->pod is uninjected and
 * mutated again with req's resources and options, and the two records'
 * resources (kind, language, namespace/name, version) and images compared.
 * Returns the number of differences, each a sentence in (*why)[i] (owned,
 * free with mutate_strings_free); 0 when current; -1 when the pod has no
 * readable record (*why then NULL). */
int mutate_record_stale(const mutate_request *req, char ***why);
/* mutate_record_stale, and what of it the pod itself shows, in *seen
 * (*nseen sentences, owned): the images of the containers and init
 * containers today's injection adds against the pod's own, the ones the
 * pod has that it would no longer add, and the values of the variables it
 * sets (those derived from the pod's name or owner left out) against the
 * pod's. A record can claim anything; this is what a restart would change
 * (outdated --restart acts on it alone). */
int mutate_record_stale_seen(const mutate_request *req, char ***why, char ***seen, size_t *nseen);
void mutate_strings_free(char **v, size_t n);

/* The digest of a resource's spec the record keeps (16 hex digits and a
 * NUL), independent of the order of keys. The store's preparation step
 * computes it once per object (MUTATE_SPEC_HASH, mutate/defaults.c), so an
 * admission reads it instead of walking the spec. */
#define MUTATE_SPEC_HASH "@specHash"
void mutate_spec_hash(json_object *spec, char out[17]);

#endif
