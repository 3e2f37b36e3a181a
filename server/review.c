/* server/review.c - AdmissionReview admission.k8s.io/v1 in, AdmissionReview out.
 *
 * A pure function of the body, the store snapshot and the options, with no
 * sockets, so it is unit-tested (tests/unit/test_review.c) and fuzzed
 * (tests/fuzz/fuzz_review.c) on its own; only with the live
 * cluster source (env->live) may a lookup leave the process, as a GET
 * bounded by the admission's budget (kube/livesource.h). Policy:
 *  - a body that is not an AdmissionReview is the caller's bug: HTTP 400
 *    with a one-line JSON error;
 *  - a review for anything but a pod CREATE is allowed untouched;
 *  - a pod CREATE is mutated; anything that goes wrong inside mutation is
 *    answered allowed, without a patch, with a warning (fail open), because
 *    refusing or delaying a pod for its telemetry is worse than running it
 *    without. */
#include "server/review.h"

#include "base/alloc.h"
#include "base/base64.h"
#include "base/json.h"
#include "base/jfast.h"
#include "base/jtext.h"
#include "base/sbuf.h"
#include "kube/livesource.h"
#include "kube/reader.h"
#include "server/log.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WARNING_PREFIX "otel-webhook: "

/* a then b into dst of cap bytes, cut as snprintf(dst, cap, "%s%s") cuts
 * (for the log's fixed fields; a format costs a microsecond). */
static void copy_cut(char *dst, size_t cap, const char *a, const char *b) {
    size_t al = strlen(a), bl = strlen(b);
    if (al >= cap) al = cap - 1;
    memcpy(dst, a, al);
    if (bl > cap - 1 - al) bl = cap - 1 - al;
    memcpy(dst + al, b, bl);
    dst[al + bl] = 0;
}

static void reject(review_out *out, const char *fmt, const char *arg) {
    char *msg = NULL, *body;
    msg = xasprintf(fmt, arg ? arg : "");
    json_object *o = jnew_obj();
    jset(o, "error", jnew_str(msg));
    body = jtext(o, &out->len);
    json_object_put(o);
    /* One line, newline-terminated, for curl users. */
    out->body = xrealloc(body, out->len + 2);
    out->body[out->len++] = '\n';
    out->body[out->len] = 0;
    out->status = 400;
    out->owned = true;
    out->result = RESULT_REJECTED;
    /* For the log line only; cut at a character boundary. */
    snprintf(out->error, sizeof out->error, "%s", msg);
    size_t n = strlen(out->error);
    if (n == sizeof out->error - 1)
        while (n && ((unsigned char)out->error[n - 1] & 0xC0) == 0x80) out->error[--n] = 0;
    if (n && ((unsigned char)out->error[n - 1] & 0xC0) == 0xC0) out->error[--n] = 0;
    free(msg);
}

/* The answer is written as text, straight into the memory the caller
 * asked for (h2o's request pool for pods: no copy on the way out), with
 * json-c's members in the order the object form had them: the uid, the
 * strings and the warnings escaped, the patch base64-encoded in place.
 * Building it as json-c objects and writing those out, as this once did,
 * copied the 7 KB of base64 twice and scanned it once more for characters
 * to escape, none of which base64 has. */
