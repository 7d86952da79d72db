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
# The static checks (ci/lint.sh, then clang-tidy: about 6 minutes of both
# CPUs) run beside the guests at idle priority (SCHED_IDLE): they take only
# the CPU time the guests leave, and build the modules from a copy.
# The copy is made here, before any guest loads the tree's modules.
tidy_out="$top/build/check/tidy.out" lint_out="$top/build/check/lint.out"
# (if that fails, lint.sh makes the copy itself, and says why it cannot)
stage="$top/build/lint/mod"
"$top/ci/stage-modules.sh" "$stage" || stage=
# (its own session: an aborted check stops the whole group)
LINT_STAGE=$stage setsid -w chrt --idle 0 bash -c '
	LINT_NO_TIDY=1 "$1/ci/lint.sh" >"$2" 2>&1 ||
		grep -q "^not ok lint" "$2" || echo "not ok lint: ci/lint.sh ended early" | tee -a "$RESULTS" >>"$2"
	exec "$1/ci/tidy.sh"' - "$top" "$lint_out" >"$tidy_out" 2>&1 &
tidy=$!
trap 'kill -- -$tidy 2>/dev/null || kill $tidy 2>/dev/null' EXIT
echo "== guest selftests (kernel $("$top/ci/kver.sh"))"
"$top/ci/selftests.sh" "$@"
echo "== static checks (ran beside the guests)"
wait "$tidy"
tidy_rc=$?
trap - EXIT
cat "$lint_out" "$tidy_out"
# tidy.sh writes its own result line; one that died before it did fails here
if [ $tidy_rc -ne 0 ] && ! grep -q '^not ok lint: clang-tidy' "$RESULTS"; then
	echo "not ok lint: clang-tidy (exit $tidy_rc)" | tee -a "$RESULTS"
fi

"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
