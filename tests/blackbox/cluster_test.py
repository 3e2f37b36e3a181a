#!/usr/bin/python3
"""`otel-webhook serve --kubeconfig / --in-cluster` against tests/blackbox/fakeapi.py.

Usage: tests/blackbox/cluster_test.py BINARY [RESULTS_FILE]        (from the repository root)
       tests/blackbox/cluster_test.py --rss BINARY                 (make bench: store memory)

Starts a fake API server (TLS on loopback) and the webhook watching it, then
creates, changes and deletes Instrumentations, collectors and namespace
annotations through the fake and checks that the webhook's answers follow
within a second while admissions keep succeeding on another thread; forces
410 Gone, dropped and stalled watches, a rotated token (401 until the token
file changes), an owner lookup the API does not answer (the fallback, at the
budget), and checks readiness, metrics, native-sidecar detection, in-cluster
mode, kubeconfig errors and TLS verification. Every server must exit 0 on SIGTERM with no
sanitizer report. Every wait is bounded."""
import base64
import copy
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

import jsonpatch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeapi  # noqa: E402
import h2frames as h2  # noqa: E402
import metricslib  # noqa: E402
from testlib import LSAN_SUPP, SANITIZER_MARKERS, Checks, free_port, log_records, wait_for  # noqa: E402

check = Checks("live")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))




class Webhook:
    def __init__(self, name, tmp, certs, args, env=None):
        self.name, self.tmp, self.args = name, tmp, list(args)
        self.crt, self.key = os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key")
        self.ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.crt"))
        self.extra_env = env or {}
        self.proc = self.port = self.errpath = None

    def start(self):
        env = dict(os.environ)
        env.update(self.extra_env)
        supp = os.path.join(self.tmp, "lsan.supp")
        with open(supp, "w") as f:
            f.write(LSAN_SUPP)
        env["LSAN_OPTIONS"] = ":".join(x for x in (env.get("LSAN_OPTIONS", ""), "suppressions=" + supp,
                                                   "print_suppressions=0") if x)
        self.port = free_port()
        self.errpath = os.path.join(self.tmp, "%s.stderr" % self.name)
        with open(self.errpath, "wb") as err:
            self.proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % self.port, "--tls-cert", self.crt,
                                          "--tls-key", self.key, "--threads", "2"] + self.args,
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
        ok, _ = wait_for(lambda: self.proc.poll() is not None or self.get("/healthz")[0] == 200, 20)
        return check("%s starts" % self.name, ok and self.proc.poll() is None, self.stderr()[-2000:])

    def request(self, method, path, body=None, timeout=10):
        c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)
        c.server_hostname = "localhost"
        try:
            c.request(method, path, body=body, headers={"Content-Type": "application/json", "Host": "localhost"})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def get(self, path):
        try:
            return self.request("GET", path)
        except (OSError, http.client.HTTPException) as e:
            return 0, repr(e).encode()

    def ready(self):
        return self.get("/readyz")[0] == 200

    def wait_ready(self, timeout=15):
        ok, dt = wait_for(self.ready, timeout)
        return check("%s becomes ready" % self.name, ok, self.stderr()[-2000:])

    def metrics_text(self):
        return self.get("/metrics")[1].decode(errors="replace")

    def metrics(self):
        st, body = self.get("/metrics")
        m = {}
        for line in body.decode(errors="replace").splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                m[k] = float(v)
        return m

    def admit(self, pod, uid="u1"):
        """Returns (status, response dict, patched pod or None, seconds)."""
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                              "resource": {"group": "", "version": "v1", "resource": "pods"},
                              "namespace": pod["metadata"].get("namespace", "default"), "operation": "CREATE",
                              "object": pod}}
        t0 = time.monotonic()
        st, body = self.request("POST", "/mutate-v1-pod", json.dumps(review).encode())
        dt = time.monotonic() - t0
        if st != 200:
            return st, {}, None, dt
        r = json.loads(body)["response"]
        patched = None
        if "patch" in r:
            patched = jsonpatch.apply_patch(pod, json.loads(base64.b64decode(r["patch"])))
        return st, r, patched, dt

    def stderr(self):
        try:
            with open(self.errpath, errors="replace") as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    def stop(self):
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
                return "timeout"
        return self.proc.returncode

    def final_checks(self):
        rc = self.stop()
        check("%s: exit status 0 on SIGTERM" % self.name, rc == 0, "rc=%r %s" % (rc, self.stderr()[-1500:]))
        bad = [l for l in self.stderr().splitlines() if any(m in l for m in SANITIZER_MARKERS)]
        check("%s: no sanitizer reports" % self.name, not bad, "\n".join(bad[:5]) + "\n" + self.stderr()[-3000:])


# ---------------------------------------------------------------------------
# Fixtures.

def pod(name, annotations=None, ns="default", owner=None, labels=None, containers=None):
    p = {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": name, "namespace": ns, "annotations": annotations or {}, "labels": labels or {}},
         "spec": {"containers": containers or [{"name": "app", "image": "app:1"}]}}
    if owner:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1],
                                             "uid": "uid-" + owner[1], "controller": True}]
    return p


def env_of(c):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in c.get("env", [])}


def injected_langs(r, patched):
    """Which languages an answer injected, from the init containers it added."""
    if patched is None:
        return set()
    names = [c["name"] for c in patched["spec"].get("initContainers", [])]
    return {n.rsplit("-", 1)[-1] for n in names if n.startswith("opentelemetry-auto-instrumentation-")}


def instrumentation(name, endpoint="http://collector:4318", ns="default", tls=None):
    spec = {"exporter": {"endpoint": endpoint}}
    if tls:
        spec["exporter"]["tls"] = tls
    return {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def collector(name, ns="default"):
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"mode": "sidecar", "config": {"receivers": {"otlp": {"protocols": {"grpc": {}}}},
                                                   "exporters": {"debug": {}},
                                                   "service": {"pipelines": {"traces": {"receivers": ["otlp"],
                                                                                        "exporters": ["debug"]}}}}}}


def kubeconfig(path, server, user, cluster_extra=None):
    cluster = {"server": server}
    cluster.update(cluster_extra or {})
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "test",
           "contexts": [{"name": "test", "context": {"cluster": "fake", "user": "me"}}],
           "clusters": [{"name": "fake", "cluster": cluster}], "users": [{"name": "me", "user": user}]}
    with open(path, "w") as f:
        json.dump(doc, f)  # JSON is YAML
    return path


def b64file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


CLIENT_CRT = CLIENT_KEY = None


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


class Admitter(threading.Thread):
    """Admits a Java pod in a loop; every answer must be a 200 with a patch."""

    def __init__(self, wh):
        super().__init__(daemon=True)
        self.wh, self.n, self.bad, self.stop_ev = wh, 0, [], threading.Event()

    def run(self):
        p = pod("bg", {"instrumentation.opentelemetry.io/inject-java": "java-inst"})
        while not self.stop_ev.is_set():
            try:
                st, r, patched, _ = self.wh.admit(p, uid="bg-%d" % self.n)
                if st != 200 or patched is None:
                    self.bad.append((st, r.get("warnings")))
            except (OSError, http.client.HTTPException, ValueError) as e:
                self.bad.append(repr(e))
            self.n += 1


# ---------------------------------------------------------------------------
# The tests.

def within_a_second(name, wh, pod_, pred, limit=1.0, patience=6.0):
    """Admits pod_ until pred(response, patched) holds; the change must show
    within `limit` seconds (we keep trying until `patience` to report how
    late it was)."""
    last = [None]

    def attempt():
        st, r, patched, _ = wh.admit(pod_)
        last[0] = (st, r.get("warnings"))
        return st == 200 and pred(r, patched)

    ok, dt = wait_for(attempt, patience, interval=0.01)
    check("%s: seen" % name, ok, repr(last[0]))
    if ok:
        check("%s: within %.1f s" % (name, limit), dt <= limit, "took %.2f s" % dt)
    return ok


