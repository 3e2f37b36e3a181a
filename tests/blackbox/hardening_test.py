#!/usr/bin/python3
"""`otel-webhook serve` against hostile clients and hostile surroundings, over
real TLS on loopback: the ways in to HTTP/2 without --http2, the request-body
budget of an HTTP/2 connection with it, request smuggling (Content-Length
with Transfer-Encoding, two Content-Lengths), a uid holding NUL, a FIFO in
place of the certificate, SIGHUP, and the file-descriptor limit.

Usage: tests/blackbox/hardening_test.py BINARY [RESULTS_FILE]   (from the repository root)

Each server runs the sanitized binary; every wait polls for a condition
with a deadline; every server must end with exit 0 on SIGTERM and a stderr
free of sanitizer reports."""
import json
import os
import resource
import shutil
import signal
import socket
import ssl
import struct
import subprocess
import sys
import tempfile
import threading
import time

BIN = os.path.abspath(sys.argv[1])
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks  # noqa: E402
from serverlib import Conn, Server, fresh_fingerprint, kubelet_publish, new_pair, pem_sha256  # noqa: E402
from testlib import free_port, wait_for, yaml_alias_bomb  # noqa: E402
import h2frames as h2  # noqa: E402

check = Checks("hardening")

with open(os.path.join(ROOT, "examples", "review-java.json")) as f:
    EXAMPLE = json.load(f)


def review(uid, pad=0):
    r = json.loads(json.dumps(EXAMPLE))
    r["request"]["uid"] = uid
    if pad:
        r["request"]["object"]["metadata"]["annotations"]["pad"] = "p" * pad
    return json.dumps(r).encode()


def poll(cond, timeout, interval=0.02):
    """cond() until true or the deadline; its last value."""
    return wait_for(cond, timeout, interval)[0]


def metric(srv, name, conn=None):
    """One sample of /metrics (on conn, or a new connection); None when
    absent or when the server does not answer."""
    try:
        c = conn or srv.conn()
        try:
            r = c.request("GET", "/metrics")
        finally:
            if conn is None:
                c.close()
    except (OSError, EOFError, ValueError):
        return None
    for line in r.body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def log_count(srv, text):
    return srv.stderr().count(text)


def rss_mib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tls_ctx(ca, alpn=None):
    ctx = ssl.create_default_context(cafile=ca)
    if alpn:
        ctx.set_alpn_protocols(alpn)
    return ctx


def raw_tls(srv, ctx, timeout=5):
    raw = socket.create_connection(("127.0.0.1", srv.port), timeout=timeout)
    try:
        return ctx.wrap_socket(raw, server_hostname="localhost")
    except BaseException:
        raw.close()
        raise


def read_until_close(s, timeout=5, limit=1 << 20):
    """What the server sends until it closes (or the deadline): (bytes, closed)."""
    s.settimeout(0.2)
    got, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline and len(got) < limit:
        try:
            d = s.recv(65536)
        except socket.timeout:
            continue
        except (ssl.SSLError, OSError):
            return got, True
        if not d:
            return got, True
        got += d
    return got, False


def is_h2_settings(data):
    """True when data starts like an HTTP/2 server preface (a SETTINGS frame)."""
    return len(data) >= 9 and data[3] == h2.SETTINGS and data[5:9] == b"\0\0\0\0"


# --- HTTP/2 off ---------------------------------------------------------------

def test_http2_off(srv, ca, label):
    """No HTTP/2 without --http2 (and no way in but ALPN with it)."""
    for alpn in (["http/1.1"], None):
        name = "%s: prior-knowledge preface on ALPN %s" % (label, alpn[0] if alpn else "none")
        try:
            s = raw_tls(srv, tls_ctx(ca, alpn))
            s.sendall(h2.PREFACE + h2.frame(h2.SETTINGS, 0, 0) +
                      h2.frame(h2.HEADERS, h2.END_HEADERS | h2.END_STREAM, 1, h2.request_headers("GET", "/healthz")))
            got, closed = read_until_close(s)
            s.close()
            check(name + ": no HTTP/2 answer", not is_h2_settings(got), repr(got[:60]))
            check(name + ": refused as HTTP/1 (400, closed)", got.startswith(b"HTTP/1.1 400 ") and closed,
                  "closed=%s %r" % (closed, got[:80]))
        except (OSError, ssl.SSLError) as e:
            check(name, False, repr(e))
    name = "%s: h2c Upgrade" % label
    try:
        c = Conn(srv.port, None, sock=raw_tls(srv, tls_ctx(ca, ["http/1.1"])))
        r = c.request("GET", "/healthz", headers=[("Connection", "Upgrade, HTTP2-Settings"), ("Upgrade", "h2c"),
                                                  ("HTTP2-Settings", "AAMAAABkAAQAAP__")])
        check(name + ": answered as HTTP/1.1, not 101", r.status == 200 and r.body == b"ok\n", repr(r))
        c.s.sendall(h2.PREFACE)
        got, _ = read_until_close(c.s, timeout=3)
        check(name + ": no HTTP/2 after it", not is_h2_settings(got), repr(got[:60]))
        c.close()
    except (OSError, EOFError, ValueError, ssl.SSLError) as e:
        check(name, False, repr(e))
    srv.healthy(label + ": ways into HTTP/2")


# --- HTTP/2 on ----------------------------------------------------------------

