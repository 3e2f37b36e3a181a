#!/usr/bin/python3
"""`otel-webhook serve`'s POST /convert from the outside, over real TLS on loopback.

Usage: tests/blackbox/convert_test.py BINARY [RESULTS_FILE]   (from the repository root)

The OpenTelemetryCollector conversion webhook (cr-admission.md 6): exact
ConversionReview answers in both review versions and both directions,
upstream's v1alpha1 e2e collectors (tests/data/convert) and the
conversion-webhook-invalid-config fixture over HTTP, a batch with one failing
object failing whole, every 400 with its exact body, 405 and 413, a uid with a
NUL, the pod path still served, the conversions metrics against docs/metrics.md's
tables and the log lines. The server's stderr must be free of sanitizer
reports and it must exit 0 on SIGTERM."""
import json
import os
import subprocess
import sys
import tempfile
import shutil
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, cpu_seconds, log_records, yaml_alias_bomb  # noqa: E402
import metricslib  # noqa: E402
from serverlib import Server  # noqa: E402

import yaml  # noqa: E402

BIN = os.path.abspath(sys.argv[1])
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
DATA = os.path.join(ROOT, "tests", "data", "convert")
A, B = "opentelemetry.io/v1alpha1", "opentelemetry.io/v1beta1"
V1, V1BETA1 = "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"
check = Checks("convert")


def dumps(o):
    return json.dumps(o, separators=(",", ":"), ensure_ascii=False)


def review(api, desired, objects, uid="uid-1"):
    return {"kind": "ConversionReview", "apiVersion": api,
            "request": {"uid": uid, "desiredAPIVersion": desired, "objects": objects}}


def answer(api, uid, objects=None, failure=None):
    """The exact answer: the reference's field order."""
    r = {"uid": uid, "convertedObjects": objects,
         "result": {"metadata": {}, "status": "Failure" if failure else "Success"}}
    if failure:
        r["result"]["message"] = failure
    return {"kind": "ConversionReview", "apiVersion": api, "response": r}


class Counts:
    def __init__(self):
        self.reviews = {}   # (direction, result) -> n
        self.objects = {}   # direction -> n
        self.bad_request = 0
        self.method = 0

    def add(self, direction, ok, n=0):
        k = (direction, "success" if ok else "failure")
        self.reviews[k] = self.reviews.get(k, 0) + 1
        if ok:
            self.objects[direction] = self.objects.get(direction, 0) + n


COUNTS = Counts()


def convert(srv, name, body, want, direction=None, nobjects=0):
    """POSTs body (bytes or an object), expects 200 and exactly want."""
    raw = body if isinstance(body, bytes) else dumps(body).encode()
    r = srv.call("POST", "/convert", raw)
    exp = dumps(want).encode()
    ok = check(name + ": 200", r.status == 200, repr(r))
    check(name + ": exact answer", r.body == exp, "\n got: %r\nwant: %r" % (r.body[:3000], exp[:3000]))
    check(name + ": content type", r.headers.get("content-type") == "application/json", r.headers)
    if ok and direction:
        COUNTS.add(direction, want["response"]["result"]["status"] == "Success", nobjects)
    return r


