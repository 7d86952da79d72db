#!/bin/bash
# ci/skips.sh RESULTS LIST: every skipped result in RESULTS (lines "ok NAME:
# ... # SKIP why"), printed with its reason, against LIST (selftests/rxecc/
# skips.list: "SCRIPT<TAB>why" per expected skip). Appends to RESULTS one
# result, "skips: every skip is an expected one", not ok when a skip's
# script is not on the list.
set -uo pipefail
results=$1 list=$2
mapfile -t expected < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | cut -f1 | sed 's/\.sh$//')
skips=$(grep -E '^ok .*# SKIP' "$results")
bad=()
echo "== skips"
while IFS= read -r line; do
	[ -n "$line" ] || continue
	# "ok NAME[gI]: desc # SKIP why" -> NAME
	name=$(echo "$line" | sed -E 's/^ok ([^:[]+)(\[g[0-9]+\])?:.*/\1/')
	if [[ " ${expected[*]} " == *" $name "* ]]; then
		echo "expected: ${line#ok }"
	else
		echo "UNEXPECTED: ${line#ok }"
		bad+=("$name")
	fi
done <<<"$skips"
[ -n "$skips" ] || echo "(none)"
if [ ${#bad[@]} -eq 0 ]; then
	line="ok skips: every skip is an expected one ($list)"
else
	line="not ok skips: every skip is an expected one: not on $list: $(printf '%s\n' "${bad[@]}" | sort -u | tr '\n' ' ')"
fi
echo "$line"
echo "$line" >>"$results"
