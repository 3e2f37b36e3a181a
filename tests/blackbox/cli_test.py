#!/usr/bin/python3
"""`otel-webhook inject` from the outside: exit codes, exact messages,
output formats, and the README's example."""
import json
import os
import re
import subprocess
import sys

import jsonpatch
import yaml

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, scratch_dir  # noqa: E402

check = Checks("cli")


def run(*args, stdin=None):
    p = subprocess.run([BIN, "inject", *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr




tmp = scratch_dir("otel-cli-test-")

# version and --version: "otel-webhook VERSION" (otel-reconcile prints the same
# with its own name, tests/blackbox/reconcile_test.py).
with open("base/versions.h") as f:
    VERSION = re.search(r'#define OTEL_WEBHOOK_VERSION "([^"]+)"', f.read()).group(1)
for arg in ("version", "--version"):
    p = subprocess.run([BIN, arg], capture_output=True, text=True)
    check("otel-webhook %s" % arg, p.returncode == 0 and p.stdout == "otel-webhook %s\n" % VERSION and p.stderr == "",
          (p.returncode, p.stdout, p.stderr))

# The README's example: Java agent and collector sidecar into a Deployment.
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", "examples/resources")
check("example rc", rc == 0, err)
check("example no warnings", err == "", err)
dep = yaml.safe_load(out)
spec = dep["spec"]["template"]["spec"]
check("example containers", [c["name"] for c in spec["containers"]] == ["myapp", "otc-container"])
check("example init", [c["name"] for c in spec["initContainers"]] == ["opentelemetry-auto-instrumentation-java"])
env = {e["name"]: e.get("value") for e in spec["containers"][0]["env"]}
check("example service name", env.get("OTEL_SERVICE_NAME") == "my-java", env)
check("example label", dep["spec"]["template"]["metadata"]["labels"]["sidecar.opentelemetry.io/injected"]
      == "default.sidecar-for-my-app")

# The YAML output is the input with only the template changed.
with open("examples/deployment-java.yaml") as f:
    orig = yaml.safe_load(f)
check("example untouched fields", dep["spec"]["selector"] == orig["spec"]["selector"] and
      dep["metadata"] == orig["metadata"])

# -o patch on a Pod gives the patch that -o json applies.
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p", "annotations": {"instrumentation.opentelemetry.io/inject-java": "true"}},
       "spec": {"containers": [{"name": "app", "image": "app:1"}]}}
pod_json = json.dumps(pod)
rc, patch_out, err = run("-f", "-", "--resources", "examples/resources", "-o", "patch", stdin=pod_json)
check("patch rc", rc == 0, err)
rc, json_out, err = run("-f", "-", "--resources", "examples/resources", "-o", "json", stdin=pod_json)
check("json rc", rc == 0, err)
check("patch applies to json", jsonpatch.apply_patch(pod, json.loads(patch_out)) == json.loads(json_out))

# A settings file that cannot be read: its path and the reason, exit 1.
rc, out, err = run("-f", "examples/deployment-java.yaml", "--config", "/nonexistent/otel-config.yaml")
check("config unreadable rc", rc == 1, rc)
check("config unreadable message",
      err == "/nonexistent/otel-config.yaml: cannot read: No such file or directory\n", err)

# Bad input: file:line: reason, exit 1.
bad = os.path.join(tmp, "bad.yaml")
with open(bad, "w") as f:
    f.write("apiVersion: v1\nkind: Pod\nmetadata:\n  name: [unclosed\n")
rc, out, err = run("-f", bad)
check("bad yaml rc", rc == 1, rc)
check("bad yaml message", err.startswith(bad + ":"), err)
check("bad yaml no output", out == "", out)

badres = os.path.join(tmp, "res")
os.mkdir(badres)
with open(os.path.join(badres, "broken.yaml"), "w") as f:
    f.write("kind: Instrumentation\nmetadata:\n  name: x\n  bad: : :\n")
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", badres)
check("bad resource rc", rc == 1, rc)
check("bad resource message", err.startswith("error: " + badres + "/broken.yaml:4:"), err)

# A resources folder that cannot be read is an error, not an empty folder
# (which would inject nothing and say nothing).
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", os.path.join(tmp, "no-such-folder"))
check("unreadable resources folder rc", rc == 1, rc)
check("unreadable resources folder message",
      err == "error: %s: cannot read the folder: No such file or directory\n" % os.path.join(tmp, "no-such-folder"), err)
check("unreadable resources folder no output", out == "", out)

# A resource file over the 1 MiB cap is refused like one that does not parse.
bigres = os.path.join(tmp, "bigres")
os.mkdir(bigres)
big_text = "kind: Instrumentation\nmetadata: {name: x}\n#" + "x" * (1 << 20) + "\n"
with open(os.path.join(bigres, "big.yaml"), "w") as f:
    f.write(big_text)
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", bigres)
check("resource over the cap rc", rc == 1, rc)
check("resource over the cap message", err == "error: %s/big.yaml: %d bytes, larger than the 1048576 bytes a resource "
      "file may have (the last good content stays in service)\n" % (bigres, len(big_text)), err)

rc, out, err = run("-f", "examples/deployment-java.yaml", "-o", "patch")
check("patch needs pod", rc == 1 and "-o patch needs exactly one Pod" in err, err)

rc, out, err = run("--bogus")
check("usage rc", rc == 2, rc)
rc, out, err = run("-f", "/nonexistent/x.yaml")
check("missing file", rc == 1 and err.startswith("/nonexistent/x.yaml: cannot read:"), err)

# Warnings go to stderr with the document's position, output still complete.
two = os.path.join(tmp, "two.yaml")
with open(two, "w") as f:
    f.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
            "  annotations: {instrumentation.opentelemetry.io/inject-java: missing}\n"
            "spec:\n  containers: [{name: app, image: a}]\n")
