#!/usr/bin/python3
"""`otel-webhook validate` from the outside: the custom resources'
admission webhooks offline (server/cmd_validate.c). Exact lines for
refusals and warnings (FILE:LINE: KIND NS/NAME: MESSAGE), the summary,
exit statuses, kind: List items, folders and standard input, --resources
as the stored objects (updates), --config, the CRDs' own rules, and the
usage errors."""
import os
import subprocess
import sys

BIN = sys.argv[1]
RESULTS = sys.argv[2] if len(sys.argv) > 2 else None
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from testlib import Checks, scratch_dir  # noqa: E402

check = Checks("cli-validate")
tmp = scratch_dir("otel-validate-test-")
M = "the OpenTelemetry Collector mode is set to "
NULLS = ("Collector config spec.config has null objects: processors.batch:. For compatibility with other tooling, such "
         "as kustomize and kubectl edit, it is recommended to use empty objects e.g. batch: {}.")


def run(*args, stdin=None):
    p = subprocess.run([BIN, "validate", *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def write(name, text):
    path = os.path.join(tmp, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


def collector(name, spec="", ns=None, api="v1beta1", config=None):
    meta = "{name: %s%s}" % (name, ", namespace: %s" % ns if ns else "")
    cfg = config or ("  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {debug: {}}\n"
                     "    service: {pipelines: {t: {receivers: [otlp], exporters: [debug]}}}\n")
    return "apiVersion: opentelemetry.io/%s\nkind: OpenTelemetryCollector\nmetadata: %s\nspec:\n%s%s" % (
        api, meta, spec, cfg)


_rc, USAGE, _err = run("--help")
check("help: exit 0, usage on stdout", _rc == 0 and _err == "" and USAGE.startswith(
    "usage: otel-webhook validate -f FILE|DIR|- [-f ...] [-R] [--resources DIR]... [--namespace NS]\n"), USAGE[:200])

# Everything fine: exit 0, only the summary.
good = write("good.yaml", collector("fine", "  mode: deployment\n") + "---\napiVersion: v1\nkind: ConfigMap\n"
             "metadata: {name: other}\n")
rc, out, err = run("-f", good)
check("valid: exit 0, the summary, nothing on stderr", rc == 0 and err == "" and
      out == "1 objects checked: 0 refused, 0 with warnings\n", (rc, out, err))

# Refusals and warnings, each with its file and line; Lists' items by their own line.
mixed = write("mixed.yaml", collector("side", "  mode: sidecar\n  tolerations: [{key: a}]\n", config=(
    "  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n    processors: {batch: null}\n"
    "    exporters: {debug: {}}\n    service: {pipelines: {t: {receivers: [otlp], processors: [batch], exporters: "
    "[debug]}}}\n")) + """---
apiVersion: v1
kind: List
items:
- apiVersion: opentelemetry.io/v1alpha1
  kind: Instrumentation
  metadata: {name: inst, namespace: shop}
  spec:
    sampler: {type: traceidratio, argument: "2"}
- apiVersion: opentelemetry.io/v1alpha1
  kind: Instrumentation
  metadata: {name: tls}
  spec:
    sampler: {type: always_on}
    exporter: {endpoint: "https://c:4317"}
""")
rc, out, err = run("-f", mixed)
check("refused: exit 1", rc == 1, (rc, err))
check("refused and warned: exact lines, in order", err ==
      "%s:1: warning: OpenTelemetryCollector default/side: %s\n" % (mixed, NULLS) +
      "%s:1: OpenTelemetryCollector default/side: %s" % (mixed, M) +
      "sidecar, which does not support the attribute 'tolerations'\n"
      "%s:16: Instrumentation shop/inst: spec.sampler.argument should be in rage [0..1]: 2\n" % mixed +
      "%s:21: warning: Instrumentation default/tls: exporter is using https:// but exporter.tls is unset\n" % mixed,
      err)
check("refused: the summary", out == "3 objects checked: 2 refused, 2 with warnings\n", out)

# v1alpha1 collectors (config as a string) are converted, then checked; the
# CRD's own rules are checked offline too; the defaulting's refusals too.
alpha = write("alpha.yaml", collector("old", "  mode: deployment\n  autoscaler: {maxReplicas: 0}\n", api="v1alpha1",
                                      config="  config: |\n    receivers: {otlp: {protocols: {grpc: {}}}}\n"
                                             "    exporters: {debug: {}}\n"
                                             "    service: {pipelines: {t: {receivers: [otlp], exporters: [debug]}}}\n")
              + "---\n" + collector("job", "  mode: job\n") + "---\n" +
              collector("kafka", config="  config:\n    receivers: {otlp: {protocols: {kafka: {}}}}\n"
                                        "    service: {pipelines: {t: {receivers: [otlp]}}}\n") + "---\n" +
              collector("typed", "  replicas: three\n"))
rc, out, err = run("-f", alpha, "--namespace", "obs")
check("v1alpha1, schema, defaulting and type refusals", rc == 1 and err ==
      "%s:1: OpenTelemetryCollector obs/old: spec.autoscaler.maxReplicas in body should be greater than or equal to 1\n"
      % alpha +
      "%s:12: OpenTelemetryCollector obs/job: spec.mode: Unsupported value: \"job\": supported values: \"daemonset\", "
      "\"deployment\", \"sidecar\", \"statefulset\"\n" % alpha +
      "%s:22: OpenTelemetryCollector obs/kafka: unknown protocol set: kafka\n" % alpha +
      "%s:30: OpenTelemetryCollector obs/typed: spec.replicas: expected an integer, got a string\n" % alpha, err)

# --resources: the stored objects; the input is then an update of them.
stored = write("stored/col.yaml", collector("fine", "  mode: daemonset\n", ns="default"))
rc, out, err = run("-f", good, "--resources", os.path.dirname(stored))
check("an update of a stored object: the mode may not change", rc == 1 and err ==
      "%s:1: OpenTelemetryCollector default/fine: %sdaemonset, which does not support modification\n" % (good, M),
      (rc, err))
rc, out, err = run("-f", good, "--resources", os.path.dirname(stored), "--namespace", "elsewhere")
check("--resources: another namespace is another object", rc == 0 and err == "", (rc, err))

# --config: fips-disabled-components, and the default images the
# unupgradable-version check compares with.
cfg = write("config.yaml", "fips-disabled-components: exporter.debug\n"
            "auto-instrumentation-java-image: ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.34.0\n")
java = write("java.yaml", "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: j}\nspec:\n"
             "  sampler: {type: always_on}\n"
             "  java: {image: ghcr.io/open-telemetry/opentelemetry-operator/autoinstrumentation-java:1.33.0}\n")
rc, out, err = run("-f", good, "-f", java)
check("default images: an upgrade would cross 2.0.0: warned", rc == 0 and err ==
      "%s:1: warning: Instrumentation default/j: java image ghcr.io/open-telemetry/opentelemetry-operator/"
      "autoinstrumentation-java:1.33.0 is at a version that cannot be automatically upgraded. Java instrumentation "
      "2.0.0 contains breaking HTTP semantic convention changes. See "
      "https://opentelemetry.io/blog/2023/http-conventions-declared-stable/ for a general description of the "
      "changes. To upgrade, manually set the image on this Instrumentation resource to 2.0.0 or higher.\n" % java,
      (rc, err))
rc, out, err = run("-f", good, "-f", java, "--config", cfg)
check("--config: FIPS refusal; an older default image: no warning", rc == 1 and err ==
      "%s:1: OpenTelemetryCollector default/fine: the collector configuration contains not FIPS compliant components: "
      "[debug]. Please remove it from the config\n" % good, (rc, err))

# Folders, -R and standard input, as inject reads them.
write("tree/a.yaml", collector("a"))
write("tree/sub/b.yaml", collector("b", "  mode: sidecar\n  affinity: {}\n"))
tree = os.path.join(tmp, "tree")
rc, out, err = run("-f", tree)
check("a folder: its files only", rc == 0 and out == "1 objects checked: 0 refused, 0 with warnings\n", (rc, out))
rc, out, err = run("-f", tree, "-R")
check("-R: subfolders too, FOLDER/NAME in messages", rc == 1 and err ==
      "%s/sub/b.yaml:1: OpenTelemetryCollector default/b: %ssidecar, which does not support the attribute 'affinity'\n"
      % (tree, M), (rc, err))
rc, out, err = run("-f", "-", stdin=collector("s", "  mode: sidecar\n  priorityClassName: high\n"))
check("standard input: <stdin>", rc == 1 and err == "<stdin>:1: OpenTelemetryCollector default/s: %ssidecar, which "
      "does not support the attribute 'priorityClassName'\n" % M, (rc, err))

# Bad input: FILE:LINE: reason, exit 1, the rest still checked.
broken = write("broken.yaml", "kind: [\n")
rc, out, err = run("-f", broken, "-f", good)
check("a file that does not parse: exit 1, the others checked", rc == 1 and
      err == "%s:2: did not find expected node content\n" % broken and
      out == "1 objects checked: 0 refused, 0 with warnings\n", (rc, out, err))
rc, out, err = run("-f", good, "--config", os.path.join(tmp, "nope.yaml"))
check("an unreadable settings file: exit 1", rc == 1 and "nope.yaml: cannot read: No such file or directory" in err,
      (rc, err))

# Every refusal of an object, not only the first the webhook answers: all
# of the schema's (as the API server lists them, and then no rule, since no
# webhook is called), else every rule's; each on its own line.
cfg = ("  config:\n    receivers: {otlp: {protocols: {grpc: {}}}}\n    exporters: {debug: {}}\n"
       "    service: {pipelines: {t: {receivers: [otlp], exporters: [debug]}}}\n")
many = write("many.yaml", collector("schema", "  mode: sidecar\n  upgradeStrategy: sometimes\n  managementState: maybe\n"
                                              "  tolerations: [{key: a, operator: Exists}]\n") + "---\n" +
             collector("rules", "  mode: sidecar\n  tolerations: [{key: a, operator: Exists}]\n  affinity: {}\n"
                                "  ingress: {type: ingress}\n") + "---\n" +
             "apiVersion: opentelemetry.io/v1alpha1\nkind: Instrumentation\nmetadata: {name: inst}\nspec:\n"
             "  sampler: {type: traceidratio, argument: '2'}\n"
             "  java: {volumeClaimTemplate: {spec: {}}, volumeLimitSize: 1Gi}\n"
             "  nodejs: {volumeClaimTemplate: {spec: {}}, volumeLimitSize: 1Gi}\n")
rc, out, err = run("-f", many)
want = "".join("%s:%d: %s\n" % (many, line, msg) for line, msg in (
    (1, 'OpenTelemetryCollector default/schema: spec.upgradeStrategy: Unsupported value: "sometimes": supported '
        'values: "automatic", "none"'),
    (1, 'OpenTelemetryCollector default/schema: spec.managementState: Unsupported value: "maybe": supported values: '
        '"managed", "unmanaged"'),
    (14, "OpenTelemetryCollector default/rules: " + M + "sidecar, which does not support the attribute 'tolerations'"),
    (14, "OpenTelemetryCollector default/rules: " + M + "sidecar, which does not support the attribute 'affinity'"),
    (14, "OpenTelemetryCollector default/rules: the OpenTelemetry Spec Ingress configuration is incorrect. Ingress can "
         "only be used in combination with the modes: deployment, daemonset, statefulset"),
    (27, "warning: Instrumentation default/inst: spec.java.volumeSizeLimit is deprecated and will be removed in a "
         "future release; use spec.java.volume.size instead"),
    (27, "warning: Instrumentation default/inst: spec.nodejs.volumeSizeLimit is deprecated and will be removed in a "
         "future release; use spec.nodejs.volume.size instead"),
    (27, "Instrumentation default/inst: spec.sampler.argument should be in rage [0..1]: 2"),
    (27, "Instrumentation default/inst: spec.java.volumeClaimTemplate and spec.java.volumeSizeLimit cannot both be "
         "defined: unable to resolve volume size"),
    (27, "Instrumentation default/inst: spec.nodejs.volumeClaimTemplate and spec.nodejs.volumeSizeLimit cannot both "
         "be defined: unable to resolve volume size")))
check("every refusal of an object, each on its line", (rc, out, err) == (
    1, "3 objects checked: 3 refused, 1 with warnings\n", want), (rc, out, err))

# The repository's own examples are what a user copies first: not one
# warning (the Instrumentation sets spec.sampler, as the operator asks).
rc, out, err = run("-f", "examples", "-R")
check("examples/: no refusal, no warning", (rc, out, err) == (
    0, "3 objects checked: 0 refused, 0 with warnings\n", ""), (rc, out, err))

# Usage errors: the flag and the problem, then where the usage is; exit 2.
for args, line in [
        ((), "-f is required"),
        (("-f", good, "--bogus"), "unknown option --bogus"),
        (("-f",), "-f needs a value"),
        (("-f", good, "--resources", good), "--resources %s: Not a directory" % good),
        (("-f", "-", "-f", "-"), "-f -: standard input can be read only once"),
        (("-f", good, "stray"), 'unexpected argument "stray"'),
        (("-f", good, "--namespace", ""), "--namespace must not be empty"),
]:
    rc, out, err = run(*args, stdin="")
    check("usage error %s" % (args,), rc == 2 and out == "" and err == "otel-webhook validate: %s\n"
          "Run 'otel-webhook validate --help' for usage.\n" % line,
          (rc, err[:300]))
# A missing file is bad input (exit 1), as inject and otel-reconcile render say it.
missing = os.path.join(tmp, "missing.yaml")
rc, out, err = run("-f", missing)
check("a missing file: exit 1, the file named", rc == 1 and
      err == "%s: cannot read: No such file or directory\n" % missing, (rc, out, err))

p = subprocess.run([BIN, "--help"], capture_output=True, text=True)
check("the command list names validate", "  validate  check collectors and Instrumentations as the webhook would, "
      "offline\n" in p.stdout, p.stdout)
sys.exit(check.finish(RESULTS))
