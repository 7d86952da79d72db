#!/bin/bash
# Host test of the tool's -n/--netns (run by ctest):
#   tool_netns_test.sh TOOL
set -uo pipefail
tool=$1
fail() { echo "FAIL: $*"; exit 1; }
# run WANT ARGS...: the tool exits WANT; its message is in $out
run() {
	local want=$1 rc
	shift
	out=$("$tool" "$@" 2>&1)
	rc=$?
	[ "$rc" -eq "$want" ] || fail "rxecc $*: exit $rc, want $want ($out)"
}
run 0 -n /nonexistent -V	# help and version enter nothing
run 0 --netns /nonexistent --help
run 8 -n /nonexistent/ns qp
[[ $out == *"network namespace '/nonexistent/ns': No such file or directory"* ]] || fail "message: $out"
run 8 -n rxecc-test-no-such-ns qp
[[ $out == *"'rxecc-test-no-such-ns'"* ]] || fail "message: $out"
run 8 -n /etc/hostname qp	# a file that is no namespace: setns refuses it
[[ $out == *"cannot enter network namespace"* ]] || fail "message: $out"
run 1 -n
[[ $out == *"needs a network namespace name"* ]] || fail "message: $out"
# Its own namespace: entered with CAP_SYS_ADMIN (then the module decides:
# 0, or 2 when rdma_rxecc is not loaded), refused with exit 7 without.
out=$("$tool" -n /proc/self/ns/net stats 2>&1)
rc=$?
if [ "$(id -u)" -eq 0 ]; then
	[ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "root, own namespace: exit $rc ($out)"
else
	[ $rc -eq 7 ] || fail "no CAP_SYS_ADMIN, own namespace: exit $rc, want 7 ($out)"
fi
echo "rxecc -n: help and version enter nothing; a missing or wrong namespace and no privilege get their exit codes"
