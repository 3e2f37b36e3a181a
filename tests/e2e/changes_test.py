"""tests/e2e/changes_test.py - the webhook's live source and its certificates
against the real API server (issue 26 step 4): what it watches changes under
it, the API server restarts under its watches, its serving certificate is
rotated while pods are created, and its settings enable Go.

The webhook is eventually consistent, as the operator's informer cache is:
a change reaches it through a watch, so "a pod created right after" means
right after the webhook has the change. That moment is found from outside,
never from our log or a sleep: a `kubectl create --dry-run=server` of a probe
pod goes through the real admission chain (the webhook is called for dry
runs, and nothing is stored) until the pod shows the new value, within a
bound; the pod that is then created must be stored with that value and equal
what `otel-webhook inject` prints for it (webhook_test.Suite.injected).

The restart: kube-apiserver is stopped and started again on the same port
(cluster.restart_apiserver); while it is down, changes are made through a
second API server on the same etcd (an HA control plane's other member).
None may be missed, and the webhook's LISTs and WATCHes after the restart,
read from the API server's audit log, stay a handful: a relist loop would
show there. Run by tests/e2e/run.py.
"""
import copy
import datetime
import json
import os
import socket
import ssl
import subprocess
import threading

from deploylib import Webhook
from testlib import wait_for
from webhook_test import BIN, INSTRUMENTATION, PLAIN, Suite, pod

NS = "e2e-live"
USER = "system:serviceaccount:otel-webhook-system:otel-webhook"
JAVA = {"instrumentation.opentelemetry.io/inject-java": "true"}
CHANGE_SECONDS = 10
# After a restart the watches wait out a backoff of up to 30 s.
RESUME_SECONDS = 60
RESOURCES = ("namespaces", "instrumentations", "opentelemetrycollectors")


def run(cluster, check, version):
    w = Webhook(cluster, BIN)
    try:
        if not w.deploy(check):
            return
        s = Suite(cluster, check, w)
        s.namespace(PLAIN, labels={"otel-webhook/skip": "true"})
        s.namespace(NS)
        changes(s, check)
        since = restart(s, check, cluster, w)
        rotation(s, check, w)
        if since:
            watches_after(check, cluster, since, "after the restart and the rotation")
        go(s, check, w)
    finally:
        w.stop(check)


def instrumentation(endpoint):
    o = copy.deepcopy(INSTRUMENTATION)
    o["spec"]["exporter"]["endpoint"] = endpoint
    return o


def env_of(p, name, container=0):
    for e in (p.get("spec", {}).get("containers") or [{}])[container].get("env", []):
        if e.get("name") == name:
            return e.get("value")
    return None


class Probe:
    """A pod asking for injection, sent through the admission chain without
    being stored: what a pod created now would get."""

    def __init__(self, s, ns, annotations):
        self.s, self.ns, self.annotations = s, ns, annotations
        self.last = None

    def pod(self):
        r = self.s.kubectl("create", "--dry-run=server", "-n", self.ns, "-o", "json", "-f", "-",
                           obj=pod("probe", self.annotations))
        self.last = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr}
        return self.last

    def until(self, test, seconds):
        return wait_for(lambda: test(self.pod()), seconds, 0.05)


def endpoint_is(value):
    return lambda p: env_of(p, "OTEL_EXPORTER_OTLP_ENDPOINT") == value


