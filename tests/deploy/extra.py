#!/usr/bin/python3
"""tests/deploy/extra.py ROOT WORKDIR - deploy checks that need the binary or the tree.

  - `make install DESTDIR=...` lays out exactly what deploy/Dockerfile copies,
    the Dockerfile's runtime packages provide every library the binary links,
    and its user is the UID the manifests run as;
  - the self-managed certificate script (deploy/overlays/self-managed/certs.sh)
    run with the real binary: a Secret and a caBundle that verify, and on
    renewal a bundle holding the new and the previous CA;
  - the settings file the Deployment mounts is accepted by the binary, and
    every flag the Deployment passes to `serve` exists;
  - the install commands (README, docs/install.md) name overlays that exist,
    and every overlay is documented in docs/install.md; the migration
    guide's `-l 'app.kubernetes.io/component!=crds'` (and then `=crds`)
    leaves out exactly the CRDs;
  - docs/reconcile.md's Target Allocator RBAC lists every resource of
    examples/targetallocator.yaml;
  - the README's table of what `make test` installs names exactly the Debian
    packages scripts/deps.sh and tests/deploy/run.sh install, and the npm
    packages of tests/deploy/package.json at their versions.
Prints "FAIL ..." lines and "COUNTS passed failed".
"""
import base64
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request

import yaml

ROOT, W = sys.argv[1], sys.argv[2]
BIN = os.path.join(ROOT, "build", "otel-webhook")
passed = failed = 0


def check(ok, what, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}" + (f": {detail}" if detail else ""))
    return ok


def run(cmd, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, **kw)
    except OSError as e:
        return subprocess.CompletedProcess(cmd, 127, "", str(e))


def rendered(overlay):
    p = os.path.join(W, "rendered", overlay + ".yaml")
    if not os.path.exists(p):
        return []
    return [d for d in yaml.safe_load_all(open(p)) if d]


def find(objs, kind, name):
    return next((o for o in objs if o["kind"] == kind and o["metadata"]["name"] == name), None)


# --- make install and the Dockerfile ----------------------------------------
stage = os.path.join(W, "stage")
shutil.rmtree(stage, ignore_errors=True)
r = run(["make", "-s", "-C", ROOT, "install", f"DESTDIR={stage}", "PREFIX=/usr/local"])
check(r.returncode == 0, "make install DESTDIR=...", r.stderr.strip()[-300:])
files = sorted(os.path.relpath(os.path.join(d, f), stage) for d, _, fs in os.walk(stage) for f in fs)
want = ["usr/local/bin/otel-webhook"]
if os.path.exists(os.path.join(ROOT, "reconcile", "main.c")):
    want.append("usr/local/bin/otel-reconcile")
check(files == sorted(want), "make install lays out exactly the binaries", f"{files}")
check(all(os.stat(os.path.join(stage, f)).st_mode & 0o777 == 0o755 for f in files), "installed binaries are mode 0755")
r = run([os.path.join(stage, "usr/local/bin/otel-webhook"), "version"])
check(r.returncode == 0 and r.stdout.startswith("otel-webhook "), "the installed binary runs", r.stdout + r.stderr)

dockerfile = open(os.path.join(ROOT, "deploy", "Dockerfile")).read()
stages = re.split(r"(?m)^FROM ", dockerfile)[1:]
check(len(stages) == 2 and stages[0].startswith("debian:bookworm AS build") and stages[1].startswith("debian:bookworm-slim"),
      "Dockerfile: two stages on Debian bookworm (build, then slim runtime)")