def test_changes(wh, fake):
    java_pod = pod("p-java", {"instrumentation.opentelemetry.io/inject-java": "java-inst"})
    py_pod = pod("p-py", {"instrumentation.opentelemetry.io/inject-python": "python-inst"})
    plain = pod("p-plain")
    sc_pod = pod("p-sc", {"sidecar.opentelemetry.io/inject": "true"})

    st, r, patched, _ = wh.admit(py_pod)
    check("python before: not injected, warned", st == 200 and patched is None and
          any("python-inst" in w for w in r.get("warnings", [])), r)
    fake.apply("instrumentations", instrumentation("python-inst"))
    within_a_second("Instrumentation created", wh, py_pod, lambda r, p: "python" in injected_langs(r, p))

    def endpoint(r, p, want):
        return p is not None and env_of(p["spec"]["containers"][0]).get("OTEL_EXPORTER_OTLP_ENDPOINT") == want
    fake.apply("instrumentations", instrumentation("java-inst", endpoint="http://changed:4318"))
    within_a_second("Instrumentation changed", wh, java_pod, lambda r, p: endpoint(r, p, "http://changed:4318"))

    fake.delete("instrumentations", "python-inst", "default")
    within_a_second("Instrumentation deleted", wh, py_pod, lambda r, p: p is None)

    fake.apply("namespaces", {"metadata": {"name": "default", "annotations": {
        "instrumentation.opentelemetry.io/inject-java": "java-inst"}}})
    within_a_second("namespace annotated", wh, plain, lambda r, p: "java" in injected_langs(r, p))
    fake.apply("namespaces", {"metadata": {"name": "default", "annotations": {}}})
    within_a_second("namespace annotation removed", wh, plain, lambda r, p: p is None)

    st, r, patched, _ = wh.admit(sc_pod)
    check("sidecar before: warned", patched is None and any("sidecar" in w for w in r.get("warnings", [])), r)
    fake.apply("opentelemetrycollectors", collector("sc"))

    def has_sidecar(r, p):
        if p is None:
            return False
        return any(c["name"] == "otc-container" for c in p["spec"].get("containers", []) +
                   p["spec"].get("initContainers", []))
    within_a_second("collector created", wh, sc_pod, has_sidecar)
    fake.delete("opentelemetrycollectors", "sc", "default")
    within_a_second("collector deleted", wh, sc_pod, lambda r, p: p is None)


def metric_sum(wh, prefix):
    return sum(v for k, v in wh.metrics().items() if k.startswith(prefix))


def test_disruptions(wh, fake):
    py_pod = pod("p-py2", {"instrumentation.opentelemetry.io/inject-python": "py2"})
    for mode in ("event", "status"):
        before = metric_sum(wh, "otel_webhook_watch_relists_total")
        fake.gone(mode)
        ok, _ = wait_for(lambda: metric_sum(wh, "otel_webhook_watch_relists_total") >= before + 3, 8)
        check("410 Gone (%s): every informer relists" % mode, ok,
              "%s -> %s" % (before, metric_sum(wh, "otel_webhook_watch_relists_total")))
        fake.apply("instrumentations", instrumentation("py2"))
        within_a_second("after 410 Gone (%s): create seen" % mode, wh, py_pod,
                        lambda r, p: "python" in injected_langs(r, p))
        fake.delete("instrumentations", "py2")
        within_a_second("after 410 Gone (%s): delete seen" % mode, wh, py_pod, lambda r, p: p is None)

    before = metric_sum(wh, "otel_webhook_watch_restarts_total")
    fake.drop()
    fake.apply("instrumentations", instrumentation("py2"))
    within_a_second("dropped watch: change seen", wh, py_pod, lambda r, p: "python" in injected_langs(r, p))
    ok, _ = wait_for(lambda: metric_sum(wh, "otel_webhook_watch_restarts_total") >= before + 3, 5)
    check("dropped watch: restarts counted", ok)

    before = metric_sum(wh, "otel_webhook_watch_restarts_total")
    fake.stall()
    fake.delete("instrumentations", "py2")
    # --watch-idle-timeout 2: a silent watch is reopened after 2 s.
    within_a_second("stalled watch: change seen after the idle timeout", wh, py_pod, lambda r, p: p is None,
                    limit=4.0, patience=10)
    ok, _ = wait_for(lambda: metric_sum(wh, "otel_webhook_watch_restarts_total") >= before + 1, 5)
    check("stalled watch: restart counted", ok)


def test_lookups(wh, fake):
    java = {"instrumentation.opentelemetry.io/inject-java": "java-inst"}
    p = pod("my-java-7b5d8f6c9-abcde", java, owner=("ReplicaSet", "my-java-7b5d8f6c9"),
            labels={"pod-template-hash": "7b5d8f6c9"})
    n0 = fake.count(path_prefix="/apis/apps/v1/namespaces/default/replicasets/my-java-7b5d8f6c9")
    st, r, patched, _ = wh.admit(p)
    svc = patched and env_of(patched["spec"]["containers"][0]).get("OTEL_SERVICE_NAME")
    check("owner lookup: service name from the Deployment", svc == "my-java", svc)
    attrs = patched and env_of(patched["spec"]["containers"][0]).get("OTEL_RESOURCE_ATTRIBUTES") or ""
    check("owner lookup: deployment and replicaset attributes", "k8s.deployment.name=my-java" in attrs and
          "k8s.replicaset.name=my-java-7b5d8f6c9" in attrs, attrs)
    check("owner lookup: no warning", not r.get("warnings"), r.get("warnings"))
    reqs = [x for x in fake.requests if x["path"] == "/apis/apps/v1/namespaces/default/replicasets/my-java-7b5d8f6c9"]
    check("owner lookup: one GET, metadata only", len(reqs) == n0 + 1 and
          "as=PartialObjectMetadata" in reqs[-1]["accept"], reqs)
    # Both loops may need their own copy; after that, the cache answers.
    for i in range(6):
        wh.admit(p, uid="again-%d" % i)
    n = fake.count(path_prefix="/apis/apps/v1/namespaces/default/replicasets/my-java-7b5d8f6c9")
    check("owner lookup: cached per thread", n <= n0 + 2, "%d GETs; lookups %r" % (n - n0, {
        k: v for k, v in wh.metrics().items() if k.startswith("otel_webhook_owner_lookups_total")}))

    # The API does not answer the GET until the admission is back: an
    # answer at all proves the admission did not wait for it (it would
    # wait forever), whatever the machine's load; how long the budget is
    # (--lookup-budget) is for the server's clock, not for this test's.
    fake.hold("replicasets")
    path = "/apis/apps/v1/namespaces/default/replicasets/slow-app-5f6d7c8b9"
    try:
        p = pod("slow-app-5f6d7c8b9-xyz", java, owner=("ReplicaSet", "slow-app-5f6d7c8b9"),
                labels={"pod-template-hash": "5f6d7c8b9"})
        st, r, patched, dt = wh.admit(p)
        answered, held = fake.count(path_prefix=path), fake.held("replicasets")
    finally:
        fake.release("replicasets")
    check("slow owner lookup: answered before the API answered the GET", st == 200 and answered == 0,
          "status %d, GET answered %d times, %d held, %.3f s" % (st, answered, held, dt))
    svc = patched and env_of(patched["spec"]["containers"][0]).get("OTEL_SERVICE_NAME")
    check("slow owner lookup: pod-template-hash fallback", svc == "slow-app", svc)
    check("slow owner lookup: warning", any("could not be read in time" in w for w in r.get("warnings", [])),
          r.get("warnings"))
    check("slow owner lookup: the GET given up at the budget, logged",
          "no answer within the admission's lookup budget" in wh.stderr(), wh.stderr()[-1500:])
    m = wh.metrics()
    check("metrics: owner lookup timeout counted", m.get('otel_webhook_owner_lookups_total{result="timeout"}', 0) >= 1,
          m.get('otel_webhook_owner_lookups_total{result="timeout"}'))
    check("metrics: owner lookup found and cached",
          m.get('otel_webhook_owner_lookups_total{result="found"}', 0) >= 1 and
          m.get('otel_webhook_owner_lookups_total{result="cached"}', 0) >= 1, m)
    check("metrics: owner lookup latency histogram",
          m.get("otel_webhook_owner_lookup_duration_seconds_count", 0) >= 2, m)

    # Exporter TLS Secrets: checked with a GET, missing means not injected.
    fake.apply("instrumentations", instrumentation("tls-ok", "https://c:4318", tls={"secretName": "otel-certs",
                                                                                 "ca_file": "ca.crt"}))
    fake.apply("instrumentations", instrumentation("tls-missing", "https://c:4318", tls={"secretName": "nope",
                                                                                      "ca_file": "ca.crt"}))
    ok_pod = pod("p-tls", {"instrumentation.opentelemetry.io/inject-java": "tls-ok"})
    within_a_second("exporter Secret present: injected", wh, ok_pod, lambda r, p: "java" in injected_langs(r, p))
    bad_pod = pod("p-tls2", {"instrumentation.opentelemetry.io/inject-java": "tls-missing"})
    within_a_second("exporter Secret missing: not injected, warned", wh, bad_pod, lambda r, p: p is None and any(
        "nope" in w and "does not exist" in w for w in r.get("warnings", [])))
    check("Secret lookups are metadata only", all("as=PartialObjectMetadata" in x["accept"] for x in fake.requests
                                                  if "/secrets/" in x["path"]) and
          any("/secrets/nope" in x["path"] for x in fake.requests))


