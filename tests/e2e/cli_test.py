"""tests/e2e/cli_test.py - the operations commands (`uninject`, `explain`,
`outdated`) against the real API server, with deploy/ applied and the
webhook serving as in tests/e2e/webhook_test.py (deploylib.Webhook), on
the repository's examples/.

Contract (issue 26 step 4), each an exact assertion on what the API server
stored or answered, or on a command's exact output and exit status:
- examples/: resources/*.yaml and deployment-java.yaml applied into NS (they
  name no namespace), targetallocator.yaml into the namespace it names;
  review-java.json is an AdmissionReview, a message and not an object, and
  is left out. The Deployment's pod, made by kube-controller-manager's
  Deployment and ReplicaSet controllers, equals `otel-webhook inject` of the
  ReplicaSet's pod (webhook_test.Suite.expected: the same admission chain in
  the namespace the webhook skips).
- `uninject -f` of a pod as `kubectl get -o yaml` prints it gives back the
  pod as admitted without the webhook (annotations, labels, spec).
- `explain --kubeconfig` (a token of the otel-webhook-outdated
  ServiceAccount of deploy/overlays/outdated, whose list rules cover what
  explain reads): docs/cli.md's format, with the generation and
  resourceVersion the API server holds; the audit log shows its three lists.
- `outdated --kubeconfig` with that identity: nothing outdated, then after
  the Instrumentation's java env changes, the Deployment and the bare pod
  named as docs/cli.md says (and `explain` calls the pod stale); `--restart` writes nothing (audit log);
  `--restart --yes` patches the Deployment's restartedAt (its one write), so
  the controllers make a new ReplicaSet whose pod carries the new value;
  then nothing is outdated. There is no kubelet, so no pod ever becomes
  available: the Deployment is switched to Recreate (the old pod is deleted
  first, an unscheduled pod at once) and the wait for the rollout ends with
  --timeout's message and status 1, as docs/cli.md says.
Run by tests/e2e/run.py.
"""
import json
import os
import re
import subprocess

import yaml

from testlib import wait_for
from deploylib import NAMESPACE, Webhook
from webhook_test import BIN, PLAIN, SETTLE, Suite, diff, injected_view, owned_pod, pod

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NS = "e2e-examples"
SA = "otel-webhook-outdated"
USER = "system:serviceaccount:%s:%s" % (NAMESPACE, SA)
INJECT_BOTH = {"instrumentation.opentelemetry.io/inject-java": "true", "sidecar.opentelemetry.io/inject": "true"}
ENGINE = "0.1.0"


class Cli:
    """The commands, run as the otel-webhook-outdated identity, and what
    the API server's audit log shows that identity asked for."""

    def __init__(self, s, check):
        self.s, self.check = s, check
        self.kubeconfig = None

    def identity(self):
        r = self.s.kubectl("apply", "-f", os.path.join(ROOT, "deploy", "overlays", "outdated", "rbac.yaml"))
        ok = self.check("deploy/overlays/outdated/rbac.yaml applied (its base, the cert-manager overlay, needs "
                        "cert-manager)", (r.returncode, r.stdout) == (
                            0, "serviceaccount/%s created\nclusterrole.rbac.authorization.k8s.io/%s created\n"
                               "clusterrolebinding.rbac.authorization.k8s.io/%s created\n" % (SA, SA, SA)),
                        r.stdout + r.stderr)
        tok = self.s.kubectl("create", "token", SA, "-n", NAMESPACE, "--duration", "1h")
        ok = self.check("kubectl create token %s" % SA, ok and tok.returncode == 0, tok.stderr) and ok
        self.kubeconfig = self.s.c.kubeconfig_for_token(SA, tok.stdout.strip())
        return ok

    def run(self, *args, cwd=ROOT):
        """(CompletedProcess, [(verb, resource, name, code)] of its requests)."""
        start = len(self.s.c.audit_events(USER))
        r = subprocess.run([BIN] + list(args) + ["--kubeconfig", self.kubeconfig, "--config",
                                                 os.path.join(self.s.w.dir, "config.yaml")],
                           capture_output=True, text=True, timeout=120, cwd=cwd)
        # A request of the same identity after the command's: once its event
        # is in the log, the command's are (the log is written in order of
        # completion, and the command's requests completed before it exits).
        self.s.c.kubectl("get", "namespaces", kubeconfig=self.kubeconfig)  # a list: within its rules

        def events():
            ev = self.s.c.audit_events(USER)[start:]
            return ev if any(e.get("userAgent", "").startswith("kubectl") for e in ev) else None
        ev, _ = wait_for(events, SETTLE)
        reqs = [(e["verb"], e.get("objectRef", {}).get("resource", ""), e.get("objectRef", {}).get("name", ""),
                 e.get("responseStatus", {}).get("code")) for e in (ev or [])
                if not e.get("userAgent", "").startswith("kubectl")]
        return r, reqs