def h2_connect(srv, ca, window=None):
    s = raw_tls(srv, tls_ctx(ca, ["h2"]))
    if s.selected_alpn_protocol() != "h2":
        s.close()
        raise OSError("ALPN did not select h2: %r" % s.selected_alpn_protocol())
    c = h2.H2(s)
    settings = struct.pack(">HI", h2.SETTINGS_INITIAL_WINDOW_SIZE, window) if window is not None else b""
    c.send(h2.PREFACE + h2.frame(h2.SETTINGS, 0, 0, settings))
    return c


def h2_post(c, sid, body, end=True, chunk=16384):
    c.send(h2.frame(h2.HEADERS, h2.END_HEADERS, sid, h2.request_headers("POST", "/mutate-v1-pod")))
    for i in range(0, len(body), chunk):
        last = i + chunk >= len(body)
        c.send(h2.frame(h2.DATA, h2.END_STREAM if last and end else 0, sid, body[i:i + chunk]))
        if len(c.out) > 1 << 20:
            c.drain(10)


def test_http2_on(srv, ca, max_body):
    """--http2 --max-body MAX: HTTP/2 works, and a connection holds at most
    2 x MAX of request bodies, however it tries."""
    try:
        c = h2_connect(srv, ca)
        c.send(h2.frame(h2.HEADERS, h2.END_HEADERS | h2.END_STREAM, 1, h2.request_headers("GET", "/healthz")))
        ok = c.wait_for(lambda h: h.response(1), 10)
        check("--http2: GET /healthz over h2", ok == (200, b"ok\n"), repr(ok))
        # Twenty reviews at once on one connection, and two bodies of
        # almost --max-body each: all within the budget, all answered.
        sids = list(range(3, 43, 2))
        for sid in sids:
            h2_post(c, sid, review("h2-%d" % sid))
        big = [review("h2-big-%d" % i, pad=max_body - 6000) for i in range(2)]
        h2_post(c, 101, big[0], end=False)
        h2_post(c, 103, big[1])
        c.send(h2.frame(h2.DATA, h2.END_STREAM, 101, b""))
        done = c.wait_for(lambda h: all(h.response(s) for s in sids + [101, 103]), 30)
        uids = []
        for sid in sids + [101, 103]:
            r = c.response(sid)
            try:
                uids.append(json.loads(r[1])["response"]["uid"] if r and r[0] == 200 else r)
            except ValueError:
                uids.append(r)
        check("--http2: 22 concurrent reviews answered with their uids",
              done and uids == ["h2-%d" % s for s in sids] + ["h2-big-0", "h2-big-1"], uids)
        check("--http2: two bodies of ~--max-body each fit the budget", len(big[0]) < max_body and c.goaway() is None,
              (len(big[0]), c.goaway()))
        c.close()
    except (OSError, ssl.SSLError) as e:
        check("--http2: requests over h2", False, repr(e))

    # 100 streams, each sending almost --max-body and never ending it: h2o
    # alone would hold all of it (100 x MAX); the budget closes it at 2 x MAX.
    for name, window, end in [("unfinished bodies", None, False), ("finished bodies, answers never read", 0, True)]:
        try:
            before = metric(srv, 'otel_webhook_errors_total{kind="http2_budget"}')
            rss0 = rss_mib(srv.proc.pid)
            c = h2_connect(srv, ca, window)
            body = b"x" * (max_body - 1024)
            sent = 0
            for i in range(100):
                h2_post(c, 2 * i + 1, body, end=end)
                c.drain(10)
                if c.eof:
                    break
                sent += len(body)
            c.wait_for(lambda h: h.goaway() is not None, 10)
            closed = c.wait_for(lambda h: h.eof, 10)
            rss = rss_mib(srv.proc.pid) - rss0
            g = c.goaway()
            c.close()
            check("--http2 %s: GOAWAY ENHANCE_YOUR_CALM" % name, g is not None and g[0] == h2.ENHANCE_YOUR_CALM,
                  "%r after %d MiB sent" % (g, sent >> 20))
            check("--http2 %s: connection closed" % name, closed)
            # What was sent includes what the sockets buffer (a few MiB on
            # loopback); without the budget it would be all 100 bodies.
            check("--http2 %s: stopped long before 100 bodies" % name, sent <= 24 << 20,
                  "%d MiB sent" % (sent >> 20))
            # 100 x MAX would be ~100 MiB (twice that under ASan).
            check("--http2 %s: RSS bounded" % name, rss < 48, "grew %.0f MiB" % rss)
            print("  (--http2 %s: closed after %.1f MiB, RSS +%.0f MiB)" % (name, sent / 1048576, rss))
            after = metric(srv, 'otel_webhook_errors_total{kind="http2_budget"}')
            check("--http2 %s: counted" % name, before is not None and after == before + 1, (before, after))
        except (OSError, ssl.SSLError) as e:
            check("--http2 " + name, False, repr(e))
        srv.healthy("--http2 " + name)
    check("--http2: budget closes logged", log_count(srv, "request bodies over its budget") >= 1)


# --- Smuggling ---------------------------------------------------------------

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n"


