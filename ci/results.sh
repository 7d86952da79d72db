#!/bin/bash
# ci/results.sh RESULTS SECONDS: the closing lines of `make check` and
# `make check-debug` from a results file (one "ok"/"not ok" line per
# result): the time, the failures, and 'N passed, N failed' (', N skipped'
# when some skipped). Exits non-zero on a failure or when nothing passed.
set -uo pipefail
results=$1
passed=$(grep -c -E '^ok ' "$results" | tr -d ' ')
skipped=$(grep -c -E '^ok .*# SKIP' "$results" | tr -d ' ')
failed=$(grep -c -E '^not ok ' "$results" | tr -d ' ')
passed=$((passed - skipped))
echo "== ${2}s; failures:"
grep -E '^not ok ' "$results" || echo "(none)"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
