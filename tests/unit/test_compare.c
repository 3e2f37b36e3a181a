/* tests/unit/test_compare.c - the "nothing changed" decision of otel-reconcile
 * run as pure functions (reconcile/compare.h): quantities by value, the
 * subset rule, the digest and its annotation, immutable-field changes of
 * workloads, the parser of the API server's 422 immutable refusal, and the
 * changed fields a dry run prints (the same walk, reconcile/diff.h). The
 * requests these decisions lead to are checked from the outside by
 * reconcile_run_test.py against the fake API server. */
#include "reconcile/compare.h"

#include "base/json.h"
#include "reconcile/diff.h"
#include "reconcile/run.h"
#include "tests/unit/util.h"

#include <check.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The JSON below is written by hand with ' for ". */
static char *dq(const char *text) {
    char *t = strdup(text);
    for (char *p = t; *p; p++)
        if (*p == '\'') *p = '"';
    return t;
}

static json_object *J(const char *text) {
    char *t = dq(text);
    json_object *o = tu_json(t);
    free(t);
    return o;
}

static bool sub(const char *want, const char *have) {
    json_object *w = J(want), *h = J(have);
    bool r = reconcile_subset(w, h);
    json_object_put(w);
    json_object_put(h);
    return r;
}

#define SUBSET(want, have) ck_assert_msg(sub(want, have), "%s should match %s", want, have)
#define NOT_SUBSET(want, have) ck_assert_msg(!sub(want, have), "%s should not match %s", want, have)

static long double qty(const char *s) {
    long double v = -12345.0L;
    ck_assert_msg(reconcile_quantity(s, &v), "%s should be a quantity", s);
    return v;
}

#define NOT_QUANTITY(s)                                                                                                \
    do {                                                                                                               \
        long double v_ = 0;                                                                                            \
        ck_assert_msg(!reconcile_quantity(s, &v_), "%s should not be a quantity", s);                                  \
    } while (0)

/* ---- quantities --------------------------------------------------------- */

START_TEST(quantity_values) {
    ck_assert(qty("1Gi") == 1073741824.0L);
    ck_assert(qty("1024Mi") == 1073741824.0L);
    ck_assert(qty("1Ki") == 1024.0L);
    ck_assert(qty("1.5Gi") == 1610612736.0L);
    ck_assert(qty("1k") == 1000.0L);
    ck_assert(qty("1e3") == 1000.0L);
    ck_assert(qty("2M") == 2000000.0L);
    ck_assert(qty("500m") == 0.5L);
    ck_assert(qty("0.5") == 0.5L);
    ck_assert(qty(".5") == 0.5L);
    ck_assert(qty("+2") == 2.0L);
    ck_assert(qty("-1") == -1.0L);
    ck_assert(qty("3") == 3.0L);
    /* "E" is exa after a number, an exponent only with digits after it */
    ck_assert(qty("2E") == 2e18L);
    ck_assert(qty("2E3") == 2000.0L);
}
END_TEST

START_TEST(quantity_refusals) {
    NOT_QUANTITY("");
    NOT_QUANTITY("abc");
    NOT_QUANTITY("Gi");
    NOT_QUANTITY("e3");
    NOT_QUANTITY(".");
    NOT_QUANTITY("-");
    NOT_QUANTITY(" 1");
    NOT_QUANTITY("1 Gi");
    NOT_QUANTITY("1Gb");
    NOT_QUANTITY("1gi");
    NOT_QUANTITY("1e");
    NOT_QUANTITY("1.5.3");
    NOT_QUANTITY("inf");
    NOT_QUANTITY("nan");
}
END_TEST

