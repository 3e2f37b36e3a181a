#!/usr/bin/python3
"""`otel-reconcile run` against tests/fakeapi.py with 1,000 collectors.

Usage: tests/bench/reconcile_bench.py BINARY [COLLECTORS]   (from the repository root;
       BINARY is the optimised build, build/otel-reconcile)

The first run creates everything (not timed as the figure of interest);
the second run, with nothing changed, is the steady state of the CronJob:
its wall time, its requests by method (it must make no PATCH or DELETE) and
the summary line are printed. The fake API server is single-process Python,
so the wall time is an upper bound dominated by its JSON encoding of the
LIST pages; the CPU time and peak RSS are otel-reconcile's own (peak RSS
is the largest child so far)."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import fakeapi  # noqa: E402


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


def main():
    binary = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    tmp = tempfile.mkdtemp(prefix="otel-reconcile-bench-")
    crt, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-subj", "/CN=kubernetes", "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1",
                    "-keyout", key, "-out", crt], check=True, capture_output=True, timeout=60)
    fake = fakeapi.FakeAPI(crt, key, token="bench", log_path=os.devnull)
    fake.start()
    kc = os.path.join(tmp, "kubeconfig.yaml")
    with open(kc, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "b",
                   "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:%d" % fake.port,
                                                          "certificate-authority": crt}}],
                   "users": [{"name": "u", "user": {"token": "bench"}}],
                   "contexts": [{"name": "b", "context": {"cluster": "c", "user": "u"}}]}, f)
    try:
        for i in range(n):
            fake.apply("opentelemetrycollectors", collector(i), record=False)
        figures = []
        for label in ("first run (creates)", "second run (unchanged)"):
            before = len(fake.requests)
            t0 = time.monotonic()
            ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            p = subprocess.run([binary, "run", "--kubeconfig", kc], capture_output=True, text=True, timeout=900)
            dt = time.monotonic() - t0
            ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            rss = ru1.ru_maxrss / 1024.0
            reqs = fake.requests[before:]
            by = Counter(r["method"] for r in reqs)
            print("reconcile %s, %d collectors: %.2f s wall, %.2f s CPU in otel-reconcile, peak RSS %.0f MiB, "
                  "%d requests (%s), exit %d" % (label, n, dt, cpu, rss, len(reqs),
                                                 ", ".join("%s %d" % kv for kv in sorted(by.items())), p.returncode))
            print("  " + (p.stdout.strip().splitlines() or ["(no summary)"])[-1])
            if p.returncode != 0:
                print(p.stderr[-2000:])
                return 1
            figures.append((dt, by))
        if figures[1][1].get("PATCH", 0) or figures[1][1].get("DELETE", 0):
            print("FAIL the unchanged run wrote")
            return 1
    finally:
        fake.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
