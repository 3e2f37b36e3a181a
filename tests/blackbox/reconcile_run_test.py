#!/usr/bin/python3
"""`otel-reconcile run` against tests/blackbox/fakeapi.py (TLS on loopback).

Usage: tests/blackbox/reconcile_run_test.py BINARY [RESULTS_FILE]   (from the repository root)

Each step changes the fake cluster, runs one pass (the binary exits; every
wait is the process's, bounded by a timeout) and checks the objects, the
collector status, the exit code, the summary line and the requests made:
create, the idempotent second run (no PATCH, no DELETE), drift, update,
prune (ConfigMap retention, RBAC no longer needed, RBAC of a deleted
collector), unmanaged collectors, a render error and one collector's apply
error not blocking the others, --dry-run, usage errors.

The fake's request log goes to $OTEL_FAKEAPI_RECONCILE_LOG, default
build/fakeapi-reconcile-requests.jsonl, which tests/deploy (run.sh, same
variable and default) checks against the RBAC of deploy/base."""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fakeapi  # noqa: E402
from testlib import SANITIZER_MARKERS, Checks, scratch_dir  # noqa: E402

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
check = Checks("reconcile-run")
SUMMARY = re.compile(r"^otel-reconcile run(?: \(dry run\))?: (\d+) collectors, (\d+) target allocators, (\d+) applied, (\d+) pruned, "
                     r"(\d+) failed \((\d+) unchanged, (\d+) recreated, (\d+) unmanaged, (\d+) status writes, (\d+) requests\)$")


def collector(name, ns="obs", mode="deployment", processors=None, **spec):
    config = {"receivers": {"otlp": {"protocols": {"grpc": {}, "http": {}}}},
              "processors": {p: {} for p in (processors or ["batch"])},
              "exporters": {"debug": {}},
              "service": {"pipelines": {"traces": {"receivers": ["otlp"], "processors": list(processors or ["batch"]),
                                                   "exporters": ["debug"]}}}}
    s = {"mode": mode, "config": config}
    s.update(spec)
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
            "metadata": {"name": name, "namespace": ns}, "spec": s}


class Cluster:
    def __init__(self, tmp, log):
        crt, key = os.path.join(tmp, "tls.crt"), os.path.join(tmp, "tls.key")
        p = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                            "-subj", "/CN=kubernetes", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                            "-days", "1", "-keyout", key, "-out", crt], capture_output=True, text=True, timeout=60)
        check("test certificate", p.returncode == 0, p.stderr)
        self.fake = fakeapi.FakeAPI(crt, key, token="run-token", log_path=log)
        self.fake.start()
        self.kubeconfig = os.path.join(tmp, "kubeconfig.yaml")
        with open(self.kubeconfig, "w") as f:
            json.dump({"apiVersion": "v1", "kind": "Config", "current-context": "t",
                       "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:%d" % self.fake.port,
                                                              "certificate-authority": crt}}],
                       "users": [{"name": "u", "user": {"token": "run-token"}}],
                       "contexts": [{"name": "t", "context": {"cluster": "c", "user": "u"}}]}, f)

    def run(self, *extra, args=None):
        """One pass: (exit code, summary numbers or None, stderr, requests)."""
        before = len(self.fake.requests)
        argv = [BIN, "run", "--once", "--kubeconfig", self.kubeconfig] + list(extra) if args is None else [BIN] + args
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired as e:  # a run that never ends (a LIST without end, before the page cap)
            err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
            return None, None, "timed out after 120 s\n" + err[-3000:], self.fake.requests[before:]
        check("no sanitizer report (%s)" % " ".join(argv[1:3]), not any(m in p.stderr for m in SANITIZER_MARKERS),
              p.stderr[-3000:])
        lines = p.stdout.splitlines()
        m = SUMMARY.match(lines[-1]) if lines else None
        nums = dict(zip(("collectors", "allocators", "applied", "pruned", "failed", "unchanged", "recreated", "unmanaged",
                         "statuses", "requests"), map(int, m.groups()))) if m else None
        return p.returncode, nums, p.stderr, self.fake.requests[before:]

    def get(self, resource, name, ns=None):
        return self.fake.get(resource, name, ns)

    def names(self, resource, ns=None, owner_uid=None):
        out = []
        for (n, name), o in list(self.fake.objects[resource].items()):
            if ns and n != ns:
                continue
            refs = o["metadata"].get("ownerReferences") or []
            if owner_uid and not any(r.get("uid") == owner_uid for r in refs):
                continue
            out.append(name)
        return sorted(out)


def count(reqs, method, contains=""):
    return sum(1 for r in reqs if r["method"] == method and contains in r["path"])


def cond(obj):
    cs = (obj.get("status") or {}).get("conditions") or []
    return cs[0] if cs else {}


def main():
    tmp = scratch_dir("otel-reconcile-run-")
    # The webhook's log is OTEL_FAKEAPI_LOG; tests/deploy/run.sh reads ours from here.
    log = os.environ.get("OTEL_FAKEAPI_RECONCILE_LOG") or os.path.join(ROOT, "build", "fakeapi-reconcile-requests.jsonl")
    os.makedirs(os.path.dirname(os.path.abspath(log)), exist_ok=True)
    open(log, "w").close()
    k = Cluster(tmp, log)
    fake = k.fake
    try:
        steps(k, fake, tmp)
    finally:
        fake.stop()
    with open(log) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    check("request log written (%s)" % log, len(lines) > 20 and all({"method", "path", "query"} <= set(x) for x in lines),
          len(lines))
    return check.finish(RESULTS)


def dry_run_output(k, fake):
    """--dry-run says what each write would be, exactly: objects to create,
    the fields of those to update (old -> new, as the comparison saw them),
    objects to delete; and writes nothing."""
    dr = fake.apply("opentelemetrycollectors", collector("dr", ns="dry", podAnnotations={"team": "a"}))
    uid = dr["metadata"]["uid"]
    rc, nums, err, reqs = k.run("--dry-run", "--namespace", "dry")
    check("dry run, new collector: what would be created, in apply order, and the status", rc == 0 and err == (
        "would create ServiceAccount dry/dr-collector\n"
        "would create ConfigMap dry/dr-collector-7696ba9e\n"
        "would create Service dry/dr-collector\n"
        "would create Service dry/dr-collector-headless\n"
        "would create Service dry/dr-collector-monitoring\n"
        "would create Deployment dry/dr-collector\n"
        "would create PodDisruptionBudget dry/dr-collector\n"
        "would create NetworkPolicy dry/dr-collector-networkpolicy\n"
        "would write status dry/dr\n") and nums and nums["applied"] == 8 and
        not [r for r in reqs if r["method"] != "GET"] and not k.names("deployments", "dry"), (rc, err))
    rc, nums, err, reqs = k.run("--namespace", "dry")
    check("dry run: the real run after it", rc == 0 and nums["applied"] == 8, (rc, nums, err[-500:]))
    rc, nums, err, reqs = k.run("--dry-run", "--namespace", "dry")
    check("dry run, nothing to do: says nothing", rc == 0 and err == "" and nums["applied"] == 0, (rc, err))

    # Someone edits managed fields; the collector asks for 3 replicas; an
    # object it owns is no longer wanted.
    dep = k.get("deployments", "dr-collector", "dry")
    dep["spec"]["template"]["spec"]["containers"][0]["image"] = "example.com/collector:patched"
    dep["spec"]["template"]["spec"]["containers"][0]["args"].append("--feature-gates=x")
    dep["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/version"] = "edited"
    fake.apply("deployments", dep)
    c = k.get("opentelemetrycollectors", "dr", "dry")
    c["spec"]["replicas"] = 3
    fake.apply("opentelemetrycollectors", c)
    fake.apply("services", {"metadata": {
        "name": "dr-stale", "namespace": "dry", "labels": {"app.kubernetes.io/managed-by": "opentelemetry-operator"},
        "ownerReferences": [{"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
                             "name": "dr", "uid": uid, "controller": True}]}})
    rc, nums, err, reqs = k.run("--dry-run", "--namespace", "dry")
    check("dry run, changes: the fields of the update, old -> new, and the delete", rc == 0 and err == (
        "would update Deployment dry/dr-collector:\n"
        "  spec.replicas: 1 -> 3\n"
        '  spec.template.metadata.labels["app.kubernetes.io/version"]: "edited" -> "latest"\n'
        '  spec.template.spec.containers[0].image: "example.com/collector:patched" -> '
        '"ghcr.io/open-telemetry/opentelemetry-collector-releases/opentelemetry-collector:0.158.0"\n'
        '  spec.template.spec.containers[0].args[1]: "--feature-gates=x" -> (absent)\n'
        "would delete Service dry/dr-stale\n") and nums["applied"] == 1 and nums["pruned"] == 1 and
        not [r for r in reqs if r["method"] != "GET"], (rc, err))
    rc, nums, err, reqs = k.run("--namespace", "dry")
    check("dry run: what it said is what the run does", rc == 0 and nums["applied"] == 1 and nums["pruned"] == 1 and
          [(r["method"], r["path"].rsplit("/", 1)[-1]) for r in reqs if r["method"] != "GET"] ==
          [("PATCH", "dr-collector"), ("DELETE", "dr-stale")], (rc, nums, err[-500:]))

    # A field no longer wanted: every wanted field is as wanted, only the
    # digest of the desired object says the apply has something to remove.
    old = k.get("deployments", "dr-collector", "dry")["metadata"]["annotations"]["otel-reconcile/applied"]
    c = k.get("opentelemetrycollectors", "dr", "dry")
    del c["spec"]["podAnnotations"]
    fake.apply("opentelemetrycollectors", c)
    rc, nums, err, reqs = k.run("--dry-run", "--namespace", "dry")
    m = re.fullmatch(r'would update Deployment dry/dr-collector:\n  metadata\.annotations\["otel-reconcile/applied"\]: '
                     r'"%s" -> "([0-9a-f]{16})" \(only the digest differs: the apply removes the fields the last one '
                     r'set and this one does not\)\n' % old, err)
    # (The fake merges an apply into the stored object, so the annotation
    # itself stays there; the API server's apply would remove it.)
    k.run("--namespace", "dry")
    new = k.get("deployments", "dr-collector", "dry")["metadata"]
    check("dry run, a field dropped: the digest line alone, old -> the digest then applied", rc == 0 and m and
          m.group(1) == new["annotations"]["otel-reconcile/applied"] and m.group(1) != old, (rc, err))

    # An immutable field: the recreate, why, and the fields.
    dep = k.get("deployments", "dr-collector", "dry")
    dep["spec"]["selector"] = {"matchLabels": {"app": "older"}}
    fake.apply("deployments", dep)
    rc, nums, err, reqs = k.run("--dry-run", "--namespace", "dry")
    check("dry run, an immutable change: would recreate, why, the fields", rc == 0 and err == (
        "would recreate Deployment dry/dr-collector (spec.selector changed):\n"
        '  spec.selector.matchLabels["app.kubernetes.io/component"]: (absent) -> "opentelemetry-collector"\n'
        '  spec.selector.matchLabels["app.kubernetes.io/instance"]: (absent) -> "dry.dr"\n'
        '  spec.selector.matchLabels["app.kubernetes.io/managed-by"]: (absent) -> "opentelemetry-operator"\n'
        '  spec.selector.matchLabels["app.kubernetes.io/part-of"]: (absent) -> "opentelemetry"\n') and
        not [r for r in reqs if r["method"] != "GET"], (rc, err))
    fake.delete("opentelemetrycollectors", "dr", "dry")
