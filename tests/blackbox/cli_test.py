#!/usr/bin/python3
"""`otel-webhook inject` from the outside: exit codes, exact messages,
output formats, and docs/cli.md's example."""
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


def run(*args, stdin=None, cmd="inject"):
    p = subprocess.run([BIN, cmd, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# The usage text, from --help (stdout, exit 0); usage errors print it on stderr.
_rc, USAGE, _err = run("--help")
HINT = "Run 'otel-webhook inject --help' for usage.\n"



tmp = scratch_dir("otel-cli-test-")

# version and --version: "otel-webhook VERSION" (otel-reconcile prints the same
# with its own name, tests/blackbox/reconcile_test.py).
with open("base/versions.h") as f:
    VERSION = re.search(r'#define OTEL_WEBHOOK_VERSION "([^"]+)"', f.read()).group(1)
for arg in ("version", "--version"):
    p = subprocess.run([BIN, arg], capture_output=True, text=True)
    check("otel-webhook %s" % arg, p.returncode == 0 and p.stdout == "otel-webhook %s\n" % VERSION and p.stderr == "",
          (p.returncode, p.stdout, p.stderr))

# docs/cli.md's example: Java agent and collector sidecar into a Deployment.
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
check("bad resource message", err.startswith(badres + "/broken.yaml:4: mapping values are not allowed"), err)
# One place for the position and the label, as compilers and every other
# message of inject write it: FILE:LINE: warning: ..., FILE:LINE: reason.
oddres = os.path.join(tmp, "oddres")
os.mkdir(oddres)
with open(os.path.join(oddres, "odd.yaml"), "w") as f:
    f.write("- not an object\n")
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", oddres)
check("resource warning: FILE:LINE: warning: ...", rc == 0 and err.startswith(
    "%s/odd.yaml:1: warning: not an object; skipped\n" % oddres), err)

# A resources folder that is not there is a mistake on the command line, not
# an empty folder (which would inject nothing and say nothing): exit 2, the
# flag and the reason, where the usage is, no output.
nofolder = os.path.join(tmp, "no-such-folder")
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", nofolder)
check("missing resources folder rc", rc == 2, rc)
check("missing resources folder message", err == "otel-webhook inject: --resources %s: No such file or directory\n%s"
      % (nofolder, HINT), err)
check("missing resources folder no output", out == "", out)
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", "examples/deployment-java.yaml")
check("resources file, not folder", rc == 2 and out == "" and err ==
    "otel-webhook inject: --resources examples/deployment-java.yaml: Not a directory\n" + HINT, (rc, err))

# A resource file over the 1 MiB cap is refused like one that does not parse.
bigres = os.path.join(tmp, "bigres")
os.mkdir(bigres)
big_text = "kind: Instrumentation\nmetadata: {name: x}\n#" + "x" * (1 << 20) + "\n"
with open(os.path.join(bigres, "big.yaml"), "w") as f:
    f.write(big_text)
rc, out, err = run("-f", "examples/deployment-java.yaml", "--resources", bigres)
check("resource over the cap rc", rc == 1, rc)
check("resource over the cap message", err == "%s/big.yaml: %d bytes, larger than the 1048576 bytes a resource "
      "file may have (the last good content stays in service)\n" % (bigres, len(big_text)), err)

rc, out, err = run("-f", "examples/deployment-java.yaml", "-o", "patch")
check("patch needs pod", rc == 1 and "-o patch needs exactly one Pod" in err, err)

rc, out, err = run("--bogus")
check("usage rc", rc == 2, rc)
# A missing file is bad input, exit 1 as for a file that cannot be read (and
# as otel-reconcile render and kubectl apply say it), not a usage error.
rc, out, err = run("-f", "/nonexistent/x.yaml")
check("missing file: exit 1, the file named", rc == 1 and out == "" and
      err == "/nonexistent/x.yaml: cannot read: No such file or directory\n", (rc, err))

# Templates the API server would refuse (a field of the wrong type): one line
# FILE:LINE: Kind ns/name: path: reason per object, with the offending field's
# line, the object written through unchanged in its place (never dropped:
# `| kubectl apply --prune -f -` without pipefail would delete it), the
# others still out, exit 1.
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
check("malformed objects written through, in their places", [o["kind"] + "/" + o["metadata"]["name"] for o in objs] ==
      ["ConfigMap/c", "Deployment/web", "CronJob/nightly", "Pod/p", "StatefulSet/db", "DaemonSet/agent", "Pod/good"],
      out)
with open(malformed) as f:
    mdocs = f.read().split("---\n")
check("malformed objects: each one's bytes unchanged", out.split("---\n")[:6] == mdocs[:6], out)
check("malformed: the others still injected", [c["name"] for c in objs[6]["spec"]["initContainers"]] ==
      ["opentelemetry-auto-instrumentation-java"], objs[6])
# JSON input has no lines of its fields: the document's line.
bad_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {
    "name": "p", "annotations": {"instrumentation.opentelemetry.io/inject-java": "true"}},
    "spec": {"containers": {"name": "app"}}}
for fmt in ("yaml", "json", "patch"):
    rc, out, err = run("-f", "-", "--resources", "examples/resources", "-o", fmt, stdin=json.dumps(bad_pod))
    # -o patch has no document to write: no patch.
    check("malformed JSON -o %s: written through" % fmt, (rc, err) == (
        1, "<stdin>:1: Pod default/p: spec.containers: expected a list, got an object\n") and
        (out == "" if fmt == "patch" else (yaml.safe_load(out) if fmt == "yaml" else json.loads(out)) == bad_pod),
        (rc, out, err))
# -o json of several documents: a List with the malformed ones as they were.
rc, out, err = run("-f", malformed, "--resources", "examples/resources", "-o", "json")
check("malformed -o json", rc == 1 and [i["metadata"]["name"] for i in json.loads(out)["items"]] ==
      ["c", "web", "nightly", "p", "db", "agent", "good"] and json.loads(out)["items"][1] == objs[1], out)

# In a file kept byte for byte: the malformed document stays with the text
# before it (its separator and "# Source:" line), the whole file as it was,
# to the byte.
helmish = os.path.join(tmp, "helmish.yaml")
with open(helmish, "w") as f:
    f.write("---\n# Source: chart/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}  # kept\n"
            "---\n# Source: chart/templates/bad.yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: bad\n"
            "  annotations: {instrumentation.opentelemetry.io/inject-java: 'true'}\nspec: {containers: {name: app}}\n"
            "---\n# Source: chart/templates/plain.yaml\napiVersion: v1\nkind: Pod\nmetadata: {name: plain}\n"
            "spec:\n  containers: [ {name: app, image: 'a:1'} ]\n")
rc, out, err = run("-f", helmish, "--resources", "examples/resources", "--report")
with open(helmish) as f:
    check("malformed among unchanged: the whole file byte for byte", (rc, out) == (1, f.read()), (rc, out))
check("malformed: --report says invalid with the field", err == (
    "%s:13: Pod default/bad: spec.containers: expected a list, got an object\n"
    "Pod default/bad: invalid: spec.containers: expected a list, got an object\n"
    "Pod default/plain: unchanged: nothing asked\n"
    "2 objects: 0 injected, 0 skipped, 1 unchanged, 1 invalid\n") % helmish, err)

# Input without any object is an error, as kubectl apply's "no objects
# passed to apply": exit 1, each -f named, nothing on stdout.
empty = os.path.join(tmp, "empty.yaml")
with open(empty, "w") as f:
    pass
comments = os.path.join(tmp, "comments.yaml")
with open(comments, "w") as f:
    f.write("# nothing rendered\n---\n")
for args, stdin, names in (((empty,), None, [empty]), (("-",), "", ["<stdin>"]), (("-",), "null\n", ["<stdin>"]),
                           ((empty, comments), None, [empty, comments])):
    for fmt in ("yaml", "json"):
        rc, out, err = run(*[a for p in args for a in ("-f", p)], "-o", fmt, stdin=stdin)
        check("no objects %s -o %s: exit 1, named" % (names, fmt), (rc, out, err) == (
            1, "", "".join("%s: no objects passed to inject\n" % n for n in names)), (rc, out, err))
rc, out, err = run("-f", empty, "-f", "examples/deployment-java.yaml")
check("an empty file among others: no error", rc == 0 and out and "no objects" not in err, (rc, err))

# A file that does not parse cannot be written through document by document:
# no output at all, for any file (kubectl apply of empty input is an error
# and prunes nothing), exit 1.
synerr = os.path.join(tmp, "synerr.yaml")
with open(synerr, "w") as f:
    f.write("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\nkind: [\n")
rc, out, err = run("-f", "examples/deployment-java.yaml", "-f", synerr, "--resources", "examples/resources")
check("a file that does not parse: no output for any file", (rc, out, err) == (
    1, "", "%s:6: did not find expected node content\n" % synerr), (rc, out, err))

# A malformed item of a List: kept in the List as it was, the others injected.
mlist = os.path.join(tmp, "mlist.yaml")
with open(mlist, "w") as f:
    f.write("apiVersion: v1\nkind: List\nitems:\n"
            "- apiVersion: apps/v1\n  kind: Deployment\n  metadata: {name: bad}\n"
            "  spec:\n    template:\n      metadata:\n"
            "        annotations: {instrumentation.opentelemetry.io/inject-java: 'true'}\n"
            "      spec:\n        containers:\n        - name: app\n          env: {name: A, value: b}\n"
            "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: good\n"
            "    annotations: {instrumentation.opentelemetry.io/inject-java: 'true'}\n"
            "  spec: {containers: [{name: app, image: a}]}\n")
rc, out, err = run("-f", mlist, "--resources", "examples/resources")
check("malformed List item: message", (rc, err) == (
    1, "%s:14: Deployment default/bad: spec.template.spec.containers[0].env: expected a list, got an object\n"
    % mlist), (rc, err))
lst = yaml.safe_load(out)
with open(mlist) as f:
    mlist_in = yaml.safe_load(f)
check("malformed List item: kept as it was, the other injected", lst["kind"] == "List" and
      [i["metadata"]["name"] for i in lst["items"]] == ["bad", "good"] and lst["items"][0] == mlist_in["items"][0] and
      [c["name"] for c in lst["items"][1]["spec"]["initContainers"]] == ["opentelemetry-auto-instrumentation-java"], out)

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
# A language's other name, too far from its own for an edit distance, is
# named as well (before any distance: inject-py is not inject-go).
for key, want in (("inject-golang", "inject-go"), ("inject-py", "inject-python"), ("inject-js", "inject-nodejs"),
                  ("golang-container-names", "go-container-names"), ("inject-apache", "inject-apache-httpd")):
    rc2, _out, err2 = run("-f", "-", stdin="apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
                          "  annotations: {instrumentation.opentelemetry.io/%s: 'true'}\n"
                          "spec: {containers: [{name: app, image: a}]}\n" % key)
    check("other name %s: did you mean %s" % (key, want), (rc2, err2) == (0, "<stdin>:1: warning: annotation "
          "instrumentation.opentelemetry.io/%s is not one otel-webhook knows; did you mean "
          "instrumentation.opentelemetry.io/%s?\n" % (key, want)), err2)
docs = list(yaml.safe_load_all(out))
app = docs[2]["spec"]["template"]["spec"]["containers"][0]
check("typo: the SDK still injected", any(e["name"] == "OTEL_SERVICE_NAME" for e in app.get("env", [])), app)


def write(name, text):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def first_line(err):
    return err.split("\n", 1)[0]


JAVA_ANN = "{instrumentation.opentelemetry.io/inject-java: 'true'}"


def pod_yaml(name, ann="{}", ns=None):
    meta = "{name: %s, annotations: %s%s}" % (name, ann, ", namespace: %s" % ns if ns else "")
    return "apiVersion: v1\nkind: Pod\nmetadata: %s\nspec:\n  containers: [{name: app, image: a}]\n" % meta


# ---- --help and usage errors: the flag and the problem on one line, then
# where the usage is (not the usage: the reason would scroll away); exit 2,
# nothing on stdout.
check("help rc", _rc == 0 and _err == "", (_rc, _err))
check("help usage line", USAGE.startswith(
    "usage: otel-webhook inject -f FILE|DIR|- [-f ...] [-R] [--resources DIR]... [--namespace NS]\n"), USAGE[:200])
check("help exit statuses", "Exit status: 0 done, 1 bad input\n(FILE:LINE: reason; also input without any object, as "
      "for kubectl apply), 2 usage,\n3 --fail-on-skip and something was skipped.\n" in USAGE, USAGE[-300:])
check("help: malformed templates written through", "is written through unchanged, never dropped\n(kubectl apply --prune "
      "would delete a missing one), with\nFILE:LINE: KIND NS/NAME: FIELD: REASON." in USAGE, USAGE[-400:])
for args, line in [
        ((), "-f is required"),
        (("-f", "examples/deployment-java.yaml", "-o", "yml"), "-o yml: expected yaml, json or patch"),
        (("-f", "examples/deployment-java.yaml", "--output=yml"), "-o yml: expected yaml, json or patch"),
        (("-f", "examples/deployment-java.yaml", "--native-sidecars", "maybe"), "--native-sidecars maybe: expected on or off"),
        (("-f", "examples/deployment-java.yaml", "--bogus"), "unknown option --bogus"),
        (("-f", "examples/deployment-java.yaml", "--bogus=1"), "unknown option --bogus"),
        (("-f", "examples/deployment-java.yaml", "-z"), "unknown option -z"),
        (("-f", "examples/deployment-java.yaml", "--n", "x"), "ambiguous option --n"),
        (("-f", "examples/deployment-java.yaml", "--report=yes"), "--report takes no value"),
        (("-f", "examples/deployment-java.yaml", "stray"), 'unexpected argument "stray"'),
        (("-f",), "-f needs a value"),
        (("-f", "examples/deployment-java.yaml", "--resources"), "--resources needs a value"),
        (("-f", "-", "-f", "-"), "-f -: standard input can be read only once"),
]:
    rc, out, err = run(*args, stdin="")
    check("usage error %s: rc" % (args,), rc == 2 and out == "", (rc, out))
    check("usage error %s: message" % (args,), err == "otel-webhook inject: %s\n%s" % (line, HINT), err[:300])

# A short option's value joined by '=' is the value, as kubectl (pflag)
# reads it: -f=FILE is FILE, not a file named "=FILE".
want = run("-f", "examples/deployment-java.yaml", "-n", "shop")
check("-f=FILE -n=NS: as -f FILE -n NS", want[0] == 0 and want[1] and
      run("-f=examples/deployment-java.yaml", "-n=shop") == want, want[2])
check("-Rf=FILE: as -R -f FILE", run("-Rf=examples/deployment-java.yaml", "-n=shop") == want)
rc, out, err = run("-f", "=examples/deployment-java.yaml")
check("-f =FILE (its own word) is a file named =FILE", rc == 1 and
      err == "=examples/deployment-java.yaml: cannot read: No such file or directory\n", (rc, err))

# serve and certs say what is wrong too.
for args, line in [
        (("--tls-cert", "c", "--tls-key", "k"), "--listen is required"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--threads", "0"),
         "--threads 0: expected a whole number from 1 to 256"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--native-sidecars", "maybe"),
         "--native-sidecars maybe: expected auto, on or off"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--log-format", "xml"),
         "--log-format xml: expected json or text"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--request-timeout", "0"),
         "--request-timeout 0: expected seconds from 0.1 to 86400"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--access-review-budget", "0"),
         "--access-review-budget 0: expected milliseconds from 1 to 86400"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--kubeconfig", "x", "--in-cluster"),
         "--kubeconfig and --in-cluster exclude each other"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "--context", "x"), "--context needs --kubeconfig"),
        (("--bogus",), "unknown option --bogus"),
        (("--listen",), "--listen needs a value"),
        (("--listen", ":1", "--tls-cert", "c", "--tls-key", "k", "x"), 'unexpected argument "x"'),
]:
    rc, out, err = run(*args, cmd="serve")
    check("serve usage %s" % (args,), rc == 2 and out == "" and
          err == "otel-webhook serve: %s\nRun 'otel-webhook serve --help' for usage.\n" % line, (rc, err[:300]))
