#!/usr/bin/python3
"""`otel-webhook serve` from the outside, over real TLS on loopback.

Usage: tests/blackbox/server_test.py BINARY [RESULTS_FILE [RELEASE_BINARY]]   (from the repository root)

Starts the server itself (a free port on 127.0.0.1, certificates and
resources in a temporary directory), waits for /readyz, and checks exact
statuses and bodies: the happy path per language and sidecar mode, every
kind of bad input (after each of which /healthz must still answer), limits
and timeouts, 1,000 concurrent connections, TLS versions and ALPN, the
metrics, certificate rotation under load, SIGTERM under load and the log
formats. Every server's stderr must be free of sanitizer reports and every
server must exit 0 on SIGTERM. Every wait is bounded."""
import base64
import copy
import json
import os
import re
import resource
import selectors
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import warnings

import jsonpatch

warnings.filterwarnings("ignore", category=DeprecationWarning)  # ssl.TLSVersion.TLSv1

BIN = os.path.abspath(sys.argv[1])
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
# The unsanitized build: ASan's allocator keeps freed memory in quarantine,
# so what the process gives back is only seen with glibc's.
RELEASE_BIN = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 else None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import LSAN_SUPP, SANITIZER_MARKERS, Checks, free_port, wait_for  # noqa: E402
import metricslib  # noqa: E402
from serverlib import (Conn, Server, fresh_fingerprint, kubelet_publish, new_pair, not_after,  # noqa: E402
                       pem_sha256)

check = Checks("server")






# ---------------------------------------------------------------------------
# Fixtures: certificates, resources, reviews.

with open(os.path.join(ROOT, "examples", "review-java.json")) as f:
    EXAMPLE = json.load(f)

RESOURCES = {
    "instrumentations.yaml": """\
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: java-inst
spec:
  exporter:
    endpoint: http://collector:4318
  propagators: [tracecontext, baggage]
  java:
    env:
      - name: OTEL_JAVAAGENT_DEBUG
        value: "true"
---
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: nodejs-inst
spec:
  exporter:
    endpoint: http://collector:4317
---
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: python-inst
spec:
  exporter:
    endpoint: http://collector:4318
---
apiVersion: opentelemetry.io/v1alpha1
kind: Instrumentation
metadata:
  name: sdk-inst
spec:
  exporter:
    endpoint: http://collector:4317
""",
    "others.yaml": """\
# The owner of the example pod's ReplicaSet, so the service name is the Deployment's.
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: my-java-7b5d8f6c9
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: my-java, uid: d1, controller: true}]
---
apiVersion: v1
kind: Namespace
metadata:
  name: other
""",
}
STORE_EXPECTED = {"Namespace": 1, "Instrumentation": 4, "OpenTelemetryCollector": 1, "Secret": 0, "ConfigMap": 0,
                  "ReplicaSet": 1, "Job": 0, "Deployment": 0}


def make_review(pod=None, uid="uid-1", **req_fields):
    r = copy.deepcopy(EXAMPLE)
    r["request"]["uid"] = uid
    if pod is not None:
        r["request"]["object"] = pod
    r["request"].update(req_fields)
    return r


def small_pod(name, annotations=None, containers=None):
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
            "spec": {"containers": containers or [{"name": "app", "image": "app:1"}]}}


def java_review(uid="uid-java"):
    r = make_review(uid=uid)
    ann = r["request"]["object"]["metadata"]["annotations"]
    ann["instrumentation.opentelemetry.io/inject-java"] = "java-inst"
    del ann["sidecar.opentelemetry.io/inject"]
    return r


def env_of(container):
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container.get("env", [])}


def names(lst):
    return [c["name"] for c in lst or []]


def apply_response(name, review_obj, resp):
    """Checks the envelope of a mutating answer; returns the patched pod (or None)."""
    if not check(name + ": status 200", resp.status == 200, repr(resp)):
        return None
    check(name + ": content type", resp.headers.get("content-type") == "application/json", resp.headers)
    doc = resp.json()
    r = doc.get("response", {})
    check(name + ": envelope", doc.get("apiVersion") == "admission.k8s.io/v1" and doc.get("kind") == "AdmissionReview",
          doc)
    check(name + ": uid echoed", r.get("uid") == review_obj["request"]["uid"], r.get("uid"))
    check(name + ": allowed", r.get("allowed") is True, r)
    if not check(name + ": JSONPatch", r.get("patchType") == "JSONPatch" and "patch" in r, r):
        return None
    patch = json.loads(base64.b64decode(r["patch"], validate=True))
    try:
        return jsonpatch.apply_patch(review_obj["request"]["object"], patch)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        check(name + ": patch applies", False, repr(e))
        return None


def check_allowed_unpatched(name, review_obj, resp, warnings_expected=None):
    if not check(name + ": status 200", resp.status == 200, repr(resp)):
        return
    r = resp.json().get("response", {})
    check(name + ": uid echoed", r.get("uid") == review_obj["request"]["uid"], r)
    check(name + ": allowed", r.get("allowed") is True, r)
    check(name + ": no patch", "patch" not in r and "patchType" not in r, r)
    check(name + ": warnings", r.get("warnings") == warnings_expected, r.get("warnings"))


