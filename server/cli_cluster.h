/* server/cli_cluster.h - one-shot reads of a cluster for the CLIs
 * (explain --kubeconfig, outdated): the Instrumentations, collectors and
 * Namespaces listed once into a store layer, trimmed and defaulted as the
 * webhook's informers do, so the engine sees what the webhook would. */
#ifndef SERVER_CLI_CLUSTER_H
#define SERVER_CLI_CLUSTER_H

#include "kube/apiclient.h"
#include "kube/store.h"
#include "kube/trim.h"

#include <json-c/json.h>
#include <stddef.h>

#define CLI_CLUSTER_TIMEOUT_MS 30000

/* Every object of the collection at path (a LIST, page by page), appended
 * to *items (a new array when NULL). 0, or -1 with "GET PATH: reason". */
int cli_cluster_list(kube_api_conn *c, const char *path, json_object **items, char *err, size_t errlen);

/* The three kinds the engine reads, as the store's live layer. */
int cli_cluster_load(kube_api_conn *c, kube_store *store, const kube_prepare *prep, char *err, size_t errlen);

#endif
