"""tests/e2e/cluster.py - a real Kubernetes control plane for one test run:
etcd, kube-apiserver and kube-controller-manager, built by
tests/e2e/build-tools.sh, started on free loopback ports and stopped after.

Contract:
- Cluster(bindir, build_dir).start() makes a fresh CA, serving and client
  certificates (openssl), a service-account signing key, starts the three
  components and returns once the API server's /readyz and the controller
  manager's /healthz answer 200 (each within a deadline; RuntimeError with
  the component's log tail otherwise). `with Cluster(...) as c:` does the same.
- Everything lives in BUILD_DIR/e2e-run-XXXX: certificates, kubeconfigs,
  etcd's data, the components' logs. stop() ends every process group it
  started (SIGTERM, then SIGKILL past a deadline), copies the logs to
  BUILD_DIR/e2e-logs/ and removes the folder. stop() runs at exit too, and on
  SIGTERM/SIGHUP; a run killed outright is caught by the children's parent-
  death signal, and its folder removed by the next start (it names its pid).
- c.kubectl(*args) runs kubectl as cluster-admin (a client certificate in
  system:masters); c.kubeconfig_for_token(name, token) writes a kubeconfig
  holding only a bearer token, for a ServiceAccount's identity.
- c.restart_apiserver(while_down=None) stops kube-apiserver and starts it
  again on its port; while_down(kubeconfig) runs meanwhile against a second
  API server on the same etcd.
- No kubelet, no scheduler: pods are admitted and stored, never run.
- The API server writes an audit log (c.audit_log, JSON lines) of every
  request by a ServiceAccount of otel-webhook-system, at Metadata level:
  what our binaries asked for with the identity deploy/ gives them, and
  what RBAC answered. c.audit_events(user) reads it.
"""
import atexit
import ctypes
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "blackbox"))
from testlib import free_port  # noqa: E402

# The admission plugins kubeadm's clusters run: the API server's defaults
# (named here so a test never depends on what a release turns on) and
# NodeRestriction. ImageVolume is GA and locked on since 1.36, so no
# --feature-gates is needed for the tests' image volumes.
ADMISSION_PLUGINS = ("NamespaceLifecycle,LimitRanger,ServiceAccount,DefaultStorageClass,DefaultTolerationSeconds,"
                     "NodeRestriction,Priority,PodSecurity,MutatingAdmissionPolicy,MutatingAdmissionWebhook,"
                     "ValidatingAdmissionPolicy,ValidatingAdmissionWebhook,ResourceQuota")
# What the tests need of the controller manager: namespaces and their
# default ServiceAccounts, tokens, the workload controllers that create
# pods, garbage collection of owned objects, the kube-root-ca.crt ConfigMap
# the ServiceAccount plugin's projected volume names, and aggregated
# ClusterRoles (admin/edit/view).
CONTROLLERS = ("namespace-controller,serviceaccount-controller,serviceaccount-token-controller,deployment-controller,"
               "replicaset-controller,statefulset-controller,job-controller,cronjob-controller,"
               "garbage-collector-controller,root-ca-certificate-publisher-controller,"
               "clusterrole-aggregation-controller")
SERVICE_CIDR = "10.96.0.0/16"  # allocated from, never routed: there is no kube-proxy
SERVICE_IP = "10.96.0.1"
ISSUER = "https://kubernetes.default.svc.cluster.local"
APISERVER_GRACE = 5
READY_SECONDS = 180  # a cold start on a busy two-core machine