def test_smuggling(srv):
    """Two readings of a request's length: 400, closed, and what rode in its
    body (a GET of a path that would count as not_found) never runs."""
    cases = [
        ("Content-Length then Transfer-Encoding", b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
         b"0\r\n\r\n" + SMUGGLED, "both Content-Length and Transfer-Encoding"),
        ("Transfer-Encoding then Content-Length", b"Transfer-Encoding: chunked\r\nContent-Length: 50\r\n",
         b"0\r\n\r\n" + SMUGGLED, "both Content-Length and Transfer-Encoding"),
        ("two Content-Lengths", b"Content-Length: 0\r\nContent-Length: %d\r\n" % len(SMUGGLED), SMUGGLED,
         "more than one Content-Length"),
        ("two Content-Lengths, same value", b"content-length: 0\r\nCONTENT-LENGTH: 0\r\n", SMUGGLED,
         "more than one Content-Length"),
        ("two Transfer-Encodings", b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n",
         b"0\r\n\r\n" + SMUGGLED, "more than one Transfer-Encoding"),
    ]
    not_found0 = metric(srv, 'otel_webhook_errors_total{kind="not_found"}')
    framing0 = metric(srv, 'otel_webhook_errors_total{kind="ambiguous_framing"}')
    for name, hdrs, body, why in cases:
        for path in ("/mutate-v1-pod", "/healthz"):
            try:
                c = srv.conn()
                c.send(b"POST %s HTTP/1.1\r\nHost: localhost\r\n%s\r\n%s" % (path.encode(), hdrs, body))
                r = c.read_response()
                want = json.dumps({"error": "ambiguous request framing: " + why}, separators=(",", ":")).encode()
                check("%s to %s: 400" % (name, path), r.status == 400 and r.reason == "Bad Request", repr(r))
                check("%s to %s: the reason" % (name, path), r.body == want + b"\n", repr(r.body))
                check("%s to %s: Connection: close, closed" % (name, path),
                      r.headers.get("connection") == "close" and c.closed_by_peer(5), r.headers)
                c.close()
            except (OSError, EOFError, ValueError) as e:
                check("%s to %s" % (name, path), False, repr(e))
    srv.healthy("smuggling")
    # A request with one Content-Length and a pipelined one after it: both
    # answered (the control: a pipelined request does run).
    try:
        c = srv.conn()
        c.send(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n" + SMUGGLED)
        r1, r2 = c.read_response(), c.read_response()
        check("one Content-Length, then a pipelined request: both answered",
              r1.status == 200 and r2.status == 404, "%r / %r" % (r1, r2))
        c.close()
    except (OSError, EOFError, ValueError) as e:
        check("one Content-Length, then a pipelined request", False, repr(e))
    not_found1 = metric(srv, 'otel_webhook_errors_total{kind="not_found"}')
    framing1 = metric(srv, 'otel_webhook_errors_total{kind="ambiguous_framing"}')
    check("smuggled requests never ran (only the control's 404)", not_found0 is not None and
          not_found1 == not_found0 + 1,
          "not_found %s -> %s" % (not_found0, not_found1))
    check("ambiguous requests counted", framing0 is not None and framing1 == framing0 + 2 * len(cases),
          "%s -> %s" % (framing0, framing1))
    check("ambiguous requests logged", log_count(srv, '"ambiguous request framing: ') == 2 * len(cases))
    check("the framing check ran (h2o left the request head where it is read)",
          "cannot check HTTP/1 request framing" not in srv.stderr())


# --- uid ----------------------------------------------------------------------

def test_uid(srv):
    for name, uid in [("NUL inside", "a\u0000b\u0000c"), ("only NUL", "\u0000"), ("NUL first", "\u0000uid")]:
        body = review(uid)
        try:
            r = srv.call("POST", "/mutate-v1-pod", body)
            got = r.json()["response"]["uid"] if r.status == 200 else None
            check("uid with %s: echoed exactly" % name, got == uid, "%r: %r" % (r, got))
            check("uid with %s: escaped in the JSON text" % name,
                  b'"uid":' + json.dumps(uid).encode() in r.body, r.body[:200])
        except (OSError, EOFError, ValueError) as e:
            check("uid with " + name, False, repr(e))


# --- Certificates: a FIFO ------------------------------------------------------

def test_fifo_cert(srv, certdir, first_crt):
    crt = os.path.join(certdir, "tls.crt")
    want_fp = pem_sha256(first_crt)
    os.rename(crt, crt + ".real")
    os.mkfifo(crt)
    seen = poll(lambda: "not a regular file (a FIFO)" in srv.stderr(), 5)
    check("FIFO certificate: refused with a log line", seen and "rotated certificate refused" in srv.stderr(),
          srv.stderr()[-1500:])
    check("FIFO certificate: the pair in service stays", fresh_fingerprint(srv) == want_fp)
    srv.healthy("FIFO certificate")
    # The watcher keeps looking: SIGHUP makes it look now, twice; the reason
    # is logged once.
    for i in (1, 2):
        srv.proc.send_signal(signal.SIGHUP)
        poll(lambda: log_count(srv, "SIGHUP: certificate and resource files checked") >= i, 5)
    check("FIFO certificate: the watcher runs on", log_count(srv, "SIGHUP: certificate and resource files checked") == 2)
    check("FIFO certificate: said once", log_count(srv, "not a regular file (a FIFO)") == 1,
          log_count(srv, "not a regular file (a FIFO)"))
    m = metric(srv, 'otel_webhook_errors_total{kind="certificate_reload"}')
    check("FIFO certificate: counted", m == 1, m)
    t0 = time.monotonic()
    rc = srv.stop(timeout=10)
    check("FIFO certificate: SIGTERM completes", rc == 0, "rc=%r after %.1f s" % (rc, time.monotonic() - t0))


def test_fifo_at_start(tmp, ca, key):
    fifo = os.path.join(tmp, "start-fifo.crt")
    os.mkfifo(fifo)
    try:
        p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:0", "--tls-cert", fifo, "--tls-key", key],
                           capture_output=True, text=True, timeout=20)
        check("FIFO certificate at start: exit 1", p.returncode == 1, p.returncode)
        check("FIFO certificate at start: the reason", "is not a regular file (a FIFO)" in p.stderr, p.stderr[-500:])
    except subprocess.TimeoutExpired:
        check("FIFO certificate at start: does not hang", False)


