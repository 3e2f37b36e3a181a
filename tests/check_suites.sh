#!/bin/sh
# tests/check_suites.sh [SUITES] - holds tests/suites (SUITES) and
# tests/unit/ to each other before a suite runs: every unit suite listed
# there exists as tests/unit/NAME.c, and every tests/unit/test_*.c is
# listed. A suite deleted would otherwise just not run, and one added but
# not listed would never run; either prints a FAIL line naming it and
# exits 1.
set -u
suites=${1:-tests/suites}
bad=0
for name in $(awk '$1 == "unit" {print $2}' "$suites"); do
    if [ ! -f "tests/unit/$name.c" ]; then
        echo "FAIL unit-$name: tests/unit/$name.c is missing ($suites lists it)"
        bad=1
    fi
done
for f in tests/unit/test_*.c; do
    [ -f "$f" ] || continue
    name=$(basename "$f" .c)
    if ! awk -v n="$name" '$1 == "unit" && $2 == n {found = 1} END {exit !found}' "$suites"; then
        echo "FAIL unit-$name: $f is not listed in $suites, so no target would run it"
        bad=1
    fi
done
exit $bad