CR_PATH = "/validate-opentelemetry-io-v1beta1-opentelemetrycollector"


def cr_collector(receivers, name="esc", ta=None):
    spec = {"mode": "statefulset" if ta else "deployment",
            "config": {"receivers": receivers, "exporters": {"debug": {}},
                       "service": {"pipelines": {"p": {"receivers": sorted(receivers), "exporters": ["debug"]}}}}}
    if ta:
        spec["targetAllocator"] = ta
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
            "metadata": {"name": name, "namespace": "team"}, "spec": spec}


def cr_review(obj, user="jane", groups=("dev",), op="CREATE", uid="cr-1"):
    """The AdmissionReview of a collector's validation, as bytes."""
    rv = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid, "operation": op, "namespace": "team",
        "kind": {"group": "opentelemetry.io", "version": "v1beta1", "kind": "OpenTelemetryCollector"},
        "userInfo": {"username": user, "uid": "uid-" + user, "groups": list(groups),
                     "extra": {"scopes": ["a"]}}, "object" if op != "DELETE" else "oldObject": obj}}
    return json.dumps(rv).encode()


def cr_response(st, body):
    """The response of an AdmissionReview answer, or what came instead."""
    try:
        return json.loads(body)["response"] if st == 200 else (st, body)
    except (ValueError, KeyError, TypeError):
        return (st, body)


def test_cr_rbac(wh, fake):
    """The collector admission's privilege-escalation check (cr-admission.md
    3.7) and the target allocator's account check (3.3 step 9), asked of
    the API server as SubjectAccessReviews."""
    col = cr_collector

    def ask(obj, user="jane", groups=("dev",), op="CREATE"):
        st, body = wh.request("POST", CR_PATH, cr_review(obj, user, groups, op))
        return st, (json.loads(body)["response"] if st == 200 else body)

    events = col({"k8s_events": {}})
    n0 = len(fake.reviews)
    st, r = ask(events)
    check("escalation: neither the user nor the collector's account holds events: refused", st == 200 and r == {
        "uid": "cr-1", "allowed": False, "status": {
            "code": 403, "reason": "Forbidden", "message": "user \"jane\" is not allowed to create a collector whose "
            "config would grant permissions they do not hold: missing the following rules for jane - events: "
            "[get,list,watch]"}}, r)
    asked = fake.reviews[n0:]
    check("escalation: the user asked first, with groups, uid and extra; then the account, with its groups",
          len(asked) == 6 and asked[0] == {"user": "jane", "uid": "uid-jane", "groups": ["dev"],
                                           "extra": {"scopes": ["a"]},
                                           "resourceAttributes": {"verb": "get", "group": "", "resource": "events"}}
          and asked[3] == {"user": "system:serviceaccount:team:esc-collector",
                           "groups": ["system:serviceaccounts", "system:serviceaccounts:team", "system:authenticated"],
                           "resourceAttributes": {"verb": "get", "group": "", "resource": "events"}}, asked)
    fake.allow("system:serviceaccount:team:esc-collector", "*", "", "events")
    st, r = ask(events)
    check("escalation: the account holds them already: allowed", st == 200 and r.get("allowed") is True, r)
    fake.allow("admins", "*", "", "*")
    n0 = len(fake.reviews)
    st, r = ask(col({"k8s_events": {}, "kubeletstats": {}}, name="esc2"), user="ann", groups=("admins",))
    check("escalation: a user whose group holds them: allowed, one review per rule",
          st == 200 and r.get("allowed") is True and len(fake.reviews) - n0 == 4, (r, fake.reviews[n0:]))
    st, r = ask(events, op="DELETE")
    check("escalation: a DELETE asks nothing", st == 200 and r.get("allowed") is True and len(fake.reviews) - n0 == 4)
    fake.fail_reviews(503)
    st, r = ask(col({"k8s_events": {}}, name="esc3"), user="bob")
    check("escalation: the authorizer does not answer: refused, it says why", st == 200 and r.get("status") == {
        "code": 403, "reason": "Forbidden", "message": "unable to check RBAC privilege escalation for user \"bob\": "
        "POST /apis/authorization.k8s.io/v1/subjectaccessreviews: HTTP 503: injected failure"}, r)
    fake.heal_reviews()
    # The target allocator's account (prometheusCR): missing rules are warnings, sorted.
    ta = col({"prometheus": {}}, name="scrape", ta={"enabled": True, "prometheusCR": {"enabled": True}})
    fake.allow("system:serviceaccount:team:scrape-targetallocator", "*", "monitoring.coreos.com", "*")
    st, r = ask(ta)
    w = r.get("warnings", []) if st == 200 else []
    sa = "missing the following rules for system:serviceaccount:team:scrape-targetallocator - "
    glw = ": [get,list,watch]"
    want = [sa + "configmaps: [get]", sa + "discovery.k8s.io/endpointslices" + glw, sa + "endpoints" + glw,
            sa + "namespaces" + glw, sa + "networking.k8s.io/ingresses" + glw, sa + "nodes" + glw,
            sa + "nodes/metrics" + glw] + [sa + "nonResourceURL: %s: [get]" % u for u in
                                           ("/api", "/api/*", "/apis", "/apis/*", "/metrics")] + [
        sa + "pods" + glw, sa + "services" + glw]
    check("target allocator account: allowed with one warning per resource it lacks, by resource",
          st == 200 and r.get("allowed") is True and w == want, (r.get("allowed"), r.get("status"), w))
    m = wh.metrics()
    reviews = {k: m.get('otel_webhook_access_reviews_total{result="%s"}' % k) for k in ("allowed", "denied", "error")}
    check("metrics: access reviews by answer", reviews["error"] == 1 and reviews["denied"] >= 6 and
          sum(reviews.values()) == len(fake.reviews), (reviews, len(fake.reviews)))
    check("log: a failed access review says why", "SubjectAccessReview: POST /apis/authorization.k8s.io/v1/"
          "subjectaccessreviews: HTTP 503: injected failure" in wh.stderr(), wh.stderr()[-1500:])


