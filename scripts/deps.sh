#!/bin/sh
# Dependency step shared by `make run` and `make test`: every library the
# build needs is found through pkg-config; missing ones are installed from
# Debian when we are root, otherwise we print the exact command and stop.
set -u
PKGS="libh2o-evloop-dev libssl-dev libjson-c-dev libyaml-dev check libcurl4-openssl-dev libmimalloc-dev pkg-config"
# Tools the test suite drives (patch round trip, YAML checks); `bench` mode
# adds wrk and nginx (the floor the server is compared with) and GNU time
# (the peak RSS of a run-to-completion child, see tests/bench/reconcile_bench.py)
# and valgrind (instructions per admission, tests/bench/callgrind.sh).
TEST_PKGS="python3 python3-jsonpatch python3-yaml"
mode=${1:-build}

missing=""
if ! command -v pkg-config >/dev/null 2>&1; then
    missing="$PKGS"
else
    for pair in libh2o-evloop:libh2o-evloop-dev openssl:libssl-dev json-c:libjson-c-dev \
                yaml-0.1:libyaml-dev check:check libcurl:libcurl4-openssl-dev; do
        pc=${pair%%:*}; deb=${pair#*:}
        pkg-config --exists "$pc" || missing="$missing $deb"
    done
fi
# mimalloc ships no pkg-config file: its header says it is there.
[ -f /usr/include/mimalloc.h ] || missing="$missing libmimalloc-dev"
# The compiler: make is needed to get here at all, cc is not.
command -v "${CC:-cc}" >/dev/null 2>&1 || missing="$missing gcc"
if [ "$mode" = test ]; then
    command -v /usr/bin/python3 >/dev/null 2>&1 || missing="$missing python3"
    # The openssl tool writes the test suites' odd certificates (expired, EC, foreign CAs).
    command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
    command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
    /usr/bin/python3 -c 'import jsonpatch' 2>/dev/null || missing="$missing python3-jsonpatch"
    /usr/bin/python3 -c 'import yaml' 2>/dev/null || missing="$missing python3-yaml"
    command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
    command -v clang >/dev/null 2>&1 || missing="$missing clang"
    # The fuzz targets that `make test` replays need clang's libFuzzer.
    if command -v clang >/dev/null 2>&1; then
        printf 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' |
            clang -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null || missing="$missing libclang-rt-dev"
    else
        missing="$missing libclang-rt-dev"
    fi
fi
# The real control plane's suite (make e2e, part of make test unless
# E2E=0) builds Kubernetes from Go modules: a Go new enough for its pins.
# Not a Debian package (bookworm's is too old): the check says what to do.
if [ "$mode" = test ] && [ "${E2E:-1}" != 0 ]; then
    sh "$(dirname "$0")/../tests/e2e/build-tools.sh" --check || exit 1
fi
if [ "$mode" = bench ]; then
    command -v wrk >/dev/null 2>&1 || missing="$missing wrk"
    command -v nginx >/dev/null 2>&1 || missing="$missing nginx-light"
    [ -f /usr/lib/nginx/modules/ngx_http_echo_module.so ] || missing="$missing libnginx-mod-http-echo"
    [ -x /usr/bin/time ] || missing="$missing time"
    command -v pgrep >/dev/null 2>&1 || missing="$missing procps"
    command -v openssl >/dev/null 2>&1 || missing="$missing openssl"
    # Instructions per request (tests/bench/callgrind_bench.py).
    command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
fi
[ -z "$missing" ] && exit 0

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
    echo "missing packages; run as root:" >&2
    echo "  apt-get update && $line" >&2
    exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null && apt-get install -y -qq --no-install-recommends $missing >/dev/null || {
    echo "deps: apt-get failed; run: apt-get update && $line" >&2; exit 1; }
