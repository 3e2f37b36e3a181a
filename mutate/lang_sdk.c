/* mutate/lang_sdk.c - SDK-only: the OTEL_* environment and nothing else (spec 2.8).
 *
 * For applications that bundle the SDK themselves: no volume, no init
 * container, only the common env of spec 3 (plus exporter TLS volumes). */
#include "mutate/internal.h"

#include <string.h>

static void sdk_inject(lctx *l) {
    mctx *m = l->m;
    json_object *inits = jget(m->spec, "initContainers"), *cs = jget(m->spec, "containers");
    size_t done = 0;
    /* Same processing order as the other languages: init targets first. */
    if (l->nnames) {
        for (size_t i = 0; i < jlen(inits); i++) {
            json_object *c = json_object_array_get_idx(inits, i);
            const char *name = jw_str(c, "name");
            for (size_t k = 0; name && k < l->nnames; k++)
                if (strcmp(name, l->names[k]) == 0) {
                    sdk_common_env(l, c);
                    sdk_configure(l, c, c);
                    mctx_injected(m, MUTATE_SDK, c);
                    done++;
                    break;
                }
        }
    }
    for (size_t k = 0; k < (l->nnames ? l->nnames : 1); k++) {
        json_object *c = l->nnames ? jw_find_named(cs, l->names[k], NULL) : json_object_array_get_idx(cs, 0);
        if (!json_object_is_type(c, json_type_object)) {
            if (l->nnames && !jw_find_named(inits, l->names[k], NULL)) {
                mctx_warn(m, "inject-sdk: no container named %s in the pod", l->names[k]);
                mctx_skip(m, MUTATE_SKIP_UNKNOWN_CONTAINER);
            }
            continue;
        }
        sdk_common_env(l, c);
        sdk_configure(l, c, c);
        mctx_injected(m, MUTATE_SDK, c);
        done++;
    }
    if (!done) return;
    m->res->injected |= MUTATE_BIT(MUTATE_SDK);
    sdk_tls_volumes(l);
}

const mutate_lang mutate_lang_sdk = {
    .id = MUTATE_SDK,
    .name = "sdk",
    .display = "SDK",
    .spec_key = "sdk",
    .res_key = "resourceRequirements",
    .inject = sdk_inject,
};