static void respond_into(review_out *out, const review_request *rq, const review_answer *a, review_alloc alloc,
                         void *ud) {
    sbuf head = SBUF_INIT, tail = SBUF_INIT, line = SBUF_INIT;
    sbuf_puts(&head, "{\"apiVersion\":");
    jtext_string(&head, rq->api_version, strlen(rq->api_version));
    sbuf_puts(&head, ",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    jtext_string(&head, rq->uid.s, rq->uid.len);
    sbuf_puts(&head, a->allowed ? ",\"allowed\":true" : ",\"allowed\":false");
    if (a->code) {
        sbuf_printf(&head, ",\"status\":{\"code\":%d", a->code);
        if (a->reason) sbuf_puts(&head, ",\"reason\":"), jtext_string(&head, a->reason, strlen(a->reason));
        if (a->message) sbuf_puts(&head, ",\"message\":"), jtext_string(&head, a->message, strlen(a->message));
        sbuf_putc(&head, '}');
    }
    /* The patch as text (base64-encoded here) or already encoded. */
    size_t b64 = a->patch ? base64_len(a->patch_len) : 0;
    if (a->patch_b64) {
        sbuf_puts(&head, ",\"patchType\":\"JSONPatch\",\"patch\":");
        jtext_string(&head, a->patch_b64, strlen(a->patch_b64));
    } else if (a->patch) {
        sbuf_puts(&head, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        sbuf_putc(&tail, '"');
    }
    if (a->nwarnings) {
        const char *prefix = a->warning_prefix ? a->warning_prefix : "";
        sbuf_puts(&tail, ",\"warnings\":[");
        for (size_t i = 0; i < a->nwarnings; i++) {
            sbuf_truncate(&line, 0);
            sbuf_puts(&line, prefix);
            sbuf_puts(&line, a->warnings[i]);
            if (i) sbuf_putc(&tail, ',');
            jtext_string(&tail, line.s, line.len);
        }
        sbuf_putc(&tail, ']');
    }
    sbuf_puts(&tail, "}}");
    out->len = head.len + b64 + tail.len;
    out->owned = !alloc;
    out->body = alloc ? alloc(ud, out->len + 1) : xmalloc(out->len + 1);
    memcpy(out->body, head.s, head.len);
    if (a->patch && !a->patch_b64) base64_encode(out->body + head.len, a->patch, a->patch_len);
    memcpy(out->body + head.len + b64, tail.s, tail.len);
    out->body[out->len] = 0;
    out->status = 200;
    sbuf_free(&head);
    sbuf_free(&tail);
    sbuf_free(&line);
}

void review_respond(review_out *out, const review_request *rq, const review_answer *a) {
    respond_into(out, rq, a, NULL, NULL);
}

/* The pod path's allowed answers: warnings carry our prefix, since the pod
 * is not ours and kubectl shows them next to other webhooks' warnings. */
static void respond(review_out *out, const review_request *rq, const char *patch, size_t plen, char **warnings,
                    size_t nwarnings, review_alloc alloc, void *ud) {
    review_answer a = {.allowed = true, .patch = patch, .patch_len = plen, .warnings = warnings,
                       .nwarnings = nwarnings, .warning_prefix = WARNING_PREFIX};
    respond_into(out, rq, &a, alloc, ud);
}

char *review_base64(const char *in, size_t len) {
    char *out = xmalloc(base64_len(len) + 1);
    base64_encode(out, in, len);
    out[base64_len(len)] = 0;
    return out;
}

/* ------------------------------------------------------------------------
 * managedFields skimming. A pod's metadata.managedFields is often half of
 * its JSON, the engine never reads it and the patch never touches it, and
 * json-c parsing is the largest cost per request. So before parsing, a
 * cheap structural scan (strings and nesting only, no values built) finds
 * request.object.metadata.managedFields and the parser gets a copy of the
 * body in which that value is null. Anything unexpected (malformed JSON,
 * escaped keys) makes the scan give up and the body is parsed as it came.
 * The skipped value is validated as strict JSON and the body is parsed
 * strictly, so the copy parses exactly when the original would.
 *
 * That is now the fallback: jfast_parse (base/jfast.c) reads the bodies
 * the API server sends in one pass and skips the same value by the same
 * rule while it builds the tree; what it declines takes this path. */

/* request.object.metadata.managedFields, found in one pass: members
 * before the wanted key at each level are skipped (and validated), the
 * wanted one is entered, and nothing after it is read. Scanning each level
 * to its end first, as this once did, went over the body four times. Keys
 * are compared as written: an escaped spelling is not found, and the body
 * is then parsed as it came. Like json-c, the first match is the one used
 * for the path; a later duplicate would win in json-c, and then the nulled
 * value is one the engine never sees. */
static const char *const mf_path[] = {"request", "object", "metadata", "managedFields"};
#define MF_DEPTH (sizeof mf_path / sizeof *mf_path)

/* A copy of body with managedFields nulled, or NULL to parse body as is. */
static char *without_managed_fields(const char *body, size_t len, size_t *outlen) {
    const char *end = body + len, *a, *b;
    if (!jfast_find(body, end, mf_path, MF_DEPTH, &a, &b) || b - a < 64) return NULL;
    size_t head = (size_t)(a - body), tail = (size_t)(end - b);
    char *copy = xmalloc(head + 4 + tail);
    memcpy(copy, body, head);
    memcpy(copy + head, "null", 4);
    memcpy(copy + head + 4, b, tail);
    *outlen = head + 4 + tail;
    return copy;
}

/* What the one-pass parse leaves out (base/jfast.h). On every route the
 * object's managedFields becomes null, as the skimmer makes it. On the pod
 * route also the members no part of the pod's mutation reads (mutate/ and
 * this file name none of them; podcheck.c's shapes are the fields it
 * does read): the volumes' sources (a volume is found by its name), the
 * pod's security context, scheduling constraints and other object-valued
 * members of its spec nothing here reads, the status, and the review's
 * oldObject, userInfo, options and the request's kind echoes. Why it is
 * safe: the patch is a diff of trees that both lack the members, the diff
 * never writes an existing element whole (volumes pair by name, are only
 * ever appended to, and the engine copies nothing of these into what it
 * adds), and the status record copies nothing of them, so the pod keeps
 * them; the containers' probes, lifecycle hooks, ports and resources go
 * too. The status record written from the diff's log copies nothing the
 * diff did not touch; the record written by comparing the pods (an
 * element removed whole, as sidecar "false" does, duplicate names, a name
 * changed: mutate_result.record_compared) may copy any member, so such a
 * pod is parsed again with only managedFields left out, as before this
 * parse, and mutated again: rare, and the answer the same. A member added
 * here that the engine did read would change answers, and
 * fuzz_review compares every answer with the one given without any of
 * this (review_env.no_skim); the server suites' exact patches run
 * through it too. */
#define DROP(k) {k, JFAST_DROP, 0, NULL}
static const jfast_path mf_meta[] = {{"managedFields", JFAST_NULL, 64, NULL}, {NULL, 0, 0, NULL}};
static const jfast_path mf_object[] = {{"metadata", JFAST_ENTER, 0, mf_meta}, {NULL, 0, 0, NULL}};
static const jfast_path mf_request[] = {{"object", JFAST_ENTER, 0, mf_object}, {NULL, 0, 0, NULL}};
static const jfast_path any_paths[] = {{"request", JFAST_ENTER, 0, mf_request}, {NULL, 0, 0, NULL}};

static const jfast_path pod_container[] = {DROP("livenessProbe"), DROP("readinessProbe"), DROP("startupProbe"),
                                           DROP("lifecycle"),     DROP("ports"),          DROP("resources"),
                                           {NULL, 0, 0, NULL}};
static const jfast_path pod_containers[] = {{"[]", JFAST_ENTER, 0, pod_container}, {NULL, 0, 0, NULL}};
/* Volumes are found by name; their sources are only ever written. */
static const jfast_path pod_volume[] = {DROP("projected"), DROP("configMap"), DROP("secret"), DROP("downwardAPI"),
                                        DROP("emptyDir"), DROP("hostPath"), DROP("persistentVolumeClaim"),
                                        DROP("ephemeral"), DROP("csi"), DROP("nfs"), {NULL, 0, 0, NULL}};
static const jfast_path pod_volumes[] = {{"[]", JFAST_ENTER, 0, pod_volume}, {NULL, 0, 0, NULL}};
static const jfast_path pod_spec[] = {{"containers", JFAST_ENTER, 0, pod_containers},
                                      {"initContainers", JFAST_ENTER, 0, pod_containers},
                                      {"volumes", JFAST_ENTER, 0, pod_volumes},
                                      DROP("securityContext"),
                                      DROP("tolerations"),
                                      DROP("affinity"),
                                      DROP("topologySpreadConstraints"),
                                      DROP("nodeSelector"),
                                      DROP("imagePullSecrets"),
                                      DROP("hostAliases"),
                                      DROP("dnsConfig"),
                                      DROP("readinessGates"),
                                      DROP("overhead"),
                                      DROP("resourceClaims"),
                                      DROP("schedulingGates"),
                                      {NULL, 0, 0, NULL}};
static const jfast_path pod_object[] = {{"metadata", JFAST_ENTER, 0, mf_meta},
                                        {"spec", JFAST_ENTER, 0, pod_spec},
                                        DROP("status"),
                                        {NULL, 0, 0, NULL}};
static const jfast_path pod_request[] = {{"object", JFAST_ENTER, 0, pod_object}, DROP("oldObject"), DROP("userInfo"),
                                         DROP("options"), DROP("requestKind"), DROP("requestResource"),
                                         DROP("resource"), {NULL, 0, 0, NULL}};
static const jfast_path pod_paths[] = {{"request", JFAST_ENTER, 0, pod_request}, {NULL, 0, 0, NULL}};

/* The skimmer and json-c: the parse of what jfast_parse declines, which
 * defines the tree and the error text. *skimmed is the copy parsed (the
 * tree's strings are json-c's own, so it may be freed at once). json-c
 * builds whatever it reads, so a body whose bound passes the budget (0:
 * none) is not given to it: SLOW_OVER, nothing built. 0 parsed, -1
 * refused (out holds the 400). */
#define SLOW_OVER 1
static int slow_parse(json_tokener *tok, size_t budget, const char *body, size_t len, const jfast_path *paths,
                      json_object **root, char **skimmed, review_out *out) {
    size_t slen = 0;
    *skimmed = paths ? without_managed_fields(body, len, &slen) : NULL;
    if (*skimmed) body = *skimmed, len = slen;
    if (budget && jfast_cost_bound(body, len) > budget) return SLOW_OVER;
    char perr[160];
    int prc = jparse_object(tok, body, len, root, perr, sizeof perr);
    if (prc < 0) reject(out, "%s", perr);
    else if (prc > 0) reject(out, "expected an AdmissionReview object%s", NULL);
    else jfast_prune(*root, paths);
    return prc ? -1 : 0;
}

#ifdef MUTATE_SELF_CHECK
/* The checked builds hold the one-pass parse to json-c's on every body it
 * takes: the same tree, member for member, in the same order. */
static void check_fast(json_tokener *tok, const char *body, size_t len, const jfast_path *paths, json_object *fast) {
    json_object *slow = NULL;
    char *skimmed = NULL;
    review_out scratch;
    memset(&scratch, 0, sizeof scratch);
    int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
    if (slow_parse(tok, 0, body, len, paths, &slow, &skimmed, &scratch) != 0 ||
        strcmp(json_object_to_json_string_ext(fast, flags), json_object_to_json_string_ext(slow, flags)) != 0) {
        fprintf(stderr, "review: jfast_parse and json-c disagree on a %zu-byte body\n", len);
        abort();
    }
    json_object_put(slow);
    review_out_free(&scratch);
    free(skimmed);
}
#endif

/* ---- a body past the budget ------------------------------------------------
 * Its tree is never built, but the answer still needs the review's
 * apiVersion and uid (the API server matches them) and the log its
 * names: these few scalars are read from the text by the skip's rule and
 * put in a tree of their own, which decode() then checks as it checks a
 * whole one. Each level is walked once, each value skipped once (nothing
 * allocated); a value that is not a string or a boolean is left out, the
 * first of a key written twice is the one taken, keys are compared as
 * written, and the walk stops at the first malformed byte: what it did not
 * reach is missing (no uid: the codec's 400). */
typedef struct sk_field {
    const char *key;
    const struct sk_field *below; /* an object to walk into, or NULL: a scalar */
} sk_field;

#define SK_END {NULL, NULL}
static const sk_field sk_meta[] = {{"name", NULL}, {"generateName", NULL}, {"namespace", NULL}, SK_END};
static const sk_field sk_object[] = {{"metadata", sk_meta}, SK_END};
static const sk_field sk_kind[] = {{"group", NULL}, {"version", NULL}, {"kind", NULL}, SK_END};
static const sk_field sk_user[] = {{"username", NULL}, SK_END};
static const sk_field sk_request[] = {{"uid", NULL},          {"operation", NULL}, {"subResource", NULL},
                                      {"namespace", NULL},    {"name", NULL},      {"dryRun", NULL},
                                      {"kind", sk_kind},      {"userInfo", sk_user}, {"object", sk_object},
                                      {"oldObject", sk_object}, SK_END};
static const sk_field sk_review[] = {{"apiVersion", NULL}, {"kind", NULL}, {"request", sk_request}, SK_END};

static void sk_walk(json_tokener *tok, const char *p, const char *end, const sk_field *fields, json_object *into) {
    p = jfast_skip_ws(p, end);
    if (p >= end || *p != '{') return;
    p = jfast_skip_ws(p + 1, end);
    while (p < end && *p == '"') {
        const char *k = p + 1, *ke = jfast_skip_string(p, end);
        if (!ke) return;
        size_t kl = (size_t)(ke - 1 - k);
        p = jfast_skip_ws(ke, end);
        if (p >= end || *p != ':') return;
        const char *v = jfast_skip_ws(p + 1, end), *ve = jfast_skip_value(v, end, 513);
        if (!ve) return;
        const sk_field *f = fields;
        while (f->key && !(strlen(f->key) == kl && !memcmp(f->key, k, kl))) f++;
        if (f->key && !json_object_object_get_ex(into, f->key, NULL)) {
            if (f->below && *v == '{') {
                json_object *child = jnew_obj();
                jset(into, f->key, child);
                sk_walk(tok, v, ve, f->below, child);
            } else if (!f->below) {
                /* A string (json-c decodes its escapes) or a boolean: no
                 * larger than the body. */
                json_object *scalar = jparse_scalar(tok, v, (size_t)(ve - v));
                if (scalar) jset(into, f->key, scalar);
            }
        }
        p = jfast_skip_ws(ve, end);
        if (p >= end || *p != ',') return;
        p = jfast_skip_ws(p + 1, end);
    }
}

static json_object *skeleton(json_tokener *tok, const char *body, size_t len) {
    json_object *root = jnew_obj();
    sk_walk(tok, body, body + len, sk_review, root);
    return root;
}

static int decode(json_tokener *tok, size_t budget, const char *body, size_t len, const jfast_path *paths,
                  review_request *rq, review_out *out) {
    memset(out, 0, sizeof *out);
    memset(rq, 0, sizeof *rq);
    json_object *root = NULL;
    if (!body || len == 0) {
        reject(out, "empty request body%s", NULL);
        return -1;
    }
    char *skimmed = NULL;
    int frc = jfast_parse_within(body, len, paths, budget ? budget : SIZE_MAX, NULL, &root);
    if (frc == 0) {
        int prc = slow_parse(tok, budget, body, len, paths, &root, &skimmed, out);
        if (prc == SLOW_OVER) frc = JFAST_OVER;
        else if (prc != 0) goto fail;
    }
#ifdef MUTATE_SELF_CHECK
    else if (frc == 1)
        check_fast(tok, body, len, paths, root);
#endif
    if (frc == JFAST_OVER) {
        rq->over = true;
        root = skeleton(tok, body, len);
    }
    const char *api = jstr(root, "apiVersion"), *kind = jstr(root, "kind");
    if (!api || strcmp(api, "admission.k8s.io/v1") != 0) {
        reject(out, "unsupported apiVersion \"%s\": expected admission.k8s.io/v1", api ? api : "");
        goto fail;
    }
    if (!kind || strcmp(kind, "AdmissionReview") != 0) {
        reject(out, "unsupported kind \"%s\": expected AdmissionReview", kind ? kind : "");
        goto fail;
    }
    json_object *req = jget(root, "request");
    if (!json_object_is_type(req, json_type_object)) {
        reject(out, "the AdmissionReview has no request%s", NULL);
        goto fail;
    }
    json_object *juid = jget(req, "uid");
    if (json_object_is_type(juid, json_type_string))
        rq->uid = (review_uid){json_object_get_string(juid), (size_t)json_object_get_string_len(juid)};
    if (!rq->uid.len) {
        reject(out, "request.uid is missing%s", NULL);
        goto fail;
    }
    /* For the log line, a C string: a NUL byte shows as U+FFFD. */
    size_t lo = 0;
    for (size_t i = 0; i < rq->uid.len; i++) {
        if (rq->uid.s[i]) {
            if (lo + 1 >= sizeof out->uid) break;
            out->uid[lo++] = rq->uid.s[i];
        } else {
            if (lo + 3 >= sizeof out->uid) break;
            memcpy(out->uid + lo, "\xef\xbf\xbd", 3);
            lo += 3;
        }
    }
    out->uid[lo] = 0;
    free(skimmed);
    rq->root = root;
    rq->api_version = api;
    rq->req = req;
    rq->operation = jstr(req, "operation");
    rq->sub_resource = jstr(req, "subResource");
    rq->ns = jstr(req, "namespace");
    rq->name = jstr(req, "name");
    rq->kind = jstr(jget(req, "kind"), "kind");
    rq->group = jstr(jget(req, "kind"), "group");
    rq->version = jstr(jget(req, "kind"), "version");
    rq->object = jget(req, "object");
    rq->old_object = jget(req, "oldObject");
    rq->dry_run = jbool(req, "dryRun");
    rq->user_info = jmap(req, "userInfo");
    return 0;
fail:
    json_object_put(root);
    free(skimmed);
    return -1;
}

int review_decode(json_tokener *tok, size_t budget, const char *body, size_t len, review_request *rq, review_out *out) {
    return decode(tok, budget, body, len, any_paths, rq, out);
}

void review_request_free(review_request *rq) {
    json_object_put(rq->root);
    memset(rq, 0, sizeof *rq);
}

void review_handle(const review_env *env, json_tokener *tok, mutate_cache *cache, const char *body, size_t len,
                   review_out *out) {
    review_handle_into(env, tok, cache, body, len, out, NULL, NULL);
}

void review_handle_into(const review_env *env, json_tokener *tok, mutate_cache *cache, const char *body, size_t len,
                        review_out *out, review_alloc alloc, void *ud) {
    review_request rq;
    const jfast_path *paths = env->no_skim ? NULL : pod_paths;
again:
    if (decode(tok, env->max_tree, body, len, paths, &rq, out) != 0) return;
    const char *op = rq.operation, *rkind = rq.kind, *sub = rq.sub_resource, *group = rq.group;
    if (!op || strcmp(op, "CREATE") != 0 || !rkind || strcmp(rkind, "Pod") != 0 || (group && *group) ||
        (sub && *sub)) {
        out->result = RESULT_IGNORED;
        respond(out, &rq, NULL, 0, NULL, 0, alloc, ud);
        goto done;
    }
    json_object *pod = rq.object;
    if (!json_object_is_type(pod, json_type_object)) {
        reject(out, "request.object is missing or not an object%s", NULL);
        goto done;
    }
    const char *ns = rq.ns;
    if (!ns || !*ns) ns = jstr(jget(pod, "metadata"), "namespace");
    if (!ns || !*ns) ns = "default";
    copy_cut(out->ns, sizeof out->ns, ns, "");
    json_object *meta = jget(pod, "metadata");
    const char *pname = jstr(meta, "name"), *gname = jstr(meta, "generateName");
    if (pname && *pname) copy_cut(out->pod, sizeof out->pod, pname, "");
    else copy_cut(out->pod, sizeof out->pod, gname ? gname : "", "*");
    if (rq.over) {
        /* Fail open, like a pod past a bound of the engine: what it asks
         * for was never read. */
        char *w = review_over_message("AdmissionReview", env->max_tree, "(bound tree_bytes, --max-tree-bytes); nothing injected");
        out->result = RESULT_FAILED_OPEN;
        out->limit = MUTATE_LIMIT_TREE_BYTES;
        out->skips = 1u << MUTATE_SKIP_LIMIT;
        out->nwarnings = 1;
        snprintf(out->first_warning, sizeof out->first_warning, "%s", w);
        respond(out, &rq, NULL, 0, &w, 1, alloc, ud);
        free(w);
        goto done;
    }

    kube_view view = kube_store_acquire(env->store);
    kube_reader src;
    kube_live_req live;
    const mutate_options *opt = env->opt;
    if (env->live) {
        kube_live_begin(&live, env->live, view.snap, &src);
        if (env->opt_native && kube_livesource_native_sidecars(env->live) == 1) opt = env->opt_native;
    } else {
        kube_reader_snapshot(&src, view.snap);
    }
    mutate_request mreq = {.pod = pod, .namespace = ns, .src = &src, .opt = opt, .patch_text = true,
                          .cache = cache};
    mreq.ns = kube_snapshot_get(view.snap, "Namespace", NULL, ns);
    mutate_result res;
    int rc = mutate_pod(&mreq, &res);
    if (res.record_compared && paths == pod_paths) {
        /* Its record may copy what was left out (above). */
        mutate_result_free(&res);
        if (env->live) kube_live_end(&live);
        kube_store_release(env->store, &view);
        review_request_free(&rq);
        paths = any_paths;
        goto again;
    }

    out->injected = res.injected;
    out->sidecar = res.sidecar;
    out->skips = res.skips;
    out->limit = res.limit;
    out->nwarnings = res.nwarnings;
    out->native = opt->native_sidecars;
    if (res.nwarnings) snprintf(out->first_warning, sizeof out->first_warning, "%s", res.warnings[0]);
    if (rc != 0) {
        /* Fail open: the pod goes ahead untouched, the reason is in the
         * warnings, the log and the metrics. */
        out->result = RESULT_FAILED_OPEN;
        respond(out, &rq, NULL, 0, res.warnings, res.nwarnings, alloc, ud);
    } else if (res.nops == 0) {
        out->result = RESULT_UNCHANGED;
        respond(out, &rq, NULL, 0, res.warnings, res.nwarnings, alloc, ud);
    } else {
        /* Written by the engine as it diffed: no array of operations. */
        out->result = RESULT_MUTATED;
        respond(out, &rq, res.patch_text, res.patch_len, res.warnings, res.nwarnings, alloc, ud);
    }
    /* The result shares parts of the pod with objects the source lent. */
    mutate_result_free(&res);
    if (env->live) kube_live_end(&live);
    kube_store_release(env->store, &view);
done:
    review_request_free(&rq);
}

char *review_over_message(const char *what, size_t budget, const char *outcome) {
    return xasprintf("the %s would take more than the %zu bytes of memory otel-webhook gives one request %s", what,
                     budget, outcome);
}

void review_out_free(review_out *out) {
    if (out->owned) free(out->body);
    out->body = NULL;
}
