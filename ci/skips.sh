#!/bin/bash
# ci/skips.sh RESULTS LIST: every skipped result in RESULTS (lines "ok NAME:
# ... # SKIP why"), printed with its reason, against LIST
# (selftests/rxecc/skips.list: "SCRIPT<TAB>REASON-ERE" per expected skip).
# Appends to RESULTS one result, "skips: every skip is an expected one", not
# ok when a skip's script is not on the list or its reason does not match.
set -uo pipefail
results=$1 list=$2
declare -A expected
while IFS=$'\t' read -r script why; do
	if [ -z "$why" ]; then
		echo "skips: $list: '$script' gives no reason to match (SCRIPT<TAB>REASON-ERE)" >&2
		exit 2
	fi
	expected[${script%.sh}]=$why
done < <(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$list")
bad=()
echo "== skips"
n=0
while IFS= read -r line; do
	n=$((n + 1))
	# "ok NAME[gI]: desc # SKIP why" -> NAME, why
	name=$(echo "$line" | sed -E 's/^ok ([^:[]+)(\[g[0-9]+\])?:.*/\1/')
	why=$(printf '%s\n' "$line" | sed -E 's/^.*# [Ss][Kk][Ii][Pp] ?//')
	if [ -n "${expected[$name]+x}" ] && printf '%s\n' "$why" | grep -qE -- "${expected[$name]}"; then
		echo "expected: ${line#ok }"
	else
		echo "UNEXPECTED: ${line#ok }"
		bad+=("$name")
	fi
done < <(grep -iE '^ok .*# SKIP' "$results")
[ "$n" -gt 0 ] || echo "(none)"
if [ ${#bad[@]} -eq 0 ]; then
	line="ok skips: every skip is an expected one ($list)"
else
	line="not ok skips: every skip is an expected one: not on $list: $(printf '%s\n' "${bad[@]}" | sort -u | tr '\n' ' ')"
fi
echo "$line"
echo "$line" >>"$results"