def bad(srv, name, body, message):
    r = srv.call("POST", "/convert", body)
    exp = dumps({"error": message}).encode() + b"\n"
    if r.status == 400:
        COUNTS.bad_request += 1
    check(name + ": 400", r.status == 400 and r.reason == "Bad Request", repr(r))
    check(name + ": body", r.body == exp, "%r != %r" % (r.body, exp))
    check(name + ": content type", r.headers.get("content-type") == "application/json", r.headers)
    srv.healthy(name)


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def yaml_docs(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def test_answers(srv):
    # v1beta1 -> v1alpha1, a v1beta1 review (what the reference's CRD makes
    # the API server send): kind and apiVersion echoed, the v1beta1-only
    # fields in the annotation.
    beta = {"apiVersion": B, "kind": "OpenTelemetryCollector",
            "metadata": {"name": "c", "namespace": "obs", "uid": "u-c", "resourceVersion": "7"},
            "spec": {"mode": "deployment", "serviceName": "s", "networkPolicy": {"enabled": True},
                     "daemonSetUpdateStrategy": {"type": "OnDelete"},
                     "observability": {"metrics": {"disablePrometheusAnnotations": True}},
                     "config": {"receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "0.0.0.0:4317"}}}},
                                "exporters": {"debug": {}},
                                "service": {"pipelines": {"traces": {"receivers": ["otlp"],
                                                                     "exporters": ["debug"]}}}}},
            "status": {"version": "0.158.0", "conditions": [{"type": "Ready", "status": "True"}]}}
    alpha = {"apiVersion": A, "kind": "OpenTelemetryCollector",
             "metadata": {"name": "c", "namespace": "obs", "uid": "u-c", "resourceVersion": "7", "annotations": {
                 "otel-webhook/v1beta1-fields": dumps({"spec": {"networkPolicy": {"enabled": True}},
                                                       "status": {"conditions": [{"status": "True", "type": "Ready"}]}})}},
             "spec": {"mode": "deployment", "serviceName": "s", "updateStrategy": {"type": "OnDelete"},
                      "observability": {"metrics": {"DisablePrometheusAnnotations": True}},
                      "config": "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: 0.0.0.0:4317\n"
                                "exporters:\n  debug: {}\nservice:\n  pipelines:\n    traces:\n      exporters:\n"
                                "        - debug\n      receivers:\n        - otlp\n"},
             "status": {"version": "0.158.0"}}
    convert(srv, "v1beta1 review, to v1alpha1", review(V1BETA1, A, [beta], "uid-a"),
            answer(V1BETA1, "uid-a", [alpha]), "to_v1alpha1", 1)
    # ... and back, a v1 review: the same object (fields from the
    # annotation come last).
    back = json.loads(dumps(beta))
    back["spec"].pop("networkPolicy")
    back["spec"]["networkPolicy"] = {"enabled": True}
    back["status"] = {"version": "0.158.0", "conditions": [{"status": "True", "type": "Ready"}]}
    back["spec"]["config"]["service"]["pipelines"]["traces"] = {"exporters": ["debug"], "receivers": ["otlp"]}
    convert(srv, "v1 review, to v1beta1", review(V1, B, [alpha], "uid-b"), answer(V1, "uid-b", [back]),
            "to_v1beta1", 1)

    # Upstream's v1alpha1 e2e collectors, all of them in one review, and back.
    alphas, betas, backs = [], [], []
    for f in sorted(os.listdir(DATA)):
        if f.startswith("upstream-") and f.endswith(".yaml") and not f.endswith(".assert.yaml"):
            stem = os.path.join(DATA, f[:-5])
            alphas += yaml_docs(stem + ".yaml")
            betas += jsonl(stem + ".v1beta1.jsonl")
            backs += jsonl(stem + ".back.jsonl")
    check("upstream fixtures found", len(alphas) == 6 and len(betas) == 6 and len(backs) == 6, len(alphas))
    convert(srv, "upstream fixtures to v1beta1", review(V1, B, alphas, "uid-up"), answer(V1, "uid-up", betas),
            "to_v1beta1", len(alphas))
    convert(srv, "upstream fixtures back to v1alpha1", review(V1, A, betas, "uid-up2"), answer(V1, "uid-up2", backs),
            "to_v1alpha1", len(betas))

    # tests/e2e/conversion-webhook-invalid-config: config "null" becomes the
    # empty config; the defaulting webhook adds the telemetry reader (2.3.1);
    # read back as v1alpha1, the config is the fixture's assertion.
    created = yaml_docs(os.path.join(DATA, "upstream-conversion-webhook-invalid-config.yaml"))[0]
    stored = {"apiVersion": B, "kind": "OpenTelemetryCollector", "metadata": {"name": "invalid-config-collector"},
              "spec": {"mode": "deployment",
                       "config": {"receivers": {}, "exporters": {}, "service": {"pipelines": {}}}}}
    convert(srv, "invalid-config fixture: created", review(V1BETA1, B, [created], "uid-ic"),
            answer(V1BETA1, "uid-ic", [stored]), "to_v1beta1", 1)
    stored["spec"]["config"]["service"]["telemetry"] = {"metrics": {"readers": [
        {"pull": {"exporter": {"prometheus": {"host": "0.0.0.0", "port": 8888}}}}]}}
    asserted = yaml_docs(os.path.join(DATA, "upstream-conversion-webhook-invalid-config.assert.yaml"))[0]
    convert(srv, "invalid-config fixture: read as v1alpha1", review(V1BETA1, A, [stored], "uid-ic2"),
            answer(V1BETA1, "uid-ic2", [asserted]), "to_v1alpha1", 1)

    # An unreadable config: the empty config, the text kept (and logged).
    junk = {"apiVersion": A, "kind": "OpenTelemetryCollector", "metadata": {"name": "junk", "namespace": "obs"},
            "spec": {"config": "@@@"}}
    kept = {"apiVersion": B, "kind": "OpenTelemetryCollector",
            "metadata": {"name": "junk", "namespace": "obs", "annotations": {"otel-webhook/v1alpha1-config": "@@@"}},
            "spec": {"config": {"receivers": {}, "exporters": {}, "service": {"pipelines": {}}}}}
    convert(srv, "unreadable config", review(V1, B, [junk], "uid-junk"), answer(V1, "uid-junk", [kept]),
            "to_v1beta1", 1)
    junk_back = json.loads(dumps(junk))
    junk_back["metadata"]["annotations"] = {"otel-webhook/v1alpha1-config": "@@@"}
    convert(srv, "unreadable config, the way back", review(V1, A, [kept], "uid-junk2"),
            answer(V1, "uid-junk2", [junk_back]), "to_v1alpha1", 1)

    # No objects: an empty list.
    convert(srv, "no objects", review(V1, B, [], "uid-none"), answer(V1, "uid-none", []), "to_v1beta1", 0)

    # One failing object fails the whole batch.
    convert(srv, "a batch with one failing object",
            review(V1, A, [beta, {"apiVersion": B, "kind": "OpenTelemetryCollector", "metadata": {"name": "bad"},
                                  "spec": {"config": {"receivers": []}}}, beta], "uid-batch"),
            answer(V1, "uid-batch", None, "objects[1] (bad): spec.config.receivers: expected a map, got a list"),
            "to_v1alpha1")
    convert(srv, "the same version",
            review(V1, B, [beta], "uid-same"),
            answer(V1, "uid-same", None, "objects[0] (obs/c): already opentelemetry.io/v1beta1: converting to the "
                                         "same version is not allowed"), "to_v1beta1")
    convert(srv, "another kind", review(V1, B, [{"apiVersion": A, "kind": "Instrumentation",
                                                 "metadata": {"name": "i"}}], "uid-kind"),
            answer(V1, "uid-kind", None, "objects[0] (i): not an opentelemetry.io/v1alpha1 or opentelemetry.io/v1beta1 "
                                         "OpenTelemetryCollector (apiVersion \"opentelemetry.io/v1alpha1\", kind "
                                         "\"Instrumentation\")"), "to_v1beta1")
    convert(srv, "not an object", review(V1, B, ["x"], "uid-str"),
            answer(V1, "uid-str", None, "objects[0]: expected an object, got a string"), "to_v1beta1")
    convert(srv, "an unknown desired version", review(V1, "opentelemetry.io/v2", [beta], "uid-v2"),
            answer(V1, "uid-v2", None, "request.desiredAPIVersion \"opentelemetry.io/v2\": expected "
                                       "opentelemetry.io/v1alpha1 or opentelemetry.io/v1beta1"), "other")
    # A uid holding a NUL comes back byte for byte.
    body = dumps(review(V1, B, [], "a\u0000b")).encode()
    convert(srv, "uid with a NUL", body, answer(V1, "a\u0000b", []), "to_v1beta1", 0)


def test_bad_requests(srv):
    bad(srv, "empty body", b"", "empty request body")
    bad(srv, "not JSON", b"{\"kind\":", "invalid JSON: the body ends in the middle of a value")
    bad(srv, "garbage", b"@@@", "invalid JSON: unexpected character")
    bad(srv, "trailing data", b"{} {}", "invalid JSON: unexpected data after the value")
    bad(srv, "a number", b"42", "expected a ConversionReview object")
    bad(srv, "an AdmissionReview", dumps({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
                                          "request": {"uid": "u"}}).encode(),
        "unsupported apiVersion \"admission.k8s.io/v1\": expected apiextensions.k8s.io/v1 or "
        "apiextensions.k8s.io/v1beta1")
    bad(srv, "another kind", dumps({"kind": "Review", "apiVersion": V1}).encode(),
        "unsupported kind \"Review\": expected ConversionReview")
    bad(srv, "no request", dumps({"kind": "ConversionReview", "apiVersion": V1}).encode(),
        "the ConversionReview has no request")
    bad(srv, "no uid", dumps({"kind": "ConversionReview", "apiVersion": V1, "request": {"objects": []}}).encode(),
        "request.uid is missing")
    bad(srv, "objects not a list", dumps(review(V1, B, {"a": 1})).encode(), "request.objects: expected a list")
    bad(srv, "desiredAPIVersion not a string", dumps(review(V1, 5, [])).encode(),
        "request.desiredAPIVersion: expected a string")
    r = srv.call("GET", "/convert")
    COUNTS.method += 1
    check("GET /convert: 405", r.status == 405 and r.body == b'{"error":"method not allowed: use POST"}\n', repr(r))
    # Over --max-body (65536 here): 413 and the connection closed, as on the pod path.
    big = dumps(review(V1, B, [{"apiVersion": A, "kind": "OpenTelemetryCollector", "metadata": {"name": "x"},
                                 "spec": {"config": "#" + "x" * 70000}}])).encode()
    try:
        c = srv.conn()
        c.send(b"POST /convert HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % len(big))
        try:
            c.send(big)
        except OSError:
            pass  # h2o answers from the Content-Length and may close before reading it all
        r = c.read_response()
        check("over --max-body: 413, connection closed", r.status == 413 and r.headers.get("connection") == "close",
              repr(r))
        c.close()
    except (OSError, EOFError, ValueError) as e:
        check("over --max-body: 413", False, repr(e))
    srv.healthy("over --max-body")
    # The pod path is still served.
    rv = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
          "request": {"uid": "pod-1", "operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                      "namespace": "default", "object": {"metadata": {"name": "p"}, "spec": {"containers": [
                          {"name": "c", "image": "i"}]}}}}
    r = srv.admit(rv)
    check("the pod path after conversions", r.status == 200 and r.json()["response"] == {"uid": "pod-1",
                                                                                          "allowed": True}, repr(r))


