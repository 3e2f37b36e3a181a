"""tests/e2e/webhook_test.py - the webhook as the real API server calls it:
deploy/ applied (tests/e2e/deploylib.py), `otel-webhook serve` (ASan) on the
host with the otel-webhook ServiceAccount's token, and the scenarios of issue
26 step 4 asserted on what the API server stored or answered.

The engine's expected output is `otel-webhook inject` on the pod exactly as
the webhook received it: the same manifest through the same admission chain
(`kubectl apply --dry-run=server`) in a namespace the webhook never sees
(labelled otel-webhook/skip), with the stored Instrumentations, collectors
and Namespace as --resources. inject's pod then goes through that admission
chain again (`kubectl create --dry-run=server` there): the API server's own
defaults and the ServiceAccount plugin's token mount on the injected init
containers (it is reinvoked after a webhook changes the pod) are applied to
it as to the stored pod. Stored and expected pods must then be equal on
metadata.annotations, metadata.labels and the whole spec, the random suffix
of kube-api-access-XXXXX named alike. Run by tests/e2e/run.py.
"""
import base64
import http.server
import json
import os
import re
import ssl
import subprocess
import tempfile
import threading

from testlib import wait_for
from deploylib import Webhook

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.join(ROOT, "build", "asan", "otel-webhook")
PLAIN = "e2e-plain"  # otel-webhook/skip: the webhook is never called there
SETTLE = 60
M = "the OpenTelemetry Collector mode is set to "
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

