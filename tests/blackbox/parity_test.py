#!/usr/bin/python3
"""One collector, one container: the sidecar `otel-webhook inject` adds and
the workload `otel-reconcile render` builds come from one builder
(collector/container.c), so for the same collector spec they must hold the
same otc-container and volumes, apart from the differences the reference
makes on purpose (collector/container.h):

  - args: the workload's first is --config=/conf/collector.yaml and a user
    `config` arg is dropped; the sidecar's last is --config=env:OTEL_CONFIG;
  - the workload mounts its ConfigMap (volume otc-internal at /conf), the
    sidecar inlines the same YAML as OTEL_CONFIG;
  - the sidecar's env ends with the pod's resource attributes;
  - a native sidecar has restartPolicy: Always.

Every case renders the collector as mode deployment and injects it as mode
sidecar, in both sidecar forms, and compares field by field.

usage: parity_test.py OTEL_WEBHOOK OTEL_RECONCILE [RESULTS]"""
import copy
import json
import os
import subprocess
import sys

import yaml

WEBHOOK, RECONCILE = sys.argv[1], sys.argv[2]
RESULTS = sys.argv[3] if len(sys.argv) > 3 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, scratch_dir  # noqa: E402

check = Checks("parity")

CONFIG = {
    "receivers": {"otlp": {"protocols": {"grpc": None, "http": {"endpoint": "0.0.0.0:5318"}}},
                  "jaeger": {"protocols": {"thrift_compact": None}},
                  "kubeletstats": {"auth_type": "serviceAccount"}},
    "processors": {"batch": None},
    "exporters": {"debug": None, "prometheus": {"endpoint": "0.0.0.0:9091"}},
    "extensions": {"health_check": {"endpoint": "0.0.0.0:13134", "path": "/health"}},
    "service": {"extensions": ["health_check"],
                "pipelines": {"traces": {"receivers": ["otlp", "jaeger"], "processors": ["batch"],
                                         "exporters": ["debug"]},
                              "metrics": {"receivers": ["kubeletstats"], "exporters": ["prometheus"]}}},
}

# Each case is a collector spec (without mode). They cover what the issue
# names: volumes, volumeMounts, configmaps with odd mount paths, env,
# ports, probes, resources, securityContext, and the rest the builder copies.
CASES = {
    "minimal": {"config": {"receivers": {"otlp": {"protocols": {"grpc": None}}},
                           "exporters": {"debug": None},
                           "service": {"pipelines": {"t": {"receivers": ["otlp"], "exporters": ["debug"]}}}}},
    "everything": {
        "config": CONFIG,
        "image": "example.com/otelcol:1.2.3",
        "imagePullPolicy": "IfNotPresent",
        "command": ["/otelcol-contrib"],
        "args": {"feature-gates": "-component.UseLocalHostAsDefaultHost", "log-level": "debug"},
        "env": [{"name": "GOMEMLIMIT", "value": "400MiB"},
                {"name": "SECRET", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}}],
        "envFrom": [{"configMapRef": {"name": "extra-env"}}],
        "ports": [{"name": "custom", "port": 7777, "protocol": "UDP"}, {"name": "otlp-grpc", "port": 4317}],
        "resources": {"limits": {"cpu": "1", "memory": "512Mi"}, "requests": {"cpu": "100m"}},
        "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
        "livenessProbe": {"initialDelaySeconds": 10, "periodSeconds": 5, "terminationGracePeriodSeconds": 0},
        "readinessProbe": {"failureThreshold": 7},
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "certs", "secret": {"secretName": "tls"}}],
        "volumeMounts": [{"name": "data", "mountPath": "/data"}, {"name": "certs", "mountPath": "/certs",
                                                                  "readOnly": True}],
        "configmaps": [{"name": "c", "mountpath": "a/../b"}, {"name": "root", "mountpath": "/"},
                       {"name": "dots", "mountpath": "./x//y/./"}, {"name": "up", "mountpath": "../../etc"},
                       {"name": "none"}],
        "initContainers": [{"name": "init-config", "image": "busybox", "command": ["true"]}],
    },
    "user config arg": {"config": {"receivers": {"zipkin": None}, "exporters": {"debug": None},
                                   "service": {"pipelines": {"t": {"receivers": ["zipkin"], "exporters": ["debug"]}}}},
                        "args": {"config": "/somewhere/else.yaml", "b": "2", "a": "1"}},
    "resource attributes set by the user": {
        "config": CONFIG,
        "env": [{"name": "OTEL_RESOURCE_ATTRIBUTES", "value": "team=x"}, {"name": "POD_NAME", "value": "fixed"}]},
}

# Where the odd configmap mount paths must land (path.Join + Clean, as the
# reference; spec reconcile.md 2.5.5).
EXPECTED_PATHS = {
    "configmap-c": "/var/conf/b/configmap-c",
    "configmap-root": "/var/conf/configmap-root",
    "configmap-dots": "/var/conf/x/y/configmap-dots",
    "configmap-up": "/etc/configmap-up",
    "configmap-none": "/var/conf/configmap-none",
}


def collector(name, spec, mode):
    s = copy.deepcopy(spec)
    s["mode"] = mode
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
            "metadata": {"name": name, "namespace": "parity"}, "spec": s}


