#!/bin/bash
# The body of `make check` after deps and build: host unit tests, then the
# guest selftests. Prints every result and ends with 'N passed, N failed'
# (', N skipped' when some skipped); exits non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RESULTS="$top/build/check/results.txt"
mkdir -p "$(dirname "$RESULTS")"
: > "$RESULTS"
start=$SECONDS

echo "== host unit tests"
"$top/ci/host-tests.sh" "$top/build/userspace"
echo "== static checks"
"$top/ci/lint.sh"
echo "== guest selftests (kernel $("$top/ci/kver.sh"))"
"$top/ci/selftests.sh" "$@"

passed=$(grep -c -E '^ok ' "$RESULTS" | tr -d ' ')
skipped=$(grep -c -E '^ok .*# SKIP' "$RESULTS" | tr -d ' ')
failed=$(grep -c -E '^not ok ' "$RESULTS" | tr -d ' ')
passed=$((passed - skipped))
echo "== $((SECONDS - start))s; failures:"
grep -E '^not ok ' "$RESULTS" || echo "(none)"
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
