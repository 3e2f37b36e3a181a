#!/usr/bin/python3
"""`otel-webhook inject` from the outside: exit codes, exact messages,
output formats, and the README's example."""
import json
import os
import subprocess
import sys
import tempfile

import jsonpatch
import yaml

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks  # noqa: E402

check = Checks("cli")


def run(*args, stdin=None):
    p = subprocess.run([BIN, "inject", *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr




tmp = tempfile.mkdtemp()

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

# Templates the API server would refuse (a field of the wrong type): one line
# FILE:LINE: Kind ns/name: path: reason per object, with the offending field's
# line, the object left out of the output, the others still out, exit 1.
malformed = os.path.join(tmp, "malformed.yaml")
with open(malformed, "w") as f:
    f.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"                                       # 1-3
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\n"     # 4-9
            "spec:\n  template:\n    metadata:\n      annotations:\n"                                      # 10-13
            "        instrumentation.opentelemetry.io/inject-java: \"true\"\n"                               # 14
            "        sidecar.opentelemetry.io/inject: \"true\"\n"                                            # 15
            "    spec:\n      containers:\n        name: app\n        image: example.com/app:1\n"            # 16-19
            "---\napiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly}\n"                        # 20-23
            "spec:\n  jobTemplate:\n    spec:\n      template:\n        metadata:\n"                       # 24-28
            "          annotations: {instrumentation.opentelemetry.io/inject-java: true}\n"                  # 29
            "        spec: {containers: [{name: app, image: a}]}\n"                                          # 30
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"                                      # 31-35
            "  annotations: {instrumentation.opentelemetry.io/inject-java: \"true\"}\n"                      # 36
            "spec:\n  containers:\n  - name: app\n    env:\n    - name: PORT\n      value: 8080\n"         # 37-42
            "---\napiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db}\n"                          # 43-46
            "spec:\n  template:\n    metadata: [app]\n    spec: {containers: [{name: db, image: d}]}\n"     # 47-50
            "---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent}\n"                         # 51-54
            "spec:\n  template:\n    metadata: {annotations: {instrumentation.opentelemetry.io/inject-java: "
            "\"true\"}}\n"                                                                                    # 55-57
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: good\n"                                   # 58-62
            "  annotations: {instrumentation.opentelemetry.io/inject-java: \"true\"}\n"                      # 63
            "spec:\n  containers: [{name: app, image: a}]\n")                                             # 64-65
rc, out, err = run("-f", malformed, "--resources", "examples/resources")
check("malformed rc", rc == 1, rc)
want = ("%s:17: Deployment shop/web: spec.template.spec.containers: expected a list, got an object\n"
        "%s:29: CronJob default/nightly: spec.jobTemplate.spec.template.metadata.annotations."
        "instrumentation.opentelemetry.io/inject-java: expected a string, got a boolean (quote it: \"true\")\n"
        "%s:42: Pod default/p: spec.containers[0].env[0].value: expected a string, got a number (quote it: \"8080\")\n"
        "%s:49: StatefulSet default/db: spec.template.metadata: expected an object, got a list\n"
        "%s:56: DaemonSet default/agent: spec.template.spec: required, not set\n") % ((malformed,) * 5)
check("malformed messages", err == want, err)
objs = list(yaml.safe_load_all(out))
check("malformed objects left out", [o["kind"] + "/" + o["metadata"]["name"] for o in objs] == ["ConfigMap/c", "Pod/good"],
      out)
check("malformed: the others still injected", [c["name"] for c in objs[1]["spec"]["initContainers"]] ==
      ["opentelemetry-auto-instrumentation-java"], objs[1])
# JSON input has no lines of its fields: the document's line.
bad_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "p", "annotations": {"instrumentation.opentelemetry.io/inject-java": "true"}},
    "spec": {"containers": {"name": "app"}}}
for fmt in ("yaml", "json", "patch"):
    rc, out, err = run("-f", "-", "--resources", "examples/resources", "-o", fmt, stdin=json.dumps(bad_pod))
    check("malformed JSON -o %s" % fmt, (rc, out, err) == (
        1, "", "<stdin>:1: Pod default/p: spec.containers: expected a list, got an object\n"), (rc, out, err))
# -o json of several documents: a List without the malformed ones.
rc, out, err = run("-f", malformed, "--resources", "examples/resources", "-o", "json")
check("malformed -o json", rc == 1 and [i["metadata"]["name"] for i in json.loads(out)["items"]] == ["c", "good"], out)

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

sys.exit(check.finish(RESULTS))