# --- SIGHUP --------------------------------------------------------------------

def test_sighup(srv, ca_crt, ca_key, tmp, secret):
    """SIGHUP under load: no request fails, the process stays, and a pair
    published before the signal is in service once the signal is handled."""
    stop = threading.Event()
    lock = threading.Lock()
    st = {"ok": 0, "fail": []}
    body = review("uid-hup")
    deadline = time.monotonic() + 30

    def load():
        c = None
        while not stop.is_set() and time.monotonic() < deadline:
            try:
                c = c or srv.conn(timeout=5)
                r = c.request("POST", "/mutate-v1-pod", body)
                with lock:
                    if r.status == 200 and r.json()["response"]["uid"] == "uid-hup":
                        st["ok"] += 1
                    else:
                        st["fail"].append(repr(r))
            except (OSError, EOFError, ValueError) as e:
                with lock:
                    st["fail"].append(repr(e))
                if c:
                    c.close()
                c = None
        if c:
            c.close()

    threads = [threading.Thread(target=load) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        poll(lambda: st["ok"] >= 20, 10)
        for i in range(1, 6):
            srv.proc.send_signal(signal.SIGHUP)
            poll(lambda: log_count(srv, "SIGHUP: certificate and resource files checked") >= i, 5)
        check("SIGHUP x5: each handled", log_count(srv, "SIGHUP: certificate and resource files checked") == 5)
        check("SIGHUP x5: still running", srv.proc.poll() is None, srv.proc.returncode)
        crt, key = new_pair(ca_crt, ca_key, tmp, "hup", 45)
        kubelet_publish(secret, "2026_12_01_01", crt, key)
        srv.proc.send_signal(signal.SIGHUP)
        poll(lambda: log_count(srv, "SIGHUP: certificate and resource files checked") >= 6, 5)
        check("SIGHUP: the pair published before it is in service", fresh_fingerprint(srv) == pem_sha256(crt))
        n0 = st["ok"]
        poll(lambda: st["ok"] >= n0 + 20, 10)
    finally:
        stop.set()
        for t in threads:
            t.join(15)
    check("SIGHUP under load: requests made", st["ok"] >= 40, st["ok"])
    check("SIGHUP under load: zero failed requests", not st["fail"], st["fail"][:3])
    print("  (SIGHUP: %d requests under load)" % st["ok"])


# --- The fd limit ----------------------------------------------------------------

FD_LIMIT = 64


def test_fd_limit(srv, ca):
    """At RLIMIT_NOFILE: no spinning, the open connections are served, and
    accepting resumes once descriptors come free."""
    try:
        keep = srv.conn(timeout=10)
        r = keep.request("GET", "/healthz")
        check("fd limit: keep-alive connection before", r.status == 200, repr(r))
    except (OSError, EOFError, ValueError) as e:
        check("fd limit: keep-alive connection before", False, repr(e))
        return
    flood = []
    try:
        for _ in range(FD_LIMIT + 16):  # the kernel queues what the server cannot accept
            s = socket.socket()
            s.settimeout(5)
            s.connect(("127.0.0.1", srv.port))
            flood.append(s)
        paused = poll(lambda: (metric(srv, "otel_webhook_accept_paused_total", keep) or 0) > 0, 10, 0.1)
        check("fd limit: accepting paused and counted", paused)
        cpu0, t0 = cpu_seconds(srv.proc.pid), time.monotonic()
        time.sleep(2.0)  # a measurement window, not synchronisation
        cpu = cpu_seconds(srv.proc.pid) - cpu0
        window = time.monotonic() - t0
        check("fd limit: no spinning (CPU time over %.1f s)" % window, cpu < 0.5, "%.2f s of CPU" % cpu)
        print("  (fd limit: %.2f s of CPU in %.1f s at the limit)" % (cpu, window))
        r = keep.request("GET", "/healthz")
        check("fd limit: the open keep-alive connection is answered", r.status == 200 and r.body == b"ok\n", repr(r))
        rv = review("uid-fd")
        r = keep.request("POST", "/mutate-v1-pod", rv)
        check("fd limit: reviews answered on it", r.status == 200 and r.json()["response"]["uid"] == "uid-fd", repr(r))
        lines = log_count(srv, "out of file descriptors: not accepting for 100 ms")
        check("fd limit: logged, rate-limited", 1 <= lines <= 2, lines)
    except (OSError, EOFError, ValueError) as e:
        check("fd limit", False, repr(e))
    finally:
        for s in flood:
            s.close()

    def new_conn_ok():
        try:
            c = srv.conn(timeout=2)
            r = c.request("GET", "/healthz")
            c.close()
            return r.status == 200
        except (OSError, EOFError, ValueError):
            return False
    check("fd limit: new connections accepted once descriptors are free", poll(new_conn_ok, 15, 0.1))
    keep.close()


# --- Answers not read, bytes held across connections, rapid reset ---------------

def bomb_review(n, uid):
    """A ConversionReview of n small alias-bomb collectors (a few KB) whose
    answer is large (about 2 MB each): an answer that takes long to read."""
    cfg = yaml_alias_bomb(3, 10)
    objs = [{"apiVersion": "opentelemetry.io/v1alpha1", "kind": "OpenTelemetryCollector",
             "metadata": {"name": "c%d" % i, "namespace": "default"}, "spec": {"config": cfg}} for i in range(n)]
    return json.dumps({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1",
                       "request": {"uid": uid, "desiredAPIVersion": "opentelemetry.io/v1beta1",
                                   "objects": objs}}).encode()


def small_window_tls(srv, ca, rcvbuf=4096):
    """A TLS connection whose receive buffer is tiny: what it does not read
    stays in the server's socket."""
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    raw.settimeout(10)
    raw.connect(("127.0.0.1", srv.port))
    return tls_ctx(ca).wrap_socket(raw, server_hostname="localhost")


def post_bytes(path, body, length=None):
    return (b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
            % (path.encode(), len(body) if length is None else length)) + body


def test_write_timeout(srv, ca):
    """--request-timeout 1: an answer nobody reads closes its connection
    after a second without progress; one read slowly but steadily, for
    longer than that, arrives whole."""
    name = 'otel_webhook_errors_total{kind="write_stalled"}'
    before = metric(srv, name)
    try:
        s = small_window_tls(srv, ca)
        body = bomb_review(4, "uid-stall")
        s.sendall(post_bytes("/convert", body))
        t0 = time.monotonic()
        counted = poll(lambda: metric(srv, name) == (before or 0) + 1, 30, 0.1)
        took = time.monotonic() - t0
        check("write timeout: an unread answer is counted", before is not None and counted,
              (before, metric(srv, name)))
        got, closed = read_until_close(s, timeout=10, limit=64 << 20)
        check("write timeout: the connection is closed, the answer cut", closed and len(got) < 8000000,
              (closed, len(got)))
        s.close()
        print("  (write timeout: closed %.1f s after the request, %d bytes read after)" % (took, len(got)))
    except (OSError, ssl.SSLError) as e:
        check("write timeout", False, repr(e))
    check("write timeout: logged", log_count(srv, "its client read nothing of the answer for --request-timeout") == 1,
          log_count(srv, "its client read nothing"))
    # Slow but steady: 128 KB every 0.25 s, for more than --request-timeout.
    try:
        s = small_window_tls(srv, ca, 65536)
        s.sendall(post_bytes("/convert", bomb_review(1, "uid-slow")))
        got, t0 = b"", time.monotonic()
        s.settimeout(10)
        while True:
            chunk = b""
            try:
                while len(chunk) < 131072:
                    d = s.recv(131072 - len(chunk))
                    if not d:
                        break
                    chunk += d
            except (OSError, ssl.SSLError):
                break
            got += chunk
            if len(chunk) < 131072 or (b"\r\n\r\n" in got and len(got) >= answer_length(got)):
                break
            time.sleep(0.25)  # the client's pace, not synchronisation
        took = time.monotonic() - t0
        head, _, rest = got.partition(b"\r\n\r\n")
        whole = got.startswith(b"HTTP/1.1 200 ") and len(rest) == answer_length(got) - len(head) - 4
        ok = whole and json.loads(rest)["response"]["uid"] == "uid-slow"
        check("write timeout: a slow, steady reader gets the whole answer", ok and took > 1.5,
              "%d bytes in %.1f s" % (len(got), took))
        print("  (write timeout: a %d-byte answer read in %.1f s)" % (len(got), took))
        s.close()
    except (OSError, ssl.SSLError, ValueError) as e:
        check("write timeout: slow reader", False, repr(e))
    check("write timeout: the slow reader not counted", metric(srv, name) == (before or 0) + 1)
    srv.healthy("write timeout")


def answer_length(got):
    """Header bytes plus Content-Length of the HTTP answer starting got."""
    head, _, _ = got.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            return len(head) + 4 + int(v.strip())
    return 1 << 62


REFUSAL = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
           b"Connection: close\r\nContent-Length: 68\r\n\r\n"
           b'{"error":"the webhook holds too many request bytes at once; retry"}\n')


