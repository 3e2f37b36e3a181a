#!/usr/bin/python3
"""What one admission may cost, from the outside (docs/serve.md, "Bounds"): pods past
a bound of the engine are answered at once, allowed, without a patch, with a
warning and a metric naming the bound; the largest body the server accepts,
shaped to stay within every bound, is answered within the admission budget
and far below the container's memory limit; `inject` and `otel-reconcile
render` refuse the same inputs with a clear message and exit 1.

The attacks are the ones that took the webhook down before the bounds: a
container-names annotation of 80,000 names (13 s of one event loop), a pod
with 100,000 env vars (482 MiB, an 18 MB answer), a collector with 20,000
receivers (quadratic render). And those that took it down before the
memory budget of a request's JSON (--max-tree-bytes), whatever the pod
asks for: 3 MiB of `envFrom: [{},{},...]` (787 MiB of json-c tree, read
before any opt-in check), two 700 KB of it at once, four valid 1.5 MB pods
of 115,000 env entries at once; on the custom resources' routes a 3 MiB
collector (787 MiB to validate, 2.3 GB to default), and a ConversionReview
of as much.

usage: bounds_test.py OTEL_WEBHOOK OTEL_WEBHOOK_RELEASE OTEL_RECONCILE [RESULTS]
(the release binary is the one whose memory is measured: the sanitizers'
shadow memory is not what a deployment pays)"""
import base64
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time

import jsonpatch
import yaml

BIN, RELEASE, RECONCILE = sys.argv[1], sys.argv[2], sys.argv[3]
RESULTS = sys.argv[4] if len(sys.argv) > 4 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import LSAN_SUPP, SANITIZER_MARKERS, Checks, log_records, scratch_dir  # noqa: E402

check = Checks("bounds")
MAX_BODY = 6 << 20
MEMORY_LIMIT = 256 << 20  # deploy/base/webhook/deployment.yaml


def pod(containers, annotations):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "app", "namespace": "default", "annotations": annotations},
            "spec": {"containers": containers}}


def review(p, uid="u-1"):
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                                   "resource": {"group": "", "version": "v1", "resource": "pods"},
                                   "operation": "CREATE", "namespace": "default", "object": p}}).encode()


JAVA = {"instrumentation.opentelemetry.io/inject-java": "true"}
JAVA_SIDECAR = dict(JAVA, **{"sidecar.opentelemetry.io/inject": "true"})
NAMES = pod([{"name": "app", "image": "app:1"}],
            dict(JAVA, **{"instrumentation.opentelemetry.io/container-names": ",".join("c%d" % i for i in range(80000))}))
# Past the engine's env bound and within the memory budget of the JSON
# (100,000 entries, the attack this bound was made for, are now past that
# budget first: see below).
ENV = pod([{"name": "app", "image": "app:1", "env": [{"name": "E%d" % i, "value": "v" * 20} for i in range(20000)]}],
          JAVA_SIDECAR)
MAX_TREE = 32 << 20  # --max-tree-bytes' default
TREE_WARNING = ("otel-webhook: the AdmissionReview would take more than the %d bytes of memory otel-webhook gives "
                "one request (bound tree_bytes, --max-tree-bytes); nothing injected" % MAX_TREE)


def compact(o):
    return json.dumps(o, separators=(",", ":")).encode()


def flood(size, uid="u-flood"):
    """A pod that asks for nothing, `size` bytes of review: its first
    container's envFrom is empty objects (about 800 bytes of json-c tree
    each: 3 MiB of them were 787 MiB)."""
    p = pod([{"name": "app", "image": "app:1", "envFrom": []}], {})
    r = json.loads(review(p, uid))
    n = (size - len(compact(r))) // 3
    r["request"]["object"]["spec"]["containers"][0]["envFrom"] = [{}] * n
    return compact(r)


def env_pod(n=115000, uid="u-env"):
    """A valid pod the API server would store (it takes a name twice, with a
    warning): one container, n env entries of one-letter names (1.5 MB at
    115,000)."""
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    p = pod([{"name": "app", "image": "app:1", "env": [{"name": letters[i % 26]} for i in range(n)]}], {})
    return compact(json.loads(review(p, uid)))