def changes(s, check):
    r = s.apply(instrumentation("http://first:4318"), NS)
    check("live: the Instrumentation applied", r.returncode == 0, r.stderr)
    probe = Probe(s, NS, JAVA)
    ok, t = probe.until(endpoint_is("http://first:4318"), CHANGE_SECONDS)
    check("live: a new Instrumentation is used within %d s (%.2f s)" % (CHANGE_SECONDS, t), ok,
          json.dumps(probe.last)[:1500])
    got = s.injected("live: the pod created then", pod("first", JAVA), NS,
                     want_init=["opentelemetry-auto-instrumentation-java"])
    check("live: the stored pod exports to the first endpoint", env_of(got, "OTEL_EXPORTER_OTLP_ENDPOINT") ==
          "http://first:4318", env_of(got, "OTEL_EXPORTER_OTLP_ENDPOINT"))

    r = s.apply(instrumentation("http://second:4318"), NS)
    check("live: the Instrumentation changed", (r.returncode, r.stdout) == (
        0, "instrumentation.opentelemetry.io/all configured\n"), r.stdout + r.stderr)
    ok, t = probe.until(endpoint_is("http://second:4318"), CHANGE_SECONDS)
    check("live: the change is used within %d s (%.2f s)" % (CHANGE_SECONDS, t), ok, json.dumps(probe.last)[:1500])
    got = s.injected("live: the pod created right after the change", pod("second", JAVA), NS,
                     want_init=["opentelemetry-auto-instrumentation-java"])
    check("live: the stored pod exports to the changed endpoint", env_of(got, "OTEL_EXPORTER_OTLP_ENDPOINT") ==
          "http://second:4318", env_of(got, "OTEL_EXPORTER_OTLP_ENDPOINT"))

    # A namespace's opt-in, added after the namespace and its watch event.
    ns2 = "e2e-live-ns"
    s.namespace(ns2)
    r = s.apply(instrumentation("http://ns:4318"), ns2)
    check("live: an Instrumentation in %s" % ns2, r.returncode == 0, r.stderr)
    r = s.kubectl("annotate", "namespace", ns2, "instrumentation.opentelemetry.io/inject-python=true")
    check("live: the namespace annotated afterwards", r.returncode == 0, r.stderr)
    nsprobe = Probe(s, ns2, None)
    ok, t = nsprobe.until(lambda p: [c["name"] for c in p.get("spec", {}).get("initContainers", [])] ==
                          ["opentelemetry-auto-instrumentation-python"], CHANGE_SECONDS)
    check("live: the namespace's new annotation is used within %d s (%.2f s)" % (CHANGE_SECONDS, t), ok,
          json.dumps(nsprobe.last)[:1500])
    s.injected("live: a pod asking nothing in the annotated namespace", pod("plain"), ns2,
               want_init=["opentelemetry-auto-instrumentation-python"])

    # Deleted: a pod asking for it is stored untouched, with the warning.
    r = s.kubectl("delete", "instrumentation", "all", "-n", ns2)
    check("live: the Instrumentation deleted", r.returncode == 0, r.stderr)
    ok, t = nsprobe.until(lambda p: "spec" in p and not p["spec"].get("initContainers"), CHANGE_SECONDS)
    check("live: the deletion is seen within %d s (%.2f s)" % (CHANGE_SECONDS, t), ok,
          json.dumps(nsprobe.last)[:1500])
    s.injected("live: a pod after the deletion", pod("gone"), ns2, want_init=[])
    check("live: after the deletion kubectl prints the webhook's warning",
          s.last.stderr.startswith("Warning: otel-webhook: ") and "no Instrumentation" in s.last.stderr,
          s.last.stderr)


def audit_since(cluster, since):
    """The webhook's requests the API server received since `since` (an
    aware datetime), one per request (a watch has a ResponseStarted and a
    ResponseComplete event)."""
    seen, out = set(), []
    for e in cluster.audit_events(USER):
        t = datetime.datetime.fromisoformat(e["requestReceivedTimestamp"].replace("Z", "+00:00"))
        if t >= since and e["auditID"] not in seen:
            seen.add(e["auditID"])
            out.append(e)
    return out


def watches_after(check, cluster, since, when):
    events = audit_since(cluster, since)
    for res in RESOURCES:
        lists = [e for e in events if e["verb"] == "list" and e.get("objectRef", {}).get("resource") == res]
        watches = [e for e in events if e["verb"] == "watch" and e.get("objectRef", {}).get("resource") == res]
        # Seen here: the API server answers 403 (its authorizer not yet
        # synced), then 429 (not ready), then 410 for the old
        # resourceVersion (a new watch cache), then one LIST and a watch
        # that holds: 1 LIST and 4 WATCHes, the backoff spacing them. A loop
        # would be dozens within these seconds.
        check("restart: %s: %d LIST, %d WATCH %s (at most 2 and 8)" % (res, len(lists), len(watches), when),
              len(lists) <= 2 and 1 <= len(watches) <= 8,
              json.dumps([(e["verb"], e["requestURI"], e.get("responseStatus", {}).get("code")) for e in
                          lists + watches])[:2000])


