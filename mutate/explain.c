/* mutate/explain.c - `explain` for one pod (explain.h).
 *
 * Nothing here decides anything: the engine runs on the pod (on the pod as
 * it was before the injection, when it carries a record) and this file
 * reads back what it did, its warnings and its record, so the explanation
 * cannot drift from the behaviour. The only rule restated is the pod vs
 * namespace precedence, to say which of the two values won (resolve_annotation
 * gives the value; the sentence names its source). */
#include "mutate/explain.h"

#include "base/sbuf.h"
#include "mutate/internal.h"
#include "mutate/record.h"

#include <stdlib.h>
#include <string.h>

/* One annotation that both the pod and its namespace may set. */
static void annotation_line(sbuf *b, mctx *m, const char *key) {
    const char *p = pod_annotation(m, key);
    const char *n = jstr(jget(jget(m->req->ns, "metadata"), "annotations"), key);
    if ((!p || !*p) && (!n || !*n)) return;
    const char *v = resolve_annotation(m, key);
    bool from_pod = p && *p && !strcmp(v, p) && !(n && *n && !strcmp(v, n) && streq_ci(p, "true") && !streq_ci(n, "false"));
    sbuf_printf(b, "    %s: \"%s\" from the %s", key, v, from_pod ? "pod" : "namespace");
    if (!from_pod && m->ns) sbuf_printf(b, " %s", m->ns);
    if (from_pod && n && *n) sbuf_printf(b, " (over the namespace's \"%s\")", n);
    else if (!from_pod && p && *p) sbuf_printf(b, " (the pod's \"%s\" defers to it)", p);
    sbuf_putc(b, '\n');
}

static bool any_container_names(mctx *m) {
    if (*resolve_annotation(m, ANN(CONTAINER_NAMES))) return true;
    for (int id = 0; id < MUTATE_NLANGS; id++) {
        char key[ANN_KEY_MAX];
        if (*resolve_annotation(m, ann_lang_key(key, id, true))) return true;
    }
    return false;
}

/* "java, python" for the languages that went into container name. */
static void langs_into(sbuf *b, const mutate_result *res, const char *name) {
    size_t n = 0;
    for (int l = 0; l < MUTATE_NLANGS; l++)
        for (size_t i = 0; i < res->ninto[l]; i++)
            if (!strcmp(res->into[l][i], name)) sbuf_printf(b, "%s%s", n++ ? ", " : "", mutate_lang_name(l));
}

/* The engine's reasons for skipping container name ("inject-LANG:
 * container NAME skipped: WHY"), as "LANG skipped: WHY" lines. */
static bool skip_reasons(sbuf *b, const mutate_result *res, const char *name) {
    size_t nl = strlen(name), n = 0;
    for (size_t i = 0; i < res->nwarnings; i++) {
        const char *s = res->warnings[i], *w = strstr(s, ": container ");
        if (!w || strncmp(s, "inject-", 7) || strncmp(w + 12, name, nl) || strncmp(w + 12 + nl, " skipped: ", 10)) continue;
        sbuf_printf(b, "%s%.*s skipped: %s", n++ ? "; " : "", (int)(w - s - 7), s + 7, w + 12 + nl + 10);
    }
    return n > 0;
}

static void containers(sbuf *b, mctx *m, const mutate_result *res, const char *list, bool init) {
    json_object *arr = jarr(m->spec, list);
    bool named = any_container_names(m), langs = res->injected != 0;
    for (size_t i = 0; i < jlen(arr); i++) {
        const char *name = jstr(json_object_array_get_idx(arr, i), "name");
        if (!name) continue;
        sbuf_printf(b, "    %s%s: ", init ? "init " : "", name);
        size_t before = b->len;
        langs_into(b, res, name);
        if (b->len > before) { sbuf_putc(b, '\n'); continue; }
        if (skip_reasons(b, res, name)) sbuf_putc(b, '\n');
        else if (!langs) sbuf_puts(b, "nothing instrumented\n");
        else if (named) sbuf_puts(b, "not named in a container-names annotation\n");
        else if (init) sbuf_puts(b, "init containers are instrumented only when a container-names annotation names them\n");
        else sbuf_puts(b, "not instrumented: without a container-names annotation only the first container is\n");
    }
}

