/* tests/unit/engine_fixture.h - running the engine from YAML in tests.
 *
 * Resources are loaded through the real file-source parser into a store, so
 * defaulting and trimming are exercised exactly as in production. Every run
 * is checked for idempotency (mutating the result again changes nothing),
 * run again twice through the test's mutation cache (the same patch, pod
 * and warnings as without it) and, when OTEL_CASES_DIR is set, written out
 * for tests/unit/roundtrip.py. */
#ifndef TESTS_ENGINE_FIXTURE_H
#define TESTS_ENGINE_FIXTURE_H

#include "mutate/mutate.h"

#include <json-c/json.h>

typedef struct fx_run {
    mutate_result res;
    json_object *pod;    /* input */
    char *warnings;      /* all warnings joined by "\n" */
} fx_run;

void fx_setup(void);
void fx_teardown(void);
/* Replaces the resources with the objects of a YAML stream. */
void fx_resources(const char *yaml);
mutate_options *fx_options(void);
/* The test's mutation cache (mutate.h), kept from fx_setup to fx_teardown
 * across fx_resources; fx_cache_reset replaces it with a new one. */
mutate_cache *fx_cache(void);
void fx_cache_reset(size_t entries, size_t max_bytes);
/* Mutates the pod in YAML; ns is the request namespace. */
fx_run *fx_mutate(const char *name, const char *pod_yaml, const char *ns);
void fx_free(fx_run *r);
/* mutate_record_stale on pod with the current resources. */
int fx_stale(json_object *pod, const char *ns, char ***why);

/* Views of the result, as text for exact comparisons. */
json_object *fx_container(fx_run *r, const char *list, const char *name); /* list: "containers" or "initContainers" */
char *fx_env(json_object *c);     /* one line per entry: NAME=value, NAME<fieldPath, NAME<<resource */
char *fx_names(fx_run *r, const char *list); /* container/volume names joined by "," */
char *fx_mounts(json_object *c);  /* name:path lines */
char *fx_into(fx_run *r);         /* res.into: "lang:c1,c2 lang:c3", languages in id order */
char *fx_json(json_object *o);

/* Compares a malloc'ed string with the expectation and frees it. */
#define EQ(got_expr, want)                                                                                             \
    do {                                                                                                               \
        char *got_ = (got_expr);                                                                                       \
        ck_assert_str_eq(got_, want);                                                                                  \
        free(got_);                                                                                                    \
    } while (0)
#endif