class Answers:
    """Requests sent from threads of their own; got[uid] = (status, body)
    or the exception, and a condition to wait on (no polling)."""

    def __init__(self, wh):
        self.wh, self.cond, self.got, self.threads = wh, threading.Condition(), {}, []

    def send(self, uid, body, path=CR_PATH):
        def run():
            try:
                res = self.wh.request("POST", path, body, timeout=120)
            except (OSError, http.client.HTTPException) as e:
                res = e
            with self.cond:
                self.got[uid] = res
                self.cond.notify_all()
        t = threading.Thread(target=run, daemon=True)
        t.start()
        self.threads.append(t)

    def wait(self, n, timeout):
        with self.cond:
            return self.cond.wait_for(lambda: len(self.got) >= n, timeout)

    def response(self, uid):
        with self.cond:
            res = self.got.get(uid)
        return cr_response(*res) if isinstance(res, tuple) else res


def escalation_refused(uid, user="jane"):
    return {"uid": uid, "allowed": False, "status": {
        "code": 403, "reason": "Forbidden", "message": "user \"%s\" is not allowed to create a collector whose "
        "config would grant permissions they do not hold: missing the following rules for %s - events: "
        "[get,list,watch]" % (user, user)}}


def unable_to_check(uid, why, user="jane"):
    return {"uid": uid, "allowed": False, "status": {
        "code": 403, "reason": "Forbidden",
        "message": "unable to check RBAC privilege escalation for user \"%s\": %s" % (user, why)}}


def raw_tls(wh, alpn=None):
    ctx = ssl.create_default_context(cafile=os.path.join(os.path.dirname(wh.crt), "ca.crt"))
    if alpn:
        ctx.set_alpn_protocols(alpn)
    s = socket.create_connection(("127.0.0.1", wh.port), timeout=10)
    return ctx.wrap_socket(s, server_hostname="localhost")


def h2_cr(wh, sid_bodies):
    """An HTTP/2 connection sending each (stream id, body) to CR_PATH."""
    c = h2.H2(raw_tls(wh, ["h2"]))
    c.send(h2.PREFACE + h2.frame(h2.SETTINGS, 0, 0))
    for sid, body in sid_bodies:
        c.send(h2.frame(h2.HEADERS, h2.END_HEADERS, sid, h2.request_headers("POST", CR_PATH)))
        c.send(h2.frame(h2.DATA, h2.END_STREAM, sid, body))
    c.drain(10)
    return c


def h2_ping(c, data):
    """Sends a PING and pumps until its ACK: the server has read every
    frame sent before it."""
    c.send(h2.frame(h2.PING, 0, 0, data))
    return c.wait_for(lambda h: any(t == h2.PING and f & h2.ACK and p == data for t, f, _, p in h.frames), 10)


def test_cr_workers(tmp, certs, kc, fake):
    """Collector validations that may wait on SubjectAccessReviews are
    answered by a worker, not by the event loop: on one loop, a pod is
    admitted while the API server holds a collector's review; the answer
    is the one the loop gave before; clients that leave mid-review, and a
    queue past its bound, are answered or dropped without harm. The fake
    holds the reviews until the test releases them: every wait is on an
    event, bounded."""
    events = cr_collector({"k8s_events": {}}, name="held")
    fake.allow("held-admins", "*", "", "*")
    # --access-review-budget 60000: a review waited for on the loop would
    # hold the pod below for a minute, past its request's 10 s.
    wh = Webhook("cr-workers", tmp, certs, ["--kubeconfig", kc, "--threads", "1", "--http2",
                                            "--access-review-budget", "60000"])
    try:
        if not (wh.start() and wh.wait_ready()):
            return
        java = {"instrumentation.opentelemetry.io/inject-java": "java-inst"}

        # A collector admission waits on its review; a pod meanwhile.
        fake.hold_reviews()
        a = Answers(wh)
        a.send("held-1", cr_review(events, uid="held-1"))
        held = fake.wait_reviews_held(1, 30)
        check("one loop: the collector admission's review is held by the API server", held, wh.stderr()[-1500:])
        try:
            st, r, patched, dt = wh.admit(pod("p-while-held", java), uid="pod-while-held")
        except (OSError, http.client.HTTPException) as e:
            st, r, patched, dt = 0, {"error": repr(e)}, None, 0
        still_held, cr_answered = fake.held_reviews(), a.wait(1, 0)
        check("one loop: a pod admitted while a collector admission waits on the API server",
              st == 200 and "java" in injected_langs(r, patched) and still_held == 1 and not cr_answered,
              (st, r, still_held, cr_answered))
        fake.release_reviews()
        check("worker: the collector admission answered once the reviews are", a.wait(1, 60))
        check("worker: the answer is the loop's, exactly (refused, with the missing rules)",
              a.response("held-1") == escalation_refused("held-1"), a.response("held-1"))
        # Allowed, with every review held on the way.
        fake.hold_reviews()
        a.send("held-2", cr_review(events, user="held-ann", groups=("held-admins",), uid="held-2"))
        check("worker: an allowed admission's review held", fake.wait_reviews_held(1, 30))
        fake.release_reviews()
        check("worker: allowed, exactly", a.wait(2, 60) and a.response("held-2") == {
            "uid": "held-2", "allowed": True, "status": {"code": 200}}, a.response("held-2"))
        # The routes that never ask the API server stay on the loop; a
        # DELETE (no review) through the worker is answered as before.
        st, body = wh.request("POST", CR_PATH, cr_review(events, op="DELETE", uid="held-del"))
        check("worker: a DELETE allowed as before", cr_response(st, body) == {
            "uid": "held-del", "allowed": True, "status": {"code": 200}}, body)
        st, body = wh.request("POST", CR_PATH, b"{not json")
        check("worker: a body that is not an AdmissionReview: HTTP 400 as before", st == 400, (st, body))
        log = wh.stderr()
        check("worker: one log line per admission, as before", all(
            '"uid":"%s"' % u in log for u in ("held-1", "held-2", "held-del")) and
            '"msg":"denied"' in log and '"rule":"rbac"' in log, log[-2000:])

        # Clients that leave while the API server holds their review: over
        # HTTP/1 (the loop finds out when it answers), over HTTP/2 by a
        # stream reset (the request is disposed of before the answer) and
        # by closing the connection while the admission waits in the queue.
        fake.hold_reviews()
        s = raw_tls(wh)
        body = cr_review(events, uid="gone-h1")
        s.sendall(b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % (CR_PATH.encode(), len(body)) + body)
        check("client gone: HTTP/1 admission's review held", fake.wait_reviews_held(1, 30))
        s.close()
        c = h2_cr(wh, [(1, cr_review(events, uid="gone-rst"))])
        check("client gone: HTTP/2 admission's review held (both workers waiting)", fake.wait_reviews_held(2, 30))
        c.send(h2.frame(h2.RST_STREAM, 0, 1, struct.pack(">I", 8)))  # CANCEL
        reset_seen = h2_ping(c, b"rst-seen")
        c2 = h2_cr(wh, [(1, cr_review(events, uid="gone-queued"))])
        queued_seen = h2_ping(c2, b"queued!!")
        c2.close()
        check("client gone: the server read the reset and the queued request", reset_seen and queued_seen)
        fake.release_reviews()
        ok, _ = wait_for(lambda: all('"uid":"%s"' % u in wh.stderr() for u in ("gone-h1", "gone-rst", "gone-queued")),
                         60)
        check("client gone: each admission still decided and logged", ok, wh.stderr()[-2000:])
        ok, _ = wait_for(lambda: '"msg":"admission answer dropped: the client went away","path":"%s","uid":"gone-rst"'
                         % CR_PATH in wh.stderr(), 30)
        check("client gone: the reset stream's answer dropped, said in the log", ok, wh.stderr()[-2000:])
        c.close()
        st, r, patched, _ = wh.admit(pod("p-after-gone", java), uid="pod-after-gone")
        check("client gone: the server still admits pods", st == 200 and "java" in injected_langs(r, patched), r)
        st, body = wh.request("POST", CR_PATH, cr_review(events, uid="after-gone"))
        check("client gone: and collectors", cr_response(st, body) == escalation_refused("after-gone"), body)

        # The queue's bound: with both workers held, 32 admissions wait and
        # the next ones are answered at once, refused as an API server that
        # does not answer would have them.
        fake.hold_reviews()
        q = Answers(wh)
        for i in range(2):
            q.send("q-%d" % i, cr_review(events, uid="q-%d" % i))
        check("queue: both workers held", fake.wait_reviews_held(2, 30))
        for i in range(2, 37):
            q.send("q-%d" % i, cr_review(events, uid="q-%d" % i))
        early = q.wait(3, 60)
        with q.cond:
            first = sorted(q.got)
        full = [u for u in first if q.response(u) == unable_to_check(
            u, "too many collector admissions are waiting for the API server")]
        check("queue: past 32 waiting, answered at once without the API server", early and len(full) == len(first) >= 3
              and fake.held_reviews() == 2, [(u, q.response(u)) for u in first])
        fake.release_reviews()
        done = q.wait(37, 120)
        refused = [u for u in q.got if q.response(u) == escalation_refused(u)]
        too_many = [u for u in q.got if q.response(u) == unable_to_check(
            u, "too many collector admissions are waiting for the API server")]
        check("queue: 2 + 32 answered once released, exactly 3 past the bound",
              done and len(refused) == 34 and len(too_many) == 3,
              (len(q.got), len(refused), sorted(too_many), [q.response(u) for u in q.got
                                                             if u not in refused and u not in too_many][:3]))
        check("queue: said in the log", "collector admission answered without access reviews: too many collector "
              "admissions are waiting for the API server" in wh.stderr(), wh.stderr()[-1500:])
    finally:
        fake.release_reviews()
        wh.final_checks()