INSTRUMENTATION = {
    "apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation",
    "metadata": {"name": "all"},
    "spec": {"exporter": {"endpoint": "http://otel-collector:4318"}, "propagators": ["tracecontext", "baggage"],
             "sampler": {"type": "parentbased_traceidratio", "argument": "0.5"}},
}
SIDECAR = {
    "apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector",
    "metadata": {"name": "sidecar"},
    "spec": {"mode": "sidecar", "config": {
        "receivers": {"otlp": {"protocols": {"grpc": {}, "http": {}}}},
        "exporters": {"debug": {}},
        "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}}}}},
}


def pod(name, annotations=None, containers=("app",), labels=None):
    meta = {"name": name}
    if annotations:
        meta["annotations"] = annotations
    if labels:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": c, "image": "registry.example/%s:1.0" % c} for c in containers]}}


def normal(obj):
    """obj with the ServiceAccount plugin's random volume suffix named alike."""
    return json.loads(re.sub(r'"kube-api-access-[a-z0-9]{5}"', '"kube-api-access-XXXXX"', json.dumps(obj)))


def injected_view(p):
    m = p.get("metadata", {})
    return normal({"annotations": m.get("annotations"), "labels": m.get("labels"), "spec": p.get("spec")})


def diff(a, b):
    """The first differing path of two JSON values, for a failure's detail."""
    if type(a) is not type(b):
        return "%r != %r" % (a, b)
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            if a.get(k) != b.get(k):
                return "%s: %s" % (k, diff(a.get(k), b.get(k)))
    if isinstance(a, list):
        if len(a) != len(b):
            return "lengths %d != %d: %s" % (len(a), len(b), json.dumps(a)[:600] + " vs " + json.dumps(b)[:600])
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return "[%d]: %s" % (i, diff(x, y))
    return "%r != %r" % (a, b)


class Suite:
    def __init__(self, cluster, check, webhook):
        self.c, self.check, self.w = cluster, check, webhook
        self.tmp = tempfile.mkdtemp(prefix="webhook-", dir=cluster.dir)
        self.n = 0

    def kubectl(self, *args, obj=None):
        return self.c.kubectl(*args, input=json.dumps(obj) if obj is not None else None)

    def namespace(self, name, annotations=None, labels=None):
        ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        if annotations:
            ns["metadata"]["annotations"] = annotations
        if labels:
            ns["metadata"]["labels"] = labels
        r = self.kubectl("apply", "-f", "-", obj=ns)
        ok = r.returncode == 0
        # Pods need the namespace's default ServiceAccount (the admission plugin).
        ok = ok and wait_for(lambda: self.c.get_json("serviceaccount", "default", "-n", name), SETTLE)[0]
        self.check("namespace %s with its default ServiceAccount" % name, bool(ok), r.stderr)

    def apply(self, obj, ns, *extra):
        return self.kubectl("apply", "-n", ns, "-f", "-", *extra, obj=obj)

    def as_received(self, manifest, ns):
        """The pod as the webhook receives it in ns: the same admission
        chain, in the namespace the webhook skips."""
        # A controller's pod is created, not applied (kubectl apply cannot
        # send a generateName, and would add its last-applied annotation).
        verb = "create" if "ownerReferences" in manifest["metadata"] else "apply"
        r = self.kubectl(verb, "--dry-run=server", "-n", PLAIN, "-o", "json", "-f", "-", obj=manifest)
        if r.returncode != 0:
            raise RuntimeError("dry-run in %s: %s" % (PLAIN, r.stderr))
        p = json.loads(r.stdout)
        m = p["metadata"]
        for k in ("uid", "creationTimestamp", "resourceVersion", "managedFields", "generation"):
            m.pop(k, None)
        m["namespace"] = ns
        if "generateName" in manifest["metadata"]:
            m.pop("name", None)
        if LAST_APPLIED in m.get("annotations", {}):
            la = json.loads(m["annotations"][LAST_APPLIED])
            la["metadata"]["namespace"] = ns
            m["annotations"][LAST_APPLIED] = json.dumps(la, sort_keys=True, separators=(",", ":")) + "\n"
        p.pop("status", None)
        return p

    def resources(self, ns, extra=()):
        """A --resources folder: ns's stored Instrumentations and collectors
        and the Namespace itself, as the API server holds them, and extra
        stored objects (owner workloads, Secrets, ConfigMaps)."""
        d = os.path.join(self.tmp, "res-%d" % self.n)
        os.makedirs(d)
        for j, o in enumerate(extra):
            with open(os.path.join(d, "extra-%d.json" % j), "w") as f:
                json.dump(o, f)
        for i, kind in enumerate(("instrumentations.opentelemetry.io", "opentelemetrycollectors.opentelemetry.io")):
            got = self.c.get_json(kind, "-n", ns) or {"items": []}
            for j, o in enumerate(got["items"]):
                with open(os.path.join(d, "%d-%d.json" % (i, j)), "w") as f:
                    json.dump(o, f)
        with open(os.path.join(d, "ns.json"), "w") as f:
            json.dump(self.c.get_json("namespace", ns), f)
        return d

    def expected(self, manifest, ns, extra=()):
        """(inject's pod through the admission chain, inject's stderr)."""
        self.n += 1
        p0 = self.as_received(manifest, ns)
        src = os.path.join(self.tmp, "pod-%d.json" % self.n)
        with open(src, "w") as f:
            json.dump(p0, f)
        r = subprocess.run([BIN, "inject", "-f", src, "--resources", self.resources(ns, extra), "--namespace", ns,
                            "--config", os.path.join(self.w.dir, "config.yaml"), "--native-sidecars", "on",
                            "-o", "json"], capture_output=True, text=True, timeout=60)
        if r.returncode != 0:
            raise RuntimeError("inject: %s" % r.stderr)
        p1 = json.loads(r.stdout)
        p1["metadata"]["namespace"] = PLAIN
        if "generateName" in manifest["metadata"]:
            p1["metadata"].pop("name", None)
        r2 = self.kubectl("create", "--dry-run=server", "-o", "json", "-f", "-", obj=p1)
        if r2.returncode != 0:
            raise RuntimeError("dry-run of inject's pod: %s" % r2.stderr)
        exp = json.loads(r2.stdout)
        # kubectl create rewrites a last-applied annotation it finds (client
        # side): inject's own is the one to compare.
        if LAST_APPLIED in p1["metadata"].get("annotations", {}):
            exp["metadata"]["annotations"][LAST_APPLIED] = p1["metadata"]["annotations"][LAST_APPLIED]
        return exp, r.stderr

    def injected(self, label, manifest, ns, want_init=None, want_containers=None, extra=()):
        """Applies manifest in ns; the stored pod must equal inject's."""
        exp, self.inject_stderr = self.expected(manifest, ns, extra)
        r = self.last = self.apply(manifest, ns)
        name = manifest["metadata"]["name"]
        self.check("%s: kubectl apply creates the pod" % label, (r.returncode, r.stdout) == (
            0, "pod/%s created\n" % name), r.stdout + r.stderr)
        got = self.c.get_json("pod", name, "-n", ns) or {}
        self.check("%s: the stored pod equals inject's output" % label, injected_view(got) == injected_view(exp),
                   diff(injected_view(got), injected_view(exp)))
        spec = got.get("spec", {})
        if want_init is not None:
            self.check("%s: the injected init containers" % label,
                       [c["name"] for c in spec.get("initContainers", [])] == want_init,
                       [c["name"] for c in spec.get("initContainers", [])])
        if want_containers is not None:
            self.check("%s: the containers" % label, [c["name"] for c in spec.get("containers", [])] == want_containers,
                       [c["name"] for c in spec.get("containers", [])])
        return got


def run(cluster, check, version):
    w = Webhook(cluster, BIN)
    try:
        if not w.deploy(check):
            return
        s = Suite(cluster, check, w)
        s.namespace(PLAIN, labels={"otel-webhook/skip": "true"})
        pods(s, check)
        workloads(s, check)
        controllers(s, check)
        exporter_tls(s, check)
        untouched(s, check)
        dry_run(s, check)
        reinvocation(s, check)
        custom_resources(s, check)
        metrics(s, check)
        rbac(s, check)
    finally:
        w.stop(check)


def pods(s, check):
    ns = "e2e-inject"
    s.namespace(ns)
    r = s.apply(INSTRUMENTATION, ns)
    check("the Instrumentation applied", (r.returncode, r.stdout) == (0, "instrumentation.opentelemetry.io/all created\n"),
          r.stdout + r.stderr)
    r = s.apply(SIDECAR, ns)
    check("the sidecar collector applied", (r.returncode, r.stdout) == (
        0, "opentelemetrycollector.opentelemetry.io/sidecar created\n"), r.stdout + r.stderr)
    for lang in ("java", "nodejs", "python", "dotnet", "sdk"):
        s.injected("%s pod" % lang, pod(lang, {"instrumentation.opentelemetry.io/inject-%s" % lang: "true"}), ns,
                   want_init=[] if lang == "sdk" else ["opentelemetry-auto-instrumentation-%s" % lang])
    # deploy/'s settings leave Go off (its eBPF sidecar is privileged;
    # docs/annotations.md): the pod stored as inject leaves it, with the warning.
    s.injected("go pod under deploy/'s settings", pod("go", {
        "instrumentation.opentelemetry.io/inject-go": "true",
        "instrumentation.opentelemetry.io/otel-go-auto-target-exe": "/app/server"}), ns,
        want_init=[], want_containers=["app"])
    check("go pod under deploy/'s settings: kubectl prints the webhook's warning", s.last.stderr ==
          "Warning: otel-webhook: support for Go auto instrumentation is not enabled\n", s.last.stderr)
    # Native sidecars on this release: the collector is an init container
    # that restarts always.
    got = s.injected("sidecar pod", pod("sidecar", {"sidecar.opentelemetry.io/inject": "true"}), ns,
                     want_init=["otc-container"], want_containers=["app"])
    init = got.get("spec", {}).get("initContainers", [{}])
    check("sidecar pod: otc-container is a native sidecar (restartPolicy Always)",
          init[0].get("restartPolicy") == "Always", init)
    s.injected("java and sidecar in one pod", pod("both", {"instrumentation.opentelemetry.io/inject-java": "true",
                                                           "sidecar.opentelemetry.io/inject": "true"}), ns,
               want_init=["otc-container", "opentelemetry-auto-instrumentation-java"], want_containers=["app"])
    s.injected("two languages, container lists", pod("multi", {
        "instrumentation.opentelemetry.io/inject-java": "true",
        "instrumentation.opentelemetry.io/java-container-names": "api",
        "instrumentation.opentelemetry.io/inject-python": "true",
        "instrumentation.opentelemetry.io/python-container-names": "worker"}, containers=("api", "worker", "proxy")),
               ns, want_init=["opentelemetry-auto-instrumentation-java", "opentelemetry-auto-instrumentation-python"],
               want_containers=["api", "worker", "proxy"])
    s.injected("the Instrumentation named by the annotation", pod("named", {
        "instrumentation.opentelemetry.io/inject-nodejs": "%s/all" % ns}), ns,
        want_init=["opentelemetry-auto-instrumentation-nodejs"])


def workloads(s, check):
    # Namespace-level opt-in: the Namespace's annotation, a pod asking nothing.
    ns = "e2e-ns-opt-in"
    s.namespace(ns, annotations={"instrumentation.opentelemetry.io/inject-python": "true"})
    r = s.apply(INSTRUMENTATION, ns)
    check("%s: the Instrumentation applied" % ns, r.returncode == 0, r.stderr)
    # The webhook learns of the annotation and the Instrumentation by its
    # watches: wait until a dry run shows both are seen.
    probe = pod("probe")
    seen, waited = wait_for(lambda: "initContainers" in json.loads(
        s.apply(probe, ns, "--dry-run=server", "-o", "json").stdout or "{}").get("spec", {}), SETTLE)
    check("namespace opt-in: the webhook's watches see the namespace and its Instrumentation", seen,
          "after %.1f s" % waited)
    s.injected("namespace opt-in: a bare pod", pod("bare"), ns, want_init=["opentelemetry-auto-instrumentation-python"])
    s.injected("namespace opt-in: the pod's own \"false\" wins", pod("optout", {
        "instrumentation.opentelemetry.io/inject-python": "false"}), ns, want_init=[])

    # A Deployment: the ReplicaSet controller creates the pods, the webhook
    # walks their owner (GET replicasets with deploy/'s RBAC) for the names.
    # (In its own namespace: with the namespace's python beside the pod's
    # java, the operator asks for container names and injects nothing.)
    ns = "e2e-deploy"
    s.namespace(ns)
    r = s.apply(INSTRUMENTATION, ns)
    check("%s: the Instrumentation applied" % ns, r.returncode == 0, r.stderr)
    seen, waited = wait_for(lambda: "initContainers" in json.loads(s.apply(
        pod("probe", {"instrumentation.opentelemetry.io/inject-java": "true"}), ns, "--dry-run=server",
        "-o", "json").stdout or "{}").get("spec", {}), SETTLE)
    check("%s: the webhook's watch sees the Instrumentation" % ns, seen, "after %.1f s" % waited)
    dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
           "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"},
                                              "annotations": {"instrumentation.opentelemetry.io/inject-java": "true"}},
                                 "spec": {"containers": [{"name": "web", "image": "registry.example/web:2.1"}]}}}}
    r = s.apply(dep, ns)
    check("Deployment applied", (r.returncode, r.stdout) == (0, "deployment.apps/web created\n"), r.stdout + r.stderr)
    rs, waited = wait_for(lambda: (s.c.get_json("replicasets", "-n", ns, "-l", "app=web") or {}).get("items"), SETTLE)
    pods_, waited = wait_for(lambda: (lambda items: items if len(items) == 2 else None)(
        (s.c.get_json("pods", "-n", ns, "-l", "app=web") or {}).get("items", [])), SETTLE)
    check("the ReplicaSet controller creates two pods", bool(rs) and bool(pods_), "after %.1f s" % waited)
    if rs and pods_:
        r0 = rs[0]
        tmpl = json.loads(json.dumps(r0["spec"]["template"]))
        manifest = {"apiVersion": "v1", "kind": "Pod",
                    "metadata": dict(tmpl["metadata"], generateName=r0["metadata"]["name"] + "-", ownerReferences=[
                        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": r0["metadata"]["name"],
                         "uid": r0["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]),
                    "spec": tmpl["spec"]}
        exp, _ = s.expected(manifest, ns)
        for p in pods_:
            check("Deployment pod %s equals inject's output for the ReplicaSet's pod" % p["metadata"]["name"],
                  injected_view(p) == injected_view(exp), diff(injected_view(p), injected_view(exp)))
        env = {e["name"]: e.get("value") for e in pods_[0]["spec"]["containers"][0].get("env", [])}
        check("Deployment pod: service name and resource attributes name the Deployment and ReplicaSet",
              env.get("OTEL_SERVICE_NAME") == "web" and "k8s.deployment.name=web" in env.get(
                  "OTEL_RESOURCE_ATTRIBUTES", "") and "k8s.replicaset.name=%s" % r0["metadata"]["name"] in env.get(
                  "OTEL_RESOURCE_ATTRIBUTES", ""), env)


def owned_pod(template, owner, **meta):
    """The pod a controller creates from template for owner."""
    t = json.loads(json.dumps(template))
    m = dict(t.get("metadata", {}), ownerReferences=[{
        "apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}], **meta)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": t["spec"]}


def controllers(s, check):
    """Pods created by the Job controller (a CronJob's Job) and the
    StatefulSet controller: the owner walk (GET jobs) names them."""
    ns = "e2e-deploy"
    tmpl = {"metadata": {"annotations": {"instrumentation.opentelemetry.io/inject-nodejs": "true"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "task", "image": "registry.example/task:3"}]}}
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 1 1 *", "jobTemplate": {"spec": {"template": tmpl}}}}
    r = s.apply(cron, ns)
    r2 = s.kubectl("create", "job", "nightly-manual", "--from=cronjob/nightly", "-n", ns)
    check("a CronJob applied and a Job created from it", (r.returncode, r2.returncode, r2.stdout) == (
        0, 0, "job.batch/nightly-manual created\n"), r.stderr + r2.stderr)
    job = s.c.get_json("job", "nightly-manual", "-n", ns)
    got, waited = wait_for(lambda: (s.c.get_json("pods", "-n", ns, "-l", "job-name=nightly-manual") or {}).get(
        "items"), SETTLE)
    check("the Job controller creates its pod", bool(got and job), "after %.1f s" % waited)
    if got and job:
        exp, _ = s.expected(owned_pod(job["spec"]["template"], job, generateName="nightly-manual-"), ns,
                            extra=[job, s.c.get_json("cronjob", "nightly", "-n", ns)])
        check("the Job's pod equals inject's output for it (with the Job and CronJob as resources)",
              injected_view(got[0]) == injected_view(exp), diff(injected_view(got[0]), injected_view(exp)))
        env = {e["name"]: e.get("value") for e in got[0]["spec"]["containers"][0].get("env", [])}
        attrs = env.get("OTEL_RESOURCE_ATTRIBUTES", "")
        check("the Job's pod: the CronJob is the service, the Job and CronJob in its attributes",
              env.get("OTEL_SERVICE_NAME") == "nightly" and "k8s.job.name=nightly-manual" in attrs
              and "k8s.cronjob.name=nightly" in attrs, env)

    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 1, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": {"metadata": {"labels": {"app": "db"},
                                              "annotations": {"instrumentation.opentelemetry.io/inject-dotnet":
                                                              "true"}},
                                 "spec": {"containers": [{"name": "db", "image": "registry.example/db:9"}]}}}}
    r = s.apply(sts, ns)
    check("a StatefulSet applied", (r.returncode, r.stdout) == (0, "statefulset.apps/db created\n"), r.stderr)
    got, waited = wait_for(lambda: s.c.get_json("pod", "db-0", "-n", ns), SETTLE)
    st = s.c.get_json("statefulset", "db", "-n", ns)
    check("the StatefulSet controller creates db-0", bool(got and st), "after %.1f s" % waited)
    if got and st:
        manifest = owned_pod(st["spec"]["template"], st, name="db-0")
        # What the controller adds to its template: the identity labels
        # (copied from the stored pod: we never change labels) and DNS names.
        manifest["metadata"]["labels"] = got["metadata"]["labels"]
        manifest["spec"].update(hostname="db-0", subdomain="db")
        exp, _ = s.expected(manifest, ns, extra=[st])
        check("db-0 equals inject's output for it", injected_view(got) == injected_view(exp),
              diff(injected_view(got), injected_view(exp)))
        env = {e["name"]: e.get("value") for e in got["spec"]["containers"][0].get("env", [])}
        check("db-0: the StatefulSet is the service and in the attributes", env.get("OTEL_SERVICE_NAME") == "db"
              and "k8s.statefulset.name=db" in env.get("OTEL_RESOURCE_ATTRIBUTES", ""), env)