rc, out, err = run(cmd="certs")
check("certs without a subcommand", rc == 2 and err ==
    "otel-webhook certs: expected a subcommand: generate\nRun 'otel-webhook certs generate --help' for usage.\n",
    (rc, err[:200]))
p = subprocess.run([BIN], capture_output=True, text=True)
check("no command", p.returncode == 2 and p.stderr ==
    "otel-webhook: expected a command\nRun 'otel-webhook --help' for usage.\n", (p.returncode, p.stderr[:200]))
p = subprocess.run([BIN, "frobnicate"], capture_output=True, text=True)
check("unknown command", p.returncode == 2 and p.stderr ==
    "otel-webhook: unknown command \"frobnicate\"\nRun 'otel-webhook --help' for usage.\n", (p.returncode, p.stderr))

# ---- kind: List (kubectl get -o yaml): every item is injected, the List
# stays a List; items with no kind pass through; a List in a List is refused.
klist = write("list.yaml", """apiVersion: v1
items:
- apiVersion: apps/v1
  kind: Deployment
  metadata:
    name: web
    namespace: shop
  spec:
    template:
      metadata:
        annotations:
          instrumentation.opentelemetry.io/inject-java: "true"
      spec:
        containers:
        - name: app
          image: a
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: c, namespace: shop}
- metadata: {name: no-kind}
  spec: {containers: [{name: app}]}
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
    namespace: shop
    annotations: {instrumentation.opentelemetry.io/inject-java: missing}
  spec:
    containers: [{name: app, image: a}]
kind: List
metadata:
  resourceVersion: ""
""")
res_shop = write("res-shop/inst.yaml", "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
                 "metadata: {name: java, namespace: shop}\nspec: {exporter: {endpoint: 'http://c:4318'}}\n")