def run(cluster, check, version):
    w = Webhook(cluster, BIN)
    try:
        if not w.deploy(check):
            return
        s = Suite(cluster, check, w)
        s.namespace(PLAIN, labels={"otel-webhook/skip": "true"})
        cli = Cli(s, check)
        if not cli.identity():
            return
        got = examples(s, check)
        if got is None:
            return
        rs, mine, solo, plain = got
        uninject(s, check, rs, mine, solo)
        explain(s, check, cli, mine, plain)
        outdated(s, check, cli, mine)
    finally:
        w.stop(check)


def replicaset_pod(rs):
    """The pod the ReplicaSet controller creates from rs (its template, its
    owner reference, generateName)."""
    return owned_pod(rs["spec"]["template"], rs, generateName=rs["metadata"]["name"] + "-")


def deployment_pods(s, ns, want_rs):
    """(ReplicaSets, pods) of my-java once there are want_rs ReplicaSets and
    exactly one pod, owned by the newest; (None, None) past SETTLE."""
    def state():
        rs = (s.c.get_json("replicasets", "-n", ns, "-l", "app=my-java") or {}).get("items", [])
        ps = (s.c.get_json("pods", "-n", ns, "-l", "app=my-java") or {}).get("items", [])
        if len(rs) != want_rs or len(ps) != 1:
            return None
        rs.sort(key=lambda r: int(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]))
        owner = ps[0]["metadata"].get("ownerReferences", [{}])[0].get("uid")
        return (rs, ps) if owner == rs[-1]["metadata"]["uid"] else None
    got, waited = wait_for(state, SETTLE)
    return got or (None, None)