def exporter_tls(s, check):
    """An Instrumentation whose exporter names a TLS Secret and ConfigMap:
    the webhook GETs both (deploy/'s get on secrets and configmaps)."""
    ns = "e2e-tls"
    s.namespace(ns)
    inst = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation", "metadata": {"name": "tls"},
            "spec": {"exporter": {"endpoint": "https://otel-collector:4317", "tls": {
                "secretName": "otel-client", "configMapName": "otel-ca", "ca_file": "ca.crt", "cert_file": "tls.crt",
                "key_file": "tls.key"}}, "sampler": {"type": "always_on"}}}
    r = s.apply(inst, ns)
    check("an Instrumentation with exporter TLS applied, no warning", (r.returncode, r.stderr) == (0, ""), r.stderr)
    # The webhook's watch has it once a dry run is warned about the Secret.
    wait_for(lambda: "otel-client" in s.apply(pod("probe", {"instrumentation.opentelemetry.io/inject-java": "true"}),
                                              ns, "--dry-run=server").stderr, SETTLE)
    # Neither exists yet: the language is skipped, kubectl shows why.
    p = pod("notls", {"instrumentation.opentelemetry.io/inject-java": "true"})
    exp = s.as_received(p, ns)
    r = s.apply(p, ns)
    got = s.c.get_json("pod", "notls", "-n", ns) or {}
    check("exporter TLS Secret missing: the pod stored untouched", injected_view(got) == injected_view(exp),
          diff(injected_view(got), injected_view(exp)))
    check("exporter TLS Secret missing: kubectl prints the webhook's warning", (r.returncode, r.stderr) == (
        0, "Warning: otel-webhook: inject-java: secret %s/otel-client with the exporter's certificates does not exist; "
           "Java not injected\n" % ns), r.stderr)
    r = s.kubectl("create", "secret", "generic", "otel-client", "-n", ns, "--from-literal=tls.crt=x",
                  "--from-literal=tls.key=y")
    r2 = s.kubectl("create", "configmap", "otel-ca", "-n", ns, "--from-literal=ca.crt=z")
    check("the Secret and ConfigMap created", (r.returncode, r2.returncode) == (0, 0), r.stderr + r2.stderr)
    # The webhook's not-found cache lasts 3 s (docs/cluster.md): wait until it sees them.
    wait_for(lambda: "warning" not in s.apply(pod("probe", {"instrumentation.opentelemetry.io/inject-java": "true"}),
                                              ns, "--dry-run=server").stderr.lower(), SETTLE)
    s.injected("exporter TLS: Secret and ConfigMap present", pod("tls", {
        "instrumentation.opentelemetry.io/inject-java": "true"}), ns,
        want_init=["opentelemetry-auto-instrumentation-java"],
        extra=[s.c.get_json("secret", "otel-client", "-n", ns), s.c.get_json("configmap", "otel-ca", "-n", ns)])
    check("exporter TLS: no warning", s.last.stderr == "", s.last.stderr)


