/* reconcile/diff.c - the changed fields of an object, as a dry run prints
 * them (diff.h).
 *
 * A list of paths with old and new values rather than a text diff of two
 * YAML documents: the live object carries everything the API server adds
 * (defaults, status, managed metadata), which a text diff would show as
 * noise, while the comparison ignores exactly those; these lines are the
 * differences the decision to apply was made on, nothing else. */
#include "reconcile/diff.h"

#include "base/jtext.h"
#include "base/sbuf.h"
#include "reconcile/compare.h"
#include "reconcile/run.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DIGEST_PATH "metadata.annotations[\"" RECONCILE_HASH_ANNOTATION "\"]"

typedef struct lines {
    sbuf text;   /* every line but the digest's */
    sbuf digest; /* the digest's line, when it differs */
} lines;

static void value(sbuf *b, json_object *v) {
    if (!v) {
        sbuf_puts(b, "(absent)");
        return;
    }
    jtext_append(b, v);
}

static void add_line(void *ud, const char *path, json_object *have, json_object *want) {
    lines *l = ud;
    bool digest = strcmp(path, DIGEST_PATH) == 0;
    sbuf *b = digest ? &l->digest : &l->text;
    sbuf_printf(b, "  %s: ", path);
    value(b, have);
    sbuf_puts(b, " -> ");
    value(b, want);
    if (digest)
        sbuf_puts(b, " (only the digest differs: the apply removes the fields the last one set and this one does not)");
    sbuf_putc(b, '\n');
}

char *reconcile_diff_text(json_object *want, json_object *have) {
    lines l = {SBUF_INIT, SBUF_INIT};
    reconcile_diff(want, have, add_line, &l);
    sbuf *keep = l.text.len ? &l.text : &l.digest;
    char *out = sbuf_take(keep, NULL);
    sbuf_free(&l.text);
    sbuf_free(&l.digest);
    return out;
}