def examples(s, check):
    s.namespace(NS)
    r = s.kubectl("apply", "-n", NS, "-f", os.path.join(ROOT, "examples", "resources"))
    check("examples/resources applied into %s: the collector and the Instrumentation" % NS,
          (r.returncode, r.stdout, r.stderr) == (
              0, "opentelemetrycollector.opentelemetry.io/sidecar-for-my-app created\n"
                 "instrumentation.opentelemetry.io/java created\n", ""),
          "%d %r %r" % (r.returncode, r.stdout, r.stderr))
    # The webhook learns of both by its watches.
    seen, waited = wait_for(lambda: [c["name"] for c in json.loads(s.apply(
        pod("probe", INJECT_BOTH), NS, "--dry-run=server", "-o", "json").stdout or "{}").get("spec", {}).get(
        "initContainers", [])] == ["otc-container", "opentelemetry-auto-instrumentation-java"], SETTLE)
    check("the webhook's watches see the example collector and Instrumentation", seen, "after %.1f s" % waited)

    r = s.kubectl("apply", "-n", NS, "-f", os.path.join(ROOT, "examples", "deployment-java.yaml"))
    check("examples/deployment-java.yaml applied", (r.returncode, r.stdout, r.stderr) == (
        0, "deployment.apps/my-java created\n", ""), "%d %r %r" % (r.returncode, r.stdout, r.stderr))
    rs, pods_ = deployment_pods(s, NS, 1)
    if not check("the Deployment and ReplicaSet controllers create my-java's ReplicaSet and its pod", bool(rs), ""):
        return None
    mine = pods_[0]
    # The ReplicaSet as a resource: the webhook GETs it for the Deployment's
    # name and uid (the sidecar's k8s.deployment.uid).
    exp, _ = s.expected(replicaset_pod(rs[0]), NS, extra=[rs[0]])
    check("my-java's pod equals inject's output for the ReplicaSet's pod", injected_view(mine) == injected_view(exp),
          diff(injected_view(mine), injected_view(exp)))
    spec = mine["spec"]
    check("my-java's pod: the collector sidecar and the Java agent's init container, in myapp the example's java env",
          ([c["name"] for c in spec.get("initContainers", [])], [c["name"] for c in spec["containers"]],
           {e["name"]: e.get("value") for e in spec["containers"][0].get("env", [])}.get("OTEL_JAVAAGENT_DEBUG")) ==
          (["otc-container", "opentelemetry-auto-instrumentation-java"], ["myapp"], "true"),
          json.dumps(spec)[:1500])

    # A bare pod asking for the same, and one asking for nothing.
    solo = s.injected("a bare pod asking for java and the sidecar", pod("solo", INJECT_BOTH), NS,
                      want_init=["otc-container", "opentelemetry-auto-instrumentation-java"])
    r = s.apply(pod("plain"), NS)
    check("a pod asking for nothing applied", (r.returncode, r.stderr) == (0, ""), r.stderr)
    plain = s.c.get_json("pod", "plain", "-n", NS)

    # targetallocator.yaml names its namespace; it holds the allocator's
    # RBAC and a collector with a Target Allocator, whose admission checks
    # the allocator's rights with SubjectAccessReviews: all but the
    # operator's "*" on the monitors are granted by then.
    s.namespace("observability")
    who = "system:serviceaccount:observability:scraper-targetallocator"
    r = s.kubectl("apply", "-f", os.path.join(ROOT, "examples", "targetallocator.yaml"))
    check("examples/targetallocator.yaml applied: the RBAC, then the collector with the operator's two warnings",
          (r.returncode, r.stdout, r.stderr) == (
              0, "clusterrole.rbac.authorization.k8s.io/otel-targetallocator created\n"
                 "clusterrolebinding.rbac.authorization.k8s.io/otel-targetallocator-observability-scraper created\n"
                 "opentelemetrycollector.opentelemetry.io/scraper created\n",
              "".join("Warning: missing the following rules for %s - monitoring.coreos.com/%s: [*]\n" % (who, m)
                      for m in ("podmonitors", "servicemonitors"))), "%d %r %r" % (r.returncode, r.stdout, r.stderr))
    ta = s.c.get_json("opentelemetrycollector", "scraper", "-n", "observability") or {}
    check("the Target Allocator collector stored as applied (statefulset, allocator and prometheusCR enabled)",
          (ta.get("spec", {}).get("mode"), ta.get("spec", {}).get("targetAllocator", {}).get("enabled"),
           ta.get("spec", {}).get("targetAllocator", {}).get("prometheusCR", {}).get("enabled")) ==
          ("statefulset", True, True), json.dumps(ta.get("spec"))[:1500])
    # (kubectl auth can-i resolves a resource by discovery: the monitors'
    # CRDs are not installed, so they are not asked about.)
    answers = [s.kubectl("auth", "can-i", verb, res, "--as", who).stdout for verb, res in (
        ("watch", "pods"), ("list", "endpointslices.discovery.k8s.io"), ("get", "secrets"), ("create", "pods"))]
    check("the allocator's ServiceAccount may watch pods, list EndpointSlices, get Secrets, not create pods "
          "(the API server's authorizer)", answers == ["yes\n", "yes\n", "yes\n", "no\n"], answers)
    return rs[0], mine, solo, plain


