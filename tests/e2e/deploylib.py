"""tests/e2e/deploylib.py - deploy/ applied to the real control plane, and
`otel-webhook serve` (the ASan build) run on the host with the identity
deploy/ gives it.

Contract:
- Webhook(cluster, binary).deploy(check): makes the run's webhook CA and
  serving certificate (`otel-webhook certs generate --dev`: valid for
  127.0.0.1), picks a free port, renders tests/e2e/deploy (deploy/base with
  every clientConfig a URL on that port and the CA's caBundle; checked to
  differ from deploy/base's render in nothing else) and `kubectl apply
  --server-side`s all of it but the workloads (there is no kubelet: the
  Deployment and CronJob could never run; the binaries run here instead).
  Then `serve` starts with the args of deploy/'s Deployment, --in-cluster
  turned into --kubeconfig holding a token of the otel-webhook
  ServiceAccount (`kubectl create token`), so deploy/'s RBAC is what the
  webhook's watches and lookups are judged by. Returns once /readyz answers
  200; each step is a check, and a false return means the rest cannot run.
- restart(check, config_text): stop(check), then serve again on the same
  port with config_text as its settings file (a settings change rolls the
  Deployment); true once ready.
- get(path) is a GET on the webhook's port (/metrics): (status, text).
- stop(check): SIGTERM, then checks exit status 0 and no sanitizer report on
  its stderr (kept as build/e2e-logs/otel-webhook.log). Idempotent; the
  process is also ended with the cluster (its own process group, and the
  parent-death signal).
"""
import base64
import json
import os
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request

import yaml

from cluster import _set_pdeathsig
from testlib import LSAN_SUPP, SANITIZER_MARKERS, free_port, wait_for

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NAMESPACE = "otel-webhook-system"
# Workloads the control plane cannot run (no kubelet): left out of the apply.
NOT_APPLIED = ("Deployment", "CronJob")
READY_SECONDS = 60


def client_configs(obj):
    """(JSON path, clientConfig) of each webhook registration in obj."""
    if obj.get("kind") in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        return [("/webhooks/%d/clientConfig" % i, w.get("clientConfig")) for i, w in enumerate(obj.get("webhooks", []))]
    conv = (obj.get("spec", {}).get("conversion") or {}) if obj.get("kind") == "CustomResourceDefinition" else {}
    if conv.get("strategy") == "Webhook":
        return [("/spec/conversion/webhook/clientConfig", conv["webhook"].get("clientConfig"))]
    return []


def without_client_configs(obj):
    o = json.loads(json.dumps(obj))
    for path, _ in client_configs(o):
        parent = o
        for k in path.split("/")[1:-1]:
            parent = parent[int(k)] if isinstance(parent, list) else parent[k]
        parent.pop("clientConfig", None)
    return o


