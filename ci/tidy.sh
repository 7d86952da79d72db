#!/bin/bash
# clang-tidy on the C++ sources (userspace/.clang-tidy), one result line
# (appended to $RESULTS when set); the last of ci/lint.sh's checks, and the
# longest (about 4 minutes on 2 cores). The unit tests leave out the static
# analyzer (userspace/tests/.clang-tidy says why).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
logdir="$top/build/lint"
mkdir -p "$logdir"
result() {	# result OK|FAIL DESC [LOG]
	local line
	if [ "$1" = OK ]; then line="ok lint: $2"; else line="not ok lint: $2"; fi
	echo "$line"
	[ -z "${RESULTS:-}" ] || echo "$line" >> "$RESULTS"
	if [ "$1" != OK ] && [ -n "${3:-}" ]; then sed 's/^/# /' "$3" | head -n 40; fi
	[ "$1" = OK ]
}
mapfile -t cxx < <(cd "$top" || exit 1
	git ls-files 'userspace/*.cpp' 2>/dev/null || find userspace -name '*.cpp')
log="$logdir/clang-tidy.log"
if [ ! -f "$top/build/userspace/compile_commands.json" ]; then
	echo "compile_commands.json missing: run 'make userspace' first" > "$log"
	result FAIL "clang-tidy on the C++ sources" "$log"
else
	# The largest sources first (a heuristic for the longest runs), so that
	# a long one is less likely to start last while the other CPUs have
	# nothing left to do. A listed source that is missing fails the check.
	mapfile -t units < <(cd "$top" && ls -S -- "${cxx[@]}" 2>/dev/null)
	if [ "${#cxx[@]}" -eq 0 ] || [ "${#units[@]}" -ne "${#cxx[@]}" ]; then
		echo "C++ sources listed: ${#cxx[@]}, found: ${#units[@]}" > "$log"
		result FAIL "clang-tidy on the C++ sources" "$log"
	# One clang-tidy per unit, as many at once as there are CPUs; xargs
	# exits non-zero if any of them did.
	elif (cd "$top" && printf '%s\0' "${units[@]}" |
		xargs -0 -n 1 -P "$(nproc)" clang-tidy -quiet -p build/userspace) >"$log" 2>&1 &&
		! grep -qE '(warning|error):' "$log"; then
		result OK "clang-tidy on the C++ sources"
	else
		grep -E '(warning|error):' "$log" > "$log.warn" || cp "$log" "$log.warn"
		result FAIL "clang-tidy on the C++ sources" "$log.warn"
	fi
fi
