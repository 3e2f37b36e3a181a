/* base/jkeys.c - the vocabulary of member names jfast adds as constant keys;
 * see jkeys.h. An open-addressed table of the literals, indexed by the
 * per-process jhash and built once before main (after jhash's seed, by
 * constructor priority): about a quarter full, so that a key not in it
 * usually meets an empty slot at once. The table holds only these
 * literals, so no key a user writes can lengthen a probe. */
#include "base/jkeys.h"

#include "base/jhash.h"

#include <stdint.h>
#include <string.h>

/* The fields of AdmissionReview, ObjectMeta, PodSpec, Container and the
 * types below them, and the common ones of the operator's resources. */
static const char *const VOCAB[] = {
    "kind", "apiVersion", "request", "response", "uid", "group", "version", "resource", "subResource", "requestKind",
    "requestResource", "requestSubResource", "name", "namespace", "operation", "userInfo", "username", "groups",
    "extra", "object", "oldObject", "dryRun", "options", "allowed", "patch", "patchType", "status", "metadata",
    "generateName", "labels", "annotations", "ownerReferences", "controller", "blockOwnerDeletion", "finalizers",
    "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "resourceVersion", "generation",
    "managedFields", "selfLink", "spec", "volumes", "initContainers", "containers", "ephemeralContainers",
    "restartPolicy", "terminationGracePeriodSeconds", "activeDeadlineSeconds", "dnsPolicy", "nodeSelector",
    "serviceAccountName", "serviceAccount", "automountServiceAccountToken", "nodeName", "hostNetwork", "hostPID",
    "hostIPC", "shareProcessNamespace", "securityContext", "imagePullSecrets", "hostname", "subdomain", "affinity",
    "schedulerName", "tolerations", "hostAliases", "priorityClassName", "priority", "dnsConfig", "readinessGates",
    "runtimeClassName", "enableServiceLinks", "preemptionPolicy", "overhead", "topologySpreadConstraints",
    "setHostnameAsFQDN", "os", "hostUsers", "schedulingGates", "resourceClaims", "image", "command", "args",
    "workingDir", "ports", "envFrom", "env", "resources", "resizePolicy", "volumeMounts", "volumeDevices",
    "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "terminationMessagePath",
    "terminationMessagePolicy", "imagePullPolicy", "stdin", "stdinOnce", "tty", "containerPort", "hostPort", "hostIP",
    "protocol", "value", "valueFrom", "fieldRef", "fieldPath", "resourceFieldRef", "containerName", "divisor",
    "configMapKeyRef", "secretKeyRef", "key", "optional", "configMapRef", "secretRef", "prefix", "limits", "requests",
    "claims", "cpu", "memory", "ephemeral-storage", "mountPath", "readOnly", "subPath", "subPathExpr",
    "mountPropagation", "recursiveReadOnly", "emptyDir", "medium", "sizeLimit", "configMap", "secret", "secretName",
    "items", "path", "mode", "defaultMode", "projected", "sources", "serviceAccountToken", "expirationSeconds",
    "audience", "downwardAPI", "hostPath", "type", "persistentVolumeClaim", "claimName", "csi", "driver",
    "volumeAttributes", "ephemeral", "nfs", "server", "runAsUser", "runAsGroup", "runAsNonRoot", "fsGroup",
    "capabilities", "add", "drop", "privileged", "readOnlyRootFilesystem", "allowPrivilegeEscalation",
    "seccompProfile", "seLinuxOptions", "supplementalGroups", "fsGroupChangePolicy", "appArmorProfile",
    "localhostProfile", "procMount", "sysctls", "httpGet", "tcpSocket", "exec", "grpc", "port", "host", "scheme",
    "httpHeaders", "initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold",
    "service", "operator", "effect", "tolerationSeconds", "postStart", "preStop", "nodeAffinity", "podAffinity",
    "podAntiAffinity", "matchExpressions", "matchLabels", "labelSelector", "topologyKey", "weight", "values",
    "maxSkew", "whenUnsatisfiable", "phase", "conditions", "qosClass", "endpoint", "propagators", "sampler",
    "argument", "java", "nodejs", "python", "dotnet", "go", "apacheHttpd", "nginx", "exporter", "defaults",
    "resourceAttributes", "useLabelsForResourceAttributes", "config", "replicas", "upgradeStrategy",
    "targetAllocator",
};

#define SLOTS 1024 /* a power of two, about four times the vocabulary */

typedef struct slot {
    const char *s;
    size_t n;
} slot;

static slot table[SLOTS];

__attribute__((constructor(102))) static void jkeys_build(void) {
    _Static_assert(sizeof VOCAB / sizeof VOCAB[0] * 3 < SLOTS, "the vocabulary outgrew its table");
    for (size_t i = 0; i < sizeof VOCAB / sizeof VOCAB[0]; i++) {
        size_t n = strlen(VOCAB[i]);
        size_t at = jhash_key(VOCAB[i], n) & (SLOTS - 1);
        while (table[at].s) at = (at + 1) & (SLOTS - 1);
        table[at] = (slot){VOCAB[i], n};
    }
}

const char *jkeys_known(const char *k, size_t n, unsigned long h) {
    for (size_t at = h & (SLOTS - 1);; at = (at + 1) & (SLOTS - 1)) {
        const slot *s = &table[at];
        if (!s->s) return NULL;
        if (s->n == n && memcmp(s->s, k, n) == 0) return s->s;
    }
}
