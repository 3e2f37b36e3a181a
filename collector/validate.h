/* collector/validate.h - the reference's OpenTelemetryCollector validation
 * (cr-admission.md 3): one function for the validating webhook, for
 * `otel-webhook validate` and for otel-reconcile, which refuses to render
 * what the webhook would have refused, with the same message.
 *
 * Pure: the two checks that need the cluster's authorizer (the target
 * allocator's ServiceAccount, 3.3 step 9, and the privilege-escalation
 * check, 3.7) ask through a callback table, which the server backs with
 * SubjectAccessReviews; without one they are not made. */
#ifndef COLLECTOR_VALIDATE_H
#define COLLECTOR_VALIDATE_H

#include "base/verdict.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* Who asks: a user from the admission request, or a ServiceAccount. */
typedef struct collector_subject {
    const char *user;
    const char *uid;           /* may be NULL */
    const char *const *groups;
    size_t ngroups;
    json_object *extra;        /* userInfo.extra, a map of string lists; may be NULL */
} collector_subject;

/* May `who` do verb on resource ("pods", "nodes/stats") of group, cluster
 * wide, or (resource NULL) on the non-resource URL path? 1 yes, 0 no, -1
 * could not be asked (the reason in err). */
typedef struct collector_access {
    int (*allowed)(void *ud, const collector_subject *who, const char *verb, const char *group, const char *resource,
                   const char *path, char *err, size_t errlen);
    void *ud;
} collector_access;

typedef struct collector_validate_opts {
    const collector_access *access; /* NULL: no authorizer checks */
    const collector_subject *user;  /* the requesting user, for 3.7; NULL skips 3.7 */
    int cert_manager;               /* 1 installed, 0 not, -1 not known (3.3 step 8's first check skipped) */
    const char *fips_disabled;      /* fips-disabled-components ("receiver.otlp,exporter.x"); NULL: none */
    bool schema;                    /* also the CRD's own rules (3.9) for callers the API server is not in front of */
    const char *ns;                 /* the namespace when metadata names none */
} collector_validate_opts;

/* Validates collector, defaulted (collector_default_spec), as a CREATE,
 * an UPDATE of old, or a DELETE (always allowed: spec 8.2). A collector
 * past the bounds of collector/defaults.h is refused first (rule
 * "bounds"): nothing of ours could build it. Fills *v
 * (VERDICT_INIT before); returns 0 when allowed, -1 when refused. Every
 * rule is evaluated in the reference's order and the first refusal wins;
 * warnings found before it are kept. */
int collector_validate(json_object *collector, json_object *old, verdict_op op, const collector_validate_opts *o,
                       verdict *v);

/* A collector whose v1alpha1 config string did not read and is still the
 * empty config that replaced it (collector/convert.h keeps the text in an
 * annotation; spec 8.6): -1 with rule "config" and why the text does not
 * read, else 0. collector_validate checks it too; the mutating webhook
 * asks before defaulting, since the v1alpha1 round trip after it loses the
 * annotation. */
int collector_check_unread_config(json_object *collector, verdict *v);

/* The build-validator warnings (3.8), for CREATE and UPDATE once validation
 * passed: what building the collector's objects would fail on. */
void collector_build_warnings(json_object *collector, verdict *v);

/* spec.ports-style entries ({name, port}) against the Kubernetes port rules
 * (3.4 a), refused as "the <owner> Spec Ports configuration is incorrect,
 * ..." with rule id `rule`. Returns 0, or -1 when refused. */
int collector_check_spec_ports(json_object *ports, const char *owner, const char *rule, verdict *v);

#endif
