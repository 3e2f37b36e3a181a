#!/usr/bin/python3
"""`otel-webhook serve`'s admission webhooks for the operator's custom
resources, from the outside, over real TLS on loopback.

Usage: tests/blackbox/cr_admission_test.py BINARY [RESULTS_FILE]   (from the repository root)

Exact AdmissionReview answers at the operator's paths (cr-admission.md 1):
defaulting patches (applied with python3-jsonpatch, compared with the
whole defaulted object), validation verdicts with the reference's
messages, codes and warnings, the reference's 400s for objects that do
not decode and HTTP 400 for bodies that are not AdmissionReviews, the
operations (CREATE, UPDATE, DELETE, CONNECT, others), the settings file's
fips-disabled-components, the metrics (families against docs/metrics.md's
tables, counts by kind, operation, result and rule), the log lines, and
the pod path beside them. The privilege-escalation check against an API
server is in cluster_test.py. Every server exits 0 on SIGTERM with no
sanitizer report."""
import base64
import copy
import json
import os
import subprocess
import sys
import tempfile
import shutil

import jsonpatch

BIN = os.path.abspath(sys.argv[1])
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, log_records  # noqa: E402
import metricslib  # noqa: E402
from serverlib import Server  # noqa: E402

check = Checks("cr-admission")

MUTATE_COL = "/mutate-opentelemetry-io-v1beta1-opentelemetrycollector"
VALIDATE_COL = "/validate-opentelemetry-io-v1beta1-opentelemetrycollector"
MUTATE_INST = "/mutate-opentelemetry-io-v1alpha1-instrumentation"
VALIDATE_INST = "/validate-opentelemetry-io-v1alpha1-instrumentation"
MUTATE_BRIDGE = "/mutate-opentelemetry-io-v1alpha1-opampbridge"
VALIDATE_BRIDGE = "/validate-opentelemetry-io-v1alpha1-opampbridge"
M = "the OpenTelemetry Collector mode is set to "
REPO = "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-"


