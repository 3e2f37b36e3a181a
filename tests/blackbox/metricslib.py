"""tests/blackbox/metricslib.py - the webhook's /metrics as the suites check
it: the Prometheus text format parsed into families, held to the naming
rules the server keeps (server/metrics.h), and compared with docs/metrics.md's
metrics tables, so that the table, the alerts built on it (deploy/monitoring)
and the server cannot drift apart."""
import os
import re
import ssl
import subprocess

SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count")}


def parse(text):
    """({family: {"help", "type", "samples": [(name, {label: value}, value)]}},
    [problems]): every sample must follow its family's HELP and TYPE."""
    fams, problems, cur = {}, [], None
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_ = line[7:].partition(" ")
            if name in fams:
                problems.append("%s: HELP twice" % name)
            fams[name] = {"help": help_, "type": None, "samples": []}
            cur = name
        elif line.startswith("# TYPE "):
            name, _, typ = line[7:].partition(" ")
            if name != cur or fams[name]["type"] is not None:
                problems.append("%s: TYPE without its HELP just before" % name)
            else:
                fams[name]["type"] = typ
        elif not line or line.startswith("#"):
            problems.append("unexpected line %r" % line)
        else:
            m = SAMPLE.match(line)
            if not m:
                problems.append("not a sample: %r" % line)
                continue
            name, ltext, value = m.group(1), m.group(2) or "", m.group(3)
            labels, pos = {}, 0
            for lm in LABEL.finditer(ltext):
                if lm.start() != pos:
                    break
                labels[lm.group(1)] = lm.group(2)
                pos = lm.end()
            if pos != len(ltext):
                problems.append("bad labels: %r" % line)
            f = fams.get(cur)
            if f is None or name not in [cur] + [cur + s for s in SUFFIXES.get(f["type"], ())]:
                problems.append("sample outside its family: %r" % line)
                continue
            try:
                f["samples"].append((name, labels, float(value)))
            except ValueError:
                problems.append("bad value: %r" % line)
    return fams, problems


def label_names(fam, name):
    """The label names of family `name`: the same on every sample (le of a
    histogram's buckets aside), or None when they differ."""
    sets = {tuple(sorted(k for k in labels if not (s == name + "_bucket" and k == "le")))
            for s, labels, _ in fam["samples"]}
    return sets.pop() if len(sets) == 1 else (() if not sets else None)


def conventions(fams):
    """What breaks Prometheus' naming rules (as server/metrics.h keeps them)."""
    problems = []
    for name, f in fams.items():
        t = f["type"]
        if not name.startswith("otel_webhook_"):
            problems.append("%s: not in the otel_webhook_ namespace" % name)
        if t not in ("counter", "gauge", "histogram"):
            problems.append("%s: type %s" % (name, t))
        if not f["help"]:
            problems.append("%s: no HELP text" % name)
        if (t == "counter") != name.endswith("_total"):
            problems.append("%s: a counter's name and only a counter's ends in _total" % name)
        if t == "gauge" and name.endswith("_seconds") and not name.endswith("_timestamp_seconds"):
            problems.append("%s: a gauge of seconds that is not a timestamp (a duration that grows between "
                            "scrapes: export the Unix time it started instead)" % name)
        if label_names(f, name) is None:
            problems.append("%s: more than one label set: %s" % (name, sorted(
                {tuple(sorted(lab)) for _, lab, _ in f["samples"]})))
        for s, labels, v in f["samples"]:
            if v < 0:
                problems.append("%s%s: %g, a negative value (a sentinel?)" % (s, labels, v))
            if s.endswith("_bucket") and "le" not in labels:
                problems.append("%s: a bucket without le" % s)
    return problems


def doc_tables(doc_path):
    """The metrics tables of docs/metrics.md's "## Metrics" section, in order:
    [{family: (type, (label names, sorted))}]. A row is
    | `name` | type | `label`, `label` or - | meaning |."""
    text = open(doc_path).read()
    sec = text.split("\n## Metrics\n", 1)[-1].split("\n## ", 1)[0]
    tables, cur = [], None
    for line in sec.splitlines():
        if not line.startswith("|"):
            cur = None
            continue
        m = re.match(r"^\| `(otel_webhook_[a-z0-9_]+)` \| (counter|gauge|histogram) \| ([^|]*) \|", line)
        if not m:
            continue
        if cur is None:
            cur = {}
            tables.append(cur)
        cur[m.group(1)] = (m.group(2), tuple(sorted(re.findall(r"`([a-z_][a-z0-9_]*)`", m.group(3)))))
    return tables


def against_doc(fams, table):
    """Differences between the families served and a docs/metrics.md table."""
    problems = []
    for name in sorted(set(table) - set(fams)):
        problems.append("%s: in docs/metrics.md, not served" % name)
    for name in sorted(set(fams) - set(table)):
        problems.append("%s: served, not in docs/metrics.md's table" % name)
    for name in sorted(set(fams) & set(table)):
        got = (fams[name]["type"], label_names(fams[name], name))
        if got[1] == () and not fams[name]["samples"]:
            got = (got[0], table[name][1])  # no sample now: its labels cannot be seen
        if got != table[name]:
            problems.append("%s: served as %s, docs/metrics.md says %s" % (name, got, table[name]))
    return problems


def build_info_line(binary):
    """The build_info sample `binary` must serve: our version, the h2o
    headers', and the OpenSSL and json-c it runs with."""
    version = subprocess.run([binary, "version"], capture_output=True, text=True).stdout.split()[-1]
    with open("/usr/include/h2o/version.h") as f:
        h2o = re.search(r'#define H2O_VERSION "([^"]+)"', f.read()).group(1)
    openssl = ssl.OPENSSL_VERSION.split()[1]  # "OpenSSL 3.0.19 27 Jan 2026": the library python runs with too
    jsonc = subprocess.run(["pkg-config", "--modversion", "json-c"], capture_output=True, text=True).stdout.strip()
    return ('otel_webhook_build_info{version="%s",h2o_version="%s",openssl_version="%s",json_c_version="%s"} 1'
            % (version, h2o, openssl, jsonc))


def check_exposition(check, name, text, root, binary, live=False):
    """The whole of one /metrics answer: well formed, Prometheus' naming
    rules, exactly the families of docs/metrics.md's tables (the second one
    too with a cluster), the build_info sample. Returns the families."""
    fams, problems = parse(text)
    check(name + " metrics: the text format parses", not problems, problems[:5])
    problems = conventions(fams)
    check(name + " metrics: naming conventions (units, _total, timestamps, one label set, no sentinels)",
          not problems, problems[:5])
    tables = doc_tables(os.path.join(root, "docs", "metrics.md"))
    check(name + " metrics: docs/metrics.md has its two metrics tables", len(tables) == 2, len(tables))
    want = dict(tables[0]) if tables else {}
    if live and len(tables) > 1:
        want.update(tables[1])
    problems = against_doc(fams, want)
    check(name + " metrics: exactly docs/metrics.md's families, types and labels", not problems, problems[:5])
    check(name + " metrics: build_info", build_info_line(binary) in text.splitlines(),
          [line for line in text.splitlines() if "build_info" in line])
    return fams