class Webhook:
    def __init__(self, cluster, binary):
        self.cluster = cluster
        self.bin = os.path.abspath(binary)
        self.dir = os.path.join(cluster.dir, "webhook")
        self.proc = None
        self.port = None
        # Beside the components' logs: cluster.stop() keeps *.log in build/e2e-logs/.
        self.errpath = os.path.join(cluster.dir, "otel-webhook.log")
        self.objects = []
        self.rc = None

    def _render(self, path):
        r = self.cluster.kubectl("kustomize", path)
        if r.returncode != 0:
            raise RuntimeError("kubectl kustomize %s: %s" % (path, r.stderr))
        return [d for d in yaml.safe_load_all(r.stdout) if d]

    def deploy(self, check):
        os.makedirs(self.dir, exist_ok=True)
        open(self.errpath, "wb").close()
        certs = os.path.join(self.dir, "certs")
        r = subprocess.run([self.bin, "certs", "generate", "--service", "otel-webhook", "--namespace", NAMESPACE,
                            "--out", certs, "--dev"], capture_output=True, text=True, timeout=60)
        if not check("certs generate --dev: the webhook's CA and serving certificate", r.returncode == 0, r.stderr):
            return False
        self.ca = os.path.join(certs, "ca.crt")
        with open(self.ca, "rb") as f:
            bundle = base64.b64encode(f.read()).decode()

        # -- the overlay: deploy/base but for the clientConfigs ------------
        base = self._render(os.path.join(ROOT, "deploy", "base"))
        self.port = free_port()
        ours = self._render(os.path.join(HERE, "deploy"))
        text = json.dumps(ours).replace("127.0.0.1:WEBHOOK_PORT", "127.0.0.1:%d" % self.port).replace(
            "CA_BUNDLE", bundle)
        ours = json.loads(text)
        check("tests/e2e/deploy renders deploy/base's objects, changed only in their clientConfigs",
              [without_client_configs(o) for o in ours] == [without_client_configs(o) for o in base],
              "the overlay changes more than clientConfig")
        want, got = [], []
        for b, o in zip(base, ours):
            for (bp, bc), (op, oc) in zip(client_configs(b), client_configs(o)):
                svc = (bc or {}).get("service") or {}
                want.append((o["kind"], bp, {"url": "https://127.0.0.1:%d%s" % (self.port, svc.get("path")),
                                             "caBundle": bundle}))
                got.append((o["kind"], op, oc))
        check("every clientConfig of deploy/base (4 mutating, 6 validating, 1 conversion) is our URL, same path",
              len(want) == 11 and got == want, json.dumps(got)[:1500])

        # -- applied for real, server-side ---------------------------------
        self.objects = [o for o in ours if o["kind"] not in NOT_APPLIED]
        r = self.cluster.kubectl("apply", "--server-side", "--field-manager", "e2e", "-f", "-",
                                 input=json.dumps({"apiVersion": "v1", "kind": "List", "items": self.objects}))
        lines = sorted(r.stdout.splitlines())
        expect = sorted("%s/%s serverside-applied" % (self._resource(o), o["metadata"]["name"]) for o in self.objects)
        if not check("kubectl apply --server-side of deploy/ (all but %s): every object applied" % "/".join(NOT_APPLIED),
                     (r.returncode, lines) == (0, expect), "%d %r %r" % (r.returncode, r.stdout, r.stderr)):
            return False
        r = self.cluster.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                                 *["crd/" + o["metadata"]["name"] for o in self.objects
                                   if o["kind"] == "CustomResourceDefinition"])
        check("the three CRDs are Established", r.returncode == 0, r.stdout + r.stderr)

        # -- the webhook's identity: its ServiceAccount's token ------------
        r = self.cluster.kubectl("create", "token", "otel-webhook", "-n", NAMESPACE, "--duration", "2h")
        if not check("kubectl create token otel-webhook", r.returncode == 0 and r.stdout.count(".") == 2, r.stderr):
            return False
        self.kubeconfig = self.cluster.kubeconfig_for_token("otel-webhook", r.stdout.strip())

        # -- serve, with the Deployment's own args -------------------------
        dep = [o for o in ours if o["kind"] == "Deployment" and o["metadata"]["name"] == "otel-webhook"][0]
        config = [o for o in ours if o["kind"] == "ConfigMap" and o["metadata"]["name"] == "otel-webhook-config"][0]
        cfg = os.path.join(self.dir, "config.yaml")
        with open(cfg, "w") as f:
            f.write(config["data"]["config.yaml"])
        args = []
        for a in dep["spec"]["template"]["spec"]["containers"][0]["args"]:
            a = {"--in-cluster": "--kubeconfig=" + self.kubeconfig,
                 "--tls-cert=/certs/tls.crt": "--tls-cert=" + os.path.join(certs, "tls.crt"),
                 "--tls-key=/certs/tls.key": "--tls-key=" + os.path.join(certs, "tls.key"),
                 "--config=/etc/otel-webhook/config.yaml": "--config=" + cfg}.get(a, a)
            if a.startswith("--listen="):
                a = "--listen=127.0.0.1:%d" % self.port
            args.append(a)
        self.args = args
        self.config = cfg
        self.certs = certs
        self.ctx = ssl.create_default_context(cafile=self.ca)
        return self._serve(check)

    def _serve(self, check):
        supp = os.path.join(self.dir, "lsan.supp")
        with open(supp, "w") as f:
            f.write(LSAN_SUPP)
        env = dict(os.environ, LSAN_OPTIONS="suppressions=%s:print_suppressions=0" % supp)
        with open(self.errpath, "ab") as err:
            self.proc = subprocess.Popen([self.bin] + self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                         stderr=err, env=env, preexec_fn=_set_pdeathsig)
        ready, waited = wait_for(lambda: self.proc.poll() is not None or self.get("/readyz") == (200, "ready\n"),
                                 READY_SECONDS)
        return check("serve %s: ready (synced with the API server as otel-webhook)" % " ".join(self.args[1:]),
                     ready and self.proc.poll() is None, "after %.1f s: %s" % (waited, self.stderr()[-3000:]))

    def restart(self, check, config_text):
        """stop(check), then serve again on the same port with the same
        arguments and config_text as its settings file (deploy/'s ConfigMap
        holds it; the Deployment would be rolled for a change of it)."""
        self.stop(check)
        with open(self.config, "w") as f:
            f.write(config_text)
        return self._serve(check)

    def _resource(self, o):
        plural = {"CustomResourceDefinition": "customresourcedefinition.apiextensions.k8s.io",
                  "ClusterRole": "clusterrole.rbac.authorization.k8s.io",
                  "ClusterRoleBinding": "clusterrolebinding.rbac.authorization.k8s.io",
                  "Role": "role.rbac.authorization.k8s.io", "RoleBinding": "rolebinding.rbac.authorization.k8s.io",
                  "MutatingWebhookConfiguration": "mutatingwebhookconfiguration.admissionregistration.k8s.io",
                  "ValidatingWebhookConfiguration": "validatingwebhookconfiguration.admissionregistration.k8s.io",
                  "PodDisruptionBudget": "poddisruptionbudget.policy"}
        return plural.get(o["kind"], o["kind"].lower())

    def get(self, path):
        try:
            with urllib.request.urlopen("https://127.0.0.1:%d%s" % (self.port, path), context=self.ctx,
                                        timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()
        except (OSError, ssl.SSLError):
            return None, ""

    def stderr(self):
        try:
            with open(self.errpath, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def stop(self, check):
        if self.proc is None:
            return
        p, self.proc = self.proc, None
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGTERM)
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        err = self.stderr()
        check("serve: SIGTERM ends it with status 0", p.returncode == 0, "%s: %s" % (p.returncode, err[-2000:]))
        found = [m for m in SANITIZER_MARKERS if m in err]
        check("serve: no sanitizer report on its stderr", not found, err[err.find(found[0]) - 200:][:3000] if found
              else "")
