/* tests/unit/test_jwalk.c - mutate/jwalk.c, the engine's cheap reads and
 * builds of json-c objects: every read gives base/json.c's answer (members
 * within the walked entries and past them, absent, null, of another type,
 * holders that are not objects, lists with elements that are not named
 * objects); literal keys added as new and constant are kept, copied by a
 * deep copy, deleted and freed without a leak or a double free (valgrind
 * runs this suite too); jw_copy writes jcopy's text, numbers as written. */
#include "mutate/internal.h"
#include "tests/unit/util.h"

#include "base/jtext.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Objects and lists of every shape the readers meet. */
static const char *const DOC =
    "{\"small\": {\"name\": \"a\", \"value\": \"1\"},"
    " \"late\": {\"image\": \"i\", \"x\": 1, \"y\": 2, \"z\": 3, \"name\": \"late\", \"env\": []},"
    " \"nulls\": {\"name\": null, \"value\": null},"
    " \"typed\": {\"name\": 7, \"value\": [\"v\"], \"valueFrom\": \"s\"},"
    " \"empty\": {},"
    " \"list\": [{\"name\": \"first\"}, 3, null, [\"x\"], {\"value\": \"no name\"}, {\"name\": 5},"
    "            {\"x\": 0, \"y\": 0, \"z\": 0, \"w\": 0, \"name\": \"fifth member\"},"
    "            {\"value\": \"v\", \"name\": \"second member\"}, {\"name\": \"first\"}, {\"name\": \"\"},"
    "            {\"name\": \"firs\"}, {\"name\": \"first \"}],"
    " \"str\": \"s\", \"num\": 1}";

static const char *const KEYS[] = {"name", "value", "valueFrom", "env", "image", "z", "", "nam", "names", NULL};

static const char *const HOLDERS[] = {"small", "late", "nulls", "typed", "empty", "list", "str", "num", "absent", NULL};

START_TEST(reads_give_base_json_answers) {
    json_object *doc = tu_json(DOC);
    for (int h = 0; HOLDERS[h]; h++) {
        json_object *o = json_object_object_get(doc, HOLDERS[h]);
        for (int k = 0; KEYS[k]; k++) {
            ck_assert_msg(jw_get(o, KEYS[k]) == jget(o, KEYS[k]), "jw_get %s.%s", HOLDERS[h], KEYS[k]);
            ck_assert_msg(jw_str(o, KEYS[k]) == jstr(o, KEYS[k]), "jw_str %s.%s", HOLDERS[h], KEYS[k]);
            json_object *raw = NULL;
            if (json_object_is_type(o, json_type_object)) json_object_object_get_ex(o, KEYS[k], &raw);
            ck_assert_msg(jw_member(o, KEYS[k]) == raw, "jw_member %s.%s", HOLDERS[h], KEYS[k]);
        }
    }
    /* The answers themselves, within the walked entries and past them. */
    ck_assert_str_eq(jw_str(json_object_object_get(doc, "small"), "value"), "1");
    ck_assert_str_eq(jw_str(json_object_object_get(doc, "late"), "name"), "late");
    ck_assert(json_object_is_type(jw_get(json_object_object_get(doc, "late"), "env"), json_type_array));
    ck_assert_ptr_null(jw_str(json_object_object_get(doc, "typed"), "name"));
    ck_assert_ptr_null(jw_get(json_object_object_get(doc, "nulls"), "name"));
    json_object_put(doc);
}
END_TEST