m = re.search(r"make install\b[^\n]*DESTDIR=(\S+)[^\n]*PREFIX=(\S+)", stages[0])
check(m is not None, "Dockerfile: the build stage runs make install DESTDIR=... PREFIX=...")
destdir, prefix = (m.group(1), m.group(2)) if m else ("?", "?")
copies = re.findall(r"(?m)^COPY --from=build (\S+) (\S+)\s*$", stages[1])
check(copies == [(destdir.rstrip("/") + "/", "/")], "Dockerfile: the runtime stage copies exactly the DESTDIR tree", str(copies))
check(prefix == "/usr/local", "Dockerfile: PREFIX /usr/local, as in the manifests")
ep = re.search(r'(?m)^ENTRYPOINT \["([^"]+)"', stages[1])
check(ep and ep.group(1) == f"{prefix}/bin/otel-webhook", "Dockerfile: ENTRYPOINT is the installed binary")
user = re.search(r"(?m)^USER (\d+)(?::(\d+))?\s*$", stages[1])
check(user and user.group(1) != "0", "Dockerfile: a numeric non-root USER")
for overlay in ("cert-manager", "self-managed"):
    for o in rendered(overlay):
        spec = o.get("spec", {})
        pod = spec.get("jobTemplate", {}).get("spec", {}).get("template", {}).get("spec") if o["kind"] == "CronJob" \
            else spec.get("template", {}).get("spec") if isinstance(spec, dict) else None
        if pod and any("otel-webhook/otel-webhook" in c["image"] for c in pod.get("containers", []) + pod.get("initContainers", [])):
            uid = str(pod.get("securityContext", {}).get("runAsUser"))
            check(user and uid == user.group(1), f"{overlay}: {o['kind']}/{o['metadata']['name']} runs as the image's USER", uid)
        if pod:
            for c in pod.get("containers", []) + pod.get("initContainers", []):
                cmd = (c.get("command") or [None])[0]
                if cmd and cmd.startswith(prefix):
                    name = os.path.basename(cmd)
                    check(name in ("otel-webhook", "otel-reconcile"), f"{overlay}: {c['name']} runs a binary make install provides", cmd)
runtime_pkgs = set()
for block in re.findall(r"apt-get install([^&]*)", stages[1]):
    runtime_pkgs |= {w for w in block.replace("\\", " ").split() if not w.startswith("-")}
build_pkgs = set()
for block in re.findall(r"apt-get install([^&]*)", stages[0]):
    build_pkgs |= {w for w in block.replace("\\", " ").split() if not w.startswith("-")}
check(not any(p.endswith("-dev") or p in ("gcc", "make", "pkg-config") for p in runtime_pkgs),
      "Dockerfile: runtime libraries only in the runtime stage", " ".join(sorted(runtime_pkgs)))
# Every library the binary links comes from a runtime package, one of their
# dependencies, or the base image (libc6, zlib1g: Priority required).
deps = {"libc6", "zlib1g", "libgcc-s1"}
todo = list(runtime_pkgs)
while todo:  # the runtime packages and everything they depend on
    p = todo.pop()
    if p in deps:
        continue
    deps.add(p)
    r = run(["dpkg-query", "-W", "-f=${Pre-Depends},${Depends}", p])
    todo += [re.split(r"[ (:]", d.strip())[0] for d in r.stdout.replace("|", ",").split(",") if d.strip()]
ldd = "".join(run(["ldd", os.path.join(stage, f)]).stdout for f in files) or run(["ldd", BIN]).stdout
seen_libs = set()
for lib in re.findall(r"=> (/\S+)", ldd):
    real = os.path.realpath(lib)
    cands = {real, lib, real.replace("/lib/", "/usr/lib/", 1) if real.startswith("/lib/") else real}
    owner = None
    for c in cands:
        r = run(["dpkg", "-S", c])
        if r.returncode == 0:
            owner = r.stdout.split(":")[0]
            break
    if lib in seen_libs:
        continue
    seen_libs.add(lib)
    check(owner in deps, f"Dockerfile: {os.path.basename(lib)} ({owner}) is provided by the runtime stage")
for pkg in ("libh2o-evloop-dev", "libssl-dev", "libjson-c-dev", "libyaml-dev", "libcurl4-openssl-dev"):
    check(pkg in build_pkgs, f"Dockerfile: the build stage installs {pkg} (scripts/deps.sh)")