START_TEST(quantities_compared_by_value) {
    SUBSET("{'resources':{'limits':{'memory':'1024Mi'}}}", "{'resources':{'limits':{'memory':'1Gi'}}}");
    SUBSET("{'resources':{'requests':{'cpu':'0.5'}}}", "{'resources':{'requests':{'cpu':'500m'}}}");
    SUBSET("{'resources':{'requests':{'cpu':'500m'}}}", "{'resources':{'requests':{'cpu':'0.5'}}}");
    SUBSET("{'limits':{'x':'1e3'}}", "{'limits':{'x':'1k'}}");
    /* equal but for rounding (0.12m and 120u differ in the last bit) */
    SUBSET("{'requests':{'cpu':'0.1m'}}", "{'requests':{'cpu':'100u'}}");
    SUBSET("{'requests':{'cpu':'0.12m'}}", "{'requests':{'cpu':'120u'}}");
    SUBSET("{'requests':{'cpu':'0.3u'}}", "{'requests':{'cpu':'300n'}}");
    NOT_SUBSET("{'requests':{'cpu':'1'}}", "{'requests':{'cpu':'1.000000001'}}"); /* more than rounding */
    SUBSET("{'requests':{'cpu':'1'}}", "{'requests':{'cpu':1}}");           /* a number is a quantity there */
    SUBSET("{'requests':{'cpu':2}}", "{'requests':{'cpu':'2'}}");
    SUBSET("{'limits':{'deep':{'m':'1Gi'}}}", "{'limits':{'deep':{'m':'1024Mi'}}}"); /* below, too */
    /* a string that is not a quantity is compared as text */
    SUBSET("{'requests':{'x':'abc'}}", "{'requests':{'x':'abc'}}");
    NOT_SUBSET("{'requests':{'x':'abc'}}", "{'requests':{'x':'abd'}}");

    NOT_SUBSET("{'resources':{'limits':{'memory':'1Gi'}}}", "{'resources':{'limits':{'memory':'1G'}}}");
    NOT_SUBSET("{'limits':{'x':'1k'}}", "{'limits':{'x':'1Ki'}}");
    NOT_SUBSET("{'requests':{'cpu':'500m'}}", "{'requests':{'cpu':'0.6'}}");
    NOT_SUBSET("{'requests':{'cpu':'100m'}}", "{'requests':{'cpu':'100u'}}");
    NOT_SUBSET("{'requests':{'memory':'1Gi'}}", "{'requests':{'memory':'abc'}}");
    NOT_SUBSET("{'requests':{'memory':'1Gi'}}", "{'requests':{}}");
}
END_TEST

START_TEST(quantities_only_below_requests_and_limits) {
    NOT_SUBSET("{'env':[{'name':'M','value':'1024Mi'}]}", "{'env':[{'name':'M','value':'1Gi'}]}");
    NOT_SUBSET("{'value':'1'}", "{'value':'1.0'}");
    SUBSET("{'limits':{'value':'1'}}", "{'limits':{'value':'1.0'}}");
    NOT_SUBSET("{'resources':{'memory':'1024Mi'}}", "{'resources':{'memory':'1Gi'}}");
    /* a sibling of limits is not below it */
    NOT_SUBSET("{'limits':{},'other':{'m':'1024Mi'}}", "{'limits':{},'other':{'m':'1Gi'}}");
}
END_TEST

/* ---- the subset rule ---------------------------------------------------- */

START_TEST(subset_ignores_what_only_live_has) {
    SUBSET("{'a':1}", "{'a':1,'b':2}");
    SUBSET("{'spec':{'replicas':1}}", "{'spec':{'replicas':1,'revisionHistoryLimit':10},'status':{'ready':1}}");
    NOT_SUBSET("{'a':1,'b':2}", "{'a':1}");
    NOT_SUBSET("{'a':1}", "{'a':2}");
    NOT_SUBSET("{'spec':{'replicas':1}}", "{'spec':{'replicas':2,'paused':false}}");
    SUBSET("{}", "{'a':1}");
}
END_TEST

START_TEST(subset_empty_equals_absent) {
    SUBSET("{'a':{}}", "{}");
    SUBSET("{'a':[]}", "{}");
    SUBSET("{'a':null}", "{}");
    SUBSET("{'a':{'b':{}}}", "{'a':{}}");
    SUBSET("{'a':{}}", "{'a':null}");
    /* an empty map or list matches whatever live has there */
    SUBSET("{'a':{}}", "{'a':{'x':1}}");
    SUBSET("{'a':[]}", "{'a':[1]}");
    ck_assert(reconcile_subset(NULL, NULL));
    /* an empty string is a value */
    NOT_SUBSET("{'a':''}", "{}");
    NOT_SUBSET("{'a':''}", "{'a':'x'}");
    NOT_SUBSET("{'a':{'b':1}}", "{}");
    NOT_SUBSET("{'a':[1]}", "{}");
}
END_TEST

