#!/bin/sh
# tests/bench/callgrind.sh - instructions per admission (make bench).
#
# Runs bench_engine under callgrind once per review bench, BENCH_RUNS times
# through its review_once/cr_once functions, collecting only inside them,
# and prints instructions per review and the ratio to the pod review's.
# Instruction counts do not depend on the machine's load, which the timed
# figures do.
# Usage: callgrind.sh BENCH_ENGINE [RUNS]
set -eu
bin=$1
runs=${2:-20}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pod=0
for label in "parse+mutate+respond" "collector: default (patch)" "collector: default+validate" \
             "instrumentation: default" "instrumentation: validate"; do
    f=$out/cg
    BENCH_RUNS=$runs valgrind --tool=callgrind --callgrind-out-file="$f" --toggle-collect=review_once \
        --toggle-collect=cr_once "$bin" tests/bench "$label" >/dev/null 2>"$out/err" || {
        cat "$out/err" >&2; exit 1; }
    ir=$(awk '/^(summary|totals):/ {print $2; exit}' "$f")
    per=$((ir / runs))
    [ "$pod" -eq 0 ] && pod=$per
    awk -v l="$label" -v p="$per" -v pod="$pod" -v n="$runs" \
        'BEGIN { printf "callgrind %-30s %10d instructions/review  %5.2fx the pod review  (%d runs)\n", l, p, p / pod, n }'
    rm -f "$f"
done