def test_metrics(srv):
    r, m = srv.metrics()
    check("metrics: 200", r.status == 200, repr(r))
    for d in ("to_v1beta1", "to_v1alpha1", "other"):
        for res in ("success", "failure"):
            key = 'otel_webhook_conversions_total{direction="%s",result="%s"}' % (d, res)
            want = COUNTS.reviews.get((d, res), 0)
            if d == "other" and res == "success":
                check("metrics: no success series for another version", key not in m, key)
                continue
            check("metrics: " + key, m.get(key) == want, "got %s, expected %d" % (m.get(key), want))
    for d in ("to_v1beta1", "to_v1alpha1"):
        key = 'otel_webhook_converted_objects_total{direction="%s"}' % d
        check("metrics: " + key, m.get(key) == COUNTS.objects.get(d, 0), "got %s, expected %s" % (
            m.get(key), COUNTS.objects.get(d, 0)))
    check("metrics: bad requests", m.get('otel_webhook_errors_total{kind="bad_request"}') == COUNTS.bad_request,
          m.get('otel_webhook_errors_total{kind="bad_request"}'))
    check("metrics: too large", m.get('otel_webhook_errors_total{kind="too_large"}') == 1,
          m.get('otel_webhook_errors_total{kind="too_large"}'))
    check("metrics: method not allowed", m.get('otel_webhook_errors_total{kind="method_not_allowed"}') == COUNTS.method)
    check("metrics: admissions are not conversions", m.get('otel_webhook_requests_total{result="ignored"}') == 0 and
          m.get('otel_webhook_requests_total{result="unchanged"}') == 1)
    metricslib.check_exposition(check, "convert", r.body.decode(), ROOT, BIN)