def steps(k, fake, tmp):
    # ---- usage and configuration errors: exit 2, nothing asked --------------
    for name, args in (("no credentials", ["run"]), ("both credentials", ["run", "--in-cluster", "--kubeconfig", "x"]),
                       ("unknown flag", ["run", "--kubeconfig", k.kubeconfig, "--bogus"]),
                       ("missing kubeconfig", ["run", "--kubeconfig", os.path.join(tmp, "nope.yaml")]),
                       ("empty namespace", ["run", "--kubeconfig", k.kubeconfig, "--namespace", ""])):
        rc, nums, err, reqs = k.run(args=args)
        check("usage: %s exits 2" % name, rc == 2 and not reqs, (rc, err[-300:]))
    rc, _, err, _ = k.run(args=["run", "--in-cluster", "--service-account-dir", tmp])
    check("--in-cluster outside a pod exits 2", rc == 2 and "KUBERNETES_SERVICE_HOST" in err, err[-300:])

    # ---- create ------------------------------------------------------------
    alpha = fake.apply("opentelemetrycollectors", collector("alpha", replicas=2))
    beta = fake.apply("opentelemetrycollectors", collector("beta", mode="daemonset"))
    fake.apply("opentelemetrycollectors", collector("delta", processors=["k8sattributes"]))
    fake.apply("opentelemetrycollectors", collector("gamma", ns="team", managementState="unmanaged"))
    rc, nums, err, reqs = k.run()
    check("create: exit 0", rc == 0, (rc, err[-2000:]))
    check("create: summary line", nums and nums["collectors"] == 4 and nums["failed"] == 0 and nums["unmanaged"] == 1
          and nums["applied"] > 10 and nums["pruned"] == 0 and nums["unchanged"] == 0, nums)
    check("create: summary counts the requests", nums and nums["requests"] == len(reqs), (nums, len(reqs)))
    dep = k.get("deployments", "alpha-collector", "obs")
    check("create: alpha's Deployment", dep and dep["spec"]["replicas"] == 2, dep and dep["spec"].get("replicas"))
    refs = (dep or {}).get("metadata", {}).get("ownerReferences") or [{}]
    check("create: ownerReference to the collector", refs[0].get("uid") == alpha["metadata"]["uid"] and
          refs[0].get("controller") is True and refs[0].get("kind") == "OpenTelemetryCollector", refs)
    check("create: beta's DaemonSet", k.get("daemonsets", "beta-collector", "obs") is not None)
    check("create: alpha's ConfigMap, Service, ServiceAccount",
          len(k.names("configmaps", "obs", alpha["metadata"]["uid"])) == 1 and
          k.get("services", "alpha-collector", "obs") and k.get("serviceaccounts", "alpha-collector", "obs"),
          k.names("configmaps", "obs"))
    cr = k.get("clusterroles", "delta-obs-cluster-role") or {}
    crb = k.get("clusterrolebindings", "delta-obs-collector") or {}
    check("create: delta's ClusterRole and binding, owner annotated",
          (cr.get("metadata", {}).get("annotations") or {}).get("otel-reconcile/collector") == "obs/delta" and
          bool(crb), sorted(fake.objects["clusterroles"]))
    check("create: nothing for the unmanaged collector",
          not k.names("deployments", "team") and "status" not in k.get("opentelemetrycollectors", "gamma", "team"))
    patches = [r for r in reqs if r["method"] == "PATCH" and not r["path"].endswith("/status")]
    check("create: every apply is server-side, fieldManager otel-reconcile, forced",
          patches and all(r["query"] == "fieldManager=otel-reconcile&force=true" for r in patches), patches[:2])
    order = [r["path"].rsplit("/", 2)[-2] for r in patches if "/namespaces/obs/" in r["path"] and "alpha" in r["path"]]
    check("create: ServiceAccount and ConfigMap before the Deployment",
          order.index("serviceaccounts") < order.index("deployments") and
          order.index("configmaps") < order.index("deployments"), order)
    lists = [r for r in reqs if r["method"] == "GET" and "labelSelector=" in r["query"]]
    check("create: owned kinds listed once each, by label",
          len(lists) == len({r["path"] for r in lists}) >= 12 and
          all("app.kubernetes.io%2Fmanaged-by%3Dopentelemetry-operator" in r["query"] for r in lists), len(lists))
    st = k.get("opentelemetrycollectors", "alpha", "obs").get("status", {})
    check("status: version, image, Ready", st.get("version") == "0.158.0" and "opentelemetry-collector" in
          st.get("image", "") and cond({"status": st}).get("status") == "True" and
          cond({"status": st}).get("reason") == "Reconciled", st)
    sel = st.get("scale", {}).get("selector", "")
    check("status: scale selector and replicas", "app.kubernetes.io/instance=obs.alpha" in sel and
          "app.kubernetes.io/managed-by=opentelemetry-operator" in sel and st["scale"].get("replicas") == 0 and
          st["scale"].get("statusReplicas") == "0/0", st.get("scale"))
    check("status: written with a merge patch on /status", count(reqs, "PATCH", "/opentelemetrycollectors/") == 3, 3)

    # ---- the second run writes nothing -------------------------------------
    rc, nums, err, reqs = k.run()
    check("second run: exit 0", rc == 0, err[-1000:])
    check("second run: no PATCH, no DELETE", count(reqs, "PATCH") == 0 and count(reqs, "DELETE") == 0,
          [r["path"] for r in reqs if r["method"] != "GET"])
    check("second run: summary 0 applied, all unchanged", nums and nums["applied"] == 0 and nums["pruned"] == 0 and
          nums["statuses"] == 0 and nums["unchanged"] > 10, nums)

    # ---- status follows the workload ---------------------------------------
    dep = k.get("deployments", "alpha-collector", "obs")
    dep["status"] = {"replicas": 2, "readyReplicas": 1}
    fake.apply("deployments", dep)
    rc, nums, err, reqs = k.run()
    st = k.get("opentelemetrycollectors", "alpha", "obs")["status"]
    check("status: replicas from the Deployment, one status write only",
          st["scale"]["replicas"] == 2 and st["scale"]["statusReplicas"] == "1/2" and count(reqs, "PATCH") == 1, st)

    # ---- drift: a managed field edited by someone else is put back ---------
    dep = k.get("deployments", "alpha-collector", "obs")
    dep["spec"]["replicas"] = 7
    fake.apply("deployments", dep)
    rc, nums, err, reqs = k.run()
    check("drift: one apply, of the Deployment", rc == 0 and count(reqs, "PATCH") == 1 and
          count(reqs, "PATCH", "/deployments/alpha-collector") == 1, [r["path"] for r in reqs if r["method"] == "PATCH"])
    check("drift: replicas back to 2", k.get("deployments", "alpha-collector", "obs")["spec"]["replicas"] == 2)

    # ---- update: spec change; old ConfigMaps kept up to configVersions -----
    uid = alpha["metadata"]["uid"]
    for i, (cv, extra) in enumerate(((1, "memory_limiter"), (1, "attributes"), (1, "filter"))):
        c = collector("alpha", replicas=3, configVersions=cv, processors=["batch", extra])
        c["spec"]["config"]["processors"]["memory_limiter"] = {"check_interval": "1s", "limit_mib": 100 + i}
        c["metadata"]["uid"] = uid
        fake.apply("opentelemetrycollectors", c)
        # The fake stamps one creation time; give each ConfigMap its own so that
        # "newest" is well defined.
        for name in k.names("configmaps", "obs", uid):
            o = k.get("configmaps", name, "obs")
            if o["metadata"]["creationTimestamp"] == "2026-11-29T00:00:00Z":
                o["metadata"]["creationTimestamp"] = "2026-11-29T00:00:%02dZ" % (10 + i)
                fake.apply("configmaps", o)
        rc, nums, err, reqs = k.run()
        check("update %d: exit 0" % i, rc == 0, err[-1000:])
    dep = k.get("deployments", "alpha-collector", "obs")
    cms = k.names("configmaps", "obs", uid)
    vol = [v for v in dep["spec"]["template"]["spec"]["volumes"] if "configMap" in v][0]["configMap"]["name"]
    check("update: replicas and the config reach the Deployment",
          dep["spec"]["replicas"] == 3 and vol in cms, (dep["spec"]["replicas"], vol, cms))
    check("update: the current ConfigMap and configVersions (1) older one", len(cms) == 2, cms)
    check("update: the last run pruned one ConfigMap", nums and nums["pruned"] == 1, nums)
    c = k.get("opentelemetrycollectors", "alpha", "obs")
    c["spec"]["image"] = "otel/opentelemetry-collector-contrib:0.158.0"
    fake.apply("opentelemetrycollectors", c)
    rc, nums, err, reqs = k.run()
    st = k.get("opentelemetrycollectors", "alpha", "obs")["status"]
    check("update: a new image reaches the status in the same run", rc == 0 and
          st.get("image") == "otel/opentelemetry-collector-contrib:0.158.0", st.get("image"))
    rc, nums, err, reqs = k.run()
    check("update: the run after an update writes nothing", rc == 0 and count(reqs, "PATCH") == 0 and
          count(reqs, "DELETE") == 0, [r["path"] for r in reqs if r["method"] != "GET"])

    # ---- prune: RBAC no longer needed, and RBAC of a deleted collector ------
    d = k.get("opentelemetrycollectors", "delta", "obs")
    d["spec"] = collector("delta")["spec"]
    fake.apply("opentelemetrycollectors", d)
    rc, nums, err, reqs = k.run()
    check("prune: delta's ClusterRole and binding removed when no longer needed",
          rc == 0 and k.get("clusterroles", "delta-obs-cluster-role") is None and
          k.get("clusterrolebindings", "delta-obs-collector") is None and count(reqs, "DELETE") == 2,
          [r["path"] for r in reqs if r["method"] == "DELETE"])
    fake.apply("opentelemetrycollectors", collector("epsilon", processors=["k8sattributes"]))
    k.run()
    check("prune: epsilon's ClusterRole created", k.get("clusterroles", "epsilon-obs-cluster-role") is not None)
    fake.delete("opentelemetrycollectors", "epsilon", "obs")
    rc, nums, err, reqs = k.run()
    check("prune: the RBAC of a deleted collector goes", rc == 0 and
          k.get("clusterroles", "epsilon-obs-cluster-role") is None and
          k.get("clusterrolebindings", "epsilon-obs-collector") is None, sorted(fake.objects["clusterroles"]))
    fake.apply("opentelemetrycollectors", collector("zeta", processors=["k8sattributes"]))
    k.run()
    z = k.get("opentelemetrycollectors", "zeta", "obs")
    z["metadata"]["deletionTimestamp"] = "2026-11-29T01:00:00Z"
    z["metadata"]["finalizers"] = ["example.com/hold"]
    fake.apply("opentelemetrycollectors", z)
    rc, nums, err, reqs = k.run()
    check("prune: a collector being deleted is not reconciled and loses its RBAC", rc == 0 and
          k.get("clusterroles", "zeta-obs-cluster-role") is None and count(reqs, "PATCH") == 0,
          [r["path"] for r in reqs if r["method"] != "GET"])
    fake.delete("opentelemetrycollectors", "zeta", "obs")
    # Namespaced objects of a deleted collector are the garbage collector's.
    check("prune: a deleted collector's namespaced objects are left to the garbage collector",
          count(reqs, "DELETE", "/namespaces/") == 0)
    # Objects of unmanaged collectors and objects without our labels stay.
    fake.apply("configmaps", {"metadata": {"name": "unrelated", "namespace": "obs"}})

    # ---- one collector's failure does not block the others ----------------
    fake.apply("services", {"metadata": {
        "name": "beta-stale", "namespace": "obs",
        "labels": {"app.kubernetes.io/managed-by": "opentelemetry-operator"},
        "ownerReferences": [{"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
                             "name": "beta", "uid": beta["metadata"]["uid"], "controller": True}]}})
    fake.fail_apply("daemonsets", "beta-collector", 422)
    b = k.get("opentelemetrycollectors", "beta", "obs")
    b["spec"]["config"]["exporters"]["debug"] = {"verbosity": "detailed"}
    fake.apply("opentelemetrycollectors", b)
    a = k.get("opentelemetrycollectors", "alpha", "obs")
    a["spec"]["replicas"] = 4
    fake.apply("opentelemetrycollectors", a)
    fake.apply("opentelemetrycollectors", collector("broken", mode="bogus"))
    rc, nums, err, reqs = k.run()
    check("failure: exit 1", rc == 1, (rc, err[-1000:]))
    check("failure: summary counts two failed collectors", nums and nums["failed"] == 2, nums)
    check("failure: the others still reconciled",
          k.get("deployments", "alpha-collector", "obs")["spec"]["replicas"] == 4)
    bst = k.get("opentelemetrycollectors", "beta", "obs")["status"]
    check("failure: beta's condition carries the error", cond({"status": bst}).get("status") == "False" and
          cond({"status": bst}).get("reason") == "ReconcileError" and "422" in cond({"status": bst}).get("message", "")
          and "beta-collector" in cond({"status": bst}).get("message", ""), bst)
    check("failure: no prune for the failed collector", k.get("services", "beta-stale", "obs") is not None)
    check("failure: beta's other objects applied (its new ConfigMap)",
          len(k.names("configmaps", "obs", beta["metadata"]["uid"])) == 2, k.names("configmaps", "obs"))
    brk = k.get("opentelemetrycollectors", "broken", "obs").get("status", {})
    check("render error: Ready=False with the reason, nothing applied",
          cond({"status": brk}).get("status") == "False" and "bogus" in cond({"status": brk}).get("message", "") and
          not k.names("deployments", "obs", k.get("opentelemetrycollectors", "broken", "obs")["metadata"]["uid"]), brk)
    check("failure: logged on stderr", "beta-collector" in err and "error" in err, err[-1000:])
    rc, nums, err, reqs = k.run()
    check("failure again: the failing status is not rewritten",
          rc == 1 and count(reqs, "PATCH", "/status") == 0, [r["path"] for r in reqs if r["method"] == "PATCH"])
    fake.heal()
    fake.delete("opentelemetrycollectors", "broken", "obs")
    rc, nums, err, reqs = k.run()
    bst = k.get("opentelemetrycollectors", "beta", "obs")["status"]
    check("healed: exit 0, beta Ready again, its stale object pruned",
          rc == 0 and cond({"status": bst}).get("status") == "True" and
          k.get("services", "beta-stale", "obs") is None, (rc, bst, err[-500:]))
    check("healed: unrelated objects untouched", k.get("configmaps", "unrelated", "obs") is not None)
    rc, nums, err, reqs = k.run()
    check("healed, then idempotent", rc == 0 and count(reqs, "PATCH") == 0 and count(reqs, "DELETE") == 0,
          [r["path"] for r in reqs if r["method"] != "GET"])

    # ---- unmanaged: left alone even when it has objects ---------------------
    a = k.get("opentelemetrycollectors", "alpha", "obs")
    a["spec"]["managementState"] = "unmanaged"
    a["spec"]["replicas"] = 9
    fake.apply("opentelemetrycollectors", a)
    rc, nums, err, reqs = k.run()
    check("unmanaged: nothing applied, pruned or written", rc == 0 and not [r for r in reqs if r["method"] != "GET"]
          and k.get("deployments", "alpha-collector", "obs")["spec"]["replicas"] == 4, nums)
    a["spec"]["managementState"] = "managed"
    fake.apply("opentelemetrycollectors", a)

    # ---- --dry-run and --namespace ------------------------------------------
    rc, nums, err, reqs = k.run("--dry-run")
    check("dry run: reports, writes nothing", rc == 0 and nums and nums["applied"] >= 1 and
          not [r for r in reqs if r["method"] != "GET"] and
          "would update Deployment obs/alpha-collector:\n  spec.replicas: 4 -> 9\n" in err, (nums, err[-500:]))
    dry_run_output(k, fake)
    rc, nums, err, reqs = k.run("--namespace", "team")
    check("--namespace: only that namespace's collectors and objects", rc == 0 and nums and nums["collectors"] == 1
          and all("/namespaces/team/" in r["path"] or "/namespaces/" not in r["path"] for r in reqs) and
          not any(r["method"] != "GET" for r in reqs), [r["path"] for r in reqs])
    rc, nums, err, reqs = k.run()
    check("after the dry run: applied for real", rc == 0 and count(reqs, "PATCH", "/deployments/alpha-collector") == 1)

    # ---- TargetAllocator: the child CR, and a missing CRD -------------------
    ta = collector("scraper", ns="team", mode="statefulset", targetAllocator={"enabled": True})
    ta["spec"]["config"]["receivers"]["prometheus"] = {"config": {"scrape_configs": [
        {"job_name": "self", "static_configs": [{"targets": ["0.0.0.0:8888"]}]}]}}
    ta["spec"]["config"]["service"]["pipelines"]["metrics"] = {"receivers": ["prometheus"], "exporters": ["debug"]}
    ta = fake.apply("opentelemetrycollectors", ta)
    # The API server's endpoints, which the allocator's NetworkPolicy lets it reach.
    fake.apply("endpointslices", {"metadata": {"name": "kubernetes", "namespace": "default",
                                               "labels": {"kubernetes.io/service-name": "kubernetes"}},
                                  "ports": [{"name": "https", "port": 6443, "protocol": "TCP"}],
                                  "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2"]}]})
    rc, nums, err, reqs = k.run()
    tacr = k.get("targetallocators", "scraper", "team") or {}
    refs = tacr.get("metadata", {}).get("ownerReferences") or [{}]
    check("TargetAllocator: applied, owned by its collector", rc == 0 and
          refs[0].get("uid") == ta["metadata"]["uid"] and tacr["spec"].get("allocationStrategy") == "consistent-hashing",
          (rc, tacr, err[-500:]))
    ta_uid = tacr.get("metadata", {}).get("uid")
    want_children = {"configmaps": ["scraper-targetallocator"], "deployments": ["scraper-targetallocator"],
                     "serviceaccounts": ["scraper-targetallocator"], "services": ["scraper-targetallocator"],
                     "poddisruptionbudgets": ["scraper-targetallocator"],
                     "networkpolicies": ["scraper-targetallocator-networkpolicy"]}
    got_children = {res: k.names(res, "team", ta_uid) for res in want_children}
    check("TargetAllocator: its controller's objects, owned by it", got_children == want_children, got_children)
    tacm = (k.get("configmaps", "scraper-targetallocator", "team") or {}).get("data", {}).get("targetallocator.yaml")
    check("TargetAllocator: its config selects the collector, with its scrape configs", tacm == (
        "allocation_strategy: consistent-hashing\ncollector_not_ready_grace_period: 30s\ncollector_selector:\n"
        "  matchlabels:\n    app.kubernetes.io/component: opentelemetry-collector\n"
        "    app.kubernetes.io/instance: team.scraper\n    app.kubernetes.io/managed-by: opentelemetry-operator\n"
        "    app.kubernetes.io/part-of: opentelemetry\n  matchexpressions: []\nconfig:\n  scrape_configs:\n"
        "  - job_name: self\n    static_configs:\n    - targets:\n      - 0.0.0.0:8888\nfilter_strategy: relabel-config\n"),
        tacm)
    tadep = k.get("deployments", "scraper-targetallocator", "team") or {}
    tpl = tadep.get("spec", {}).get("template", {})
    check("TargetAllocator: the pod hashes its config, runs the default image",
          tpl.get("metadata", {}).get("annotations", {}).get("opentelemetry-targetallocator-config/hash") ==
          __import__("hashlib").sha256((tacm or "").encode()).hexdigest() and
          tpl["spec"]["containers"][0]["image"] == "ghcr.io/open-telemetry/opentelemetry-operator/target-allocator:0.158.0",
          tpl)
    tanp = k.get("networkpolicies", "scraper-targetallocator-networkpolicy", "team") or {}
    check("TargetAllocator: NetworkPolicy egress to the API server's endpoints",
          tanp.get("spec", {}).get("egress") == [{"ports": [{"protocol": "TCP", "port": 6443}],
                                                  "to": [{"ipBlock": {"cidr": "10.0.0.1/32"}},
                                                         {"ipBlock": {"cidr": "10.0.0.2/32"}}]}] and
          count(reqs, "GET", "/endpointslices") == 1, tanp)
    tast = (k.get("targetallocators", "scraper", "team") or {}).get("status", {})
    check("TargetAllocator: status version and Ready", tast.get("version") == "0.158.0" and
          cond({"status": tast}).get("status") == "True", tast)
    check("TargetAllocator: counted in the summary", nums and nums["allocators"] == 1, nums)
    cm = [k.get("configmaps", n, "team") for n in k.names("configmaps", "team", ta["metadata"]["uid"])]
    check("TargetAllocator: the receiver asks the allocator", len(cm) == 1 and
          "endpoint: http://scraper-targetallocator:80" in cm[0]["data"]["collector.yaml"] and
          "scrape_configs" not in cm[0]["data"]["collector.yaml"], cm)
    rc, nums, err, reqs = k.run()
    check("TargetAllocator: the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0 and
          count(reqs, "DELETE") == 0, [r["path"] for r in reqs if r["method"] != "GET"])
    # targetallocator-features/02: the collector's app.kubernetes.io/name becomes the
    # allocator's selector, which the API server will not change: recreated.
    named = k.get("opentelemetrycollectors", "scraper", "team")
    named["metadata"]["labels"] = {"app.kubernetes.io/name": "test"}
    fake.apply("opentelemetrycollectors", named)
    rc, nums, err, reqs = k.run()
    tadep = k.get("deployments", "scraper-targetallocator", "team") or {}
    check("TargetAllocator: a new name label recreates its Deployment with the new selector",
          rc == 0 and nums["recreated"] == 1 and
          tadep.get("spec", {}).get("selector", {}).get("matchLabels", {}).get("app.kubernetes.io/name") == "test" and
          count(reqs, "DELETE", "/deployments/scraper-targetallocator") == 1, (rc, nums, err[-800:]))
    rc, nums, err, reqs = k.run()
    check("TargetAllocator: after the recreate, the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0
          and count(reqs, "DELETE") == 0, [r["path"] for r in reqs if r["method"] != "GET"])
    fake.hide("targetallocators")
    rc, nums, err, reqs = k.run()
    msg = cond(k.get("opentelemetrycollectors", "scraper", "team")).get("message", "")
    check("TargetAllocator CRD missing: that collector fails with the reason, the others do not",
          rc == 1 and nums and nums["failed"] == 1 and
          msg == "TargetAllocator scraper: the TargetAllocator CRD (opentelemetry.io/v1alpha1) is not installed",
          (rc, nums, msg, err[-500:]))
    fake.unhide("targetallocators")
    k.run()

    shared = collector("user", ns="team", mode="statefulset", targetAllocator={"enabled": True})
    shared["metadata"]["labels"] = {"opentelemetry.io/target-allocator": "shared"}
    shared["spec"]["config"]["receivers"]["prometheus"] = {"config": {"scrape_configs": [
        {"job_name": "user-job", "static_configs": [{"targets": ["0.0.0.0:9999"]}]}]}}
    shared["spec"]["config"]["service"]["pipelines"]["metrics"] = {"receivers": ["prometheus"], "exporters": ["debug"]}
    fake.apply("opentelemetrycollectors", shared)
    rc, nums, err, reqs = k.run()
    msg = cond(k.get("opentelemetrycollectors", "user", "team")).get("message", "")
    user = k.get("opentelemetrycollectors", "user", "team")
    check("TargetAllocator by label: a missing one fails the collector, nothing of it applied",
          rc == 1 and msg == "TargetAllocator shared: not found (the label opentelemetry.io/target-allocator names it)"
          and not k.names("configmaps", "team", user["metadata"]["uid"]) and
          not k.names("statefulsets", "team", user["metadata"]["uid"]), (rc, msg))
    fake.apply("targetallocators", {"metadata": {"name": "shared", "namespace": "team"}, "spec": {}})
    rc, nums, err, reqs = k.run()
    check("TargetAllocator by label: an existing one is used, none created",
          rc == 0 and cond(k.get("opentelemetrycollectors", "user", "team")).get("status") == "True" and
          k.get("targetallocators", "user", "team") is None, (rc, err[-500:]))
    shared_ta = k.get("targetallocators", "shared", "team") or {}
    scm = (k.get("configmaps", "shared-targetallocator", "team") or {}).get("data", {}).get("targetallocator.yaml", "")
    check("standalone TargetAllocator: its objects, its config selecting the labelled collector",
          k.names("deployments", "team", shared_ta["metadata"]["uid"]) == ["shared-targetallocator"] and
          "app.kubernetes.io/instance: team.user\n" in scm and "job_name: user-job" in scm and
          "filter_strategy: relabel-config" in scm and
          cond(shared_ta).get("status") == "True", (scm, shared_ta.get("status"), err[-500:]))
    rc, nums, err, reqs = k.run()
    check("standalone TargetAllocator: the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0 and
          count(reqs, "DELETE") == 0, [r["path"] for r in reqs if r["method"] != "GET"])
    fake.delete("opentelemetrycollectors", "user", "team")
    rc, nums, err, reqs = k.run()
    scm = (k.get("configmaps", "shared-targetallocator", "team") or {}).get("data", {}).get("targetallocator.yaml", "")
    check("standalone TargetAllocator: its collector gone, no selector and no scrape configs (targetallocator-label/03)",
          rc == 0 and scm == "allocation_strategy: consistent-hashing\ncollector_not_ready_grace_period: 30s\n"
          "collector_selector: null\nfilter_strategy: relabel-config\n", (scm, err[-500:]))
    fake.delete("targetallocators", "shared", "team")
    rc, nums, err, reqs = k.run()
    check("standalone TargetAllocator deleted: its objects go", rc == 0 and
          not k.names("deployments", "team", shared_ta["metadata"]["uid"]) and
          not k.names("configmaps", "team", shared_ta["metadata"]["uid"]), (rc, err[-500:]))

    # ---- mTLS between collector and allocator (cert-manager) ------------------
    sec = collector("secure", ns="tls", mode="statefulset", targetAllocator={"enabled": True, "mtls": {"enabled": True}})
    sec["spec"]["config"]["receivers"]["prometheus"] = {"config": {"scrape_configs": [
        {"job_name": "secure-job", "static_configs": [{"targets": ["0.0.0.0:9999"]}]}]}}
    sec["spec"]["config"]["service"]["pipelines"]["metrics"] = {"receivers": ["prometheus"], "exporters": ["debug"]}
    sec = fake.apply("opentelemetrycollectors", sec)
    rc, nums, err, reqs = k.run("--namespace", "tls")
    sta = k.get("targetallocators", "secure", "tls") or {"metadata": {}}
    suid = sta["metadata"].get("uid")
    sts = k.get("statefulsets", "secure-collector", "tls") or {}
    pod = sts.get("spec", {}).get("template", {}).get("spec", {})
    scm = [k.get("configmaps", n, "tls")["data"]["collector.yaml"] for n in k.names("configmaps", "tls", sec["metadata"]["uid"])]
    check("mTLS: cert-manager's Issuers and Certificates, owned by the allocator",
          rc == 0 and k.names("issuers", "tls", suid) == ["secure-ca-issuer", "secure-self-signed-issuer"] and
          k.names("certificates", "tls", suid) == ["secure-ca-cert", "secure-ta-client-cert", "secure-ta-server-cert"],
          (rc, k.names("issuers", "tls"), k.names("certificates", "tls"), err[-500:]))
    check("mTLS: the collector mounts the client certificate and asks over https",
          [v["name"] for v in pod.get("volumes", [])][:2] == [pod["volumes"][0]["name"], "secure-ta-client-cert"] and
          {"name": "secure-ta-client-cert", "mountPath": "/tls"} in pod["containers"][0]["volumeMounts"] and
          len(scm) == 1 and "endpoint: https://secure-targetallocator:443" in scm[0] and "reload_interval: 5m" in scm[0],
          (pod.get("volumes"), scm))
    tdep = (k.get("deployments", "secure-targetallocator", "tls") or {}).get("spec", {}).get("template", {}).get("spec", {})
    check("mTLS: the allocator serves https on 8443 with its server certificate",
          {"name": "https", "containerPort": 8443, "protocol": "TCP"} in tdep["containers"][-1]["ports"] and
          {"name": "secure-ta-server-cert", "secret": {"secretName": "secure-ta-server-cert"}} in tdep["volumes"] and
          "listen_addr: :8443" in k.get("configmaps", "secure-targetallocator", "tls")["data"]["targetallocator.yaml"],
          tdep)
    rc, nums, err, reqs = k.run("--namespace", "tls")
    check("mTLS: the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0 and count(reqs, "DELETE") == 0,
          [r["path"] for r in reqs if r["method"] != "GET"])
    fake.hide("issuers")
    fake.hide("certificates")
    rc, nums, err, reqs = k.run("--namespace", "tls")
    msg = cond(k.get("opentelemetrycollectors", "secure", "tls")).get("message", "")
    tamsg = cond(k.get("targetallocators", "secure", "tls")).get("message", "")
    check("mTLS without cert-manager: the collector and its allocator fail with the webhook's message, only statuses "
          "written", rc == 1 and msg == "spec.targetAllocator.mtls: mTLS is enabled with useCertManager but cert-manager "
          "is not available; install cert-manager and restart the operator, or set useCertManager to false" and
          tamsg == msg[len("spec.targetAllocator.mtls: "):] and
          [r["path"].rsplit("/", 3)[-3] for r in reqs if r["method"] != "GET"] == ["opentelemetrycollectors",
                                                                                 "targetallocators"],
          (rc, msg, tamsg, [r["path"] for r in reqs if r["method"] != "GET"]))
    fake.unhide("issuers")
    fake.unhide("certificates")
    fake.delete("opentelemetrycollectors", "secure", "tls")

    # ---- exposure: HTTPRoutes and OpenShift Routes ---------------------------
    web = fake.apply("opentelemetrycollectors", collector("web", ns="team", httpRoute={"enabled": True, "gateway": "gw"},
                                                          ingress={"type": "route", "route": {"termination": "edge"}}))
    rc, nums, err, reqs = k.run()
    check("HTTPRoute and Route applied", rc == 0 and
          k.names("httproutes", "team", web["metadata"]["uid"]) == ["web-otlp-http-httproute"] and
          len(k.names("routes", "team", web["metadata"]["uid"])) == 2,
          (rc, k.names("httproutes", "team"), k.names("routes", "team"), err[-500:]))
    fake.hide("httproutes")
    fake.hide("routes")
    rc, nums, err, reqs = k.run()
    msg = cond(k.get("opentelemetrycollectors", "web", "team")).get("message", "")
    check("Gateway API and route API missing: reconciled without them, the reason on the collector", rc == 0 and
          msg == "Successfully reconciled with warnings: spec.ingress.type is route but the OpenShift route API is "
          "not available: no Routes; spec.httpRoute is enabled but the Gateway API (gateway.networking.k8s.io/v1) is "
          "not installed: no HTTPRoutes", (rc, msg))
    check("route API missing: no Routes, a warning", "warning: team/web: spec.ingress.type is route but the OpenShift "
          "route API is not available: no Routes" in err and count(reqs, "PATCH", "/routes/") == 0, err[-800:])
    fake.unhide("httproutes")
    fake.unhide("routes")
    w = k.get("opentelemetrycollectors", "web", "team")
    del w["spec"]["httpRoute"], w["spec"]["ingress"]
    fake.apply("opentelemetrycollectors", w)
    rc, nums, err, reqs = k.run()
    check("exposure turned off: the HTTPRoute and Routes are pruned", rc == 0 and
          not k.names("httproutes", "team") and not k.names("routes", "team") and nums["pruned"] == 3,
          (rc, nums, k.names("httproutes", "team"), k.names("routes", "team")))
    fake.delete("opentelemetrycollectors", "web", "team")

    # ---- immutable fields: delete and create again, in the same run ----------
    dep = k.get("deployments", "alpha-collector", "obs")
    dep["spec"]["selector"] = {"matchLabels": {"app": "from-an-older-release"}}
    fake.apply("deployments", dep)
    rc, nums, err, reqs = k.run()
    dels = [r for r in reqs if r["method"] == "DELETE"]
    check("selector changed: Deployment deleted (its pods with it) and applied again", rc == 0 and nums and
          nums["recreated"] == 1 and len(dels) == 1 and dels[0]["path"].endswith("/deployments/alpha-collector") and
          dels[0]["query"] == "propagationPolicy=Background" and
          k.get("deployments", "alpha-collector", "obs")["spec"]["selector"]["matchLabels"].get(
              "app.kubernetes.io/instance") == "obs.alpha", (rc, nums, dels, err[-500:]))
    s = k.get("opentelemetrycollectors", "scraper", "team")
    s["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    fake.apply("opentelemetrycollectors", s)
    fake.linger("statefulsets", "scraper-collector", 2)
    rc, nums, err, reqs = k.run()
    dels = [r for r in reqs if r["method"] == "DELETE"]
    polls = [r for r in reqs if r["method"] == "GET" and r["path"].endswith("/statefulsets/scraper-collector")]
    sts = k.get("statefulsets", "scraper-collector", "team")
    check("claim templates changed: StatefulSet deleted orphaning its pods, waited for, created again",
          rc == 0 and nums["recreated"] == 1 and [d["query"] for d in dels] == ["propagationPolicy=Orphan"] and
          # the read before the write (is it ours?), then two polls while it lingers
          [p["status"] for p in polls] == [200, 200, 200, 404] and
          [v["metadata"]["name"] for v in sts["spec"].get("volumeClaimTemplates", [])] == ["data"],
          (rc, nums, dels, [p["status"] for p in polls], err[-500:]))
    # The API server stores quantities in canonical form: equal by value is equal.
    s = k.get("opentelemetrycollectors", "scraper", "team")
    s["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "1024Mi"
    s["spec"]["resources"] = {"limits": {"cpu": "0.5", "memory": "1073741824"}}
    fake.apply("opentelemetrycollectors", s)
    rc, nums, err, reqs = k.run()
    check("quantities: a new resources block is applied, an equal claim size is no immutable change",
          rc == 0 and nums["recreated"] == 0 and count(reqs, "PATCH", "/statefulsets/scraper-collector") == 1 and
          count(reqs, "DELETE") == 0, (rc, nums, err[-500:]))
    sts = k.get("statefulsets", "scraper-collector", "team")
    sts["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"] = "1Gi"
    sts["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m", "memory": "1Gi"}}
    fake.apply("statefulsets", sts)
    rc, nums, err, reqs = k.run()
    check("quantities: canonical forms (1Gi for 1024Mi, 500m for 0.5) are not a change", rc == 0 and
          count(reqs, "PATCH") == 0 and count(reqs, "DELETE") == 0,
          [r["path"] for r in reqs if r["method"] != "GET"])

    # A recreate is asked first as a dry-run create: a policy refusing the new
    # object keeps the old one running.
    dep = k.get("deployments", "alpha-collector", "obs")
    dep["spec"]["selector"] = {"matchLabels": {"app": "older-still"}}
    fake.apply("deployments", dep)
    fake.fail_create("deployments", "alpha-collector", 403, 'admission webhook "policy.example.com" denied the '
                     'request: no new Deployments on Fridays')
    rc, nums, err, reqs = k.run()
    msg = cond(k.get("opentelemetrycollectors", "alpha", "obs")).get("message", "")
    posts = [r for r in reqs if r["method"] == "POST"]
    check("recreate refused by a policy: nothing deleted, the reason on the collector",
          rc == 1 and count(reqs, "DELETE") == 0 and len(posts) == 1 and
          posts[0]["query"] == "dryRun=All&fieldManager=otel-reconcile" and
          k.get("deployments", "alpha-collector", "obs") is not None and
          msg == 'recreating Deployment alpha-collector (spec.selector changed): the new object would be refused, so '
          'the old one stays: 403 admission webhook "policy.example.com" denied the request: no new Deployments on '
          'Fridays', (rc, msg, [r["path"] for r in reqs if r["method"] != "GET"]))
    fake.heal()
    rc, nums, err, reqs = k.run()
    check("recreate allowed again: done", rc == 0 and nums["recreated"] == 1, (rc, nums, err[-500:]))
    # An immutable-field 422 of a kind that is not a workload fails, deletes nothing.
    fake.fail_apply("services", "alpha-collector", 422, "spec.clusterIP: Invalid value: \"None\": field is immutable",
                    times=1)
    a = k.get("opentelemetrycollectors", "alpha", "obs")
    a["spec"]["replicas"] = 5
    a["spec"]["ports"] = [{"name": "extra", "port": 9999}]
    fake.apply("opentelemetrycollectors", a)
    rc, nums, err, reqs = k.run()
    check("immutable 422 on a Service: the collector fails, nothing is deleted", rc == 1 and count(reqs, "DELETE") == 0
          and "applying Service alpha-collector: 422" in cond(k.get("opentelemetrycollectors", "alpha", "obs")).get(
              "message", ""), (rc, nums, [r["path"] for r in reqs if r["method"] != "GET"]))
    rc, nums, err, reqs = k.run()
    check("and the next run applies it", rc == 0, (rc, err[-500:]))

    b = k.get("opentelemetrycollectors", "beta", "obs")
    b["spec"]["config"]["exporters"]["debug"] = {"verbosity": "basic"}
    fake.apply("opentelemetrycollectors", b)
    fake.fail_apply("daemonsets", "beta-collector", 422, "spec.template.spec.foo: field is immutable", times=1)
    rc, nums, err, reqs = k.run()
    dels = [r["path"] for r in reqs if r["method"] == "DELETE"]
    order = [(r["method"], r["query"]) for r in reqs if "/daemonsets" in r["path"] and r["method"] != "GET"]
    check("an immutable change only the server saw: deleted and applied again", rc == 0 and nums["recreated"] == 1 and
          dels == ["/apis/apps/v1/namespaces/obs/daemonsets/beta-collector"] and order == [
              ("PATCH", "fieldManager=otel-reconcile&force=true"), ("POST", "dryRun=All&fieldManager=otel-reconcile"),
              ("DELETE", "propagationPolicy=Background"), ("PATCH", "fieldManager=otel-reconcile&force=true")],
          (rc, nums, order, err[-500:]))
    rc, nums, err, reqs = k.run()
    check("after recreating: the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0 and
          count(reqs, "DELETE") == 0, [r["path"] for r in reqs if r["method"] != "GET"])

    # ---- an autoscaler without maxReplicas (spec 7.10): no HPA, said in status
    hpa = fake.apply("opentelemetrycollectors", collector("scaled", autoscaler={"targetCPUUtilization": 50}))
    rc, nums, err, reqs = k.run()
    c = k.get("opentelemetrycollectors", "scaled", "obs")
    check("autoscaler without maxReplicas: reconciled without an HPA, the reason in the Ready condition",
          rc == 0 and not k.names("horizontalpodautoscalers", "obs", hpa["metadata"]["uid"]) and
          cond(c).get("status") == "True" and cond(c).get("message") == "Successfully reconciled with warnings: "
          "spec.autoscaler.maxReplicas is not set: no HorizontalPodAutoscaler", (rc, cond(c)))
    rc, nums, err, reqs = k.run()
    check("autoscaler without maxReplicas: the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0,
          [r["path"] for r in reqs if r["method"] != "GET"])
    fake.delete("opentelemetrycollectors", "scaled", "obs")

    # ---- what the admission webhook refuses (collector/validate.c) is refused
    # here too, with its message: Ready False, nothing of it applied.
    refused = fake.apply("opentelemetrycollectors", collector("tolerant", mode="sidecar",
                                                             tolerations=[{"key": "dedicated", "operator": "Exists"}]))
    minmax = fake.apply("opentelemetrycollectors", collector("minmax", autoscaler={"minReplicas": 2}))
    rc, nums, err, reqs = k.run()
    sidecar_msg = ("the OpenTelemetry Collector mode is set to sidecar, which does not support the attribute "
                   "'tolerations'")
    for obj, msg in ((refused, sidecar_msg), (minmax, "spec.maxReplica must be set when spec.minReplica is set")):
        name = obj["metadata"]["name"]
        c = k.get("opentelemetrycollectors", name, "obs")
        check("refused by validation: %s: Ready False with the webhook's message" % name,
              rc == 1 and cond(c).get("status") == "False" and cond(c).get("reason") == "ReconcileError" and
              cond(c).get("message") == msg, (rc, cond(c)))
        check("refused by validation: %s: nothing applied" % name,
              not [r for r in reqs if r["method"] == "PATCH" and "/%s" % name in r["path"] and
                   not r["path"].endswith("/status")] and
              not any(k.names(res, "obs", obj["metadata"]["uid"]) for res in ("configmaps", "serviceaccounts",
                                                                               "deployments")),
              [r["path"] for r in reqs if r["method"] == "PATCH"])
        check("refused by validation: %s: the log says why" % name, ("error: obs/%s: %s" % (name, msg)) in err,
              err[-800:])
    fake.delete("opentelemetrycollectors", "tolerant", "obs")
    fake.delete("opentelemetrycollectors", "minmax", "obs")
    k.run()

    # ---- upgrade (spec 5.6): the telemetry address becomes a reader, in memory
    old = collector("old")
    old["spec"]["config"]["service"]["telemetry"] = {"metrics": {"address": "0.0.0.0:9999"}}
    old["status"] = {"version": "0.110.0"}
    old = fake.apply("opentelemetrycollectors", old)
    rc, nums, err, reqs = k.run()
    cms = [k.get("configmaps", n, "obs")["data"]["collector.yaml"] for n in k.names("configmaps", "obs",
                                                                                    old["metadata"]["uid"])]
    o = k.get("opentelemetrycollectors", "old", "obs")
    check("upgrade: address moved into a prometheus reader, the CR's spec untouched", rc == 0 and len(cms) == 1 and
          "address" not in cms[0] and "port: 9999" in cms[0] and "readers:" in cms[0] and
          o["spec"]["config"]["service"]["telemetry"]["metrics"] == {"address": "0.0.0.0:9999"}, (cms, err[-500:]))
    check("upgrade: a warning says so", "warning: obs/old: service.telemetry.metrics.address is deprecated: rendered "
          "as a prometheus pull reader" in err, err[-500:])
    check("upgrade: status.version moves to ours", o["status"].get("version") == "0.158.0", o.get("status"))
    check("upgrade: the warning is on the Ready condition too", cond(o).get("status") == "True" and
          cond(o).get("message") == "Successfully reconciled with warnings: service.telemetry.metrics.address is "
          "deprecated: rendered as a prometheus pull reader", cond(o))
    svc = k.get("services", "old-collector-monitoring", "obs") or {}
    check("upgrade: the monitoring Service keeps the port", [p.get("port") for p in svc.get("spec", {}).get(
        "ports", [])] == [9999], svc)
    rc, nums, err, reqs = k.run()
    check("upgrade: the next run writes nothing", rc == 0 and count(reqs, "PATCH") == 0 and
          count(reqs, "DELETE") == 0, [r["path"] for r in reqs if r["method"] != "GET"])
    o["status"]["version"] = "0.200.0"
    fake.apply("opentelemetrycollectors", o)
    rc, nums, err, reqs = k.run()
    check("upgrade: a newer status.version is kept", rc == 0 and count(reqs, "PATCH") == 0 and
          k.get("opentelemetrycollectors", "old", "obs")["status"]["version"] == "0.200.0", nums)
    fake.delete("opentelemetrycollectors", "old", "obs")
    pinned = collector("pinned", upgradeStrategy="none")
    pinned["spec"]["config"]["service"]["telemetry"] = {"metrics": {"address": "0.0.0.0:9999"}}
    pinned["status"] = {"version": "0.110.0"}
    pinned = fake.apply("opentelemetrycollectors", pinned)
    rc, nums, err, reqs = k.run()
    cms = [k.get("configmaps", n, "obs")["data"]["collector.yaml"] for n in k.names("configmaps", "obs",
                                                                                    pinned["metadata"]["uid"])]
    p = k.get("opentelemetrycollectors", "pinned", "obs")
    check("upgradeStrategy none: no upgrade, status.version kept", rc == 0 and len(cms) == 1 and
          'address: 0.0.0.0:9999' in cms[0] and "readers" not in cms[0] and p["status"]["version"] == "0.110.0",
          (rc, cms, p.get("status"), err[-300:]))
    fake.delete("opentelemetrycollectors", "pinned", "obs")
    s = k.get("opentelemetrycollectors", "scraper", "team")
    s["spec"]["targetAllocator"] = {"enabled": False}
    fake.apply("opentelemetrycollectors", s)
    rc, nums, err, reqs = k.run()
    check("TargetAllocator turned off: its CR is pruned", rc == 0 and k.get("targetallocators", "scraper", "team") is None
          and count(reqs, "DELETE", "/targetallocators/scraper") == 1, (rc, nums, err[-500:]))
    left = {res: k.names(res, "team", ta_uid) for res in want_children}
    check("TargetAllocator turned off: its objects go in the same run (smoke-deletion/01)",
          not any(left.values()), left)
    fake.delete("opentelemetrycollectors", "scraper", "team")

    ownership(k, fake)
    limits(k, fake)

    # ---- API errors ----------------------------------------------------------
    fake.set_token("other")
    rc, nums, err, reqs = k.run()
    check("401: exit 2, reason logged", rc == 2 and "401" in err, (rc, err[-500:]))
    fake.set_token("run-token")


MANAGED = {"app.kubernetes.io/managed-by": "opentelemetry-operator"}


def collect_garbage(fake, uid):
    """What Kubernetes' garbage collector does once an owner is gone (the
    fake has none): namespaced objects whose owner is uid go."""
    for res, objs in fake.objects.items():
        for (ns, name), o in list(objs.items()):
            if ns and any(r.get("uid") == uid for r in o["metadata"].get("ownerReferences") or []):
                fake.delete(res, name, ns)


def writes(reqs, contains=""):
    return [(r["method"], r["path"]) for r in reqs if r["method"] not in ("GET",) and contains in r["path"]]


def ownership(k, fake):
    """Nothing that is not ours is applied over or deleted (issue 25 item 3):
    a name taken by someone else's object is a collision, said on the
    collector and in the log; a DELETE names the uid we read; LIST items of
    another kind, without a uid or outside the namespace are not believed."""
    # An Argo Rollout's Deployment has the name collector `api` would use;
    # `api2`'s even carries our managed-by label (so our LIST sees it).
    for name, labels in (("api", {"app": "api"}), ("api2", dict(MANAGED, app="api2"))):
        rollout_uid = "0f0f0f0f-0000-4000-8000-%012d" % len(name)
        argo = fake.apply("deployments", {"metadata": {
            "name": name + "-collector", "namespace": "prod", "labels": labels,
            "ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1", "kind": "Rollout", "name": name,
                                 "uid": rollout_uid, "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"replicas": 5, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "api", "image": "example.com/api:1"}]}}}})
        col = fake.apply("opentelemetrycollectors", collector(name, ns="prod"))
        for attempt in ("first run", "next run"):
            rc, nums, err, reqs = k.run("--namespace", "prod")
            dep = k.get("deployments", name + "-collector", "prod")
            c = k.get("opentelemetrycollectors", name, "prod")
            msg = ("name collision: Deployment prod/%s-collector exists and is not ours (its controller is Rollout %s "
                   "(uid %s), not this one (uid %s)); it is left alone" % (name, name, rollout_uid,
                                                                          col["metadata"]["uid"]))
            check("collision (%s, %s): the Rollout's Deployment is neither applied over nor deleted" % (name, attempt),
                  rc == 1 and not writes(reqs, "/deployments/") and dep == argo, (rc, writes(reqs), err[-800:]))
            check("collision (%s, %s): Ready False on the collector, saying so" % (name, attempt),
                  cond(c).get("status") == "False" and cond(c).get("reason") == "ReconcileError" and
                  cond(c).get("message") == msg, cond(c))
            check("collision (%s, %s): a warning in the log" % (name, attempt),
                  ("warning: prod/%s: name collision: Deployment prod/%s-collector exists and is not ours" %
                   (name, name)) in err, err[-800:])
        fake.delete("opentelemetrycollectors", name, "prod")
        rc, nums, err, reqs = k.run("--namespace", "prod")
        check("collision (%s): its collector gone, the Deployment is still the Rollout's" % name,
              rc == 0 and k.get("deployments", name + "-collector", "prod") == argo and not writes(reqs, "/deployments/"),
              (rc, writes(reqs)))

    # A ClusterRole of the name collector own/kube would use, made by the
    # upstream operator (its labels, none of our annotations), and a binding
    # forging our collector annotation without the uid.
    role = fake.apply("clusterroles", {"metadata": {"name": "kube-own-cluster-role", "labels": MANAGED},
                                       "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}]})
    binding = fake.apply("clusterrolebindings", {"metadata": {
        "name": "kube-own-collector", "labels": MANAGED, "annotations": {"otel-reconcile/collector": "own/kube"}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "admin", "namespace": "kube-system"}]})
    kube = fake.apply("opentelemetrycollectors", collector("kube", ns="own", processors=["k8sattributes"]))
    rc, nums, err, reqs = k.run("--namespace", "own")
    c = k.get("opentelemetrycollectors", "kube", "own")
    check("collision: a foreign ClusterRole and binding of our names are not taken over",
          rc == 1 and not writes(reqs, "/clusterrole") and k.get("clusterroles", "kube-own-cluster-role") == role and
          k.get("clusterrolebindings", "kube-own-collector") == binding, (rc, writes(reqs), err[-800:]))
    check("collision: the ClusterRole's, on the collector", cond(c).get("message") ==
          "name collision: ClusterRole kube-own-cluster-role exists and is not ours (it has no otel-reconcile/collector "
          "annotation); it is left alone", cond(c))
    check("collision: the binding's, in the log", "warning: own/kube: name collision: ClusterRoleBinding "
          "kube-own-collector exists and is not ours (it has no otel-reconcile/collector-uid annotation); left alone"
          in err, err[-800:])
    fake.delete("opentelemetrycollectors", "kube", "own")
    rc, nums, err, reqs = k.run("--namespace", "own")
    check("collision: the collector gone, the foreign ClusterRole and binding are not swept",
          rc == 0 and not writes(reqs, "/clusterrole") and k.get("clusterroles", "kube-own-cluster-role") == role and
          k.get("clusterrolebindings", "kube-own-collector") == binding, (rc, writes(reqs), err[-800:]))
    # docs/reconcile.md: adopting the operator's ClusterRole is two annotations.
    collect_garbage(fake, kube["metadata"]["uid"])
    kube = fake.apply("opentelemetrycollectors", collector("kube", ns="own", processors=["k8sattributes"]))
    for res, obj in (("clusterroles", role), ("clusterrolebindings", binding)):
        o = k.get(res, obj["metadata"]["name"]) or fake.apply(res, obj)  # (swept by a binary that took them over)
        o["metadata"].setdefault("annotations", {}).update({"otel-reconcile/collector": "own/kube",
                                                           "otel-reconcile/collector-uid": kube["metadata"]["uid"]})
        fake.apply(res, o)
    rc, nums, err, reqs = k.run("--namespace", "own")
    role2 = k.get("clusterroles", "kube-own-cluster-role") or {}
    check("adopted (annotated with the collector and its uid): applied as ours", rc == 0 and
          count(reqs, "PATCH", "/clusterroles/kube-own-cluster-role") == 1 and
          count(reqs, "PATCH", "/clusterrolebindings/kube-own-collector") == 1 and
          role2.get("rules") != role["rules"] and
          cond(k.get("opentelemetrycollectors", "kube", "own")).get("status") == "True", (rc, writes(reqs), err[-800:]))
    # Created again under the same name: a new uid, so the old one's
    # ClusterRoles are swept first and made anew, never inherited.
    fake.delete("opentelemetrycollectors", "kube", "own")
    collect_garbage(fake, kube["metadata"]["uid"])
    kube2 = fake.apply("opentelemetrycollectors", collector("kube", ns="own", processors=["k8sattributes"]))
    rc, nums, err, reqs = k.run("--namespace", "own")
    role3 = k.get("clusterroles", "kube-own-cluster-role") or {"metadata": {}}
    check("collector created again: the old uid's ClusterRole swept first, then created for the new uid",
          rc == 0 and [m for m, _ in writes(reqs, "/clusterroles/")] == ["DELETE", "PATCH"] and
          role3["metadata"].get("annotations", {}).get("otel-reconcile/collector-uid") == kube2["metadata"]["uid"],
          (rc, writes(reqs), err[-800:]))
    fake.delete("opentelemetrycollectors", "kube", "own")
    k.run("--namespace", "own")

    # A collector and the TargetAllocator it generates share a name: the
    # allocator's prune must not take the collector's ClusterRole.
    sc = collector("shared-name", ns="own", mode="statefulset", processors=["k8sattributes"],
                   targetAllocator={"enabled": True})
    sc["spec"]["config"]["receivers"]["prometheus"] = {"config": {"scrape_configs": [
        {"job_name": "self", "static_configs": [{"targets": ["0.0.0.0:8888"]}]}]}}
    sc["spec"]["config"]["service"]["pipelines"]["metrics"] = {"receivers": ["prometheus"], "exporters": ["debug"]}
    fake.apply("opentelemetrycollectors", sc)
    rc1, _, err1, _ = k.run("--namespace", "own")
    rc, nums, err, reqs = k.run("--namespace", "own")
    check("TargetAllocator of the collector's name: the collector's ClusterRole is not pruned by it",
          rc1 == 0 and rc == 0 and k.get("clusterroles", "shared-name-own-cluster-role") is not None and
          not writes(reqs), (rc1, rc, writes(reqs), err[-800:]))
    fake.delete("opentelemetrycollectors", "shared-name", "own")
    for res in ("targetallocators",):
        fake.delete(res, "shared-name", "own")
    k.run("--namespace", "own")

    # Deletes are by uid: an object replaced since our LIST is not deleted.
    rep = fake.apply("opentelemetrycollectors", collector("rep", ns="own2"))
    k.run("--namespace", "own2")
    owner = [{"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector", "name": "rep",
              "uid": rep["metadata"]["uid"], "controller": True}]
    stale = fake.apply("services", {"metadata": {"name": "rep-stale", "namespace": "own2", "labels": MANAGED,
                                                 "ownerReferences": owner}})
    fake.replace_before_delete("services", "rep-stale", "own2")
    rc, nums, err, reqs = k.run("--namespace", "own2")
    now = k.get("services", "rep-stale", "own2") or {"metadata": {}}
    dels = [r for r in reqs if r["method"] == "DELETE"]
    check("replaced before the delete: the uid precondition keeps the new object", rc == 0 and len(dels) == 1 and
          dels[0]["status"] == 409 and now["metadata"].get("uid") not in (None, stale["metadata"]["uid"]),
          (rc, dels, now, err[-800:]))
    check("replaced before the delete: the API server's 409, in the log", (
        'warning: not deleting Service own2/rep-stale: it was replaced since it was listed (409 Operation cannot be '
        'fulfilled on services "rep-stale": StorageError: invalid object, Code: 4, Key: /registry/services/own2/'
        'rep-stale, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in '
        'object meta: %s)\n' % (stale["metadata"]["uid"], now["metadata"].get("uid"))) in err, err[-800:])
    fake.delete("services", "rep-stale", "own2")

    # LIST items a Services LIST should not have held, each naming a real
    # Service that is not ours, each "owned" by rep.
    precious = {}
    for name, ns in (("precious", "own2"), ("precious2", "own2"), ("precious3", "elsewhere")):
        precious[name] = fake.apply("services", {"metadata": {"name": name, "namespace": ns}})
    fake.extra_items("services", [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {
            "name": "precious", "namespace": "own2", "uid": "11111111-0000-4000-8000-000000000001", "labels": MANAGED,
            "ownerReferences": owner}},
        {"metadata": {"name": "precious2", "namespace": "own2", "labels": MANAGED, "ownerReferences": owner}},
        {"metadata": {"name": "precious3", "namespace": "elsewhere", "uid": "11111111-0000-4000-8000-000000000003",
                      "labels": MANAGED, "ownerReferences": owner}}])
    rc, nums, err, reqs = k.run("--namespace", "own2")
    check("LIST items of another kind, without uid, of another namespace: nothing deleted", rc == 0 and
          count(reqs, "DELETE") == 0 and all(k.get("services", n, o["metadata"]["namespace"]) == o
                                             for n, o in precious.items()), (rc, writes(reqs), err[-800:]))
    check("LIST items not believed: said once", err.count("items ignored") == 1 and
          "warning: LIST /api/v1/namespaces/own2/services: 3 items ignored, neither applied over nor deleted (first: "
          "apps/v1 Deployment own2/precious: not a Service)\n" in err, err[-800:])
    fake.extra_items("services", [])
    fake.delete("opentelemetrycollectors", "rep", "own2")


def limits(k, fake):
    """A run's budget: deletions, a deadline, LIST pages and bytes. Past one
    the run stops before its next request and exits 3."""
    cap = fake.apply("opentelemetrycollectors", collector("cap", ns="cap"))
    k.run("--namespace", "cap")
    owner = [{"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector", "name": "cap",
              "uid": cap["metadata"]["uid"], "controller": True}]
    for i in range(3):
        fake.apply("services", {"metadata": {"name": "cap-stale-%d" % i, "namespace": "cap", "labels": MANAGED,
                                             "ownerReferences": owner}})
    rc, nums, err, reqs = k.run("--namespace", "cap", "--max-deletions", "2")
    left = [n for n in k.names("services", "cap") if n.startswith("cap-stale-")]
    check("--max-deletions 2: two deletes, then cut short, exit 3", rc == 3 and count(reqs, "DELETE") == 2 and
          len(left) == 1 and nums and nums["pruned"] == 2 and
          "error: run cut short: --max-deletions 2 reached; nothing more is written in this run\n" in err and
          not [r for r in reqs if r["method"] != "GET"][2:], (rc, nums, writes(reqs), err[-800:]))
    rc, nums, err, reqs = k.run("--namespace", "cap")
    check("the next run (default cap 100) finishes the prune", rc == 0 and count(reqs, "DELETE") == 1 and
          not [n for n in k.names("services", "cap") if n.startswith("cap-stale-")], (rc, writes(reqs), err[-500:]))

    # An API server that stops answering: the run's own deadline.
    c = k.get("opentelemetrycollectors", "cap", "cap")
    c["spec"]["replicas"] = 2
    fake.apply("opentelemetrycollectors", c)
    fake.hold("deployments")
    try:
        rc, nums, err, reqs = k.run("--namespace", "cap", "--deadline", "2")
    finally:
        fake.release("deployments")
    check("--deadline 2: the held GET ends the run at the deadline, exit 3", rc == 3 and
          "error: run cut short: --deadline 2 s passed; nothing more is written in this run\n" in err and
          not writes(reqs), (rc, nums, writes(reqs), err[-800:]))
    rc, nums, err, reqs = k.run("--namespace", "cap")
    check("after the deadline: the next run applies", rc == 0 and count(reqs, "PATCH", "/deployments/") == 1,
          (rc, writes(reqs), err[-500:]))

    # LISTs without end.
    fake.fault("configmaps", "endless")
    rc, nums, err, reqs = k.run("--namespace", "cap", "--max-list-pages", "5")
    pages = [r for r in reqs if r["method"] == "GET" and r["path"] == "/api/v1/namespaces/cap/configmaps"]
    check("endless continue, --max-list-pages 5: five pages, cut short, nothing written", rc == 3 and len(pages) == 5
          and not writes(reqs) and "error: run cut short: LIST /api/v1/namespaces/cap/configmaps: --max-list-pages 5 "
          "reached (the API server keeps answering continue); nothing more is written in this run\n" in err,
          (rc, len(pages), writes(reqs), err[-800:]))
    rc, nums, err, reqs = k.run("--namespace", "cap")
    pages = [r for r in reqs if r["method"] == "GET" and r["path"] == "/api/v1/namespaces/cap/configmaps"]
    check("endless continue: the default cap, 1000 pages", rc == 3 and len(pages) == 1000 and not writes(reqs),
          (rc, len(pages), err[-500:]))
    # 100,000 bytes of padding and one ConfigMap a page: 1 MiB is passed in the 11th.
    fake.fault("configmaps", "endless", pad=100000)
    rc, nums, err, reqs = k.run("--namespace", "cap", "--max-list-bytes", "1Mi", "--max-list-pages", "100")
    pages = [r for r in reqs if r["method"] == "GET" and r["path"] == "/api/v1/namespaces/cap/configmaps"]
    check("a LIST past --max-list-bytes 1Mi: cut off in its 11th page, exit 3", rc == 3 and len(pages) == 11 and
          not writes(reqs) and "error: run cut short: LIST /api/v1/namespaces/cap/configmaps: --max-list-bytes 1048576 "
          "reached; nothing more is written in this run\n" in err, (rc, len(pages), err[-800:]))
    fake.fault("configmaps", "endless", pad=300000)
    rc, nums, err, reqs = k.run("--namespace", "cap", "--max-list-bytes", "1Mi")
    pages = [r for r in reqs if r["method"] == "GET" and r["path"] == "/api/v1/namespaces/cap/configmaps"]
    check("one page larger than a quarter of --max-list-bytes: cut off while read, exit 3", rc == 3 and
          len(pages) == 1 and not writes(reqs) and "error: run cut short: LIST /api/v1/namespaces/cap/configmaps: a page "
          "larger than a quarter of --max-list-bytes 1048576; nothing more is written in this run\n" in err,
          (rc, len(pages), err[-800:]))
    fake.heal_faults()
    for flag, value in (("--max-deletions", "0"), ("--deadline", "soon"), ("--max-list-pages", "-1"),
                        ("--max-list-bytes", "1Ti")):
        rc, nums, err, reqs = k.run("--namespace", "cap", flag, value)
        check("usage: %s %s exits 2, nothing asked" % (flag, value), rc == 2 and not reqs and
              err.startswith("otel-reconcile run: %s %s: must be a positive" % (flag, value)), (rc, err[:300]))
    rc, nums, err, reqs = k.run("--namespace", "cap")
    check("limits: afterwards a run is whole again", rc == 0, (rc, err[-500:]))
    fake.delete("opentelemetrycollectors", "cap", "cap")


if __name__ == "__main__":
    sys.exit(main())
