#!/bin/bash
# Run the host unit tests (GoogleTest through ctest) in the userspace build
# folder, and the Python unit tests of selftests/rxecc/rxecc_measure.py, and
# print one result line per test, appended to $RESULTS.
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

# rxecc_measure (the capture reader and figures the selftests and the lab
# share): one line per unittest test ("test_x (module.Class.test_x) ... ok").
log="$top/build/check/measure.log"
python3 -W error::ResourceWarning "$top/selftests/rxecc/test_rxecc_measure.py" -v >"$log" 2>&1
rc=$?
n=0
while read -r name status; do
	n=$((n + 1))
	if [ "$status" = ok ]; then line="ok host: Measure.$name"; else line="not ok host: Measure.$name ($status)"; fi
	echo "$line"
	echo "$line" >> "$RESULTS"
done < <(sed -nE 's/^(test[^ ]*) \([^)]*\) \.\.\. (ok|FAIL|ERROR|skipped).*$/\1 \2/p' "$log")
if [ $n -eq 0 ] || { [ $rc -ne 0 ] && ! grep -q '^not ok host: Measure\.' "$RESULTS"; }; then
	cat "$log"
	line="not ok host: Measure tests ran (exit $rc, $n tests)"
	echo "$line"
	echo "$line" >> "$RESULTS"
fi
exit 0
