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

"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