def test_logs(srv):
    recs = log_records(srv.stderr())
    check("log: a failed review", any(o.get("msg") == "conversion failed" and o.get("level") == "warn" and
                                      o.get("uid") == "uid-batch" and o.get("desired") == A and
                                      o.get("error") == "objects[1] (bad): spec.config.receivers: expected a map, got "
                                                        "a list" and type(o.get("micros")) is int for o in recs),
          [o for o in recs if o.get("uid") == "uid-batch"])
    failed = [o for o in recs if o.get("msg") == "conversion failed"]
    check("log: one line per failed review", len(failed) == sum(n for (d, r), n in COUNTS.reviews.items()
                                                                if r == "failure"), len(failed))
    check("log: a bad request", any(o.get("msg") == "bad conversion request" and o.get("level") == "warn" and
                                    o.get("error") == "the ConversionReview has no request" for o in recs))
    check("log: an unreadable config", any(
        o.get("msg") == "converted with a loss" and o.get("uid") == "uid-junk" and o.get("objects") == 1 and
        o.get("note") == "objects[0] (obs/junk): spec.config line 1: found character that cannot start any token"
        for o in recs), [o for o in recs if o.get("uid") == "uid-junk"])
    check("log: the NUL of a uid as U+FFFD", any(o.get("uid") == "a\ufffdb" for o in recs),
          [o.get("uid") for o in recs if o.get("msg") == "converted"][:5])