def collector(spec=None, name="c"):
    s = {"config": {"receivers": {"otlp": {"protocols": {"grpc": {}}}}, "exporters": {"debug": {}},
                    "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}}}}}
    s.update(spec or {})
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
            "metadata": {"name": name, "namespace": "ns"}, "spec": s}


def instrumentation(spec=None):
    return {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation",
            "metadata": {"name": "i", "namespace": "ns"}, "spec": spec or {}}


def review(obj, op="CREATE", old=None, uid="uid-1", user="jane", dry_run=False, kind=None):
    k = kind or {"group": "opentelemetry.io", "version": (obj or {}).get("apiVersion", "/").split("/")[-1],
                 "kind": (obj or {}).get("kind", "")}
    req = {"uid": uid, "kind": k, "operation": op, "namespace": "ns", "name": "c", "dryRun": dry_run,
           "userInfo": {"username": user, "uid": "u-1", "groups": ["dev", "system:authenticated"]}}
    if obj is not None:
        req["object" if op != "DELETE" else "oldObject"] = obj
    if old is not None:
        req["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


class Calls:
    """Posts reviews to one server and books what /metrics must count."""

    def __init__(self, srv):
        self.srv = srv
        self.want = {}  # (kind, operation, result) -> n
        self.denials = {}  # (kind, rule) -> n

    def post(self, path, rv, kind, result, rule=None, raw=None):
        body = raw if raw is not None else json.dumps(rv).encode()
        r = self.srv.call("POST", path, body)
        op = (rv or {}).get("request", {}).get("operation")
        op = op if op in ("CREATE", "UPDATE", "DELETE", "CONNECT") else "other"
        if raw is not None:
            op = "other"
        key = (kind, op, result)
        self.want[key] = self.want.get(key, 0) + 1
        if rule:
            self.denials[(kind, rule)] = self.denials.get((kind, rule), 0) + 1
        return r


def answer(r):
    """The response object of a 200 answer, or None."""
    if r.status != 200:
        return None
    return r.json()["response"]


def test_collector_mutating(c):
    COL = "OpenTelemetryCollector"
    # A.1: the minimal CREATE. The patch gives exactly the defaulted object.
    obj = collector()
    r = c.post(MUTATE_COL, review(obj), COL, "defaulted")
    resp = answer(r)
    check("mutate collector: 200 JSON", r.status == 200 and r.headers.get("content-type") == "application/json", r)
    check("mutate collector: uid, allowed, JSONPatch", resp and resp["uid"] == "uid-1" and resp["allowed"] is True and
          resp.get("patchType") == "JSONPatch" and "status" not in resp, resp)
    ops = json.loads(base64.b64decode(resp["patch"])) if resp and "patch" in resp else []
    want = copy.deepcopy(obj)
    want["spec"]["config"]["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"] = "0.0.0.0:4317"
    want["spec"]["config"]["service"]["telemetry"] = {"metrics": {"readers": [
        {"pull": {"exporter": {"prometheus": {"host": "0.0.0.0", "port": 8888}}}}]}}
    want["spec"].update({"mode": "deployment", "upgradeStrategy": "automatic", "replicas": 1,
                         "managementState": "managed", "networkPolicy": {"enabled": True}})
    check("mutate collector: the patch gives the defaulted object (A.1)",
          jsonpatch.apply_patch(obj, ops) == want, ops)
    check("mutate collector: only additions, nothing re-serialised (spec 8.18)",
          sorted(o["path"] for o in ops) == sorted([
              "/spec/config/receivers/otlp/protocols/grpc/endpoint", "/spec/config/service/telemetry",
              "/spec/mode", "/spec/upgradeStrategy", "/spec/replicas", "/spec/managementState",
              "/spec/networkPolicy"]) and all(o["op"] == "add" for o in ops), ops)
    # Already defaulted: allowed, nothing else.
    r = c.post(MUTATE_COL, review(want), COL, "unchanged")
    check("mutate collector: a defaulted object: {uid, allowed} only", answer(r) == {"uid": "uid-1", "allowed": True},
          r)
    # UPDATE is defaulted too; DELETE is allowed with status 200.
    upd = collector({"mode": "daemonset", "autoscaler": {"maxReplicas": 4}})
    r = c.post(MUTATE_COL, review(upd, "UPDATE", old=want), COL, "defaulted")
    ops = json.loads(base64.b64decode(answer(r)["patch"])) if answer(r) and "patch" in answer(r) else []
    got = jsonpatch.apply_patch(upd, ops)
    check("mutate collector UPDATE: autoscaler min from replicas, CPU 90",
          got["spec"]["autoscaler"] == {"maxReplicas": 4, "minReplicas": 1, "targetCPUUtilization": 90} and
          got["spec"]["mode"] == "daemonset", got["spec"])
    r = c.post(MUTATE_COL, review(want, "DELETE"), COL, "unchanged")
    check("mutate collector DELETE: allowed, code 200",
          answer(r) == {"uid": "uid-1", "allowed": True, "status": {"code": 200}}, r)
    # Defaulting refused: 403 with the reason, no prefix.
    bad = collector()
    bad["spec"]["config"]["receivers"]["otlp"]["protocols"] = {"kafka": {}}
    r = c.post(MUTATE_COL, review(bad), COL, "denied", "defaulting")
    check("mutate collector: an unknown protocol is refused, 403 Forbidden",
          answer(r) == {"uid": "uid-1", "allowed": False,
                        "status": {"code": 403, "reason": "Forbidden", "message": "unknown protocol set: kafka"}}, r)
    # Objects that do not decode: the reference's code 400.
    r = c.post(MUTATE_COL, review(collector({"replicas": "3"})), COL, "rejected")
    check("mutate collector: a field of the wrong type: code 400",
          answer(r) == {"uid": "uid-1", "allowed": False, "status": {
              "code": 400, "message": "request.object: spec.replicas: expected an integer, got a string"}}, r)
    r = c.post(MUTATE_COL, review(instrumentation()), COL, "rejected")
    check("mutate collector: another kind: code 400", answer(r) and answer(r)["status"] == {
        "code": 400, "message": "request.object: expected an opentelemetry.io/v1beta1 OpenTelemetryCollector, got "
                                "opentelemetry.io/v1alpha1 Instrumentation"}, r)
    rv = review(None)
    r = c.post(MUTATE_COL, rv, COL, "rejected")
    check("mutate collector: no object: code 400", answer(r) and answer(r)["status"] == {
        "code": 400, "message": "request.object is missing or not an object"}, r)
    v1alpha1 = collector()
    v1alpha1["apiVersion"] = "opentelemetry.io/v1alpha1"
    r = c.post(MUTATE_COL, review(v1alpha1), COL, "rejected")
    check("mutate collector: v1alpha1 (the API server converts first): code 400",
          answer(r) and answer(r)["status"]["code"] == 400 and "got opentelemetry.io/v1alpha1" in
          answer(r)["status"]["message"], r)


def test_v1alpha1_unread_config(c):
    """spec 8.6, as the API server runs a v1alpha1 CREATE: /convert to
    v1beta1, then the mutating hook. A config string that does not read is
    refused there, with why; the upstream fixture's config "null" reads."""
    COL = "OpenTelemetryCollector"

    def converted(config):
        alpha = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "OpenTelemetryCollector",
                 "metadata": {"name": "c", "namespace": "ns"}, "spec": {"mode": "deployment", "config": config}}
        rv = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
              "request": {"uid": "conv-1", "desiredAPIVersion": "opentelemetry.io/v1beta1", "objects": [alpha]}}
        r = c.srv.call("POST", "/convert", json.dumps(rv).encode())
        objs = (r.json().get("response") or {}).get("convertedObjects") if r.status == 200 else None
        return objs[0] if objs else None

    beta = converted("@@@")
    r = c.post(MUTATE_COL, review(beta), COL, "denied", "config") if beta else None
    check("v1alpha1 config that does not read: the mutating hook refuses it, with why", r and answer(r) == {
        "uid": "uid-1", "allowed": False, "status": {
            "code": 403, "reason": "Forbidden", "message":
            "spec.config line 1: found character that cannot start any token; written through v1alpha1, this "
            "config would be stored as an empty one (the text is in the annotation otel-webhook/v1alpha1-config)"}},
          r)
    r = c.post(MUTATE_COL, review(converted("null")), COL, "defaulted")
    check("v1alpha1 config \"null\" (upstream's conversion-webhook-invalid-config): defaulted",
          answer(r) and answer(r)["allowed"] is True and answer(r).get("patchType") == "JSONPatch", r)
    # The validating hook too, should the object reach it defaulted.
    if beta:
        d = copy.deepcopy(beta)
        d["spec"]["config"]["service"]["telemetry"] = {"metrics": {"readers": [
            {"pull": {"exporter": {"prometheus": {"host": "0.0.0.0", "port": 8888}}}}]}}
        r = c.post(VALIDATE_COL, review(d), COL, "denied", "config")
        check("v1alpha1 config that does not read, defaulted: the validating hook refuses it",
              answer(r) and answer(r)["status"]["code"] == 403 and answer(r)["status"]["message"].startswith(
                  "spec.config line 1: found character"), r)


