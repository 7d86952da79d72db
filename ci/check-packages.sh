#!/bin/bash
# The body of `make check-packages` after deps and `make deb`: the guest
# selftests of selftests/rxecc/tests-packages.list (the packages installed in
# a guest, DKMS building the modules there), ending with 'N passed, N failed'.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
export RESULTS="$top/build/check/packages.txt"
export RXECC_TESTS_LIST="${RXECC_TESTS_LIST:-$top/selftests/rxecc/tests-packages.list}"
mkdir -p "$(dirname "$RESULTS")"
: > "$RESULTS"
start=$SECONDS
echo "== package selftests (kernel $("$top/ci/kver.sh"))"
"$top/ci/selftests.sh" "$@"
"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
