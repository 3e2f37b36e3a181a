/* tests/unit/engine_fixture.c - see engine_fixture.h. */
#include "tests/unit/engine_fixture.h"

#include "kube/filesource.h"
#include "kube/reader.h"
#include "kube/store.h"
#include "kube/yaml.h"
#include "mutate/defaults.h"
#include "mutate/record.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static kube_store *store;
static mutate_settings cfg;
static int case_no;
/* One for the whole test, as a server loop keeps one across reloads of
 * the resources: what a test replaces must not be served from it. */
static mutate_cache *cache;

void fx_setup(void) {
    mutate_settings_init(&cfg);
    store = kube_store_new();
    cache = mutate_cache_new(0, 0);
}

void fx_teardown(void) {
    kube_store_free(store);
    mutate_settings_free(&cfg);
    mutate_cache_free(cache);
    cache = NULL;
}

mutate_cache *fx_cache(void) { return cache; }

void fx_cache_reset(size_t entries, size_t max_bytes) {
    mutate_cache_free(cache);
    cache = mutate_cache_new(entries, max_bytes);
}

mutate_options *fx_options(void) { return &cfg.opt; }

void fx_resources(const char *yaml) {
    json_object **objs = NULL;
    size_t n = 0;
    char err[512];
    int rc = kube_manifest_objects("resources.yaml", yaml, strlen(yaml), &MUTATE_PREPARE(&cfg), "default", NULL, &objs, &n, err, sizeof err);
    ck_assert_msg(rc == 0, "resources: %s", err);
    kube_store_set_layer(store, KUBE_LAYER_FILES, objs, n);
}

char *fx_json(json_object *o) {
    return strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

static void dump_case(const char *name, json_object *pod, mutate_result *res) {
    const char *dir = getenv("OTEL_CASES_DIR");
    if (!dir) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s-%d.json", dir, name, ++case_no);
    json_object *c = json_object_new_object();
    json_object_object_add(c, "name", json_object_new_string(name));
    json_object_object_add(c, "pod", json_object_get(pod));
    json_object_object_add(c, "patch", json_object_get(res->patch));
    json_object_object_add(c, "mutated", json_object_get(res->pod));
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(json_object_to_json_string_ext(c, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE), f);
        fclose(f);
    }
    json_object_put(c);
}

/* Every injection carries its record, and the record undoes it exactly;
 * without the record the engine still recognises its own work. */
static void round_trip(const char *name, mutate_request *req, fx_run *r) {
    const char *why;
    json_object *had = mutate_record_read(r->pod, &why);
    json_object_put(had);
    if (had && !json_object_array_length(r->res.patch)) return; /* left alone through its record */
    json_object *rec = mutate_record_read(r->res.pod, &why);
    bool want = req->opt->record && (r->res.injected || r->res.sidecar);
    ck_assert_msg(!why, "%s: unreadable record: %s", name, why);
    ck_assert_msg(want == (rec != NULL), "%s: record %s", name, rec ? "written without an injection" : "missing");
    if (!rec) return;
    char err[256] = "";
    json_object *back = mutate_uninject(r->res.pod, rec, err, sizeof err);
    ck_assert_msg(back != NULL, "%s: uninject: %s", name, err);
    char *a = fx_json(back), *b = fx_json(r->pod);
    ck_assert_msg(json_object_equal(back, r->pod), "%s: uninject gives\n%s\ninstead of\n%s", name, a, b);
    free(a);
    free(b);
    json_object_put(back);

    json_object *bare = NULL;
    json_object_deep_copy(r->res.pod, &bare, NULL);
    json_object *ann = json_object_object_get(json_object_object_get(bare, "metadata"), "annotations");
    json_object_object_del(ann, MUTATE_RECORD_KEY);
    mutate_options opt = *req->opt;
    opt.record = false;
    mutate_request again_req = *req;
    again_req.pod = bare;
    again_req.opt = &opt;
    mutate_result again;
    mutate_pod(&again_req, &again);
    char *p = fx_json(again.patch);
    ck_assert_msg(json_object_array_length(again.patch) == 0, "%s: not idempotent without the record: %s", name, p);
    free(p);
    mutate_result_free(&again);
    json_object_put(bare);
    json_object_put(rec);
}