src_dirs = sorted(d for d in os.listdir(ROOT) if d not in ("tests", "build") and os.path.isdir(os.path.join(ROOT, d))
                  and any(f.endswith(".c") for f in os.listdir(os.path.join(ROOT, d))))
copied = set(re.findall(r"(?m)^COPY (\S+) \S+\s*$", stages[0]))
for d in src_dirs:
    check(d in copied, f"Dockerfile: the build stage copies {d}/")

# --- the self-managed certificate script ------------------------------------
script = os.path.join(ROOT, "deploy/overlays/self-managed/certs.sh")
cw = os.path.join(W, "certs")
shutil.rmtree(cw, ignore_errors=True)
env = dict(os.environ, PATH=os.path.dirname(BIN) + ":" + os.environ["PATH"])


def certs_run(work, current):
    e = dict(env, WORK=work, CURRENT=current)
    return run(["/bin/sh", script], env=e)


def pems(blob):
    return re.findall(rb"-----BEGIN CERTIFICATE-----.*?-----END CERTIFICATE-----\n?", blob, re.S)


r = certs_run(os.path.join(cw, "1"), os.path.join(cw, "none"))
check(r.returncode == 0, "certs.sh runs", r.stderr.strip()[-300:])
sm = rendered("self-managed")
mwc = find(sm, "MutatingWebhookConfiguration", "otel-webhook")
vwc = find(sm, "ValidatingWebhookConfiguration", "otel-webhook")
dep = find(sm, "Deployment", "otel-webhook")
secret_name = next((v["secret"]["secretName"] for v in (dep or {}).get("spec", {}).get("template", {}).get("spec", {}).get("volumes", [])
                    if "secret" in v), None)
def configurations(path):
    """The caBundle manifest: (mutating, validating), {} for one that is missing."""
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    pick = lambda kind: next((d for d in docs if d.get("kind") == kind), {})  # noqa: E731
    return pick("MutatingWebhookConfiguration"), pick("ValidatingWebhookConfiguration"), len(docs)


try:
    wh, vwh, ndocs = configurations(os.path.join(cw, "1/apply/1-webhook.yaml"))
    crd = yaml.safe_load(open(os.path.join(cw, "1/apply/1-crd.yaml")))
    sec = yaml.safe_load(open(os.path.join(cw, "1/apply/2-secret.yaml")))
except Exception as e:  # noqa: BLE001
    wh, vwh, ndocs, crd, sec = {}, {}, 0, {}, {}
    check(False, "certs.sh writes the three manifests", str(e))
check(sorted(os.listdir(os.path.join(cw, "1/apply"))) == ["1-crd.yaml", "1-webhook.yaml", "2-secret.yaml"],
      "certs.sh: the caBundles are applied before the Secret (file order)")
check(ndocs == 2, "certs.sh: the caBundle manifest holds the two webhook configurations", ndocs)
for got, want, kind in ((wh, mwc, "mutating"), (vwh, vwc, "validating")):
    check(got.get("metadata", {}).get("name") == (want or {}).get("metadata", {}).get("name")
          and [w["name"] for w in got.get("webhooks", [])] == [w["name"] for w in (want or {}).get("webhooks", [])],
          f"certs.sh: names the {kind} webhook configuration and every webhook of it, in the manifests' order",
          [w["name"] for w in got.get("webhooks", [])])
crd_bundle = ((((crd.get("spec") or {}).get("conversion") or {}).get("webhook") or {}).get("clientConfig") or {}).get("caBundle")
check(crd.get("kind") == "CustomResourceDefinition" and crd.get("metadata", {}).get("name") ==
      "opentelemetrycollectors.opentelemetry.io" and crd_bundle and
      crd_bundle == (wh.get("webhooks") or [{}])[0].get("clientConfig", {}).get("caBundle"),
      "certs.sh: the collector CRD's conversion caBundle is the webhook's")
check(find(sm, "CustomResourceDefinition", "opentelemetrycollectors.opentelemetry.io") is not None,
      "certs.sh: the CRD it patches is in the manifests")