def uninject(s, check, rs, mine, solo):
    for label, p, manifest in (("my-java's pod", mine, replicaset_pod(rs)), ("the bare pod", solo,
                                                                            pod("solo", INJECT_BOTH))):
        name = p["metadata"]["name"]
        r = s.kubectl("get", "pod", name, "-n", NS, "-o", "yaml")
        path = os.path.join(s.tmp, "%s.yaml" % name)
        with open(path, "w") as f:
            f.write(r.stdout)
        u = subprocess.run([BIN, "uninject", "-f", path], capture_output=True, text=True, timeout=60)
        check("uninject -f %s as kubectl get -o yaml prints it: exit 0, nothing on stderr" % label,
              (r.returncode, u.returncode, u.stderr) == (0, 0, ""), r.stderr + u.stderr)
        got = yaml.safe_load(u.stdout) if u.returncode == 0 else {}
        before = s.as_received(manifest, NS)
        check("uninject of %s: the pod as admitted without the webhook (annotations, labels, spec)" % label,
              injected_view(got) == injected_view(before), diff(injected_view(got), injected_view(before)))


def explain_text(kind, name, where, versions=None, status="not injected yet"):
    if versions is None:
        return ("%s %s/%s (%s)\n  annotations:\n    none asks for an injection\n  injects:\n    nothing\n"
                "  containers:\n    app: nothing instrumented\n  status: %s\n" % (kind, NS, name, where, status))
    gen, rv = versions
    return ("%s %s/%s (%s)\n"
            "  annotations:\n"
            "    sidecar.opentelemetry.io/inject: \"true\" from the pod\n"
            "    instrumentation.opentelemetry.io/inject-java: \"true\" from the pod\n"
            "  injects:\n"
            "    sidecar: OpenTelemetryCollector %s/sidecar-for-my-app (generation %s)\n"
            "    java: Instrumentation %s/java (generation %s)\n"
            "  containers:\n"
            "    myapp: java\n"
            "  status: %s\n" % (kind, NS, name, where, NS, gen, NS, rv, status))


def versions(s):
    col = s.c.get_json("opentelemetrycollector", "sidecar-for-my-app", "-n", NS) or {"metadata": {}}
    inst = s.c.get_json("instrumentation", "java", "-n", NS) or {"metadata": {}}
    return col["metadata"].get("generation"), inst["metadata"].get("generation")


LISTS = [("list", "instrumentations", "", 200), ("list", "opentelemetrycollectors", "", 200),
         ("list", "namespaces", "", 200)]


def explain(s, check, cli, mine, plain):
    v = versions(s)
    name = mine["metadata"]["name"]
    for label, p, want in (
            ("my-java's pod", mine, explain_text("Pod", name, "%s.yaml:1" % name, v,
                                                 "injected by otel-webhook %s, current" % ENGINE)),
            ("a pod asking for nothing", plain, explain_text("Pod", "plain", "plain.yaml:1"))):
        n = p["metadata"]["name"]
        r = s.kubectl("get", "pod", n, "-n", NS, "-o", "yaml")
        with open(os.path.join(s.tmp, "%s.yaml" % n), "w") as f:
            f.write(r.stdout)
        e, reqs = cli.run("explain", "-f", "%s.yaml" % n, cwd=s.tmp)
        check("explain --kubeconfig of %s as stored: docs/cli.md's text, exit 0" % label,
              (e.returncode, e.stdout, e.stderr) == (0, want, ""), "%d %r %r" % (e.returncode, e.stdout, e.stderr))
        check("explain of %s: the API server saw its three lists, each allowed" % label, reqs == LISTS, reqs)
    e, _ = cli.run("explain", "-f", "examples/deployment-java.yaml", "--namespace", NS)
    check("explain --kubeconfig -f examples/deployment-java.yaml -n %s: docs/cli.md's text, exit 0" % NS,
          (e.returncode, e.stdout, e.stderr) == (0, explain_text("Deployment", "my-java", "examples/deployment-java"
                                                                 ".yaml:2", v), ""),
          "%d %r %r" % (e.returncode, e.stdout, e.stderr))


