"""What the server benchmarks share (make bench): free ports, the webhook and
nginx started the same way each time, and a small HTTPS/1.1 keep-alive
client that reads Content-Length and chunked answers.

nginx is the floor: Debian's nginx with the echo module, reading the body
and answering a constant (our own answer's bytes, for the fair floor) over
the same TLS settings and certificate."""
import os
import socket
import ssl
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "tests", "bench")
REVIEWS = (("4 KB", os.path.join(BENCH, "review-4k.json")), ("60 KB", os.path.join(BENCH, "review-60k.json")))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if proc.poll() is not None:
            sys.exit("server exited early")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    sys.exit("server did not start")


def certs(binary, tmp):
    d = os.path.join(tmp, "certs")
    if not os.path.isdir(d):
        subprocess.run([binary, "certs", "generate", "--service", "bench", "--namespace", "bench", "--out", d, "--dev"],
                       check=True, capture_output=True)
    return d


def pinned(cpus):
    """The command prefix that keeps a process on the CPUs listed ("0",
    "1"), or none when cpus is None."""
    return ["taskset", "-c", cpus] if cpus is not None else []


def start_ours(binary, tmp, threads=1, wrap=(), port=None, extra=(), cpus=None):
    port = port or free_port()
    c = certs(binary, tmp)
    p = subprocess.Popen(pinned(cpus) + list(wrap) + [binary, "serve", "--listen", "127.0.0.1:%d" % port, "--tls-cert",
                                       c + "/tls.crt", "--tls-key", c + "/tls.key", "--resources",
                                       os.path.join(ROOT, "examples/resources"), "--threads", str(threads),
                                       "--log-level", "warn", "--shutdown-grace", "2"] + list(extra),
                         stderr=None if os.environ.get("BENCH_DEBUG") else subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL)
    wait_port(port, p, 120 if wrap else 30)
    return p, port


def start_nginx(tmp, body, wrap=(), name="nginx", cpus=None):
    """nginx reading the body and answering `body`: with wrap (callgrind) as
    one process (master_process off), else a master and one worker; on the
    CPUs listed when cpus is given (the worker inherits them)."""
    if "$" in body or "\n" in body:
        sys.exit("nginx floor: the constant must hold no $ or newline")
    port = free_port()
    d = os.path.join(tmp, name)
    os.makedirs(d, exist_ok=True)
    conf = os.path.join(d, "nginx.conf")
    # nginx reads a configuration token into a 4 KB buffer: long answers
    # are written by several echo directives, one after the other.
    pieces = [body[i:i + 2048] for i in range(0, len(body), 2048)] or [""]
    echo = " ".join("echo -n '%s';" % p.replace("\\", "\\\\").replace("'", "\\'") for p in pieces)
    with open(conf, "w") as f:
        f.write("""load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
worker_processes 1;
%(master)s
daemon off;
pid %(d)s/nginx.pid;
error_log %(d)s/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path %(d)s/body;
  client_max_body_size 6m;
  client_body_buffer_size 128k;
  keepalive_requests 100000000;
  server {
    listen 127.0.0.1:%(port)d ssl;
    ssl_certificate %(c)s/tls.crt;
    ssl_certificate_key %(c)s/tls.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ciphers ECDHE+AESGCM:ECDHE+CHACHA20;
    location = /mutate-v1-pod { echo_read_request_body; default_type application/json; %(echo)s }
  }
}
""" % {"d": d, "port": port, "c": os.path.join(tmp, "certs"), "echo": echo,
       "master": "master_process off;" if wrap else ""})
    p = subprocess.Popen(pinned(cpus) + list(wrap) + ["nginx", "-c", conf, "-p", d],
                         stderr=None if os.environ.get("BENCH_DEBUG") else subprocess.DEVNULL)
    wait_port(port, p, 120 if wrap else 30)
    return p, port


def nginx_pids(ng):
    kids = subprocess.run(["pgrep", "-P", str(ng.pid)], capture_output=True, text=True).stdout.split()
    return [int(p) for p in kids] + [ng.pid]


def stop(p, timeout=60):
    # Again every second: under valgrind nginx now and then misses one.
    deadline = time.time() + timeout
    while time.time() < deadline:
        p.terminate()
        try:
            p.wait(timeout=1)
            return
        except subprocess.TimeoutExpired:
            pass
    p.kill()
    p.wait()


class Client:
    """One HTTPS/1.1 keep-alive connection (TLS 1.3, certificate not checked:
    the benchmark's own)."""

    def __init__(self, port):
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        ctx.minimum_version = ssl.TLSVersion.TLSv1_3
        self.s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)), server_hostname="localhost")
        self.buf = b""

    def _fill(self):
        d = self.s.recv(65536)
        if not d:
            raise IOError("connection closed")
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

    def post(self, path, body):
        self.s.sendall(b"POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                       b"Content-Length: %d\r\n\r\n" % (path.encode(), len(body)) + body)
        status = int(self._line().split()[1])
        headers = {}
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.split(b":", 1)
            headers[k.strip().lower()] = v.strip()
        if b"content-length" in headers:
            return status, self._take(int(headers[b"content-length"]))
        out = b""
        while True:  # chunked
            n = int(self._line().split(b";")[0], 16)
            if n == 0:
                self._line()
                return status, out
            out += self._take(n)
            self._take(2)

    def close(self):
        self.s.close()