check(sec.get("metadata", {}).get("name") == secret_name and sec.get("metadata", {}).get("namespace") == "otel-webhook-system"
      and sec.get("type") == "kubernetes.io/tls", "certs.sh: the Secret is the kubernetes.io/tls Secret the Deployment mounts")
data = {k: base64.b64decode(v) for k, v in sec.get("data", {}).items()}
check(sorted(data) == ["ca.crt", "tls.crt", "tls.key"], "certs.sh: Secret keys ca.crt, tls.crt, tls.key", str(sorted(data)))
bundle1 = base64.b64decode(wh["webhooks"][0]["clientConfig"]["caBundle"]) if wh.get("webhooks") else b""
check(pems(bundle1) == pems(data.get("ca.crt", b"")) and len(pems(bundle1)) == 1, "certs.sh: first caBundle is the new CA")
every = [w["clientConfig"]["caBundle"] for c in (wh, vwh) for w in c.get("webhooks", [])]
check(len(every) == 10 and len(set(every)) == 1, "certs.sh: every webhook of both configurations gets that caBundle",
      len(every))
check(not os.path.exists(os.path.join(cw, "1/certs/ca.key")), "certs.sh: the CA key is not kept")
for k, v in data.items():
    open(os.path.join(cw, "1", k), "wb").write(v)
r = run(["openssl", "verify", "-CAfile", os.path.join(cw, "1/ca.crt"), os.path.join(cw, "1/tls.crt")])
check(r.returncode == 0, "certs.sh: tls.crt verifies against ca.crt", r.stdout + r.stderr)
r = run(["openssl", "x509", "-noout", "-ext", "subjectAltName", "-in", os.path.join(cw, "1/tls.crt")])
check("DNS:otel-webhook.otel-webhook-system.svc" in r.stdout, "certs.sh: tls.crt is valid for otel-webhook.otel-webhook-system.svc", r.stdout)
r = run(["openssl", "x509", "-noout", "-checkend", str(89 * 86400), "-in", os.path.join(cw, "1/tls.crt")])
r2 = run(["openssl", "x509", "-noout", "-checkend", str(91 * 86400), "-in", os.path.join(cw, "1/tls.crt")])
check(r.returncode == 0 and r2.returncode != 0, "certs.sh: the certificate is valid 90 days")
# Renewal: the current Secret is mounted; the bundle holds new + previous CA.
os.makedirs(os.path.join(cw, "cur"), exist_ok=True)
open(os.path.join(cw, "cur/ca.crt"), "wb").write(data.get("ca.crt", b""))
r = certs_run(os.path.join(cw, "2"), os.path.join(cw, "cur"))
check(r.returncode == 0, "certs.sh renews", r.stderr.strip()[-300:])
try:
    wh2, vwh2, _ = configurations(os.path.join(cw, "2/apply/1-webhook.yaml"))
    sec2 = yaml.safe_load(open(os.path.join(cw, "2/apply/2-secret.yaml")))
    bundle2 = pems(base64.b64decode(wh2["webhooks"][0]["clientConfig"]["caBundle"]))
    check(all(pems(base64.b64decode(w["clientConfig"]["caBundle"])) == bundle2 for w in vwh2["webhooks"]),
          "certs.sh: on renewal the validating webhooks get the same two CAs")
    newca = pems(base64.b64decode(sec2["data"]["ca.crt"]))
except Exception as e:  # noqa: BLE001
    bundle2, newca = [], [None]
    check(False, "certs.sh renewal manifests", str(e))
check(len(bundle2) == 2 and bundle2[0] == newca[0] and bundle2[1] == pems(data.get("ca.crt", b""))[0] and newca[0] != bundle2[1],
      "certs.sh: on renewal the caBundle holds the new CA and the previous one")