START_TEST(subset_arrays_in_order) {
    SUBSET("{'a':[1,2]}", "{'a':[1,2]}");
    NOT_SUBSET("{'a':[1,2]}", "{'a':[2,1]}");
    NOT_SUBSET("{'a':[1,2]}", "{'a':[1,2,3]}");
    NOT_SUBSET("{'a':[1,2,3]}", "{'a':[1,2]}");
    SUBSET("{'a':[{'name':'x'}]}", "{'a':[{'name':'x','protocol':'TCP'}]}"); /* elements are subsets */
    NOT_SUBSET("{'a':[{'name':'x','port':1}]}", "{'a':[{'name':'x'}]}");
    NOT_SUBSET("{'a':[{'name':'x'},{'name':'y'}]}", "{'a':[{'name':'y'},{'name':'x'}]}");
    SUBSET("{'a':['x','y']}", "{'a':['x','y']}");
    NOT_SUBSET("{'a':['x','y']}", "{'a':['x','z']}");
}
END_TEST

START_TEST(subset_types_must_match) {
    NOT_SUBSET("{'a':'1'}", "{'a':1}");
    NOT_SUBSET("{'a':1}", "{'a':'1'}");
    NOT_SUBSET("{'a':true}", "{'a':'true'}");
    NOT_SUBSET("{'a':true}", "{'a':1}");
    NOT_SUBSET("{'a':{'x':1}}", "{'a':[{'x':1}]}");
    NOT_SUBSET("{'a':[1]}", "{'a':{'0':1}}");
    NOT_SUBSET("{'a':'x'}", "{'a':null}");
    NOT_SUBSET("{'a':'x'}", "{'a':['x']}");
    SUBSET("{'a':true}", "{'a':true}");
    SUBSET("{'a':false}", "{'a':false}");
    NOT_SUBSET("{'a':true}", "{'a':false}");
    NOT_SUBSET("{'a':false}", "{}");
    SUBSET("{'a':'x'}", "{'a':'x'}");
    /* numbers are compared as numbers, whatever json-c's type */
    SUBSET("{'a':1}", "{'a':1.0}");
    SUBSET("{'a':1.0}", "{'a':1}");
    NOT_SUBSET("{'a':1}", "{'a':1.5}");
}
END_TEST

/* ---- the digest --------------------------------------------------------- */

static char *digest_of(const char *text) {
    json_object *o = J(text);
    char *d = malloc(RECONCILE_DIGEST_SIZE);
    reconcile_digest(o, d);
    json_object_put(o);
    return d;
}

#define CM "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c','namespace':'ns'},'data':{'k':'v'}"

START_TEST(digest_is_sha256_of_the_compact_text) {
    char *d;
    /* printf '{"a":1}' | sha256sum */
    d = digest_of("{'a':1}");
    ck_assert_str_eq(d, "015abd7f5cc57a2d");
    free(d);
    d = digest_of(CM "}");
    ck_assert_str_eq(d, "fe10c3caa47da5f9");
    free(d);
    /* '/' is not escaped: {"u":"a/b"}, not {"u":"a\/b"} (bcbd4815081dcaa9) */
    d = digest_of("{'u':'a/b'}");
    ck_assert_str_eq(d, "5c9a1bdf01d49cf9");
    free(d);
    json_object *o = J("{'u':'a/b','n':[1,{}]}");
    ck_assert_str_eq(reconcile_json_text(o), "{\"u\":\"a/b\",\"n\":[1,{}]}");
    json_object_put(o);
}
END_TEST

START_TEST(digest_stable_for_equal_objects) {
    char *a = digest_of(CM "}"), *b = digest_of(CM "}");
    ck_assert_uint_eq(strlen(a), 16);
    ck_assert_str_eq(a, b);
    free(b);
    /* the same object twice */
    json_object *o = J(CM "}");
    char d1[RECONCILE_DIGEST_SIZE], d2[RECONCILE_DIGEST_SIZE];
    reconcile_digest(o, d1);
    reconcile_digest(o, d2);
    ck_assert_str_eq(d1, d2);
    ck_assert_str_eq(d1, a);
    json_object_put(o);
    free(a);
}
END_TEST