def untouched(s, check):
    ns = "e2e-inject"
    p = pod("nothing")
    exp = s.as_received(p, ns)
    r = s.apply(p, ns)
    got = s.c.get_json("pod", "nothing", "-n", ns) or {}
    check("a pod asking for nothing: stored as admitted without us, no warning",
          (r.returncode, r.stderr, injected_view(got)) == (0, "", injected_view(exp)),
          r.stderr + diff(injected_view(got), injected_view(exp)))
    ns = "e2e-no-instrumentation"
    s.namespace(ns)
    p = pod("lonely", {"instrumentation.opentelemetry.io/inject-java": "true"})
    exp = s.as_received(p, ns)
    r = s.apply(p, ns)
    got = s.c.get_json("pod", "lonely", "-n", ns) or {}
    check("java asked for, no Instrumentation: stored untouched", injected_view(got) == injected_view(exp),
          diff(injected_view(got), injected_view(exp)))
    check("java asked for, no Instrumentation: kubectl prints the webhook's warning",
          (r.returncode, r.stdout, r.stderr) == (0, "pod/lonely created\n", "Warning: otel-webhook: inject-java: no "
                                                 "Instrumentation in namespace %s; Java not injected\n" % ns),
          "%d %r %r" % (r.returncode, r.stdout, r.stderr))


