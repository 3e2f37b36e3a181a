/* mutate/settings.h - the settings file (--config FILE): what the engine
 * injects and with which images.
 *
 * A flat YAML map. The keys are the OpenTelemetry Operator's own config-file
 * keys (enable-java-auto-instrumentation, auto-instrumentation-java-image,
 * collector-image, fips-disabled-components, ...), so an operator config
 * can be reused as is, plus three of ours: native-sidecars (auto|on|off), python-mode
 * (pythonpath|entrypoint) and status-record (true|false, the
 * otel-webhook/status annotation of mutate/record.h). Parsing is pure: the caller reads the file. */
#ifndef MUTATE_SETTINGS_H
#define MUTATE_SETTINGS_H

#include "mutate/mutate.h"

#include <stddef.h>

/* native-sidecars: auto asks the cluster for its version. */
typedef enum mutate_tristate { MUTATE_AUTO = -1, MUTATE_OFF = 0, MUTATE_ON = 1 } mutate_tristate;

typedef struct mutate_settings {
    char *images[MUTATE_NLANGS]; /* default agent image per language (SDK: NULL) */
    char *collector_image;
    mutate_options opt;          /* engine options; its strings point into this struct */
    mutate_tristate native_sidecars;
    /* fips-disabled-components: the comma list of collector components
     * (receiver.<type>, exporter.<type>, ...) a collector may not use
     * (cr-admission.md 3.6); NULL: none. */
    char *fips_disabled;
} mutate_settings;

/* The reference defaults. */
void mutate_settings_init(mutate_settings *s);
/* Applies the settings in text (len bytes and a NUL; name is the file's, for
 * messages) over s. Returns 0, or -1 with "NAME:LINE: reason" in err. */
int mutate_settings_parse(mutate_settings *s, const char *name, const char *text, size_t len, char *err,
                          size_t errlen);
void mutate_settings_free(mutate_settings *s);
#endif