def server_rx_queued(srv):
    """Bytes waiting in the receive queues of the server's connections
    (/proc/net/tcp: local port, established, rx_queue), read by nobody yet."""
    total = 0
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(path) as f:
                rows = f.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            cols = row.split()
            if int(cols[1].rsplit(":", 1)[1], 16) == srv.port and cols[3] == "01":
                total += int(cols[4].split(":")[1], 16)
    return total


def test_inflight_cap(srv, ca, cap):
    """--max-inflight-bytes CAP (5 MiB, and --max-body CAP): uploads that hold 1.5 MB each in
    their input buffers (2 MiB of memory): two fit, the third is answered
    503 with Retry-After, its bytes dropped; once the others are gone, the
    same request is answered."""
    name = 'otel_webhook_errors_total{kind="requests_in_flight"}'
    before = metric(srv, name)
    part = b"x" * 1500000
    held, bodies = [], []
    try:
        for i in range(2):
            uid = "uid-held-%d" % i
            body = review(uid, pad=2000000 - len(review(uid, pad=1)) + 1)
            bodies.append(body)
            s = raw_tls(srv, tls_ctx(ca), timeout=10)
            s.sendall(post_bytes("/mutate-v1-pod", body[:1500000], len(body)))
            held.append(s)
        # Both are held once the server has read all they sent (nothing
        # left in its sockets' receive queues), 2 MiB of buffer each, with
        # the 64 KiB buffer of the /metrics request that tells.
        want = 2 * (2 << 20) + 65536
        read_all = poll(lambda: server_rx_queued(srv) == 0, 10)
        hold = poll(lambda: metric(srv, "otel_webhook_request_bytes_in_flight") == want and want, 10)
        check("in-flight cap: the server read both uploads", read_all, server_rx_queued(srv))
        s = raw_tls(srv, tls_ctx(ca), timeout=10)
        s.sendall(post_bytes("/mutate-v1-pod", part, 2000000))
        got, closed = read_until_close(s, timeout=10)
        s.close()
        check("in-flight cap: the third upload gets 503 with Retry-After", got == REFUSAL and closed, (got[:300], closed))
        check("in-flight cap: counted", before is not None and metric(srv, name) == before + 1,
              (before, metric(srv, name)))
        check("in-flight cap: the gauge shows two uploads' buffers, 2 MiB each", hold == want,
              metric(srv, "otel_webhook_request_bytes_in_flight"))
        # A third upload takes a 1 MiB buffer: the process holds the cap
        # exactly. A request without a body (a probe) still fits in one
        # first buffer and is answered, though it takes the total over.
        near = raw_tls(srv, tls_ctx(ca), timeout=10)
        near.sendall(post_bytes("/mutate-v1-pod", b"x" * 700000, 2000000))
        poll(lambda: server_rx_queued(srv) == 0, 10)
        at_cap = cap + 65536
        check("in-flight cap: at the cap, the gauge's own scrape is answered (cap + its 64 KiB)",
              poll(lambda: metric(srv, "otel_webhook_request_bytes_in_flight") == at_cap, 10),
              metric(srv, "otel_webhook_request_bytes_in_flight"))
        r = srv.call("GET", "/healthz")
        check("in-flight cap: at the cap, /healthz is answered", r.status == 200 and r.body == b"ok\n", repr(r))
        near.close()
        check("in-flight cap: the third upload's buffer freed when it goes",
              poll(lambda: metric(srv, "otel_webhook_request_bytes_in_flight") == want, 10),
              metric(srv, "otel_webhook_request_bytes_in_flight"))
        # The two held uploads are within the cap: they finish, in buffers
        # that do not grow, and are answered.
        for i, s in enumerate(held):
            s.sendall(bodies[i][1500000:])
            r = Conn(None, None, sock=s).read_response()
            check("in-flight cap: upload %d under the cap is answered" % (i + 1),
                  r.status == 200 and len(bodies[i]) == 2000000 and r.json()["response"]["uid"] == "uid-held-%d" % i,
                  repr(r)[:300])
    except (OSError, ssl.SSLError, EOFError, ValueError) as e:
        check("in-flight cap", False, repr(e))
    finally:
        for s in held:
            s.close()
    check("in-flight cap: back to nothing held but the scrape's own buffer",
          poll(lambda: metric(srv, "otel_webhook_request_bytes_in_flight") == 65536, 10),
          metric(srv, "otel_webhook_request_bytes_in_flight"))
    try:
        r = srv.call("POST", "/mutate-v1-pod", review("uid-after-cap"))
        check("in-flight cap: a review is answered afterwards",
              r.status == 200 and r.json()["response"]["uid"] == "uid-after-cap", repr(r)[:300])
    except (OSError, EOFError, ValueError) as e:
        check("in-flight cap: a review afterwards", False, repr(e))
    check("in-flight cap: logged", log_count(srv, "request refused: the request bytes held across connections") == 1)


