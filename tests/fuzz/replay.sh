#!/bin/sh
# tests/fuzz/replay.sh RESULTS_FILE TARGET DIR... [-- TARGET DIR...]... -
# runs each libFuzzer TARGET once over every file of its DIRs (the inputs
# that once failed, the seed corpus): a finding that comes back, under
# ASan, UBSan and the target's own invariants, fails `make test`. Writes
# "replayed failed" to RESULTS_FILE (an input counts as passed when its
# target exits 0 on it). A DIR that is missing or holds no input fails the
# run, named, before anything is replayed: a folder renamed or removed must
# not shrink the replay silently.
set -u
results=$1
shift
passed=0 failed=0
# The folders first, all of them, so that every one missing is named.
missing=0
expect_target=1
for arg in "$@"; do
    if [ "$arg" = -- ]; then expect_target=1; continue; fi
    if [ "$expect_target" = 1 ]; then expect_target=0; continue; fi
    if [ ! -d "$arg" ]; then
        echo "FAIL fuzz-replay: $arg is missing"
        missing=$((missing + 1))
    elif [ -z "$(find "$arg" -maxdepth 1 -type f -print -quit)" ]; then
        echo "FAIL fuzz-replay: $arg holds no input"
        missing=$((missing + 1))
    fi
done
if [ "$missing" != 0 ]; then
    echo "fuzz-replay: 0 passed, $missing failed"
    echo "0 $missing" > "$results"
    exit 1
fi
while [ $# -gt 0 ]; do
    target=$1
    shift
    inputs=""
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        for f in "$1"/*; do [ -f "$f" ] && inputs="$inputs $f"; done
        shift
    done
    [ $# -gt 0 ] && shift # the --
    for f in $inputs; do
        if out=$(ASAN_OPTIONS=detect_leaks=1 "$target" "$f" 2>&1); then
            passed=$((passed + 1))
        else
            failed=$((failed + 1))
            echo "FAIL $(basename "$target") $f"
            printf '%s\n' "$out" | tail -30
        fi
    done
done
echo "fuzz-replay: $passed passed, $failed failed"
echo "$passed $failed" > "$results"
[ "$failed" = 0 ]