def dry_run(s, check):
    ns = "e2e-inject"
    p = pod("dry", {"instrumentation.opentelemetry.io/inject-java": "true"})
    exp, _ = s.expected(p, ns)
    r = s.apply(p, ns, "--dry-run=server", "-o", "json")
    got = json.loads(r.stdout) if r.returncode == 0 else {}
    check("--dry-run=server: the answer is the injected pod", injected_view(got) == injected_view(exp),
          diff(injected_view(got), injected_view(exp)))
    r = s.kubectl("get", "pod", "dry", "-n", ns)
    check("--dry-run=server: nothing stored", (r.returncode, r.stderr) == (
        1, 'Error from server (NotFound): pods "dry" not found\n'), r.stdout + r.stderr)


class Adder:
    """A mutating webhook of the test's own, after ours (configurations are
    called in name order): adds a container "late" to pods labelled
    e2e/add-container, once. Serves with the run's webhook certificate."""

    def __init__(self, certdir):
        self.calls = 0
        adder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                req = review["request"]
                adder.calls += 1
                resp = {"uid": req["uid"], "allowed": True}
                if all(c["name"] != "late" for c in req["object"]["spec"]["containers"]):
                    patch = [{"op": "add", "path": "/spec/containers/-",
                              "value": {"name": "late", "image": "registry.example/late:1.0"}}]
                    resp.update(patchType="JSONPatch", patch=base64.b64encode(json.dumps(patch).encode()).decode())
                body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                                   "response": resp}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(os.path.join(certdir, "tls.crt"), os.path.join(certdir, "tls.key"))
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def reinvocation(s, check):
    """deploy/'s pod webhook has reinvocationPolicy IfNeeded: a webhook
    changing the pod after ours calls ours again, which must not inject
    twice."""
    ns = "e2e-inject"
    adder = Adder(os.path.join(s.w.dir, "certs"))
    with open(s.w.ca, "rb") as f:
        bundle = base64.b64encode(f.read()).decode()
    cfg = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
           "metadata": {"name": "zz-e2e-adder"},
           "webhooks": [{"name": "adder.e2e.example", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                         "failurePolicy": "Fail", "timeoutSeconds": 5, "reinvocationPolicy": "Never",
                         "clientConfig": {"url": "https://127.0.0.1:%d/add" % adder.port, "caBundle": bundle},
                         "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"],
                                    "operations": ["CREATE"]}],
                         "objectSelector": {"matchLabels": {"e2e/add-container": "true"}}}]}
    try:
        r = s.kubectl("apply", "--server-side", "--field-manager", "e2e", "-f", "-", obj=cfg)
        check("a second mutating webhook of the test's own registered", r.returncode == 0, r.stderr)
        p = pod("reinvoked", {"instrumentation.opentelemetry.io/inject-java": "true"},
                labels={"e2e/add-container": "true"})
        # Registration reaches the API server's webhook cache asynchronously.
        ok, waited = wait_for(lambda: "late" in s.apply(p, ns, "--dry-run=server", "-o", "json").stdout, SETTLE)
        check("the second webhook is called", ok, "after %.1f s" % waited)
        before, calls = scrape(s), adder.calls
        r = s.apply(p, ns)
        after, calls = scrape(s), adder.calls - calls
        got = s.c.get_json("pod", "reinvoked", "-n", ns) or {"spec": {"containers": []}}
        cs = {c["name"]: c for c in got["spec"]["containers"]}
        check("reinvoked: the pod stored with both containers, one java init container",
              (list(cs), [c["name"] for c in got["spec"].get("initContainers", [])]) ==
              (["app", "late"], ["opentelemetry-auto-instrumentation-java"]), json.dumps(got["spec"])[:1500])
        # Reinvoked (IfNeeded), ours answers from its record with no patch:
        # the late container is stored as the other webhook added it (plus
        # the ServiceAccount plugin's token mount), as the operator, which
        # skips an instrumented pod, would leave it.
        check("reinvoked: the container added after us is left as added",
              cs.get("late", {}).get("env") is None and [m["mountPath"] for m in cs.get("late", {}).get(
                  "volumeMounts", [])] == ["/var/run/secrets/kubernetes.io/serviceaccount"], cs.get("late"))
        delta = [metric(after, "otel_webhook_requests_total", result=x) - metric(before, "otel_webhook_requests_total",
                                                                                 result=x) for x in ("mutated", "unchanged")]
        skips = metric(after, "otel_webhook_skips_total", reason="already_instrumented") - metric(
            before, "otel_webhook_skips_total", reason="already_instrumented")
        check("reinvoked: ours injected once, was called again (IfNeeded) and found the pod already instrumented",
              (calls, delta, skips) == (1, [1, 1], 1), "adder %d, ours %r, skips %r" % (calls, delta, skips))
    finally:
        s.kubectl("delete", "mutatingwebhookconfiguration", "zz-e2e-adder")
        adder.stop()