# --- the settings file and the serve flags ----------------------------------
cm = find(rendered("cert-manager"), "ConfigMap", "otel-webhook-config")
cfg = os.path.join(W, "config.yaml")
dep = find(rendered("cert-manager"), "Deployment", "otel-webhook")
ctr = dep["spec"]["template"]["spec"]["containers"][0] if dep else {"args": [], "volumeMounts": []}
mount = next((m["mountPath"] for m in ctr["volumeMounts"] if m["name"] == "config"), None)
check(cm and f"--config={mount}/config.yaml" in ctr["args"], "the Deployment's --config is the mounted ConfigMap's config.yaml")
open(cfg, "w").write((cm or {}).get("data", {}).get("config.yaml", ""))
r = run([BIN, "inject", "-f", os.path.join(ROOT, "examples/deployment-java.yaml"), "--resources",
         os.path.join(ROOT, "examples/resources"), "--config", cfg])
check(r.returncode == 0 and "javaagent" in r.stdout, "the shipped settings file is accepted (otel-webhook inject --config)", r.stderr.strip()[-300:])
help_text = run([BIN, "serve", "--help"])
help_text = help_text.stdout + help_text.stderr
for a in ctr["args"][1:]:
    flag = a.split("=")[0]
    if flag == "--in-cluster" and flag not in help_text:
        print("note: serve --in-cluster is not in this binary yet (the live-source issue adds it)")
        continue
    check(flag in help_text, f"serve {flag} exists (serve --help)")

# The Deployment's serve arguments, on loopback: the probes' paths answer 200,
# and SIGTERM ends it within the termination grace period.
sc = os.path.join(W, "serve-certs")
shutil.rmtree(sc, ignore_errors=True)
r = run([BIN, "certs", "generate", "--service", "otel-webhook", "--namespace", "otel-webhook-system", "--out", sc, "--dev"])
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()
args = []
for a in ctr["args"][1:]:
    f = a.split("=")[0]
    if f == "--in-cluster":
        continue  # no cluster here
    args.append({"--listen": f"--listen=127.0.0.1:{port}", "--tls-cert": f"--tls-cert={sc}/tls.crt",
                 "--tls-key": f"--tls-key={sc}/tls.key", "--config": f"--config={cfg}"}.get(f, a))