def test_h2_inflight_cap(srv, ca, cap):
    """--http2 under --max-inflight-bytes: the stream whose DATA would
    cross the cap is refused (REFUSED_STREAM, the client may retry it), the
    connection and its other streams go on."""
    name = 'otel_webhook_errors_total{kind="requests_in_flight"}'
    before = metric(srv, name)
    try:
        # An HTTP/1.1 upload holds 2 MiB of the 5 MiB.
        holder = raw_tls(srv, tls_ctx(ca), timeout=10)
        holder.sendall(post_bytes("/mutate-v1-pod", b"x" * 1500000, 2000000))
        poll(lambda: server_rx_queued(srv) == 0, 10)
        c = h2_connect(srv, ca)
        h2_post(c, 1, b"x" * 100000, end=False)
        c.drain(10)
        # Within --max-body (3 MiB) and the connection's budget, over the
        # cap once its buffer doubles past 2 MiB.
        h2_post(c, 3, b"x" * ((3 << 20) - 100000), end=False)
        c.drain(10)
        refused = c.wait_for(lambda h: any(t == h2.RST_STREAM and sid == 3 for t, _, sid, _ in h.frames), 10)
        codes = [int.from_bytes(p[:4], "big") for t, _, sid, p in c.frames if t == h2.RST_STREAM and sid == 3]
        check("--http2 in-flight cap: the crossing stream is refused with REFUSED_STREAM",
              refused and codes[:1] == [h2.REFUSED_STREAM], codes)
        check("--http2 in-flight cap: the first stream is not", not any(
            t == h2.RST_STREAM and sid == 1 for t, _, sid, _ in c.frames))
        c.send(h2.frame(h2.DATA, h2.END_STREAM, 1, b""))
        ok = c.wait_for(lambda h: h.response(1), 10)
        check("--http2 in-flight cap: the first stream is answered (400: not a review)", ok and ok[0] == 400, repr(ok))
        c.send(h2.frame(h2.HEADERS, h2.END_HEADERS | h2.END_STREAM, 5, h2.request_headers("GET", "/healthz")))
        ok = c.wait_for(lambda h: h.response(5), 10)
        check("--http2 in-flight cap: the connection goes on", ok == (200, b"ok\n") and c.goaway() is None,
              (ok, c.goaway()))
        c.close()
        holder.close()
    except (OSError, ssl.SSLError) as e:
        check("--http2 in-flight cap", False, repr(e))
    check("--http2 in-flight cap: counted", before is not None and metric(srv, name) == before + 1,
          (before, metric(srv, name)))