def render(col):
    p = subprocess.run([RECONCILE, "render", "-f", "-"], input=yaml.safe_dump(col), capture_output=True, text=True)
    check("render rc %s" % col["metadata"]["name"], p.returncode == 0, p.stderr)
    objs = [o for o in yaml.safe_load_all(p.stdout) if o]
    dep = next(o for o in objs if o["kind"] == "Deployment")
    cm = next(o for o in objs if o["kind"] == "ConfigMap")
    return dep["spec"]["template"]["spec"], cm["data"]["collector.yaml"]


def inject(col, native, tmp):
    res = os.path.join(tmp, "res-%s" % native)
    os.makedirs(res, exist_ok=True)
    with open(os.path.join(res, "collector.yaml"), "w") as f:
        yaml.safe_dump(col, f)
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "app", "namespace": "parity",
                        "annotations": {"sidecar.opentelemetry.io/inject": col["metadata"]["name"]}},
           "spec": {"containers": [{"name": "app", "image": "app:1"}]}}
    p = subprocess.run([WEBHOOK, "inject", "-f", "-", "--resources", res, "--namespace", "parity", "-o", "json",
                        "--native-sidecars", "on" if native else "off"],
                       input=json.dumps(pod), capture_output=True, text=True)
    check("inject rc %s native=%s" % (col["metadata"]["name"], native), p.returncode == 0 and p.stderr == "",
          p.stderr)
    return json.loads(p.stdout)["spec"]


def without(lst, names):
    return [e for e in lst if e.get("name") not in names]


def main():
    tmp = scratch_dir("otel-parity-test-")
    for case, spec in CASES.items():
        name = case.replace(" ", "-")
        wpod, cm_yaml = render(collector(name, spec, "deployment"))
        wc = wpod["containers"][0]
        check("%s: workload container is first" % case, wc["name"] == "otc-container", wc["name"])
        for native in (False, True):
            tag = "%s (%s)" % (case, "native" if native else "container")
            spod = inject(collector(name, spec, "sidecar"), native, tmp)
            where = spod.get("initContainers", []) if native else spod["containers"]
            sc = next((c for c in where if c["name"] == "otc-container"), None)
            if not check("%s: sidecar injected" % tag, sc is not None, spod):
                continue
            w, s = copy.deepcopy(wc), copy.deepcopy(sc)

            # The differences the reference makes on purpose.
            user_args = sorted("--%s=%s" % kv for kv in spec.get("args", {}).items())
            check("%s: workload args" % tag,
                  w.pop("args") == ["--config=/conf/collector.yaml"] + [a for a in user_args
                                                                        if not a.startswith("--config=")], wc["args"])
            check("%s: sidecar args" % tag, s.pop("args") == user_args + ["--config=env:OTEL_CONFIG"], sc["args"])
            otel_config = next((e for e in s["env"] if e["name"] == "OTEL_CONFIG"), {}).get("value")
            check("%s: OTEL_CONFIG is the ConfigMap's text" % tag, otel_config == cm_yaml, (otel_config, cm_yaml))
            senv = s.pop("env")
            cut = next(i for i, e in enumerate(senv) if e["name"] == "OTEL_CONFIG")
            check("%s: env up to OTEL_CONFIG" % tag, senv[:cut] == w.pop("env"), (senv[:cut], wc["env"]))
            tail = [e["name"] for e in senv[cut + 1:]]
            user_attrs = any(e["name"] == "OTEL_RESOURCE_ATTRIBUTES" for e in spec.get("env", []))
            check("%s: env after OTEL_CONFIG" % tag,
                  tail == ([] if user_attrs else ["OTEL_RESOURCE_ATTRIBUTES_POD_NAME", "OTEL_RESOURCE_ATTRIBUTES_POD_UID",
                                                   "OTEL_RESOURCE_ATTRIBUTES_NODE_NAME", "OTEL_RESOURCE_ATTRIBUTES"]),
                  tail)
            wm = w.pop("volumeMounts")
            check("%s: workload mounts its config first" % tag, wm[0] == {"name": "otc-internal", "mountPath": "/conf"},
                  wm)
            check("%s: volume mounts" % tag, wm[1:] == s.pop("volumeMounts", []), (wm, sc.get("volumeMounts")))
            check("%s: restartPolicy" % tag, s.pop("restartPolicy", None) == ("Always" if native else None),
                  sc.get("restartPolicy"))
            # Everything else, field by field and in the same order.
            check("%s: same fields, same order" % tag, list(w) == list(s), (list(w), list(s)))
            for k in w:
                check("%s: %s" % (tag, k), w[k] == s.get(k), (w[k], s.get(k)))

            # Volumes: the workload's are otc-internal then the collector's,
            # which is what the sidecar gave the (volume-less) pod.
            wv = wpod["volumes"]
            check("%s: otc-internal volume first" % tag, wv[0]["name"] == "otc-internal", wv)
            check("%s: volumes" % tag, wv[1:] == spod.get("volumes", []), (wv, spod.get("volumes")))
            # Init containers: the collector's, then (native) the sidecar.
            sinit = without(spod.get("initContainers", []), ["otc-container"])
            check("%s: init containers" % tag, wpod.get("initContainers", []) == sinit, sinit)

        for m in wc.get("volumeMounts", []):
            if m["name"] in EXPECTED_PATHS:
                check("%s: %s mounted at %s" % (case, m["name"], EXPECTED_PATHS[m["name"]]),
                      m["mountPath"] == EXPECTED_PATHS[m["name"]], m)
    check("every odd mount path seen", all(
        any(m["name"] == n for m in render(collector("everything", CASES["everything"], "deployment"))[0]
            ["containers"][0]["volumeMounts"]) for n in EXPECTED_PATHS))


check.run(main, RESULTS)
