#!/bin/sh
# tests/summary.sh RESULTS_DIR NAME... - the closing line of `make test`:
# the counts every suite wrote to RESULTS_DIR/NAME ("passed failed" lines),
# added up. The NAMEs are tests/suites' results. A suite named here fails
# the run when it wrote nothing (deleted or skipped), when a line of it is
# not two counts, and when a line records no check at all ("0 0": a suite
# whose checks were emptied, or that stopped before its first): neither
# may pass silently.
set -u
dir=$1
shift
bad=0
for name in "$@"; do
    file=$dir/$name
    if [ ! -s "$file" ]; then
        echo "FAIL $name: recorded no results"
        bad=$((bad + 1))
        continue
    fi
    why=$(awk '!/^[0-9]+ [0-9]+$/ {print "line " NR " is not \"passed failed\": " $0; exit}
               $1 + $2 == 0 {print "line " NR " recorded no checks (0 passed, 0 failed)"; exit}' "$file")
    if [ -n "$why" ]; then
        echo "FAIL $name: $why"
        bad=$((bad + 1))
    fi
done
cat "$dir"/* 2>/dev/null | awk -v bad="$bad" \
    '/^[0-9]+ [0-9]+$/ {p+=$1; f+=$2} END {f+=bad; printf "%d passed, %d failed\n", p, f; exit (f>0)}'
