/* kube/config.h - the webhook's settings file (--config FILE).
 *
 * A flat YAML map. The keys are the OpenTelemetry Operator's own config-file
 * keys (enable-java-auto-instrumentation, auto-instrumentation-java-image,
 * collector-image, ...), so an operator config can be reused as is, plus
 * two of ours: native-sidecars (auto|on|off) and python-mode
 * (pythonpath|entrypoint). */
#ifndef KUBE_CONFIG_H
#define KUBE_CONFIG_H

#include "mutate/mutate.h"

typedef enum kube_tristate { KUBE_AUTO = -1, KUBE_OFF = 0, KUBE_ON = 1 } kube_tristate;

typedef struct kube_config {
    char *images[MUTATE_NLANGS]; /* default agent image per language (SDK unused) */
    char *collector_image;
    mutate_options mopt;         /* engine options; string members point into this struct */
    kube_tristate native_sidecars;
} kube_config;

void kube_config_init(kube_config *c);
/* Returns 0, or -1 with "FILE:LINE: reason" in err. */
int kube_config_load(kube_config *c, const char *path, char *err, size_t errlen);
void kube_config_free(kube_config *c);
#endif
