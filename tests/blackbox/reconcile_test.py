#!/usr/bin/python3
"""`otel-reconcile` from the outside: golden renders (exact YAML) for every
mode and object type, diagnostics and exit codes, and properties every
rendered object must have (valid YAML, names and label values within 63
characters, owner and selector consistency).

Goldens live next to their inputs in tests/data/reconcile: CASE.yaml is
rendered with --namespace test-ns and compared byte for byte with
CASE.out.yaml (stdout) and CASE.err (stderr; empty when absent).
OTEL_UPDATE_GOLDENS=1 rewrites them; review the diff before committing."""
import copy
import glob
import json
import os
import random
import re
import subprocess
import sys

import yaml

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks  # noqa: E402

check = Checks("reconcile")
DATA = "tests/data/reconcile"
UPDATE = os.environ.get("OTEL_UPDATE_GOLDENS") == "1"


def run(*args, stdin=None):
    p = subprocess.run([BIN, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr




def read(path):
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def first_diff(a, b):
    al, bl = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(al, bl)):
        if x != y:
            return "line %d: got %r want %r" % (i + 1, x, y)
    return "lengths %d vs %d lines" % (len(al), len(bl))


# ---- goldens ---------------------------------------------------------------
# case -> expected exit code
CASES = {
    "simplest": 0,
    "deployment-full": 0,
    "daemonset": 0,
    "statefulset": 0,
    "sidecar": 0,
    "long-name": 0,
    "v1alpha1": 0,
    "targetallocator": 0,
    "ta-standalone": 0,
    "ta-collector": 0,
    "ta-mtls": 0,
    "errors": 1,
}
outputs = {}
for case, want_rc in CASES.items():
    src = "%s/%s.yaml" % (DATA, case)
    rc, out, err = run("render", "-f", src, "--namespace", "test-ns")
    outputs[case] = out
    if UPDATE:
        with open("%s/%s.out.yaml" % (DATA, case), "w") as f:
            f.write(out)
        if err:
            with open("%s/%s.err" % (DATA, case), "w") as f:
                f.write(err)
        elif os.path.exists("%s/%s.err" % (DATA, case)):
            os.remove("%s/%s.err" % (DATA, case))
    want_out = read("%s/%s.out.yaml" % (DATA, case))
    want_err = read("%s/%s.err" % (DATA, case))
    check("%s rc" % case, rc == want_rc, (rc, err))
    check("%s stdout golden" % case, out == want_out, first_diff(out, want_out))
    check("%s stderr golden" % case, err == want_err, err)

# ---- what each golden contains (so a wrong golden cannot pass silently) ----


def objs(case):
    return [d for d in yaml.safe_load_all(outputs[case]) if d is not None]


def kinds(case):
    return ["%s/%s" % (o["kind"], o["metadata"]["name"]) for o in objs(case)]


check("simplest kinds", kinds("simplest") == [
    "Deployment/simplest-collector", "PodDisruptionBudget/simplest-collector",
    "ConfigMap/simplest-collector-5723ff27", "ServiceAccount/simplest-collector",
    "Service/simplest-collector", "Service/simplest-collector-headless",
    "Service/simplest-collector-monitoring", "NetworkPolicy/simplest-collector-networkpolicy"],
    kinds("simplest"))
check("deployment-full kinds", kinds("deployment-full") == [
    "Deployment/full-collector", "PodDisruptionBudget/full-collector",
    "ConfigMap/full-collector-7030a94c", "ServiceAccount/full-collector",
    "HorizontalPodAutoscaler/full-collector", "Service/full-collector",
    "Service/full-collector-headless", "Service/full-collector-monitoring",
    "Service/full-collector-extension", "Ingress/full-ingress",
    "NetworkPolicy/full-collector-networkpolicy", "ServiceMonitor/full-collector",
    "ServiceMonitor/full-monitoring-collector", "ClusterRole/full-prod-cluster-role",
    "ClusterRoleBinding/full-prod-collector"], kinds("deployment-full"))
check("daemonset kinds", [k.split("/")[0] for k in kinds("daemonset")] == [
    "DaemonSet", "ConfigMap", "Service", "Service", "Service", "NetworkPolicy",
    "Route", "Route", "Route"], kinds("daemonset"))
check("statefulset kinds", [k.split("/")[0] for k in kinds("statefulset")] == [
    "StatefulSet", "PodDisruptionBudget", "ConfigMap", "ServiceAccount", "Service", "Service",
    "Service", "Ingress", "ClusterRole", "ClusterRoleBinding", "HTTPRoute", "HTTPRoute"],
    kinds("statefulset"))
check("sidecar kinds", [k.split("/")[0] for k in kinds("sidecar")] == [
    "ConfigMap", "ServiceAccount", "PodMonitor", "ClusterRole", "ClusterRoleBinding"],
    kinds("sidecar"))

check("targetallocator kinds", [k.split("/")[0] for k in kinds("targetallocator")] == [
    "StatefulSet", "PodDisruptionBudget", "ConfigMap", "ServiceAccount", "Service", "NetworkPolicy",
    "TargetAllocator", "ConfigMap", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy"],
    kinds("targetallocator"))
ta_cm = yaml.safe_load(objs("targetallocator")[2]["data"]["collector.yaml"])
check("targetallocator receiver rewritten", ta_cm["receivers"]["prometheus"] == {
    "config": {"global": {"scrape_interval": "15s"}},
    "target_allocator": {"collector_id": "${POD_NAME}", "endpoint": "http://scraper-targetallocator:80",
                         "interval": "30s"}}, ta_cm["receivers"]["prometheus"])

# The hash of the e2e versioned-configmaps example (spec 2.3) names the
# ConfigMap and is the pod annotation.
dep = objs("simplest")[0]
check("simplest config hash annotation",
      dep["spec"]["template"]["metadata"]["annotations"]["opentelemetry-operator-config/sha256"]
      == "5723ff27edf2be60d63b08071d96bb77e0643ba2922ff585d3a7990f47830c16")
check("simplest volume names the ConfigMap",
      dep["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"] == "simplest-collector-5723ff27")

# Truncation (spec 2.1.1): 60 x a, against an independent Python rendition
# of the reference's Truncate and DNSName.


def truncate(fmt, mx, *vals):
    s = fmt % vals
    if len(s) > mx:
        excess, vals = len(s) - mx, list(vals)
        for i, v in enumerate(vals):
            if excess <= 0:
                break
            if len(v) > excess:
                vals[i], excess = v[:len(v) - excess], 0
            else:
                vals[i], excess = "", excess - len(v)
        s = fmt % tuple(vals)
        if len(s) > mx:
            return s[:mx]
    i, j = 0, len(s)
    while i < j and not s[i].isalnum():
        i += 1
    while j > i and not s[j - 1].isalnum():
        j -= 1
    return s[i:j]


def dns(s):
    s = s.lower()
    return "".join(c if (c.isascii() and c.isalnum()) else ("a" if i in (0, len(s) - 1) else "-")
                   for i, c in enumerate(s))


def name(fmt, *vals):
    return dns(truncate(fmt, 63, *vals))


a60 = "a" * 60
lns = "a-rather-long-namespace-name-for-the-instance-label"
base = name("%s-collector", a60)
h8 = objs("long-name")[2]["metadata"]["name"][-8:]
want = ["Deployment/" + base, "PodDisruptionBudget/" + base, "ConfigMap/" + name("%s-collector-%s", a60, h8),
        "ServiceAccount/" + base, "Service/" + base, "Service/" + name("%s-headless", base),
        "Service/" + name("%s-monitoring", base), "Service/" + name("%s-extension", base),
        "NetworkPolicy/" + name("%s-collector-networkpolicy", a60),
        "ServiceMonitor/" + base,
        # [quirk] the monitoring ServiceMonitor's name collides with the
        # base one once the CR name is cut (spec 7.6); kept.
        "ServiceMonitor/" + name("%s-collector", a60 + "-monitoring"),
        "ClusterRole/" + name("%s-%s-cluster-role", a60, lns),
        "ClusterRoleBinding/" + name("%s-%s-collector", a60, lns)]
check("long-name names", kinds("long-name") == want, (kinds("long-name"), want))
check("spec examples", base == "a" * 53 + "-collector" and name("%s-headless", base) == "a" * 53 + "--headless"
      and name("%s-monitoring", base) == "a" * 52 + "-monitoring"
      and name("%s-collector-%s", a60, "5723ff27") == "a" * 44 + "-collector-5723ff27")
for o in objs("long-name"):
    check("long-name %s length" % o["kind"], len(o["metadata"]["name"]) <= 63, o["metadata"]["name"])
inst = objs("long-name")[0]["metadata"]["labels"]["app.kubernetes.io/instance"]
check("instance label: namespace truncated first, no DNSName", inst == truncate("%s.%s", 63, lns, a60) ==
      lns[:2] + "." + a60, inst)

# Every object: valid shape, 63-character names and label values, every
# namespaced object in the CR namespace, selectors match pod labels.
for case in CASES:
    for o in objs(case):
        what = "%s %s/%s" % (case, o.get("kind"), o.get("metadata", {}).get("name"))
        md = o.get("metadata", {})
        check(what + " apiVersion+kind", bool(o.get("apiVersion")) and bool(o.get("kind")))
        check(what + " name <= 63", 0 < len(md.get("name", "")) <= 63, md.get("name"))
        for k, v in (md.get("labels") or {}).items():
            check(what + " label value <= 63", len(str(v)) <= 63, (k, v))
        if o["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            check(what + " namespace", md.get("namespace") in ("test-ns", "prod", "observability", "monitoring", "apps",
                                                               "a-rather-long-namespace-name-for-the-instance-label"),
                  md.get("namespace"))
        if o["kind"] in ("Deployment", "StatefulSet", "DaemonSet"):
            sel = o["spec"]["selector"]["matchLabels"]
            pod = o["spec"]["template"]["metadata"]["labels"]
            check(what + " selector matches pods", all(pod.get(k) == v for k, v in sel.items()))

# ---- CLI ---------------------------------------------------------------------
# Each subcommand has its own usage (stdout, exit 0 with --help); a usage
# error names the flag and the problem, then where that usage is, on
# stderr, exit 2.
rc, top, err = run("--help")
check("help rc", rc == 0 and err == "" and top.startswith("usage: otel-reconcile COMMAND [OPTIONS]\n") and
      all(c in top for c in ("  render ", "  run ", "  version ")), top)
rc, render_use, err = run("render", "--help")
check("render --help: its own usage", rc == 0 and err == "" and
      render_use.startswith("usage: otel-reconcile render -f FILE|- [--namespace NS] [--target-allocator-image IMAGE]\n\n") and
      "--filename FILE|-" in render_use and "--kubeconfig" not in render_use, render_use)
rc, run_use, err = run("run", "--help")
check("run --help: its own usage", rc == 0 and err == "" and run_use.startswith(
    "usage: otel-reconcile run [--once] (--in-cluster [--service-account-dir DIR] |\n") and
    all(f in run_use for f in ("--in-cluster", "--service-account-dir DIR", "--kubeconfig FILE", "--context NAME",
                               "--namespace NS", "--dry-run", "--once")) and "--filename" not in run_use, run_use)
rc, out, err = run("render", "-h")
check("render -h", rc == 0 and out == render_use)
with open("base/versions.h") as f:
    version = re.search(r'#define OTEL_WEBHOOK_VERSION "([^"]+)"', f.read()).group(1)
for args in (("version",), ("--version",)):
    rc, out, err = run(*args)
    check("%s: otel-reconcile VERSION, as otel-webhook version says it" % args[0],
          rc == 0 and out == "otel-reconcile %s\n" % version and err == "", (rc, out, err))
TOP_HINT = "Run 'otel-reconcile --help' for usage.\n"
RENDER_HINT = "Run 'otel-reconcile render --help' for usage.\n"
RUN_HINT = "Run 'otel-reconcile run --help' for usage.\n"
rc, out, err = run("version", "extra")
check("version with an argument", rc == 2 and err == 'otel-reconcile version: unexpected argument "extra"\n' + TOP_HINT,
      err)
rc, out, err = run()
check("no args", rc == 2 and err == "otel-reconcile: expected a command\n" + TOP_HINT and out == "", err)
rc, out, err = run("frobnicate")
check("unknown command", rc == 2 and err == 'otel-reconcile: unknown command "frobnicate"\n' + TOP_HINT, err)
# base/cli.h's wording, otel-webhook's: the word that is wrong and how, then
# where the command's usage is.
USAGE_ERRORS = [
    (("render",), "otel-reconcile render: -f is required\n", RENDER_HINT),
    (("render", "-f", DATA + "/simplest.yaml", "--bogus"), "otel-reconcile render: unknown option --bogus\n",
     RENDER_HINT),
    (("render", "-f", DATA + "/simplest.yaml", "-z"), "otel-reconcile render: unknown option -z\n", RENDER_HINT),
    (("render", "-f", DATA + "/simplest.yaml", "stray"), 'otel-reconcile render: unexpected argument "stray"\n',
     RENDER_HINT),
    (("render", "-f"), "otel-reconcile render: -f needs a value\n", RENDER_HINT),
    (("render", "--filename"), "otel-reconcile render: --filename needs a value\n", RENDER_HINT),
    (("render", "-f", DATA + "/simplest.yaml", "--namespace", ""), "otel-reconcile render: --namespace must not be "
     "empty\n", RENDER_HINT),
    (("render", "-f", DATA + "/simplest.yaml", "-n", ""), "otel-reconcile render: --namespace must not be "
     "empty\n", RENDER_HINT),
    (("run",), "otel-reconcile run: --kubeconfig or --in-cluster is required\n", RUN_HINT),
    (("run", "--in-cluster", "--kubeconfig", "x"), "otel-reconcile run: --kubeconfig and --in-cluster exclude each "
     "other\n", RUN_HINT),
    (("run", "--kubeconfig"), "otel-reconcile run: --kubeconfig needs a value\n", RUN_HINT),
    (("run", "--in-cluster", "--dry-run=yes"), "otel-reconcile run: --dry-run takes no value\n", RUN_HINT),
    (("run", "--in-cluster", "--bogus"), "otel-reconcile run: unknown option --bogus\n", RUN_HINT),
    (("run", "--in-cluster", "--d"), "otel-reconcile run: ambiguous option --d\n", RUN_HINT),
    (("run", "--in-cluster", "stray"), 'otel-reconcile run: unexpected argument "stray"\n', RUN_HINT),
    (("run", "--in-cluster", "--context", "c"), "otel-reconcile run: --context needs --kubeconfig\n", RUN_HINT),
    (("run", "--kubeconfig", "k", "--service-account-dir", "d"), "otel-reconcile run: --service-account-dir needs "
     "--in-cluster\n", RUN_HINT),
    (("run", "--kubeconfig=", "x"), "otel-reconcile run: --kubeconfig must not be empty\n", RUN_HINT),
    (("run", "--in-cluster", "--max-deletions", "0"), "otel-reconcile run: --max-deletions 0: must be a positive "
     "number\n", RUN_HINT),
]
for args, msg, use in USAGE_ERRORS:
    rc, out, err = run(*args)
    check("usage error %s: the flag and the problem, then where the usage is, exit 2" % " ".join(args),
          rc == 2 and out == "" and err == msg + use, (rc, err[:200]))
# getopt_long's spellings, as otel-webhook takes them: a long option's
# unambiguous prefix, a short one's value joined to it.
want = run("render", "-f", DATA + "/simplest.yaml", "--namespace", "elsewhere")
check("render --filen FILE -nNS: as -f FILE --namespace NS", want[0] == 0 and
      run("render", "--filen", DATA + "/simplest.yaml", "-nelsewhere") == want, want[2])
check("render -f=FILE -n=NS: as -f FILE -n NS (kubectl reads them so)",
      run("render", "-f=" + DATA + "/simplest.yaml", "-n=elsewhere") == want, want[2])
rc, out, err = run("render", "-f", "/nonexistent/x.yaml")
check("missing file: exit 1 as inject's, the file named", rc == 1 and
      err == "/nonexistent/x.yaml: cannot read: No such file or directory\n", err)

# stdin, and --namespace applies only where the object names none.
with open(DATA + "/v1alpha1.yaml") as f:
    text = f.read()
rc, out, err = run("render", "-f", "-", "--namespace", "elsewhere", stdin=text)
check("stdin rc", rc == 0, err)
check("stdin namespace (v1alpha1 in a List)", all(d["metadata"]["namespace"] == "elsewhere"
                             for d in yaml.safe_load_all(out) if d), out[:200])
rc, out, err = run("render", "-f", "-", stdin="apiVersion: v1\nkind: [\n")
check("stdin bad yaml", rc == 1 and err.startswith("<stdin>:2: "), err)
rc, out, err = run("render", "-f", "-", stdin="")
check("empty input", rc == 0 and out == "" and err == "", (rc, out, err))
rc, out, err = run("render", "-f", DATA + "/simplest.yaml", "--namespace=x")
check("--namespace= form keeps the object's namespace", rc == 0 and "namespace: observability" in out)

# The Target Allocator's config text is yaml.v2's, which is libyaml's emitter
# ported to Go: random strings full of indicator characters, some past 80
# columns, give exactly what libyaml (PyYAML's CDumper, best_width 80) writes,
# quoting and folding included.
check("PyYAML has libyaml (CDumper)", hasattr(yaml, "CDumper"))
rnd = random.Random(11)
folded = 0
for it in range(60):
    words = ["".join(rnd.choice("abcdefgh'#:-\"0129.,[]{}&*!|>%@`? ") for _ in range(rnd.randint(1, 12)))
             for _ in range(rnd.randint(1, 40))]
    s = " ".join(words)
    key = "k" * rnd.randint(1, 20)
    ta = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "TargetAllocator", "metadata": {"name": "t"},
          "spec": {"scrapeConfigs": [{"job_name": "j", "relabel_configs": [{key: s, "z": [s]}]}], "filterStrategy": "relabel-config"}}
    rc, out, err = run("render", "-f", "-", stdin=json.dumps(ta))
    got = [d for d in yaml.safe_load_all(out) if d][0]["data"]["targetallocator.yaml"] if rc == 0 else err
    cfg = {"allocation_strategy": "consistent-hashing", "collector_not_ready_grace_period": "30s",
           "collector_selector": None, "config": {"scrape_configs": [{"job_name": "j", "relabel_configs": [
               {key: s, "z": [s]}]}]}, "filter_strategy": "relabel-config"}
    want = yaml.dump(cfg, Dumper=getattr(yaml, "CDumper", yaml.Dumper), default_flow_style=False, width=80)
    folded += "\n        " in want
    check("targetallocator.yaml is libyaml's text %d" % it, got == want, (got, want))
