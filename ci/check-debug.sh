#!/bin/bash
# make check-debug: the guest selftests on the debug kernel (ci/kernel-debug.sh:
# KASAN, UBSAN, lockdep, kmemleak, debug objects, fault injection).
#   - rdma_rxecc and sch_pfc are built against that kernel, in build/debug/;
#   - every guest boot runs as in `make check`, with the timeouts multiplied
#     by DEBUG_TIMEOUT_SCALE (default 3: the checks slow the emulated CPU)
#     and the congested ports' rates divided by DEBUG_RATE_SCALE (default 10);
#   - ci/selftests.sh fails a boot on any report in its console, dmesg or
#     the kmemleak scan ci/guest/init.sh makes after rxecc's modules are
#     unloaded;
#   - fault.sh (fault injection) runs here; on Debian's kernel it skips.
# ci/check-debug.sh [SCRIPT...]: only those selftests. Ends with
# 'N passed, N failed' like make check; results in build/check-debug/.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# KVER picks the line (without it Debian 12's 6.1): the debug kernel is built from that
# line's linux-source and the modules from its series; the guests then boot
# the debug kernel (ci/vm.sh takes KVER from its release).
kdir=$("$top/ci/kernel-debug.sh" | tail -n 1) || exit 1
[ -f "$kdir/bzImage" ] || { echo "check-debug: no debug kernel" >&2; exit 1; }
kver=$(cat "$kdir/release")

# The modules, built against the debug kernel from a copy of the sources
# (the tree's own objects are for Debian's kernel).
stage="$top/build/debug/mod"
"$top/ci/stage-modules.sh" "$stage" || exit 1
unset KVER
log="$top/build/debug/kbuild.log"
if ! make -C "$kdir/obj" M="$stage" -j"$(nproc)" modules >"$log" 2>&1; then
	tail -n 20 "$log" >&2
	echo "check-debug: building the modules for $kver failed (see $log)" >&2
	exit 1
fi

export RXECC_GUEST_KERNEL=$kdir
export RXECC_MODULE="$stage/build/kernel/rxecc/rdma_rxecc.ko"
export PFC_MODULE="$stage/net/sched/sch_pfc.ko"
# skbuff_head_cache marked for failslab (6.1 marks caches only at boot), so
# that fault.sh can fail socket buffers alone (its test of QP state that
# cannot be allocated needs a boot with rxecc_qp alone marked:
# RXECC_DEBUG_APPEND="slub_debug=A,rxecc_qp" ci/check-debug.sh fault.sh).
export RXECC_KERNEL_APPEND=${RXECC_DEBUG_APPEND:-slub_debug=A,skbuff_head_cache}
export RXECC_TIMEOUT_SCALE=${DEBUG_TIMEOUT_SCALE:-3}
# Bottlenecks divided by DEBUG_RATE_SCALE (scaled_rate in lib/shell/
# lib.sh): the guest moves about 11 Mbit/s, under the 50 Mbit/s ports.
export RXECC_RATE_SCALE=${DEBUG_RATE_SCALE:-10}
export RESULTS="$top/build/check-debug/results.txt"
mkdir -p "$(dirname "$RESULTS")"
: >"$RESULTS"
start=$SECONDS
echo "== guest selftests on the debug kernel $kver"
"$top/ci/selftests.sh" "$@"

"$top/ci/results.sh" "$RESULTS" $((SECONDS - start))