rc, out, err = run("-f", klist, "--resources", os.path.dirname(res_shop), "--report")
check("list rc", rc == 0, err)
check("list report", err == "%s:22: warning: inject-java: Instrumentation shop/missing not found; Java not injected\n"
      "Deployment shop/web: injected: java into app\n"
      "Pod shop/p: skipped: not_found\n"
      "2 objects: 1 injected, 1 skipped, 0 unchanged\n" % klist, err)
lst = yaml.safe_load(out)
with open(klist) as f:
    orig_list = yaml.safe_load(f)
check("list shape kept", lst["kind"] == "List" and lst["metadata"] == {"resourceVersion": ""} and
      len(lst["items"]) == 4, out[:300])
check("list deployment injected", [c["name"] for c in lst["items"][0]["spec"]["template"]["spec"]["initContainers"]]
      == ["opentelemetry-auto-instrumentation-java"], lst["items"][0])
check("list other items as they were", lst["items"][1:] == orig_list["items"][1:], lst["items"][1:])
check("a List with a changed item is written anew", "    kind: ConfigMap\n    metadata:\n      name: c\n      namespace: shop\n" in out and
      "metadata:\n  resourceVersion: \"\"\n" in out, out)
rc, jout, err = run("-f", klist, "--resources", os.path.dirname(res_shop), "-o", "json")
check("list -o json is the List itself", rc == 0 and json.loads(jout) == lst, jout[:300])

