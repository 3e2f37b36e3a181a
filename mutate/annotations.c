/* mutate/annotations.c - the annotation keys the engine reads, and what it
 * says about keys that look meant for it but are none of them.
 *
 * A misspelt key (inject-jaav, instrumentations.opentelemetry.io/...) is
 * ignored by the reference and by the engine alike: the pod starts without
 * its telemetry and nothing says why. So every key whose domain (the part
 * before the first '/') is within ANN_MAX_EDITS of a domain the engine
 * reads, but which is not a key it reads, gets a warning naming the
 * closest key it does read. resource.opentelemetry.io/ is free-form (any
 * key is an attribute) and only a misspelt domain is flagged there.
 *
 * This runs for every pod, also those asking for nothing: a pod whose only
 * opt-in is misspelt asks for nothing, and its owner is who needs to hear.
 * So the common case is kept to a strchr and two comparisons per key: a
 * key without '/', or whose domain is not within ANN_MAX_EDITS of ours in
 * length, goes no further. Distances are computed only inside the band of
 * ANN_MAX_EDITS around the diagonal and stop as soon as a row is past it
 * (Ukkonen's cut-off), on keys of at most ANN_CHECK_MAX_KEY bytes, over at
 * most MUTATE_MAX_ANNOTATIONS keys per object; at most ANN_MAX_WARNINGS
 * keys are named. */
#include "mutate/internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#define ANN_STR_(id, key) [ANN_##id] = key,
const char *const ann_keys[ANN_NKEYS] = {ANN_KEYS(ANN_STR_)};

#define ANN_MAX_EDITS 2       /* what a typo is: two edits, a swap of neighbours counting as one */
#define ANN_CHECK_MAX_KEY 128 /* no key the engine reads is half as long */
#define ANN_MAX_WARNINGS 8

/* The domains of the keys in ANN_KEYS and ann_lang_key. A key added under
 * another domain would be read fine, only its typos would go unnoticed
 * (test_annotations checks that every key the engine reads is known). */
static const struct {
    const char *prefix; /* with the '/' */
    size_t len;         /* without it */
    bool free_form;
} domains[] = {
    {ANN_PREFIX, sizeof ANN_PREFIX - 2, false},
    {ANN_SIDECAR_PREFIX, sizeof ANN_SIDECAR_PREFIX - 2, false},
    {ANN_RESOURCE, sizeof ANN_RESOURCE - 2, true},
};
#define NDOMAINS (sizeof domains / sizeof *domains)
#define MIN_DOMAIN (sizeof ANN_SIDECAR_PREFIX - 2) /* the shortest of them */
#define MAX_DOMAIN (sizeof ANN_PREFIX - 2)         /* the longest */
#define IN_RANGE_(p) (sizeof p - 2 >= MIN_DOMAIN && sizeof p - 2 <= MAX_DOMAIN)
_Static_assert(IN_RANGE_(ANN_PREFIX) && IN_RANGE_(ANN_SIDECAR_PREFIX) && IN_RANGE_(ANN_RESOURCE),
               "MIN_DOMAIN and MAX_DOMAIN bound every domain");

const char *ann_lang_key(char buf[ANN_KEY_MAX], mutate_lang_id id, bool names) {
    /* Nginx's list is inject-nginx-container-names, the reference's
     * spelling (spec 1.1, 7.29). Built with memcpy: asks() builds eight of
     * these for every pod. */
    const char *name = mutate_lang_name(id);
    const char *pre = !names || id == MUTATE_NGINX ? "inject-" : "";
    const char *post = names ? "-container-names" : "";
    size_t a = sizeof ANN_PREFIX - 1, b = strlen(pre), c = strlen(name), d = strlen(post);
    if (a + b + c + d >= ANN_KEY_MAX) c = ANN_KEY_MAX - 1 - a - b - d; /* cannot happen: names are short */
    memcpy(buf, ANN_PREFIX, a);
    memcpy(buf + a, pre, b);
    memcpy(buf + a + b, name, c);
    memcpy(buf + a + b + c, post, d + 1);
    return buf;
}

static unsigned char fold(char c) {
    unsigned char u = (unsigned char)c;
    return u >= 'A' && u <= 'Z' ? (unsigned char)(u | 0x20) : u;
}

/* Optimal string alignment distance (Damerau-Levenshtein where no substring
 * is edited twice), ASCII case folded, or k + 1 when it is more than k.
 * Cells farther than k from the diagonal are more than k, so each row is
 * computed over 2k + 1 cells, bordered by k + 1 on both sides; once a whole
 * row is past k the end is too (a swap jumps from row i - 1 to i + 1, but
 * the change of one letter it could be replaced by passes row i within k). */
