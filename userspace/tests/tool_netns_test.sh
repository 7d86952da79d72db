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
# CAP_SYS_ADMIN (bit 21 of the effective set) decides, not the user id
cap_sys_admin() { (((0x$(awk '/^CapEff/ { print $2 }' /proc/self/status) >> 21) & 1)); }
if cap_sys_admin; then
	run 8 -n /dev/null qp	# a file that is no namespace: setns refuses it (EINVAL)
	[[ $out == *"cannot enter network namespace '/dev/null'"* ]] || fail "message: $out"
fi
run 1 -n
[[ $out == *"needs a network namespace name"* ]] || fail "message: $out"
# Its own namespace: entered with CAP_SYS_ADMIN (then the module decides:
# 0, or 2 when rdma_rxecc is not loaded), refused with exit 7 without.
out=$("$tool" -n /proc/self/ns/net stats 2>&1)
rc=$?
if cap_sys_admin; then
	[ $rc -eq 0 ] || [ $rc -eq 2 ] || fail "CAP_SYS_ADMIN, own namespace: exit $rc ($out)"
	# another user may not even open PID 1's namespace (EACCES): exit 7 too
	# (skipped where nobody may not run the tool: a build under a private home)
	nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
	if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ] && "${nobody[@]}" "$tool" -V >/dev/null 2>&1; then
		out=$("${nobody[@]}" "$tool" -n /proc/1/ns/net stats 2>&1)
		rc=$?
		[ $rc -eq 7 ] || fail "nobody, PID 1's namespace: exit $rc, want 7 ($out)"
	fi
else
	[ $rc -eq 7 ] || fail "no CAP_SYS_ADMIN, own namespace: exit $rc, want 7 ($out)"
fi
echo "rxecc -n: help and version enter nothing; a missing or wrong namespace and no privilege get their exit codes"
