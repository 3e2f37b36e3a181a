/* mutate/inst_validate.c - Instrumentation rules, in the reference's order;
 * see inst_validate.h.
 *
 * Refusals carry the reference's messages byte for byte ("rage [0..1]",
 * "volumeSizeLimit" for the field volumeLimitSize). Where the reference is
 * wrong (spec 8) we do better:
 *  - NaN is not in [0..1], for the argument and initialSamplingRate (8.11);
 *  - a negative pollingIntervalMs is refused, and a jaeger-remote value may
 *    hold '=' (an endpoint's query), split at the first one (8.11);
 *  - "https://" is recognised in any case, as URL schemes are (8.11);
 *  - parentbased_jaeger_remote is accepted, and our CRD's enum accepts it
 *    too (8.10);
 *  - the warnings come out in a fixed order (8.24).
 * DELETE is checked like CREATE and the volumeLimitSize deprecation warning
 * is given, advice included (spec 8.2, 8.9, 8.22 would drop them):
 * upstream's tests expect both. */
#include "mutate/inst_validate.h"

#include "base/alloc.h"
#include "base/json.h"
#include "mutate/defaults.h"
#include "mutate/internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool is(const char *a, const char *b) { return a && b && !strcmp(a, b); }

/* Go's strconv.ParseFloat, near enough: the whole text is a number (no
 * spaces around it); decimal, exponent and hex forms, inf and nan. */
static bool parse_float(const char *s, double *out) {
    if (!*s || isspace((unsigned char)*s) || strchr(s, '(')) return false;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (*end || (errno == ERANGE && !isinf(d) && d != 0)) return false;
    *out = d;
    return true;
}

static bool in_unit_range(double d) { return !isnan(d) && d >= 0 && d <= 1; }

/* strconv.Atoi: an optional sign, decimal digits, within int64. */
static bool parse_int(const char *s, long long *out) {
    const char *p = s + (*s == '+' || *s == '-');
    if (!*p || strspn(p, "0123456789") != strlen(p)) return false;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (errno || *end) return false;
    *out = v;
    return true;
}

/* 4.3: NULL when arg is a valid jaeger-remote argument, else the reason
 * (malloc'ed). */
static char *jaeger_remote_problem(const char *arg) {
    char *copy = xstrdup(arg), *reason = NULL;
    for (char *part = copy, *next; part && !reason; part = next) {
        next = strchr(part, ',');
        if (next) *next++ = 0;
        char *eq = strchr(part, '=');
        if (!eq || eq == part) {
            reason = xasprintf("invalid argument: %s, the argument should be in the form of key=value", part);
            break;
        }
        *eq = 0;
        const char *key = part, *val = eq + 1;
        double d;
        long long n;
        if (is(key, "endpoint")) {
            if (!*val) reason = xstrdup("endpoint cannot be empty");
        } else if (is(key, "pollingIntervalMs")) {
            if (!parse_int(val, &n) || n < 0) reason = xasprintf("invalid pollingIntervalMs: %s", val);
        } else if (is(key, "initialSamplingRate")) {
            if (!parse_float(val, &d)) reason = xasprintf("invalid initialSamplingRate: %s", val);
            else if (!in_unit_range(d)) reason = xasprintf("initialSamplingRate should be in rage [0..1]: %s", val);
        }
    }
    free(copy);
    return reason;
}

