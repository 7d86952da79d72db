#!/bin/bash
# Host test of ci/skips.sh: an expected skip passes, a skip of another
# script or with another reason fails, no skip passes.
set -u
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf 'fault.sh\t^no fault injection\n' >"$tmp/list"
fails=0
# case RESULT-LINES WANT(ok|not ok)
case_() {
	printf '%b' "$1" >"$tmp/results"
	"$here/skips.sh" "$tmp/results" "$tmp/list" >/dev/null
	if tail -n 1 "$tmp/results" | grep -q "^$2 skips:"; then
		echo "ok: $2 for: $1"
	else
		echo "FAIL: want $2 for: $1 (got: $(tail -n 1 "$tmp/results"))"
		fails=1
	fi
}
case_ 'ok a: x\n' ok
case_ 'ok fault: ran to the end # SKIP no fault injection here\n' ok
case_ 'ok fault: ran to the end # SKIP no fault injection here\nok ucx: ran # SKIP ucx missing\n' "not ok"
case_ 'ok fault: ran to the end # SKIP the module is not built\n' "not ok"
case_ 'ok two[g1]: y # SKIP z\n' "not ok"
case_ 'ok fault[g1]: y # SKIP no fault injection on g1\n' ok
case_ 'ok fault: y # skip no fault injection, lower case\n' ok
# a list line without a reason to match is refused, not a match-all
printf 'fault.sh\n' >"$tmp/list"
printf 'ok fault: x # SKIP anything\n' >"$tmp/results"
if "$here/skips.sh" "$tmp/results" "$tmp/list" >/dev/null 2>&1; then
	echo "FAIL: a list line without a reason was accepted"
	fails=1
else
	echo "ok: a list line without a reason is refused"
fi
exit $fails
