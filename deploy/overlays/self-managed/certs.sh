#!/bin/sh
# Runs in the otel-webhook image (init container of the otel-webhook-certs
# Job): new CA and serving certificate, then the three manifests the kubectl
# container applies server-side, in this order (file names sort):
#   /work/apply/1-crd.yaml      the collector CRD's conversion caBundle (POST /convert)
#   /work/apply/1-webhook.yaml  the caBundle of every webhook of both
#                               configurations
#   /work/apply/2-secret.yaml   the Secret otel-webhook-tls (tls.crt, tls.key, ca.crt)
# Both bundles hold the new CA, then the previous one (read from the mounted
# current Secret, if any), and go first: the API server trusts both CAs
# before the pods serve the new certificate, so a renewal never breaks a TLS
# handshake.
set -eu
SERVICE=${SERVICE:-otel-webhook}
NAMESPACE=${NAMESPACE:-otel-webhook-system}
WEBHOOK=${WEBHOOK:-otel-webhook}
CRD=${CRD:-opentelemetrycollectors.opentelemetry.io}
DAYS=${DAYS:-90}
WORK=${WORK:-/work}          # an emptyDir (medium Memory)
CURRENT=${CURRENT:-/current} # the current Secret, mounted (optional)
out=$WORK/certs
mkdir -p "$out" "$WORK/apply"
otel-webhook certs generate --service "$SERVICE" --namespace "$NAMESPACE" --out "$out" --days "$DAYS" >/dev/null
bundle=$( { cat "$out/ca.crt"; if [ -s "$CURRENT/ca.crt" ]; then cat "$CURRENT/ca.crt"; fi; } | base64 -w0)
cat > "$WORK/apply/1-crd.yaml" <<YAML
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: $CRD
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        caBundle: $bundle
YAML
# The webhooks of each configuration (deploy/base/webhook/*webhookconfiguration.yaml).
MUTATING="pods.otel-webhook.opentelemetry.io minstrumentation.kb.io mopampbridge.kb.io mopentelemetrycollectorbeta.kb.io"
VALIDATING="vinstrumentationcreateupdate.kb.io vinstrumentationdelete.kb.io vopampbridgecreateupdate.kb.io
  vopampbridgedelete.kb.io vopentelemetrycollectorcreateupdatebeta.kb.io vopentelemetrycollectordeletebeta.kb.io"
configuration() { # KIND NAMES...
  kind=$1
  shift
  printf 'apiVersion: admissionregistration.k8s.io/v1\nkind: %s\nmetadata:\n  name: %s\nwebhooks:\n' "$kind" "$WEBHOOK"
  for w in "$@"; do
    printf '  - name: %s\n    clientConfig:\n      caBundle: %s\n' "$w" "$bundle"
  done
}
{
  configuration MutatingWebhookConfiguration $MUTATING
  echo ---
  configuration ValidatingWebhookConfiguration $VALIDATING
} > "$WORK/apply/1-webhook.yaml"
cat > "$WORK/apply/2-secret.yaml" <<YAML
apiVersion: v1
kind: Secret
metadata:
  name: $SERVICE-tls
  namespace: $NAMESPACE
  labels:
    app.kubernetes.io/name: otel-webhook
    app.kubernetes.io/component: webhook
type: kubernetes.io/tls
data:
  tls.crt: $(base64 -w0 "$out/tls.crt")
  tls.key: $(base64 -w0 "$out/tls.key")
  ca.crt: $(base64 -w0 "$out/ca.crt")
YAML
rm -f "$out/ca.key"   # the CA signs this one certificate only: its key is not kept
echo "otel-webhook-certs: certificate for $SERVICE.$NAMESPACE.svc valid $DAYS days, ready to apply"
