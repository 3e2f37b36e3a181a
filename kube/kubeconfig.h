/* kube/kubeconfig.h - connection settings from a kubeconfig file
 * (`--kubeconfig FILE`), the way kubectl reads them for one file.
 *
 * Read: current-context (or the context named by the caller), the
 * context's cluster (server, certificate-authority, certificate-authority-
 * data, insecure-skip-tls-verify) and user (token, tokenFile,
 * client-certificate[-data] with client-key[-data]). Relative paths are
 * relative to the file's folder. Exec and auth-provider plugins and basic
 * auth are refused with an error naming what is unsupported rather than
 * connecting without credentials. Merging several files (KUBECONFIG=a:b)
 * is not supported. */
#ifndef KUBE_KUBECONFIG_H
#define KUBE_KUBECONFIG_H

#include "kube/apiclient.h"

/* context: NULL for current-context. Returns NULL with a one-line reason
 * ("FILE: ...") in err. */
kube_api *kube_api_new_kubeconfig(const char *path, const char *context, char *err, size_t errlen);
#endif