# The List -o json gives for several documents reads back: what was
# injected is now already instrumented.
two_pods = write("two-pods.yaml", pod_yaml("a", JAVA_ANN) + "---\n" + pod_yaml("b"))
rc, jout, err = run("-f", two_pods, "--resources", "examples/resources", "-o", "json")
jl = json.loads(jout)
check("-o json of two documents: a List", rc == 0 and jl["kind"] == "List" and len(jl["items"]) == 2, jout[:300])
rc, out, err = run("-f", "-", "--resources", "examples/resources", "--report", "-o", "json", stdin=jout)
check("the List read back", rc == 0 and json.loads(out) == jl and err ==
      "Pod default/a: unchanged: already instrumented\nPod default/b: unchanged: nothing asked\n"
      "2 objects: 0 injected, 0 skipped, 2 unchanged\n", (rc, err))
# Several documents, one of them a List: one List of all the items.
rc, out, err = run("-f", two_pods, "-f", klist, "-o", "json")
check("-o json flattens Lists", rc == 0 and [i.get("metadata", {}).get("name") for i in json.loads(out)["items"]]
      == ["a", "b", "web", "c", "no-kind", "p"], out[:300])

# Resources in a List (kubectl get instrumentation -o yaml) count too.
res_list = write("res-list.yaml", "apiVersion: v1\nkind: List\nitems:\n"
                 "- apiVersion: opentelemetry.io/v1alpha1\n  kind: Instrumentation\n"
                 "  metadata: {name: java, namespace: default}\n  spec: {exporter: {endpoint: 'http://c:4318'}}\n")
