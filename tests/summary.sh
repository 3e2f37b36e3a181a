#!/bin/sh
# tests/summary.sh RESULTS_DIR NAME... - the closing line of `make test`:
# the counts every suite wrote to RESULTS_DIR/NAME ("passed failed" lines),
# added up. A suite named here that wrote nothing is a failure: a suite
# deleted or skipped must not pass silently.
set -u
dir=$1
shift
missing=0
for name in "$@"; do
    if [ ! -s "$dir/$name" ]; then
        echo "FAIL $name: recorded no results"
        missing=$((missing + 1))
    fi
done
cat "$dir"/* 2>/dev/null | awk -v missing="$missing" \
    '{p+=$1; f+=$2} END {f+=missing; printf "%d passed, %d failed\n", p, f; exit (f>0)}'