START_TEST(digest_differs_when_a_field_changes) {
    char *full = digest_of("{'data':{'k':'v','gone':'x'}}"), *removed = digest_of("{'data':{'k':'v'}}");
    ck_assert_str_ne(full, removed);
    free(removed);
    char *changed = digest_of("{'data':{'k':'w','gone':'x'}}");
    ck_assert_str_ne(full, changed);
    free(changed);
    /* the text is digested: key order counts (rendered objects have a
     * fixed one) */
    char *reordered = digest_of("{'data':{'gone':'x','k':'v'}}");
    ck_assert_str_ne(full, reordered);
    free(reordered);
    free(full);
}
END_TEST

START_TEST(stamp_digest_annotates_the_unstamped_digest) {
    json_object *o = J(CM "}");
    reconcile_stamp_digest(o);
    ck_assert_str_eq(jstr(jmap(jmap(o, "metadata"), "annotations"), RECONCILE_HASH_ANNOTATION), "fe10c3caa47da5f9");
    json_object_put(o);
    /* annotations already there are kept */
    o = J("{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c','namespace':'ns','annotations':{'team':'a'}},"
          "'data':{'k':'v'}}");
    reconcile_stamp_digest(o);
    json_object *ann = jmap(jmap(o, "metadata"), "annotations");
    ck_assert_str_eq(jstr(ann, RECONCILE_HASH_ANNOTATION), "71bb3644b4ead990");
    ck_assert_str_eq(jstr(ann, "team"), "a");
    ck_assert_int_eq(json_object_object_length(ann), 2);
    json_object_put(o);
}
END_TEST

/* The two halves of "nothing changed" together: a field removed from the
 * desired object is still in the live one, so only the digest sees it. */
START_TEST(stamped_subset_sees_a_removed_field) {
    json_object *before = J(CM ",'binaryData':{'b':'AA=='}}"), *after = J(CM "}");
    reconcile_stamp_digest(before);
    json_object *live = json_tokener_parse(reconcile_json_text(before)); /* applied: live is what we sent */
    jset_str(jmap(live, "metadata"), "uid", "u-1");                       /* and what the server adds */
    ck_assert(reconcile_subset(before, live));
    ck_assert(reconcile_subset(after, live)); /* unstamped: the removal is missed */
    reconcile_stamp_digest(after);
    ck_assert(!reconcile_subset(after, live));
    /* someone editing a field we manage: the digest still matches */
    json_object *edited = json_tokener_parse(reconcile_json_text(before));
    jset_str(jmap(edited, "data"), "k", "edited");
    ck_assert(!reconcile_subset(before, edited));
    /* a live object without our annotation was not applied from this */
    json_object *foreign = J(CM ",'binaryData':{'b':'AA=='}}");
    ck_assert(!reconcile_subset(before, foreign));
    json_object_put(foreign);
    json_object_put(edited);
    json_object_put(live);
    json_object_put(after);
    json_object_put(before);
}
END_TEST

/* ---- immutable-field changes -------------------------------------------- */

/* The reason (NULL: none) and, when there is one, the delete's policy. */
static const char *change(const char *desired, const char *live, bool *orphan) {
    json_object *d = J(desired), *l = live ? J(live) : NULL;
    const char *why = reconcile_immutable_change(d, l, orphan);
    json_object_put(d);
    json_object_put(l);
    return why;
}

/* o_ starts as the opposite of what is expected, so the call must set it. */
#define RECREATE(desired, live, reason, want_orphan)                                                                   \
    do {                                                                                                               \
        bool o_ = !(want_orphan);                                                                                      \
        const char *why_ = change(desired, live, &o_);                                                                 \
        ck_assert_ptr_nonnull(why_);                                                                                   \
        ck_assert_str_eq(why_, reason);                                                                                \
        ck_assert_msg(o_ == (want_orphan), "%s: orphan %d", reason, o_);                                               \
    } while (0)
#define NO_RECREATE(desired, live)                                                                                     \
    do {                                                                                                               \
        bool o_ = false;                                                                                               \
        const char *why_ = change(desired, live, &o_);                                                                 \
        ck_assert_msg(why_ == NULL, "unexpected recreate: %s", why_);                                                  \
    } while (0)