def test_cr_shutdown(tmp, certs, kc, fake):
    """SIGTERM while a collector admission waits on the API server: it
    finishes within --shutdown-grace; at the grace deadline it is answered
    (refused: no review can be made any more) and the server exits 0 with
    its workers joined and nothing leaked."""
    events = cr_collector({"k8s_events": {}}, name="held")
    for name, grace, release in (("cr-shutdown", "30", True), ("cr-deadline", "1", False)):
        wh = Webhook(name, tmp, certs, ["--kubeconfig", kc, "--threads", "1", "--shutdown-grace", grace,
                                        "--access-review-budget", "60000"])
        try:
            if not (wh.start() and wh.wait_ready()):
                continue
            fake.hold_reviews()
            a = Answers(wh)
            a.send("sd-1", cr_review(events, uid="sd-1"))
            check("%s: review held" % name, fake.wait_reviews_held(1, 30))
            wh.proc.send_signal(signal.SIGTERM)
            ok, _ = wait_for(lambda: '"msg":"shutting down"' in wh.stderr(), 10)
            check("%s: shutting down" % name, ok, wh.stderr()[-1000:])
            if release:
                fake.release_reviews()
                want = escalation_refused("sd-1")
            else:
                want = unable_to_check("sd-1", "the webhook is shutting down")
            check("%s: the in-flight admission answered" % name, a.wait(1, 30) and a.response("sd-1") == want,
                  a.response("sd-1"))
            try:
                rc = wh.proc.wait(20)
            except subprocess.TimeoutExpired:
                rc = "timeout"
            check("%s: exits 0" % name, rc == 0, (rc, wh.stderr()[-1500:]))
        finally:
            fake.release_reviews()
            wh.final_checks()


