#!/bin/sh
# tests/unit/run_check.sh RESULTS_FILE COMMAND [ARG...] - runs one Check
# suite (COMMAND, directly or under valgrind) and writes its counts to
# RESULTS_FILE for tests/summary.sh. A suite that crashes, or prints no
# Check summary, counts as one failure; one that runs no check at all
# records "0 0" (which tests/summary.sh refuses) and fails here too.
results=$1
shift
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -n 1)
checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
fails=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2/' | awk '{print $1+$2}')
[ -n "$checks" ] || { checks=1; fails=1; }
[ "$rc" = 0 ] || [ "$fails" != 0 ] || fails=1
if [ "$checks" = 0 ]; then
    echo "0 0" > "$results"
    echo "FAIL $(basename "$results"): no checks ran"
    exit 1
fi
echo "$((checks - fails)) $fails" > "$results"
exit $rc
