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
RXECC_LINT_NO_TIDY=1 "$top/ci/lint.sh"
# clang-tidy (minutes of CPU) at the lowest priority beside the guests: it
# takes the time their emulated CPUs leave idle. Its own process group, so
# that an interrupted check stops it; its output is printed at the end.
tidy_out=$(mktemp)
setsid nice -n 19 "$top/ci/tidy.sh" >"$tidy_out" 2>&1 &
tidy=$!
trap 'kill -- -$tidy 2>/dev/null; rm -f "$tidy_out"' EXIT
echo "== guest selftests (kernel $("$top/ci/kver.sh"))"
"$top/ci/selftests.sh" "$@"
echo "== clang-tidy (ran beside the guests)"
wait $tidy
cat "$tidy_out"
grep -q 'lint: clang-tidy' "$RESULTS" ||
	echo "not ok lint: clang-tidy on the C++ sources (ci/tidy.sh ended without a result)" | tee -a "$RESULTS"

"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
