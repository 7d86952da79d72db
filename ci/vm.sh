#!/bin/bash
# Boot one or more QEMU guests (TCG) with the Debian guest kernel and the host
# root shared read-only over 9p (tmpfs overlay in the guest), run a command in
# each, stream each console to a log, enforce a timeout, power off, and
# return the result:
#   0 all guests' commands passed, 4 skipped (kselftest), 1 failed,
#   124 timed out, 2 a kernel splat (oops, BUG, WARNING, lockdep, KASAN,
#   refcount, list corruption, ...) was found in a guest log.
#
# usage: ci/vm.sh [options] -- COMMAND...
#   --name NAME       run name: logs go to build/vm/runs/NAME/g<i>/ (default: vm)
#   --guests N        number of guests (default 1)
#   --link A-B        a point-to-point link (QEMU dgram netdevs over 127.0.0.1)
#                     between guests A and B (numbered from 0); repeatable.
#                     Each guest's links appear as eth0, eth1, ... in order.
#   --timeout SEC     per run (default 300)
#   --mem MB          per guest (default 2048)
#   --smp N           vCPUs per guest (default 1)
#   --interactive     one guest, console on this terminal (make shell)
#   --quiet           do not copy guest output to stdout
# In the guest, COMMAND runs in bash in the repo's directory with
# RXECC_GUEST_INDEX, RXECC_GUESTS, RXECC_TOP, RXECC_MODULE, PFC_MODULE, KVER set.
# Environment:
#   RXECC_GUEST_KERNEL=DIR   boot the kernel of ci/kernel-debug.sh's DIR
#                            (bzImage, release, mods/) instead of Debian's
#   RXECC_MODULE, PFC_MODULE the modules the tests load (default: the tree's)
#   RXECC_KERNEL_APPEND      more kernel command line (check-debug: slub_debug=A,...)
#   RXECC_QEMU_CPU           the guest CPU model (default qemu64,-cx16: below)
#   RXECC_BOOT_LIMIT         seconds a guest may take to reach its init before
#                            the run is booted again (below)
#   RXECC_BZIMAGE=1          boot the bzImage itself, not its vmlinux (below)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
name=vm guests=1 timeout=300 mem=2048 smp=1 interactive=0 quiet=0
links=()
while [ $# -gt 0 ]; do
	case "$1" in
	--name) name=$2; shift 2 ;;
	--guests) guests=$2; shift 2 ;;
	--link) links+=("$2"); shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--interactive) interactive=1; shift ;;
	--quiet) quiet=1; shift ;;
	--) shift; break ;;
	*) echo "vm.sh: unknown option '$1'" >&2; exit 1 ;;
	esac