check("some of those were folded", folded > 5, folded)

# A standalone TargetAllocator the API server's schema would refuse is
# refused, not guessed at: the field at fault, the CRD's enum message.
for spec, msg in (
        ({"allocationStrategy": 7}, 'spec.allocationStrategy: expected a string, got a number (quote it: "7")'),
        ({"allocationStrategy": "bogus"}, 'spec.allocationStrategy: Unsupported value: "bogus": supported values: '
                                          '"least-weighted", "consistent-hashing", "per-node"'),
        ({"filterStrategy": "x"}, 'spec.filterStrategy: Unsupported value: "x": supported values: "", "relabel-config"'),
        ({"scrapeConfigs": 5}, "spec.scrapeConfigs: expected a list, got a number"),
        ({"ports": [{"port": "x"}]}, "spec.ports[0].port: expected an integer, got a string")):
    ta = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "TargetAllocator", "metadata": {"name": "t"}, "spec": spec}
    rc, out, err = run("render", "-f", "-", stdin=json.dumps(ta))
    check("TargetAllocator refused: %s" % msg, rc == 1 and out == "" and err == "<stdin>:1: TargetAllocator t: %s\n" % msg,
          (rc, out[:200], err))

# Determinism: the same input renders the same bytes.
rc2, out2, _ = run("render", "-f", DATA + "/deployment-full.yaml", "--namespace", "test-ns")
check("deterministic", out2 == outputs["deployment-full"])