def _openssl(*args, cwd):
    r = subprocess.run(["openssl"] + list(args), cwd=cwd, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise RuntimeError("openssl %s: %s" % (" ".join(args), r.stderr.strip()))


def _set_pdeathsig():
    """In the child before exec: its own session (one signal ends the
    component and anything it forks), and SIGKILL when the test process dies
    without running its cleanup."""
    os.setsid()
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Cluster:
    def __init__(self, bindir, build_dir="build", log=None):
        self.bindir = os.path.abspath(bindir)
        self.build_dir = os.path.abspath(build_dir)
        self.log = log or (lambda msg: print(msg, flush=True))
        self.dir = None
        self.procs = []  # (name, Popen, log path)
        self.server = None
        self.admin_kubeconfig = None
        self.version = None

    # -- files -------------------------------------------------------------

    def _path(self, name):
        return os.path.join(self.dir, name)

    def _cert(self, name, cn, org=None, sans=None, server=False, client=False, ca="ca"):
        """A P-256 key and a certificate signed by the run's CA (or another
        of its CAs), valid two days."""
        subj = "/CN=%s" % cn + ("/O=%s" % org if org else "")
        ext = ["basicConstraints=critical,CA:FALSE", "keyUsage=critical,digitalSignature"]
        usage = [u for u, on in (("serverAuth", server), ("clientAuth", client)) if on]
        ext.append("extendedKeyUsage=" + ",".join(usage))
        if sans:
            ext.append("subjectAltName=" + ",".join(sans))
        with open(self._path(name + ".ext"), "w") as f:
            f.write("\n".join(ext) + "\n")
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                 name + ".key", "-subj", subj, "-out", name + ".csr", cwd=self.dir)
        _openssl("x509", "-req", "-in", name + ".csr", "-CA", ca + ".crt", "-CAkey", ca + ".key", "-set_serial",
                 str(int.from_bytes(os.urandom(8), "big")), "-days", "2", "-extfile", name + ".ext", "-out",
                 name + ".crt", cwd=self.dir)
        return self._path(name + ".crt"), self._path(name + ".key")

    def _ca(self, name, cn):
        _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout",
                 name + ".key", "-out", name + ".crt", "-days", "2", "-subj", "/CN=" + cn, cwd=self.dir)
        return self._path(name + ".crt")

    def _pki(self):
        self.ca = self._ca("ca", "otel-webhook-e2e-ca")
        # The front proxy's own CA, as kubeadm sets it up: the API server
        # authenticates aggregated API servers' callers by it, and the
        # controller manager's authentication reads it from
        # kube-system/extension-apiserver-authentication.
        self.front_proxy_ca = self._ca("front-proxy-ca", "otel-webhook-e2e-front-proxy-ca")
        self.front_proxy_client = self._cert("front-proxy-client", "front-proxy-client", client=True,
                                             ca="front-proxy-ca")
        loop = ["IP:127.0.0.1", "DNS:localhost"]
        self.etcd_cert = self._cert("etcd", "etcd", sans=loop, server=True, client=True)
        self.etcd_client = self._cert("apiserver-etcd-client", "kube-apiserver-etcd-client", client=True)
        self.apiserver_cert = self._cert(
            "apiserver", "kube-apiserver", server=True,
            sans=loop + ["IP:" + SERVICE_IP, "DNS:kubernetes", "DNS:kubernetes.default", "DNS:kubernetes.default.svc",
                         "DNS:kubernetes.default.svc.cluster.local"])
        self.admin_cert = self._cert("admin", "e2e-admin", org="system:masters", client=True)
        self.kcm_client = self._cert("kcm-client", "system:kube-controller-manager", client=True)
        self.kcm_cert = self._cert("kcm", "kube-controller-manager", sans=loop, server=True)
        # The ServiceAccount token signer: the API server signs with the
        # private key (TokenRequest), verifies with the public one, and the
        # controller manager signs legacy token Secrets with it.
        _openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", "sa.key", cwd=self.dir)
        _openssl("pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub", cwd=self.dir)

    def _kubeconfig(self, name, user, server=None):
        """A kubeconfig for the API server (or another one, server); user is
        its users[0].user (JSON is YAML, so kubectl reads it)."""
        cfg = {
            "apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "e2e", "cluster": {"server": server or self.server,
                                                     "certificate-authority": self.ca}}],
            "users": [{"name": name, "user": user}],
            "contexts": [{"name": name, "context": {"cluster": "e2e", "user": name}}],
            "current-context": name,
        }
        path = self._path(name + ".kubeconfig")
        with open(path, "w") as f:
            json.dump(cfg, f, indent=1)
        os.chmod(path, 0o600)
        return path

    def kubeconfig_for_token(self, name, token):
        return self._kubeconfig(name, {"token": token})

    # -- processes ---------------------------------------------------------

    def _spawn(self, name, argv):
        logpath = self._path(name + ".log")
        with open(logpath, "wb") as logf:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                 preexec_fn=_set_pdeathsig, cwd=self.dir)
        self.procs.append((name, p, logpath))
        return p

    def _log_tail(self, name, n=4000):
        for pname, _, path in self.procs:
            if pname == name:
                try:
                    with open(path, errors="replace") as f:
                        return f.read()[-n:]
                except OSError:
                    return ""
        return ""

    def _get(self, url, cert=None):
        ctx = ssl.create_default_context(cafile=self.ca)
        if cert:
            ctx.load_cert_chain(*cert)
        try:
            with urllib.request.urlopen(url, context=ctx, timeout=5) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()
        except (OSError, ssl.SSLError):
            return None, b""

    def _wait_ok(self, name, proc, url, cert=None):
        """Polls url until it answers 200; fails when the process exits or
        the deadline passes."""
        deadline = time.monotonic() + READY_SECONDS
        last = None
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("%s exited with %s before it was ready:\n%s" % (name, proc.returncode,
                                                                                   self._log_tail(name)))
            last = self._get(url, cert)
            if last[0] == 200:
                return
            time.sleep(0.1)  # poll interval, not synchronisation
        raise RuntimeError("%s not ready within %d s (last answer %r):\n%s" % (name, READY_SECONDS, last,
                                                                               self._log_tail(name)))

    def _clean_stale(self):
        """Folders of earlier runs whose process is gone (killed outright)."""
        try:
            names = os.listdir(self.build_dir)
        except OSError:
            return
        for n in names:
            if not n.startswith("e2e-run-"):
                continue
            d = os.path.join(self.build_dir, n)
            try:
                with open(os.path.join(d, "owner.pid")) as f:
                    pid = int(f.read())
            except (OSError, ValueError):
                pid = None
            if pid is None or not _pid_alive(pid):
                shutil.rmtree(d, True)

    def start(self):
        os.makedirs(self.build_dir, exist_ok=True)
        self._clean_stale()
        self.dir = tempfile.mkdtemp(prefix="e2e-run-", dir=self.build_dir)
        with open(self._path("owner.pid"), "w") as f:
            f.write(str(os.getpid()))
        atexit.register(self.stop)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) == signal.SIG_DFL:
                signal.signal(sig, lambda s, _f: sys.exit(128 + s))
        t0 = time.monotonic()
        try:
            self._start(t0)
        except BaseException:
            self.stop()
            raise
        return self

    def _launch(self, name, nports, argv_for, url_for, cert=None, reset=None):
        """Starts one component on nports free ports and waits until url_for
        answers 200. free_port() only proposes a port: another process may
        bind it first, so a component that exits for that is started again
        on new ones (reset() clears what the failed start left)."""
        for attempt in range(3):
            ports = [free_port() for _ in range(nports)]
            p = self._spawn(name, argv_for(*ports))
            try:
                self._wait_ok(name, p, url_for(*ports), cert)
                return ports
            except RuntimeError:
                if attempt == 2 or p.poll() is None or "address already in use" not in self._log_tail(name):
                    raise
                self.procs.pop()
                if reset:
                    reset()
        raise AssertionError("unreachable")

    def _start(self, t0):
        self._pki()
        self.audit_log = self._path("audit.jsonl")
        with open(self._path("audit-policy.yaml"), "w") as f:
            f.write("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
                    "  - level: Metadata\n    userGroups: [\"system:serviceaccounts:otel-webhook-system\"]\n"
                    "  - level: None\n")
        etcd_data = self._path("etcd-data")
        etcd_port, _ = self._launch("etcd", 2, lambda port, peer: [
            os.path.join(self.bindir, "etcd"), "--name", "e2e", "--data-dir", etcd_data,
            "--listen-client-urls", "https://127.0.0.1:%d" % port,
            "--advertise-client-urls", "https://127.0.0.1:%d" % port,
            "--listen-peer-urls", "http://127.0.0.1:%d" % peer,
            "--initial-advertise-peer-urls", "http://127.0.0.1:%d" % peer,
            "--initial-cluster", "e2e=http://127.0.0.1:%d" % peer,
            "--cert-file", self.etcd_cert[0], "--key-file", self.etcd_cert[1],
            "--client-cert-auth", "--trusted-ca-file", self.ca,
            # A test cluster's data is thrown away: fsync buys nothing.
            "--unsafe-no-fsync", "--log-level", "warn"],
            lambda port, peer: "https://127.0.0.1:%d/health" % port, self.etcd_client,
            reset=lambda: shutil.rmtree(etcd_data, True))
        etcd_url = "https://127.0.0.1:%d" % etcd_port

        self._apiserver_argv = lambda port: [
            os.path.join(self.bindir, "kube-apiserver"),
            "--etcd-servers", etcd_url, "--etcd-cafile", self.ca,
            "--etcd-certfile", self.etcd_client[0], "--etcd-keyfile", self.etcd_client[1],
            "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", str(port),
            "--tls-cert-file", self.apiserver_cert[0], "--tls-private-key-file", self.apiserver_cert[1],
            "--client-ca-file", self.ca,
            "--requestheader-client-ca-file", self.front_proxy_ca, "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User", "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            "--proxy-client-cert-file", self.front_proxy_client[0],
            "--proxy-client-key-file", self.front_proxy_client[1],
            "--service-account-issuer", ISSUER, "--service-account-key-file", self._path("sa.pub"),
            "--service-account-signing-key-file", self._path("sa.key"),
            "--service-cluster-ip-range", SERVICE_CIDR,
            # The reconciler would publish the advertise address as the
            # kubernetes Service's endpoint, and refuses a loopback one;
            # nothing in the tests reaches the API server through the Service.
            "--endpoint-reconciler-type=none",
            "--authorization-mode", "Node,RBAC", "--enable-admission-plugins", ADMISSION_PLUGINS,
            "--allow-privileged=true", "--profiling=false", "--v", "1",
            "--audit-policy-file", self._path("audit-policy.yaml"), "--audit-log-path", self.audit_log,
            "--audit-log-format", "json"]
        api_port, = self._launch("kube-apiserver", 1, self._apiserver_argv,
                                 lambda port: "https://127.0.0.1:%d/readyz" % port, self.admin_cert)
        self._apiserver_port = api_port
        self.server = "https://127.0.0.1:%d" % api_port
        self.admin_kubeconfig = self._kubeconfig(
            "e2e-admin", {"client-certificate": self.admin_cert[0], "client-key": self.admin_cert[1]})

        kcm_kubeconfig = self._kubeconfig(
            "kube-controller-manager", {"client-certificate": self.kcm_client[0], "client-key": self.kcm_client[1]})
        self._launch("kube-controller-manager", 1, lambda port: [
            os.path.join(self.bindir, "kube-controller-manager"),
            "--kubeconfig", kcm_kubeconfig, "--authentication-kubeconfig", kcm_kubeconfig,
            "--authorization-kubeconfig", kcm_kubeconfig,
            "--bind-address", "127.0.0.1", "--secure-port", str(port),
            "--tls-cert-file", self.kcm_cert[0], "--tls-private-key-file", self.kcm_cert[1],
            "--controllers", CONTROLLERS,
            # Each controller under its own ServiceAccount, as kubeadm runs
            # it, so bootstrap RBAC is exercised as in a real cluster.
            "--use-service-account-credentials=true",
            "--service-account-private-key-file", self._path("sa.key"), "--root-ca-file", self.ca,
            "--leader-elect=false", "--cluster-name", "e2e", "--v", "1"],
            lambda port: "https://127.0.0.1:%d/healthz" % port)
        status, body = self._get(self.server + "/version", self.admin_cert)
        self.version = json.loads(body)["gitVersion"] if status == 200 else None
        self.log("e2e: control plane %s ready in %.1f s (%s)" % (self.version, time.monotonic() - t0, self.dir))

    def restart_apiserver(self, while_down=None):
        """Stops kube-apiserver and starts it again with the same flags on
        the same port, so every kubeconfig still holds. Returns once /readyz
        answers 200 again. SIGTERM first: it stops listening at once, but
        its HTTP server then waits 60 s for connections with a watch open
        (Go's Server.Shutdown), so after APISERVER_GRACE seconds it is
        killed, and those connections are reset, as when an API server
        crashes or its node goes. The first process's log is kept as
        kube-apiserver.N.log.

        while_down(kubeconfig), when given, is called while it is down with
        an admin kubeconfig for a second API server on the same etcd (an HA
        control plane's other member, stopped again before the first comes
        back): what it changes is what a client of the first one has missed."""
        i = [n for n, _, _ in self.procs].index("kube-apiserver")
        name, p, path = self.procs.pop(i)
        os.killpg(p.pid, signal.SIGTERM)
        try:
            p.wait(timeout=APISERVER_GRACE)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        self._restarts = getattr(self, "_restarts", 0) + 1
        os.rename(path, self._path("kube-apiserver.%d.log" % self._restarts))
        if while_down:
            other = "kube-apiserver-other"

            def argv(port):
                a = self._apiserver_argv(port)
                a[a.index("--audit-log-path") + 1] = self._path("audit-other.jsonl")
                return a
            port, = self._launch(other, 1, argv, lambda port: "https://127.0.0.1:%d/readyz" % port, self.admin_cert)
            try:
                while_down(self._kubeconfig("e2e-admin-other", {"client-certificate": self.admin_cert[0],
                                                                "client-key": self.admin_cert[1]},
                                            "https://127.0.0.1:%d" % port))
            finally:
                j = [n for n, _, _ in self.procs].index(other)
                _, q, _ = self.procs.pop(j)
                os.killpg(q.pid, signal.SIGKILL)
                q.wait()
        port = self._apiserver_port
        self._wait_ok(name, self._spawn(name, self._apiserver_argv(port)), "https://127.0.0.1:%d/readyz" % port,
                      self.admin_cert)

    def exited(self):
        """The components that are no longer running, each with its exit
        status and log tail: a control plane must outlive the tests."""
        return ["%s exited with %s:\n%s" % (name, p.returncode, self._log_tail(name))
                for name, p, _ in self.procs if p.poll() is not None]

    def stop(self):
        """Ends every process group started, newest first; idempotent."""
        while self.procs:
            name, p, _ = self.procs.pop()
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    try:
                        os.killpg(p.pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                    p.wait()
        if self.dir and os.path.isdir(self.dir):
            logs = os.path.join(self.build_dir, "e2e-logs")
            shutil.rmtree(logs, True)
            os.makedirs(logs, exist_ok=True)
            for n in os.listdir(self.dir):
                if n.endswith(".log"):
                    shutil.copy(self._path(n), logs)
            shutil.rmtree(self.dir, True)
        self.dir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False

    # -- clients -----------------------------------------------------------

    def kubectl(self, *args, input=None, kubeconfig=None, timeout=60):
        """kubectl as cluster-admin (or with kubeconfig): a CompletedProcess
        with text stdout and stderr."""
        argv = [os.path.join(self.bindir, "kubectl"), "--kubeconfig", kubeconfig or self.admin_kubeconfig]
        return subprocess.run(argv + list(args), input=input, capture_output=True, text=True, timeout=timeout)

    def audit_events(self, user):
        """The audit log's events of user, in order (ResponseComplete and
        Panic stages: one per request answered)."""
        out = []
        try:
            with open(self.audit_log) as f:
                for line in f:
                    try:
                        e = json.loads(line)
                    except ValueError:
                        # The last line of an API server killed mid-write
                        # (restart_apiserver), joined to the next one's first.
                        continue
                    if e.get("user", {}).get("username") == user and e.get("stage") != "RequestReceived":
                        out.append(e)
        except OSError:
            pass
        return out

    def get_json(self, *args, kubeconfig=None):
        """kubectl get ... -o json, parsed; None when kubectl fails."""
        r = self.kubectl("get", *args, "-o", "json", kubeconfig=kubeconfig)
        return json.loads(r.stdout) if r.returncode == 0 else None
