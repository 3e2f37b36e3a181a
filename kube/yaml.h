/* kube/yaml.h - YAML <-> json-c, the way Kubernetes reads manifests.
 *
 * Reading: a multi-document stream becomes one json-c value per document;
 * block and flow styles, anchors/aliases and merge keys (<<) are supported;
 * a duplicate mapping key is an error, as in go-yaml v3 ("mapping key \"a\"
 * already defined at line 2").
 * Each document also says where it is (its line, its bytes, the lines of
 * a List's items), so that callers can point at it and copy it unchanged.
 * Quoted scalars always stay strings; plain scalars are typed like
 * sigs.k8s.io/yaml (YAML 1.1 core resolution as go-yaml v2 does it): null/~,
 * true/false (and yes/no/on/off), ints (decimal, 0x, 0o/leading-0 octal; past int64 a
 * uint64 up to 2^64-1, exact),
 * floats (.inf/.nan included), everything else a string.
 * Limits, per parse (the whole stream), so that every reader of YAML
 * (inject, otel-reconcile render, resource files, the settings file) is
 * covered: 1,000,000 nodes plus one per input byte, aliases' copies
 * included; 16 MiB of scalar text (keys included) repeated by alias
 * copies; an estimate of the memory json-c will take of 64 MiB plus 48
 * bytes per input byte; 1,000 levels of nesting. Past one, the parse fails with the line
 * that crossed it ("alias expansion exceeds the limit of 16777216 bytes").
 * Writing: block style, two-space indent, keys in the object's order,
 * strings quoted only when a plain scalar would be read back as something
 * else, multi-line strings as literal blocks. */
#ifndef KUBE_YAML_H
#define KUBE_YAML_H

#include <stddef.h>
#include <json-c/json.h>

typedef struct kube_yaml_doc {
    json_object *obj; /* owned; NULL for an empty document */
    int line;         /* 1-based line where the document starts */
    /* Where the document's content is in buf, in bytes: from its first node
     * (its anchor or tag included) to the end of the line of its last one.
     * What lies between one document's end and the next one's start is
     * "---" separators, comments and empty documents. end is 0 when the
     * positions are unknown (UTF-16 input). */
    size_t start, end;
    /* The lines of the elements of the root mapping's items sequence (what
     * kind: List holds), in order (owned); NULL when there is none. */
    int *item_lines;
    size_t nitem_lines;
} kube_yaml_doc;

typedef struct kube_yaml_error {
    int line;          /* 1-based; 0 when unknown */
    char msg[256];     /* one line, no trailing newline */
} kube_yaml_error;

/* Parses every document of buf. Returns 0 and sets *docs and *ndocs (free with
 * kube_yaml_docs_free), or -1 and fills err. Empty documents are skipped. */
int kube_yaml_parse(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs,
                    kube_yaml_error *err);
void kube_yaml_docs_free(kube_yaml_doc *docs, size_t ndocs);

/* Where each value of a parse was written: the line of its key for a map
 * member, of its start for a list item or a document. For messages about a
 * value found after the parse (inject's malformed fields). Answers for the
 * values of the parsed documents while they live and are not replaced; 0
 * for NULL, JSON null (no object to look up) and values made later. */
typedef struct kube_yaml_lines kube_yaml_lines;

/* kube_yaml_parse, recording every value's line in *lines (free it with
 * kube_yaml_lines_free; NULL on failure). */
int kube_yaml_parse_lines(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs,
                          kube_yaml_error *err, kube_yaml_lines **lines);
int kube_yaml_line_of(const kube_yaml_lines *lines, const json_object *v);
void kube_yaml_lines_free(kube_yaml_lines *lines);

/* One budget shared by several parses (a ConversionReview's spec.configs):
 * each parse keeps its own limits above, and also charges here its memory
 * estimate and its alias copies' bytes. A parse that crosses one fails
 * with "WHAT: alias expansion exceeds the limit of N bytes" or "WHAT: the
 * YAML would take more than the N bytes of memory allowed" and sets
 * exceeded. */
typedef struct kube_yaml_budget {
    const char *what;               /* names the budget in messages */
    size_t memory, alias_bytes;     /* the limits */
    size_t used_memory, used_alias_bytes;
    int exceeded;
} kube_yaml_budget;
int kube_yaml_parse_budget(const char *buf, size_t len, kube_yaml_doc **docs, size_t *ndocs, kube_yaml_error *err,
                           kube_yaml_budget *budget);

/* Parses exactly one document; convenience for config files and tests. */
json_object *kube_yaml_parse_one(const char *buf, size_t len, kube_yaml_error *err);

/* Returns a malloc'ed YAML rendering of obj (one document, no "---"),
 * ending with a newline. */
char *kube_yaml_emit(json_object *obj);

/* How other writers lay out and quote the same tree, for text that must be
 * byte-identical to theirs (a ConfigMap's data is hashed and compared):
 *   SAFE     ours: quoted whenever any YAML 1.1 reader might type it
 *            ("1:20", "0.0.0.0:4317" included)
 *   GO_YAML  goccy/go-yaml, the collector config's writer: as SAFE, but
 *            host:port-like strings stay plain (no sexagesimals in 1.2)
 *   YAML_V2  gopkg.in/yaml.v2 (the Target Allocator's config): double
 *            quotes for what reads back as another type or a sexagesimal,
 *            single quotes for what may not be plain (":8443" may), 2.0
 *            written as 2, and a value's scalar folded at a space past 80
 *            columns (libyaml's best_width) */
enum { KUBE_YAML_QUOTE_SAFE, KUBE_YAML_QUOTE_GO_YAML, KUBE_YAML_QUOTE_YAML_V2 };
typedef struct kube_yaml_style {
    int indent;   /* columns per map level: 2 or 4 */
    int flush_seq; /* a map's list at the key's column (yaml.v2), not indented */
    int quoting;
    /* 0, or the most bytes the text may take: past it, NULL instead. */
    size_t max_bytes;
} kube_yaml_style;
/* kube_yaml_emit with style (NULL: {2, 0, SAFE}, kube_yaml_emit's). */
char *kube_yaml_emit_style(json_object *obj, const kube_yaml_style *style);

#endif