rc, out, err = run("-f", res_list, "-f", two_pods, "--report")
check("Instrumentation from a List", rc == 0 and "Pod default/a: injected: java into app\n" in err, err)

nested = write("nested.yaml", "apiVersion: v1\nkind: List\nitems:\n- " + pod_yaml("a", JAVA_ANN).replace("\n", "\n  ") +
               "\n- apiVersion: v1\n  kind: List\n  items: []\n")
rc, out, err = run("-f", nested, "--resources", "examples/resources", "--report")
check("nested List rc", rc == 1, rc)
check("nested List message", err == "%s:10: a List inside a List is not read; left as it is\n"
      "Pod default/a: injected: java into app\n1 object: 1 injected, 0 skipped, 0 unchanged\n" % nested, err)
check("nested List left as it is", yaml.safe_load(out)["items"][1] == {"apiVersion": "v1", "kind": "List", "items": []},
      out[-200:])

# ---- several -f, folders, -R
a_yaml = write("multi/a.yaml", pod_yaml("a", JAVA_ANN) + "---\n" + pod_yaml("a2", "{instrumentation.opentelemetry.io/inject-java: nope}"))
b_yaml = write("multi/b.yaml", "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\n"
               "metadata: {name: java}\nspec: {exporter: {endpoint: 'http://c:4318'}}\n")
rc, out, err = run("-f", a_yaml, "-f", b_yaml, "--report")
check("-f -f rc", rc == 0, err)
check("-f -f: resources of a later file, messages name the file",
      err == "%s:7: warning: inject-java: Instrumentation default/nope not found; Java not injected\n"
      "Pod default/a: injected: java into app\nPod default/a2: skipped: not_found\n"
      "2 objects: 1 injected, 1 skipped, 0 unchanged\n" % a_yaml, err)