def restart(s, check, cluster, w):
    since = datetime.datetime.now(datetime.timezone.utc)
    ns3 = "e2e-live-after"
    ns3_obj = {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": ns3, "annotations": {"instrumentation.opentelemetry.io/inject-nodejs": "%s/all" % NS}}}
    made = []

    def while_down(kubeconfig):
        # Through the HA pair's other API server: the webhook's is down.
        made.append(cluster.kubectl("apply", "-n", NS, "-f", "-", kubeconfig=kubeconfig,
                                    input=json.dumps(instrumentation("http://third:4318"))))
        made.append(cluster.kubectl("apply", "-f", "-", kubeconfig=kubeconfig, input=json.dumps(ns3_obj)))
    try:
        cluster.restart_apiserver(while_down)
    except Exception as e:  # noqa: BLE001
        check("restart: kube-apiserver stopped and started again on its port", False, repr(e))
        return None
    check("restart: kube-apiserver stopped and started again on its port", True)
    check("restart: while it was down, the Instrumentation changed and a namespace made through another",
          [(r.returncode, r.stdout) for r in made] == [
              (0, "instrumentation.opentelemetry.io/all configured\n"), (0, "namespace/%s created\n" % ns3)],
          [(r.returncode, r.stdout, r.stderr) for r in made])
    s.namespace(ns3, annotations=ns3_obj["metadata"]["annotations"])
    probe = Probe(s, NS, JAVA)
    ok, t = probe.until(endpoint_is("http://third:4318"), RESUME_SECONDS)
    check("restart: the change made while it was down is used (%.1f s)" % t, ok,
          json.dumps(probe.last)[:1500])
    got = s.injected("restart: a pod after the restart", pod("third", JAVA), NS,
                     want_init=["opentelemetry-auto-instrumentation-java"])
    check("restart: the stored pod exports to the endpoint set after the restart",
          env_of(got, "OTEL_EXPORTER_OTLP_ENDPOINT") == "http://third:4318", env_of(got, "OTEL_EXPORTER_OTLP_ENDPOINT"))
    nsprobe = Probe(s, ns3, None)
    ok, t = nsprobe.until(lambda p: [c["name"] for c in p.get("spec", {}).get("initContainers", [])] ==
                          ["opentelemetry-auto-instrumentation-nodejs"], RESUME_SECONDS)
    check("restart: the namespace made while it was down is seen (%.1f s)" % t, ok,
          json.dumps(nsprobe.last)[:1500])
    ready, _ = wait_for(lambda: w.get("/readyz") == (200, "ready\n"), RESUME_SECONDS)
    check("restart: the webhook is ready", bool(ready), w.get("/readyz"))
    watches_after(check, cluster, since, "since the restart")
    return since


# -- the serving certificate rotated -------------------------------------

def new_serving_pair(w, out):
    """A new key and certificate for 127.0.0.1, signed by the run's webhook
    CA (the caBundle stays): what cert-manager's renewal writes."""
    os.makedirs(out, exist_ok=True)
    key, csr, crt, ext = (os.path.join(out, n) for n in ("tls.key", "tls.csr", "tls.crt", "ext.cnf"))
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    for argv in (["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key],
                 ["req", "-new", "-key", key, "-subj", "/CN=otel-webhook.otel-webhook-system.svc", "-out", csr],
                 ["x509", "-req", "-in", csr, "-CA", w.ca, "-CAkey", os.path.join(w.certs, "ca.key"),
                  "-CAcreateserial", "-days", "2", "-extfile", ext, "-out", crt]):
        subprocess.run(["openssl"] + argv, check=True, capture_output=True, timeout=30)
    return key, crt


def served_der(w):
    try:
        with socket.create_connection(("127.0.0.1", w.port), timeout=5) as raw:
            with w.ctx.wrap_socket(raw, server_hostname="127.0.0.1") as t:
                return t.getpeercert(binary_form=True)
    except (OSError, ssl.SSLError):
        return None


def rotation(s, check, w):
    results = []
    stop = threading.Event()

    def creator():
        i = 0
        while not stop.is_set():
            name = "rot-%d" % i
            r = s.kubectl("create", "-n", NS, "-f", "-", obj=pod(name, JAVA))
            results.append((name, r.returncode, r.stdout, r.stderr))
            i += 1

    key, crt = new_serving_pair(w, os.path.join(w.dir, "renewed"))
    with open(crt) as f:
        want = ssl.PEM_cert_to_DER_cert(f.read())
    t = threading.Thread(target=creator, daemon=True)
    t.start()
    try:
        wait_for(lambda: len(results) >= 2, 60)
        # Key first, then certificate, as two renames: for an instant the
        # pair does not match, which must be refused, not served.
        os.replace(key, os.path.join(w.certs, "tls.key"))
        os.replace(crt, os.path.join(w.certs, "tls.crt"))
        at = len(results)
        ok, dt = wait_for(lambda: served_der(w) == want, 10)
        check("rotation: new handshakes get the renewed certificate (%.1f s)" % dt, bool(ok))
        wait_for(lambda: len(results) >= at + 3, 60)
    finally:
        stop.set()
        t.join(90)
    bad = [x for x in results if (x[1], x[2], x[3]) != (0, "pod/%s created\n" % x[0], "")]
    check("rotation: all %d pods created while the certificate was rotated, no warning" % len(results),
          len(results) >= 5 and not bad, json.dumps(bad)[:2000])
    stored = s.c.get_json("pods", "-n", NS) or {"items": []}
    inits = {p["metadata"]["name"]: [c["name"] for c in p["spec"].get("initContainers", [])]
             for p in stored["items"] if p["metadata"]["name"].startswith("rot-")}
    check("rotation: every one of them injected", len(inits) == len(results) and all(
        v == ["opentelemetry-auto-instrumentation-java"] for v in inits.values()), json.dumps(inits)[:2000])


def go(s, check, w):
    with open(w.config) as f:
        text = f.read()
    if not w.restart(check, text.rstrip("\n") + "\nenable-go-auto-instrumentation: true\n"):
        return
    annotations = {"instrumentation.opentelemetry.io/inject-go": "true",
                   "instrumentation.opentelemetry.io/otel-go-auto-target-exe": "/app/server"}
    got = s.injected("go enabled: a go pod", pod("go", annotations), NS, want_init=[],
                     want_containers=["app", "opentelemetry-auto-instrumentation"])
    spec = got.get("spec", {})
    check("go enabled: the pod shares its process namespace",
          spec.get("shareProcessNamespace") is True, spec.get("shareProcessNamespace"))
    check("go enabled: kubectl prints no warning", s.last.stderr == "", s.last.stderr)
