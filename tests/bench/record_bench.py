#!/usr/bin/python3
"""What the status record costs per admission, in instructions (make bench):
callgrind counts of bench_engine --calls (N mutations of one case, nothing
else), with N and with 0 mutations so that start-up cancels out, for each
case with the record and without (status-record: false), and for the
re-invocation of an injected pod through its record and without it.

usage: record_bench.py BENCH_ENGINE [N]"""
import re
import subprocess
import sys

BIN = sys.argv[1]
N = int(sys.argv[2]) if len(sys.argv) > 2 else 500
CASES = ["java+sidecar (typical)", "java+sidecar (64 KiB pod)", "7 languages+sidecar, 7 containers",
         "again: java+sidecar (typical)", "again: java+sidecar (64 KiB pod)"]


def instructions(label, n):
    p = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", BIN, "tests/bench",
                        "--calls", label, str(n)], capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        sys.exit("record_bench: %s: %s" % (label, p.stderr[-500:]))
    return int(m.group(1))


for case in CASES:
    per = []
    for label in (case, case + ", no record"):
        per.append((instructions(label, N) - instructions(label, 0)) / N)
    print("record %-36s %9.0f Ir/mutation with the record, %9.0f without  (%+.1f%%)" % (
        case, per[0], per[1], (per[0] / per[1] - 1) * 100))