def bomb_config():
    """A v1alpha1 config under every per-parse limit of kube/yaml.h (400k
    nodes, 6 MB of alias copies, ~45 MB estimated): one such object
    converts, 64 in one review are the issue's attack."""
    return yaml_alias_bomb(4, 2)


def alpha_obj(name, config, ns="default"):
    return {"apiVersion": A, "kind": "OpenTelemetryCollector", "metadata": {"name": name, "namespace": ns},
            "spec": {"config": config}}


def test_budget(srv):
    """The review as a whole is budgeted (docs/custom-resources.md, Conversion): 64 alias bombs
    fail fast, the loop keeps answering meanwhile, memory stays bounded;
    past 10,000 objects a review is refused."""
    import threading
    cfg = bomb_config()
    one = review(V1, B, [alpha_obj("bomb-0", cfg)], uid="uid-bomb1")
    r = srv.call("POST", "/convert", dumps(one).encode())
    ok = r.status == 200 and r.json()["response"]["result"]["status"] == "Success"
    g = r.json()["response"]["convertedObjects"][0]["spec"]["config"]["receivers"].get("g") if ok else None
    check("bomb: one object alone converts whole", ok and g and len(g) == 2 and len(g[1][9][9][9][9]) == 10,
          repr(r)[:300])
    body = dumps(review(V1, B, [alpha_obj("bomb-%d" % i, cfg) for i in range(64)], uid="uid-bomb")).encode()
    check("bomb: the body is small", len(body) < 100000, len(body))
    res, lat = {}, []

    def post():
        t0 = time.monotonic()
        try:
            c = srv.conn(timeout=8)
            res["r"] = c.request("POST", "/convert", body)
            c.close()
        except (OSError, EOFError, ValueError) as e:
            res["e"] = e
        res["t"] = time.monotonic() - t0

    cpu0 = cpu_seconds(srv.proc.pid)
    t = threading.Thread(target=post)
    t.start()
    while t.is_alive():
        t0 = time.monotonic()
        try:
            c = srv.conn(timeout=10)
            h = c.request("GET", "/healthz")
            c.close()
            lat.append(time.monotonic() - t0 if h.status == 200 else 99)
        except (OSError, EOFError, ValueError):
            lat.append(99)
    t.join()
    cpu = cpu_seconds(srv.proc.pid) - cpu0
    # Wall-clock latencies measure the machine's load as well; what bounds
    # a stall of the loop is the review's own work, its CPU time.
    check("bomb: /healthz answered meanwhile", lat and max(lat) < 99, lat)
    check("bomb: the review costs under 1 s of CPU (so no stall past it)", cpu < 1.0, cpu)
    print("  (bomb: %.2f s of CPU, /healthz meanwhile at most %.2f s)" % (cpu, max(lat or [0])))
    if "r" not in res:  # the old binary: hung, growing; stop it here
        check("bomb: answered", False, repr(res))
        srv.kill()
        return
    r = res.get("r")
    want = ("objects[1] (default/bomb-1): spec.config line 7: the ConversionReview: the YAML would take more than "
            "the %d bytes of memory allowed" % ((64 << 20) + 16 * len(body)))
    got = r.json()["response"]["result"] if r and r.status == 200 else res
    check("bomb: 64 in one review fail whole, naming the limit",
          got == {"metadata": {}, "status": "Failure", "message": want}, "%r\nwant %r" % (got, want))
    hwm = 0
    try:
        with open("/proc/%d/status" % srv.proc.pid) as f:
            hwm = int([ln for ln in f if ln.startswith("VmHWM:")][0].split()[1]) << 10
    except (OSError, IndexError, ValueError):
        hwm = 1 << 40
    check("bomb: peak RSS under 600 MiB (ASan build)", hwm < 600 << 20, hwm >> 20)

    mini = {"apiVersion": B, "kind": "OpenTelemetryCollector", "metadata": {"name": "m"}}
    # 60,000 objects pass the request's tree budget (--max-tree-bytes) before
    # the object count is read: refused unparsed; 10,001 pass that budget
    # and meet the count.
    big = review(V1, A, [mini] * 60000, uid="uid-60k")
    want = answer(V1, "uid-60k", failure="the ConversionReview would take more than the 33554432 bytes of memory "
                                           "otel-webhook gives one request (--max-tree-bytes); nothing converted")
    cpu0 = cpu_seconds(srv.proc.pid)
    try:
        convert(srv, "60k objects refused", big, want)
    except (OSError, EOFError, ValueError) as e:
        check("60k objects refused", False, repr(e))
    cpu = cpu_seconds(srv.proc.pid) - cpu0
    check("60k objects: under 2 s of CPU", cpu < 2.0, cpu)
    over = review(V1, A, [mini] * 10001, uid="uid-10001")
    want = answer(V1, "uid-10001", failure="request.objects: 10001 objects, over the limit of 10000 per "
                                             "ConversionReview")
    try:
        convert(srv, "10,001 objects refused", over, want)
    except (OSError, EOFError, ValueError) as e:
        check("10,001 objects refused", False, repr(e))
    cpu0 = cpu_seconds(srv.proc.pid)
    r = srv.call("POST", "/convert", dumps(review(V1, A, [mini] * 10000, uid="uid-10k")).encode())
    ok = r.status == 200 and r.json()["response"]["result"]["status"] == "Success" and \
        len(r.json()["response"]["convertedObjects"]) == 10000
    check("10,000 objects: converted", ok, repr(r)[:300])
    cpu = cpu_seconds(srv.proc.pid) - cpu0
    check("10,000 objects: under 2 s of CPU", cpu < 2.0, cpu)
    srv.healthy("budget")