def test_h2_reset_by_h2o(srv, ca):
    """Streams h2o closes by itself (a body shorter than its
    content-length: RST_STREAM PROTOCOL_ERROR) leave nothing counted."""
    gauge = "otel_webhook_request_bytes_in_flight"
    try:
        c = h2_connect(srv, ca)
        for i in range(60):
            sid = 2 * i + 1
            c.send(h2.frame(h2.HEADERS, h2.END_HEADERS, sid,
                            h2.request_headers("POST", "/mutate-v1-pod", [("content-length", "10")])))
            c.send(h2.frame(h2.DATA, h2.END_STREAM, sid, b"12345"))
        c.drain(10)
        c.wait_for(lambda h: sum(1 for t, _, _, _ in h.frames if t == h2.RST_STREAM) >= 60, 10)
        resets = sum(1 for t, _, _, p in c.frames if t == h2.RST_STREAM and int.from_bytes(p[:4], "big") == 1)
        check("--http2: 60 short bodies reset by h2o (PROTOCOL_ERROR)", resets == 60, resets)
        # Every reset is out, so the server has taken every frame: with the
        # connection still open, only the scrape's own buffer is held (the
        # idle timeout would hide a leak a few seconds later: no waiting).
        held = metric(srv, gauge)
        check("--http2: streams h2o reset hold nothing", held == 65536 and not c.eof, (held, c.eof))
        c.close()
    except (OSError, ssl.SSLError) as e:
        check("--http2 reset by h2o", False, repr(e))


def test_h2_write_timeout(srv, ca):
    """--http2 --request-timeout 1: an answer the client holds back with a
    flow-control window of 0 closes the connection like an unread one."""
    name = 'otel_webhook_errors_total{kind="write_stalled"}'
    before = metric(srv, name)
    try:
        c = h2_connect(srv, ca, window=0)
        body = bomb_review(1, "uid-h2-stall")
        c.send(h2.frame(h2.HEADERS, h2.END_HEADERS, 1, h2.request_headers("POST", "/convert")))
        for i in range(0, len(body), 16384):
            c.send(h2.frame(h2.DATA, h2.END_STREAM if i + 16384 >= len(body) else 0, 1, body[i:i + 16384]))
        c.drain(10)
        closed = c.wait_for(lambda h: h.eof, 15)
        check("--http2 write timeout: a window held at 0 closes the connection", closed)
        check("--http2 write timeout: counted", before is not None and metric(srv, name) == before + 1,
              (before, metric(srv, name)))
        c.close()
    except (OSError, ssl.SSLError) as e:
        check("--http2 write timeout", False, repr(e))
    srv.healthy("--http2 write timeout")


def test_inflight_flag(tmp, crt, key):
    """A cap too small for one --max-body request is refused at start."""
    try:
        p = subprocess.run([BIN, "serve", "--listen", "127.0.0.1:%d" % free_port(), "--tls-cert", crt, "--tls-key",
                            key, "--max-body", "6291456", "--max-inflight-bytes", "6291456"],
                           capture_output=True, text=True, timeout=10)
        got = (p.returncode, p.stderr[:400])
    except subprocess.TimeoutExpired:
        got = ("still serving after 10 s", "")
    want = ("otel-webhook serve: --max-inflight-bytes 6291456 is less than the 8388608 bytes of buffer a request of "
            "--max-body 6291456 takes: no request of that size could be taken")
    check("--max-inflight-bytes below one --max-body request: exit 2 with the reason",
          got[0] == 2 and want in got[1], got)