def widest():
    """The largest pod within every bound that fits the body limit: the most
    env entries the engine takes (4 containers of 4,096), values as long as
    the body allows."""
    def make(vlen):
        cs = [{"name": "c%d" % k, "image": "app:1",
               "env": [{"name": "E%d" % i, "value": "x" * vlen} for i in range(4096)]} for k in range(4)]
        return pod(cs, JAVA_SIDECAR)
    vlen = 300
    while len(review(make(vlen + 10))) < MAX_BODY - 4096:
        vlen += 10
    return make(vlen)


class Server:
    def __init__(self, binary, tmp, name, args=()):
        self.tmp, self.name = tmp, name
        self.port = None
        self.ctx = ssl.create_default_context(cafile=os.path.join(tmp, "ca.crt"))
        env = dict(os.environ)
        supp = os.path.join(tmp, "lsan.supp")
        with open(supp, "w") as f:
            f.write(LSAN_SUPP)
        env["LSAN_OPTIONS"] = "suppressions=%s:print_suppressions=0" % supp
        self.errpath = os.path.join(tmp, name + ".stderr")
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        with open(self.errpath, "wb") as err:
            self.proc = subprocess.Popen(
                [binary, "serve", "--listen", "127.0.0.1:%d" % self.port, "--tls-cert", os.path.join(tmp, "tls.crt"),
                 "--tls-key", os.path.join(tmp, "tls.key"), "--resources", "examples/resources", "--threads", "1"] + list(args),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and self.proc.poll() is None:
            try:
                if self.get("/readyz")[0] == 200:
                    return
            except OSError:
                pass
            time.sleep(0.05)  # poll interval, not synchronisation
        raise RuntimeError("%s did not become ready: %s" % (name, self.stderr()[-2000:]))

    def request(self, method, path, body=None, timeout=60):
        c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=timeout)
        try:
            c.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
            r = c.getresponse()
            return r.status, r.read()
        finally:
            c.close()

    def get(self, path):
        return self.request("GET", path, timeout=5)

    def admit(self, body):
        t0 = time.monotonic()
        status, data = self.request("POST", "/mutate-v1-pod", body)
        return status, json.loads(data), time.monotonic() - t0, len(data)

    def metric(self, name):
        for line in self.get("/metrics")[1].decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[-1])
        return None

    def peak_rss(self):
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return None

    def stderr(self):
        with open(self.errpath, errors="replace") as f:
            return f.read()

    def stop(self):
        self.proc.terminate()
        try:
            rc = self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        err = self.stderr()
        check("%s: exits 0" % self.name, rc == 0, rc)
        check("%s: no sanitizer report" % self.name, not any(m in err for m in SANITIZER_MARKERS), err[-3000:])


def refused(name, resp, bound):
    status, body, seconds, size = resp
    r = body.get("response", {})
    warnings = r.get("warnings", [])
    check("%s: 200" % name, status == 200, status)
    check("%s: allowed" % name, r.get("allowed") is True, r)
    check("%s: no patch" % name, "patch" not in r, sorted(r))
    check("%s: the warning names the bound" % name,
          len(warnings) == 1 and ("(bound %s)" % bound) in warnings[0], warnings)
    check("%s: a small answer" % name, size < 2048, size)
    return seconds