unsigned ann_edits(const char *a, size_t la, const char *b, size_t lb, unsigned k) {
    unsigned rows[3][ANN_CHECK_MAX_KEY + 2], big = k + 1;
    if (la > ANN_CHECK_MAX_KEY || lb > ANN_CHECK_MAX_KEY || (la > lb ? la - lb : lb - la) > k) return big;
    unsigned *pp = rows[0], *p = rows[1], *c = rows[2];
    for (size_t j = 0; j <= lb; j++) p[j] = j <= k ? (unsigned)j : big;
    for (size_t i = 1; i <= la; i++) {
        size_t lo = i > k ? i - k : 1, hi = i + k < lb ? i + k : lb;
        c[lo - 1] = lo == 1 && i <= k ? (unsigned)i : big;
        unsigned row_min = c[lo - 1]; /* column 0 is a cell of the row */
        for (size_t j = lo; j <= hi; j++) {
            unsigned v = p[j - 1] + (fold(a[i - 1]) != fold(b[j - 1]));
            if (p[j] + 1 < v) v = p[j] + 1;
            if (c[j - 1] + 1 < v) v = c[j - 1] + 1;
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) && fold(a[i - 2]) == fold(b[j - 1]) &&
                pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            c[j] = v < big ? v : big;
            if (c[j] < row_min) row_min = c[j];
        }
        if (hi < lb) c[hi + 1] = big;
        if (row_min > k) return big;
        unsigned *t = pp;
        pp = p;
        p = c;
        c = t;
    }
    return p[lb];
}

/* Every key the engine reads. Built only when a key in or near one of our
 * domains turns up (the pods that ask for something), without copying the
 * fixed keys; their domains only when a suggestion is wanted. */
typedef struct known {
    size_t n;
    bool with_domains;
    const char *key[2 * MUTATE_NLANGS + ANN_NKEYS];
    size_t domain[2 * MUTATE_NLANGS + ANN_NKEYS];
    char lang[2 * MUTATE_NLANGS][ANN_KEY_MAX];
} known;

static void known_fill(known *kn) {
    if (kn->n) return;
    for (int id = 0; id < MUTATE_NLANGS; id++)
        for (int names = 0; names < 2; names++)
            kn->key[kn->n++] = ann_lang_key(kn->lang[2 * id + names], (mutate_lang_id)id, names);
    for (int i = 0; i < ANN_NKEYS; i++) kn->key[kn->n++] = ann_keys[i];
}

static void known_domains(known *kn) {
    if (kn->with_domains) return;
    kn->with_domains = true;
    for (size_t i = 0; i < kn->n; i++) {
        kn->domain[i] = NDOMAINS; /* none: matched exactly, never suggested */
        for (size_t d = 0; d < NDOMAINS; d++)
            if (strncmp(kn->key[i], domains[d].prefix, domains[d].len + 1) == 0) kn->domain[i] = d;
    }
}

/* The domain the key's first dlen bytes are, or are nearest to; -1 when
 * none is within ANN_MAX_EDITS. */
static int near_domain(const char *k, size_t dlen, bool *exact) {
    *exact = false;
    for (size_t d = 0; d < NDOMAINS; d++)
        if (dlen == domains[d].len && memcmp(k, domains[d].prefix, dlen) == 0) {
            *exact = true;
            return (int)d;
        }
    int best = -1;
    unsigned best_edits = ANN_MAX_EDITS + 1;
    for (size_t d = 0; d < NDOMAINS; d++) {
        if (dlen + ANN_MAX_EDITS < domains[d].len || dlen > domains[d].len + ANN_MAX_EDITS) continue;
        unsigned e = ann_edits(k, dlen, domains[d].prefix, domains[d].len, ANN_MAX_EDITS);
        if (e < best_edits) best_edits = e, best = (int)d;
    }
    return best;
}

/* Other names of the languages, further than ANN_MAX_EDITS from the one
 * the annotations use: inject-golang is a typo of inject-go nobody would
 * catch by eye, since golang is what the language is called. */
static const struct {
    const char *alias, *name;
} lang_aliases[] = {
    {"golang", "go"}, {"py", "python"}, {"javascript", "nodejs"}, {"js", "nodejs"},
    {"csharp", "dotnet"}, {"net", "dotnet"}, {"apache", "apache-httpd"}, {"httpd", "apache-httpd"},
};

/* The key of domain d that rest names with a language's other name
 * ("inject-golang", "golang-container-names": the alias between '-' or the
 * ends), or NULL. */
static const char *by_alias(known *kn, size_t d, const char *rest, char *buf, size_t len) {
    for (size_t a = 0; a < sizeof lang_aliases / sizeof *lang_aliases; a++) {
        size_t al = strlen(lang_aliases[a].alias);
        for (const char *p = rest; *p; p++) {
            if ((p != rest && p[-1] != '-') || strncasecmp(p, lang_aliases[a].alias, al) || (p[al] && p[al] != '-'))
                continue;
            snprintf(buf, len, "%s%.*s%s%s", domains[d].prefix, (int)(p - rest), rest, lang_aliases[a].name, p + al);
            for (size_t i = 0; i < kn->n; i++)
                if (kn->domain[i] == d && !strcasecmp(kn->key[i], buf)) return kn->key[i];
        }
    }
    return NULL;
}