def test_rapid_reset(srv, ca):
    """--http2: a client that opens and resets streams back to back is
    closed with GOAWAY ENHANCE_YOUR_CALM; one that resets a few is not."""
    name = 'otel_webhook_errors_total{kind="http2_rapid_reset"}'
    before = metric(srv, name)
    for n, closes in [(50, False), (1000, True)]:
        try:
            c = h2_connect(srv, ca)
            out = b""
            for i in range(n):
                sid = 2 * i + 1
                out += h2.frame(h2.HEADERS, h2.END_HEADERS | h2.END_STREAM, sid, h2.request_headers("GET", "/healthz"))
                out += h2.frame(h2.RST_STREAM, 0, sid, struct.pack(">I", 8))
            c.send(out)
            c.drain(10)
            last = 2 * n + 1
            c.send(h2.frame(h2.HEADERS, h2.END_HEADERS | h2.END_STREAM, last, h2.request_headers("GET", "/healthz")))
            c.wait_for(lambda h: h.response(last) or h.goaway() is not None, 10)
            g = c.goaway()
            if closes:
                check("--http2 rapid reset: %d resets get GOAWAY ENHANCE_YOUR_CALM" % n,
                      g is not None and g[0] == h2.ENHANCE_YOUR_CALM, g)
                check("--http2 rapid reset: the connection is closed", c.wait_for(lambda h: h.eof, 10))
            else:
                check("--http2 rapid reset: %d resets are allowed" % n,
                      g is None and c.response(last) == (200, b"ok\n"), (g, c.response(last)))
            c.close()
        except (OSError, ssl.SSLError) as e:
            check("--http2 rapid reset %d" % n, False, repr(e))
    check("--http2 rapid reset: counted once", before is not None and metric(srv, name) == before + 1,
          (before, metric(srv, name)))
    check("--http2 rapid reset: logged", log_count(srv, "it resets streams faster than allowed") == 1)
    srv.healthy("--http2 rapid reset")


# ---------------------------------------------------------------------------

def main():
    t_start = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="otel-hardening-test-")
    servers = []
    try:
        certs = os.path.join(tmp, "certs")
        p = subprocess.run([BIN, "certs", "generate", "--service", "otel-webhook", "--namespace", "otel",
                            "--out", certs, "--dev"], capture_output=True, text=True, timeout=60)
        if not check("certs generate", p.returncode == 0, p.stderr):
            return
        ca, crt, key = (os.path.join(certs, f) for f in ("ca.crt", "tls.crt", "tls.key"))

        def server(name, args, cert=crt, key_=key, preexec_fn=None):
            s = Server(check, BIN, name, tmp, cert, key_, ca, args, preexec_fn)
            servers.append(s)
            return s if s.start() else None

        # 1. Defaults: no HTTP/2, smuggling refused, uids with NUL.
        plain = server("plain", ["--threads", "2"])
        if plain:
            test_http2_off(plain, ca, "no --http2")
            test_smuggling(plain)
            test_uid(plain)
            plain.final_checks()
        print("  (plain: %.1f s)" % (time.monotonic() - t_start))

        # 2. --http2: it works, ALPN is the only way in, and the budget holds.
        max_body = 1 << 20
        h2srv = server("http2", ["--threads", "2", "--http2", "--max-body", str(max_body)])
        if h2srv:
            test_http2_off(h2srv, ca, "--http2")
            test_http2_on(h2srv, ca, max_body)
            h2srv.final_checks()
        print("  (http2: %.1f s)" % (time.monotonic() - t_start))

        # 2b. Answers not read, and the bytes held across connections.
        stall = server("stall", ["--threads", "2", "--request-timeout", "1", "--http2"])
        if stall:
            test_write_timeout(stall, ca)
            test_h2_write_timeout(stall, ca)
            stall.final_checks()
        test_inflight_flag(tmp, crt, key)
        cap = 5 << 20
        capped = server("inflight", ["--threads", "2", "--http2", "--max-body", str(3 << 20),
                                     "--max-inflight-bytes", str(cap)])
        if capped:
            test_inflight_cap(capped, ca, cap)
            test_h2_inflight_cap(capped, ca, cap)
            test_h2_reset_by_h2o(capped, ca)
            test_rapid_reset(capped, ca)
            capped.final_checks()
        print("  (stall, inflight: %.1f s)" % (time.monotonic() - t_start))

        # 3. A FIFO in place of the certificate, at run time and at start.
        fdir = os.path.join(tmp, "fifo")
        os.mkdir(fdir)
        for f in ("tls.crt", "tls.key"):
            shutil.copy(os.path.join(certs, f), fdir)
        fifo = server("fifo", ["--threads", "2"], os.path.join(fdir, "tls.crt"), os.path.join(fdir, "tls.key"))
        if fifo:
            test_fifo_cert(fifo, fdir, crt)
            fifo.final_checks()
        test_fifo_at_start(tmp, ca, key)

        # 4. SIGHUP, with the kubelet's Secret layout.
        secret = os.path.join(tmp, "secret")
        os.mkdir(secret)
        kubelet_publish(secret, "2026_12_01_00", crt, key)
        hup = server("sighup", ["--threads", "2"], os.path.join(secret, "tls.crt"), os.path.join(secret, "tls.key"))
        if hup:
            test_sighup(hup, ca, os.path.join(certs, "ca.key"), tmp, secret)
            hup.final_checks()
        print("  (fifo, sighup: %.1f s)" % (time.monotonic() - t_start))

        # 5. The fd limit (soft and hard: serve raises the soft one to the hard one).
        def low_nofile():
            resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))
        fd = server("fdlimit", ["--threads", "2", "--request-timeout", "30"], preexec_fn=low_nofile)
        if fd:
            test_fd_limit(fd, ca)
            fd.final_checks()
    finally:
        for s in servers:
            s.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    print("  (total: %.1f s)" % (time.monotonic() - t_start))


check.run(main, RESULTS)