static void version(sbuf *b, json_object *u) {
    int64_t g;
    if (jint(u, "generation", &g)) sbuf_printf(b, " (generation %lld)", (long long)g);
    else if (jstr(u, "resourceVersion")) sbuf_printf(b, " (resourceVersion %s)", jstr(u, "resourceVersion"));
}

char *mutate_explain(const mutate_request *req) {
    sbuf b = SBUF_INIT;
    const char *bad;
    json_object *rec = mutate_record_read(req->pod, &bad), *plain = NULL;
    char err[256] = "";
    if (rec) plain = mutate_uninject(req->pod, rec, err, sizeof err);
    mutate_request r = *req;
    mutate_options opt = *req->opt;
    opt.record = true;
    r.opt = &opt;
    r.pod = plain ? plain : req->pod;
    mutate_result res;
    int rc = mutate_pod(&r, &res);
    mctx m = {.req = &r, .opt = &opt, .ns = r.namespace ? r.namespace : "", .in = r.pod, .res = &res,
              .meta = jmap(r.pod, "metadata"), .spec = jmap(r.pod, "spec")};

    sbuf_puts(&b, "  annotations:\n");
    size_t mark = b.len;
    annotation_line(&b, &m, ANN(SIDECAR_INJECT));
    for (int id = 0; id < MUTATE_NLANGS; id++) {
        char key[ANN_KEY_MAX];
        annotation_line(&b, &m, ann_lang_key(key, id, false));
    }
    annotation_line(&b, &m, ANN(CONTAINER_NAMES));
    for (int id = 0; id < MUTATE_NLANGS; id++) {
        char key[ANN_KEY_MAX];
        annotation_line(&b, &m, ann_lang_key(key, id, true));
    }
    for (int i = 0; i < ANN_NKEYS; i++)
        if (i != ANN_SIDECAR_INJECT && i != ANN_CONTAINER_NAMES) annotation_line(&b, &m, ann_keys[i]);
    if (b.len == mark) sbuf_puts(&b, "    none asks for an injection\n");

    sbuf_puts(&b, "  injects:\n");
    mark = b.len;
    for (size_t i = 0; i < jlen(res.uses); i++) {
        json_object *u = json_object_array_get_idx(res.uses, i);
        const char *lang = jstr(u, "language");
        sbuf_printf(&b, "    %s: %s %s/%s", lang ? lang : "sidecar", jstr(u, "kind"), jstr(u, "namespace"), jstr(u, "name"));
        version(&b, u);
        sbuf_putc(&b, '\n');
    }
    if (b.len == mark) sbuf_puts(&b, rc == 0 ? "    nothing\n" : "    nothing (the pod is refused, see the warnings)\n");

    if (rc == 0 && jarr(m.spec, "containers")) {
        sbuf_puts(&b, "  containers:\n");
        containers(&b, &m, &res, "initContainers", true);
        containers(&b, &m, &res, "containers", false);
    }
    if (res.nwarnings) {
        sbuf_puts(&b, "  warnings:\n");
        for (size_t i = 0; i < res.nwarnings; i++) sbuf_printf(&b, "    %s\n", res.warnings[i]);
    }

    sbuf_puts(&b, "  status: ");
    if (bad) sbuf_printf(&b, "the %s annotation is unreadable (%s)\n", MUTATE_RECORD_KEY, bad);
    else if (!rec) sbuf_puts(&b, "not injected yet\n");
    else if (!plain) sbuf_printf(&b, "the pod does not match its record, explained as if it had none: %s\n", err);
    else {
        char **why;
        int n = mutate_record_stale(req, &why);
        sbuf_printf(&b, "injected by otel-webhook %s, %s\n", jstr(rec, "engine") ? jstr(rec, "engine") : "?",
                    n > 0 ? "stale:" : "current");
        for (int i = 0; i < n; i++) sbuf_printf(&b, "    %s\n", why[i]);
        mutate_strings_free(why, n > 0 ? (size_t)n : 0);
    }
    mutate_result_free(&res);
    json_object_put(plain);
    json_object_put(rec);
    return sbuf_take(&b, NULL);
}