static char *joined(const mutate_result *res) {
    size_t len = 1;
    for (size_t i = 0; i < res->nwarnings; i++) len += strlen(res->warnings[i]) + 1;
    char *s = calloc(1, len);
    for (size_t i = 0; i < res->nwarnings; i++) {
        if (i) strcat(s, "\n");
        strcat(s, res->warnings[i]);
    }
    return s;
}

/* The same request through the cache, twice (the first may build and keep
 * the collector's part, the second is served from it): the same patch, as
 * operations and as text, the same pod and warnings as without the cache.
 * A request that edited what the cache holds shows in the second. */
/* got and want from where they first differ (Check's messages are short). */
static void same_text(const char *name, const char *what, const char *got, const char *want) {
    if (!got || !want) {
        ck_assert_msg(got == want, "%s: through the cache the %s is %s", name, what, got ? "there" : "missing");
        return;
    }
    size_t i = 0;
    while (got[i] && got[i] == want[i]) i++;
    size_t from = i > 80 ? i - 80 : 0;
    ck_assert_msg(got[i] == want[i], "%s: through the cache the %s differs at byte %zu:\n...%.240s\ninstead of\n...%.240s",
                  name, what, i, got + from, want + from);
}

static char *patch_of(const mutate_result *res, bool text) {
    if (!text) return fx_json(res->patch);
    return res->patch_text ? strndup(res->patch_text, res->patch_len) : strdup("[]");
}

static void through_cache(const char *name, const mutate_request *plain, const mutate_result *want) {
    char *want_pod = want->pod ? fx_json(want->pod) : NULL, *want_w = joined(want);
    for (int text = 0; text < 2; text++) {
        char *want_patch;
        if (text) { /* the engine's own text: its reference is a run without the cache */
            mutate_request req = *plain;
            req.patch_text = true;
            mutate_result ref;
            mutate_pod(&req, &ref);
            want_patch = patch_of(&ref, true);
            mutate_result_free(&ref);
        } else {
            want_patch = patch_of(want, false);
        }
        for (int i = 0; i < 2; i++) {
            mutate_request req = *plain;
            req.cache = cache;
            req.patch_text = text;
            mutate_result got;
            mutate_pod(&req, &got);
            char *patch = patch_of(&got, text);
            char *pod = got.pod ? fx_json(got.pod) : NULL, *w = joined(&got);
            same_text(name, text ? "patch text" : "patch", patch, want_patch);
            /* With patch_text the pod is not kept (mutate.h): none wanted. */
            same_text(name, "pod", pod, text ? NULL : want_pod);
            same_text(name, "warnings", w, want_w);
            ck_assert_msg(got.sidecar == want->sidecar && got.injected == want->injected && got.skips == want->skips,
                          "%s: through the cache the result differs", name);
            free(patch);
            free(pod);
            free(w);
            mutate_result_free(&got);
        }
        free(want_patch);
    }
    free(want_pod);
    free(want_w);
}

