/* base/versions.h - every version and default image, in one place.
 *
 * The reference's are those of the OpenTelemetry Operator v0.158.0: its
 * upstream `versions.txt`, which the Instrumentation defaulting
 * (`internal/webhook/instrumentation_webhook.go`) and the collector upgrade
 * routines (`pkg/collector/upgrade/`) read; changing one here
 * changes it in the webhook, `inject`, `render` and `run` alike. */
#ifndef BASE_VERSIONS_H
#define BASE_VERSIONS_H

/* Ours. A release build passes -DOTEL_WEBHOOK_VERSION=... */
#ifndef OTEL_WEBHOOK_VERSION
#define OTEL_WEBHOOK_VERSION "0.1.0"
#endif

/* The collector version the reference operator ships with: its default
 * collector image, and what `run` writes into status.version. */
#define COLLECTOR_VERSION "0.158.0"
#define DEFAULT_COLLECTOR_IMAGE "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:" COLLECTOR_VERSION

/* The Target Allocator the reference ships with (versions.txt): its
 * default image, and what `run` writes into a TargetAllocator's
 * status.version. */
#define TARGET_ALLOCATOR_VERSION "0.158.0"
#define DEFAULT_TARGET_ALLOCATOR_IMAGE "ghcr.io/open-telemetry/opentelemetry-operator/target-allocator:" TARGET_ALLOCATOR_VERSION

/* Auto-instrumentation images (the operator's versions.txt). */
#define AUTOINSTRUMENTATION_REPO "ghcr.io/open-telemetry/opentelemetry-operator/"
#define DEFAULT_JAVA_IMAGE AUTOINSTRUMENTATION_REPO "autoinstrumentation-java:2.30.0"
#define DEFAULT_NODEJS_IMAGE AUTOINSTRUMENTATION_REPO "autoinstrumentation-nodejs:0.78.0"
#define DEFAULT_PYTHON_IMAGE AUTOINSTRUMENTATION_REPO "autoinstrumentation-python:0.64b0"
#define DEFAULT_DOTNET_IMAGE AUTOINSTRUMENTATION_REPO "autoinstrumentation-dotnet:1.16.0"
#define DEFAULT_GO_IMAGE "ghcr.io/open-telemetry/opentelemetry-go-instrumentation/autoinstrumentation-go:v0.24.0"
/* Apache HTTPD and Nginx share one image, as in the reference. */
#define DEFAULT_APACHE_HTTPD_IMAGE AUTOINSTRUMENTATION_REPO "autoinstrumentation-apache-httpd:1.0.4"
#define DEFAULT_NGINX_IMAGE DEFAULT_APACHE_HTTPD_IMAGE

#endif
