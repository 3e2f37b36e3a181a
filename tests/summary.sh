#!/bin/sh
# The closing line of `make test`: every suite's counts added up.
awk '{p+=$1; f+=$2} END {printf "%d passed, %d failed\n", p, f; exit (f>0)}' "${1:-build/test-results.txt}"