docs = list(yaml.safe_load_all(out))
check("-f -f: every document, in order", [d["metadata"]["name"] for d in docs] == ["a", "a2", "java"], out[:300])
with open(b_yaml) as f:
    check("-f -f: the second file byte for byte after a separator", out.endswith("\n---\n" + f.read()), out[-300:])

folder = os.path.join(tmp, "folder")
write("folder/b.yml", pod_yaml("b"))
write("folder/a.json", json.dumps(json.loads(json.dumps(yaml.safe_load(pod_yaml("a"))))))
write("folder/c.yaml", pod_yaml("c"))
write("folder/notes.txt", "not a manifest")
write("folder/.hidden.yaml", pod_yaml("hidden"))
write("folder/sub/d.yaml", pod_yaml("d"))
write("folder/.git/e.yaml", pod_yaml("e"))
# A symlinked manifest is read; a symlinked folder is not walked, even with -R.
os.symlink(write("outside/l.yaml", pod_yaml("l")), os.path.join(folder, "l.yaml"))
os.symlink(os.path.join(folder, "sub"), os.path.join(folder, "sublink"))
rc, out, err = run("-f", folder, "--report")
check("-f DIR: manifests in name order, no subfolders", rc == 0 and
      [d["metadata"]["name"] for d in yaml.safe_load_all(out)] == ["a", "b", "c", "l"], (rc, out[:300], err))
check("-f DIR: report", err == "Pod default/a: unchanged: nothing asked\nPod default/b: unchanged: nothing asked\n"
      "Pod default/c: unchanged: nothing asked\nPod default/l: unchanged: nothing asked\n"
      "4 objects: 0 injected, 0 skipped, 4 unchanged\n", err)
rc, out, err = run("-f", folder + "/", "-R")
check("-f DIR -R: subfolders too, dot-folders not", rc == 0 and
      [d["metadata"]["name"] for d in yaml.safe_load_all(out)] == ["a", "b", "c", "l", "d"], (rc, out[:300], err))
rc, out, err = run("-f", folder, "--recursive", "-o", "json")
check("--recursive", rc == 0 and len(json.loads(out)["items"]) == 5, (rc, err))
write("badfolder/a.yaml", pod_yaml("a"))
write("badfolder/b.yaml", "kind: Pod\nmetadata:\n  name: [x\n")
rc, out, err = run("-f", os.path.join(tmp, "badfolder"))
check("-f DIR: a file that does not parse", rc == 1 and out == "" and
      err.startswith(os.path.join(tmp, "badfolder", "b.yaml") + ":4: "), (rc, err))
os.makedirs(os.path.join(tmp, "emptyfolder"))
write("emptyfolder/readme.md", "no manifests")
rc, out, err = run("-f", os.path.join(tmp, "emptyfolder"))
check("-f DIR without manifests", rc == 1 and out == "" and
      err == "%s: no .yaml, .yml or .json file in the folder\n" % os.path.join(tmp, "emptyfolder"), (rc, err))
rc, out, err = run("-f", "-", "-f", folder, stdin=pod_yaml("s"))
check("-f - with others", rc == 0 and [d["metadata"]["name"] for d in yaml.safe_load_all(out)] == ["s", "a", "b", "c", "l"],
      (rc, out[:200], err))
# Files are joined without losing a line break or doubling a separator.
write("join/1.yaml", "kind: A\nmetadata: {name: one}")
write("join/2.yaml", "---\nkind: B\n")
write("join/3.yaml", "# only a comment")
write("join/4.yaml", "kind: C\n")
rc, out, err = run("-f", os.path.join(tmp, "join"))
check("files joined", rc == 0 and out == "kind: A\nmetadata: {name: one}\n---\nkind: B\n# only a comment\n---\nkind: C\n",
      repr(out))

