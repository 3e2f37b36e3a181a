#!/usr/bin/python3
"""The status record from the outside: `otel-webhook uninject` (round trips
over every manifest in the repository that asks for an injection, objects
without a record untouched byte for byte, records that cannot be applied),
`explain` (golden outputs in tests/data/explain), `inject`'s warning on a
stale record, and `outdated` against the fake API server.

usage: record_test.py OTEL_WEBHOOK [RESULTS]"""
import copy
import json
import os
import subprocess
import sys

import yaml

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, scratch_dir  # noqa: E402

check = Checks("record")
tmp = scratch_dir("otel-record-test-")
KEY = "otel-webhook/status"


def run(cmd, *args, stdin=None):
    p = subprocess.run([BIN, cmd, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def docs(text):
    return [d for d in yaml.safe_load_all(text) if d is not None]


def templates(objs):
    """The pod (templates) of each object, for the record's checks."""
    out = []
    for o in objs:
        items = o.get("items", []) if o.get("kind") == "List" else [o]
        for it in items:
            k = it.get("kind")
            if k == "Pod":
                out.append(it)
            elif k == "CronJob":
                out.append(it["spec"]["jobTemplate"]["spec"]["template"])
            elif k in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"):
                out.append(it["spec"]["template"])
    return out


# ---- uninject: round trips --------------------------------------------------
# Every manifest in the repository that asks for an injection, with the
# resources it is meant for; inject then uninject gives back the input.
ROUND_TRIPS = [
    ("example", ["-f", "examples/deployment-java.yaml", "--resources", "examples/resources"]),
    ("typical bench pod", ["-f", "tests/bench/typical-pod.json", "--resources", "examples/resources"]),
    ("seven languages", ["-f", "tests/bench/seven-pod.json", "--resources", "tests/bench/resources",
                         "--config", os.path.join(tmp, "all-languages.yaml")]),
    ("native sidecar", ["-f", "examples/deployment-java.yaml", "--resources", "examples/resources",
                        "--native-sidecars", "on"]),
    ("helm render", ["-f", "tests/data/inject/helm.yaml", "--resources", "examples/resources"]),
]
write("all-languages.yaml", "enable-go-auto-instrumentation: true\nenable-nginx-auto-instrumentation: true\n")
for name, args in ROUND_TRIPS:
    src = args[1]
    with open(src) as f:
        orig_text = f.read()
    rc, injected, err = run("inject", *args)
    if not check("%s: inject" % name, rc == 0, err):
        continue
    pods = templates(docs(injected))
    recs = [p for p in pods if KEY in (p.get("metadata") or {}).get("annotations", {})]
    check("%s: a record on each injected pod" % name, recs and all(
        json.loads(p["metadata"]["annotations"][KEY])["v"] == 1 for p in recs), [p.get("metadata") for p in pods])
    path = write("injected.yaml", injected)
    rc, back, err = run("uninject", "-f", path)
    check("%s: uninject rc" % name, rc == 0 and err == "", err)
    check("%s: round trip" % name, docs(back) == docs(orig_text),
          json.dumps(docs(back), sort_keys=True)[:3000])
    rc, back_json, err = run("uninject", "-f", path, "-o", "json")
    want = docs(orig_text)
    check("%s: round trip as JSON" % name, rc == 0 and json.loads(back_json) == (
        want[0] if len(want) == 1 else {"apiVersion": "v1", "kind": "List", "items": want}), err)

# Objects without a record pass through byte for byte, whatever they are.
with open("tests/data/inject/helm.yaml") as f:
    helm = f.read()
rc, out, err = run("uninject", "-f", "tests/data/inject/helm.yaml")
check("no record: byte for byte", rc == 0 and out == helm and err == "", (rc, err))
rc, out, err = run("uninject", "-f", "-", stdin=helm)
check("no record from stdin", rc == 0 and out == helm, err)

# Only the injected document of several is written anew.
rc, inj, err = run("inject", "-f", "examples/deployment-java.yaml", "--resources", "examples/resources")
cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: keep}   # a comment\ndata: {a: '1'}\n"
mixed = write("mixed.yaml", cm + "---\n" + inj)
rc, out, err = run("uninject", "-f", mixed, "--report")
check("mixed: untouched document first, as it was", rc == 0 and out.startswith(cm + "---\n"), out[:300])
check("mixed: report", err == "Deployment default/my-java: uninjected\n1 uninjected, 0 unchanged, 0 invalid\n", err)
with open("examples/deployment-java.yaml") as f:
    check("mixed: the deployment back", docs(out)[1:] == docs(f.read()), out)

# A Pod through the webhook's own patch: -o json then uninject.
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": "p", "annotations": {"instrumentation.opentelemetry.io/inject-java": "true"}},
       "spec": {"containers": [{"name": "app", "image": "a",
                                "env": [{"name": "JAVA_TOOL_OPTIONS", "value": "-Xmx1g"}]}]}}
rc, out, err = run("inject", "-f", "-", "--resources", "examples/resources", "-o", "json", stdin=json.dumps(pod))
injected_pod = json.loads(out)
rec = json.loads(injected_pod["metadata"]["annotations"][KEY])
check("rewritten value recorded", rec["into"][0]["envWas"] == [{"name": "JAVA_TOOL_OPTIONS", "value": "-Xmx1g"}], rec)
rc, out, err = run("uninject", "-f", "-", "-o", "json", stdin=json.dumps(injected_pod))
check("JAVA_TOOL_OPTIONS restored", rc == 0 and json.loads(out) == pod, out)

