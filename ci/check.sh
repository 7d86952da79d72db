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
# The static checks (ci/lint.sh) before the guests: beside them, even at
# idle priority, they slow the guests down by more than their own time
# (docs/results.md, "make check's time"). clang-tidy (about 4 minutes of
# both CPUs) is not among them: `make lint` runs it, and .ci/run after
# make check.
echo "== static checks (clang-tidy apart: make lint)"
LINT_TIDY=0 "$top/ci/lint.sh" || grep -q '^not ok lint' "$RESULTS" ||
	echo "not ok lint: ci/lint.sh ended early" | tee -a "$RESULTS"
echo "== guest selftests (kernel $("$top/ci/kver.sh"))"
"$top/ci/selftests.sh" "$@"
"$top/ci/skips.sh" "$RESULTS" "$top/selftests/rxecc/skips.list"

"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