/* The closest key the engine reads: the rest with a language's usual name
 * for its other name (inject-go for inject-golang); else within
 * ANN_MAX_EDITS once the domain is set right; else one that ends in "-" and the rest (nginx-container-names
 * for inject-nginx-container-names, java for inject-java); else one of
 * another domain with the same rest (sidecar.opentelemetry.io/inject-java);
 * NULL when there is none. */
static const char *closest(known *kn, size_t d, const char *rest, char *buf, size_t len) {
    size_t rlen = strlen(rest);
    if (domains[d].free_form) {
        snprintf(buf, len, "%s%s", domains[d].prefix, rest);
        return buf;
    }
    known_domains(kn);
    /* A language's other name first: inject-py is python, not the go two
     * edits away. */
    const char *best = by_alias(kn, d, rest, buf, len);
    unsigned best_edits = best ? 0 : ANN_MAX_EDITS + 1;
    for (size_t i = 0; !best && i < kn->n; i++) {
        if (kn->domain[i] != d) continue;
        const char *krest = kn->key[i] + domains[d].len + 1;
        unsigned e = ann_edits(rest, rlen, krest, strlen(krest), ANN_MAX_EDITS);
        if (e < best_edits) best_edits = e, best = kn->key[i];
    }
    for (size_t i = 0; !best && rlen && i < kn->n; i++) {
        if (kn->domain[i] != d) continue;
        const char *krest = kn->key[i] + domains[d].len + 1;
        size_t kl = strlen(krest);
        if (kl > rlen && krest[kl - rlen - 1] == '-' && strcmp(krest + kl - rlen, rest) == 0) best = kn->key[i];
    }
    for (size_t i = 0; !best && i < kn->n; i++) {
        if (kn->domain[i] >= NDOMAINS) continue;
        const char *krest = kn->key[i] + domains[kn->domain[i]].len + 1;
        if (strlen(krest) == rlen && ann_edits(rest, rlen, krest, rlen, 0) == 0) best = kn->key[i];
    }
    return best;
}

typedef struct check {
    mctx *m;
    known kn;
    size_t named, more;
} check;

static void check_object(check *ck, json_object *ann, bool of_namespace) {
    if (!json_object_is_type(ann, json_type_object)) return;
    size_t seen = 0;
    json_object_object_foreach(ann, k, v) {
        (void)v; /* keys only: a value of the wrong type is the type check's to report */
        if (seen++ == MUTATE_MAX_ANNOTATIONS) break;
        /* The common case ends here: no '/', or a domain whose length is
         * not within ANN_MAX_EDITS of ours. */
        const char *slash = strchr(k, '/');
        if (!slash) continue;
        size_t dlen = (size_t)(slash - k);
        if (dlen + ANN_MAX_EDITS < MIN_DOMAIN || dlen > MAX_DOMAIN + ANN_MAX_EDITS) continue;
        bool exact;
        int d = near_domain(k, dlen, &exact);
        if (d < 0 || (exact && domains[d].free_form)) continue;
        /* Too long, or holding bytes no key may hold (spaces, controls,
         * non-ASCII): no typo of ours, and not for a warning either. */
        size_t klen = 0;
        while (klen <= ANN_CHECK_MAX_KEY && (unsigned char)k[klen] > 0x20 && (unsigned char)k[klen] < 0x7f) klen++;
        if (klen > ANN_CHECK_MAX_KEY || k[klen]) continue;
        known_fill(&ck->kn);
        bool is_known = false;
        for (size_t i = 0; exact && !is_known && i < ck->kn.n; i++) is_known = strcmp(ck->kn.key[i], k) == 0;
        if (is_known) continue;
        mctx_skip(ck->m, MUTATE_SKIP_UNKNOWN_ANNOTATION);
        if (ck->named == ANN_MAX_WARNINGS) {
            ck->more++;
            continue;
        }
        ck->named++;
        char buf[ANN_CHECK_MAX_KEY + sizeof ANN_PREFIX];
        const char *sugg = closest(&ck->kn, (size_t)d, slash + 1, buf, sizeof buf);
        char where[160] = "";
        if (of_namespace) snprintf(where, sizeof where, " of namespace %.100s", ck->m->ns);
        if (sugg) mctx_warn(ck->m, "annotation %s%s is not one otel-webhook knows; did you mean %s?", k, where, sugg);
        else mctx_warn(ck->m, "annotation %s%s is not one otel-webhook knows", k, where);
    }
}

void ann_check(mctx *m) {
    check ck;
    ck.m = m;
    ck.kn.n = 0;
    ck.kn.with_domains = false;
    ck.named = ck.more = 0;
    check_object(&ck, pod_annotations(m), false);
    check_object(&ck, jget(jget(m->req->ns, "metadata"), "annotations"), true);
    if (ck.more) mctx_warn(m, "and %zu more annotations otel-webhook does not know", ck.more);
}