# ---- uninject: records that cannot be applied ---------------------------------
bad = copy.deepcopy(injected_pod)
bad["metadata"]["annotations"][KEY] = "{oops"
p1 = write("bad-record.json", json.dumps(bad))
rc, out, err = run("uninject", "-f", p1, "-o", "json")
check("unreadable record", rc == 1 and err == "%s:1: Pod default/p: otel-webhook/status: not a JSON object; left as it is\n"
      % p1 and json.loads(out) == bad, (rc, err))
gone = copy.deepcopy(injected_pod)
del gone["spec"]["initContainers"]
p2 = write("changed-pod.yaml", yaml.safe_dump(gone))
rc, out, err = run("uninject", "-f", p2, "--report")
check("pod changed since", rc == 1 and err == (
    "%s:1: Pod default/p: the record names the init container opentelemetry-auto-instrumentation-java, "
    "which the pod does not have; left as it is\n"
    "Pod default/p: invalid: the record names the init container opentelemetry-auto-instrumentation-java, "
    "which the pod does not have\n0 uninjected, 0 unchanged, 1 invalid\n" % p2) and docs(out) == [gone], (rc, err))

# ---- uninject: usage ------------------------------------------------------------
_rc, UUSAGE, _err = run("uninject", "--help")
check("uninject --help", _rc == 0 and UUSAGE.startswith("usage: otel-webhook uninject -f FILE|DIR|- "), UUSAGE)
for args, line in ((("-o", "patch", "-f", "x"), "-o patch: expected yaml or json"),
                   ((), "-f is required"),
                   (("-f", "/nonexistent/x.yaml"), "-f /nonexistent/x.yaml: No such file or directory"),
                   (("-f", "-", "-f", "-"), "-f -: standard input can be read only once"),
                   (("--resources", "x"), "unknown option --resources")):
    rc, out, err = run("uninject", *args)
    check("uninject usage %s" % (args,), rc == 2 and err == "otel-webhook uninject: %s\n\n%s" % (line, UUSAGE), err[:300])

# ---- explain: golden outputs ----------------------------------------------------
# tests/data/explain/in/NAME.yaml explained against tests/data/explain's
# resources gives tests/data/explain/out/NAME.out exactly.
EXPLAIN = "tests/data/explain"
for name in sorted(os.listdir(os.path.join(EXPLAIN, "in"))):
    base = name[:-len(".yaml")]
    with open(os.path.join(EXPLAIN, "out", base + ".out")) as f:
        want = f.read()
    rc, out, err = run("explain", "-f", os.path.join(EXPLAIN, "in", name), "--resources", EXPLAIN)
    check("explain %s" % base, rc == 0 and out == want and err == "",
          "rc %d err %r\n%s" % (rc, err, "".join(
              "%s\n" % l for l in __import__("difflib").unified_diff(want.splitlines(), out.splitlines(), lineterm=""))))
rc, out, err = run("explain", "-f", "tests/data/inject/helm.yaml")
check("explain: nothing asks", rc == 0 and "annotations:\n    none asks for an injection\n" in out, out[:500])
rc, out, err = run("explain", "-f", "-", stdin="apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
check("explain: no pod", rc == 0 and out == "no Pod or pod template in the input\n", out)

# inject warns about an injected object whose record is stale, and leaves it.
stale = os.path.join(EXPLAIN, "in", "stale.yaml")
rc, out, err = run("inject", "-f", stale, "--resources", EXPLAIN)
with open(stale) as f:
    check("inject: stale record warned", rc == 0 and out == f.read() and err == (
        "%s:3: warning: Pod team/stale: its otel-webhook/status record is stale: Instrumentation team/inst-b "
        "(java) changed since the injection (resourceVersion 700, now resourceVersion 811)\n"
        "%s:3: warning: Pod team/stale: its otel-webhook/status record is stale: image of "
        "opentelemetry-auto-instrumentation-java: example.com/java-agent:1.0, now "
        "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0\n" % (stale, stale)), err)

# ---- explain: usage ---------------------------------------------------------------
_rc, EUSAGE, _err = run("explain", "--help")
check("explain --help", _rc == 0 and EUSAGE.startswith("usage: otel-webhook explain -f FILE|DIR|- "), EUSAGE)
for args, line in (((), "-f is required"),
                   (("-f", "x.yaml", "--resources", EXPLAIN, "--kubeconfig", "k"),
                    "--resources and --kubeconfig exclude each other"),
                   (("-f", EXPLAIN + "/resources.yaml", "--context", "c"), "--context needs --kubeconfig"),
                   (("-f", EXPLAIN + "/resources.yaml", "--resources", "/nonexistent"),
                    "--resources /nonexistent: No such file or directory")):
    rc, out, err = run("explain", *args)
    check("explain usage %s" % (args,), rc == 2 and err == "otel-webhook explain: %s\n\n%s" % (line, EUSAGE), err[:300])

sys.exit(check.finish(RESULTS))
