"""tests/blackbox/serverlib.py - what the black-box suites of `otel-webhook serve`
share: a strict HTTP/1.1 client over TLS, a server process on a free loopback
port with its stderr kept, and the kubelet's way of publishing a rotated
Secret."""
import hashlib
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time

from testlib import LSAN_SUPP, SANITIZER_MARKERS, free_port


class Resp:
    def __init__(self, status, reason, headers, body):
        self.status, self.reason, self.headers, self.body = status, reason, headers, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return "<%d %s %r>" % (self.status, self.reason, self.body[:300])


class Conn:
    """One HTTP/1.1 connection over TLS, with a strict response reader."""

    def __init__(self, port, ctx, timeout=10.0, sock=None):
        if sock is None:
            raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
            try:
                sock = ctx.wrap_socket(raw, server_hostname="localhost")
            except BaseException:
                raw.close()
                raise
        self.s = sock
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise EOFError("connection closed by the server")
        self.buf += d

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def _take(self, n):
        while len(self.buf) < n:
            self._fill()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def read_response(self):
        status_line = self._line().decode("latin-1")
        parts = status_line.split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/1."):
            raise ValueError("not an HTTP response: %r" % status_line)
        headers = {}
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.decode("latin-1").split(":", 1)
            headers[k.strip().lower()] = v.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = b""
            while True:
                size = int(self._line().split(b";")[0], 16)
                if size == 0:
                    while self._line():
                        pass
                    break
                body += self._take(size)
                self._take(2)
        elif "content-length" in headers:
            body = self._take(int(headers["content-length"]))
        else:
            body = self.buf
            self.buf = b""
            while True:
                d = self.s.recv(65536)
                if not d:
                    break
                body += d
        return Resp(int(parts[1]), parts[2] if len(parts) > 2 else "", headers, body)

    def request(self, method, path, body=None, headers=()):
        h = "%s %s HTTP/1.1\r\nHost: localhost\r\n" % (method, path)
        for k, v in headers:
            h += "%s: %s\r\n" % (k, v)
        if body is not None:
            h += "Content-Type: application/json\r\nContent-Length: %d\r\n" % len(body)
        self.send(h.encode() + b"\r\n" + (body or b""))
        return self.read_response()

    def closed_by_peer(self, timeout):
        """True when the server closes the connection within timeout seconds
        (EOF, reset or a TLS close), False when it is still open."""
        self.s.settimeout(timeout)
        try:
            while True:
                if not self.s.recv(65536):
                    return True
        except socket.timeout:
            return False
        except (ssl.SSLError, OSError):
            return True

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def peer_sha256(conn):
    return hashlib.sha256(conn.s.getpeercert(binary_form=True)).hexdigest()


def pem_sha256(path):
    with open(path) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()


def not_after(path):
    out = subprocess.run(["openssl", "x509", "-enddate", "-noout", "-in", path], capture_output=True, text=True,
                         timeout=30).stdout.strip()
    return int(ssl.cert_time_to_seconds(out.split("=", 1)[1]))


