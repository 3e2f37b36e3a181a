/* server/inject_input.h - manifests read the way kubectl reads them, for the
 * offline commands (`otel-webhook inject`, `otel-webhook validate`): files,
 * folders (-R for their subfolders), standard input, cut into documents that
 * remember their file, line and bytes, with the lines of a kind: List's
 * items. See inject_input.c. */
#ifndef SERVER_INJECT_INPUT_H
#define SERVER_INJECT_INPUT_H

#include "kube/yaml.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct inject_file {
    char *name;  /* in messages: the path as given, joined under its folder; <stdin> */
    char *text;  /* the whole file */
    size_t len;
    bool json;   /* one JSON value, read by json-c: no byte spans */
    kube_yaml_lines *lines; /* every value's line (YAML input); NULL for JSON */
    size_t first, ndocs; /* its documents, in inject_input.docs */
} inject_file;

typedef struct inject_doc {
    json_object *obj;
    size_t file;        /* index in inject_input.files */
    int line;           /* where its content starts */
    size_t start, end;  /* its content's bytes in the file's text; end 0 when unknown */
    int *item_lines;    /* of a List's items (kube_yaml_doc); NULL when unknown */
    size_t nitem_lines;
    bool changed;       /* the engine changed an object in it: it is written anew */
} inject_doc;

typedef struct inject_input {
    inject_file *files;
    size_t nfiles;
    inject_doc *docs;
    size_t ndocs;
} inject_input;

/* Reads every path in order (- for standard input; a folder: its *.yaml,
 * *.yml and *.json files in name order, dot-files skipped, subfolders too
 * when recursive). Returns 0, or -1 after printing "FILE:LINE: reason" or
 * "FILE: reason" for each file that could not be read or parsed. */
int inject_input_read(inject_input *in, const char *const *paths, size_t npaths, bool recursive);
void inject_input_free(inject_input *in);
/* The line of item i of document d's List (the document's line when the
 * parser could not say). */
int inject_item_line(const inject_doc *d, size_t i);

#endif