def bad_body(srv, name, body, message):
    """A POST that review.c must refuse with 400 and exactly this message."""
    try:
        r = srv.call("POST", "/mutate-v1-pod", body)
    except (OSError, EOFError, ValueError) as e:
        check(name, False, repr(e))
        srv.healthy(name)
        return
    if r.status == 400:
        srv.results["rejected"] += 1
        srv.errors["bad_request"] += 1
    expected = json.dumps({"error": message}, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
    check(name + ": 400", r.status == 400 and r.reason == "Bad Request", repr(r))
    check(name + ": body", r.body == expected, "%r != %r" % (r.body, expected))
    check(name + ": content type", r.headers.get("content-type") == "application/json", r.headers)
    srv.healthy(name)


# ---------------------------------------------------------------------------
# The tests.

def test_happy_paths(srv):
    # Java, from the example review: env order, exact values, volumes.
    rv = java_review()
    pod = apply_response("java", rv, srv.admit(rv))
    srv.inject("java")
    if pod:
        spec = pod["spec"]
        check("java: init containers", names(spec.get("initContainers")) == ["opentelemetry-auto-instrumentation-java"],
              names(spec.get("initContainers")))
        init = spec["initContainers"][0]
        check("java: init command", init.get("command") == ["cp", "/javaagent.jar",
                                                            "/otel-auto-instrumentation-java/javaagent.jar"], init)
        check("java: containers", names(spec["containers"]) == ["myapp"], names(spec["containers"]))
        app = spec["containers"][0]
        env = env_of(app)
        check("java: JAVA_TOOL_OPTIONS",
              env.get("JAVA_TOOL_OPTIONS") == " -javaagent:/otel-auto-instrumentation-java-myapp/javaagent.jar", env)
        check("java: env order", [e["name"] for e in app["env"]] == [
            "OTEL_NODE_IP", "OTEL_POD_IP", "JAVA_OPTS", "SPRING_PROFILES_ACTIVE", "OTEL_JAVAAGENT_DEBUG",
            "JAVA_TOOL_OPTIONS", "OTEL_SERVICE_NAME", "OTEL_EXPORTER_OTLP_ENDPOINT",
            "OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "OTEL_PROPAGATORS",
            "OTEL_RESOURCE_ATTRIBUTES"], [e["name"] for e in app["env"]])
        check("java: existing env kept", env.get("JAVA_OPTS") == "-Xmx512m" and env.get("SPRING_PROFILES_ACTIVE") == "prod",
              env)
        check("java: service name", env.get("OTEL_SERVICE_NAME") == "my-java", env.get("OTEL_SERVICE_NAME"))
        check("java: endpoint", env.get("OTEL_EXPORTER_OTLP_ENDPOINT") == "http://collector:4318", env)
        check("java: propagators", env.get("OTEL_PROPAGATORS") == "tracecontext,baggage", env)
        check("java: agent env", env.get("OTEL_JAVAAGENT_DEBUG") == "true", env)
        check("java: resource attributes", env.get("OTEL_RESOURCE_ATTRIBUTES") ==
              "k8s.container.name=myapp,k8s.deployment.name=my-java,k8s.namespace.name=default,"
              "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
              "k8s.replicaset.name=my-java-7b5d8f6c9,service.instance.id=default.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME)"
              ".myapp,service.namespace=default,service.version=1.4.2", env.get("OTEL_RESOURCE_ATTRIBUTES"))
        check("java: mount", {"name": "opentelemetry-auto-instrumentation-java",
                              "mountPath": "/otel-auto-instrumentation-java-myapp"} in app["volumeMounts"],
              app["volumeMounts"])
        check("java: volume", {"name": "opentelemetry-auto-instrumentation-java", "emptyDir": {"sizeLimit": "200Mi"}}
              in spec["volumes"], spec["volumes"])
        check("java: untouched parts", spec["tolerations"] == rv["request"]["object"]["spec"]["tolerations"] and
              pod["metadata"]["ownerReferences"] == rv["request"]["object"]["metadata"]["ownerReferences"])
        # The API server may call again with the mutated pod: nothing more to do.
        again = make_review(pod, uid="uid-java-again")
        check_allowed_unpatched("java reinvocation", again, srv.admit(again))

    # dryRun is answered exactly like a real request.
    rv_dry = java_review()
    rv_dry["request"]["dryRun"] = True
    r1, r2 = srv.admit(java_review()), srv.admit(rv_dry)
    srv.inject("java", 2)
    check("dryRun: same answer", r1.status == r2.status == 200 and r1.body == r2.body, "%r / %r" % (r1, r2))

    # Node.js
    rv = make_review(small_pod("p-nodejs", {"instrumentation.opentelemetry.io/inject-nodejs": "nodejs-inst"}),
                     uid="uid-nodejs")
    pod = apply_response("nodejs", rv, srv.admit(rv))
    srv.inject("nodejs")
    if pod:
        spec = pod["spec"]
        check("nodejs: init containers", names(spec.get("initContainers")) == ["opentelemetry-auto-instrumentation-nodejs"],
              spec.get("initContainers"))
        check("nodejs: init command", spec["initContainers"][0].get("command") ==
              ["cp", "-r", "/autoinstrumentation/.", "/otel-auto-instrumentation-nodejs"], spec["initContainers"][0])
        env = env_of(spec["containers"][0])
        check("nodejs: NODE_OPTIONS",
              env.get("NODE_OPTIONS") == " --require /otel-auto-instrumentation-nodejs/autoinstrumentation.js", env)
        check("nodejs: metrics exporter", env.get("OTEL_METRICS_EXPORTER") == "otlp", env)
        check("nodejs: service name", env.get("OTEL_SERVICE_NAME") == "p-nodejs", env)
        check("nodejs: endpoint", env.get("OTEL_EXPORTER_OTLP_ENDPOINT") == "http://collector:4317", env)
        check("nodejs: mount", spec["containers"][0].get("volumeMounts") == [
            {"name": "opentelemetry-auto-instrumentation-nodejs", "mountPath": "/otel-auto-instrumentation-nodejs"}],
              spec["containers"][0].get("volumeMounts"))

    # Python
    rv = make_review(small_pod("p-python", {"instrumentation.opentelemetry.io/inject-python": "python-inst"}),
                     uid="uid-python")
    pod = apply_response("python", rv, srv.admit(rv))
    srv.inject("python")
    if pod:
        spec = pod["spec"]
        check("python: init containers", names(spec.get("initContainers")) == ["opentelemetry-auto-instrumentation-python"],
              spec.get("initContainers"))
        env = env_of(spec["containers"][0])
        check("python: PYTHONPATH", env.get("PYTHONPATH") ==
              "/otel-auto-instrumentation-python/opentelemetry/instrumentation/auto_instrumentation:"
              "/otel-auto-instrumentation-python", env)
        check("python: exporters", (env.get("OTEL_EXPORTER_OTLP_PROTOCOL"), env.get("OTEL_TRACES_EXPORTER"),
                                    env.get("OTEL_METRICS_EXPORTER"), env.get("OTEL_LOGS_EXPORTER")) ==
              ("http/protobuf", "otlp", "otlp", "otlp"), env)
        check("python: service name", env.get("OTEL_SERVICE_NAME") == "p-python", env)
        check("python: mount", spec["containers"][0].get("volumeMounts") == [
            {"name": "opentelemetry-auto-instrumentation-python", "mountPath": "/otel-auto-instrumentation-python"}],
              spec["containers"][0].get("volumeMounts"))

    # SDK: environment only.
    rv = make_review(small_pod("p-sdk", {"instrumentation.opentelemetry.io/inject-sdk": "sdk-inst"}), uid="uid-sdk")
    pod = apply_response("sdk", rv, srv.admit(rv))
    srv.inject("sdk")
    if pod:
        spec = pod["spec"]
        check("sdk: no init containers, no volumes", "initContainers" not in spec and "volumes" not in spec, spec)
        app = spec["containers"][0]
        check("sdk: no mounts", "volumeMounts" not in app, app)
        check("sdk: env", [(e["name"], e.get("value")) for e in app["env"]] == [
            ("OTEL_NODE_IP", None), ("OTEL_POD_IP", None), ("OTEL_SERVICE_NAME", "p-sdk"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317"), ("OTEL_RESOURCE_ATTRIBUTES_POD_NAME", None),
            ("OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", None),
            ("OTEL_RESOURCE_ATTRIBUTES", "k8s.container.name=app,k8s.namespace.name=default,"
             "k8s.node.name=$(OTEL_RESOURCE_ATTRIBUTES_NODE_NAME),k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME),"
             "service.instance.id=default.$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME).app,service.namespace=default,"
             "service.version=1")], app["env"])

    # Sidecar, legacy mode: a plain container after the app.
    rv = make_review(small_pod("p-sc", {"sidecar.opentelemetry.io/inject": "true"}), uid="uid-sidecar")
    pod = apply_response("sidecar legacy", rv, srv.admit(rv))
    srv.inject("sidecar-container")
    if pod:
        check_sidecar("sidecar legacy", pod, native=False)

    # The whole example (Java + sidecar): the webhook answers the patch `inject -o patch` prints.
    rv = make_review(uid="uid-example")
    rv["request"]["object"]["metadata"]["annotations"]["instrumentation.opentelemetry.io/inject-java"] = "java-inst"
    resp = srv.admit(rv)
    srv.inject("java")
    srv.inject("sidecar-container")
    pod = apply_response("example", rv, resp)
    cli = subprocess.run([BIN, "inject", "-f", "-", "-o", "patch", "--resources", RES_DIR],
                         input=json.dumps(rv["request"]["object"]), capture_output=True, text=True, timeout=60)
    if pod and check("example: inject -o patch rc", cli.returncode == 0, cli.stderr):
        check("example: same patch as the CLI",
              json.loads(base64.b64decode(resp.json()["response"]["patch"])) == json.loads(cli.stdout))

    # No annotations: allowed, no patch, no patchType.
    rv = make_review(small_pod("plain"), uid="uid-plain")
    check_allowed_unpatched("no annotations", rv, srv.admit(rv))

    # Not a pod, or not a CREATE: allowed untouched.
    rv = make_review(uid="uid-deploy", kind={"group": "apps", "version": "v1", "kind": "Deployment"},
                     resource={"group": "apps", "version": "v1", "resource": "deployments"})
    check_allowed_unpatched("non-Pod kind", rv, srv.admit(rv))
    rv = make_review(uid="uid-delete", operation="DELETE", object=None, oldObject=EXAMPLE["request"]["object"])
    check_allowed_unpatched("DELETE", rv, srv.admit(rv))
    rv = make_review(uid="uid-update", operation="UPDATE", oldObject=EXAMPLE["request"]["object"])
    check_allowed_unpatched("UPDATE", rv, srv.admit(rv))
    rv = make_review(uid="uid-status", subResource="status")
    check_allowed_unpatched("subresource", rv, srv.admit(rv))

    # A missing Instrumentation: allowed, unpatched, and the reason as a warning.
    rv = make_review(small_pod("p-missing", {"instrumentation.opentelemetry.io/inject-java": "missing"}),
                     uid="uid-missing")
    check_allowed_unpatched("missing Instrumentation", rv, srv.admit(rv), [
        "otel-webhook: inject-java: Instrumentation default/missing not found; Java not injected"])

    # A misspelt opt-in asks for nothing; the answer says so
    # (skips_total{reason="unknown_annotation"}, checked in main()).
    rv = make_review(small_pod("p-typo", {"instrumentation.opentelemetry.io/inject-jaav": "java-inst"}),
                     uid="uid-typo")
    check_allowed_unpatched("misspelt annotation", rv, srv.admit(rv), [
        "otel-webhook: annotation instrumentation.opentelemetry.io/inject-jaav is not one otel-webhook knows; "
        "did you mean instrumentation.opentelemetry.io/inject-java?"])

    # A container list naming a container the pod lacks: the rest is
    # injected, the name is said (skips_total{reason="unknown_container"}).
    rv = make_review(small_pod("p-gone", {"instrumentation.opentelemetry.io/inject-sdk": "sdk-inst",
                                          "instrumentation.opentelemetry.io/container-names": "app,gone"}),
                     uid="uid-gone")
    resp = srv.admit(rv)
    srv.inject("sdk")
    if apply_response("missing container", rv, resp):
        check("missing container: warning", resp.json()["response"].get("warnings") ==
              ["otel-webhook: inject-sdk: no container named gone in the pod"], resp.json()["response"])


def check_sidecar(name, pod, native):
    spec = pod["spec"]
    check(name + ": label", pod["metadata"].get("labels", {}).get("sidecar.opentelemetry.io/injected") ==
          "default.sidecar-for-my-app", pod["metadata"])
    if native:
        check(name + ": containers", names(spec["containers"]) == ["app"], names(spec["containers"]))
        check(name + ": init containers", names(spec.get("initContainers")) == ["otc-container"],
              names(spec.get("initContainers")))
        otc = (spec.get("initContainers") or [{}])[0]
        check(name + ": restartPolicy Always", otc.get("restartPolicy") == "Always", otc.get("restartPolicy"))
    else:
        check(name + ": containers", names(spec["containers"]) == ["app", "otc-container"], names(spec["containers"]))
        check(name + ": no init containers", "initContainers" not in spec, spec.get("initContainers"))
        otc = spec["containers"][-1]
        check(name + ": no restartPolicy", "restartPolicy" not in otc, otc)
    check(name + ": image", otc.get("image") ==
          "ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.158.0", otc.get("image"))
    check(name + ": args", otc.get("args") == ["--config=env:OTEL_CONFIG"], otc.get("args"))
    check(name + ": ports", otc.get("ports") == [{"name": "jaeger-grpc", "containerPort": 14250, "protocol": "TCP"},
                                                 {"name": "metrics", "containerPort": 8888, "protocol": "TCP"}],
          otc.get("ports"))
    check(name + ": config", "endpoint: 0.0.0.0:14250" in (env_of(otc).get("OTEL_CONFIG") or ""), env_of(otc))
    check(name + ": volume", spec.get("volumes") == [{"name": "configmap-example-config",
                                                      "configMap": {"name": "example-config"}}], spec.get("volumes"))


def test_bad_inputs(srv):
    valid = json.dumps(java_review()).encode()
    bad_body(srv, "invalid JSON", b'{"kind": AdmissionReview}', "invalid JSON: unexpected character")
    bad_body(srv, "truncated JSON", valid[: len(valid) // 2], "invalid JSON: the body ends in the middle of a value")
    bad_body(srv, "empty body", b"", "empty request body")
    bad_body(srv, "trailing garbage", valid + b" {}", "invalid JSON: unexpected data after the value")
    bad_body(srv, "JSON array", b"[" + valid + b"]", "expected an AdmissionReview object")
    bad_body(srv, "JSON string", b'"AdmissionReview"', "expected an AdmissionReview object")
    # A complete JSON value that is not an object is not "truncated".
    bad_body(srv, "JSON number", b"123", "expected an AdmissionReview object")
    bad_body(srv, "JSON literal", b"true", "expected an AdmissionReview object")
    rv = java_review()
    rv["apiVersion"] = "admission.k8s.io/v1beta1"
    bad_body(srv, "wrong apiVersion", json.dumps(rv).encode(),
             'unsupported apiVersion "admission.k8s.io/v1beta1": expected admission.k8s.io/v1')
    rv = java_review()
    rv["kind"] = "AdmissionRequest"
    bad_body(srv, "wrong kind", json.dumps(rv).encode(), 'unsupported kind "AdmissionRequest": expected AdmissionReview')
    rv = java_review()
    del rv["request"]
    bad_body(srv, "no request", json.dumps(rv).encode(), "the AdmissionReview has no request")
    rv = java_review()
    del rv["request"]["uid"]
    bad_body(srv, "no uid", json.dumps(rv).encode(), "request.uid is missing")
    rv = java_review()
    rv["request"]["uid"] = ""
    bad_body(srv, "empty uid", json.dumps(rv).encode(), "request.uid is missing")
    rv = java_review()
    del rv["request"]["object"]
    bad_body(srv, "Pod CREATE without object", json.dumps(rv).encode(), "request.object is missing or not an object")

    # Methods and paths.
    for name, method, path, status, reason, body in [
            ("GET /mutate-v1-pod", "GET", "/mutate-v1-pod", 405, "Method Not Allowed",
             b'{"error":"method not allowed: use POST"}\n'),
            ("PUT /mutate-v1-pod", "PUT", "/mutate-v1-pod", 405, "Method Not Allowed",
             b'{"error":"method not allowed: use POST"}\n'),
            ("POST /healthz", "POST", "/healthz", 405, "Method Not Allowed", b'{"error":"method not allowed: use GET"}\n'),
            ("unknown path", "GET", "/nope", 404, "Not Found", b'{"error":"not found"}\n'),
            ("POST unknown path", "POST", "/mutate", 404, "Not Found", b'{"error":"not found"}\n')]:
        try:
            r = srv.call(method, path, b"{}" if method in ("POST", "PUT") else None)
            check(name + ": status", r.status == status and r.reason == reason, repr(r))
            check(name + ": body", r.body == body, repr(r.body))
            check(name + ": content type", r.headers.get("content-type") == "application/json", r.headers)
        except (OSError, EOFError, ValueError) as e:
            check(name, False, repr(e))
        srv.errors["method_not_allowed" if status == 405 else "not_found"] += 1
        srv.healthy(name)

    # Truncated body: a Content-Length the client never completes, then it hangs up.
    try:
        c = srv.conn()
        c.send(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5000\r\n\r\n" + valid[:100])
        c.close()
        check("truncated body: sent", True)
    except OSError as e:
        check("truncated body: sent", False, repr(e))
    srv.healthy("truncated body")

    # Chunked upload of a valid review, in several chunks: answered like a plain one.
    rv = java_review("uid-chunked")
    body = json.dumps(rv).encode()
    try:
        c = srv.conn()
        c.send(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
               b"Transfer-Encoding: chunked\r\n\r\n")
        step = len(body) // 4 + 1
        for i in range(0, len(body), step):
            part = body[i:i + step]
            c.send(b"%x\r\n%s\r\n" % (len(part), part))
        c.send(b"0\r\n\r\n")
        r = c.read_response()
        srv.count(rv, r)
        srv.inject("java")
        ref = srv.admit(rv)
        srv.inject("java")
        check("chunked upload: 200 with a patch", r.status == 200 and "patch" in r.json()["response"], repr(r))
        check("chunked upload: same answer as Content-Length", r.body == ref.body)
        # The connection is still usable afterwards.
        r2 = c.request("GET", "/healthz")
        check("chunked upload: keep-alive", r2.status == 200 and r2.body == b"ok\n", repr(r2))
        c.close()
    except (OSError, EOFError, ValueError) as e:
        check("chunked upload", False, repr(e))
    srv.healthy("chunked upload")

    # Framing errors h2o answers itself (counted as bad requests, not as reviews).
    for name, raw, body in [
            ("broken chunked encoding", b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\n"
             b"Transfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n", b"broken chunked-encoding"),
            ("broken Content-Length", b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n",
             b"broken content-length header")]:
        try:
            c = srv.conn()
            c.send(raw)
            r = c.read_response()
            srv.errors["bad_request"] += 1
            check(name + ": 400", r.status == 400 and r.body == body, repr(r))
            check(name + ": connection closed", r.headers.get("connection") == "close" and c.closed_by_peer(5))
            c.close()
        except (OSError, EOFError, ValueError) as e:
            check(name, False, repr(e))
        srv.healthy(name)

    # Plain HTTP to the TLS port: no HTTP answer, the connection is closed.
    try:
        s = socket.create_connection(("127.0.0.1", srv.port), timeout=5)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        got, closed = b"", False
        try:
            while len(got) < 65536:
                d = s.recv(4096)
                if not d:
                    closed = True
                    break
                got += d
        except socket.timeout:
            pass
        except OSError:
            closed = True
        s.close()
        check("plaintext: no HTTP answer", not got.startswith(b"HTTP/"), repr(got[:100]))
        check("plaintext: closed or TLS alert", closed or got[:1] == b"\x15", repr(got[:100]))
    except OSError as e:
        check("plaintext", False, repr(e))
    srv.healthy("plaintext")

    # An error message cut to its buffer must stay valid UTF-8 (a JSON text must be).
    rv = java_review()
    rv["apiVersion"] = "\u00e9" * 300
    try:
        r = srv.call("POST", "/mutate-v1-pod", json.dumps(rv, ensure_ascii=False).encode())
        if r.status == 400:
            srv.results["rejected"] += 1
            srv.errors["bad_request"] += 1
        check("long non-ASCII apiVersion: 400", r.status == 400, repr(r))
        try:
            msg = json.loads(r.body.decode("utf-8"))["error"]
            check("long non-ASCII apiVersion: message", msg.startswith('unsupported apiVersion "' + "\u00e9" * 10), msg)
        except (UnicodeDecodeError, ValueError, KeyError) as e:
            check("long non-ASCII apiVersion: body is UTF-8 JSON", False, "%s: %s ... %r" % (
                type(e).__name__, getattr(e, "reason", e), r.body[-12:]))
    except (OSError, EOFError, ValueError) as e:
        check("long non-ASCII apiVersion", False, repr(e))
    srv.healthy("long non-ASCII apiVersion")
    # The same for a warning quoting a long non-ASCII Instrumentation name.
    rv = make_review(small_pod("p-utf8", {"instrumentation.opentelemetry.io/inject-java": "\u00e9" * 200}),
                     uid="uid-utf8")
    try:
        r = srv.call("POST", "/mutate-v1-pod", json.dumps(rv, ensure_ascii=False).encode())
        check("long non-ASCII Instrumentation name: 200", r.status == 200, repr(r))
        try:
            w = json.loads(r.body.decode("utf-8"))["response"]["warnings"]
            srv.results["unchanged"] += 1
            check("long non-ASCII Instrumentation name: warning",
                  len(w) == 1 and w[0].startswith("otel-webhook: inject-java: Instrumentation default/\u00e9"), w)
        except (UnicodeDecodeError, ValueError, KeyError) as e:
            srv.results["unchanged"] += 1
            check("long non-ASCII Instrumentation name: body is UTF-8 JSON", False, "%s: %s ... %r" % (
                type(e).__name__, getattr(e, "reason", e), r.body[-40:]))
    except (OSError, EOFError, ValueError) as e:
        check("long non-ASCII Instrumentation name", False, repr(e))

    # Pods the API server would refuse (it decodes pods before admission, so
    # only another client sends these): allowed untouched, the field in the
    # warning, skips_total{reason="malformed"}, a warn line, not an internal error.
    for name, uid, field, value, warning in [
            ("containers as a map", "uid-malformed-1", "containers", {"name": "app", "image": "app:1"},
             "spec.containers: expected a list, got an object; nothing injected"),
            ("env value a number", "uid-malformed-2", "containers",
             [{"name": "app", "image": "app:1", "env": [{"name": "PORT", "value": 8080}]}],
             'spec.containers[0].env[0].value: expected a string, got a number (quote it: "8080"); nothing injected')]:
        pod = small_pod("p-malformed", {"sidecar.opentelemetry.io/inject": "true",
                                        "instrumentation.opentelemetry.io/inject-java": "java-inst"})
        pod["spec"][field] = value
        rv = make_review(pod, uid=uid)
        try:
            r = srv.call("POST", "/mutate-v1-pod", json.dumps(rv).encode())
            srv.results["failed_open"] += 1
            check_allowed_unpatched("malformed pod, " + name, rv, r, ["otel-webhook: " + warning])
        except (OSError, EOFError, ValueError) as e:
            check("malformed pod, " + name, False, repr(e))


def test_http_details(srv):
    # A long uid with quotes and non-ASCII is echoed exactly.
    uid = 'u\u00fc"\\/' + "x" * 300
    rv = make_review(small_pod("plain"), uid=uid)
    r = srv.admit(rv)
    check("long uid: echoed exactly", r.status == 200 and r.json()["response"]["uid"] == uid, repr(r))
    # HEAD: the headers of GET, no body; the connection stays in sync.
    try:
        c = srv.conn()
        c.send(b"HEAD /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        status_line = c._line()
        hdrs = {}
        while True:
            line = c._line()
            if not line:
                break
            k, v = line.decode().split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
        check("HEAD /healthz", status_line.startswith(b"HTTP/1.1 200") and hdrs.get("content-length") == "3", hdrs)
        r = c.request("GET", "/readyz")
        check("HEAD then GET on one connection", r.status == 200 and r.body == b"ready\n", repr(r))
        c.close()
    except (OSError, EOFError, ValueError) as e:
        check("HEAD /healthz", False, repr(e))
    # Pipelined reviews, answered in order.
    try:
        c = srv.conn()
        reviews = [java_review("pipe-%d" % i) for i in range(3)]
        data = b""
        for rv in reviews:
            b = json.dumps(rv).encode()
            data += b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s" % (len(b), b)
        c.send(data)
        uids = []
        for rv in reviews:
            r = c.read_response()
            srv.count(rv, r)
            srv.inject("java")
            uids.append(r.json()["response"]["uid"] if r.status == 200 else r.status)
        check("pipelined reviews answered in order", uids == ["pipe-0", "pipe-1", "pipe-2"], uids)
        c.close()
    except (OSError, EOFError, ValueError) as e:
        check("pipelined reviews", False, repr(e))
    srv.healthy("pipelining")


def tls_client(ca, minv, maxv, seclevel0=False, alpn=None):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.load_verify_locations(ca)
    ctx.minimum_version, ctx.maximum_version = minv, maxv
    if seclevel0:
        ctx.set_ciphers("DEFAULT@SECLEVEL=0")
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


def handshake(srv, ctx):
    """(ok, detail): detail is the Conn when ok, else the exception text."""
    try:
        c = srv.conn(ctx, timeout=5)
        return True, c
    except (ssl.SSLError, OSError) as e:
        return False, "%s: %s" % (type(e).__name__, e)


def test_tls(srv, ca):
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1, seclevel0=True))
    check("TLS 1.0 client refused", not ok, "negotiated %s" % (d.s.version() if ok else ""))
    check("TLS 1.0 client reached the server", ok or "NO_PROTOCOLS_AVAILABLE" not in str(d), d)
    if ok:
        d.close()
    srv.healthy("TLS 1.0 client")
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2))
    if check("TLS 1.2 client accepted", ok, d):
        check("TLS 1.2 negotiated", d.s.version() == "TLSv1.2", d.s.version())
        r = d.request("GET", "/healthz")
        check("TLS 1.2 request", r.status == 200 and r.body == b"ok\n", repr(r))
        d.close()
    # HTTP/2 is off by default: an h2 offer gets HTTP/1.1.
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3, alpn=["h2", "http/1.1"]))
    if check("ALPN h2,http/1.1 handshake", ok, d):
        check("ALPN without --http2 selects http/1.1", d.s.selected_alpn_protocol() in ("http/1.1", None),
              d.s.selected_alpn_protocol())
        r = d.request("GET", "/healthz")
        check("ALPN without --http2: HTTP/1.1 request", r.status == 200, repr(r))
        d.close()
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3, alpn=["h2"]))
    if ok:
        check("ALPN h2 only: not negotiated", d.s.selected_alpn_protocol() is None, d.s.selected_alpn_protocol())
        d.close()
    srv.healthy("TLS versions")