proc = subprocess.Popen([BIN, "serve"] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
ctx = ssl.create_default_context(cafile=os.path.join(sc, "ca.crt"))
probes = {p["httpGet"]["path"] for p in (ctr.get("readinessProbe"), ctr.get("livenessProbe")) if p}
status = {}
deadline = time.time() + 10
while time.time() < deadline and len(status) < len(probes):
    for p in probes - set(status):
        try:
            with urllib.request.urlopen(f"https://localhost:{port}{p}", context=ctx, timeout=2) as resp:
                if resp.status == 200:
                    status[p] = 200
        except Exception:  # noqa: BLE001 - not up yet
            pass
    time.sleep(0.2)
for p in sorted(probes):
    check(status.get(p) == 200, f"serve with the Deployment's arguments answers {p} with 200")
grace = dep["spec"]["template"]["spec"].get("terminationGracePeriodSeconds", 30) if dep else 30
t0 = time.time()
proc.send_signal(signal.SIGTERM)
try:
    rc = proc.wait(timeout=grace)
except subprocess.TimeoutExpired:
    proc.kill()
    rc = None
check(rc == 0, f"serve exits 0 on SIGTERM within terminationGracePeriodSeconds ({grace} s)",
      f"rc={rc} after {time.time() - t0:.1f} s: {proc.stderr.read().decode()[-300:]}")

# otel-reconcile: the CronJob's arguments, once `run` exists.
rbin = os.path.join(ROOT, "build", "otel-reconcile")
rc_job = find(rendered("cert-manager"), "CronJob", "otel-reconcile")
if rc_job and os.access(rbin, os.X_OK):
    rargs = rc_job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["args"]
    h = run([rbin, "run", "--help"])
    h = h.stdout + h.stderr
    check(rc_job["spec"].get("suspend") is not True, "the otel-reconcile CronJob runs")
    for a in rargs:
        check(a.split("=")[0] in h, f"otel-reconcile {a.split('=')[0]} exists (otel-reconcile run --help)")

# --- README and docs/install.md ------------------------------------------------
readme = open(os.path.join(ROOT, "README.md")).read()
install = open(os.path.join(ROOT, "docs/install.md")).read()
check("## Installing on a cluster" in install, 'docs/install.md has "Installing on a cluster"')
section = install.split("## Installing on a cluster", 1)[-1]
named = set(re.findall(r"deploy/overlays/([a-z0-9-]+)", section))
overlays = set(os.listdir(os.path.join(ROOT, "deploy/overlays")))
check(named and named <= overlays, "docs/install.md: every overlay it names exists", str(sorted(named - overlays)))
check(overlays <= named, "docs/install.md: every overlay is documented", str(sorted(overlays - named)))
in_readme = set(re.findall(r"deploy/overlays/([a-z0-9-]+)", readme))
check(in_readme and in_readme <= overlays, "README: every overlay it names exists", str(sorted(in_readme - overlays)))
for doc, text in (("README", readme), ("docs/install.md", section)):
    for cmd in re.findall(r"kubectl apply -k (deploy/[a-z0-9/-]+)", text):
        check(os.path.isfile(os.path.join(ROOT, cmd, "kustomization.yaml")), f"{doc}: kubectl apply -k {cmd} is a kustomization")
KINDS = {"deployment": "Deployment", "cronjob": "CronJob", "job": "Job", "certificate": "Certificate"}
for doc, text in (("README", readme), ("docs/install.md", section)):
    for kind, name in sorted(set(re.findall(r"\b(deployment|cronjob|job|certificate)/([a-z0-9-]+)", text))):
        check(any(o["kind"] == KINDS[kind] and o["metadata"]["name"] == name for ov in overlays for o in rendered(ov)),
              f"{doc}: {kind}/{name} exists in the manifests")

# The migration guide applies every overlay object but the CRDs, by label.
for ov in sorted(overlays):
    objs = rendered(ov)
    crds = {o["metadata"]["name"] for o in objs if o["kind"] == "CustomResourceDefinition"}
    labelled = {o["metadata"]["name"] for o in objs
                if (o["metadata"].get("labels") or {}).get("app.kubernetes.io/component") == "crds"}
    check(bool(objs) and crds == labelled, f"{ov}: component=crds labels exactly the CRDs", str(crds ^ labelled))
check("-l 'app.kubernetes.io/component!=crds'" in section and "-l app.kubernetes.io/component=crds" in section,
      "docs/install.md: the migration guide applies everything but the CRDs first, then the CRDs")

# What make test installs: the README's table against the scripts.
table = readme.split("Everything `make test` installs or needs:", 1)[-1].lstrip("\n").split("\n\n", 1)[0]
readme_debs = set()
for row in table.splitlines()[2:]:
    cells = row.split("|")
    if len(cells) > 3:
        for code in re.findall(r"`([^`]+)`", cells[3]):
            readme_debs.update(code.split())
deps = open(os.path.join(ROOT, "scripts/deps.sh")).read()
script_debs = set(re.search(r'^PKGS="([^"]+)"', deps, re.M).group(1).split())
script_debs.update(re.findall(r'missing="\$missing ([a-z0-9.+-]+)"', deps))
runsh = open(os.path.join(ROOT, "tests/deploy/run.sh")).read()
for args in re.findall(r"^[^#\n]*apt_install ([a-z0-9 .+-]+?)(?: &&| \|\||$)", runsh, re.M):
    script_debs.update(args.split())
readme_debs.discard("~/.npm")
check(readme_debs == script_debs, "README: the Debian packages make test installs are the scripts' ones",
      "README only: %s; scripts only: %s" % (sorted(readme_debs - script_debs), sorted(script_debs - readme_debs)))
import json  # noqa: E402
pkg = json.load(open(os.path.join(ROOT, "tests/deploy/package.json")))["dependencies"]
for name, version in sorted(pkg.items()):
    check(f"`{name}` {version}" in table, f"README: npm package {name} {version} listed")
lock = json.load(open(os.path.join(ROOT, "tests/deploy/package-lock.json")))["packages"]
check(f"the {len([k for k in lock if k]) - len(pkg)} packages they depend on" in table,
      "README: the count of npm dependencies", str(len([k for k in lock if k]) - len(pkg)))

# examples/targetallocator.yaml: the RBAC docs/reconcile.md says an allocator needs,
# bound to the ServiceAccount otel-reconcile gives the allocator.
RECONCILE = next((b for b in (os.path.join(ROOT, "build", "otel-reconcile"), os.path.join(ROOT, "build", "asan", "otel-reconcile"))
                  if os.path.exists(b)), None)
ex = os.path.join(ROOT, "examples/targetallocator.yaml")
docs = [d for d in yaml.safe_load_all(open(ex)) if d]
role = next((d for d in docs if d["kind"] == "ClusterRole"), {})
binding = next((d for d in docs if d["kind"] == "ClusterRoleBinding"), {})
check(binding.get("roleRef", {}).get("name") == role.get("metadata", {}).get("name"),
      "examples/targetallocator.yaml: the binding grants the example's ClusterRole")
if check(RECONCILE is not None, "otel-reconcile built (for examples/targetallocator.yaml)"):
    r = subprocess.run([RECONCILE, "render", "-f", ex], capture_output=True, text=True, timeout=60)
    out = [d for d in yaml.safe_load_all(r.stdout) if d]
    dep = next((d for d in out if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-targetallocator")), None)
    sa = dep and dep["spec"]["template"]["spec"]["serviceAccountName"]
    check(r.returncode == 0 and dep and {"kind": "ServiceAccount", "name": sa, "namespace": dep["metadata"]["namespace"]}
          in binding.get("subjects", []) and any(d["kind"] == "ServiceAccount" and d["metadata"]["name"] == sa for d in out),
          "examples/targetallocator.yaml: bound to the allocator's ServiceAccount as rendered", (r.stderr, sa))
# What the reference's webhooks check with SubjectAccessReviews
# (targetallocator.md 16), plus what prometheusCR's scrape configs and probes
# and their Secrets need: all granted by the example, all listed in docs/reconcile.md.
want = [("", r, v) for r in ("nodes", "nodes/metrics", "services", "endpoints", "pods", "namespaces")
        for v in ("get", "list", "watch")]
want += [("", "configmaps", "get")] + [("", "secrets", v) for v in ("get", "list", "watch")]
want += [(g, r, v) for g, rs in (("discovery.k8s.io", ["endpointslices"]), ("networking.k8s.io", ["ingresses"]),
                                 ("monitoring.coreos.com", ["servicemonitors", "podmonitors", "scrapeconfigs", "probes"]))
         for r in rs for v in ("get", "list", "watch")]
have = {(g, r, v) for rule in role.get("rules", []) for g in rule.get("apiGroups", []) for r in rule.get("resources", [])
        for v in rule.get("verbs", [])}
urls = {u for rule in role.get("rules", []) for u in rule.get("nonResourceURLs", [])}
check(set(want) == have and urls == {"/metrics", "/api", "/api/*", "/apis", "/apis/*"},
      "examples/targetallocator.yaml: exactly the allocator's rules", (sorted(set(want) ^ have), sorted(urls)))
reconcile_doc = open(os.path.join(ROOT, "docs/reconcile.md")).read()
section = (reconcile_doc.split("### The Target Allocator's RBAC", 1)[-1].split("\n## ", 1)[0]
           if "### The Target Allocator's RBAC" in reconcile_doc else "")
check(section and all(("`%s`" % r) in section for _, r, _ in want) and all(("`%s`" % u) in section for u in urls) and
      "examples/targetallocator.yaml" in section, "docs/reconcile.md: the allocator's RBAC lists every resource of the example")

print(f"COUNTS {passed} {failed}")