START_TEST(find_named_gives_jfind_named_answers) {
    json_object *doc = tu_json(DOC), *list = json_object_object_get(doc, "list");
    static const struct {
        const char *name;
        long idx; /* -1: none */
    } cases[] = {{"first", 0}, {"fifth member", 6}, {"second member", 7}, {"", 9}, {"firs", 10}, {"first ", 11},
                 {"missing", -1}, {"fi", -1}, {"no name", -1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t a = 99, b = 99;
        json_object *e = jw_find_named(list, cases[i].name, &a);
        ck_assert_msg(e == jfind_named(list, cases[i].name, &b), "%s", cases[i].name);
        if (cases[i].idx < 0) {
            ck_assert_ptr_null(e);
            ck_assert_uint_eq(a, 99);
        } else {
            ck_assert_ptr_eq(e, json_object_array_get_idx(list, (size_t)cases[i].idx));
            ck_assert_uint_eq(a, (size_t)cases[i].idx);
            ck_assert_uint_eq(a, b);
        }
        ck_assert_ptr_eq(jw_find_named(list, cases[i].name, NULL), e);
    }
    /* Holders that are not lists hold nothing. */
    for (int h = 0; HOLDERS[h]; h++) {
        json_object *o = json_object_object_get(doc, HOLDERS[h]);
        if (o != list) ck_assert_ptr_null(jw_find_named(o, "a", NULL));
    }
    json_object_put(doc);
}
END_TEST

START_TEST(literal_keys_are_kept_copied_and_freed) {
    json_object *o = jnew_obj(), *inner = jnew_obj();
    jw_add(o, "name", jnew_str("x"));
    jw_add(o, "valueFrom", inner);
    jw_add(inner, "fieldPath", jnew_str("metadata.name"));
    jw_add(o, "empty", NULL);
    char *t = jtext(o, NULL);
    ck_assert_str_eq(t, "{\"name\":\"x\",\"valueFrom\":{\"fieldPath\":\"metadata.name\"},\"empty\":null}");
    free(t);
    ck_assert_str_eq(jw_str(o, "name"), "x");
    /* A deep copy owns its keys: it outlives the original. */
    json_object *copy = jcopy(o), *mine = jw_copy(o);
    json_object_put(o);
    t = jtext(copy, NULL);
    char *u = jtext(mine, NULL);
    ck_assert_str_eq(t, u);
    ck_assert_str_eq(t, "{\"name\":\"x\",\"valueFrom\":{\"fieldPath\":\"metadata.name\"},\"empty\":null}");
    free(t);
    free(u);
    /* Replaced and deleted members of constant keys (valgrind: no free of a literal). */
    o = jnew_obj();
    jw_add(o, "name", jnew_str("a"));
    jw_add(o, "value", jnew_str("b"));
    jset(o, "name", jnew_str("c"));
    json_object_object_del(o, "value");
    t = jtext(o, NULL);
    ck_assert_str_eq(t, "{\"name\":\"c\"}");
    free(t);
    json_object_put(o);
    json_object_put(copy);
    json_object_put(mine);
}
END_TEST

START_TEST(copy_writes_jcopys_text) {
    json_object *doc = tu_json("{\"a\": 1.50, \"b\": [1, -2, 3.0e2, true, false, null, \"s\\u00e9\\n\"], \"c\": {},"
                               " \"d\": [], \"e\": {\"f\": {\"g\": \"h\"}, \"n\": null}, \"i\": 12345678901234567890,"
                               " \"j\": -0.0}");
    json_object *a = jcopy(doc), *b = jw_copy(doc);
    char *ta = jtext(a, NULL), *tb = jtext(b, NULL);
    ck_assert_str_eq(ta, tb);
    /* A copy, not the same objects. */
    ck_assert_ptr_ne(b, doc);
    ck_assert_ptr_ne(json_object_object_get(b, "e"), json_object_object_get(doc, "e"));
    ck_assert_ptr_ne(json_object_array_get_idx(json_object_object_get(b, "b"), 6),
                     json_object_array_get_idx(json_object_object_get(doc, "b"), 6));
    ck_assert_ptr_null(jw_copy(NULL));
    free(ta);
    free(tb);
    json_object_put(a);
    json_object_put(b);
    json_object_put(doc);
}
END_TEST

int main(void) {
    Suite *s = suite_create("jwalk");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, reads_give_base_json_answers);
    tcase_add_test(tc, find_named_gives_jfind_named_answers);
    tcase_add_test(tc, literal_keys_are_kept_copied_and_freed);
    tcase_add_test(tc, copy_writes_jcopys_text);
    suite_add_tcase(s, tc);
    return tu_run(s);
}
