"""tests/e2e/smoke_test.py - the control plane itself, before any of ours:
the pinned version answers, namespaces get their default ServiceAccount,
`kubectl create token` gives a token the API server authenticates and RBAC
judges, a Deployment's ReplicaSet creates pods that admission completes and
the API server stores (there is no kubelet: they stay Pending, unscheduled),
the garbage collector removes them with the Deployment, and a namespace's
deletion finishes. Run by tests/e2e/run.py; every wait is bounded."""
import base64
import json

from cluster import ISSUER
from testlib import wait_for

# Controllers react within a second or two; this covers a loaded machine.
SETTLE = 60

DEPLOYMENT = {
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "smoke-apps"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "registry.example/web:1.0"}]},
        },
    },
}

# What the ServiceAccount admission plugin mounts into every pod.
TOKEN_VOLUME = {
    "defaultMode": 420,
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                    "path": "namespace"}]}},
    ],
}


def owned_by(obj, owner):
    """obj's controller ownerReference names exactly owner (kind, name, uid)."""
    refs = [r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")]
    return len(refs) == 1 and (refs[0]["kind"], refs[0]["name"], refs[0]["uid"]) == (
        owner["kind"], owner["metadata"]["name"], owner["metadata"]["uid"])


def jwt_claims(token):
    """The payload of a JWT, unverified: the API server verifies it."""
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def items(cluster, *args):
    got = cluster.get_json(*args)
    return got["items"] if got else []


def run(cluster, check, version):
    # -- the pinned release answers, client and server ---------------------
    r = cluster.kubectl("version", "-o", "json")
    v = json.loads(r.stdout) if r.returncode == 0 else {}
    check("kubectl version: client is %s" % version,
          (v.get("clientVersion", {}).get("gitVersion"), v.get("clientVersion", {}).get("minor"))
          == (version, version.split(".")[1]), r.stdout + r.stderr)
    check("kubectl version: server is %s" % version,
          (v.get("serverVersion", {}).get("gitVersion"), v.get("serverVersion", {}).get("major"))
          == (version, version[1:].split(".")[0]), r.stdout + r.stderr)

    # -- a namespace gets its default ServiceAccount -----------------------
    r = cluster.kubectl("create", "namespace", "smoke-sa")
    check("create namespace", (r.returncode, r.stdout) == (0, "namespace/smoke-sa created\n"), r.stderr)
    sa, waited = wait_for(lambda: cluster.get_json("serviceaccount", "default", "-n", "smoke-sa"), SETTLE)
    check("the controller manager creates smoke-sa's default ServiceAccount",
          sa is not None and (sa["metadata"]["name"], sa["metadata"]["namespace"]) == ("default", "smoke-sa"),
          "none after %.1f s" % waited)
    cm, waited = wait_for(lambda: cluster.get_json("configmap", "kube-root-ca.crt", "-n", "smoke-sa"), SETTLE)
    with open(cluster.ca) as f:
        ca = f.read()
    check("kube-root-ca.crt holds the run's CA", cm is not None and cm["data"].get("ca.crt") == ca,
          "after %.1f s: %r" % (waited, cm))

    # -- a token for it, authenticated and judged by RBAC ------------------
    r = cluster.kubectl("create", "token", "default", "-n", "smoke-sa")
    token = r.stdout
    claims = jwt_claims(token) if r.returncode == 0 else {}
    check("kubectl create token: a token of the run's issuer for smoke-sa's default ServiceAccount",
          sa is not None and (claims.get("iss"), claims.get("aud"), claims.get("sub"),
                              claims.get("kubernetes.io", {}).get("serviceaccount")) == (
              ISSUER, [ISSUER], "system:serviceaccount:smoke-sa:default",
              {"name": "default", "uid": sa["metadata"]["uid"]}) and claims["exp"] - claims["iat"] == 3600,
          "%r %r" % (claims, r.stderr))
    kc = cluster.kubeconfig_for_token("smoke-sa-default", token)
    r = cluster.kubectl("auth", "whoami", "-o", "json", kubeconfig=kc)
    who = json.loads(r.stdout) if r.returncode == 0 else {}
    info = who.get("status", {}).get("userInfo", {})
    check("the token authenticates as system:serviceaccount:smoke-sa:default",
          (info.get("username"), info.get("groups")) == (
              "system:serviceaccount:smoke-sa:default",
              ["system:serviceaccounts", "system:serviceaccounts:smoke-sa", "system:authenticated"]),
          r.stdout + r.stderr)
    check("the ServiceAccount's uid is in the token's identity",
          sa is not None and info.get("uid") == sa["metadata"]["uid"], "%r vs %r" % (info, sa))
    r = cluster.kubectl("get", "pods", "-n", "smoke-sa", kubeconfig=kc)
    check("RBAC denies the ServiceAccount what no role grants",
          (r.returncode, r.stdout, r.stderr) == (
              1, "", 'Error from server (Forbidden): pods is forbidden: User "system:serviceaccount:smoke-sa:default" '
                     'cannot list resource "pods" in API group "" in the namespace "smoke-sa"\n'),
          "%d %r %r" % (r.returncode, r.stdout, r.stderr))

    # -- a Deployment: a ReplicaSet, pods admitted and stored --------------
    r = cluster.kubectl("create", "namespace", "smoke-apps")
    check("create namespace smoke-apps", r.returncode == 0, r.stderr)
    wait_for(lambda: cluster.get_json("serviceaccount", "default", "-n", "smoke-apps"), SETTLE)
    r = cluster.kubectl("apply", "-f", "-", input=json.dumps(DEPLOYMENT))
    check("apply the Deployment", (r.returncode, r.stdout) == (0, "deployment.apps/web created\n"), r.stderr)
    dep = cluster.get_json("deployment", "web", "-n", "smoke-apps")
    rs, waited = wait_for(lambda: [x for x in items(cluster, "replicasets", "-n", "smoke-apps")
                                   if dep and owned_by(x, dep)], SETTLE)
    check("the Deployment controller creates one ReplicaSet it owns", len(rs) == 1, "after %.1f s: %r" % (waited, rs))
    pods, waited = wait_for(lambda: (lambda p: p if len(p) == 2 else None)(
        [x for x in items(cluster, "pods", "-n", "smoke-apps") if rs and owned_by(x, rs[0])]), SETTLE)
    pods = pods or []
    check("the ReplicaSet controller creates the two pods it owns", len(pods) == 2, "after %.1f s" % waited)
    # Admission ran on them (ServiceAccount, DefaultTolerationSeconds) and
    # nothing ran them: no node, Pending.
    # (Checked on an empty pod when none came, so they fail rather than vanish.)
    for p in pods[:1] or [{"spec": {"containers": [{}]}}]:
        spec = p["spec"]
        vols = spec.get("volumes", [])
        check("the stored pod: default ServiceAccount, its token volume mounted",
              spec.get("serviceAccountName") == "default"
              and [v["name"].startswith("kube-api-access-") for v in vols] == [True]
              and vols[0].get("projected") == TOKEN_VOLUME
              and [(m["name"], m["mountPath"], m.get("readOnly"))
                   for m in spec["containers"][0].get("volumeMounts", [])]
              == [(vols[0]["name"], "/var/run/secrets/kubernetes.io/serviceaccount", True)], json.dumps(spec))
        check("the stored pod: DefaultTolerationSeconds' tolerations",
              spec.get("tolerations") == [
                  {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
                   "tolerationSeconds": 300},
                  {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
                   "tolerationSeconds": 300}], json.dumps(spec.get("tolerations")))
        check("the stored pod is never scheduled nor run",
              ("nodeName" not in spec, p.get("status")) == (True, {"phase": "Pending", "qosClass": "BestEffort"}),
              json.dumps(p.get("status")))

    # -- deleting the Deployment: the garbage collector removes the rest ---
    r = cluster.kubectl("delete", "deployment", "web", "-n", "smoke-apps")
    check("delete the Deployment", (r.returncode, r.stdout) == (
        0, 'deployment.apps "web" deleted from smoke-apps namespace\n'), r.stdout + r.stderr)
    left, waited = wait_for(lambda: not items(cluster, "replicasets,pods", "-n", "smoke-apps"), SETTLE)
    check("the garbage collector removes its ReplicaSet and pods", left is True,
          "after %.1f s: %r" % (waited, [x["metadata"]["name"] for x in items(cluster, "replicasets,pods", "-n",
                                                                               "smoke-apps")]))

    # -- a namespace deleted is finalized by the namespace controller ------
    r = cluster.kubectl("delete", "namespace", "smoke-sa", "--wait=false")
    check("delete namespace smoke-sa", r.returncode == 0, r.stdout + r.stderr)
    gone, waited = wait_for(lambda: cluster.kubectl("get", "namespace", "smoke-sa").returncode == 1, SETTLE)
    check("the namespace controller finishes smoke-sa's deletion", gone, "still there after %.1f s" % waited)
