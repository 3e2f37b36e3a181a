/* mutate/bounds.c - the bounds of mutate.h, checked in one linear pass
 * before the engine does anything else, so that no later pass (copies,
 * lookups, the patch diff) ever walks more than a bounded amount.
 *
 * Only pods that ask for something are checked: a pod no annotation opts
 * in costs nothing here, whatever its size (what reading it may cost is
 * the server's budget, MUTATE_LIMIT_TREE_BYTES). Counting is cheap (array lengths,
 * commas); nothing is allocated. */
#include "mutate/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    size_t max;
} limits[MUTATE_NLIMITS] = {
    [MUTATE_LIMIT_NONE] = {"none", 0},
    [MUTATE_LIMIT_CONTAINERS] = {"containers", MUTATE_MAX_CONTAINERS},
    [MUTATE_LIMIT_ENV] = {"env", MUTATE_MAX_ENV},
    [MUTATE_LIMIT_ENV_TOTAL] = {"env_total", MUTATE_MAX_ENV_TOTAL},
    [MUTATE_LIMIT_VOLUME_MOUNTS] = {"volume_mounts", MUTATE_MAX_VOLUME_MOUNTS},
    [MUTATE_LIMIT_VOLUMES] = {"volumes", MUTATE_MAX_VOLUMES},
    [MUTATE_LIMIT_ANNOTATIONS] = {"annotations", MUTATE_MAX_ANNOTATIONS},
    [MUTATE_LIMIT_CONTAINER_NAMES] = {"container_names", MUTATE_MAX_CONTAINER_NAMES},
    [MUTATE_LIMIT_RESOURCE_ATTRIBUTES] = {"resource_attributes", MUTATE_MAX_RESOURCE_ATTRIBUTES},
    [MUTATE_LIMIT_TREE_BYTES] = {"tree_bytes", 0}, /* the server's --max-tree-bytes */
};

const char *mutate_limit_name(mutate_limit l) { return l < MUTATE_NLIMITS ? limits[l].name : "?"; }
size_t mutate_limit_max(mutate_limit l) { return l < MUTATE_NLIMITS ? limits[l].max : 0; }

static bool past(mctx *m, mutate_limit l, size_t n, const char *what) {
    if (n <= limits[l].max) return false;
    mctx_warn(m, "%s: %zu, more than the %zu otel-webhook handles (bound %s); nothing injected", what, n,
              limits[l].max, limits[l].name);
    mctx_skip(m, MUTATE_SKIP_LIMIT);
    m->res->limit = l;
    return true;
}

/* past() with what written only when the bound is passed: the message is
 * for the one pod in many that needs it (a format costs a microsecond). */
__attribute__((format(printf, 4, 5))) static bool past_in(mctx *m, mutate_limit l, size_t n, const char *fmt, ...) {
    if (n <= limits[l].max) return false;
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return past(m, l, n, what);
}

/* Items of a comma-separated list, as the parsers will split it. */
static size_t items(const char *s) {
    size_t n = 1;
    for (; *s; s++) n += *s == ',';
    return n;
}

static bool annotations_within(mctx *m, json_object *ann, const char *whose) {
    if (!json_object_is_type(ann, json_type_object)) return true;
    json_object_object_foreach(ann, k, v) {
        size_t kl = strlen(k);
        if (strncmp(k, ANN_PREFIX, sizeof ANN_PREFIX - 1) != 0 || kl < 15 ||
            strcmp(k + kl - 15, "container-names") != 0 || !json_object_is_type(v, json_type_string))
            continue;
        if (past_in(m, MUTATE_LIMIT_CONTAINER_NAMES, items(json_object_get_string(v)), "names in the %s annotation %.100s",
                    whose, k))
            return false;
    }
    return true;
}

static bool container_within(mctx *m, json_object *c, size_t *env_total, size_t *mounts) {
    json_object *env = jw_get(c, "env");
    const char *name = jw_str(c, "name");
    size_t n = jlen(env);
    if (past_in(m, MUTATE_LIMIT_ENV, n, "env entries in container %.64s", name ? name : "")) return false;
    *env_total += n;
    *mounts += jlen(jw_get(c, "volumeMounts"));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(env, i);
        const char *en = jw_str(e, "name"), *ev = jw_str(e, "value");
        if (!en || !ev || strcmp(en, "OTEL_RESOURCE_ATTRIBUTES") != 0) continue;
        if (past_in(m, MUTATE_LIMIT_RESOURCE_ATTRIBUTES, items(ev), "OTEL_RESOURCE_ATTRIBUTES items in container %.64s",
                    name ? name : ""))
            return false;
    }
    return true;
}

bool bounds_check(mctx *m) {
    json_object *cs = jget(m->spec, "containers"), *inits = jget(m->spec, "initContainers");
    json_object *ann = pod_annotations(m);
    size_t env_total = 0, mounts = 0;
    if (past(m, MUTATE_LIMIT_CONTAINERS, jlen(cs) + jlen(inits), "containers and init containers")) return false;
    if (past(m, MUTATE_LIMIT_VOLUMES, jlen(jget(m->spec, "volumes")), "volumes")) return false;
    if (json_object_is_type(ann, json_type_object) &&
        past(m, MUTATE_LIMIT_ANNOTATIONS, (size_t)json_object_object_length(ann), "annotations"))
        return false;
    if (!annotations_within(m, ann, "pod") ||
        !annotations_within(m, jget(jget(m->req->ns, "metadata"), "annotations"), "namespace"))
        return false;
    json_object *lists[2] = {cs, inits};
    for (int l = 0; l < 2; l++)
        for (size_t i = 0; i < jlen(lists[l]); i++)
            if (!container_within(m, json_object_array_get_idx(lists[l], i), &env_total, &mounts)) return false;
    if (past(m, MUTATE_LIMIT_ENV_TOTAL, env_total, "env entries in all containers")) return false;
    return !past(m, MUTATE_LIMIT_VOLUME_MOUNTS, mounts, "volume mounts in all containers");
}