def proc_cpu(proc):
    with open("/proc/%d/stat" % proc.pid) as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def test_faults(tmp, certs):
    """What a hostile or broken API server can do that a real one will not
    on demand (fakeapi.py's faults), against one webhook of its own: each
    is backed off, logged and counted in otel_webhook_watch_errors_total,
    exactly once per answer the fault gave, and serving goes on from the
    last good objects. On main's binary: the deep collector kept the
    replica not ready, an instant-ending 200 watch was reopened with no
    pause, no log and no metric, a drip kept a watch open for ever, the
    8 MiB line cost seconds of CPU, /readyz stayed 200 with the API server
    gone."""
    fake = fakeapi.FakeAPI(os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key"), token="t",
                           bookmark_interval=0.5)
    fake.start()
    port = fake.port
    fake.apply("instrumentations", instrumentation("inst-a"))
    fake.apply("opentelemetrycollectors", collector("ok"))
    deep = collector("deep")
    cur = deep["spec"]["config"]
    for _ in range(40):
        cur["a"] = {}
        cur = cur["a"]
    fake.apply("opentelemetrycollectors", deep)
    kc = kubeconfig(os.path.join(tmp, "kc-faults.yaml"), "https://127.0.0.1:%d" % port, {"token": "t"},
                    {"certificate-authority": os.path.join(certs, "ca.crt")})
    wh = Webhook("faults", tmp, certs, ["--kubeconfig", kc, "--watch-idle-timeout", "2", "--watch-timeout", "30",
                                        "--stale-grace", "3", "--list-max-pages", "5", "--list-max-bytes", "300000"])
    fakes = [fake]
    try:
        if not wh.start():
            return
        if not wh.wait_ready():
            return
        err = lambda reason, res="instrumentations": wh.metrics().get(
            'otel_webhook_watch_errors_total{resource="%s",reason="%s"}' % (res, reason))
        msgs = lambda: [o.get("msg") for o in log_records(wh.stderr())]
        said = lambda m: sum(x == m for x in msgs())
        m = wh.metrics()
        check("deep collector refused alone, counted once",
              m.get('otel_webhook_store_objects{kind="OpenTelemetryCollector"}') == 1 and
              err("too_deep", "opentelemetrycollectors") == 1, m)
        check("deep collector: one warning",
              said("list opentelemetrycollectors: default/deep nested deeper than 30 levels; skipped") == 1,
              msgs()[-10:])
        n_inst = lambda: wh.metrics().get('otel_webhook_store_objects{kind="Instrumentation"}')

        def watch_works(tag):
            # Two: the first may come with a relist, the second is then an
            # event of a watch that works (which resets the backoff).
            for k in ("", "-2"):
                before = n_inst()
                fake.apply("instrumentations", instrumentation("probe-" + tag + k))
                ok, _ = wait_for(lambda: n_inst() == before + 1, 40)
                check("%s%s: the watch works again" % (tag, k), ok, (before, n_inst()))

        # An 8 MiB event on one line: linear, not seconds of CPU.
        cpu0 = proc_cpu(wh.proc)
        big = instrumentation("big")
        big["metadata"]["annotations"] = {"pad": "x" * (8 << 20)}
        before = n_inst()
        fake.apply("instrumentations", big)
        ok, _ = wait_for(lambda: n_inst() == before + 1, 30)
        used = proc_cpu(wh.proc) - cpu0
        check("8 MiB watch event: taken", ok)
        check("8 MiB watch event: under 1.5 s of CPU", used < 1.5, "%.2f s" % used)
        print("  (8 MiB watch event: %.2f s of CPU)" % used)
        fake.delete("instrumentations", "big")
        ok, _ = wait_for(lambda: n_inst() == before, 15)

        # A watch answered 200 and ended at once: backed off, logged, counted.
        t0 = time.monotonic()
        fake.fault("instrumentations", "end")
        ok, _ = wait_for(lambda: (err("ended_early") or 0) >= 4, 20)
        took = time.monotonic() - t0
        check("instant 200 watch: counted", ok, err("ended_early"))
        served = fake.faults("instrumentations", "end")
        # 0.1-0.2, 0.2-0.4, 0.4-0.8 s before the 2nd, 3rd, 4th: not 2.6k a second.
        check("instant 200 watch: backed off", took >= 0.7 and served <= 6, "%d in %.2f s" % (served, took))
        fake.heal_faults()
        watch_works("end")
        n = fake.faults("instrumentations", "end")
        check("instant 200 watch: one error per answer", err("ended_early") == n, (err("ended_early"), n))
        check("instant 200 watch: one log line per answer",
              sum(x.startswith("watch instrumentations: the server ended the watch after ") and
                  x.endswith(" s (30 s asked); reconnecting") for x in msgs()) == n,
              [x for x in msgs() if "ended" in x][:3])

        # Every watch 410 Gone: relists, backed off, counted.
        r0 = wh.metrics().get('otel_webhook_watch_relists_total{resource="instrumentations"}')
        fake.fault("instrumentations", "gone")
        ok, _ = wait_for(lambda: (err("gone") or 0) >= 3, 20)
        check("410 on every watch: counted", ok, err("gone"))
        fake.heal_faults()
        watch_works("gone")
        n = fake.faults("instrumentations", "gone")
        m = wh.metrics()
        check("410 on every watch: one error and one relist per answer",
              err("gone") == n and m.get('otel_webhook_watch_relists_total{resource="instrumentations"}') == r0 + n,
              (err("gone"), n, r0, m.get('otel_webhook_watch_relists_total{resource="instrumentations"}')))
        check("410 on every watch: logged", sum(x.startswith("watch instrumentations: resourceVersion ") and
                                                x.endswith(" is gone; listing again") for x in msgs()) == n)

        # Garbage on a 200 watch.
        fake.fault("instrumentations", "garbage")
        ok, _ = wait_for(lambda: (err("garbage") or 0) >= 3, 20)
        check("garbage watch: counted", ok, err("garbage"))
        fake.heal_faults()
        watch_works("garbage")
        n = fake.faults("instrumentations", "garbage")
        check("garbage watch: one error and one log line per answer", err("garbage") == n and said(
            'watch instrumentations: not a watch event: "<html>this is not a watch event</html>"; reconnecting') == n,
            (err("garbage"), n, [x for x in msgs() if "not a watch" in x][:2]))

        # One byte every half second of a line that never ends: idle after 2 s.
        s0 = err("stalled") or 0
        fake.fault("instrumentations", "drip", every=0.5)
        ok, _ = wait_for(lambda: (err("stalled") or 0) >= s0 + 1, 15)
        check("dripped watch: stalled after --watch-idle-timeout", ok, err("stalled"))
        fake.heal_faults()
        watch_works("drip")
        check("dripped watch: logged", said("watch instrumentations: the watch sent no complete event for 2 s; "
                                            "reconnecting") == err("stalled"), [x for x in msgs() if "sent" in x][:2])

        # LISTs: an endless continue, then a list past --list-max-bytes; the
        # last good objects stay in service meanwhile.
        have = n_inst()
        for mode, reason, msg, kw in (
                ("endless", "list_too_many_pages", "list instrumentations: more than 5 pages; the list is given up "
                 "(the last good objects stay in service)", {}),
                ("huge", "list_too_large", "list instrumentations: more than 300000 bytes; the list is given up "
                 "(the last good objects stay in service)", {"pad": 100000})):
            fake.fault("instrumentations", mode, **kw)
            fake.gone("status")
            ok, _ = wait_for(lambda: (err(reason) or 0) >= 2, 20)
            check("LIST %s: given up, counted" % mode, ok, err(reason))
            check("LIST %s: the last good objects served" % mode, n_inst() == have, (n_inst(), have))
            fake.heal_faults()
            watch_works(mode)
            have += 2
            n = err(reason)
            check("LIST %s: logged once per list" % mode, said(msg) == n, [x for x in msgs() if "list " in x][-3:])
            if mode == "endless":
                # (a list under way when the fault was healed meets an expired token: not counted here)
                check("LIST endless: 5 pages per list", 5 * n <= fake.faults("instrumentations", "endless") < 5 * n + 5,
                      (fake.faults("instrumentations", "endless"), n))
        check("still ready", wh.ready())

        # The API server gone: 503 after --stale-grace, ready again when it is back.
        t0 = time.monotonic()
        fake.stop()
        ok, _ = wait_for(lambda: wh.get("/readyz")[0] == 503, 15)
        took = time.monotonic() - t0
        check("API server gone: /readyz 503 after --stale-grace", ok and took >= 3, "%.2f s" % took)
        check("API server gone: said once",
              [o.get("grace_seconds") for o in log_records(wh.stderr())
               if o.get("msg") == "the API server has not answered past the grace period: not ready"] == [3])
        st, r, patched, _ = wh.admit(pod("p-stale", {"instrumentation.opentelemetry.io/inject-java": "inst-a"}))
        check("API server gone: the last good objects served", "java" in injected_langs(r, patched), r)
        fake2 = fakeapi.FakeAPI(os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key"), token="t",
                                bookmark_interval=0.5, port=port)
        fakes.append(fake2)
        fake2.start()
        fake2.apply("instrumentations", instrumentation("inst-a"))
        ok, _ = wait_for(wh.ready, 40)
        check("API server back: ready again", ok)
        ok, _ = wait_for(lambda: said("the API server answers again: ready") == 1, 5)
        check("API server back: said once", ok, msgs()[-5:])
        wh.final_checks()
    finally:
        if wh.proc is not None and wh.proc.poll() is None:
            wh.proc.kill()
            wh.proc.wait(10)
        for f in fakes:
            try:
                f.stop()
            except Exception:
                pass


