#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The emulated CPU the guests run on. QEMU 7.2's TCG (Debian 12's) gets
# EFLAGS wrong after CMPXCHG16B: it computes them from a lazy-flags state it
# did not bring up to date, so they can come out as bits of an earlier
# instruction's operand (TF, DF, reserved bits). The kernel's SLUB allocator
# runs the instruction on every allocation, and two guests under load
# crashed with its signature (a debug trap in the kernel, then memory
# corrupted by string instructions run backwards). ci/vm.sh takes CX16 out of the guest's CPU
# model; this test holds it to that: the guest's CPU has no CMPXCHG16B, or
# its CMPXCHG16B leaves EFLAGS right (cx16_flags, userspace/tests).
source "$(dirname "$0")/../../lib/shell/lib.sh"
CX16_FLAGS=$RXECC_TOP/build/userspace/cx16_flags

ktap_header
ktap_plan 1
[ -x "$CX16_FLAGS" ] || { ktap_fail "cx16_flags is built ($CX16_FLAGS)"; ktap_finished; }
cpu_flags() {
	echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"cx16 $(grep -qw cx16 /proc/cpuinfo && echo yes || echo no)"
	"$CX16_FLAGS" 100000
}
ktap_result "the guest's CPU has no CMPXCHG16B, or its CMPXCHG16B leaves EFLAGS as the architecture says" cpu_flags
ktap_finished
