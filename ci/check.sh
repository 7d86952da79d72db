#!/bin/bash
# The body of `make check` after deps and build: host unit tests, static
# checks (ci/lint.sh), then the guest selftests. Prints every result and
# ends with 'N passed, N failed' (', N skipped' when some skipped); exits
# non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RESULTS="$top/build/check/results.txt"
mkdir -p "$(dirname "$RESULTS")"
: > "$RESULTS"
start=$SECONDS

echo "== host unit tests"
"$top/ci/host-tests.sh" "$top/build/userspace"
# The static checks (ci/lint.sh, clang-tidy last: about 3 minutes of both
# CPUs) before the guests: beside them, even at idle priority, they slow the
# guests down by more than their own time (docs/results.md, "make check's
# time").
echo "== static checks"
"$top/ci/lint.sh" || grep -q '^not ok lint' "$RESULTS" ||
	echo "not ok lint: ci/lint.sh ended early" | tee -a "$RESULTS"
echo "== guest selftests (kernel $("$top/ci/kver.sh"))"
"$top/ci/selftests.sh" "$@"

"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