def test_exact_numbers(srv):
    """Integers past 64 bits are kept exactly, never json-c's clamp."""
    lits = ["18446744073709551617", "-9223372036854775809", "18446744073709551615", "18446744073709552000",
            "-9223372036854775808", "9223372036854775807", "123456789012345678901234567890"]
    raw = ('{"kind":"ConversionReview","apiVersion":"%s","request":{"uid":"uid-big","desiredAPIVersion":"%s",'
           '"objects":[{"apiVersion":"%s","kind":"OpenTelemetryCollector","metadata":{"name":"n"},'
           '"spec":{"config":"receivers: {}\\n","extra":[%s]}}]}}') % (V1, B, A, ",".join(lits))
    r = srv.call("POST", "/convert", raw.encode())
    check("big integers: 200", r.status == 200, repr(r))
    check("big integers: every literal kept exactly", ('"extra":[%s]' % ",".join(lits)).encode() in r.body,
          r.body[:2000])
    # And in a v1alpha1 config's YAML: go-yaml reads 2^64-1 as a uint64.
    obj = alpha_obj("y", "receivers:\n  r:\n    n: 18446744073709551615\n    m: 9223372036854775808\n")
    r = srv.call("POST", "/convert", dumps(review(V1, B, [obj], uid="uid-ybig")).encode())
    check("big YAML integers: kept exactly", b'"r":{"n":18446744073709551615,"m":9223372036854775808}' in r.body,
          r.body[:2000])