COLLECTOR_V1ALPHA1 = {
    "apiVersion": "opentelemetry.io/v1alpha1", "kind": "OpenTelemetryCollector", "metadata": {"name": "old"},
    "spec": {"mode": "deployment", "config": "receivers:\n  otlp:\n    protocols:\n      grpc: {}\nexporters:\n"
             "  debug: {}\nservice:\n  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [debug]\n"}}
# What the API server stores for it: converted by /convert, defaulted by the
# collector's mutating webhook (the operator's defaults: upstream
# apis/v1beta1/collector_webhook.go, v0.158.0).
STORED_V1BETA1 = {
    "config": {"exporters": {"debug": {}}, "receivers": {"otlp": {"protocols": {"grpc": {"endpoint": "0.0.0.0:4317"}}}},
               "service": {"pipelines": {"traces": {"exporters": ["debug"], "receivers": ["otlp"]}},
                           "telemetry": {"metrics": {"readers": [{"pull": {"exporter": {"prometheus": {
                               "host": "0.0.0.0", "port": 8888}}}}]}}}},
    "configVersions": 3, "ipFamilyPolicy": "SingleStack", "managementState": "managed", "mode": "deployment",
    "networkPolicy": {"enabled": True}, "replicas": 1, "upgradeStrategy": "automatic"}
READ_V1ALPHA1 = {
    "config": "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: 0.0.0.0:4317\nexporters:\n"
              "  debug: {}\nservice:\n  telemetry:\n    metrics:\n      readers:\n        - pull:\n"
              "            exporter:\n              prometheus:\n                host: 0.0.0.0\n"
              "                port: 8888\n  pipelines:\n    traces:\n      exporters:\n        - debug\n"
              "      receivers:\n        - otlp\n",
    "managementState": "managed", "mode": "deployment", "replicas": 1, "upgradeStrategy": "automatic"}


def collector(name, spec):
    base = {"receivers": {"otlp": {"protocols": {"grpc": {}}}}, "exporters": {"debug": {}},
            "service": {"pipelines": {"traces": {"receivers": ["otlp"], "exporters": ["debug"]}}}}
    return {"apiVersion": "opentelemetry.io/v1beta1", "kind": "OpenTelemetryCollector", "metadata": {"name": name},
            "spec": dict({"config": base}, **spec)}


