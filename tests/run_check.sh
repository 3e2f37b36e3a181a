#!/bin/sh
# Runs one Check suite and records its counts for the closing summary line.
out=$("$1" 2>&1); rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+%: Checks: ' | tail -n 1)
checks=$(echo "$line" | sed -E 's/.*Checks: ([0-9]+).*/\1/')
fails=$(echo "$line" | sed -E 's/.*Failures: ([0-9]+), Errors: ([0-9]+).*/\1 \2/' | awk '{print $1+$2}')
[ -n "$checks" ] || { checks=1; fails=1; }
[ "$rc" = 0 ] || [ "$fails" != 0 ] || fails=1
echo "$((checks - fails)) $fails" >> "$2"
exit $rc