# ---- --report and --fail-on-skip
report_in = write("report.yaml", "\n---\n".join([
    pod_yaml("ok", JAVA_ANN, ns="default"),
    pod_yaml("partial", "{instrumentation.opentelemetry.io/inject-java: 'true', sidecar.opentelemetry.io/inject: nope}"),
    pod_yaml("plain"),
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: drop\n  annotations: {sidecar.opentelemetry.io/inject: 'false'}\n"
    "spec:\n  containers: [{name: app, image: a}, {name: otc-container, image: c}]",
    "apiVersion: v1\nkind: Pod\nmetadata:\n  name: nothing-to-drop\n  annotations: {sidecar.opentelemetry.io/inject: 'false'}\n"
    "spec:\n  containers: [{name: app, image: a}]",
    "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: data}\nspec:\n  template:\n"
    "    metadata:\n      annotations: {instrumentation.opentelemetry.io/inject-java: default/java, "
    "instrumentation.opentelemetry.io/container-names: 'app,side', sidecar.opentelemetry.io/inject: default/sidecar-for-my-app}\n"
    "    spec:\n      containers: [{name: app, image: a}, {name: side, image: b}]",
    "apiVersion: v1\nkind: Pod\nmetadata: {generateName: gen-}\nspec: {containers: [{name: app, image: a}]}",
]) + "\n")
rc, out, err = run("-f", report_in, "--resources", "examples/resources", "--report")
check("report rc", rc == 0, err)
check("report lines", err ==
      "%s:8: warning: sidecar: OpenTelemetryCollector default/nope not found; sidecar not injected\n"
      "Pod default/ok: injected: java into app\n"
      "Pod default/partial: skipped: not_found; injected: java into app\n"
      "Pod default/plain: unchanged: nothing asked\n"
      "Pod default/drop: changed: sidecar removed\n"
      "Pod default/nothing-to-drop: unchanged: nothing to do\n"
      "StatefulSet data/db: injected: java into app,side, sidecar otc-container\n"
      "Pod default/gen-: unchanged: nothing asked\n"
      "7 objects: 2 injected, 1 skipped, 3 unchanged, 1 changed\n" % report_in, err)
rc, out2, err = run("-f", report_in, "--resources", "examples/resources", "--fail-on-skip")
check("--fail-on-skip: exit 3, output complete", rc == 3 and out2 == out, rc)
check("--fail-on-skip alone prints no report", err.endswith("sidecar not injected\n"), err)
rc, out, err = run("-f", two_pods, "--resources", "examples/resources", "--fail-on-skip")
check("--fail-on-skip, nothing skipped: 0", rc == 0, (rc, err))
bad_tmpl = write("bad-template.yaml", pod_yaml("p", "{instrumentation.opentelemetry.io/inject-java: nope}") +
                 "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {template: 5}\n")
rc, out, err = run("-f", bad_tmpl, "--report", "--fail-on-skip")
check("bad input wins over --fail-on-skip", rc == 1, rc)
check("invalid in the report", err.endswith("Pod default/p: skipped: not_found\nDeployment default/d: invalid: no pod template\n"
                                            "2 objects: 0 injected, 1 skipped, 0 unchanged, 1 invalid\n")
      and "%s:7: Deployment has no pod template\n" % bad_tmpl in err, err)
rc, out, err = run("-f", "-", "--resources", "examples/resources", "-o", "patch", "--report", stdin=pod_json)
check("report with -o patch", rc == 0 and out == patch_out and err == "Pod default/p: injected: java into app\n"
      "1 object: 1 injected, 0 skipped, 0 unchanged\n", (rc, err))

# ---- byte for byte: documents nothing was injected into are their bytes.
with open("tests/data/inject/helm.yaml") as f:
    helm = f.read()
rc, out, err = run("-f", "tests/data/inject/helm.yaml", "--report")
check("helm: nothing injected, output is the input", rc == 0 and out == helm, out)
check("helm: report", err == "tests/data/inject/helm.yaml:40: warning: inject-java: no Instrumentation in namespace "
      "default; Java not injected\nDeployment default/release-mychart: skipped: ambiguous\n"
      "Job default/release-migrate: unchanged: nothing asked\n2 objects: 0 injected, 1 skipped, 1 unchanged\n", err)
rc, out, err = run("-f", "-", stdin=helm)
check("helm from standard input", rc == 0 and out == helm)
# The Deployment injected: everything before its first line and after its
# last is kept; its own text is written anew and is what -o json says.
rc, out, err = run("-f", "tests/data/inject/helm.yaml", "--resources", "examples/resources")
start = helm.index("apiVersion: apps/v1")
end = helm.index("---\n# Source: mychart/templates/job.yaml")
check("helm injected: before kept", rc == 0 and out.startswith(helm[:start]), out[:start + 100])
check("helm injected: after kept", out.endswith(helm[end:]), out[-400:])
rc, jout, err = run("-f", "tests/data/inject/helm.yaml", "--resources", "examples/resources", "-o", "json")
middle = out[start:len(out) - (len(helm) - end)]
check("helm injected: the document anew", yaml.safe_load(middle) == json.loads(jout)["items"][3], middle[:300])
check("helm injected: separators neither lost nor doubled",
      [l for l in out.split("\n") if l.startswith("---")] == [l for l in helm.split("\n") if l.startswith("---")])
