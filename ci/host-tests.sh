#!/bin/bash
# Run the host unit tests (ctest in the userspace build folder: GoogleTest,
# the Python unit tests of the lab and of lib/python/rxecc_measure.py,
# the tool's scripts) and print one result line per test, appended to
# $RESULTS.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
ubuild=${1:-$top/build/userspace}
RESULTS=${RESULTS:-$top/build/check/results.txt}
mkdir -p "$(dirname "$RESULTS")"
log="$top/build/check/ctest.log"
(cd "$ubuild" && ctest --output-on-failure -j"$(nproc)") >"$log" 2>&1
rc=$?
# ctest lines: " 1/21 Test  #1: SplitHeader.Keeps... ....   Passed    0.00 sec"
n=0
while read -r status name; do
	n=$((n + 1))
	if [ "$status" = Passed ]; then line="ok host: $name"; else line="not ok host: $name ($status)"; fi
	echo "$line"
	echo "$line" >> "$RESULTS"
done < <(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.*[* ]*(Passed|Failed|\*\*\*[A-Za-z ]+|Not Run|Timeout).*$/\2 \1/p' "$log")
if [ $n -eq 0 ] || { [ $rc -ne 0 ] && ! grep -q '^not ok host:' "$RESULTS"; }; then
	cat "$log"
	line="not ok host: ctest ran (exit $rc, $n tests)"
	echo "$line"
	echo "$line" >> "$RESULTS"
fi

exit 0
