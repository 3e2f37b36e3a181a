#!/usr/bin/python3
"""tests/e2e/run.py - the e2e suites against one real control plane.

Usage: tests/e2e/run.py BINDIR RESULTS_FILE [SUITE...]        (from the repository root)

BINDIR holds what tests/e2e/build-tools.sh built (build/k8s/VERSION). One
cluster (tests/e2e/cluster.py) is started for the run and stopped after it,
whatever happens. Each suite is a module tests/e2e/NAME_test.py with a
function run(cluster, check, version), listed in SUITES below (written down,
as tests/suites does for `make test`: a suite deleted fails the run, and a
file not listed is a failure too, not a suite that never runs); SUITE names
pick some (all by default). Each suite prints its own "NAME: N passed, M failed" line and
appends its counts to RESULTS_FILE; the last line is the run's total,
"e2e: Kubernetes VERSION: N passed, M failed". A cluster that does not start
is one failure, with the component's log tail."""
import glob
import importlib
import importlib.util
import os
import sys
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "blackbox"))
from cluster import Cluster  # noqa: E402
from testlib import Checks  # noqa: E402

SUITES = ("tools", "smoke", "webhook", "cli", "changes")


def pinned_version():
    """The Kubernetes release tests/e2e/tools/go.mod pins."""
    with open(os.path.join(HERE, "tools", "go.mod")) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == "k8s.io/kubernetes" and w[1].startswith("v"):
                return w[1]
    raise RuntimeError("tests/e2e/tools/go.mod names no k8s.io/kubernetes version")


def suite(name):
    """tests/e2e/NAME_test.py, loaded from its file: by module name it could
    be tests/blackbox's of the same name (cli_test.py), which cluster.py puts
    first on sys.path."""
    path = os.path.join(HERE, name + "_test.py")
    spec = importlib.util.spec_from_file_location("e2e_" + name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    bindir, results = argv[1], argv[2]
    names = argv[3:] or list(SUITES)
    version = pinned_version()
    passed = failed = 0
    present = sorted(os.path.basename(p)[: -len("_test.py")] for p in glob.glob(os.path.join(HERE, "*_test.py")))
    listed = Checks("e2e suites")
    for name in present:
        listed("tests/e2e/%s_test.py is listed in run.py's SUITES" % name, name in SUITES)
    for name in SUITES:
        listed("run.py's suite %s is tests/e2e/%s_test.py" % (name, name), name in present)
    listed.finish(results)
    passed += listed.passed
    failed += listed.failed
    cluster = Cluster(bindir, os.path.join(ROOT, "build"))
    try:
        cluster.start()
    except Exception as e:  # noqa: BLE001
        print("FAIL control plane: %s" % e, flush=True)
        with open(results, "a") as f:
            f.write("0 1\n")
        print("e2e: Kubernetes %s: 0 passed, 1 failed" % version)
        return 1
    try:
        for name in names:
            check = Checks(name)
            try:
                suite(name).run(cluster, check, version)
            except Exception as e:  # noqa: BLE001
                traceback.print_exc()
                check("%s harness" % name, False, repr(e))
            check.finish(results)
            passed += check.passed
            failed += check.failed
        # A component that died mid-run fails the run even when no test noticed.
        up = Checks("control plane")
        up("etcd, kube-apiserver and kube-controller-manager ran to the end", not cluster.exited(),
           "\n".join(cluster.exited()))
        up.finish(results)
        passed += up.passed
        failed += up.failed
    finally:
        cluster.stop()
    print("e2e: Kubernetes %s: %d passed, %d failed" % (version, passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
