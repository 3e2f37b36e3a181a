/* tests/unit/util.c - helpers for the Check suites (see util.h). */
#include "tests/unit/util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *tu_read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s\n", path); abort(); }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) abort();
    buf[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

json_object *tu_json(const char *text) {
    json_tokener *tok = json_tokener_new();
    json_object *o = json_tokener_parse_ex(tok, text, (int)strlen(text));
    if (json_tokener_get_error(tok) != json_tokener_success) {
        fprintf(stderr, "bad test JSON: %s\n%s\n", json_tokener_error_desc(json_tokener_get_error(tok)), text);
        abort();
    }
    json_tokener_free(tok);
    return o;
}

char *tu_str(json_object *obj) {
    return strdup(json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
}

int tu_run(Suite *s) {
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