fx_run *fx_mutate(const char *name, const char *pod_yaml, const char *ns) {
    fx_run *r = calloc(1, sizeof *r);
    kube_yaml_error ye;
    r->pod = kube_yaml_parse_one(pod_yaml, strlen(pod_yaml), &ye);
    ck_assert_msg(r->pod != NULL, "pod yaml line %d: %s", ye.line, ye.msg);
    kube_view v = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, v.snap);
    mutate_request req = {.pod = r->pod, .namespace = ns, .src = &src, .opt = &cfg.opt};
    req.ns = kube_snapshot_get(v.snap, "Namespace", NULL, ns);
    mutate_pod(&req, &r->res);
    r->warnings = joined(&r->res);
    through_cache(name, &req, &r->res);
    /* The API server may call twice: the second call must change nothing. */
    if (r->res.pod) {
        mutate_result again;
        req.pod = r->res.pod;
        mutate_pod(&req, &again);
        char *p = fx_json(again.patch);
        ck_assert_msg(json_object_array_length(again.patch) == 0, "%s: not idempotent, second patch: %s", name, p);
        free(p);
        mutate_result_free(&again);
        round_trip(name, &req, r);
    }
    kube_store_release(store, &v);
    dump_case(name, r->pod, &r->res);
    return r;
}

int fx_stale(json_object *pod, const char *ns, char ***why) {
    kube_view v = kube_store_acquire(store);
    kube_reader src;
    kube_reader_snapshot(&src, v.snap);
    mutate_request req = {.pod = pod, .namespace = ns, .src = &src, .opt = &cfg.opt};
    req.ns = kube_snapshot_get(v.snap, "Namespace", NULL, ns);
    int n = mutate_record_stale(&req, why);
    kube_store_release(store, &v);
    return n;
}

void fx_free(fx_run *r) {
    mutate_result_free(&r->res);
    json_object_put(r->pod);
    free(r->warnings);
    free(r);
}

static json_object *get(json_object *o, const char *k) {
    json_object *v = NULL;
    return json_object_object_get_ex(o, k, &v) ? v : NULL;
}

json_object *fx_container(fx_run *r, const char *list, const char *name) {
    json_object *arr = get(get(r->res.pod, "spec"), list);
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *c = json_object_array_get_idx(arr, i);
        if (!strcmp(json_object_get_string(get(c, "name")), name)) return c;
    }
    ck_abort_msg("no %s named %s", list, name);
    return NULL;
}

char *fx_env(json_object *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_object *env = get(c, "env");
    for (size_t i = 0; env && i < json_object_array_length(env); i++) {
        json_object *e = json_object_array_get_idx(env, i), *vf = get(e, "valueFrom");
        const char *name = json_object_get_string(get(e, "name"));
        if (get(e, "value")) fprintf(f, "%s=%s\n", name, json_object_get_string(get(e, "value")));
        else if (get(vf, "fieldRef"))
            fprintf(f, "%s<%s\n", name, json_object_get_string(get(get(vf, "fieldRef"), "fieldPath")));
        else if (get(vf, "resourceFieldRef"))
            fprintf(f, "%s<<%s\n", name, json_object_get_string(get(get(vf, "resourceFieldRef"), "resource")));
        else fprintf(f, "%s?\n", name);
    }
    fclose(f);
    return buf;
}

char *fx_names(fx_run *r, const char *list) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_object *arr = get(get(r->res.pod, "spec"), list);
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++)
        fprintf(f, "%s%s", i ? "," : "", json_object_get_string(get(json_object_array_get_idx(arr, i), "name")));
    fclose(f);
    return buf;
}

char *fx_into(fx_run *r) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    const char *sep = "";
    for (int l = 0; l < MUTATE_NLANGS; l++) {
        if (!r->res.ninto[l]) continue;
        fprintf(f, "%s%s:", sep, mutate_lang_name(l));
        for (size_t i = 0; i < r->res.ninto[l]; i++) fprintf(f, "%s%s", i ? "," : "", r->res.into[l][i]);
        sep = " ";
    }
    fclose(f);
    return buf;
}

char *fx_mounts(json_object *c) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_object *arr = get(c, "volumeMounts");
    for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
        json_object *m = json_object_array_get_idx(arr, i);
        fprintf(f, "%s:%s%s\n", json_object_get_string(get(m, "name")), json_object_get_string(get(m, "mountPath")),
                get(m, "readOnly") ? ":ro" : "");
    }
    fclose(f);
    return buf;
}