def custom_resources(s, check):
    ns = "e2e-cr"
    s.namespace(ns)
    r = s.apply(collector("toomany", {"mode": "deployment", "replicas": 5, "autoscaler": {"maxReplicas": 3}}), ns)
    check("a collector with replicas above maxReplicas: refused with the operator's message",
          (r.returncode, r.stdout, r.stderr) == (
              1, "", 'Error from server (Forbidden): error when creating "STDIN": admission webhook '
                     '"vopentelemetrycollectorcreateupdatebeta.kb.io" denied the request: the OpenTelemetry Spec '
                     'autoscale configuration is incorrect, replicas must not be greater than maxReplicas\n'),
          "%d %r %r" % (r.returncode, r.stdout, r.stderr))
    r = s.apply(collector("tadeploy", {"mode": "daemonset", "targetAllocator": {"enabled": True}}), ns)
    check("a daemonset collector with a Target Allocator: refused with the operator's message",
          (r.returncode, r.stderr) == (
              1, 'Error from server (Forbidden): error when creating "STDIN": admission webhook '
                 '"vopentelemetrycollectorcreateupdatebeta.kb.io" denied the request: ' + M +
                 'daemonset, which must be used with target allocation strategy per-node \n'),
          "%d %r" % (r.returncode, r.stderr))
    check("refused collectors are not stored", s.c.get_json("opentelemetrycollectors", "-n", ns) is not None and
          s.c.get_json("opentelemetrycollectors", "-n", ns)["items"] == [], "")
    bad = {"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation", "metadata": {"name": "bad"},
           "spec": {"sampler": {"type": "traceidratio", "argument": "1.5"}}}
    r = s.apply(bad, ns)
    check("an Instrumentation with a sampler argument of 1.5: refused with the operator's message",
          (r.returncode, r.stderr) == (
              1, 'Error from server (Forbidden): error when creating "STDIN": admission webhook '
                 '"vinstrumentationcreateupdate.kb.io" denied the request: spec.sampler.argument should be in rage '
                 '[0..1]: 1.5\n'), "%d %r" % (r.returncode, r.stderr))
    # Defaulting visible in the stored object.
    r = s.apply({"apiVersion": "opentelemetry.io/v1alpha1", "kind": "Instrumentation", "metadata": {"name": "dflt"},
                 "spec": {"exporter": {"endpoint": "http://c:4318"}}}, ns)
    got = s.c.get_json("instrumentation", "dflt", "-n", ns) or {"spec": {}, "metadata": {}}
    check("an Instrumentation applied: the sampler-not-set warning, defaults stored",
          r.returncode == 0 and r.stderr == "Warning: sampler type not set\n"
          and got["spec"].get("java", {}).get("image") ==
          "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0"
          and got["metadata"]["annotations"].get("instrumentation.opentelemetry.io/default-auto-instrumentation-"
                                                 "java-image") ==
          "ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:2.30.0",
          "%r %r" % (r.stderr, got["spec"].get("java")))

    # The privilege-escalation check: SubjectAccessReviews the webhook sends
    # with deploy/'s RBAC, answered by the real authorizer. jane may write
    # collectors in e2e-cr and nothing else.
    r = s.kubectl("create", "serviceaccount", "jane", "-n", ns)
    r2 = s.kubectl("create", "role", "collector-writer", "-n", ns, "--verb=get,list,create,patch",
                   "--resource=opentelemetrycollectors.opentelemetry.io")
    r3 = s.kubectl("create", "rolebinding", "jane", "-n", ns, "--role=collector-writer",
                   "--serviceaccount=%s:jane" % ns)
    tok = s.kubectl("create", "token", "jane", "-n", ns)
    check("jane: a ServiceAccount allowed to write collectors in %s" % ns,
          [x.returncode for x in (r, r2, r3, tok)] == [0, 0, 0, 0], r.stderr + r2.stderr + r3.stderr + tok.stderr)
    jane = s.c.kubeconfig_for_token("jane", tok.stdout.strip())
    events = collector("events", {"mode": "deployment"})
    events["spec"]["config"]["receivers"] = {"k8s_events": {}}
    events["spec"]["config"]["service"]["pipelines"]["traces"]["receivers"] = ["k8s_events"]
    r = s.c.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(events), kubeconfig=jane)
    who = "system:serviceaccount:%s:jane" % ns
    check("jane's collector whose config needs events: refused, the rules she lacks named",
          (r.returncode, r.stdout, r.stderr) == (
              1, "", 'Error from server (Forbidden): error when creating "STDIN": admission webhook '
                     '"vopentelemetrycollectorcreateupdatebeta.kb.io" denied the request: user "%s" is not allowed '
                     'to create a collector whose config would grant permissions they do not hold: missing the '
                     'following rules for %s - events: [get,list,watch]\n' % (who, who)),
          "%d %r %r" % (r.returncode, r.stdout, r.stderr))
    r = s.apply(events, ns)
    check("the same collector by cluster-admin: allowed and stored", (r.returncode, r.stdout) == (
        0, "opentelemetrycollector.opentelemetry.io/events created\n"), r.stdout + r.stderr)

    # Conversion through /convert, on the write and on each read.
    r = s.apply(COLLECTOR_V1ALPHA1, ns)
    check("a v1alpha1 collector applied (with the deprecation warning)", (r.returncode, r.stdout, r.stderr) == (
        0, "opentelemetrycollector.opentelemetry.io/old created\n",
        "Warning: OpenTelemetryCollector v1alpha1 is deprecated. Migrate to v1beta1.\n"),
        "%d %r %r" % (r.returncode, r.stdout, r.stderr))
    b = s.c.get_json("opentelemetrycollectors.v1beta1.opentelemetry.io", "old", "-n", ns) or {}
    check("read back as v1beta1: converted and defaulted", (b.get("apiVersion"), b.get("spec")) == (
        "opentelemetry.io/v1beta1", STORED_V1BETA1), json.dumps(b.get("spec")))
    a = s.c.get_json("opentelemetrycollectors.v1alpha1.opentelemetry.io", "old", "-n", ns) or {}
    check("read back as v1alpha1: the config a YAML string again", (a.get("apiVersion"), a.get("spec")) == (
        "opentelemetry.io/v1alpha1", READ_V1ALPHA1), json.dumps(a.get("spec")))
    crd = s.c.get_json("crd", "opentelemetrycollectors.opentelemetry.io") or {}
    check("the collector CRD's stored versions: v1beta1 only", crd.get("status", {}).get("storedVersions") ==
          ["v1beta1"], crd.get("status"))
    # The v1alpha1 object written back as read: the round trip changes nothing.
    a2 = json.loads(json.dumps(a))
    for k in ("resourceVersion", "managedFields", "creationTimestamp", "uid", "generation"):
        a2.get("metadata", {}).pop(k, None)
    a2.pop("status", None)
    r = s.kubectl("apply", "--server-side", "--field-manager", "e2e", "-n", ns, "-f", "-", obj=a2)
    b2 = s.c.get_json("opentelemetrycollectors.v1beta1.opentelemetry.io", "old", "-n", ns) or {}
    check("the v1alpha1 read applied back: the stored v1beta1 unchanged (same generation)",
          r.returncode == 0 and b2.get("spec") == STORED_V1BETA1 and b2.get("metadata", {}).get("generation") ==
          b.get("metadata", {}).get("generation"), r.stderr + json.dumps(b2.get("spec")))


