#!/usr/bin/python3
"""`otel-reconcile render` and `run` against tests/blackbox/fakeapi.py with
1,000 collectors, then 1,000 collectors with Target Allocators, side by side.

Usage: tests/bench/reconcile_bench.py BINARY [COLLECTORS [OTHER_BINARY ...]]
       (from the repository root; BINARY is the optimised build,
       build/otel-reconcile; each OTHER_BINARY, e.g. an older build, makes one
       more unchanged run against the same cluster, for side-by-side figures)

The first run creates everything (not timed as the figure of interest);
the second run, with nothing changed, is the steady state of the CronJob:
its wall time, its requests by method (it must make no PATCH or DELETE) and
the summary line are printed. The fake API server is single-process Python,
so the wall time is an upper bound dominated by its JSON encoding of the
LIST pages; the CPU time and peak RSS are otel-reconcile's own (measured by
GNU time, see run_child). The fake API server records managedFields on every apply,
as a real one does, so listed objects have a realistic size.

Each of the two sets (plain collectors; StatefulSet collectors with
spec.targetAllocator, whose allocators add a TargetAllocator, Deployment,
ConfigMap, ServiceAccount, Service, PDB and NetworkPolicy each) gets its own
fake cluster, and before its runs one `render` of the same 1,000 collectors
from a file (CPU and peak RSS)."""
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "blackbox"))
import fakeapi  # noqa: E402
from testlib import scratch_dir  # noqa: E402


def collector(i):
    ns = "bench-%02d" % (i % 20)
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
            "metadata": {"name": "c%04d" % i, "namespace": ns},
            "spec": {"mode": ("deployment", "daemonset", "statefulset")[i % 3],
                     "config": {"receivers": {"otlp": {"protocols": {"grpc": {}, "http": {}}}},
                                "processors": {"batch": {}},
                                "exporters": {"otlp": {"endpoint": "backend-%d:4317" % i}},
                                "service": {"pipelines": {"traces": {"receivers": ["otlp"], "processors": ["batch"],
                                                                     "exporters": ["otlp"]}}}}}}


def collector_ta(i):
    c = collector(i)
    c["metadata"]["name"] = "t%04d" % i
    s = c["spec"]
    s["mode"] = "statefulset"
    s["targetAllocator"] = {"enabled": True, "prometheusCR": {"enabled": True}}
    s["config"]["receivers"]["prometheus"] = {"config": {"scrape_configs": [
        {"job_name": "job-%d" % i, "scrape_interval": "30s", "static_configs": [{"targets": ["app-%d:8080" % i]}]}]}}
    s["config"]["service"]["pipelines"]["metrics"] = {"receivers": ["prometheus"], "exporters": ["otlp"]}
    return c


def run_child(argv):
    """(exit code, stdout, stderr, CPU seconds, peak RSS MiB) of one child.

    Through GNU time: a child forked from this process would count this
    process's own resident pages (the fake API server's objects) in its
    ru_maxrss, as Linux keeps the high-water mark across exec."""
    with tempfile.NamedTemporaryFile("w+") as stats, tempfile.TemporaryFile("w+") as out, \
            tempfile.TemporaryFile("w+") as err:
        rc = subprocess.run(["/usr/bin/time", "-o", stats.name, "-f", "%U %S %M"] + argv, stdout=out, stderr=err,
                            timeout=900).returncode
        user, system, kib = stats.read().split()[-3:]
        out.seek(0)
        err.seek(0)
        return rc, out.read(), err.read(), float(user) + float(system), int(kib) / 1024.0


def scenario(label, make, binary, n, others, tmp, crt, key):
    fake = fakeapi.FakeAPI(crt, key, token="bench", log_path=os.devnull)
    fake.start()
    kc = os.path.join(tmp, "kubeconfig-%s.yaml" % label.replace(" ", "-"))
    with open(kc, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "b",
                   "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:%d" % fake.port,
                                                          "certificate-authority": crt}}],
                   "users": [{"name": "u", "user": {"token": "bench"}}],
                   "contexts": [{"name": "b", "context": {"cluster": "c", "user": "u"}}]}, f)
    try:
        crs = [make(i) for i in range(n)]
        src = os.path.join(tmp, "collectors-%s.json" % label.replace(" ", "-"))
        with open(src, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "List", "items": crs}, f)
        t0 = time.monotonic()
        rc, out, err, cpu, rss = run_child([binary, "render", "-f", src])
        dt = time.monotonic() - t0
        print("render, %d %s: %.2f s wall, %.2f s CPU, peak RSS %.0f MiB, %d objects, %.1f MB of YAML, exit %d" % (
            n, label, dt, cpu, rss, out.count("\n---\n") + out.startswith("---\n"), len(out) / 1e6, rc))
        if rc != 0:
            print(err[-2000:])
            return 1
        for c in crs:
            fake.apply("opentelemetrycollectors", c, record=False)
        figures = []
        runs = [("first run (creates)", binary), ("second run (unchanged)", binary)]
        runs += [("unchanged, %s" % b, b) for b in others]
        for what, b in runs:
            before = len(fake.requests)
            t0 = time.monotonic()
            rc, out, err, cpu, rss = run_child([b, "run", "--kubeconfig", kc])
            dt = time.monotonic() - t0
            reqs = fake.requests[before:]
            by = Counter(r["method"] for r in reqs)
            print("reconcile %s, %d %s: %.2f s wall, %.2f s CPU in otel-reconcile, peak RSS %.0f MiB, "
                  "%d requests (%s), exit %d" % (what, n, label, dt, cpu, rss, len(reqs),
                                                 ", ".join("%s %d" % kv for kv in sorted(by.items())), rc))
            print("  " + (out.strip().splitlines() or ["(no summary)"])[-1])
            if rc != 0:
                print(err[-2000:])
                return 1
            figures.append((dt, by))
        for dt, by in figures[1:]:
            if by.get("PATCH", 0) or by.get("DELETE", 0):
                print("FAIL an unchanged run wrote")
                return 1
    finally:
        fake.stop()
    return 0


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    others = sys.argv[3:]
    tmp = scratch_dir("otel-reconcile-bench-")
    crt, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-subj", "/CN=kubernetes", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True, timeout=60)
    for label, make in (("collectors", collector), ("collectors with allocators", collector_ta)):
        if scenario(label, make, binary, n, others, tmp, crt, key):
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