# Robustness: the golden inputs with random subtrees of spec and metadata
# replaced by odd values (wrong types, nulls, out-of-range ports, IPv6).
# Under the sanitizers, every one must render or fail cleanly.
random.seed(7)
seeds = [d for f in sorted(glob.glob(DATA + "/*.yaml"))
         if ".out." not in f and not f.endswith(("errors.yaml", "v1alpha1.yaml"))
         for d in yaml.safe_load_all(open(f)) if d]
ODD = [None, 0, -1, 70000, "", "x", [], {}, [1], {"a": None}, True, 1.5, "[::1]:0", ":99999999999", "a/b_c"]


def paths(o, p=()):
    yield p
    if isinstance(o, dict):
        for k, v in o.items():
            yield from paths(v, p + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from paths(v, p + (i,))


for it in range(200):
    d = copy.deepcopy(random.choice(seeds))
    for _ in range(random.randint(1, 4)):
        ps = [p for p in paths(d) if len(p) > 1 and p[0] in ("spec", "metadata")]
        if not ps:
            break
        p, o = random.choice(ps), d
        for k in p[:-1]:
            o = o[k]
        o[p[-1]] = copy.deepcopy(random.choice(ODD))
    text = yaml.safe_dump(d)
    rc, out, err = run("render", "-f", "-", stdin=text)
    ok = rc in (0, 1) and "Sanitizer" not in err and "runtime error" not in err
    check("robust %d" % it, ok, (rc, err[-800:], text))
    if ok and out:
        check("robust %d output is YAML" % it, all(isinstance(x, dict) for x in yaml.safe_load_all(out) if x))

rc = check.finish(RESULTS)
# `run` against the fake API server: its own suite, its own closing line.
run_rc = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      "reconcile_run_test.py"), BIN] + ([RESULTS] if RESULTS else [])).returncode
sys.exit(rc or run_rc)