def metric(text, name, **labels):
    want = "{" + ",".join('%s="%s"' % kv for kv in sorted(labels.items())) + "}" if labels else ""
    total = 0
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            series, value = line.rsplit(" ", 1)
            got = series[len(name):]
            if not labels or all('%s="%s"' % kv in got for kv in labels.items()):
                total += float(value)
    return total


def scrape(s):
    status, text = s.w.get("/metrics")
    return text if status == 200 else ""


def metrics(s, check):
    """Only a cross-check of what the API server sent: deltas around one
    pod and one read."""
    ns = "e2e-inject"
    series = (("otel_webhook_requests_total", {"result": "mutated"}),
              ("otel_webhook_requests_total", {"result": "unchanged"}),
              ("otel_webhook_injections_total", {"what": "java"}),
              ("otel_webhook_skips_total", {"reason": "already_instrumented"}))
    before = scrape(s)
    got = s.injected("metrics: one java pod", pod("counted", {"instrumentation.opentelemetry.io/inject-java": "true"}),
                     ns, want_init=["opentelemetry-auto-instrumentation-java"])
    after = scrape(s)
    delta = [metric(after, n, **l) - metric(before, n, **l) for n, l in series]
    # One call injects; the ServiceAccount plugin, reinvoked after our
    # patch, mounts its token into the new init container, so the API
    # server calls us once more (reinvocationPolicy IfNeeded) and that call
    # finds the pod already instrumented.
    check("metrics: the API server sent the pod twice, injected once, then already instrumented",
          delta == [1, 1, 1, 1], "%r (stored: %s)" % (delta, got.get("metadata", {}).get("name")))
    before = scrape(s)
    s.c.get_json("opentelemetrycollectors.v1alpha1.opentelemetry.io", "old", "-n", "e2e-cr")
    after = scrape(s)
    n, l = "otel_webhook_converted_objects_total", {"direction": "to_v1alpha1"}
    check("metrics: one v1alpha1 read, one object converted to v1alpha1",
          metric(after, n, **l) - metric(before, n, **l) == 1, [x for x in after.splitlines() if n in x])
    check("metrics: the three watches are synced", metric(after, "otel_webhook_watch_synced") == 3,
          [x for x in after.splitlines() if "watch_synced" in x])


def rbac(s, check):
    """deploy/'s RBAC as the API server judged the webhook's requests (its
    audit log): none forbidden, each within the ClusterRole, and every rule
    of it used (a rule nothing uses is named)."""
    user = "system:serviceaccount:otel-webhook-system:otel-webhook"
    events = s.c.audit_events(user)
    denied = sorted({(e["verb"], e.get("requestURI", "")) for e in events
                     if e.get("responseStatus", {}).get("code") == 403})
    check("RBAC: the webhook's identity sent requests, none forbidden", bool(events) and not denied,
          "%d events, forbidden: %r" % (len(events), denied))
    used = {(e["objectRef"].get("apiGroup", ""), e["objectRef"]["resource"], e["verb"]) for e in events
            if e.get("objectRef", {}).get("resource")}
    role = [o for o in s.w.objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == "otel-webhook"][0]
    granted = {(g, r, v) for rule in role["rules"] for g in rule.get("apiGroups", []) for r in rule["resources"]
               for v in rule["verbs"]}
    check("RBAC: every resource request of the webhook is one deploy/'s ClusterRole grants", used and used <= granted,
          sorted(used - granted))
    want = {("", "namespaces", "list"), ("", "namespaces", "watch"),
            ("opentelemetry.io", "instrumentations", "list"), ("opentelemetry.io", "instrumentations", "watch"),
            ("opentelemetry.io", "opentelemetrycollectors", "list"),
            ("opentelemetry.io", "opentelemetrycollectors", "watch"), ("apps", "replicasets", "get"),
            ("authorization.k8s.io", "subjectaccessreviews", "create")}
    check("RBAC: the watches, the ReplicaSet owner walk and the collectors' SubjectAccessReviews were sent",
          want <= used, sorted(want - used))
    unused = ", ".join("%s %s%s" % (v, r, "." + g if g else "") for g, r, v in sorted(granted - used))
    check("RBAC: every rule of deploy/'s ClusterRole was used by these scenarios", not unused,
          "granted to otel-webhook, never used: " + unused)
