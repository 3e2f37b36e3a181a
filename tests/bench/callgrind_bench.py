#!/usr/bin/python3
"""Instructions per request (make bench): valgrind's callgrind counts the
user-space instructions a server executes, which stays steady on a shared,
noisy machine where wall-clock figures do not.

Each server (otel-webhook serve --threads 1, and the nginx floor as one
process answering our own answer's bytes) runs twice under callgrind: once
for FEW requests, once for FEW + MANY, each over one HTTPS/1.1 keep-alive
connection (TLS 1.3). The difference of the two totals divided by MANY is
the cost of one request, with start-up, the handshake and shutdown taken
out. Ours is measured twice: with the status record (the default) and
with `status-record: false` in a settings file (the reference's patch).
Usage: callgrind_bench.py BINARY [--profile] [--ours-only] (--profile also
prints the functions that cost the most per request, inclusive, for the
4 KB review with the record; --ours-only leaves the nginx floors out)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

BIN = sys.argv[1]
PROFILE = "--profile" in sys.argv
OURS_ONLY = "--ours-only" in sys.argv
FEW, MANY = 10, int(os.environ.get("CALLGRIND_REQUESTS", "100"))


def total(out):
    for _ in range(20):  # the file may still be being written as the process ends
        with open(out) as f:
            for line in f:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
        time.sleep(0.5)
    sys.exit("no totals in " + out)


def inclusive(out, incl="yes"):
    text = subprocess.run(["callgrind_annotate", "--inclusive=" + incl, "--threshold=100", "--auto=no", out],
                          capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+) .*?\s+(\S+?):(\S+?)(?: \[.*\])?$", line)
        if m and "'" not in m.group(3):  # fn'2 (recursion) is inside fn already
            fn = m.group(3)
            # callgrind_annotate lists a function once per spelling of its
            # file (relative and absolute): the same cost, not twice it.
            costs[fn] = max(costs.get(fn, 0), int(m.group(1).replace(",", "")))
    return costs


def run(start, body, n, out):
    wrap = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out]
    proc, port = start(wrap)
    try:
        c = benchlib.Client(port)
        answer = None
        for _ in range(n):
            status, answer = c.post("/mutate-v1-pod", body)
            if status != 200:
                sys.exit("answer %d" % status)
        c.close()
    finally:
        benchlib.stop(proc)
    return answer


def per_request(start, body, label):
    outs = [os.path.join(tmp, "%s-%d.out" % (label, n)) for n in (FEW, FEW + MANY)]
    answer = run(start, body, FEW, outs[0])
    run(start, body, FEW + MANY, outs[1])
    return (total(outs[1]) - total(outs[0])) / MANY, answer, outs


tmp = tempfile.mkdtemp(prefix="otel-callgrind-")
try:
    benchlib.certs(BIN, tmp)
    print("instructions per request (callgrind, user space; serve --threads 1 and one nginx process; "
          "%d requests over one keep-alive TLS 1.3 connection, start-up taken out)" % MANY)
    print("%-14s %14s %14s %14s %14s %8s" % ("review", "otel-webhook", "no record", "nginx, ours", "nginx, 200 B",
                                             "ratio"))
    norec = os.path.join(tmp, "no-record.yaml")
    with open(norec, "w") as f:
        f.write("status-record: false\n")
    for label, path in benchlib.REVIEWS:
        body = open(path, "rb").read()
        tag = label.replace(" ", "")
        ours, answer, outs = per_request(lambda w: benchlib.start_ours(BIN, tmp, wrap=w), body, "ours-" + tag)
        bare, bare_answer, _ = per_request(lambda w: benchlib.start_ours(BIN, tmp, wrap=w, extra=("--config", norec)),
                                           body, "norec-" + tag)
        if bare_answer == answer:
            sys.exit("the answer without the record is the answer with it: the settings file was not read")
        fair = small = float("nan")
        if not OURS_ONLY:
            fair, _, _ = per_request(lambda w: benchlib.start_nginx(tmp, answer.decode(), wrap=w, name="ng-fair"),
                                     body, "nginx-fair-" + tag)
            small, _, _ = per_request(lambda w: benchlib.start_nginx(tmp, '{"response":{"allowed":true}}', wrap=w,
                                                                     name="ng-small"),
                                      body, "nginx-small-" + tag)
        print("%-14s %13.0fK %13.0fK %13.0fK %13.0fK %8.1f" % ("%s (%d B)" % (label, len(body)), ours / 1000,
                                                              bare / 1000, fair / 1000, small / 1000, ours / fair))
        if PROFILE and label == "4 KB":
            a, b = inclusive(outs[0]), inclusive(outs[1])
            rows = sorted(((b[k] - a.get(k, 0)) / MANY, k) for k in b)
            rows = [r for r in rows if r[0] >= 2000][::-1][:60]
            for cost, fn in rows:
                print("    %9.1fK  %s" % (cost / 1000, fn))
finally:
    if not os.environ.get("BENCH_KEEP"):
        shutil.rmtree(tmp, ignore_errors=True)
