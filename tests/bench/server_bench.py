#!/usr/bin/python3
"""Server benchmark (make bench): otel-webhook against the floor of "an HTTPS
server that reads a body and answers", side by side in one run.

The floor is nginx (Debian, echo module) reading the same body and answering a
constant ~200-byte JSON over the same TLS settings and certificate. Both run
with one worker (one event loop), wrk drives HTTP/1.1 keep-alive over TLS with
4 connections. Per scenario: req/s, p50 and p99 latency, server CPU
microseconds per request (utime+stime from /proc), peak RSS, and our ratio to
the floor. The machines are shared and noisy: only the ratios within one run
mean something, and each pair runs interleaved."""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

BIN = sys.argv[1]
SECONDS = int(os.environ.get("BENCH_SECONDS", "8"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONST = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                    "response": {"uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "allowed": True,
                                 "patchType": "JSONPatch", "patch": "W10K" * 20}}, separators=(",", ":"))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc):
    for _ in range(500):
        if proc.poll() is not None:
            sys.exit("server exited early")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.01)
    sys.exit("server did not start")


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def peak_rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def parse_ms(s):
    m = re.match(r"([\d.]+)(us|ms|s)", s)
    v = float(m.group(1))
    return v / 1000 if m.group(2) == "us" else v * 1000 if m.group(2) == "s" else v


def run_wrk(port, path, body_file, pids):
    script = os.path.join(tmp, "post.lua")
    with open(script, "w") as f:
        f.write('local f = io.open("%s", "rb")\nwrk.method = "POST"\nwrk.body = f:read("*a")\nf:close()\n'
                'wrk.headers["Content-Type"] = "application/json"\n' % body_file)
    before = sum(cpu_ticks(p) for p in pids)
    out = subprocess.run(["wrk", "-t1", "-c4", "-d%ds" % SECONDS, "--latency", "-s", script,
                          "https://127.0.0.1:%d%s" % (port, path)], capture_output=True, text=True).stdout
    after = sum(cpu_ticks(p) for p in pids)
    reqs = int(re.search(r"(\d+) requests in", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    sock_err = re.search(r"Socket errors: (.*)", out)
    hz = os.sysconf("SC_CLK_TCK")
    return {
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
        "p50": parse_ms(re.search(r"50%\s+(\S+)", out).group(1)),
        "p99": parse_ms(re.search(r"99%\s+(\S+)", out).group(1)),
        "cpu_us": (after - before) / hz * 1e6 / max(reqs, 1),
        "errors": (int(errors.group(1)) if errors else 0) + (1 if sock_err else 0),
    }


def big_review(path_out):
    with open(os.path.join(ROOT, "examples/review-java.json")) as f:
        review = json.load(f)
    pod = review["request"]["object"]
    mf = pod["metadata"]["managedFields"]
    env = pod["spec"]["containers"][0]["env"]
    i = 0
    while len(json.dumps(review, separators=(",", ":"))) < 60 * 1024:
        mf.append(json.loads(json.dumps(mf[0])))
        env.append({"name": "APP_SETTING_%d" % i, "value": "v" * 120})
        i += 1
    with open(path_out, "w") as f:
        json.dump(review, f, separators=(",", ":"))


tmp = tempfile.mkdtemp(prefix="otel-bench-")
procs = []
try:
    certs = os.path.join(tmp, "certs")
    subprocess.run([BIN, "certs", "generate", "--service", "bench", "--namespace", "bench", "--out", certs, "--dev"],
                   check=True, capture_output=True)
    small = os.path.join(tmp, "review-3k.json")
    with open(os.path.join(ROOT, "examples/review-java.json")) as f:
        json.dump(json.load(f), open(small, "w"), separators=(",", ":"))
    big = os.path.join(tmp, "review-60k.json")
    big_review(big)

    ours_port = free_port()
    ours = subprocess.Popen([BIN, "serve", "--listen", "127.0.0.1:%d" % ours_port, "--tls-cert", certs + "/tls.crt",
                             "--tls-key", certs + "/tls.key", "--resources", os.path.join(ROOT, "examples/resources"),
                             "--threads", "1", "--log-level", "warn"], stderr=subprocess.DEVNULL)
    procs.append(ours)
    wait_port(ours_port, ours)

    ng_port = free_port()
    ng_dir = os.path.join(tmp, "nginx")
    os.mkdir(ng_dir)
    conf = os.path.join(ng_dir, "nginx.conf")
    with open(conf, "w") as f:
        f.write("""load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
worker_processes 1;
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
    location = /mutate-v1-pod { echo_read_request_body; default_type application/json; echo -n '%(body)s'; }
  }
}
""" % {"d": ng_dir, "port": ng_port, "c": certs, "body": CONST})
    ng = subprocess.Popen(["nginx", "-c", conf, "-p", ng_dir], stderr=subprocess.DEVNULL)
    procs.append(ng)
    wait_port(ng_port, ng)
    ng_pids = [int(p) for p in subprocess.run(["pgrep", "-P", str(ng.pid)], capture_output=True,
                                              text=True).stdout.split()] + [ng.pid]

    print("server: wrk -t1 -c4 -d%ds, HTTP/1.1 keep-alive over TLS, one event loop each (%s)" %
          (SECONDS, time.strftime("%Y-%m-%d %H:%M")))
    print("%-28s %10s %9s %9s %12s %9s" % ("scenario", "req/s", "p50 ms", "p99 ms", "CPU us/req", "errors"))
    for label, body in (("review ~3 KB", small), ("review ~60 KB", big)):
        size = os.path.getsize(body)
        r_ng = run_wrk(ng_port, "/mutate-v1-pod", body, ng_pids)
        r_us = run_wrk(ours_port, "/mutate-v1-pod", body, [ours.pid])
        for who, r in (("nginx floor", r_ng), ("otel-webhook", r_us)):
            print("%-28s %10.0f %9.3f %9.3f %12.1f %9d" % ("%s, %s (%d B)" % (who, label, size), r["rps"], r["p50"],
                                                           r["p99"], r["cpu_us"], r["errors"]))
        print("  ratio to the floor: throughput %.2f, CPU per request %.2f" % (r_us["rps"] / r_ng["rps"],
                                                                              r_us["cpu_us"] / r_ng["cpu_us"]))
    print("peak RSS: otel-webhook %.1f MiB, nginx worker %.1f MiB" %
          (peak_rss_kib(ours.pid) / 1024, max(peak_rss_kib(p) for p in ng_pids) / 1024))
finally:
    for p in procs:
        p.terminate()
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
    shutil.rmtree(tmp, ignore_errors=True)