def main():
    tmp = scratch_dir("otel-bounds-test-")
    subprocess.run([RELEASE, "certs", "generate", "--service", "otel-webhook", "--namespace", "t", "--out", tmp,
                    "--dev"], check=True, capture_output=True, timeout=60)

    # --- the webhook, sanitized: refusals, metrics, the widest pod ----------
    srv = Server(BIN, tmp, "sanitized")
    try:
        s = refused("80,000 container names", srv.admit(review(NAMES)), "container_names")
        check("80,000 container names: answered within a second", s < 1.0, s)
        s = refused("20,000 env entries", srv.admit(review(ENV)), "env")
        check("20,000 env entries: answered within the 5 s admission timeout", s < 5.0, s)
        for bound, n in (("container_names", 1), ("env", 1), ("containers", 0)):
            check("metric limits_exceeded %s" % bound,
                  srv.metric('otel_webhook_limits_exceeded_total{limit="%s"}' % bound) == n,
                  srv.metric('otel_webhook_limits_exceeded_total{limit="%s"}' % bound))
        check("metric skips limit", srv.metric('otel_webhook_skips_total{reason="limit"}') == 2)
        check("metric failed_open", srv.metric('otel_webhook_requests_total{result="failed_open"}') == 2)
        check("a bound is not an internal error", srv.metric('otel_webhook_errors_total{kind="internal"}') == 0)

        wide = widest()
        body = review(wide, "u-wide")
        check("the widest pod fills the body limit", MAX_BODY - 65536 < len(body) <= MAX_BODY, len(body))
        status, out, seconds, size = srv.admit(body)
        r = out.get("response", {})
        check("widest pod: 200, allowed, patched", status == 200 and r.get("allowed") is True and "patch" in r,
              (status, sorted(r)))
        print("  (widest pod: %d bytes in, answered in %.2f s by the sanitized build, %d bytes out)"
              % (len(body), seconds, size))
        check("widest pod: answered within the 5 s admission timeout (sanitized build)", seconds < 5.0, seconds)
        if "patch" in r:
            patched = jsonpatch.apply_patch(wide, json.loads(base64.b64decode(r["patch"])))
            names = [c["name"] for c in patched["spec"]["containers"]]
            check("widest pod: the sidecar is added", names[-1] == "otc-container", names[-3:])
            env = {e["name"] for e in patched["spec"]["containers"][0]["env"]}
            check("widest pod: the first container is instrumented", "JAVA_TOOL_OPTIONS" in env)
        check("still ready", srv.get("/readyz")[0] == 200)
    finally:
        srv.stop()

    # --- the release build: memory of the widest pod -------------------------
    rel = Server(RELEASE, tmp, "release")
    try:
        for i in range(3):
            status, out, seconds, size = rel.admit(review(wide, "u-%d" % i))
            check("release: widest pod %d answered" % i, status == 200 and "patch" in out.get("response", {}))
        print("  (release: widest pod answered in %.2f s)" % seconds)
        for name, p in (("names", NAMES), ("env", ENV)):
            status, out, seconds, size = rel.admit(review(p))
            check("release: %s refused" % name, status == 200 and "patch" not in out.get("response", {}))
        peak = rel.peak_rss()
        print("  (release: peak RSS %.1f MiB after the widest pods and the refusals; limit %d MiB)"
              % (peak / 1048576, MEMORY_LIMIT >> 20))
        check("release: peak RSS well under the memory limit (half of it)", peak < MEMORY_LIMIT // 2, peak)
    finally:
        rel.stop()

    # --- the memory budget of a request's JSON: pods ------------------------
    budget_pods(tmp)
    budget_custom_resources(tmp)

    # --- the same bounds offline -------------------------------------------
    path = os.path.join(tmp, "names.json")
    with open(path, "w") as f:
        json.dump(NAMES, f)
    p = subprocess.run([BIN, "inject", "-f", path, "--resources", "examples/resources"], capture_output=True,
                       text=True, timeout=60)
    check("inject: past a bound exits 1", p.returncode == 1, p.returncode)
    check("inject: past a bound says which", "%s:1: warning: names in the pod annotation "
          "instrumentation.opentelemetry.io/container-names: 80000, more than the 256 otel-webhook handles "
          "(bound container_names); nothing injected\n" % path == p.stderr, p.stderr[-500:])

    rx = {"zipkin/%d" % i: None for i in range(20000)}
    col = {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
           "metadata": {"name": "big", "namespace": "ns"},
           "spec": {"config": {"receivers": rx, "exporters": {"debug": None},
                               "service": {"pipelines": {"t": {"receivers": list(rx), "exporters": ["debug"]}}}}}}
    path = os.path.join(tmp, "big.yaml")
    with open(path, "w") as f:
        yaml.safe_dump(col, f)
    t0 = time.monotonic()
    p = subprocess.run([RECONCILE, "render", "-f", path], capture_output=True, text=True, timeout=120)
    check("render: 20,000 receivers refused at once", time.monotonic() - t0 < 10, time.monotonic() - t0)
    check("render: past a bound exits 1", p.returncode == 1, p.returncode)
    check("render: past a bound says which", p.stderr == "%s:1: big: spec.config: 20000 receivers in pipelines, "
          "more than the 1024 otel-webhook handles\n" % path, p.stderr[-500:])
    # The same collector as a sidecar: skipped with the reason, the pod still instrumented.
    res = os.path.join(tmp, "res")
    os.makedirs(res)
    side = json.loads(json.dumps(col))
    side["metadata"] = {"name": "big", "namespace": "default"}
    side["spec"]["mode"] = "sidecar"
    with open(os.path.join(res, "big.yaml"), "w") as f:
        yaml.safe_dump(side, f)
    with open("examples/resources/instrumentation.yaml") as f, open(os.path.join(res, "inst.yaml"), "w") as g:
        g.write(f.read())
    path = os.path.join(tmp, "sidecar-pod.json")
    with open(path, "w") as f:
        json.dump(pod([{"name": "app", "image": "app:1"}], dict(JAVA, **{"sidecar.opentelemetry.io/inject": "big"})), f)
    t0 = time.monotonic()
    p = subprocess.run([BIN, "inject", "-f", path, "--resources", res, "-o", "json"], capture_output=True, text=True,
                       timeout=120)
    check("inject: a collector past a bound is refused at once", time.monotonic() - t0 < 10, time.monotonic() - t0)
    check("inject: its sidecar is skipped with the reason", p.returncode == 0 and
          "%s:1: warning: sidecar: OpenTelemetryCollector default/big: spec.config: 20000 receivers in pipelines, "
          "more than the 1024 otel-webhook handles; sidecar not injected\n" % path in p.stderr, p.stderr[-600:])
    if p.returncode == 0:
        out = json.loads(p.stdout)
        check("inject: the pod is still instrumented",
              [c["name"] for c in out["spec"]["initContainers"]] == ["opentelemetry-auto-instrumentation-java"])

    rx = {"zipkin/%d" % i: {"endpoint": "0.0.0.0:%d" % (10000 + i)} for i in range(1024)}
    col["spec"]["config"]["receivers"] = rx
    col["spec"]["config"]["service"]["pipelines"]["t"]["receivers"] = list(rx)
    col["spec"]["ports"] = [{"name": "p%d" % i, "port": 20000 + i} for i in range(1024)]
    with open(path, "w") as f:
        yaml.safe_dump(col, f)
    t0 = time.monotonic()
    p = subprocess.run([RECONCILE, "render", "-f", path], capture_output=True, text=True, timeout=120)
    check("render: at the bounds renders", p.returncode == 0 and "kind: NetworkPolicy" in p.stdout, p.stderr[-500:])
    check("render: at the bounds within 20 s (sanitized build)", time.monotonic() - t0 < 20, time.monotonic() - t0)


def at_once(fn, bodies):
    """fn(body) for every body, each from its own thread, all started
    together: their answers in order."""
    out = [None] * len(bodies)
    start = threading.Barrier(len(bodies))

    def run(i):
        start.wait()
        out[i] = fn(bodies[i])
    ts = [threading.Thread(target=run, args=(i,)) for i in range(len(bodies))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return out


def tree_refused(name, resp, uid):
    status, body, seconds, size = resp
    r = body.get("response", {})
    check("%s: 200, allowed, the uid echoed" % name, status == 200 and r.get("allowed") is True and r.get("uid") == uid,
          (status, r))
    check("%s: no patch" % name, "patch" not in r, sorted(r))
    check("%s: the warning says why" % name, r.get("warnings") == [TREE_WARNING], r.get("warnings"))
    return seconds


def budget_pods(tmp):
    """Pods whose JSON alone would cost more than the budget: answered at
    once, allowed, unpatched, with the warning, the metrics and a log line
    (fail open), the tree never built; the release build's peak memory
    stays a fraction of the replica's limit, where these shapes took
    787 MiB, 366 MiB (two at once) and 242 MiB (four at once) before."""
    big = flood(3 << 20)
    check("the flood is 3 MiB, the API server's limit", len(big) <= 3 << 20 and len(big) > (3 << 20) - 64, len(big))
    srv = Server(BIN, tmp, "sanitized-budget", ["--log-format", "json"])
    try:
        s = tree_refused("3 MiB of envFrom {}", srv.admit(big), "u-flood")
        check("3 MiB of envFrom {}: answered within a second (sanitized)", s < 1.0, s)
        tree_refused("115,000 env entries", srv.admit(env_pod()), "u-env")
        # Just within: the same shapes, smaller, are read and answered as usual.
        status, out, _, _ = srv.admit(flood(32 << 10, "u-small"))
        r = out.get("response", {})
        check("a 32 KB flood within the budget: allowed, no warning", status == 200 and r.get("allowed") is True and
              "warnings" not in r and r.get("uid") == "u-small", r)
        # A pod that asks for something: left alone all the same.
        p = json.loads(flood(3 << 20, "u-java"))
        p["request"]["object"]["metadata"]["annotations"] = JAVA
        tree_refused("3 MiB of envFrom {} asking for java", srv.admit(compact(p)), "u-java")
        # A flood json-c would have to read (a float: outside the one-pass
        # parser's subset) is refused from its bound, before json-c starts.
        p = json.loads(flood(3 << 20, "u-float"))
        p["request"]["object"]["spec"]["containers"][0]["envFrom"].append({"x": 1.5})
        tree_refused("3 MiB of envFrom {} with a float", srv.admit(compact(p)), "u-float")
        # Not a pod CREATE: answered as any other, whatever its size.
        p = json.loads(flood(3 << 20, "u-update"))
        p["request"]["operation"] = "UPDATE"
        status, out, _, _ = srv.admit(compact(p))
        r = out.get("response", {})
        check("3 MiB UPDATE: allowed, no warning", status == 200 and r == {"uid": "u-update", "allowed": True}, r)
        # No uid to answer with: the codec's 400, as for any body without one.
        p = json.loads(flood(3 << 20))
        del p["request"]["uid"]
        status, data = srv.request("POST", "/mutate-v1-pod", compact(p))
        check("3 MiB without a uid: 400 request.uid is missing",
              status == 400 and json.loads(data) == {"error": "request.uid is missing"}, (status, data[:200]))
        check("metric limits_exceeded tree_bytes",
              srv.metric('otel_webhook_limits_exceeded_total{limit="tree_bytes"}') == 4,
              srv.metric('otel_webhook_limits_exceeded_total{limit="tree_bytes"}'))
        check("metric skips limit", srv.metric('otel_webhook_skips_total{reason="limit"}') == 4,
              srv.metric('otel_webhook_skips_total{reason="limit"}'))
        check("metric failed_open", srv.metric('otel_webhook_requests_total{result="failed_open"}') == 4)
        check("the budget is not an internal error", srv.metric('otel_webhook_errors_total{kind="internal"}') == 0)
        recs = log_records(srv.stderr())
        check("the budget is logged", any(
            o.get("msg") == "failed open" and o.get("level") == "warn" and o.get("uid") == "u-flood" and
            o.get("namespace") == "default" and o.get("pod") == "app" and
            o.get("warning") == TREE_WARNING[len("otel-webhook: "):] for o in recs),
            [o for o in recs if o.get("uid") == "u-flood"])
        check("still ready", srv.get("/readyz")[0] == 200)
    finally:
        srv.stop()

    # The release build, as deployed (--threads=2): the peak memory of each
    # attack, on a server of its own.
    def release(name, run, limit, before):
        rel = Server(RELEASE, tmp, "release-" + name.replace(" ", "-"), ["--threads", "2"])
        try:
            base = rel.peak_rss()
            run(rel)
            peak = rel.peak_rss()
            print("  (release: %s: peak RSS %.1f MiB, %.1f at the start)" % (name, peak / 1048576, base / 1048576))
            check("release: %s: peak RSS under %d MiB (%s before the budget)" % (name, limit >> 20, before),
                  peak < limit, peak)
            check("release: %s: still ready" % name, rel.get("/readyz")[0] == 200)
        finally:
            rel.stop()

    release("3 MiB envFrom flood", lambda rel: tree_refused("release: 3 MiB of envFrom {}", rel.admit(big), "u-flood"),
            64 << 20, "787 MiB")

    def two(rel):
        bodies = [flood(700 << 10, "u-700-%d" % i) for i in range(2)]
        for i, resp in enumerate(at_once(rel.admit, bodies)):
            tree_refused("release: 700 KB flood %d of two at once" % i, resp, "u-700-%d" % i)
    release("two 700 KB floods at once", two, 96 << 20, "366 MiB")

    def four(rel):
        bodies = [env_pod(uid="u-env-%d" % i) for i in range(4)]
        check("the 115,000-env pod is 1.5 MB", 1400000 < len(bodies[0]) < 1600000, len(bodies[0]))
        for i, resp in enumerate(at_once(rel.admit, bodies)):
            tree_refused("release: 115,000-env pod %d of four at once" % i, resp, "u-env-%d" % i)
    release("four 115,000-env pods at once", four, 96 << 20, "242 MiB")


CR_TOO_LARGE = ("the AdmissionReview would take more than the %d bytes of memory otel-webhook gives one request "
                "(--max-tree-bytes); refused unread" % MAX_TREE)
COLLECTOR_PATH = "opentelemetry-io-v1beta1-opentelemetrycollector"
INSTRUMENTATION_PATH = "opentelemetry-io-v1alpha1-instrumentation"


def cr_review(obj, op="CREATE", uid="u-cr", old=None):
    group, version = obj["apiVersion"].split("/")
    req = {"uid": uid, "kind": {"group": group, "version": version, "kind": obj["kind"]},
           "operation": op, "namespace": "ns", "name": obj["metadata"]["name"],
           "userInfo": {"username": "alice"}}
    if op == "DELETE":
        req["oldObject"] = obj
    else:
        req["object"] = obj
    if old is not None:
        req["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def collector_flood(size, uid="u-col", op="CREATE"):
    """A collector whose config (which keeps unknown fields) is `size` bytes
    of review, nearly all a list of empty objects under a receiver."""
    col = {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
           "metadata": {"name": "big", "namespace": "ns"},
           "spec": {"config": {"receivers": {"otlp": {"protocols": {"grpc": {}}, "x": []}},
                               "exporters": {"debug": {}},
                               "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}}}}}}
    r = cr_review(col, op, uid)
    n = (size - len(compact(r))) // 3
    col["spec"]["config"]["receivers"]["otlp"]["x"] = [{}] * n
    return compact(r)


def cr_call(srv, route, body):
    status, data = srv.request("POST", "/%s-%s" % (route.split(":")[0], route.split(":")[1]), body)
    return status, json.loads(data)


def cr_too_large(name, resp, uid):
    status, out = resp
    r = out.get("response", {})
    check("%s: refused, 413, the reason" % name, status == 200 and r == {
        "uid": uid, "allowed": False,
        "status": {"code": 413, "reason": "RequestEntityTooLarge", "message": CR_TOO_LARGE}}, (status, r))


def conversion_flood(size, uid="u-conv"):
    obj = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "OpenTelemetryCollector",
           "metadata": {"name": "big", "namespace": "ns"}, "spec": {"x": []}}
    r = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
         "request": {"uid": uid, "desiredAPIVersion": "opentelemetry.io/v1beta1", "objects": [obj]}}
    n = (size - len(compact(r))) // 3
    obj["spec"]["x"] = [{}] * n
    return compact(r)


def budget_custom_resources(tmp):
    """A review of a custom resource whose JSON alone would cost more than
    the budget is refused unread with 413 (these webhooks fail closed; a
    killed replica used to block every custom-resource write); a
    ConversionReview of as much fails whole. 3 MiB took 787 MiB to
    validate and 2.3 GB to default before."""
    validate = collector_flood(3 << 20)
    mutate = collector_flood(3 << 20, "u-col-m")
    check("the collector is 3 MiB", (3 << 20) - 64 < len(validate) <= 3 << 20, len(validate))
    srv = Server(BIN, tmp, "sanitized-cr-budget", ["--log-format", "json"])
    try:
        cr_too_large("3 MiB collector, validate", cr_call(srv, "validate:" + COLLECTOR_PATH, validate), "u-col")
        cr_too_large("3 MiB collector, mutate", cr_call(srv, "mutate:" + COLLECTOR_PATH, mutate), "u-col-m")
        status, out = cr_call(srv, "validate:" + COLLECTOR_PATH, collector_flood(3 << 20, "u-col-u", "UPDATE"))
        cr_too_large("3 MiB collector, validate an update", (status, out), "u-col-u")
        # What never reads the object is answered as always.
        status, out = cr_call(srv, "validate:" + COLLECTOR_PATH, collector_flood(3 << 20, "u-col-d", "DELETE"))
        check("3 MiB collector, delete: allowed as always", status == 200 and out.get("response") == {
            "uid": "u-col-d", "allowed": True, "status": {"code": 200}}, (status, out.get("response")))
        # An Instrumentation too large to check stays deletable.
        inst = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation",
                "metadata": {"name": "big", "namespace": "ns"}, "spec": {"env": []}}
        r = cr_review(inst, "DELETE", "u-inst-d")
        inst["spec"]["env"] = [{}] * (((3 << 20) - len(compact(r))) // 3)
        status, out = cr_call(srv, "validate:" + INSTRUMENTATION_PATH, compact(r))
        check("3 MiB Instrumentation, delete: allowed with a warning", status == 200 and out.get("response") == {
            "uid": "u-inst-d", "allowed": True, "status": {"code": 200},
            "warnings": ["the AdmissionReview would take more than the %d bytes of memory otel-webhook gives one "
                         "request (--max-tree-bytes); its deletion is allowed unchecked" % MAX_TREE]},
              (status, out.get("response")))
        r = cr_review(inst, "CREATE", "u-inst-c")
        status, out = cr_call(srv, "validate:" + INSTRUMENTATION_PATH, compact(r))
        cr_too_large("3 MiB Instrumentation, create", (status, out), "u-inst-c")
        status, out = cr_call(srv, "mutate:" + INSTRUMENTATION_PATH, compact(r))
        cr_too_large("3 MiB Instrumentation, default", (status, out), "u-inst-c")
        recs = log_records(srv.stderr())
        check("the refusal is logged", any(o.get("uid") == "u-col" and o.get("message") == CR_TOO_LARGE and
                                           o.get("msg") == "rejected" and o.get("rule") == "tree_bytes" and
                                           o.get("name") == "big" and o.get("namespace") == "ns" for o in recs),
              [o for o in recs if o.get("uid") == "u-col"])
        status, data = srv.request("POST", "/convert", conversion_flood(3 << 20))
        out = json.loads(data)
        check("3 MiB ConversionReview: fails whole", status == 200 and out == {
            "kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
            "response": {"uid": "u-conv", "convertedObjects": None,
                         "result": {"metadata": {}, "status": "Failure",
                                    "message": "the ConversionReview would take more than the %d bytes of memory "
                                               "otel-webhook gives one request (--max-tree-bytes); nothing converted"
                                               % MAX_TREE}}}, (status, str(out)[:600]))
        check("metric conversion failures", srv.metric(
            'otel_webhook_conversions_total{direction="to_v1beta1",result="failure"}') == 1,
            srv.metric('otel_webhook_conversions_total{direction="to_v1beta1",result="failure"}'))
        # Within the budget, the same shapes are read and answered as usual.
        status, out = cr_call(srv, "validate:" + COLLECTOR_PATH, collector_flood(32 << 10, "u-col-small"))
        check("a 32 KB collector: allowed", status == 200 and out.get("response", {}).get("allowed") is True,
              (status, out.get("response")))
        check("still ready", srv.get("/readyz")[0] == 200)
    finally:
        srv.stop()

    for name, route, body in (("validate", "validate:" + COLLECTOR_PATH, validate),
                              ("mutate", "mutate:" + COLLECTOR_PATH, mutate)):
        rel = Server(RELEASE, tmp, "release-cr-" + name, ["--threads", "2"])
        try:
            status, out = cr_call(rel, route, body)
            check("release: 3 MiB collector %s: 413" % name,
                  out.get("response", {}).get("status", {}).get("code") == 413, out.get("response"))
            peak = rel.peak_rss()
            print("  (release: 3 MiB collector %s: peak RSS %.1f MiB)" % (name, peak / 1048576))
            check("release: 3 MiB collector %s: peak RSS under 64 MiB (%s before the budget)"
                  % (name, "787 MiB" if name == "validate" else "2.3 GB"), peak < 64 << 20, peak)
        finally:
            rel.stop()


check.run(main, RESULTS)