static int check_sampler(json_object *spec, verdict *v) {
    json_object *sampler = jmap(spec, "sampler");
    const char *type = jstr(sampler, "type"), *arg = jstr(sampler, "argument");
    if (!type || !*type) {
        verdict_warn(v, "sampler type not set");
        return 0;
    }
    if (is(type, "traceidratio") || is(type, "parentbased_traceidratio")) {
        double d;
        if (!arg || !*arg) return 0;
        if (!parse_float(arg, &d)) return verdict_deny(v, "sampler", "spec.sampler.argument is not a number: %s", arg);
        if (!in_unit_range(d))
            return verdict_deny(v, "sampler", "spec.sampler.argument should be in rage [0..1]: %s", arg);
        return 0;
    }
    if (is(type, "jaeger_remote") || is(type, "parentbased_jaeger_remote")) {
        char *why = arg && *arg ? jaeger_remote_problem(arg) : NULL;
        if (!why) return 0;
        verdict_deny(v, "sampler", "spec.sampler.argument is not a valid argument for sampler %s: %s", type, why);
        free(why);
        return -1;
    }
    static const char *const plain[] = {"always_on", "always_off", "parentbased_always_on", "parentbased_always_off",
                                        "xray", NULL};
    for (const char *const *p = plain; *p; p++)
        if (is(type, *p)) return 0;
    return verdict_deny(v, "sampler", "spec.sampler.type is not valid: %s", type);
}

/* ---- unupgradable versions (rule 1) ------------------------------------- */

typedef struct semver {
    long part[3];
    bool pre; /* a pre-release sorts before its release */
} semver;

static bool parse_semver(const char *s, semver *out) {
    memset(out, 0, sizeof *out);
    if (*s == 'v') s++;
    for (int i = 0; i < 3; i++) {
        if (!isdigit((unsigned char)*s)) return false;
        char *end;
        out->part[i] = strtol(s, &end, 10);
        s = end;
        if (*s != '.') break;
        if (i == 2) return false;
        s++;
    }
    if (*s == '-') out->pre = true;
    else if (*s && *s != '+') return false;
    return true;
}

static int semver_cmp(const semver *a, const semver *b) {
    for (int i = 0; i < 3; i++)
        if (a->part[i] != b->part[i]) return a->part[i] < b->part[i] ? -1 : 1;
    return a->pre == b->pre ? 0 : a->pre ? -1 : 1;
}

/* The image's repository and tag: split at the last ':' with no '/' after
 * it (a registry port is not a tag). tag is "" when there is none. */
static void split_image(const char *image, char **repo, const char **tag) {
    const char *c = strrchr(image, ':');
    if (c && !strchr(c, '/')) {
        *repo = xstrndup(image, (size_t)(c - image));
        *tag = c + 1;
    } else {
        *repo = xstrdup(image);
        *tag = "";
    }
}

static const struct {
    mutate_lang_id lang;
    const char *name, *blocked, *display;
} unupgradable[] = {
    {MUTATE_JAVA, "java", "2.0.0", "Java"},
    {MUTATE_DOTNET, "dotnet", "1.3.0", ".NET"},
};

static void check_versions(json_object *obj, json_object *spec, const mutate_settings *s, verdict *v) {
    const char *ns = jstr(jmap(obj, "metadata"), "namespace"), *name = jstr(jmap(obj, "metadata"), "name");
    for (size_t i = 0; i < sizeof unupgradable / sizeof *unupgradable; i++) {
        const mutate_lang *lang = mutate_lang_get(unupgradable[i].lang);
        const char *image = jstr(jmap(spec, lang->spec_key), "image"), *def = s->images[unupgradable[i].lang];
        if (!image || !*image || !def) continue;
        char *repo, *drepo;
        const char *tag, *dtag;
        split_image(image, &repo, &tag);
        split_image(def, &drepo, &dtag);
        semver cur, dflt, blocked;
        /* An upgrade to the default would cross the blocked version. A tag
         * that is not a version (a digest, "latest") cannot be placed and
         * is not warned about. */
        bool crosses = !strcmp(repo, drepo) && parse_semver(tag, &cur) && parse_semver(dtag, &dflt) &&
                       parse_semver(unupgradable[i].blocked, &blocked) && semver_cmp(&cur, &blocked) < 0 &&
                       semver_cmp(&blocked, &dflt) <= 0;
        if (crosses)
            verdict_warn(v,
                         "Instrumentation %s/%s: %s image %s is at a version that cannot be automatically upgraded. "
                         "%s instrumentation %s contains breaking HTTP semantic convention changes. See "
                         "https://opentelemetry.io/blog/2023/http-conventions-declared-stable/ for a general "
                         "description of the changes. To upgrade, manually set the image on this Instrumentation "
                         "resource to %s or higher.",
                         ns ? ns : "", name ? name : "", unupgradable[i].name, image, unupgradable[i].display,
                         unupgradable[i].blocked, unupgradable[i].blocked);
        free(repo);
        free(drepo);
    }
}