rc, out, err = run("-f", two, "--resources", "examples/resources")
check("warning rc", rc == 0, err)
check("warning text", err == "%s:5: warning: inject-java: Instrumentation default/missing not found; Java not injected\n" % two, err)
check("warning output", len(list(yaml.safe_load_all(out))) == 2, out)

# A misspelt key, in a Deployment's template and in a Namespace of the
# input: said on stderr at the document's line, the rest goes ahead; the
# Namespace's list naming a container the pod lacks is said too.
typo = os.path.join(tmp, "typo.yaml")
with open(typo, "w") as f:
    f.write("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: shop\n"
            "  annotations: {sidecar.opentelemetry.io/injectt: 'true', "
            "instrumentation.opentelemetry.io/container-names: 'app,gone'}\n---\n"
            "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: i, namespace: shop}\n"
            "spec: {exporter: {endpoint: 'http://otel:4317'}}\n---\n"
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
            "spec:\n  template:\n    metadata:\n"
            "      annotations: {instrumentation.opentelemetry.io/inject-jaav: 'true', "
            "instrumentation.opentelemetry.io/inject-sdk: 'true'}\n"
            "    spec:\n      containers: [{name: app, image: 'app:1'}]\n")
rc, out, err = run("-f", typo)
check("typo rc", rc == 0, err)
check("typo warnings", err ==
      "%s:12: warning: annotation instrumentation.opentelemetry.io/inject-jaav is not one otel-webhook knows; "
      "did you mean instrumentation.opentelemetry.io/inject-java?\n"
      "%s:12: warning: annotation sidecar.opentelemetry.io/injectt of namespace shop is not one otel-webhook knows; "
      "did you mean sidecar.opentelemetry.io/inject?\n"
      "%s:12: warning: inject-sdk: no container named gone in the pod\n" % (typo, typo, typo), err)
docs = list(yaml.safe_load_all(out))
app = docs[2]["spec"]["template"]["spec"]["containers"][0]
check("typo: the SDK still injected", any(e["name"] == "OTEL_SERVICE_NAME" for e in app.get("env", [])), app)

sys.exit(check.finish(RESULTS))
