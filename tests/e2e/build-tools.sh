#!/bin/sh
# tests/e2e/build-tools.sh [--check|--background] [BUILD_DIR] - the control plane `make e2e` runs
# against: kube-apiserver, kube-controller-manager, kubectl and etcd built
# from the Go modules pinned in tests/e2e/tools/go.mod (and go.sum) into
# BUILD_DIR/k8s/VERSION/ (BUILD_DIR defaults to build). Only the Go module
# proxy is used; nothing else is downloaded. The binaries are rebuilt only
# when the pins, this script or the Go toolchain change: a stamp beside them
# holds the digest of all four, written after the last binary is in place.
# Prints the folder of the binaries on its last line. Fails, naming what to
# install, when the Go found is older than go.mod's `go` line.
set -eu
# --check: only the Go check below (scripts/deps.sh's, before anything is
# built), with the same message and exit status.
# --background: the Go check, then the build started niced in the background
# (log: BUILD_DIR/k8s-build.log) and an immediate return. `make test` starts
# it before its first suite, so the build (about 600 s of CPU, cold) uses
# the core the mostly single-threaded suites leave idle; the e2e step's own
# call then waits for it on the lock below and finds the binaries built.
check_only=false
background=false
case "${1:-}" in
    --check) check_only=true; shift ;;
    --background) background=true; shift ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
tools=$here/tools
build=${1:-build}
mkdir -p "$build"
build=$(cd "$build" && pwd)

# make's PATH may lack the toolchain's folder; the `go` machines keep it there.
GO=${GO:-$(command -v go || echo /usr/local/go/bin/go)}
# Never switch to another toolchain behind our back: a Go too old fails below
# with what to install, instead of a download the caller did not ask for. A
# GOTOOLCHAIN the caller set (go1.26.8, say) is theirs to choose.
export GOTOOLCHAIN=${GOTOOLCHAIN:-local}

# go.mod's `go` line, and the versions its require block pins (the tool
# block names the same modules without one).
pin() { awk -v m="$1" '$1 == m && $2 ~ /^v?[0-9]/ { print $2; exit }' "$tools/go.mod"; }
need=$(pin go)
k8s=$(pin k8s.io/kubernetes)
etcd=$(pin go.etcd.io/etcd/server/v3)
have=$("$GO" env GOVERSION 2>/dev/null || true)

# Is go$1 (1.26.8, 1.26.0, 1.27rc1) at least $2 (1.26.0)? Field by field,
# a missing patch read as 0 and a pre-release tail dropped.
version_ge() {
    echo "$1 $2" | awk '{
        n = split($1, a, "."); m = split($2, b, ".")
        for (i = 1; i <= 3; i++) {
            x = (i <= n) ? a[i] + 0 : 0; y = (i <= m) ? b[i] + 0 : 0
            if (x != y) exit !(x > y)
        }
        exit 0
    }'
}
if [ -z "$have" ] || ! version_ge "${have#go}" "$need"; then
    {
        echo "build-tools.sh: Kubernetes $k8s (tests/e2e/tools/go.mod) needs Go $need or newer;"
        echo "  found: ${have:-no go command} (${GO})"
        echo "  Debian bookworm's golang-go (1.19) is too old. Install one of:"
        echo "    - Go $need or newer at /usr/local/go, with /usr/local/go/bin in PATH (the project's"
        echo "      go machines carry go1.26.8 there), or set GO=/path/to/go for this script;"
        echo "    - with a Go of 1.21 or newer already installed: export GOTOOLCHAIN=go1.26.8"
        echo "      (the go command then takes that toolchain from the Go module proxy)."
        echo "  Or leave the real control plane's suite out: make test E2E=0"
    } >&2
    exit 1
fi
$check_only && exit 0

out=$build/k8s/$k8s
stamp=$out/.stamp
digest=$( { cat "$tools/go.mod" "$tools/go.sum" "$0"; echo "$have"; } | sha256sum | cut -d' ' -f1)
built() {
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$digest" ] &&
    [ -x "$out/kube-apiserver" ] && [ -x "$out/kube-controller-manager" ] &&
    [ -x "$out/kubectl" ] && [ -x "$out/etcd" ]
}
if $background; then
    built && exit 0
    nohup nice -n 10 sh "$0" "$build" > "$build/k8s-build.log" 2>&1 < /dev/null &
    echo "build-tools.sh: building Kubernetes $k8s in the background (log: $build/k8s-build.log)" >&2
    exit 0
fi
# One build at a time per BUILD_DIR: a second caller (make e2e while the
# background build runs) waits here, then finds the stamp written.
exec 9> "$build/k8s.lock"
if ! flock -n 9; then
    echo "build-tools.sh: waiting for the build already running (log: $build/k8s-build.log)" >&2
    flock 9
fi
if built; then
    echo "$out"
    exit 0
fi
rm -f "$stamp"
mkdir -p "$out"

# What `kubectl version` and /version report, set the way Kubernetes' own
# build does (hack/lib/version.sh, v1.37.2): a module build otherwise says
# v0.0.0-master. The build date is the tag's time, so two builds of one pin
# give the same binaries.
cd "$tools"
tagtime=$("$GO" list -m -f '{{.Time.UTC.Format "2006-01-02T15:04:05Z"}}' k8s.io/kubernetes)
major=${k8s#v}; major=${major%%.*}
minor=${k8s#v*.}; minor=${minor%%.*}
xflags=""
for pkg in k8s.io/client-go/pkg/version k8s.io/component-base/version; do
    xflags="$xflags -X $pkg.gitVersion=$k8s -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor"
    xflags="$xflags -X $pkg.gitTreeState=clean -X $pkg.buildDate=$tagtime"
done

echo "build-tools.sh: Kubernetes $k8s and etcd $etcd with $have into $out" >&2
start=$(date +%s)
# -mod=readonly: go.mod and go.sum are the pins; a build never rewrites them.
"$GO" mod download
t_dl=$(date +%s)
# -p 2: the machines have two cores, shared with whatever else runs.
flags="-p 2 -mod=readonly -trimpath -buildvcs=false"
"$GO" build $flags -ldflags="-s -w$xflags" -o "$out/" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubectl
# etcd's main package is its server module's root (server/main.go calls
# etcdmain.Main); `go build -o DIR/` would name it after the module.
"$GO" build $flags -ldflags="-s -w" -o "$out/etcd" go.etcd.io/etcd/server/v3
end=$(date +%s)
echo "$digest" > "$stamp"
echo "build-tools.sh: modules $((t_dl - start)) s, build $((end - t_dl)) s" >&2
echo "$out"
