"""tests/e2e/tools_test.py - tests/e2e/build-tools.sh's contract, beside the
cluster it built: a Go older than go.mod's `go` line (or none) fails with
what to install and builds nothing; binaries whose stamp matches the pins
are not rebuilt; each binary reports the version go.mod pins. Run by
tests/e2e/run.py (the cluster is not used)."""
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(HERE, "build-tools.sh")


def pin(module):
    with open(os.path.join(HERE, "tools", "go.mod")) as f:
        for line in f:
            w = line.split()
            if len(w) >= 2 and w[0] == module and w[1][:1] in "v0123456789":
                return w[1]
    return None


def too_old(k8s, need, found, go):
    return ("build-tools.sh: Kubernetes %s (tests/e2e/tools/go.mod) needs Go %s or newer;\n"
            "  found: %s (%s)\n"
            "  Debian bookworm's golang-go (1.19) is too old. Install one of:\n"
            "    - Go %s or newer at /usr/local/go, with /usr/local/go/bin in PATH (the project's\n"
            "      go machines carry go1.26.8 there), or set GO=/path/to/go for this script;\n"
            "    - with a Go of 1.21 or newer already installed: export GOTOOLCHAIN=go1.26.8\n"
            "      (the go command then takes that toolchain from the Go module proxy).\n"
            "  Or leave the real control plane's suite out: make test E2E=0\n") % (
                k8s, need, found, go, need)


def run(cluster, check, version):
    need, etcd = pin("go"), pin("go.etcd.io/etcd/server/v3")
    with tempfile.TemporaryDirectory(prefix="e2e-tools-") as tmp:
        old_go = os.path.join(tmp, "go")
        with open(old_go, "w") as f:
            f.write('#!/bin/sh\n[ "$1 $2" = "env GOVERSION" ] && echo go1.19.8\n')
        os.chmod(old_go, 0o755)
        for label, go, found in (("Debian's Go 1.19", old_go, "go1.19.8"),
                                 ("no Go at all", os.path.join(tmp, "missing-go"), "no go command")):
            out = os.path.join(tmp, "build")
            env = dict(os.environ, GO=go)
            env.pop("GOTOOLCHAIN", None)
            r = subprocess.run(["sh", SCRIPT, out], capture_output=True, text=True, env=env, timeout=60)
            check("build-tools.sh with %s: says what to install, fails, builds nothing" % label,
                  (r.returncode, r.stdout, r.stderr, os.listdir(out)) == (1, "", too_old(version, need, found, go), []),
                  "%d %r %r" % (r.returncode, r.stdout, r.stderr))
            # scripts/deps.sh's check before make test builds anything: the same answer.
            r = subprocess.run(["sh", SCRIPT, "--check", out], capture_output=True, text=True, env=env, timeout=60)
            check("build-tools.sh --check with %s: the same message and exit 1" % label,
                  (r.returncode, r.stdout, r.stderr) == (1, "", too_old(version, need, found, go)),
                  "%d %r %r" % (r.returncode, r.stdout, r.stderr))
            r = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh"), "test"], capture_output=True,
                               text=True, env=env, timeout=120)
            check("make test's dependency step with %s: fails with the same message" % label,
                  r.returncode == 1 and too_old(version, need, found, go) in r.stderr, "%d %r" % (r.returncode, r.stderr))
            r = subprocess.run(["sh", os.path.join(ROOT, "scripts", "deps.sh"), "test"], capture_output=True,
                               text=True, env=dict(env, E2E="0"), timeout=120)
            check("make test E2E=0's dependency step with %s: no Go asked for" % label,
                  r.returncode == 0 and "Go" not in r.stderr, "%d %r" % (r.returncode, r.stderr))

    # The binaries cluster.py ran from: up to date, so nothing is built.
    bindir = cluster.bindir
    build = os.path.dirname(os.path.dirname(bindir))
    r = subprocess.run(["sh", SCRIPT, build], capture_output=True, text=True, timeout=120)
    check("build-tools.sh with the stamp matching the pins: the folder, nothing built",
          (r.returncode, r.stdout, r.stderr) == (0, bindir + "\n", ""), "%d %r %r" % (r.returncode, r.stdout, r.stderr))

    for binary in ("kube-apiserver", "kube-controller-manager"):
        r = subprocess.run([os.path.join(bindir, binary), "--version"], capture_output=True, text=True, timeout=30)
        check("%s --version names %s" % (binary, version), r.stdout == "Kubernetes %s\n" % version,
              r.stdout + r.stderr)
    r = subprocess.run([os.path.join(bindir, "etcd"), "--version"], capture_output=True, text=True, timeout=30)
    check("etcd --version names %s" % etcd, r.stdout.splitlines()[:1] == ["etcd Version: %s" % etcd[1:]],
          r.stdout + r.stderr)