def test_duplicate_keys(srv):
    """A v1alpha1 config with a duplicate key does not read (go-yaml v3
    refuses it): the empty config, the text kept, the reason logged."""
    text = "receivers:\n  otlp: {}\nexporters:\n  debug: {}\nreceivers:\n  jaeger: {}\n"
    r = srv.call("POST", "/convert", dumps(review(V1, B, [alpha_obj("dup", text, ns="obs")], uid="uid-dup")).encode())
    o = r.json()["response"]["convertedObjects"][0] if r.status == 200 else {}
    check("duplicate keys: the empty config", o.get("spec", {}).get("config") ==
          {"receivers": {}, "exporters": {}, "service": {"pipelines": {}}}, o)
    check("duplicate keys: the text kept", o.get("metadata", {}).get("annotations", {}).get(
        "otel-webhook/v1alpha1-config") == text, o.get("metadata"))
    note = 'objects[0] (obs/dup): spec.config line 5: mapping key "receivers" already defined at line 1'
    deadline = time.monotonic() + 5
    found = False
    while time.monotonic() < deadline and not found:
        found = any('"uid":"uid-dup"' in ln and json.loads(ln).get("note") == note
                    for ln in srv.stderr().splitlines() if ln.startswith("{"))
        if not found:
            time.sleep(0.05)  # polls the log for the line, bounded by the deadline
    check("duplicate keys: the Go message logged", found, [ln for ln in srv.stderr().splitlines()
                                                             if "uid-dup" in ln])


def main():
    tmp = tempfile.mkdtemp(prefix="otel-convert-test-")
    srv = None
    try:
        certs = os.path.join(tmp, "certs")
        p = subprocess.run([BIN, "certs", "generate", "--service", "otel-webhook", "--namespace", "otel",
                            "--out", certs, "--dev"], capture_output=True, text=True, timeout=60)
        if not check("certs generate", p.returncode == 0, p.stderr):
            return
        ca, crt, key = (os.path.join(certs, f) for f in ("ca.crt", "tls.crt", "tls.key"))
        srv = Server(check, BIN, "convert", tmp, crt, key, ca,
                     ["--threads", "2", "--max-body", "65536", "--log-level", "debug"])
        if not srv.start():
            return
        test_answers(srv)
        test_bad_requests(srv)
        test_metrics(srv)
        srv.final_checks()
        test_logs(srv)
        # One loop: a review that stalled it would stall /healthz too.
        big = Server(check, BIN, "convert-budget", tmp, crt, key, ca,
                     ["--threads", "1", "--max-body", str(8 << 20), "--log-level", "debug"])
        if big.start():
            try:
                test_exact_numbers(big)
                test_duplicate_keys(big)
                test_budget(big)
            finally:
                big.kill()
    finally:
        if srv:
            srv.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    check.run(main, RESULTS)