done
[ $# -gt 0 ] || { echo "vm.sh: no command given (usage: ci/vm.sh [options] -- COMMAND...)" >&2; exit 1; }
cmd=$(printf '%q ' "$@")

kmods=
if [ -n "${RXECC_GUEST_KERNEL:-}" ]; then
	kernel=$RXECC_GUEST_KERNEL/bzImage
	kver=$(cat "$RXECC_GUEST_KERNEL/release" 2>/dev/null) ||
		{ echo "vm.sh: RXECC_GUEST_KERNEL=$RXECC_GUEST_KERNEL has no kernel (make kernel-debug)" >&2; exit 1; }
	kmods=$RXECC_GUEST_KERNEL/mods
	export KVER=$kver RXECC_KMODS=$kmods
else
	kver=$("$top/ci/kver.sh") || exit 1
	kernel=/boot/vmlinuz-$kver
fi
[ -r "$kernel" ] || { echo "vm.sh: $kernel not found (run 'make deps')" >&2; exit 1; }
# QEMU boots the ELF vmlinux inside the bzImage through its PVH entry, which
# skips the bzImage's decompressor: 4-5 s less per boot under TCG for a
# guest that runs nothing, 2.3 s a boot in make check (docs/developing.md;
# ci/vmlinux.py, decompressed once per kernel; the bzImage when it cannot).
if [ "${RXECC_BZIMAGE:-0}" != 1 ] &&
	elf=$("$top/ci/vmlinux.py" "$kernel" "$top/build/vm/vmlinux-$kver"); then
	kernel=$elf
fi
initrd=$("$top/ci/mkinitramfs.sh") || exit 1
qemu=$(command -v qemu-system-x86_64) || { echo "vm.sh: qemu-system-x86_64 not found (run 'make deps')" >&2; exit 1; }
# The guest CPU: QEMU's default model without CMPXCHG16B. QEMU 7.2's TCG
# (Debian 12's) computes the flags of a CMPXCHG16B from a stale lazy-flags
# state, so EFLAGS can come out as any value an earlier instruction left, TF
# and DF included (userspace/tests/cx16_flags.cpp shows it in a guest); the kernel's
# SLUB allocator runs it on every allocation, and two 6.12 guests crashed
# under load with its signature (docs/results.md, "Linux 6.12"). Without the
# feature the kernel emulates the instruction with interrupts off.
cpu=${RXECC_QEMU_CPU:-qemu64,-cx16}
# tsc=reliable (the kernel's command line below): under a loaded host the
# emulated TSC and HPET drift apart, the clocksource watchdog then marks the
# TSC unstable and the kernel patches sched_clock's static key while the
# other vCPU runs; a 6.12 guest took an int3 it had no patch entry for
# ("Oops: int3" in sched_clock_cpu(), panic). The skew is the emulator's
# scheduling of its vCPUs, not a drifting TSC.
# mitigations=off: TCG executes nothing speculatively, so the kernel's
# Spectre mitigations (retpolines, RSB filling, swapgs barriers) only cost
# time: 10-18 % of a program start in the guest (docs/developing.md; no
# gain showed in make check's total, which varies more than that).

rundir="$top/build/vm/runs/$name"
rm -rf "$rundir"
mkdir -p "$rundir"

# One UDP port pair per link; the base depends on our PID so that parallel
# runs do not collide.
base=$((20000 + ($$ % 2000) * 16))
declare -a nicargs
for i in $(seq 0 $((guests - 1))); do nicargs[i]=""; done
k=0
for l in "${links[@]}"; do
	a=${l%-*} b=${l#*-}
	pa=$((base + 2 * k)) pb=$((base + 2 * k + 1))
	for side in a b; do
		if [ $side = a ]; then g=$a lp=$pa rp=$pb; else g=$b lp=$pb rp=$pa; fi
		n=$(echo "${nicargs[g]}" | grep -o -- '-device' | wc -l)
		mac=$(printf '52:54:00:%02x:%02x:%02x' "$k" "$g" "$n")
		nicargs[g]+=" -netdev dgram,id=n$n,local.type=inet,local.host=127.0.0.1,local.port=$lp,remote.type=inet,remote.host=127.0.0.1,remote.port=$rp"
		nicargs[g]+=" -device virtio-net-pci,netdev=n$n,mac=$mac"
	done
	k=$((k + 1))
done

module=${RXECC_MODULE:-$top/build/kernel/rxecc/rdma_rxecc.ko}
pfc_module=${PFC_MODULE:-$top/net/sched/sch_pfc.ko}
# Python .pth files that run code at every interpreter start and that no
# Debian package installed (a host's own hooks): the guest hides them, as
# each costs about half a second per python3 start under TCG. (Debian's
# site directories; their paths have no spaces. Without dpkg, none.)
hide_pth=()
if command -v dpkg >/dev/null; then
	for f in /usr/lib/python3/dist-packages/*.pth /usr/local/lib/python3*/dist-packages/*.pth; do
		[ -f "$f" ] && grep -q '^import' "$f" && ! dpkg -S "$f" >/dev/null 2>&1 && hide_pth+=("$f")
	done
fi
# start_guest I: guest I's qemu in the background (its pid into pids[I]).
start_guest() {
	local i=$1 gdir="$rundir/g$1"
	mkdir -p "$gdir"
	{
		printf 'RXECC_CMD=%q\n' "$cmd"
		printf 'RXECC_TOP=%q\n' "$top"
		printf 'RXECC_MODULE=%q\nPFC_MODULE=%q\nRXECC_KMODS=%q\n' "$module" "$pfc_module" "$kmods"
		printf 'RXECC_GUEST_INDEX=%d\nRXECC_GUESTS=%d\n' "$i" "$guests"
		printf 'RXECC_HOSTNAME=rxecc-g%d\nRXECC_INTERACTIVE=%d\n' "$i" "$interactive"
		printf 'RXECC_HIDE_PTH=%q\n' "${hide_pth[*]}"
		printf 'KVER=%q\nRXECC_RATE_SCALE=%d\nRXECC_TIMEOUT_SCALE=%d\n' "$kver" \
			"${RXECC_RATE_SCALE:-1}" "${RXECC_TIMEOUT_SCALE:-1}"
		printf 'export RXECC_TOP RXECC_MODULE PFC_MODULE RXECC_KMODS RXECC_GUEST_INDEX RXECC_GUESTS KVER\n'
		printf 'RXECC_XTRACE=%q\nRXECC_ONLY=%q\n' "${RXECC_XTRACE:-0}" "${RXECC_ONLY:-}"
		printf 'export RXECC_RATE_SCALE RXECC_TIMEOUT_SCALE RXECC_XTRACE RXECC_ONLY\n'
	} > "$gdir/guest.env"
	# shellcheck disable=SC2206 # the NIC options are words to split
	args=(-machine q35 -cpu "$cpu" -m "$mem" -smp "$smp" -nodefaults -no-reboot -display none
		-kernel "$kernel" -initrd "$initrd"
		-append "console=ttyS0 loglevel=5 oops=panic panic=-1 softlockup_panic=1 log_buf_len=4M tsc=reliable mitigations=off rxecc_init=$top/ci/guest/init.sh ${RXECC_KERNEL_APPEND:-}"
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
		-virtfs "local,path=$gdir,mount_tag=rxeccout,security_model=none,multidevs=remap"
		-device virtio-rng-pci
		${nicargs[i]})
	if [ $interactive = 1 ]; then
		"$qemu" "${args[@]}" -serial mon:stdio
		exit $?
	fi
	timeout -k 5 "$timeout" "$qemu" "${args[@]}" -serial "file:$gdir/console.log" \
		</dev/null >"$gdir/qemu.log" 2>&1 &
	pids[i]=$!
}

# A guest that has not reached ci/guest/init.sh's RXECC-GUEST-START line
# within the boot limit hung in the kernel's early boot, the initramfs or
# init.sh's first steps (9p mounts, modprobe), before any test ran: the
# emulator's, not a test result (a 6.1 guest once stopped at 0.81 s of its
# boot, 1 boot in about 40). All the run's guests are booted again, twice
# at most; each guest's files of the attempt (console, output, rc, dmesg)
# move to g<i>/boot-hang-N/, whose consoles the splat scan reads too. A
# guest whose emulator exits during the wait (a panic) is no hang: the run
# goes on and fails as it would.
boot_limit=$((60 * ${RXECC_TIMEOUT_SCALE:-1}))
[ -z "${RXECC_GUEST_KERNEL:-}" ] || boot_limit=$((3 * boot_limit))	# a debug kernel boots slower
boot_limit=${RXECC_BOOT_LIMIT:-$boot_limit}
[ "$boot_limit" -lt "$timeout" ] || boot_limit=$timeout
booted() {
	local i
	for i in $(seq 0 $((guests - 1))); do
		grep -q 'RXECC-GUEST-START' "$rundir/g$i/console.log" 2>/dev/null || return 1
	done
}
all_alive() {
	local p
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || return 1; done
}
pids=()
for attempt in 0 1 2; do
	for i in $(seq 0 $((guests - 1))); do start_guest "$i"; done
	[ $interactive = 1 ] && break
	t0=$SECONDS
	while ! booted && [ $((SECONDS - t0)) -lt "$boot_limit" ] && all_alive; do
		sleep 1
	done
	if [ $attempt = 2 ] || booted || ! all_alive; then
		break
	fi
	echo "vm.sh: a guest did not reach its init within ${boot_limit}s: booting the run again" >&2
	kill "${pids[@]}" 2>/dev/null
	wait 2>/dev/null
	for i in $(seq 0 $((guests - 1))); do
		hang="$rundir/g$i/boot-hang-$attempt"
		mkdir -p "$hang"
		for f in console.log output.txt rc dmesg.txt kmemleak.txt qemu.log logs; do
			[ -e "$rundir/g$i/$f" ] && mv "$rundir/g$i/$f" "$hang/"
		done
	done
done

if [ $quiet = 0 ] && [ "$guests" -eq 1 ]; then
	tail -n +1 -F --pid="${pids[0]}" "$rundir/g0/output.txt" 2>/dev/null &
fi
result=0
for i in "${!pids[@]}"; do
	wait "${pids[i]}"
	qrc=$?
	gdir="$rundir/g$i"
	if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
		echo "vm.sh: guest $i timed out after ${timeout}s (console: $gdir/console.log)" >&2
		result=124
		continue
	fi
	rc=$(cat "$gdir/rc" 2>/dev/null || echo 1)
	if [ "$rc" != 0 ] && [ "$rc" != 4 ]; then
		[ $result -eq 0 ] || [ $result -eq 4 ] && result=1
	elif [ "$rc" = 4 ] && [ $result -eq 0 ]; then
		result=4
	fi
done
wait 2>/dev/null
if ! "$top/ci/splat-scan.sh" "$rundir"/g*/console.log "$rundir"/g*/dmesg.txt "$rundir"/g*/kmemleak.txt \
	"$rundir"/g*/boot-hang-*/console.log "$rundir"/g*/boot-hang-*/dmesg.txt; then
	result=2
fi
exit $result