/* ---- the rules ------------------------------------------------------------ */

static bool starts_https(const char *s) { return s && !strncasecmp(s, "https://", 8); }

int mutate_validate_instrumentation(json_object *obj, verdict_op op, const mutate_settings *s, verdict *v) {
    (void)op; /* CREATE, UPDATE and DELETE alike (4.2) */
    char *bad = mutate_check_instrumentation_shape(obj);
    if (bad) {
        verdict_deny(v, "shape", "%s", bad);
        free(bad);
        return -1;
    }
    json_object *spec = jmap(obj, "spec");
    check_versions(obj, spec, s, v);
    int rc = check_sampler(spec, v);
    if (rc && !v->all) return rc; /* past a refusal only when every one is wanted (verdict.all) */
    /* Rule 8, in the reference's order and spelling of the languages. */
    static const struct {
        const char *key, *msg;
    } volume_order[] = {{"apacheHttpd", "apachehttpd"}, {"dotnet", "dotnet"}, {"go", "go"},        {"java", "java"},
                        {"nginx", "nginx"},             {"nodejs", "nodejs"}, {"python", "python"}};
    for (size_t i = 0; i < sizeof volume_order / sizeof *volume_order; i++) {
        json_object *l = jmap(spec, volume_order[i].key);
        json_object *vct = jmap(l, "volumeClaimTemplate");
        if (vct && json_object_object_length(vct) > 0 && jget(l, "volumeLimitSize")) {
            rc = verdict_deny(v, "volume",
                              "spec.%s.volumeClaimTemplate and spec.%s.volumeSizeLimit cannot both be defined: "
                              "unable to resolve volume size",
                              volume_order[i].msg, volume_order[i].msg);
            if (!v->all) return rc;
        }
    }
    json_object *exporter = jmap(spec, "exporter"), *tls = jmap(exporter, "tls");
    const char *endpoint = jstr(exporter, "endpoint");
    if (tls) {
        const char *key = jstr(tls, "key_file"), *cert = jstr(tls, "cert_file");
        if ((key && *key) != (cert && *cert)) verdict_warn(v, "both exporter.tls.key and exporter.tls.cert mut be set");
        if (!starts_https(endpoint))
            verdict_warn(v, "exporter.tls is configured but exporter.endpoint is not enabling TLS with https://");
    } else if (starts_https(endpoint)) {
        verdict_warn(v, "exporter is using https:// but exporter.tls is unset");
    }
    /* Rule 12, in its own order. Its advice names spec.<lang>.volume.size,
     * which the served v1alpha1 schema lacks (spec 8.9); kept, byte for
     * byte, since upstream's tests expect it. */
    static const struct {
        const char *key, *msg;
    } deprecated[] = {{"java", "java"}, {"nodejs", "nodejs"}, {"python", "python"}, {"dotnet", "dotnet"},
                      {"go", "go"},     {"apacheHttpd", "apachehttpd"}, {"nginx", "nginx"}};
    for (size_t i = 0; i < sizeof deprecated / sizeof *deprecated; i++)
        if (jget(jmap(spec, deprecated[i].key), "volumeLimitSize"))
            verdict_warn(v,
                         "spec.%s.volumeSizeLimit is deprecated and will be removed in a future release; use "
                         "spec.%s.volume.size instead",
                         deprecated[i].msg, deprecated[i].msg);
    return rc;
}