#define SEL(v) "'selector':{'matchLabels':{'app':'" v "'}}"
#define DEP(spec) "{'apiVersion':'apps/v1','kind':'Deployment','spec':{" spec "}}"
#define DS(spec) "{'apiVersion':'apps/v1','kind':'DaemonSet','spec':{" spec "}}"
#define STS(spec) "{'apiVersion':'apps/v1','kind':'StatefulSet','spec':{" spec "}}"
#define VCT(name, storage)                                                                                             \
    "{'metadata':{'name':'" name "'},'spec':{'accessModes':['ReadWriteOnce'],"                                          \
    "'resources':{'requests':{'storage':'" storage "'}}}}"

START_TEST(immutable_selector_change_is_background) {
    RECREATE(DEP(SEL("a")), DEP(SEL("b")), "spec.selector changed", false);
    RECREATE(DS(SEL("a")), DS(SEL("b")), "spec.selector changed", false);
    /* a StatefulSet's changed selector cannot adopt the pods either */
    RECREATE(STS(SEL("a") ",'serviceName':'x'"), STS(SEL("b") ",'serviceName':'y'"), "spec.selector changed", false);
    /* equal means equal, not subset: a selector key only live has counts */
    RECREATE(DEP("'selector':{'matchLabels':{'app':'a'}}"), DEP("'selector':{'matchLabels':{'app':'a','x':'y'}}"),
             "spec.selector changed", false);
    RECREATE(DEP("'replicas':1"), DEP(SEL("a")), "spec.selector changed", false);
}
END_TEST

START_TEST(immutable_no_change) {
    NO_RECREATE(DEP(SEL("a") ",'replicas':2"), DEP(SEL("a") ",'replicas':1,'paused':false"));
    NO_RECREATE(DS(SEL("a")), DS(SEL("a")));
    NO_RECREATE(DEP("'selector':{'matchLabels':{'a':'1','b':'2'}}"),
                DEP("'selector':{'matchLabels':{'b':'2','a':'1'}}")); /* key order */
    NO_RECREATE(DEP(SEL("a")), NULL);                                            /* nothing live: a create */
    NO_RECREATE(DEP(SEL("a")), "{'apiVersion':'apps/v1','kind':'Deployment'}"); /* no live spec */
    /* serviceName and claim templates matter only for StatefulSets */
    NO_RECREATE(DEP(SEL("a") ",'serviceName':'x'"), DEP(SEL("a") ",'serviceName':'y'"));
    NO_RECREATE(DEP(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"), DEP(SEL("a")));
    NO_RECREATE(STS(SEL("a") ",'serviceName':'x','replicas':3"), STS(SEL("a") ",'serviceName':'x','replicas':1"));
    NO_RECREATE(STS(SEL("a") ",'serviceName':''"), STS(SEL("a")));
    NO_RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[]"), STS(SEL("a")));
}
END_TEST

START_TEST(immutable_statefulset_change_is_orphan) {
    RECREATE(STS(SEL("a") ",'serviceName':'x'"), STS(SEL("a") ",'serviceName':'y'"), "spec.serviceName changed", true);
    RECREATE(STS(SEL("a") ",'serviceName':'x'"), STS(SEL("a")), "spec.serviceName changed", true);
    RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"), STS(SEL("a")),
             "spec.volumeClaimTemplates changed", true);
    RECREATE(STS(SEL("a")), STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"),
             "spec.volumeClaimTemplates changed", true);
    RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"),
             STS(SEL("a") ",'volumeClaimTemplates':[" VCT("e", "1Gi") "]"), "spec.volumeClaimTemplates changed", true);
    RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"),
             STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "2Gi") "]"), "spec.volumeClaimTemplates changed", true);
    RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[{'metadata':{'name':'d','labels':{'x':'1'}}}]"),
             STS(SEL("a") ",'volumeClaimTemplates':[{'metadata':{'name':'d'}}]"), "spec.volumeClaimTemplates changed",
             true);
    RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[{'metadata':{'name':'d','annotations':{'x':'1'}}}]"),
             STS(SEL("a") ",'volumeClaimTemplates':[{'metadata':{'name':'d','annotations':{'x':'2'}}}]"),
             "spec.volumeClaimTemplates changed", true);
}
END_TEST

