#!/usr/bin/python3
"""The build's own order, from the outside: on a fresh machine (an empty
build folder) the dependency step (scripts/deps.sh) runs before any
compile of any flavour, also under `make -j2`, where a phony `deps` beside
the binaries ran in parallel with them and compiles started before the
headers were installed. Read from `make -n` (what make would run, in the
order it would start it) into a build folder of its own: nothing is built.

usage: make_test.py [RESULTS]"""
import os
import subprocess
import sys

RESULTS = sys.argv[1] if len(sys.argv) > 1 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, scratch_dir  # noqa: E402

check = Checks("cli-make")
tmp = scratch_dir("otel-make-test-")
B = os.path.join(tmp, "build")
DEPS = "sh scripts/deps.sh build"


def dry_run(*targets, jobs=2):
    p = subprocess.run(["make", "--no-print-directory", "-n", "-j%d" % jobs, "B=" + B, *targets],
                       capture_output=True, text=True)
    return p.returncode, p.stdout.splitlines(), p.stderr


def compiles(lines):
    return [i for i, l in enumerate(lines) if l.startswith(("cc ", "clang ")) and " -c " in l]


# One target of each compile rule: the release and sanitizer objects, a unit
# suite (Check objects), valgrind's and the benchmark's, and a fuzzer (one
# clang command that compiles and links).
for target in ("all", B + "/asan/otel-webhook", B + "/asan/otel-reconcile", B + "/asan/tests/unit/test_base",
               B + "/vg/tests/unit/test_base", B + "/bench/bench_engine", B + "/fuzz/fuzz_jfast"):
    for jobs in (1, 2):
        rc, lines, err = dry_run(target, jobs=jobs)
        name = os.path.relpath(target, tmp) if target.startswith(B) else target
        first = compiles(lines) or [i for i, l in enumerate(lines) if l.startswith("clang ")]
        check("make -j%d %s: the dependency step once, before every compile" % (jobs, name),
              rc == 0 and lines.count(DEPS) == 1 and first and lines.index(DEPS) < min(first),
              (rc, err[-300:], lines[:3]))
# Once done, it is not run again for the next target (a stamp, not a phony
# target), nor does it make anything built again (order-only).
os.makedirs(B, exist_ok=True)
open(os.path.join(B, ".deps-done"), "w").close()
os.utime(os.path.join(B, ".deps-done"))
rc, lines, err = dry_run(B + "/obj/base/alloc.o")
check("after the step: not run again", rc == 0 and DEPS not in lines and len(compiles(lines)) == 1, (rc, lines))

sys.exit(check.finish(RESULTS))