def outdated(s, check, cli, mine):
    reads = LISTS + [("list", "pods", "", 200)]
    o, reqs = cli.run("outdated", "--namespace", NS)
    check("outdated before any change: nothing outdated, both injected pods checked, exit 0",
          (o.returncode, o.stdout, o.stderr) == (0, "no outdated pods (2 injected pods checked)\n", ""),
          "%d %r %r" % (o.returncode, o.stdout, o.stderr))
    check("outdated before any change: its four lists, each allowed", reqs == reads, reqs)

    _, gen0 = versions(s)
    r = s.kubectl("patch", "instrumentation", "java", "-n", NS, "--type", "json", "-p", json.dumps(
        [{"op": "test", "path": "/spec/java/env/0/name", "value": "OTEL_JAVAAGENT_DEBUG"},
         {"op": "replace", "path": "/spec/java/env/0/value", "value": "false"}]))
    check("the Instrumentation's java env changed (OTEL_JAVAAGENT_DEBUG \"false\")", (r.returncode, r.stdout) == (
        0, "instrumentation.opentelemetry.io/java patched\n"), r.stdout + r.stderr)
    _, gen1 = versions(s)
    seen, waited = wait_for(lambda: '"OTEL_JAVAAGENT_DEBUG", "value": "false"' in json.dumps(json.loads(s.apply(
        pod("probe", INJECT_BOTH), NS, "--dry-run=server", "-o", "json").stdout or "{}")), SETTLE)
    check("the webhook's watch sees the changed Instrumentation", seen, "after %.1f s" % waited)

    name = mine["metadata"]["name"]
    gen = versions(s)[0]
    e, _ = cli.run("explain", "-f", "%s.yaml" % name, cwd=s.tmp)
    check("explain --kubeconfig of my-java's pod after the change: stale, the Instrumentation's generations named",
          (e.returncode, e.stdout, e.stderr) == (0, explain_text(
              "Pod", name, "%s.yaml:1" % name, (gen, gen1), "injected by otel-webhook %s, stale:\n    Instrumentation "
              "%s/java (java) changed since the injection (generation %s, now generation %s)" % (ENGINE, NS, gen0, gen1)),
              ""), "%d %r %r" % (e.returncode, e.stdout, e.stderr))
    why = "  Instrumentation %s/java (java) changed since the injection (generation %s, now generation %s)\n" % (
        NS, gen0, gen1)
    listing = ("Deployment %s/my-java: 1 pod (%s)\n%sPod %s/solo: 1 pod (solo)\n%s"
               "2 workloads, 2 pods outdated (2 injected pods checked)\n" % (NS, name, why, NS, why))
    o, reqs = cli.run("outdated", "--namespace", NS)
    check("outdated after the change: the Deployment and the bare pod, the change named, exit 0",
          (o.returncode, o.stdout, o.stderr) == (0, listing, ""), "%d %r %r" % (o.returncode, o.stdout, o.stderr))
    dep = s.c.get_json("deployment", "my-java", "-n", NS) or {"metadata": {}}
    rsname = mine["metadata"]["ownerReferences"][0]["name"]
    proof = [("get", "replicasets", rsname, 200), ("get", "deployments", "my-java", 200)]
    check("outdated: its lists and the owner walk's gets (ReplicaSet, Deployment), each allowed",
          reqs == reads + proof, reqs)

    o, reqs = cli.run("outdated", "--namespace", NS, "--restart")
    check("outdated --restart: the list, the bare pod not restarted, the Deployment a dry run, exit 0",
          (o.returncode, o.stdout, o.stderr) == (0, listing + "would restart Deployment %s/my-java (dry run: --yes to "
                                                 "restart)\nnot restarted: Pod %s/solo: no owning workload; delete "
                                                 "the pod to re-create it\n" % (NS, NS), ""),
          "%d %r %r" % (o.returncode, o.stdout, o.stderr))
    check("outdated --restart without --yes: no write reached the API server", reqs == reads + proof, reqs)
    dep2 = s.c.get_json("deployment", "my-java", "-n", NS) or {"metadata": {}}
    check("outdated --restart without --yes: the Deployment unchanged (same generation)",
          dep2["metadata"].get("generation") == dep["metadata"].get("generation") is not None, "")

    # No kubelet: no new pod ever becomes available, so a rolling update
    # would keep the old one; Recreate deletes it first.
    r = s.kubectl("patch", "deployment", "my-java", "-n", NS, "--type", "merge", "-p",
                  '{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}')
    r2 = s.kubectl("delete", "pod", "solo", "-n", NS)
    check("my-java switched to Recreate; the bare pod deleted (outdated's advice for it)",
          (r.returncode, r2.returncode, r2.stdout) == (0, 0, 'pod "solo" deleted from %s namespace\n' % NS),
          r.stderr + r2.stdout + r2.stderr)
    listing1 = "Deployment %s/my-java: 1 pod (%s)\n%s1 workload, 1 pod outdated (1 injected pod checked)\n" % (
        NS, name, why)
    o, reqs = cli.run("outdated", "--namespace", NS, "--restart", "--yes", "--timeout", "3")
    check("outdated --restart --yes: restarted, then the rollout that cannot complete without a kubelet ends the "
          "run with --timeout's message, exit 1",
          (o.returncode, o.stdout, o.stderr) == (
              1, listing1 + "restarted Deployment %s/my-java\n" % NS,
              "otel-webhook outdated: the rollout of Deployment %s/my-java did not complete within 3 s; no further "
              "restarts\n" % NS), "%d %r %r" % (o.returncode, o.stdout, o.stderr))
    writes = [q for q in reqs if q[0] not in ("get", "list")]
    polls = reqs[len(reads + proof) + 1:]
    check("outdated --restart --yes: one write, the PATCH of the Deployment, then reads of it until the timeout",
          (reqs[:len(reads + proof)], writes, sorted(set(polls))) == (
              reads + proof, [("patch", "deployments", "my-java", 200)], [("get", "deployments", "my-java", 200)]),
          reqs)
    dep3 = s.c.get_json("deployment", "my-java", "-n", NS) or {"spec": {"template": {"metadata": {}}}}
    at = dep3["spec"]["template"]["metadata"].get("annotations", {}).get("kubectl.kubernetes.io/restartedAt", "")
    check("the Deployment's pod template carries kubectl.kubernetes.io/restartedAt (UTC, seconds)",
          re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", at) is not None,
          dep3["spec"]["template"]["metadata"])

    rs, pods_ = deployment_pods(s, NS, 2)
    if not check("the controllers make a second ReplicaSet, its pod the only one left", bool(rs), ""):
        return
    new = pods_[0]
    exp, _ = s.expected(replicaset_pod(rs[-1]), NS, extra=[rs[-1]])
    check("the new ReplicaSet's pod equals inject's output for it", injected_view(new) == injected_view(exp),
          diff(injected_view(new), injected_view(exp)))
    env = {e["name"]: e.get("value") for e in new["spec"]["containers"][0].get("env", [])}
    check("the new pod carries the Instrumentation's new value (OTEL_JAVAAGENT_DEBUG \"false\")",
          env.get("OTEL_JAVAAGENT_DEBUG") == "false", env)
    o, _ = cli.run("outdated", "--namespace", NS)
    check("outdated after the restart: nothing outdated, exit 0", (o.returncode, o.stdout, o.stderr) == (
        0, "no outdated pods (1 injected pod checked)\n", ""), "%d %r %r" % (o.returncode, o.stdout, o.stderr))