def test_many_connections(srv, n=1000):
    """n TLS connections open at once, then one review on each."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 256
    if soft < want:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard) if hard != resource.RLIM_INFINITY else want,
                                                        hard))
        except (ValueError, OSError):
            pass
    sel = selectors.DefaultSelector()
    raw, done, errors = {}, {}, []
    start = time.monotonic()
    deadline = start + 40
    for i in range(n):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        rc = s.connect_ex(("127.0.0.1", srv.port))
        if rc not in (0, 115):  # EINPROGRESS
            errors.append("connect %d: %s" % (i, os.strerror(rc)))
            s.close()
            continue
        raw[i] = s
        sel.register(s, selectors.EVENT_WRITE, ("connect", i))
    while len(done) + len(errors) < n and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            what, i = key.data
            if what == "connect":
                s = raw.pop(i)
                sel.unregister(s)
                err = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                if err:
                    errors.append("connect %d: %s" % (i, os.strerror(err)))
                    s.close()
                    continue
                ss = srv.ctx.wrap_socket(s, server_hostname="localhost", do_handshake_on_connect=False)
                raw[i] = ss
                sel.register(ss, selectors.EVENT_READ | selectors.EVENT_WRITE, ("tls", i))
            ss = raw[i]
            try:
                ss.do_handshake()
            except ssl.SSLWantReadError:
                sel.modify(ss, selectors.EVENT_READ, ("tls", i))
                continue
            except ssl.SSLWantWriteError:
                sel.modify(ss, selectors.EVENT_WRITE, ("tls", i))
                continue
            except (ssl.SSLError, OSError) as e:
                errors.append("handshake %d: %r" % (i, e))
                sel.unregister(ss)
                raw.pop(i).close()
                continue
            sel.unregister(ss)
            done[i] = raw.pop(i)
    t_open = time.monotonic() - start
    for s in raw.values():
        s.close()
    sel.close()
    check("%d connections: all handshakes" % n, len(done) == n and not errors,
          "%d done, %d errors, first: %s" % (len(done), len(errors), errors[:3]))
    try:
        socks = sum(1 for fd in os.listdir("/proc/%d/fd" % srv.proc.pid)
                    if os.readlink("/proc/%d/fd/%s" % (srv.proc.pid, fd)).startswith("socket:"))
        check("%d connections: held open by the server" % n, socks >= n, "%d sockets" % socks)
    except OSError as e:
        check("%d connections: held open by the server" % n, False, repr(e))
    # One review on each, all sent before any answer is read.
    conns, bad = {}, []
    for i, ss in done.items():
        ss.setblocking(True)
        ss.settimeout(20)
        c = Conn(srv.port, None, sock=ss)
        rv = java_review("conc-%d" % i)
        try:
            c.send(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s" %
                   (len(json.dumps(rv)), json.dumps(rv).encode()))
            conns[i] = (c, rv)
        except OSError as e:
            bad.append("send %d: %r" % (i, e))
            c.close()
    for i, (c, rv) in conns.items():
        try:
            r = c.read_response()
            srv.count(rv, r)
            if r.status == 200 and "patch" in r.json()["response"]:
                srv.inject("java")
            if r.status != 200 or r.json()["response"]["uid"] != "conc-%d" % i:
                bad.append("%d: %r" % (i, r))
        except (OSError, EOFError, ValueError) as e:
            bad.append("recv %d: %r" % (i, e))
        c.close()
    check("%d connections: every review answered 200 with its uid" % n, not bad and len(conns) == n,
          "%d bad, first: %s" % (len(bad), bad[:3]))
    print("  (%d connections opened in %.1f s, answered by %.1f s)" % (n, t_open, time.monotonic() - start))
    srv.healthy("%d connections" % n)


def test_limits(srv):
    """--max-body 65536 --request-timeout 1."""
    # Over the cap: h2o answers 413 as soon as it sees the Content-Length.
    body = b"x" * (70 * 1024)
    try:
        c = srv.conn()
        c.send(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % len(body))
        try:
            c.send(body)
        except OSError:
            pass  # the server may close before reading it all
        r = c.read_response()
        srv.errors["too_large"] += 1
        check("70 KB body: 413", r.status == 413 and r.reason == "Request Entity Too Large", repr(r))
        check("70 KB body: h2o's body", r.body == b"request entity is too large", repr(r.body))
        check("70 KB body: h2o's content type", r.headers.get("content-type") == "text/plain; charset=utf-8",
              r.headers)
        check("70 KB body: connection closed", r.headers.get("connection") == "close" and c.closed_by_peer(5),
              r.headers)
        c.close()
    except (OSError, EOFError, ValueError) as e:
        check("70 KB body", False, repr(e))
    srv.healthy("70 KB body")
    # Just under the cap is read and parsed.
    pad = java_review("uid-64k")
    pad["request"]["object"]["metadata"]["annotations"]["pad"] = ""
    base = len(json.dumps(pad).encode())
    pad["request"]["object"]["metadata"]["annotations"]["pad"] = "p" * (65536 - base)
    rv_body = json.dumps(pad).encode()
    r = srv.call("POST", "/mutate-v1-pod", rv_body)
    srv.count(pad, r)
    srv.inject("java", 1 if r.status == 200 and "patch" in r.json().get("response", {}) else 0)
    check("64 KiB body: accepted", len(rv_body) == 65536 and r.status == 200, "%d bytes: %r" % (len(rv_body), r))

    # A client that stalls in its body is closed after --request-timeout,
    # while other connections keep being answered.
    valid = json.dumps(java_review("uid-slow")).encode()
    try:
        slow = srv.conn()
        slow.send(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s" %
                  (len(valid), valid[:200]))
        t0 = time.monotonic()
        other = srv.conn()
        for i in range(3):
            r = other.request("GET", "/healthz")
            check("slow client: others answered meanwhile (%d)" % i, r.status == 200 and r.body == b"ok\n", repr(r))
        rv = java_review("uid-meanwhile")
        r = srv.admit(rv, other)
        srv.inject("java")
        check("slow client: reviews answered meanwhile", r.status == 200 and r.json()["response"]["uid"] ==
              "uid-meanwhile", repr(r))
        other.close()
        meanwhile = time.monotonic() - t0
        closed = slow.closed_by_peer(5 - meanwhile)
        elapsed = time.monotonic() - t0
        check("slow client: closed by the server", closed, "still open after %.1f s" % elapsed)
        check("slow client: closed within the bound", 0.5 <= elapsed < 5, "%.2f s" % elapsed)
        slow.close()
    except (OSError, EOFError, ValueError) as e:
        check("slow client", False, repr(e))
    srv.healthy("slow client")

    # A client that trickles its body one byte at a time is closed as well.
    try:
        slow = srv.conn()
        slow.send(b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n" % len(valid))
        t0 = time.monotonic()
        closed = False
        for i in range(len(valid)):
            if time.monotonic() - t0 > 5:
                break
            try:
                slow.send(valid[i:i + 1])
            except OSError:
                closed = True
                break
            if slow.closed_by_peer(0.2):
                closed = True
                break
        elapsed = time.monotonic() - t0
        check("trickling client: closed within the bound", closed and elapsed < 5, "%.2f s, closed=%s" %
              (elapsed, closed))
        slow.close()
    except (OSError, EOFError, ValueError) as e:
        check("trickling client", False, repr(e))
    srv.healthy("trickling client")

    # An idle keep-alive connection is closed too.
    try:
        idle = srv.conn()
        r = idle.request("GET", "/healthz")
        t0 = time.monotonic()
        closed = idle.closed_by_peer(5)
        check("idle connection: closed after the timeout", closed and 0.5 <= time.monotonic() - t0 < 5,
              "%.2f s" % (time.monotonic() - t0))
        idle.close()
    except (OSError, EOFError, ValueError) as e:
        check("idle connection", False, repr(e))


def test_alt_tls(srv, ca):
    """--tls-min-version 1.3 --http2."""
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_2))
    check("--tls-min-version 1.3: TLS 1.2 client refused", not ok, "negotiated %s" % (d.s.version() if ok else ""))
    if ok:
        d.close()
    srv.healthy("TLS 1.2 client on a TLS 1.3 server")
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3))
    if check("--tls-min-version 1.3: TLS 1.3 client accepted", ok, d):
        check("--tls-min-version 1.3: TLS 1.3 negotiated", d.s.version() == "TLSv1.3", d.s.version())
        d.close()
    ok, d = handshake(srv, tls_client(ca, ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_3, alpn=["h2", "http/1.1"]))
    if check("--http2: handshake", ok, d):
        check("--http2: h2 selected", d.s.selected_alpn_protocol() == "h2", d.s.selected_alpn_protocol())
        d.close()
    srv.healthy("TLS 1.3 only")


def check_metrics(srv, cert_path):
    name = srv.name
    try:
        r, m = srv.metrics()
    except (OSError, EOFError, ValueError) as e:
        check(name + " metrics", False, repr(e))
        return None
    check(name + " metrics: 200", r.status == 200 and r.headers.get("content-type") == "text/plain; version=0.0.4",
          repr(r))
    for res, n in srv.results.items():
        got = m.get('otel_webhook_requests_total{result="%s"}' % res)
        check(name + " metrics: requests_total %s" % res, got == n, "got %s, expected %d" % (got, n))
    for kind, n in srv.errors.items():
        got = m.get('otel_webhook_errors_total{kind="%s"}' % kind)
        check(name + " metrics: errors_total %s" % kind, got == n, "got %s, expected %d" % (got, n))
    check(name + " metrics: errors_total internal", m.get('otel_webhook_errors_total{kind="internal"}') == 0)
    for what in ("java", "nodejs", "python", "sdk"):
        got = m.get('otel_webhook_injections_total{what="%s"}' % what)
        check(name + " metrics: injections %s" % what, got == srv.injections.get(what, 0),
              "got %s, expected %d" % (got, srv.injections.get(what, 0)))
    for mode in ("container", "native"):
        got = m.get('otel_webhook_sidecar_injections_total{mode="%s"}' % mode)
        check(name + " metrics: sidecar %s" % mode, got == srv.injections.get("sidecar-" + mode, 0),
              "got %s, expected %d" % (got, srv.injections.get("sidecar-" + mode, 0)))
    sidecars = srv.injections.get("sidecar-container", 0) + srv.injections.get("sidecar-native", 0)
    check(name + " metrics: sidecars of both forms", m.get('otel_webhook_injections_total{what="sidecar"}') == sidecars,
          m.get('otel_webhook_injections_total{what="sidecar"}'))
    check_exposition(name, r.body.decode())
    buckets = [(k, v) for k, v in m.items() if k.startswith("otel_webhook_request_duration_seconds_bucket")]
    values = [v for _, v in buckets]
    check(name + " metrics: histogram buckets", len(buckets) == 14 and buckets[-1][0].endswith('le="+Inf"}'),
          buckets)
    check(name + " metrics: histogram cumulative", all(a <= b for a, b in zip(values, values[1:])), values)
    total = sum(srv.results.values())
    check(name + " metrics: histogram count", values and values[-1] == total ==
          m.get("otel_webhook_request_duration_seconds_count"),
          "+Inf %s, count %s, requests %d" % (values[-1:], m.get("otel_webhook_request_duration_seconds_count"), total))
    check(name + " metrics: histogram sum", 0 < m.get("otel_webhook_request_duration_seconds_sum", 0) < total * 1.0)
    exp = not_after(cert_path)
    check(name + " metrics: certificate expiry", m.get("otel_webhook_certificate_expiry_timestamp_seconds") == exp,
          "got %s, notAfter %d" % (m.get("otel_webhook_certificate_expiry_timestamp_seconds"), exp))
    check(name + " metrics: ready", m.get("otel_webhook_ready") == 1)
    return m


def check_exposition(name, text):
    return metricslib.check_exposition(check, name, text, ROOT, BIN)


def check_store_metrics(name, m):
    for kind, n in STORE_EXPECTED.items():
        got = m.get('otel_webhook_store_objects{kind="%s"}' % kind)
        check(name + " metrics: store objects %s" % kind, got == n, "got %s, expected %d" % (got, n))
    check(name + " metrics: no failing files", m.get("otel_webhook_resource_files_failing") == 0)


def log_lines(srv):
    return [l for l in srv.stderr().splitlines()
            if l and not any(mk in l for mk in SANITIZER_MARKERS) and not l.startswith(("    #", "=="))]


def check_json_logs(srv):
    lines, bad = log_lines(srv), []
    recs = []
    for l in lines:
        try:
            o = json.loads(l)
        except ValueError:
            bad.append(l)
            continue
        if not (isinstance(o, dict) and all(isinstance(o.get(k), str) for k in ("time", "level", "msg")) and
                re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]) and
                o["level"] in ("debug", "info", "warn", "error")):
            bad.append(l)
        recs.append(o)
    check("JSON logs: every line is a JSON object with time, level, msg", lines and not bad, bad[:3])
    check("JSON logs: serving line", any(o.get("msg") == "serving" and o.get("listen") == "127.0.0.1:%d" % srv.port
                                         for o in recs))
    check("JSON logs: bad request logged", any(o.get("msg") == "bad admission request" and o.get("level") == "warn" and
                                               o.get("error") == "empty request body" for o in recs))
    check("JSON logs: mutation logged", any(o.get("msg") == "mutated" and o.get("uid") == "uid-java" and
                                            o.get("injected") == "java" for o in recs))
    # Counts and durations are JSON numbers, not strings.
    mutated = [o for o in recs if o.get("msg") == "mutated" and o.get("uid") == "uid-java"]
    check("JSON logs: warnings and micros are JSON numbers", mutated and all(
        type(o.get("warnings")) is int and type(o.get("micros")) is int and o["micros"] >= 0 for o in mutated),
        mutated[:1])
    check("JSON logs: threads is a JSON number", any(o.get("msg") == "serving" and type(o.get("threads")) is int and
                                                     o["threads"] == 2 for o in recs))
    check("JSON logs: malformed pod logged", any(
        o.get("msg") == "failed open" and o.get("level") == "warn" and o.get("uid") == "uid-malformed-1" and
        o.get("warning") == "spec.containers: expected a list, got an object; nothing injected" for o in recs),
        [o for o in recs if o.get("uid") == "uid-malformed-1"])


def check_text_logs(srv):
    lines = log_lines(srv)
    pat = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (DEBUG|INFO|WARN|ERROR) \S")
    bad = [l for l in lines if not pat.match(l)]
    check("text logs: every line is TIME LEVEL msg", lines and not bad, bad[:3])
    check("text logs: serving line", any(" INFO serving listen=127.0.0.1:%d threads=2 http2=on " % srv.port in l
                                         for l in lines), lines[:3])
    check("text logs: numbers as plain words", any(re.search(r" INFO mutated .* warnings=\d+ micros=\d+( |$)", l)
                                                   for l in lines), lines[:5])
    check("text logs: not JSON", not any(l.startswith("{") for l in lines))


# --- Rotation -------------------------------------------------------------

def test_rotation(srv, ca_crt, ca_key, work, secret_dir, first_crt):
    pairs = [new_pair(ca_crt, ca_key, work, "rot%d" % i, 30 + i) for i in range(1, 5)]
    stop = threading.Event()
    stats = {"ok": 0, "fail": []}
    lock = threading.Lock()
    small = make_review(small_pod("rot"), uid="uid-rot")
    body = json.dumps(small).encode()
    hard_deadline = time.monotonic() + 30

    def keepalive():
        c = None
        while not stop.is_set() and time.monotonic() < hard_deadline:
            try:
                if c is None:
                    c = srv.conn(timeout=5)
                r = c.request("POST", "/mutate-v1-pod", body)
                ok = r.status == 200 and r.json()["response"]["uid"] == "uid-rot"
                with lock:
                    stats["ok" if ok else "fail"] += 1 if ok else [repr(r)]
                if r.headers.get("connection") == "close":
                    c.close()
                    c = None
            except (OSError, EOFError, ValueError) as e:
                with lock:
                    stats["fail"].append("keep-alive: %r" % e)
                if c:
                    c.close()
                c = None
        if c:
            c.close()

    def reconnect():
        while not stop.is_set() and time.monotonic() < hard_deadline:
            try:
                c = srv.conn(timeout=5)
                r = c.request("POST", "/mutate-v1-pod", body, headers=[("Connection", "close")])
                c.close()
                ok = r.status == 200 and r.json()["response"]["uid"] == "uid-rot"
                with lock:
                    stats["ok" if ok else "fail"] += 1 if ok else [repr(r)]
            except (OSError, EOFError, ValueError) as e:
                with lock:
                    stats["fail"].append("new connection: %r" % e)

    threads = [threading.Thread(target=f) for f in (keepalive, keepalive, reconnect, reconnect)]
    for t in threads:
        t.start()
    try:
        prev_fp = pem_sha256(first_crt)
        check("rotation: initial certificate served", fresh_fingerprint(srv) == prev_fp)
        for i, (crt, key) in enumerate(pairs[:3], 1):
            kubelet_publish(secret_dir, "2026_11_29_%02d" % i, crt, key)
            t0 = time.monotonic()
            want = pem_sha256(crt)
            fp = None
            while time.monotonic() - t0 < 4:
                fp = fresh_fingerprint(srv)
                if fp == want:
                    break
                time.sleep(0.05)  # poll interval
            took = time.monotonic() - t0
            check("rotation %d: new certificate served" % i, fp == want, "after %.2f s: %s" % (took, fp))
            check("rotation %d: within 2 s" % i, took <= 2.0, "%.2f s" % took)
            print("  (rotation %d seen after %.2f s)" % (i, took))
            prev_fp = want
        # A new certificate with the previous key: refused, the pair in service stays.
        bad_crt = pairs[3][0]
        kubelet_publish(secret_dir, "2026_11_29_99", bad_crt, pairs[2][1])
        t0 = time.monotonic()
        seen = False
        while time.monotonic() - t0 < 4:
            if "rotated certificate refused" in srv.stderr():
                seen = True
                break
            time.sleep(0.05)  # poll interval
        check("mismatched pair: logged 'rotated certificate refused'", seen)
        check("mismatched pair: previous certificate still served", fresh_fingerprint(srv) == prev_fp)
        # Give the watcher another tick: still the previous pair.
        t1 = time.monotonic()
        fp = prev_fp
        while time.monotonic() - t1 < 1.2 and fp == prev_fp:
            fp = fresh_fingerprint(srv)
            time.sleep(0.1)  # poll interval
        check("mismatched pair: previous certificate kept", fp == prev_fp, fp)
    finally:
        stop.set()
        for t in threads:
            t.join(15)
    check("rotation under load: requests made", stats["ok"] > 20, stats["ok"])
    check("rotation under load: zero failed requests", not stats["fail"],
          "%d failed, first: %s" % (len(stats["fail"]), stats["fail"][:3]))
    print("  (rotation: %d requests under load)" % stats["ok"])
    # The refused pair is counted and the expiry gauge is the certificate in service.
    try:
        _, m = srv.metrics()
        check("rotation metrics: certificate_reload errors", m.get('otel_webhook_errors_total{kind="certificate_reload"}',
                                                                   0) >= 1, m.get(
            'otel_webhook_errors_total{kind="certificate_reload"}'))
        check("rotation metrics: expiry of the certificate in service",
              m.get("otel_webhook_certificate_expiry_timestamp_seconds") == not_after(pairs[2][0]),
              "%s vs %d" % (m.get("otel_webhook_certificate_expiry_timestamp_seconds"), not_after(pairs[2][0])))
    except (OSError, EOFError, ValueError) as e:
        check("rotation metrics", False, repr(e))


# --- SIGTERM ----------------------------------------------------------------

def test_sigterm(srv, grace):
    rv = java_review("uid-term")
    body = json.dumps(rv).encode()
    req = b"POST /mutate-v1-pod HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    stop = threading.Event()
    lock = threading.Lock()
    st = {"ok": 0, "after": 0, "bad": [], "refused": 0, "close": 0}
    signalled = [None]
    hard_deadline = time.monotonic() + 30

    def loop():
        while not stop.is_set() and time.monotonic() < hard_deadline:
            try:
                c = srv.conn(timeout=5)
            except (ssl.SSLError, OSError):
                with lock:
                    st["refused"] += 1  # a new connection after the listener closed
                if signalled[0] is not None:
                    return
                continue
            while not stop.is_set() and time.monotonic() < hard_deadline:
                try:
                    c.send(req)
                except OSError as e:
                    # The previous response was keep-alive, so the server
                    # still owed us this exchange.
                    with lock:
                        st["bad"].append("send: %r" % e)
                    break
                try:
                    r = c.read_response()
                except (OSError, EOFError, ValueError) as e:
                    with lock:
                        st["bad"].append("request sent, no response: %r" % e)
                    break
                with lock:
                    if r.status == 200 and r.json()["response"]["uid"] == "uid-term":
                        st["ok"] += 1
                        if signalled[0] is not None:
                            st["after"] += 1
                    else:
                        st["bad"].append(repr(r))
                if r.headers.get("connection") == "close":
                    with lock:
                        st["close"] += 1
                    break
            c.close()

    threads = [threading.Thread(target=loop) for _ in range(4)]
    for t in threads:
        t.start()
    t_wait = time.monotonic()
    while time.monotonic() - t_wait < 10:
        with lock:
            if st["ok"] >= 40:
                break
        time.sleep(0.02)  # poll interval
    check("SIGTERM: load running", st["ok"] >= 40, st)
    # A request whose body is half sent when the signal comes.
    partial = None
    try:
        partial = srv.conn()
        partial.send(req[: len(req) - len(body) // 2])
    except OSError as e:
        check("SIGTERM: half-sent request", False, repr(e))
    signalled[0] = time.monotonic()
    srv.proc.send_signal(signal.SIGTERM)
    if partial:
        while time.monotonic() - signalled[0] < 3 and "shutting down" not in srv.stderr():
            time.sleep(0.01)  # poll interval
        try:
            partial.send(req[len(req) - len(body) // 2:])
            r = partial.read_response()
            check("SIGTERM: request half-sent at the signal answered", r.status == 200 and
                  r.json()["response"]["uid"] == "uid-term", repr(r))
        except (OSError, EOFError, ValueError) as e:
            check("SIGTERM: request half-sent at the signal answered", False, repr(e))
        partial.close()
    try:
        rc = srv.proc.wait(grace + 5)
    except subprocess.TimeoutExpired:
        rc = "still running"
    took = time.monotonic() - signalled[0]
    stop.set()
    for t in threads:
        t.join(15)
    check("SIGTERM: exit status 0", rc == 0, "rc=%r" % rc)
    check("SIGTERM: exit within the grace period", took <= grace, "%.2f s" % took)
    check("SIGTERM: every response 200, no request lost", not st["bad"], st["bad"][:5])
    check("SIGTERM: in-flight requests answered with Connection: close", st["close"] >= 1, st)
    check("SIGTERM: stopped logged", '"msg":"stopped"' in srv.stderr())
    print("  (SIGTERM: %d responses, %d after the signal, exit after %.2f s)" % (st["ok"], st["after"], took))


def test_sigterm_idle(srv, grace):
    """The API server keeps idle keep-alive connections open: SIGTERM must
    still end in a clean exit 0 within the grace period, closing them."""
    try:
        c = srv.conn()
        rv = make_review(small_pod("plain"), uid="uid-idle")
        r = c.request("POST", "/mutate-v1-pod", json.dumps(rv).encode())
        check("SIGTERM idle: request before", r.status == 200 and r.headers.get("connection") != "close", repr(r))
    except (OSError, EOFError, ValueError) as e:
        check("SIGTERM idle: request before", False, repr(e))
        return
    t0 = time.monotonic()
    srv.proc.send_signal(signal.SIGTERM)
    closed = c.closed_by_peer(grace + 1)
    check("SIGTERM idle: idle connection closed by the server", closed, "after %.2f s" % (time.monotonic() - t0))
    try:
        rc = srv.proc.wait(max(0.1, grace + 2 - (time.monotonic() - t0)))
    except subprocess.TimeoutExpired:
        rc = "still running"
    took = time.monotonic() - t0
    c.close()
    check("SIGTERM idle: exit status 0", rc == 0, "rc=%r" % rc)
    check("SIGTERM idle: exit within the grace period", took <= grace, "%.2f s" % took)
    err = srv.stderr()
    bad = [l for l in err.splitlines() if any(mk in l for mk in SANITIZER_MARKERS)]
    frames = [l.strip() for l in err.splitlines() if l.startswith("    #1 ")]
    check("SIGTERM idle: no sanitizer reports", not bad, "%s; allocated in: %s" % (bad[:3], frames[:6]))


# ---------------------------------------------------------------------------

# --- Resource folder outage ------------------------------------------------

def wait_until(what, cond, timeout):
    """Polls cond() (a value or None; a connection error reads as None)
    until it is true or the deadline; checks it and returns it."""
    def attempt():
        try:
            return cond()
        except (OSError, EOFError, ValueError):
            return None
    v = wait_for(attempt, timeout, 0.05)[0]
    check(what, bool(v))
    return v


def json_log(srv):
    recs = []
    for l in log_lines(srv):
        try:
            recs.append(json.loads(l))
        except ValueError:
            pass
    return recs


def java_injected(srv, name, uid):
    rv = java_review(uid=uid)
    pod = apply_response(name, rv, srv.admit(rv))
    srv.inject("java")
    check(name + ": Java injected", pod is not None and
          names(pod["spec"].get("initContainers")) == ["opentelemetry-auto-instrumentation-java"])


def test_resources_outage(srv, res_dir, grace):
    """The issue's outage: the resources folder is renamed away under a
    running server. The last good objects stay in service, the failure is
    logged once and shown in /metrics, /readyz turns 503 only once the
    failure has lasted --resources-grace, and everything recovers, with
    what changed meanwhile, when the folder is back."""
    name = srv.name
    java_injected(srv, name + " before", "uid-outage-0")
    r, m = srv.metrics()
    since = "otel_webhook_resource_read_failure_since_timestamp_seconds"
    check(name + ": no failing folder", m.get("otel_webhook_resource_folders_failing") == 0 and since not in m, m)
    check(name + ": no read-failure sample, its family still described",
          "# TYPE %s gauge" % since in r.body.decode().splitlines(), r.body[-600:])

    away = res_dir + ".away"
    t_rename, t_rename_unix = time.monotonic(), time.time()
    os.rename(res_dir, away)
    m = wait_until(name + ": failing folder in /metrics", lambda: (lambda m: m if m.get(
        "otel_webhook_resource_folders_failing") == 1 else None)(srv.metrics()[1]), 10)
    if m:
        check_store_metrics(name + " during the outage", m)
        check(name + ": the failure counted once", m.get('otel_webhook_errors_total{kind="resource_file"}') == 1, m)
    java_injected(srv, name + " during the outage", "uid-outage-1")

    # 503 only once the failure is as old as the grace period.
    r = wait_until(name + ": /readyz 503 after the grace period",
                 lambda: (lambda r: r if r.status == 503 else None)(srv.call("GET", "/readyz")), grace + 10)
    t_503 = time.monotonic()
    check(name + ": not before the grace period", t_503 - t_rename >= grace, "%.2f s" % (t_503 - t_rename))
    if r:
        check(name + ": 503 body", r.body == b"not ready\n", r.body)
    r, m = srv.metrics()
    # The poll that first failed came within a second of the rename (a
    # rounding millisecond aside); its age is past the grace period.
    check(name + ": read failure since the rename, as a Unix time",
          t_rename_unix - 0.01 <= m.get(since, 0) <= t_rename_unix + 2 and time.time() - m[since] >= grace,
          (t_rename_unix, m.get(since), time.time()))
    check_exposition(name + " during the outage", r.body.decode())
    check(name + ": ready gauge 0", m.get("otel_webhook_ready") == 0, m)
    check(name + ": still counted once", m.get('otel_webhook_errors_total{kind="resource_file"}') == 1, m)
    java_injected(srv, name + " while not ready", "uid-outage-2")

    folder_msg = ("%s: cannot read the folder: No such file or directory (the last good content of its files stays "
                  "in service)" % res_dir)
    recs = json_log(srv)
    said = [o for o in recs if o.get("msg") == folder_msg]
    check(name + ": the failure logged once, as an error of the files",
          len(said) == 1 and said[0].get("level") == "error" and said[0].get("source") == "files",
          [o for o in recs if "folder" in o.get("msg", "")])
    stale = [o for o in recs if o.get("msg") == "resources unreadable past the grace period: not ready"]
    check(name + ": not ready logged once", len(stale) == 1 and stale[0].get("grace_seconds") == grace, stale)

    # Back, with an Instrumentation added meanwhile.
    with open(os.path.join(away, "added.yaml"), "w") as f:
        f.write("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: added}\nspec: {}\n")
    os.rename(away, res_dir)
    wait_until(name + ": /readyz 200 again",
             lambda: (lambda r: r if r.status == 200 and r.body == b"ready\n" else None)(srv.call("GET", "/readyz")), 10)
    _, m = srv.metrics()
    check(name + ": recovered in /metrics", m.get("otel_webhook_resource_folders_failing") == 0 and
          since not in m and m.get("otel_webhook_ready") == 1, m)
    check(name + ": the added Instrumentation", m.get('otel_webhook_store_objects{kind="Instrumentation"}') ==
          STORE_EXPECTED["Instrumentation"] + 1, m)
    recs = json_log(srv)
    check(name + ": recovery logged once",
          sum(o.get("msg") == "%s: the folder can be read again" % res_dir for o in recs) == 1 and
          sum(o.get("msg") == "resources readable again: ready" for o in recs) == 1,
          [o.get("msg") for o in recs][-8:])
    java_injected(srv, name + " after", "uid-outage-3")


def rss_kib(srv):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def replace_file(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def test_memory_given_back(srv, res_dir):
    """A resource file just under the 1 MiB cap, of one-line documents (the
    costliest manifests per byte), then replaced by a small one: what it
    cost is given back to the system, not kept by the allocator."""
    name = srv.name
    cm = lambda n: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d}\n---\n" % n
    docs, size, n = [], 0, 0
    while size + len(cm(n)) < (1 << 20):
        docs.append(cm(n))
        size += len(docs[-1])
        n += 1
    count = lambda: srv.metrics()[1].get('otel_webhook_store_objects{kind="ConfigMap"}')
    wait_until(name + ": small file loaded", lambda: count() == 1, 10)
    start = rss_kib(srv)
    replace_file(os.path.join(res_dir, "cm.yaml"), "".join(docs))
    wait_until(name + ": %d ConfigMaps loaded" % n, lambda: count() == n, 30)
    loaded = rss_kib(srv)
    replace_file(os.path.join(res_dir, "cm.yaml"), cm(0))
    t0 = time.monotonic()
    wait_until(name + ": replaced by one", lambda: count() == 1, 30)
    # Given back by the poll that replaced it, or by the next one when a
    # request pinned the old snapshot meanwhile.
    check(name + ": the large file took memory", loaded > start + 32 * 1024, (start, loaded))
    wait_until(name + ": given back once replaced", lambda: rss_kib(srv) < start + 8 * 1024, 10)
    print("  (RSS: %d KiB at start, %d KiB with the 1 MiB file, %d KiB %.1f s after it was replaced)" % (
        start, loaded, rss_kib(srv), time.monotonic() - t0))


def sidecar_collector(image, level, rv=None):
    return ("apiVersion: opentelemetry.io/v1beta1\nkind: OpenTelemetryCollector\n"
            "metadata: {name: sc, namespace: default%s}\n"
            "spec:\n  mode: sidecar\n  image: '%s'\n  args: {log-level: %s}\n"
            "  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {debug: {}}\n"
            "    service: {pipelines: {traces: {receivers: [otlp], exporters: [debug]}}}\n") % (
                ", resourceVersion: '%s'" % rv if rv else "", image, level)


def test_collector_replaced(srv, res_dir):
    """A collector file replaced under a running server: every pod after
    the reload gets the new sidecar, whichever loop answers it (each keeps
    the collector sidecars it built, and must not serve a replaced one),
    and one replaced by the same spec with a resourceVersion too."""
    name = srv.name
    reloads = lambda: sum(o.get("msg") == "resources reloaded" for o in json_log(srv))
    versions = [("otelcol:1", "info", None), ("otelcol:2", "debug", None), ("otelcol:1", "info", "7")]
    for n, (image, level, rv) in enumerate(versions):
        if n:
            replace_file(os.path.join(res_dir, "collector.yaml"), sidecar_collector(image, level, rv))
            wait_until("%s: reload %d" % (name, n), lambda: reloads() >= n, 10)
        for i in range(6):  # over new connections: both loops
            what = "%s: version %d, pod %d" % (name, n + 1, i)
            rv_ = make_review(small_pod("p-%d-%d" % (n, i), {"sidecar.opentelemetry.io/inject": "sc"}),
                              uid="uid-replaced-%d-%d" % (n, i))
            pod = apply_response(what, rv_, srv.admit(rv_))
            srv.inject("sidecar")
            sc = [c for c in (pod or {}).get("spec", {}).get("containers", []) if c["name"] == "otc-container"]
            check(what + ": the collector's current image and args",
                  len(sc) == 1 and sc[0].get("image") == image and
                  sc[0].get("args") == ["--log-level=" + level, "--config=env:OTEL_CONFIG"], sc)
            check(what + ": the pod's own resource attributes",
                  len(sc) == 1 and "k8s.pod.name=$(OTEL_RESOURCE_ATTRIBUTES_POD_NAME)" in
                  env_of(sc[0]).get("OTEL_RESOURCE_ATTRIBUTES", ""), sc)
    # The loops' caches in /metrics: one collector lookup per pod, a miss
    # per version and loop (two loops), nothing evicted, nothing else asked.
    _, m = srv.metrics()
    get = lambda k: m.get("otel_webhook_mutation_cache_%s" % k)
    hit, miss = get('lookups_total{part="collector",result="hit"}'), get('lookups_total{part="collector",result="miss"}')
    check(name + ": cache lookups, one per pod", hit is not None and miss is not None and hit + miss == 18, (hit, miss))
    check(name + ": cache misses, one per version and loop", miss is not None and 3 <= miss <= 6, miss)
    check(name + ": cache entries and bytes", get('entries{part="collector"}') == miss and
          (get('bytes{part="collector"}') or 0) > 0 and get('evictions_total{part="collector"}') == 0,
          (get('entries{part="collector"}'), get('bytes{part="collector"}'), get('evictions_total{part="collector"}')))
    check(name + ": no Instrumentation looked up", get('lookups_total{part="instrumentation",result="hit"}') == 0 and
          get('lookups_total{part="instrumentation",result="miss"}') == 0 and get('entries{part="instrumentation"}') == 0,
          [(k, v) for k, v in m.items() if "mutation_cache" in k])


def test_symlink_loop(srv, res_dir):
    """A symlink loop among the resource files is skipped like a dangling
    symlink: one warning, nothing failing, ready, the rest in service (it
    was a read error retried every second: failing, and not ready after
    --resources-grace). The folder is named twice: read once."""
    name = srv.name
    loop_path = os.path.join(res_dir, "loop.yaml")
    msg = loop_path + ": symlink loop; skipped"
    said = lambda: [o for o in json_log(srv) if o.get("msg") == msg]
    wait_until(name + ": the loop said", lambda: said(), 10)
    # Three more polls (SIGHUP: one each, said in the log when done).
    for n in range(1, 4):
        srv.proc.send_signal(signal.SIGHUP)
        wait_until("%s: SIGHUP %d checked" % (name, n), lambda: sum(
            o.get("msg") == "SIGHUP: certificate and resource files checked" for o in json_log(srv)) >= n, 10)
    w = said()
    check(name + ": said once, as a warning of the files",
          len(w) == 1 and w[0].get("level") == "warn" and w[0].get("source") == "files", w)
    r = srv.call("GET", "/readyz")
    check(name + ": ready", r.status == 200 and r.body == b"ready\n", r)
    _, m = srv.metrics()
    check(name + ": nothing failing, nothing counted",
          m.get("otel_webhook_resource_files_failing") == 0 and
          m.get('otel_webhook_errors_total{kind="resource_file"}') == 0 and
          "otel_webhook_resource_read_failure_since_timestamp_seconds" not in m, m)
    check(name + ": the other file in service, once (the folder named twice)",
          m.get('otel_webhook_store_objects{kind="Instrumentation"}') == 1, m)


def test_many_files(tmp, crt, key, ca, n=20000, bound=40):
    """A folder of 20,000 resource files: ready within a bound, and SIGTERM
    prompt both during the first read and once serving. Every file was
    looked up with a linear search (n^2 compares: this folder took 114 s
    under ASan, 100,000 files 208 s in the release build), and a SIGTERM
    during the first read waited for all of it."""
    d = os.path.join(tmp, "many-resources")
    os.mkdir(d)
    for i in range(n):
        with open(os.path.join(d, "cm%05d.yaml" % i), "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c%d, namespace: default}\n" % i)
    env = dict(os.environ)
    supp = os.path.join(tmp, "lsan.supp")
    with open(supp, "w") as f:
        f.write(LSAN_SUPP)
    env["LSAN_OPTIONS"] = ":".join(x for x in (env.get("LSAN_OPTIONS", ""), "suppressions=" + supp,
                                               "print_suppressions=0") if x)
    # SIGTERM during the first read: the listener is up before it starts.
    s = Server(check, BIN, "many-files-early", tmp, crt, key, ca, ["--resources", d])
    s.port = free_port()
    s.errpath = os.path.join(tmp, "many-files-early.stderr")
    with open(s.errpath, "wb") as err:
        s.proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % s.port, "--tls-cert", crt,
                                   "--tls-key", key, "--resources", d], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=err, env=env)
    def listening():
        with socket.create_connection(("127.0.0.1", s.port), timeout=1):
            return True
    wait_until("many files: listening", listening, 20)
    t = time.monotonic()
    s.proc.send_signal(signal.SIGTERM)
    try:
        rc = s.proc.wait(60)
    except subprocess.TimeoutExpired:
        s.kill()
        rc = "timeout"
    took = time.monotonic() - t
    check("many files: SIGTERM during the first read: exit 0 within 5 s", rc == 0 and took < 5,
          "rc=%r after %.1f s" % (rc, took))
    msgs = [o.get("msg") for o in json_log(s)]
    check("many files: stopped during the first read, said so",
          msgs[-2:] == ["shutting down", "stopped"] and "serving" not in msgs, msgs[-5:])

    t = time.monotonic()
    s = Server(check, BIN, "many-files", tmp, crt, key, ca, ["--resources", d])
    s.port = free_port()
    s.errpath = os.path.join(tmp, "many-files.stderr")
    with open(s.errpath, "wb") as err:
        s.proc = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % s.port, "--tls-cert", crt,
                                   "--tls-key", key, "--resources", d], stdin=subprocess.DEVNULL,
                                  stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        ready = wait_until("many files: ready within %d s" % bound, lambda: (lambda r: r.status == 200)(
            s.call("GET", "/readyz")), bound)
        took = time.monotonic() - t
        print("  (%d files: ready after %.1f s)" % (n, took))
        if ready:
            _, m = s.metrics()
            check("many files: every ConfigMap in the store",
                  m.get('otel_webhook_store_objects{kind="ConfigMap"}') == n, m.get(
                      'otel_webhook_store_objects{kind="ConfigMap"}'))
        t = time.monotonic()
        rc = s.stop(30)
        took = time.monotonic() - t
        check("many files: SIGTERM once serving: exit 0 within 10 s", rc == 0 and took < 10,
              "rc=%r after %.1f s" % (rc, took))
    finally:
        s.kill()
    shutil.rmtree(d, ignore_errors=True)


def test_resources_unreadable_at_start(tmp, crt, key):
    """A folder that cannot be read at start is a start-up error."""
    gone = os.path.join(tmp, "no-such-resources")
    p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:%d" % free_port(), "--tls-cert", crt, "--tls-key", key,
                        "--resources", gone, "--log-format", "text"], capture_output=True, text=True, timeout=60,
                       stdin=subprocess.DEVNULL)
    lines = [l for l in p.stderr.splitlines() if not any(mk in l for mk in SANITIZER_MARKERS)]
    check("unreadable resources at start: exit 1", p.returncode == 1, p.returncode)
    check("unreadable resources at start: the reason",
          len(lines) == 2 and lines[0].endswith(" ERROR %s: cannot read the folder: No such file or directory "
                                                "source=files" % gone) and
          lines[1].endswith(" ERROR cannot read the resources"), p.stderr[-2000:])


def main():
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="otel-server-test-")
    servers = []
    global RES_DIR
    try:
        certs = os.path.join(tmp, "certs")
        p = subprocess.run([BIN, "certs", "generate", "--service", "otel-webhook", "--namespace", "otel",
                            "--out", certs, "--dev"], capture_output=True, text=True, timeout=60)
        if not check("certs generate", p.returncode == 0, p.stderr):
            return
        ca, crt, key = (os.path.join(certs, f) for f in ("ca.crt", "tls.crt", "tls.key"))
        RES_DIR = os.path.join(tmp, "resources")
        os.mkdir(RES_DIR)
        for name, text in RESOURCES.items():
            with open(os.path.join(RES_DIR, name), "w") as f:
                f.write(text)
        shutil.copy(os.path.join(ROOT, "examples", "resources", "collector.yaml"), RES_DIR)

        def server(name, args, cert=crt, key_=key, binary=None):
            s = Server(check, binary or BIN, name, tmp, cert, key_, ca, args)
            servers.append(s)
            return s if s.start() else None

        # 1. Defaults: happy paths, bad inputs, TLS, 1,000 connections, metrics, JSON logs.
        # (--request-timeout 30: on a busy machine opening 1,000 connections may
        # take longer than the default 10 s an idle connection is kept.)
        main_srv = server("main", ["--threads", "2", "--resources", RES_DIR, "--request-timeout", "30"])
        if main_srv:
            test_happy_paths(main_srv)
            test_bad_inputs(main_srv)
            test_http_details(main_srv)
            test_tls(main_srv, ca)
            test_many_connections(main_srv)
            m = check_metrics(main_srv, crt)
            if m:
                check_store_metrics("main", m)
                # the missing Instrumentation and the long non-ASCII name
                check("main metrics: skips not_found", m.get('otel_webhook_skips_total{reason="not_found"}') == 2,
                      m.get('otel_webhook_skips_total{reason="not_found"}'))
                for reason in ("unknown_annotation", "unknown_container"):
                    got = m.get('otel_webhook_skips_total{reason="%s"}' % reason)
                    check("main metrics: skips " + reason, got == 1, got)
                check("main metrics: skips malformed", m.get('otel_webhook_skips_total{reason="malformed"}') == 2,
                      m.get('otel_webhook_skips_total{reason="malformed"}'))
            main_srv.final_checks()
            check_json_logs(main_srv)
        print("  (main: %.1f s)" % (time.monotonic() - t_start))

        # 2. Native sidecars, TLS 1.3 only, HTTP/2 offered, small body cap, 1 s timeouts, text logs.
        alt = server("alt", ["--threads", "2", "--resources", RES_DIR, "--native-sidecars", "on", "--http2",
                             "--tls-min-version", "1.3", "--max-body", "65536", "--request-timeout", "1",
                             "--log-format", "text"])
        if alt:
            rv = make_review(small_pod("p-sc", {"sidecar.opentelemetry.io/inject": "true"}), uid="uid-native")
            pod = apply_response("sidecar native", rv, alt.admit(rv))
            alt.inject("sidecar-native")
            if pod:
                check_sidecar("sidecar native", pod, native=True)
            test_alt_tls(alt, ca)
            test_limits(alt)
            check_metrics(alt, crt)
            alt.final_checks()
            check_text_logs(alt)
        print("  (alt: %.1f s)" % (time.monotonic() - t_start))

        # 3. Rotation under load, with the kubelet's Secret volume layout.
        secret = os.path.join(tmp, "secret")
        os.mkdir(secret)
        kubelet_publish(secret, "2026_11_29_00", crt, key)
        rot = server("rotation", ["--threads", "2"], os.path.join(secret, "tls.crt"), os.path.join(secret, "tls.key"))
        if rot:
            test_rotation(rot, ca, os.path.join(certs, "ca.key"), tmp, secret, crt)
            rot.final_checks()
        print("  (rotation: %.1f s)" % (time.monotonic() - t_start))

        # 4. SIGTERM under load.
        grace = 5
        term = server("sigterm", ["--threads", "2", "--resources", RES_DIR, "--shutdown-grace", str(grace)])
        if term:
            test_sigterm(term, grace)
            err = term.stderr()
            bad = [l for l in err.splitlines() if any(mk in l for mk in SANITIZER_MARKERS)]
            check("sigterm: no sanitizer reports", not bad, "\n".join(bad[:5]) + "\n" + err[-3000:])

        # 5. SIGTERM with an idle keep-alive connection open.
        idle = server("sigterm-idle", ["--threads", "2", "--shutdown-grace", str(grace)])
        if idle:
            test_sigterm_idle(idle, grace)

        # 6. The resources folder renamed away and back (a copy: the other
        # servers keep theirs), and a folder unreadable at start.
        outage_dir = os.path.join(tmp, "outage-resources")
        shutil.copytree(RES_DIR, outage_dir)
        res_grace = 3
        outage = server("outage", ["--threads", "2", "--resources", outage_dir, "--resources-grace", str(res_grace)])
        if outage:
            test_resources_outage(outage, outage_dir, res_grace)
            outage.final_checks()
        test_resources_unreadable_at_start(tmp, crt, key)
        loop_dir = os.path.join(tmp, "loop-resources")
        os.mkdir(loop_dir)
        os.symlink("loop.yaml", os.path.join(loop_dir, "loop.yaml"))
        with open(os.path.join(loop_dir, "inst.yaml"), "w") as f:
            f.write("apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: i}\nspec: {}\n")
        lp = server("symlink-loop", ["--threads", "1", "--resources", loop_dir, "--resources", loop_dir + "/",
                                     "--resources-grace", "0"])
        if lp:
            test_symlink_loop(lp, loop_dir)
            lp.final_checks()
        test_many_files(tmp, crt, key, ca)
        col_dir = os.path.join(tmp, "collector-resources")
        os.mkdir(col_dir)
        replace_file(os.path.join(col_dir, "collector.yaml"), sidecar_collector("otelcol:1", "info"))
        col = server("collector-replaced", ["--threads", "2", "--resources", col_dir])
        if col:
            test_collector_replaced(col, col_dir)
            col.final_checks()
        if check("release binary given", RELEASE_BIN is not None):
            mem_dir = os.path.join(tmp, "memory-resources")
            os.mkdir(mem_dir)
            replace_file(os.path.join(mem_dir, "cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c0}\n")
            mem = server("memory", ["--threads", "2", "--resources", mem_dir], binary=RELEASE_BIN)
            if mem:
                test_memory_given_back(mem, mem_dir)
                mem.final_checks()
        print("  (resources: %.1f s)" % (time.monotonic() - t_start))
    finally:
        for s in servers:
            s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print("  (total: %.1f s)" % (time.monotonic() - t_start))


RES_DIR = None
check.run(main, RESULTS)