def test_collector_validating(c):
    COL = "OpenTelemetryCollector"
    ok = collector({"mode": "deployment"})
    r = c.post(VALIDATE_COL, review(ok), COL, "allowed")
    check("validate collector: allowed, code 200", answer(r) == {"uid": "uid-1", "allowed": True,
                                                                 "status": {"code": 200}}, r)
    # Warnings, in response.warnings, unprefixed.
    nulls = collector()
    nulls["spec"]["config"]["processors"] = {"batch": None}
    r = c.post(VALIDATE_COL, review(nulls), COL, "allowed")
    check("validate collector: the null-objects warning", answer(r) and answer(r).get("warnings") == [
        "Collector config spec.config has null objects: processors.batch:. For compatibility with other tooling, "
        "such as kustomize and kubectl edit, it is recommended to use empty objects e.g. batch: {}."], r)
    # A.2, as the webhook answers it.
    sidecar = collector({"mode": "sidecar", "tolerations": [{"key": "dedicated", "operator": "Exists"}]})
    sidecar["spec"]["config"]["processors"] = {"batch": None}
    r = c.post(VALIDATE_COL, review(sidecar), COL, "denied", "sidecar")
    check("validate collector: sidecar with tolerations, 403 with the warnings found before", answer(r) == {
        "uid": "uid-1", "allowed": False,
        "status": {"code": 403, "reason": "Forbidden",
                   "message": M + "sidecar, which does not support the attribute 'tolerations'"},
        "warnings": ["Collector config spec.config has null objects: processors.batch:. For compatibility with other "
                     "tooling, such as kustomize and kubectl edit, it is recommended to use empty objects e.g. "
                     "batch: {}."]}, r)
    # A.3.
    ta = collector({"mode": "statefulset", "targetAllocator": {"enabled": True}})
    r = c.post(VALIDATE_COL, review(ta), COL, "denied", "target_allocator")
    check("validate collector: A.3 statefulset without a prometheus receiver",
          answer(r) and answer(r)["status"]["message"] == "the OpenTelemetry Spec Prometheus configuration is "
          "incorrect, no prometheus available as part of the configuration", r)
    ta["spec"]["mode"] = "deployment"
    r = c.post(VALIDATE_COL, review(ta), COL, "denied", "target_allocator")
    check("validate collector: A.3 in deployment mode", answer(r) and answer(r)["status"]["message"] ==
          M + "deployment, which does not support the target allocation deployment", r)
    # replicas above maxReplicas.
    r = c.post(VALIDATE_COL, review(collector({"replicas": 5, "autoscaler": {"maxReplicas": 3}})), COL, "denied",
               "autoscaler")
    check("validate collector: autoscaler, replicas above maxReplicas", answer(r) and answer(r)["status"]["message"] ==
          "the OpenTelemetry Spec autoscale configuration is incorrect, replicas must not be greater than maxReplicas",
          r)
    # UPDATE: the mode is immutable; a stored object without one is a deployment (spec 8.8).
    old = collector({"mode": "daemonset"})
    r = c.post(VALIDATE_COL, review(collector({"mode": "deployment"}), "UPDATE", old=old), COL, "denied",
               "mode_change")
    check("validate collector UPDATE: mode change refused, no warnings", answer(r) == {
        "uid": "uid-1", "allowed": False, "status": {"code": 403, "reason": "Forbidden", "message":
                                                     M + "daemonset, which does not support modification"}}, r)
    r = c.post(VALIDATE_COL, review(collector({"mode": "deployment", "replicas": 2}), "UPDATE", old=collector()),
               COL, "allowed")
    check("validate collector UPDATE: stored without a mode, updated as a deployment (spec 8.8)",
          answer(r) and answer(r)["allowed"] is True, r)
    rv = review(collector(), "UPDATE")
    r = c.post(VALIDATE_COL, rv, COL, "rejected")
    check("validate collector UPDATE without oldObject: code 400", answer(r) and answer(r)["status"] == {
        "code": 400, "message": "request.oldObject is missing or not an object"}, r)
    # DELETE is always allowed (spec 8.2), CONNECT too; other operations are 400.
    r = c.post(VALIDATE_COL, review(sidecar, "DELETE"), COL, "allowed")
    check("validate collector DELETE: an invalid stored collector stays deletable",
          answer(r) == {"uid": "uid-1", "allowed": True, "status": {"code": 200}}, r)
    r = c.post(VALIDATE_COL, review(sidecar, "CONNECT"), COL, "allowed")
    check("validate collector CONNECT: allowed", answer(r) == {"uid": "uid-1", "allowed": True,
                                                               "status": {"code": 200}}, r)
    r = c.post(VALIDATE_COL, review(ok, "PATCH"), COL, "rejected")
    check("validate collector: unknown operation, code 400", answer(r) and answer(r)["status"] == {
        "code": 400, "message": "unknown operation \"PATCH\""}, r)
    # A dry run is answered the same (nothing of ours has side effects).
    r = c.post(VALIDATE_COL, review(sidecar, dry_run=True), COL, "denied", "sidecar")
    check("validate collector: dry run, the same answer", answer(r) and answer(r)["allowed"] is False, r)
    # The build validator's warning.
    env_port = collector()
    env_port["spec"]["config"]["service"]["telemetry"] = {"metrics": {"address": "0.0.0.0:${env:PORT}"}}
    r = c.post(VALIDATE_COL, review(env_port), COL, "allowed")
    check("validate collector: a build problem is a warning", answer(r) and answer(r).get("warnings") == [
        "couldn't determine metrics port from configuration: 0.0.0.0:${env:PORT}"], r)