check("helm injected: block style, no comments", "# a comment on a label" not in middle and "{app: web}" not in middle
      and "args:\n            - \"--port\"\n            - \"8080\"\n" in middle, middle[:600])

# A document written anew: exactly what is kept and what is not (key order
# kept; comments inside dropped; flow style and quoting made uniform; the
# lines before it and the comments after it kept).
changed = write("changed.yaml", """# before
kind: Pod
apiVersion: v1
metadata:
  name: p   # the name
  annotations: {sidecar.opentelemetry.io/inject: 'false', note: 'single quoted', n: '08'}
spec:
  containers: [{name: app, image: "app:1", args: ['--a', "b"]}, {name: otc-container, image: c}]
  # inside
  hostname: |
    literal
    text
status: {}
# trailing
--- {kind: ConfigMap}   # untouched
""")
rc, out, err = run("-f", changed)
check("changed document exactly", rc == 0 and out == """# before
kind: Pod
apiVersion: v1
metadata:
  name: p
  annotations:
    sidecar.opentelemetry.io/inject: "false"
    note: single quoted
    "n": "08"
spec:
  containers:
    - name: app
      image: app:1
      args:
        - "--a"
        - b
  hostname: |
    literal
    text
status: {}
# trailing
--- {kind: ConfigMap}   # untouched
""", out)
flow = write("flow.yaml", "--- {kind: Pod, metadata: {name: p, annotations: {sidecar.opentelemetry.io/inject: 'false'}}, "
             "spec: {containers: [{name: otc-container}]}}\n")
rc, out, err = run("-f", flow)
check("changed flow document after ---", rc == 0 and out == "---\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
      "    sidecar.opentelemetry.io/inject: \"false\"\nspec:\n  containers: []\n", repr(out))
# JSON input is written anew as YAML.
rc, out, err = run("-f", "-", stdin=json.dumps(yaml.safe_load(pod_yaml("j"))))
check("JSON input, YAML output", rc == 0 and out == "apiVersion: v1\nkind: Pod\nmetadata:\n  name: j\n  annotations: {}\n"
      "spec:\n  containers:\n    - name: app\n      image: a\n", repr(out))
# CRLF line ends and a BOM are bytes like any others.
helm_crlf = write("helm-crlf.yaml", "\ufeff" + helm.replace("\n", "\r\n"))
with open(helm_crlf, "rb") as f:
    crlf_bytes = f.read()
p = subprocess.run([BIN, "inject", "-f", helm_crlf], capture_output=True)
check("CRLF and BOM kept", p.returncode == 0 and p.stdout == crlf_bytes, p.stdout[:200])
p = subprocess.run([BIN, "inject", "-f", helm_crlf, "-f", helm_crlf], capture_output=True)
check("a BOM only where the stream starts", p.returncode == 0 and p.stdout == crlf_bytes + crlf_bytes[3:], p.stdout[:200])
# UTF-16 has no spans to copy: written anew, as UTF-8.
u16 = os.path.join(tmp, "utf16.yaml")
with open(u16, "wb") as f:
    f.write("kind: ConfigMap\nmetadata: {name: u}\n".encode("utf-16"))
rc, out, err = run("-f", u16)
check("UTF-16 written anew", rc == 0 and out == "kind: ConfigMap\nmetadata:\n  name: u\n", repr(out))
# A pod past a bound: skipped (limit), exit 1, the document as it was.
many = "".join("  - {name: c%d, image: a}\n" % i for i in range(257))
big_pod = write("big-pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: big, annotations: %s}\nspec:\n  containers:\n%s"
                % (JAVA_ANN, many))
rc, out, err = run("-f", big_pod, "--resources", "examples/resources", "--report")
with open(big_pod) as f:
    check("past a bound", rc == 1 and out == f.read() and err.endswith("Pod default/big: skipped: limit\n"
          "1 object: 0 injected, 1 skipped, 0 unchanged\n"), (rc, err[-300:]))
# A write error is bad output, not success.
with open("/dev/full", "w") as full:
    p = subprocess.run([BIN, "inject", "-f", two_pods, "--resources", "examples/resources"], stdout=full, capture_output=False, stderr=subprocess.PIPE, text=True)
check("write error", p.returncode == 1 and p.stderr == "otel-webhook inject: writing the output: No space left on device\n",
      (p.returncode, p.stderr))

sys.exit(check.finish(RESULTS))
