#!/bin/sh
# tests/deploy/run.sh RESULTS_FILE - the deploy/ suite (make deploy-test).
#
#   1. `kubectl kustomize` renders every overlay of deploy/overlays;
#   2. check.mjs (Node, dependencies pinned by tests/deploy/package-lock.json,
#      installed with `npm ci` into build/deploy-test/node): Kubernetes schema
#      validation, CRD schemas against examples, webhook safety, pod security,
#      RBAC against tests/deploy/expected-requests.jsonl and the requests the
#      fake API server recorded (build/fakeapi-requests.jsonl for the webhook,
#      build/fakeapi-reconcile-requests.jsonl for otel-reconcile; or
#      OTEL_FAKEAPI_LOG, OTEL_FAKEAPI_RECONCILE_LOG, OTEL_FAKEAPI_OUTDATED_LOG);
#   3. extra.py: make install layout vs deploy/Dockerfile, the self-managed
#      certificate script, the shipped settings file, README and docs/install.md
#      vs overlays.
# Prints "FAIL ..." lines, ends with "deploy: N passed, M failed", appends
# "N M" to RESULTS_FILE and exits 1 on any failure.
# kubectl: $KUBECTL, else the one on PATH; when there is none and we are root,
# Debian's kubernetes-client (kubectl 1.20, kustomize v2: deploy/ sticks to
# what it understands).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=${1:-$ROOT/build/results/deploy}
W=$ROOT/build/deploy-test
mkdir -p "$W"
# This run's files (several runs may share build/); the last run's stay in
# build/deploy-test/last for a look afterwards.
R=$(mktemp -d "$W/run.XXXXXX")
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL $*"; }
finish() {
  echo "deploy: $passed passed, $failed failed"
  echo "$passed $failed" >> "$RESULTS"
  rm -rf "$W/last" && mv "$R" "$W/last"
  [ "$failed" -eq 0 ]
  exit $?
}
as_root() { [ "$(id -u)" = 0 ]; }
apt_install() {
  as_root || return 1
  [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >/dev/null 2>&1; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}

# --- tools -------------------------------------------------------------------
KUBECTL=${KUBECTL:-$(command -v kubectl || true)}
if [ -z "$KUBECTL" ]; then
  echo "deploy: no kubectl, installing Debian's kubernetes-client"
  apt_install kubernetes-client && KUBECTL=$(command -v kubectl || true)
fi
[ -n "$KUBECTL" ] || { fail "no kubectl (run as root to install kubernetes-client)"; finish; }
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || apt_install nodejs npm
command -v node >/dev/null 2>&1 || { fail "no node (run as root to install nodejs npm)"; finish; }
echo "deploy: $($KUBECTL version --client 2>/dev/null | head -n 1), node $(node --version)"

# --- 1. render ---------------------------------------------------------------
mkdir -p "$R/rendered"
for dir in "$ROOT"/deploy/overlays/*/; do
  name=$(basename "$dir")
  if "$KUBECTL" kustomize "$dir" > "$R/rendered/$name.yaml" 2> "$R/rendered/$name.err"; then
    pass
  else
    fail "kubectl kustomize deploy/overlays/$name: $(grep -v '^# Warning' "$R/rendered/$name.err" | head -n 3)"
    rm -f "$R/rendered/$name.yaml"
  fi
done

# --- 2. node checks ----------------------------------------------------------
# The requests the fake API server recorded in the integration tests, when the
# suites left them there: the webhook's (tests/blackbox/cluster_test.py) and otel-reconcile's
export OTEL_FAKEAPI_LOG="${OTEL_FAKEAPI_LOG:-$ROOT/build/fakeapi-requests.jsonl}"
export OTEL_FAKEAPI_RECONCILE_LOG="${OTEL_FAKEAPI_RECONCILE_LOG:-$ROOT/build/fakeapi-reconcile-requests.jsonl}"
export OTEL_FAKEAPI_OUTDATED_LOG="${OTEL_FAKEAPI_OUTDATED_LOG:-$ROOT/build/fakeapi-outdated-requests.jsonl}"
N=$W/node
stamp=$(cat "$ROOT/tests/deploy/package.json" "$ROOT/tests/deploy/package-lock.json" | sha256sum | cut -c1-16)
if [ "$(cat "$N/.stamp" 2>/dev/null)" != "$stamp" ] || [ ! -d "$N/node_modules" ]; then
  rm -rf "$N" && mkdir -p "$N"
  cp "$ROOT/tests/deploy/package.json" "$ROOT/tests/deploy/package-lock.json" "$N/"
  if (cd "$N" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >"$N/npm.log" 2>&1); then
    echo "$stamp" > "$N/.stamp"
  else
    fail "npm ci (tests/deploy/package-lock.json): $(tail -n 3 "$N/npm.log")"
    finish
  fi
fi
cp "$ROOT/tests/deploy/check.mjs" "$ROOT/tests/deploy/rbac.mjs" "$ROOT/tests/deploy/strict.mjs" "$R/"
ln -s "$N/node_modules" "$R/node_modules"
node "$R/check.mjs" "$ROOT" "$R/rendered" > "$R/check.out" 2>&1
grep -v '^COUNTS ' "$R/check.out"
counts=$(grep '^COUNTS ' "$R/check.out" | tail -n 1)
if [ -n "$counts" ]; then
  set -- $counts
  passed=$((passed + $2)); failed=$((failed + $3))
else
  fail "check.mjs did not finish"
fi

# --- 3. the rest -------------------------------------------------------------
/usr/bin/python3 "$ROOT/tests/deploy/extra.py" "$ROOT" "$R" > "$R/extra.out" 2>&1
grep -v '^COUNTS ' "$R/extra.out"
counts=$(grep '^COUNTS ' "$R/extra.out" | tail -n 1)
if [ -n "$counts" ]; then
  set -- $counts
  passed=$((passed + $2)); failed=$((failed + $3))
else
  fail "extra.py did not finish"
fi
finish