class Server:
    """One `serve` process on a free loopback port. check is the suite's
    Checks; preexec_fn runs in the child before exec (limits)."""

    def __init__(self, check, binary, name, tmp, cert, key, ca, args=(), preexec_fn=None):
        self.check, self.bin, self.preexec_fn = check, binary, preexec_fn
        self.name, self.tmp, self.cert, self.key, self.args = name, tmp, cert, key, list(args)
        self.ctx = ssl.create_default_context(cafile=ca)
        self.proc = None
        self.port = None
        self.errpath = None
        self.rc = None
        # What this instance must have counted, checked against /metrics.
        self.results = dict.fromkeys(["mutated", "unchanged", "ignored", "failed_open", "rejected"], 0)
        self.errors = dict.fromkeys(["bad_request", "too_large", "method_not_allowed", "not_found"], 0)
        self.injections = {}

    def start(self):
        env = dict(os.environ)
        supp = os.path.join(self.tmp, "lsan.supp")
        with open(supp, "w") as f:
            f.write(LSAN_SUPP)
        env["LSAN_OPTIONS"] = ":".join(x for x in (env.get("LSAN_OPTIONS", ""), "suppressions=" + supp,
                                                   "print_suppressions=0") if x)
        for attempt in range(5):
            self.port = free_port()
            self.errpath = os.path.join(self.tmp, "%s-%d.stderr" % (self.name, attempt))
            with open(self.errpath, "wb") as err:
                self.proc = subprocess.Popen(
                    [self.bin, "serve", "--listen", "127.0.0.1:%d" % self.port, "--tls-cert", self.cert, "--tls-key",
                     self.key] + self.args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env,
                    preexec_fn=self.preexec_fn)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    c = Conn(self.port, self.ctx, timeout=2)
                    r = c.request("GET", "/readyz")
                    c.close()
                    if r.status == 200 and r.body == b"ready\n":
                        return True
                except (OSError, EOFError, ValueError):
                    pass
                time.sleep(0.02)  # poll interval, not synchronisation
            if self.proc.poll() is None:
                break  # running but never ready: no point retrying another port
            if "cannot listen" not in self.stderr():
                break
        self.check("%s starts" % self.name, False, self.stderr()[-2000:])
        self.kill()
        return False

    def stderr(self):
        try:
            with open(self.errpath, errors="replace") as f:
                return f.read()
        except (OSError, TypeError):
            return ""

    def conn(self, ctx=None, timeout=10.0):
        return Conn(self.port, ctx or self.ctx, timeout)

    def call(self, method, path, body=None, headers=()):
        c = self.conn()
        try:
            return c.request(method, path, body, headers)
        finally:
            c.close()

    def healthy(self, name):
        try:
            r = self.call("GET", "/healthz")
            ok = r.status == 200 and r.body == b"ok\n"
            self.check("%s: still answers /healthz" % name, ok, repr(r))
        except (OSError, EOFError, ValueError) as e:
            self.check("%s: still answers /healthz" % name, False, repr(e))

    def count(self, review_obj, resp):
        """Books an admission response into the expected metrics."""
        if resp is None:
            return
        if resp.status == 400:
            self.results["rejected"] += 1
            self.errors["bad_request"] += 1
        elif resp.status == 200:
            r = resp.json()["response"]
            if "patch" in r:
                self.results["mutated"] += 1
            else:
                req = review_obj["request"]
                pod_create = (req.get("operation") == "CREATE" and req.get("kind", {}).get("kind") == "Pod" and
                              not req.get("kind", {}).get("group") and not req.get("subResource"))
                self.results["unchanged" if pod_create else "ignored"] += 1

    def admit(self, review_obj, conn=None):
        body = json.dumps(review_obj).encode()
        r = (conn.request("POST", "/mutate-v1-pod", body) if conn else self.call("POST", "/mutate-v1-pod", body))
        self.count(review_obj, r)
        return r

    def inject(self, what, n=1):
        self.injections[what] = self.injections.get(what, 0) + n

    def metrics(self):
        r = self.call("GET", "/metrics")
        m = {}
        for line in r.body.decode().splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                m[k] = float(v)
        return r, m

    def stop(self, timeout=15):
        if self.proc is None or self.proc.poll() is not None:
            self.rc = self.proc.returncode if self.proc else None
            return self.rc
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            self.rc = "timeout"
        return self.rc

    def kill(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass

    def final_checks(self):
        rc = self.stop()
        self.check("%s: exit status 0 on SIGTERM" % self.name, rc == 0, "rc=%r" % rc)
        err = self.stderr()
        bad = [l for l in err.splitlines() if any(m in l for m in SANITIZER_MARKERS)]
        self.check("%s: no sanitizer reports" % self.name, not bad, "\n".join(bad[:5]) + "\n" + err[-3000:])


# --- Certificates ------------------------------------------------------------

def new_pair(ca_crt, ca_key, out_dir, tag, days):
    crt, key = os.path.join(out_dir, tag + ".crt"), os.path.join(out_dir, tag + ".key")
    p = subprocess.run(["openssl", "req", "-x509", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", key, "-out", crt, "-subj", "/CN=" + tag, "-days", str(days),
                        "-CA", ca_crt, "-CAkey", ca_key, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
                        "-addext", "basicConstraints=critical,CA:FALSE", "-addext", "extendedKeyUsage=serverAuth"],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError("openssl: " + p.stderr)
    return crt, key


def kubelet_publish(secret_dir, stamp, crt, key):
    """Writes DIR/..STAMP/tls.{crt,key} and points DIR/..data at it with an
    atomic rename, removing the previous timestamped directory (kubelet's
    AtomicWriter); DIR/tls.crt and DIR/tls.key link through ..data."""
    d = os.path.join(secret_dir, ".." + stamp)
    os.mkdir(d)
    shutil.copy(crt, os.path.join(d, "tls.crt"))
    shutil.copy(key, os.path.join(d, "tls.key"))
    data = os.path.join(secret_dir, "..data")
    old = os.readlink(data) if os.path.islink(data) else None
    tmp = os.path.join(secret_dir, "..data_tmp")
    os.symlink(".." + stamp, tmp)
    os.rename(tmp, data)
    for f in ("tls.crt", "tls.key"):
        if not os.path.islink(os.path.join(secret_dir, f)):
            os.symlink(os.path.join("..data", f), os.path.join(secret_dir, f))
    if old:
        shutil.rmtree(os.path.join(secret_dir, old))


def fresh_fingerprint(srv):
    try:
        c = srv.conn(timeout=5)
        fp = peer_sha256(c)
        c.close()
        return fp
    except (ssl.SSLError, OSError) as e:
        return "error: %r" % e