START_TEST(immutable_claim_templates_compared_as_subsets) {
    /* the server's canonical quantity and its defaults are no change */
    NO_RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1024Mi") "]"),
                STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"));
    NO_RECREATE(STS(SEL("a") ",'volumeClaimTemplates':[" VCT("d", "1Gi") "]"),
                STS(SEL("a") ",'volumeClaimTemplates':[{'apiVersion':'v1','kind':'PersistentVolumeClaim',"
                             "'metadata':{'name':'d','labels':{'extra':'1'}},'spec':{'accessModes':['ReadWriteOnce'],"
                             "'resources':{'requests':{'storage':'1Gi'}},'volumeMode':'Filesystem'},"
                             "'status':{'phase':'Pending'}}]"));
}
END_TEST

/* ---- the 422 immutable refusal ------------------------------------------ */

static bool refusal(int code, const char *body) {
    if (!body) return reconcile_immutable_refusal(code, NULL);
    char *t = dq(body);
    bool r = reconcile_immutable_refusal(code, t);
    free(t);
    return r;
}

#define IMM "spec.selector: Invalid value: {}: field is immutable"
#define STS_IMM "spec: Forbidden: updates to statefulset spec for fields other than replicas are forbidden"
#define CAUSES(...) "{'kind':'Status','code':422,'message':'x','details':{'causes':[" __VA_ARGS__ "]}}"

START_TEST(refusal_every_cause_immutable) {
    ck_assert(refusal(422, CAUSES("{'reason':'FieldValueInvalid','message':'" IMM "','field':'spec.selector'}")));
    ck_assert(refusal(422, CAUSES("{'message':'" IMM "'},{'message':'spec.template.x: field is immutable'}")));
    ck_assert(refusal(422, "{'kind':'Status','details':{'causes':[{'message':'" STS_IMM "'}]}}"));
    /* no causes: the message says it */
    ck_assert(refusal(422, "{'kind':'Status','message':'Deployment.apps \\'c\\' is invalid: " IMM "'}"));
    ck_assert(refusal(422, "{'message':'" STS_IMM "'}"));
}
END_TEST

START_TEST(refusal_one_other_cause_is_none) {
    ck_assert(!refusal(422, CAUSES("{'message':'" IMM "'},{'message':'spec.replicas: Invalid value: -1'}")));
    ck_assert(!refusal(422, CAUSES("{'message':'spec.replicas: Invalid value: -1'},{'message':'" IMM "'}")));
    ck_assert(!refusal(422, CAUSES("{'message':'" IMM "'},{'reason':'FieldValueInvalid'}"))); /* no message */
    ck_assert(!refusal(422, CAUSES("{'message':'spec.replicas: Invalid value: -1'}")));
    /* an empty list of causes names nothing, whatever the message says */
    ck_assert(!refusal(422, "{'message':'" IMM "','details':{'causes':[]}}"));
    ck_assert(!refusal(422, "{'message':'spec.replicas: Invalid value: -1'}"));
    ck_assert(!refusal(422, "{'kind':'Status'}"));
    ck_assert(!refusal(422, "not json: field is immutable"));
    ck_assert(!refusal(422, NULL));
}
END_TEST

START_TEST(refusal_only_on_422) {
    const char *body = CAUSES("{'message':'" IMM "'}");
    ck_assert(refusal(422, body)); /* the same body is one on a 422 */
    ck_assert(!refusal(400, body));
    ck_assert(!refusal(409, body));
    ck_assert(!refusal(403, body));
    ck_assert(!refusal(200, body));
    ck_assert(!refusal(500, body));
    ck_assert(!refusal(-1, body));
    ck_assert(!refusal(0, body));
}
END_TEST

/* ---- the changed fields (dry run) ---------------------------------------- */

static char *diff(const char *want, const char *have) {
    json_object *w = J(want), *h = J(have);
    char *t = reconcile_diff_text(w, h);
    json_object_put(w);
    json_object_put(h);
    return t;
}

#define DIFF(want, have, expected)                                                                                     \
    do {                                                                                                               \
        char *t_ = diff(want, have), *e_ = dq(expected);                                                               \
        ck_assert_msg(strcmp(t_, e_) == 0, "%s against %s:\n%s\nexpected:\n%s", want, have, t_, e_);               \
        free(t_);                                                                                                      \
        free(e_);                                                                                                      \
    } while (0)