def test_cli_errors(tmp, certs, server):
    def run(args, env=None):
        e = dict(os.environ)
        e.update(env or {})
        e["ASAN_OPTIONS"] = "detect_leaks=0"
        return subprocess.run([BIN, "serve", "--listen", "127.0.0.1:%d" % free_port(), "--tls-cert",
                               os.path.join(certs, "tls.crt"), "--tls-key", os.path.join(certs, "tls.key")] + args,
                              capture_output=True, text=True, timeout=30, env=e)
    ca = os.path.join(certs, "ca.crt")
    cases = [
        ("exec plugin", {"exec": {"command": "aws", "apiVersion": "client.authentication.k8s.io/v1"}},
         "exec credential plugin"),
        ("auth-provider", {"auth-provider": {"name": "gcp"}}, "auth-provider plugin"),
        ("basic auth", {"username": "a", "password": "b"}, "basic authentication"),
        ("certificate without key", {"client-certificate": "x.crt"}, "needs its client key"),
    ]
    for name, user, msg in cases:
        kc = kubeconfig(os.path.join(tmp, "kc-err.yaml"), server, user, {"certificate-authority": ca})
        p = run(["--kubeconfig", kc])
        check("kubeconfig %s: exit 1" % name, p.returncode == 1, p.returncode)
        check("kubeconfig %s: names it" % name, msg in p.stderr, p.stderr[-500:])
    p = run(["--kubeconfig", os.path.join(tmp, "nope.yaml")])
    check("missing kubeconfig: exit 1 with the file", p.returncode == 1 and "nope.yaml" in p.stderr, p.stderr[-300:])
    p = run(["--kubeconfig", kc, "--context", "elsewhere"])
    check("unknown context: named", p.returncode == 1 and "elsewhere" in p.stderr and "not found" in p.stderr, p.stderr[-300:])
    p = run(["--kubeconfig", kc, "--in-cluster"])
    check("--kubeconfig with --in-cluster: usage", p.returncode == 2, p.returncode)
    env = {k: "" for k in ("KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
    p = run(["--in-cluster"], env)
    check("--in-cluster outside a pod: exit 1", p.returncode == 1 and "KUBERNETES_SERVICE_HOST" in p.stderr,
          p.stderr[-300:])


def main():
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="otel-live-test-")
    hooks = []
    fake = None
    try:
        certs = os.path.join(tmp, "certs")
        p = subprocess.run([BIN, "certs", "generate", "--service", "kubernetes", "--namespace", "default", "--out",
                            certs, "--dev"], capture_output=True, text=True, timeout=60)
        if not check("certs generate", p.returncode == 0, p.stderr):
            return
        # Kept after the run for tests/deploy's RBAC comparison.
        reqlog = os.environ.get("OTEL_FAKEAPI_LOG") or os.path.join(ROOT, "build", "fakeapi-requests.jsonl")
        os.makedirs(os.path.dirname(os.path.abspath(reqlog)), exist_ok=True)
        open(reqlog, "w").close()
        global CLIENT_CRT, CLIENT_KEY
        CLIENT_CRT, CLIENT_KEY = os.path.join(tmp, "client.crt"), os.path.join(tmp, "client.key")
        p = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                            "-nodes", "-subj", "/CN=otel-webhook-test", "-days", "1", "-keyout", CLIENT_KEY, "-out",
                            CLIENT_CRT], capture_output=True, text=True, timeout=60)
        check("client certificate generated", p.returncode == 0, p.stderr)
        fake = fakeapi.FakeAPI(os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key"), token="token-1",
                               client_ca=CLIENT_CRT, log_path=reqlog, bookmark_interval=0.5)
        fake.start()
        server = "https://127.0.0.1:%d" % fake.port
        fake.apply("namespaces", {"metadata": {"name": "default", "annotations": {"team": "a"}}})
        fake.apply("namespaces", {"metadata": {"name": "kube-system"}})
        fake.apply("instrumentations", instrumentation("java-inst"))
        fake.apply("deployments", {"metadata": {"name": "my-java", "uid": "dep-uid"}})
        fake.apply("replicasets", {"metadata": {"name": "my-java-7b5d8f6c9", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "my-java", "uid": "dep-uid", "controller": True}]}})
        fake.apply("secrets", {"metadata": {"name": "otel-certs"}, "data": {"ca.crt": "c2VjcmV0"}})

        # The token file holds an old token: 401 until it is rotated.
        token = os.path.join(tmp, "token")
        write_atomic(token, "token-0\n")
        kc = kubeconfig(os.path.join(tmp, "kubeconfig.yaml"), server, {"tokenFile": "token"},
                        {"certificate-authority": "certs/ca.crt"})
        t_live_unix = time.time()
        # --lookup-budget 3000: the fake (Python, on a loaded machine) can
        # take longer than the default 200 ms to answer a GET, and a GET
        # given up is not cached, which the lookup checks would see as a
        # wrong answer; the one budget test holds its GET unanswered
        # whatever the budget (test_lookups).
        wh = Webhook("live", tmp, certs, ["--kubeconfig", kc, "--watch-idle-timeout", "2", "--watch-timeout", "30",
                                          "--lookup-budget", "3000"])
        hooks.append(wh)
        if not wh.start():
            return
        ok, _ = wait_for(lambda: sum(1 for r in fake.requests if r["status"] == 401) >= 3, 10)
        check("old token: 401s", ok)
        check("not ready before the informers synced", wh.get("/readyz")[0] == 503)
        text = wh.metrics_text()
        m = metricslib.parse(text)[0]
        metricslib.check_exposition(check, "not synced", text, ROOT, BIN, live=True)
        sample = lambda fam: {tuple(sorted(labels.items())): v for _, labels, v in m.get(fam, {}).get("samples", [])}
        check("metrics: not synced", sample("otel_webhook_watch_synced").get((("resource", "namespaces"),)) == 0 and
              sample("otel_webhook_ready") == {(): 0}, text[-2000:])
        # Nothing listed and /version refused: no samples rather than -1s.
        check("metrics: no last-event time before the first list",
              "otel_webhook_watch_last_event_timestamp_seconds" in m and
              not sample("otel_webhook_watch_last_event_timestamp_seconds"),
              sample("otel_webhook_watch_last_event_timestamp_seconds"))
        check("metrics: native sidecars not known yet: no sample", "otel_webhook_native_sidecars" in m and
              not sample("otel_webhook_native_sidecars"), sample("otel_webhook_native_sidecars"))
        write_atomic(token, "token-1\n")
        if not wh.wait_ready(timeout=15):
            return
        n401 = sum(1 for r in fake.requests if r["status"] == 401)

        # What was asked: lists, then watches with bookmarks and a timeout.
        reqs = list(fake.requests)
        ns_list = [r for r in reqs if r["path"] == "/api/v1/namespaces" and "watch=1" not in r["query"]
                   and r["status"] == 200]
        check("namespaces listed as PartialObjectMetadata", ns_list and
              "as=PartialObjectMetadataList" in ns_list[0]["accept"], ns_list[:1])
        ok, _ = wait_for(lambda: all(any(r["path"] == path and "watch=1" in r["query"] and r["status"] == 200 and
                                         "allowWatchBookmarks=true" in r["query"] and "timeoutSeconds=30" in r["query"]
                                         and "resourceVersion=" in r["query"] for r in fake.requests)
                                     for path in ("/api/v1/namespaces",
                                                  "/apis/opentelemetry.io/v1alpha1/instrumentations",
                                                  "/apis/opentelemetry.io/v1beta1/opentelemetrycollectors")), 5)
        check("each resource watched with bookmarks, a timeout and a resourceVersion", ok)
        m = wh.metrics()
        keys = ('otel_webhook_watch_synced{resource="instrumentations"}', 'otel_webhook_watch_objects{resource="namespaces"}',
                'otel_webhook_store_objects{kind="Instrumentation"}', "otel_webhook_ready")
        # Namespaces without *opentelemetry.io/ annotations are not kept.
        check("metrics: synced and counted", [m.get(k) for k in keys] == [1, 0, 1, 1], [m.get(k) for k in keys])
        # /version was refused with the old token too; it is retried on its own.
        ok, _ = wait_for(lambda: wh.metrics().get("otel_webhook_native_sidecars") == 1, 5)
        check("metrics: native sidecars from /version", ok)
        text = wh.metrics_text()
        metricslib.check_exposition(check, "synced", text, ROOT, BIN, live=True)
        last = {labels["resource"]: v for _, labels, v in
                metricslib.parse(text)[0]["otel_webhook_watch_last_event_timestamp_seconds"]["samples"]}
        check("metrics: the last change of each resource, as a Unix time since the start",
              sorted(last) == ["instrumentations", "namespaces", "opentelemetrycollectors"] and
              all(t_live_unix <= v <= time.time() for v in last.values()), (t_live_unix, last))
        with open(reqlog) as f:
            lines = [json.loads(l) for l in f]
        check("request log: JSON lines with method, path, query",
              len(lines) >= 6 and all({"method", "path", "query"} <= set(x) for x in lines), len(lines))

        st, r, patched, _ = wh.admit(pod("p1", {"instrumentation.opentelemetry.io/inject-java": "java-inst",
                                                 "sidecar.opentelemetry.io/inject": "true"}))
        check("first admission: java injected", "java" in injected_langs(r, patched), r)

        bg = Admitter(wh)
        bg.start()
        test_changes(wh, fake)
        test_disruptions(wh, fake)
        test_lookups(wh, fake)
        test_cr_rbac(wh, fake)
        bg.stop_ev.set()
        bg.join(15)
        check("admissions during changes: all answered with a patch", bg.n > 20 and not bg.bad,
              "%d admissions, bad: %r" % (bg.n, bg.bad[:5]))
        check("no 401 once the token was rotated",
              sum(1 for r in fake.requests if r["status"] == 401) == n401)

        # Native sidecars follow the server's version (auto).
        sc = collector("sc2")
        fake.apply("opentelemetrycollectors", sc)
        sc_pod = pod("p-native", {"sidecar.opentelemetry.io/inject": "true"})

        def native(p):
            return p is not None and any(c["name"] == "otc-container" and c.get("restartPolicy") == "Always"
                                         for c in p["spec"].get("initContainers", []))
        within_a_second("native sidecar on 1.30", wh, sc_pod, lambda r, p: native(p))
        wh.final_checks()
        print("  (kubeconfig: %.1f s)" % (time.monotonic() - t_start))
        test_cr_workers(tmp, certs, kc, fake)
        test_cr_shutdown(tmp, certs, kc, fake)
        print("  (collector admissions on workers: %.1f s)" % (time.monotonic() - t_start))

        # In-cluster, on a 1.28 server: plain sidecar container.
        fake.set_version(1, 28)
        sa = os.path.join(tmp, "sa")
        os.mkdir(sa)
        shutil.copy(os.path.join(certs, "ca.crt"), sa)
        write_atomic(os.path.join(sa, "token"), "token-1\n")
        ic = Webhook("in-cluster", tmp, certs, ["--in-cluster", "--service-account-dir", sa],
                     env={"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(fake.port)})
        hooks.append(ic)
        # Without the collector CRD: ready anyway, and the CRD is noticed once installed.
        fake.hide("opentelemetrycollectors")
        if ic.start() and ic.wait_ready():
            ok, _ = wait_for(lambda: ic.metrics().get("otel_webhook_native_sidecars") == 0, 5)
            check("in-cluster: 1.28 means no native sidecars", ok)
            st, r, patched, _ = ic.admit(sc_pod)
            check("in-cluster, no collector CRD: sidecar skipped with a warning", patched is None and
                  any("sidecar" in w for w in r.get("warnings", [])), r)
            check("in-cluster, no collector CRD: said in the log", "CRD not installed" in ic.stderr())
            fake.unhide("opentelemetrycollectors")

            def plain(r, p):
                return p is not None and not native(p) and any(c["name"] == "otc-container"
                                                               for c in p["spec"]["containers"])
            # Listed again after the backoff (0.2 s doubling): well within 3 s here.
            within_a_second("in-cluster: collector CRD installed later, plain sidecar container", ic, sc_pod, plain,
                            limit=3.0)
            # The kubelet rotates the bound token: the next request carries the new one.
            fake.set_token("token-2")
            write_atomic(os.path.join(sa, "token"), "token-2\n")
            fake.apply("instrumentations", instrumentation("after-rotation"))
            within_a_second("in-cluster: rotated token used", ic,
                            pod("p-rot", {"instrumentation.opentelemetry.io/inject-java": "after-rotation"}),
                            lambda r, p: "java" in injected_langs(r, p), limit=2.0)
            ic.final_checks()
        fake.set_version(1, 30)
        print("  (in-cluster: %.1f s)" % (time.monotonic() - t_start))

        # TLS: a CA that did not sign the server's certificate never connects;
        # insecure-skip-tls-verify does.
        other = os.path.join(tmp, "other-ca")
        subprocess.run([BIN, "certs", "generate", "--service", "x", "--namespace", "y", "--out", other, "--dev"],
                       capture_output=True, timeout=60)
        bad = Webhook("wrong-ca", tmp, certs, ["--kubeconfig", kubeconfig(
            os.path.join(tmp, "kc-wrong.yaml"), server, {"token": "token-2"},
            {"certificate-authority": os.path.join(other, "ca.crt")})])
        hooks.append(bad)
        if bad.start():
            ok, _ = wait_for(lambda: "certificate" in bad.stderr(), 10)
            check("wrong CA: refused with a certificate error", ok, bad.stderr()[-800:])
            check("wrong CA: not ready", bad.get("/readyz")[0] == 503)
            bad.final_checks()
        ins = Webhook("insecure", tmp, certs, ["--kubeconfig", kubeconfig(
            os.path.join(tmp, "kc-insecure.yaml"), server, {"token": "token-2"}, {"insecure-skip-tls-verify": True})])
        hooks.append(ins)
        if ins.start() and ins.wait_ready():
            ins.final_checks()
        # A client certificate and the CA, both inline (the *-data fields), no token.
        cc = Webhook("client-cert", tmp, certs, ["--kubeconfig", kubeconfig(
            os.path.join(tmp, "kc-cert.yaml"), server,
            {"client-certificate-data": b64file(CLIENT_CRT), "client-key-data": b64file(CLIENT_KEY)},
            {"certificate-authority-data": b64file(os.path.join(certs, "ca.crt"))})])
        hooks.append(cc)
        if cc.start() and cc.wait_ready():
            st, r, patched, _ = cc.admit(pod("p-cc", {"instrumentation.opentelemetry.io/inject-java": "java-inst"}))
            check("client certificate: admission uses the cluster's objects", "java" in injected_langs(r, patched), r)
            cc.final_checks()
        test_cli_errors(tmp, certs, server)
        test_faults(tmp, certs)
        print("  (faults: %.1f s)" % (time.monotonic() - t_start))
        print("  (total: %.1f s)" % (time.monotonic() - t_start))
    finally:
        for h in hooks:
            if h.proc is not None and h.proc.poll() is None:
                h.proc.kill()
                h.proc.wait(10)
        if fake:
            fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def rss_bench(binary):
    """RSS of the webhook holding 10,000 namespaces and 1,000 Instrumentations."""
    tmp = tempfile.mkdtemp(prefix="otel-live-rss-")
    procs, fake = [], None
    try:
        certs = os.path.join(tmp, "certs")
        subprocess.run([binary, "certs", "generate", "--service", "k", "--namespace", "d", "--out", certs, "--dev"],
                       capture_output=True, timeout=60, check=True)
        fake = fakeapi.FakeAPI(os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key"), token="t")
        fake.start()
        with open(os.path.join(tmp, "token"), "w") as f:
            f.write("t")
        kc = kubeconfig(os.path.join(tmp, "kc.yaml"), "https://127.0.0.1:%d" % fake.port, {"tokenFile": "token"},
                        {"certificate-authority": "certs/ca.crt"})

        def measure(label):
            port = free_port()
            p = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:%d" % port, "--tls-cert",
                                  os.path.join(certs, "tls.crt"), "--tls-key", os.path.join(certs, "tls.key"),
                                  "--kubeconfig", kc, "--threads", "2", "--log-level", "warn"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            procs.append(p)
            ctx = ssl.create_default_context(cafile=os.path.join(certs, "ca.crt"))

            def ready():
                try:
                    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
                    c.request("GET", "/readyz", headers={"Host": "localhost"})
                    return c.getresponse().status == 200
                except (OSError, http.client.HTTPException):
                    return False
            ok, dt = wait_for(ready, 120, interval=0.1)
            time.sleep(0.5)  # let the last coalesced publication land before reading /proc
            with open("/proc/%d/status" % p.pid) as f:
                rss = [int(l.split()[1]) for l in f if l.startswith("VmRSS:")][0] / 1024.0
            p.send_signal(signal.SIGTERM)
            p.wait(30)
            print("live store, %s: ready in %.1f s, RSS %.1f MiB" % (label, dt, rss))
            return rss

        empty = measure("empty cluster")
        for i in range(10000):
            fake.apply("namespaces", {"metadata": {"name": "ns-%05d" % i, "labels": {
                "kubernetes.io/metadata.name": "ns-%05d" % i, "team": "t%d" % (i % 50)}, "annotations": {
                "instrumentation.opentelemetry.io/inject-java": "java", "owner": "team-%d" % (i % 50)}}},
                record=False)
        for i in range(1000):
            fake.apply("instrumentations", instrumentation("java", ns="ns-%05d" % (i * 10)), record=False)
        full = measure("10,000 namespaces + 1,000 Instrumentations")
        print("live store: %.1f MiB for 10,000 namespaces + 1,000 Instrumentations (goal: under 50 MiB)" %
              (full - empty))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        if fake:
            fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--rss":
        rss_bench(os.path.abspath(sys.argv[2]))
        sys.exit(0)
    BIN = os.path.abspath(sys.argv[1])
    RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
    check.run(main, RESULTS)