def test_instrumentation(c):
    INST = "Instrumentation"
    obj = instrumentation({"exporter": {"endpoint": "http://c:4317"}})
    r = c.post(MUTATE_INST, review(obj), INST, "defaulted")
    resp = answer(r)
    ops = json.loads(base64.b64decode(resp["patch"])) if resp and "patch" in resp else []
    got = jsonpatch.apply_patch(obj, ops)
    check("mutate instrumentation: images, resources, Apache and Nginx settings (4.1)",
          got["spec"]["java"] == {"image": REPO + "java:2.30.0", "resources": {
              "limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "50m", "memory": "64Mi"}}} and
          got["spec"]["apacheHttpd"]["version"] == "2.4" and
          got["spec"]["apacheHttpd"]["configPath"] == "/usr/local/apache2/conf" and
          got["spec"]["nginx"]["configFile"] == "/etc/nginx/nginx.conf" and
          got["spec"]["nodejs"]["resourceRequirements"]["requests"] == {"cpu": "50m", "memory": "128Mi"}, got["spec"])
    ann = got["metadata"].get("annotations", {})
    check("mutate instrumentation: the default-image annotations",
          ann.get("instrumentation.opentelemetry.io/default-auto-instrumentation-java-image") == REPO + "java:2.30.0"
          and len([k for k in ann if k.startswith("instrumentation.opentelemetry.io/default-auto-")]) == 7, ann)
    r = c.post(MUTATE_INST, review(got, "UPDATE", old=got), INST, "unchanged")
    check("mutate instrumentation: a defaulted object is unchanged", answer(r) == {"uid": "uid-1", "allowed": True}, r)
    # A.4.
    bad = instrumentation({"sampler": {"type": "traceidratio", "argument": "1.5"},
                           "exporter": {"endpoint": "https://c:4317"}})
    r = c.post(VALIDATE_INST, review(bad), INST, "denied", "sampler")
    check("validate instrumentation: A.4 refused, no warnings", answer(r) == {
        "uid": "uid-1", "allowed": False, "status": {"code": 403, "reason": "Forbidden", "message":
                                                     "spec.sampler.argument should be in rage [0..1]: 1.5"}}, r)
    bad["spec"]["sampler"]["argument"] = "0.25"
    r = c.post(VALIDATE_INST, review(bad), INST, "allowed")
    check("validate instrumentation: A.4 allowed with its warning", answer(r) == {
        "uid": "uid-1", "allowed": True, "status": {"code": 200},
        "warnings": ["exporter is using https:// but exporter.tls is unset"]}, r)
    # DELETE: the checks of a create, on oldObject, as the reference (its
    # tests call ValidateDelete with the same expectations).
    r = c.post(VALIDATE_INST, review(instrumentation(), "DELETE"), INST, "allowed")
    check("validate instrumentation DELETE: the warnings of a create", answer(r) == {
        "uid": "uid-1", "allowed": True, "status": {"code": 200}, "warnings": ["sampler type not set"]}, r)
    r = c.post(VALIDATE_INST, review(instrumentation({"sampler": {"type": "traceidratio", "argument": "abc"}}),
                                     "DELETE"), INST, "denied", "sampler")
    check("validate instrumentation DELETE: refused as a create would be", answer(r) == {
        "uid": "uid-1", "allowed": False, "status": {"code": 403, "reason": "Forbidden",
                                                     "message": "spec.sampler.argument is not a number: abc"}}, r)
    r = c.post(VALIDATE_INST, review(instrumentation()), INST, "allowed")
    check("validate instrumentation: sampler type not set", answer(r) and answer(r).get("warnings") ==
          ["sampler type not set"], r)
    r = c.post(VALIDATE_INST, review(instrumentation({"sampler": {"type": 1}})), INST, "rejected")
    check("validate instrumentation: wrong type, code 400", answer(r) and answer(r)["status"] == {
        "code": 400, "message": "request.object: spec.sampler.type: expected a string, got a number (quote it: "
                                "\"1\")"}, r)


def test_opampbridge(c):
    B = "OpAMPBridge"
    obj = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "OpAMPBridge", "metadata": {"name": "b"},
           "spec": {"endpoint": "ws://server"}}
    r = c.post(MUTATE_BRIDGE, review(obj), B, "defaulted")
    ops = json.loads(base64.b64decode(answer(r)["patch"])) if answer(r) and "patch" in answer(r) else []
    check("mutate opampbridge: upgradeStrategy, replicas, ReportsStatus", jsonpatch.apply_patch(obj, ops)["spec"] == {
        "endpoint": "ws://server", "upgradeStrategy": "automatic", "replicas": 1,
        "capabilities": {"ReportsStatus": True}}, ops)
    # Validated as received (the mutating webhook ran before): without
    # capabilities, refused, as upstream's "empty capabilities" test has it.
    r = c.post(VALIDATE_BRIDGE, review(obj), B, "denied", "capabilities")
    check("validate opampbridge: capabilities not specified", answer(r) and answer(r)["status"]["message"] ==
          "the capabilities supported by OpAMP Bridge are not specified", r)
    obj = jsonpatch.apply_patch(obj, ops)
    obj["spec"]["replicas"] = 3
    r = c.post(VALIDATE_BRIDGE, review(obj), B, "denied", "replicas")
    check("validate opampbridge: replicas", answer(r) and answer(r)["status"]["message"] ==
          "replica count must not be greater than 1", r)


def test_http(c):
    COL = "OpenTelemetryCollector"
    r = c.post(VALIDATE_COL, None, COL, "rejected", raw=b"{")
    check("not JSON: HTTP 400 with a one-line error", r.status == 400 and r.json() == {
        "error": "invalid JSON: the body ends in the middle of a value"}, r)
    r = c.post(VALIDATE_COL, None, COL, "rejected", raw=b"")
    check("empty body: HTTP 400", r.status == 400 and r.json() == {"error": "empty request body"}, r)
    rv = review(collector())
    del rv["request"]["uid"]
    r = c.post(VALIDATE_COL, None, COL, "rejected", raw=json.dumps(rv).encode())
    check("no uid: HTTP 400", r.status == 400 and r.json() == {"error": "request.uid is missing"}, r)
    rv = review(collector())
    rv["apiVersion"] = "admission.k8s.io/v1beta1"
    r = c.post(MUTATE_COL, None, COL, "rejected", raw=json.dumps(rv).encode())
    check("admission.k8s.io/v1beta1: HTTP 400", r.status == 400 and r.json() == {
        "error": "unsupported apiVersion \"admission.k8s.io/v1beta1\": expected admission.k8s.io/v1"}, r)
    r = c.srv.call("GET", VALIDATE_COL)
    check("GET: 405", r.status == 405 and r.json() == {"error": "method not allowed: use POST"}, r)
    r = c.srv.call("POST", "/validate-opentelemetry-io-v1beta1-targetallocator", b"{}")
    check("the TargetAllocator paths are not served (dead in the reference): 404", r.status == 404, r)
    # The uid is echoed byte for byte.
    rv = review(collector(), uid="a\u0000b")
    r = c.post(VALIDATE_COL, rv, COL, "allowed")
    check("uid with a NUL echoed", answer(r) and answer(r)["uid"] == "a\u0000b", r)
    c.srv.healthy("after bad requests")


def test_pod_path(srv):
    with open(os.path.join(ROOT, "examples", "review-java.json")) as f:
        rv = json.load(f)
    r = srv.call("POST", "/mutate-v1-pod", json.dumps(rv).encode())
    check("the pod path beside them: answered", r.status == 200 and r.json()["response"]["allowed"] is True, r)


def test_metrics_and_logs(c, srv):
    r = srv.call("GET", "/metrics")
    text = r.body.decode()
    fams = metricslib.check_exposition(check, "cr", text, ROOT, BIN)
    got = {}
    for name, labels, value in fams.get("otel_webhook_cr_admissions_total", {}).get("samples", []):
        got[(labels["kind"], labels["operation"], labels["result"])] = value
    bad = {k: (got.get(k), v) for k, v in c.want.items() if got.get(k) != v}
    extra = {k: v for k, v in got.items() if v and k not in c.want}
    check("metrics: admissions by kind, operation and result", not bad and not extra, (bad, extra))
    den = {}
    for name, labels, value in fams.get("otel_webhook_cr_denials_total", {}).get("samples", []):
        den[(labels["kind"], labels["rule"])] = value
    bad = {k: (den.get(k), v) for k, v in c.denials.items() if den.get(k) != v}
    extra = {k: v for k, v in den.items() if v and k not in c.denials}
    check("metrics: denials by rule", not bad and not extra, (bad, extra))
    n = sum(c.want.values())
    count = [v for s, l, v in fams.get("otel_webhook_cr_admission_duration_seconds", {}).get("samples", [])
             if s.endswith("_count")]
    check("metrics: the CR admissions' own latency histogram", count == [n], (count, n))
    pods = [v for s, l, v in fams.get("otel_webhook_request_duration_seconds", {}).get("samples", [])
            if s.endswith("_count")]
    check("metrics: the pod histogram counts pods only", pods == [1.0], pods)
    lines = log_records(srv.stderr())
    denied = [x for x in lines if x.get("msg") == "denied" and x.get("rule") == "mode_change"]
    check("log: a denial says who, what, the rule and the message", len(denied) == 1 and denied[0].get("kind") ==
          "OpenTelemetryCollector" and denied[0].get("user") == "jane" and denied[0].get("operation") == "UPDATE" and
          denied[0].get("namespace") == "ns" and denied[0].get("name") == "c" and
          denied[0].get("message") == M + "daemonset, which does not support modification" and
          isinstance(denied[0].get("micros"), int), denied)
    dry = [x for x in lines if x.get("dry_run") == "true"]
    check("log: dry runs are marked", len(dry) == 1, dry)


def test_fips(tmp, cert, key, ca):
    cfg = os.path.join(tmp, "fips.yaml")
    with open(cfg, "w") as f:
        f.write("fips-disabled-components: receiver.otlp,exporter.debug\n")
    srv = Server(check, BIN, "fips", tmp, cert, key, ca, ["--config", cfg])
    if not srv.start():
        return
    c = Calls(srv)
    r = c.post(VALIDATE_COL, review(collector()), "OpenTelemetryCollector", "denied", "fips")
    check("fips-disabled-components: refused, every component named", answer(r) and answer(r)["status"] == {
        "code": 403, "reason": "Forbidden", "message": "the collector configuration contains not FIPS compliant "
                                                       "components: [otlp debug]. Please remove it from the config"}, r)
    srv.final_checks()


def main():
    tmp = tempfile.mkdtemp(prefix="otel-cr-admission-")
    try:
        certs = os.path.join(tmp, "certs")
        p = subprocess.run([BIN, "certs", "generate", "--service", "x", "--namespace", "y", "--out", certs, "--dev"],
                           capture_output=True, text=True, timeout=60)
        if not check("certs generate", p.returncode == 0, p.stderr):
            return
        cert, key, ca = (os.path.join(certs, n) for n in ("tls.crt", "tls.key", "ca.crt"))
        res = os.path.join(tmp, "resources")
        os.mkdir(res)
        shutil.copy(os.path.join(ROOT, "examples", "resources", "instrumentation.yaml"), res)
        srv = Server(check, BIN, "cr", tmp, cert, key, ca, ["--resources", res])
        if not srv.start():
            return
        c = Calls(srv)
        test_collector_mutating(c)
        test_v1alpha1_unread_config(c)
        test_collector_validating(c)
        test_instrumentation(c)
        test_opampbridge(c)
        test_http(c)
        test_pod_path(srv)
        test_metrics_and_logs(c, srv)
        srv.final_checks()
        test_fips(tmp, cert, key, ca)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    check.run(main, RESULTS)