static size_t ndiff(const char *want, const char *have) {
    json_object *w = J(want), *h = J(have);
    size_t n = reconcile_diff(w, h, NULL, NULL);
    json_object_put(w);
    json_object_put(h);
    return n;
}

/* The walk without a callback is the subset decision; with one, it finds
 * a difference exactly when the decision does. */
START_TEST(diff_agrees_with_subset) {
    static const char *const pairs[][2] = {
        {"{'a':1}", "{'a':1,'b':2}"}, {"{'a':1}", "{'a':2}"}, {"{'a':{}}", "{}"}, {"{'a':[]}", "{'a':null}"},
        {"{'a':[1,2]}", "{'a':[1]}"}, {"{'a':[1]}", "{'a':[1,2]}"}, {"{'a':[2,1]}", "{'a':[1,2]}"},
        {"{'a':'1'}", "{'a':1}"}, {"{'r':{'limits':{'cpu':'0.5'}}}", "{'r':{'limits':{'cpu':'500m'}}}"},
        {"{'r':{'limits':{'cpu':'1'}}}", "{'r':{'limits':{'cpu':'500m'}}}"}, {"{'a':true}", "{'a':false}"},
        {"{'a':{'b':{'c':'x'}}}", "{'a':{'b':'x'}}"}, {"{'a':1.5}", "{'a':1.5}"}, {"{'a':null}", "{}"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof *pairs; i++) {
        json_object *w = J(pairs[i][0]), *h = J(pairs[i][1]);
        size_t counted = 0;
        bool s = reconcile_subset(w, h);
        size_t n = reconcile_diff(w, h, NULL, NULL);
        char *t = reconcile_diff_text(w, h);
        for (const char *p = t; *p; p++) counted += *p == '\n';
        ck_assert_msg(s == (n == 0) && (n == 0) == (counted == 0), "%s against %s: subset %d, %zu differences, %s",
                      pairs[i][0], pairs[i][1], s, n, t);
        free(t);
        json_object_put(w);
        json_object_put(h);
    }
}
END_TEST

START_TEST(diff_lists_every_field) {
    DIFF("{'spec':{'replicas':3,'paused':false,'name':'a'}}", "{'spec':{'replicas':1,'paused':true,'name':'a'}}",
         "  spec.replicas: 1 -> 3\n  spec.paused: true -> false\n");
    ck_assert_uint_eq(ndiff("{'a':1,'b':2,'c':3}", "{'a':0,'b':0,'c':3}"), 1); /* without fn: the first only */
    /* nothing differs: no lines */
    DIFF("{'a':{'b':[1,{'c':'d'}]}}", "{'a':{'b':[1,{'c':'d','e':'f'}]},'status':{}}", "");
}
END_TEST

START_TEST(diff_paths_quote_keys_that_are_not_words) {
    DIFF("{'metadata':{'labels':{'app.kubernetes.io/name':'x','plain_key-1':'y'}},'data':{'c.yaml':'a: 1'}}",
         "{'metadata':{'labels':{}},'data':{'c.yaml':'a: 2'}}",
         "  metadata.labels['app.kubernetes.io/name']: (absent) -> 'x'\n"
         "  metadata.labels.plain_key-1: (absent) -> 'y'\n"
         "  data['c.yaml']: 'a: 2' -> 'a: 1'\n");
    /* a key needing escapes is written as a JSON string */
    DIFF("{'a\\'b':1}", "{}", "  ['a\\'b']: (absent) -> 1\n");
}
END_TEST

START_TEST(diff_lists_grown_and_shrunk) {
    DIFF("{'args':['a','b','c']}", "{'args':['a','x']}",
         "  args[1]: 'x' -> 'b'\n  args[2]: (absent) -> 'c'\n");
    DIFF("{'args':['a']}", "{'args':['a','x',{'y':1}]}",
         "  args[1]: 'x' -> (absent)\n  args[2]: {'y':1} -> (absent)\n");
    DIFF("{'c':[{'name':'a','env':[{'name':'X','value':'1'}]}]}",
         "{'c':[{'name':'a','env':[{'name':'X','value':'2'}]}]}", "  c[0].env[0].value: '2' -> '1'\n");
}
END_TEST

START_TEST(diff_subtrees_missing_or_of_another_type) {
    DIFF("{'spec':{'resources':{'limits':{'memory':'1Gi'}}}}", "{'spec':{}}",
         "  spec.resources: (absent) -> {'limits':{'memory':'1Gi'}}\n");
    DIFF("{'spec':{'ports':[{'port':80}]}}", "{'spec':{'ports':'80'}}", "  spec.ports: '80' -> [{'port':80}]\n");
    DIFF("{'a':1}", "[]", "  : [] -> {'a':1}\n");
}
END_TEST

START_TEST(diff_quantities_by_value) {
    DIFF("{'resources':{'limits':{'cpu':'0.5','memory':'1024Mi'},'requests':{'cpu':'100m'}}}",
         "{'resources':{'limits':{'cpu':'500m','memory':'1Gi'},'requests':{'cpu':'200m'}}}",
         "  resources.requests.cpu: '200m' -> '100m'\n");
    /* elsewhere strings are strings */
    DIFF("{'env':{'value':'1.0'}}", "{'env':{'value':'1'}}", "  env.value: '1' -> '1.0'\n");
}
END_TEST

START_TEST(diff_digest_alone_or_left_out) {
    DIFF("{'metadata':{'annotations':{'otel-reconcile/applied':'bbbb'}},'spec':{'a':1}}",
         "{'metadata':{'annotations':{'otel-reconcile/applied':'aaaa','other':'x'}},'spec':{'a':1,'b':2}}",
         "  metadata.annotations['otel-reconcile/applied']: 'aaaa' -> 'bbbb' (only the digest differs: the apply "
         "removes the fields the last one set and this one does not)\n");
    DIFF("{'metadata':{'annotations':{'otel-reconcile/applied':'bbbb'}},'spec':{'a':1}}",
         "{'metadata':{'annotations':{'otel-reconcile/applied':'aaaa'}},'spec':{'a':2}}", "  spec.a: 2 -> 1\n");
}
END_TEST

static Suite *suite(void) {
    Suite *s = suite_create("compare");
    TCase *tc = tcase_create("quantities");
    tcase_add_test(tc, quantity_values);
    tcase_add_test(tc, quantity_refusals);
    tcase_add_test(tc, quantities_compared_by_value);
    tcase_add_test(tc, quantities_only_below_requests_and_limits);
    suite_add_tcase(s, tc);
    tc = tcase_create("subset");
    tcase_add_test(tc, subset_ignores_what_only_live_has);
    tcase_add_test(tc, subset_empty_equals_absent);
    tcase_add_test(tc, subset_arrays_in_order);
    tcase_add_test(tc, subset_types_must_match);
    suite_add_tcase(s, tc);
    tc = tcase_create("digest");
    tcase_add_test(tc, digest_is_sha256_of_the_compact_text);
    tcase_add_test(tc, digest_stable_for_equal_objects);
    tcase_add_test(tc, digest_differs_when_a_field_changes);
    tcase_add_test(tc, stamp_digest_annotates_the_unstamped_digest);
    tcase_add_test(tc, stamped_subset_sees_a_removed_field);
    suite_add_tcase(s, tc);
    tc = tcase_create("immutable");
    tcase_add_test(tc, immutable_selector_change_is_background);
    tcase_add_test(tc, immutable_no_change);
    tcase_add_test(tc, immutable_statefulset_change_is_orphan);
    tcase_add_test(tc, immutable_claim_templates_compared_as_subsets);
    tcase_add_test(tc, refusal_every_cause_immutable);
    tcase_add_test(tc, refusal_one_other_cause_is_none);
    tcase_add_test(tc, refusal_only_on_422);
    suite_add_tcase(s, tc);
    tc = tcase_create("diff");
    tcase_add_test(tc, diff_agrees_with_subset);
    tcase_add_test(tc, diff_lists_every_field);
    tcase_add_test(tc, diff_paths_quote_keys_that_are_not_words);
    tcase_add_test(tc, diff_lists_grown_and_shrunk);
    tcase_add_test(tc, diff_subtrees_missing_or_of_another_type);
    tcase_add_test(tc, diff_quantities_by_value);
    tcase_add_test(tc, diff_digest_alone_or_left_out);
    suite_add_tcase(s, tc);
    return s;
}

int main(void) {
    return tu_run(suite());
}
