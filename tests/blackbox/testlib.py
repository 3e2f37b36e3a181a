"""tests/blackbox/testlib.py - what the black-box test scripts share: counting checks,
the closing "N passed, M failed" line and its record for tests/summary.sh,
a free loopback port, scratch folders removed at exit,
and the sanitizer settings for running our binaries."""
import atexit
import json
import os
import shutil
import socket
import sys
import tempfile
import time

# h2o 2.2.5 never frees its thread-local recycle lists nor (evloop build) the
# memory of a destroyed multithread queue; nothing of ours may leak.
LSAN_SUPP = "leak:h2o_mem_alloc_recycle\nleak:h2o_multithread_create_queue\n"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "runtime error", "ERROR: LeakSanitizer")


def log_records(text):
    """The JSON log lines of a server's stderr, as objects; other lines
    (sanitizer reports, text-format logs) are left out."""
    recs = []
    for line in text.splitlines():
        try:
            o = json.loads(line)
        except ValueError:
            continue
        if isinstance(o, dict):
            recs.append(o)
    return recs


def cpu_seconds(pid):
    """CPU time (user + system) process pid has used so far: what a bound
    on work is checked with, where wall-clock time would measure the
    machine's other load too."""
    import os
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def yaml_alias_bomb(depth, tail):
    """A collector config of a few hundred bytes whose aliases expand
    10^depth-fold: `a` is ten 20-character strings, each next anchor ten
    aliases of the one before (depth of them), and `g` lists the last one
    `tail` times."""
    lines = ["receivers:", "  a: &a [%s]" % ",".join(["x" * 20] * 10)]
    prev = "a"
    for name in "bcdefgh"[:depth]:
        lines.append("  %s: &%s [%s]" % (name, name, ",".join(["*" + prev] * 10)))
        prev = name
    lines.append("  g: [%s]" % ",".join(["*" + prev] * tail))
    return "\n".join(lines) + "\n"


# TESTS_VERBOSE=1 prints each passing check too (its name holds the
# figures some checks measure).
VERBOSE = os.environ.get("TESTS_VERBOSE") == "1"


def wait_for(fn, timeout, interval=0.02):
    """Polls fn until it returns a true value or timeout seconds pass;
    returns (value, seconds waited). The sleep is the poll interval, never
    synchronisation: the condition is what is waited for."""
    t0 = time.monotonic()
    while True:
        v = fn()
        if v or time.monotonic() - t0 >= timeout:
            return v, time.monotonic() - t0
        time.sleep(interval)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scratch_dir(prefix):
    """A temporary folder for one run, removed when the script exits."""
    d = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, d, True)
    return d


class Checks:
    """check(name, cond, detail): counts, prints failures, returns cond."""

    def __init__(self, suite, detail_limit=2000):
        self.suite = suite
        self.passed = self.failed = 0
        self.detail_limit = detail_limit

    def __call__(self, name, cond, detail=""):
        if cond:
            self.passed += 1
            if VERBOSE:
                print("ok %s" % name, flush=True)
        else:
            self.failed += 1
            print("FAIL %s %s" % (name, str(detail)[: self.detail_limit]))
            sys.stdout.flush()
        return cond

    def finish(self, results_path=None):
        """Prints the closing line, records the counts, returns the exit status."""
        print("%s: %d passed, %d failed" % (self.suite, self.passed, self.failed))
        if results_path:
            with open(results_path, "a") as f:
                f.write("%d %d\n" % (self.passed, self.failed))
        return 1 if self.failed else 0

    def run(self, main, results_path=None):
        """Runs main(); a crash of the test itself is a failure, with its trace.
        Exits with the suite's status."""
        try:
            main()
        except Exception as e:  # noqa: BLE001
            import traceback

            traceback.print_exc()
            self("test harness", False, repr(e))
        sys.exit(self.finish(results_path))
