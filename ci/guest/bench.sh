#!/bin/bash
# Guest side of `make bench`: stock rdma_rxe and rdma_rxecc measured in this
# one boot, interleaved per test so that each trial of a test compares the
# modules under the same moment's load:
#   TRIALS trials; in each, every case runs on every module back to back, in an
#   order that reverses from one case to the next (rxe, rxecc, rxecc-nocc, then
#   rxecc-nocc, rxecc, rxe, ...), and the cases run in reverse order every
#   other trial: each case's modules run in the opposite order from one trial
#   to the next, with one module swap per case.
#   Modules: rxe (stock rdma_rxe), rxecc (rdma_rxecc as it loads: DCQCN on,
#   mlx5 profile, ECT(0) on data, every hook in the path; no congestion) and
#   rxecc-nocc (rdma_rxecc with rp_enable, np_enable none and ecn av: the cost
#   of the hooks is rxecc against it).
# Cases (CASES selects, in this order):
#   lo_write lo_read lo_send   ib_{write,read,send}_bw, 64 KiB, one QP, loopback
#                              (one device b0 on a veth; rxe's loopback path)
#   lo_lat                     ib_send_lat, 2 B, loopback
#   lo_write_q64               ib_write_bw over 64 QPs, 16 KiB, 8 in flight each
#   2h_write 2h_read 2h_send 2h_lat 2h_write_q64
#                              the same between two hosts: devices ha and hb on two
#                              veths into a switch namespace that routes between
#                              them (both ends in this namespace, as the kernel's
#                              ULPs need: policy routes send their traffic out
#                              through the switch instead of the loopback)
#   nvmf                       NVMe over Fabrics from ha to a RAM disk behind hb
#                              (nvmet-rdma, nvme-rdma): fio sequential read and
#                              write (128 KiB, 16 deep) and 4 KiB random read (32
#                              deep), NVMF_TIME seconds each
#   qp_memory                  slab memory per QP while QP_MEMORY_QPS QPs exist
#                              (in the first QP_MEMORY_TRIALS trials only: it
#                              hardly varies)
# Every bandwidth case also records the guest's CPU time per GB moved (all
# CPUs, and the kernel's part: system + irq + softirq, where the driver runs).
# Results: $BENCH_OUT/<trial>/<module>/<test>.log (perftest's report), .value
# (lower is better) or .rate (higher is better); rxecc-report bench reads them.
# With PERF=1 (make profile) every client (perftest's, fio) runs under
# `perf record -a` (cpu-clock, 999 Hz, all CPUs) and <test>.profile.md holds
# where the cycles went (ci/perf_summary.py); its numbers are then not the
# bench's (perf costs time).
# shellcheck source=../../lib/shell/lib.sh
source "$RXECC_TOP/lib/shell/lib.sh"
TRIALS=${TRIALS:-10}
CASES=${CASES:-lo_write lo_read lo_send lo_lat lo_write_q64 2h_write 2h_read 2h_send 2h_lat 2h_write_q64 nvmf qp_memory}
MODULES=${MODULES:-rxe rxecc rxecc-nocc}
BW_ITERS=${BW_ITERS:-1500}
LAT_ITERS=${LAT_ITERS:-5000}
Q64_MIB=${Q64_MIB:-64}
NVMF_TIME=${NVMF_TIME:-3}
QP_MEMORY_QPS=${QP_MEMORY_QPS:-256}
QP_MEMORY_TRIALS=${QP_MEMORY_TRIALS:-3}
BENCH_OUT=${BENCH_OUT:-/mnt/out/bench}
LO_IP=10.0.0.1
A_IP=10.79.1.1 B_IP=10.79.2.1 SW_NS=benchsw
NQN=nqn.2026-12.io.rxecc:bench NVMET=/sys/kernel/config/nvmet
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:0b9d2c52-7c3e-4a8e-9a51-4e1f0c6b2d17
LOADED= # the module loaded and its devices made: rxe, rxecc or rxecc-nocc

cleanup() {
	nvmf_down
	modules_unload >/dev/null 2>&1
	local_pair_unroute
	ip netns del "$SW_NS" 2>/dev/null
}
trap cleanup EXIT

mac_of() { cat "/sys/class/net/$1/address"; }

# two_hosts_up: veths ba (A_IP) and bb (B_IP) in this namespace, their peers
# swp1 and swp2 in the switch namespace, which forwards between them; what
# this namespace sends from one to the other goes out through the switch
# (local_pair_routes).
two_hosts_up() {
	ip netns add "$SW_NS" || return 1
	ip netns exec "$SW_NS" sysctl -qw net.ipv4.ip_forward=1 || return 1
	ip link add ba type veth peer name swp1 netns "$SW_NS" || return 1
	ip link add bb type veth peer name swp2 netns "$SW_NS" || return 1
	ip addr add "$A_IP/24" dev ba && ip addr add "$B_IP/24" dev bb || return 1
	ip link set ba up && ip link set bb up || return 1
	ip -n "$SW_NS" -batch - <<-EOF || return 1
		link set lo up
		addr add ${A_IP%.1}.254/24 dev swp1
		addr add ${B_IP%.1}.254/24 dev swp2
		link set swp1 up
		link set swp2 up
		neigh replace $A_IP lladdr $(mac_of ba) dev swp1 nud permanent
		neigh replace $B_IP lladdr $(mac_of bb) dev swp2 nud permanent
	EOF
	ip neigh replace "${A_IP%.1}.254" lladdr "$(ip netns exec "$SW_NS" cat /sys/class/net/swp1/address)" \
		dev ba nud permanent || return 1
	ip neigh replace "${B_IP%.1}.254" lladdr "$(ip netns exec "$SW_NS" cat /sys/class/net/swp2/address)" \
		dev bb nud permanent || return 1
	# in-order delivery through the switch (as fabric.sh: one CPU's backlog)
	local f
	for f in /sys/class/net/ba/queues/rx-0/rps_cpus /sys/class/net/bb/queues/rx-0/rps_cpus; do
		echo 1 >"$f" || return 1
	done
	for f in swp1 swp2; do
		ip netns exec "$SW_NS" sh -c "echo 1 > /sys/class/net/$f/queues/rx-0/rps_cpus" || return 1
	done
	# Every port's packets are taken on CPU 0 (above): a backlog of 1000
	# packets (the default) overflows with 64 QPs' windows in flight (8192
	# packets of 1 KiB): 1.5 million drops in one 64-QP run of stock
	# rdma_rxe, which then did not end in 30 s. The bench measures a
	# lossless path; losses are the selftests' subject.
	sysctl -qw net.core.netdev_max_backlog=65536 || return 1
	local_pair_routes "$A_IP" ba "${A_IP%.1}.254" "$B_IP" bb "${B_IP%.1}.254" || return 1
	local r
	r=$(ip route get "$B_IP" from "$A_IP")
	[[ $r == *" via ${A_IP%.1}.254 dev ba "* ]] || { echo "to $B_IP: $r"; return 1; }
	r=$(ip route get "$A_IP" from "$B_IP")
	[[ $r == *" via ${B_IP%.1}.254 dev bb "* ]] || { echo "to $A_IP: $r"; return 1; }
}

# use MODULE: MODULE's devices b0 (loopback), ha and hb ready; rdma_rxecc is
# reloaded only when rdma_rxe was loaded (rxecc and rxecc-nocc differ in their
# configuration alone).
use() {
	local mod=$1 type=${1%-nocc} d
	[ "$LOADED" = "$mod" ] && return 0
	if [ "${LOADED%-nocc}" != "$type" ]; then
		LOADED=
		modules_unload || return 1
		if [ "$type" = rxecc ]; then rxecc_load; else rxe_load; fi || return 1
		rdma_link_add b0 "$type" d0 && rdma_link_add ha "$type" ba && rdma_link_add hb "$type" bb || return 1
		G0=$(wait_gid b0 "$LO_IP") && GA=$(wait_gid ha "$A_IP") && GB=$(wait_gid hb "$B_IP") || return 1
	fi
	if [ "$type" = rxecc ]; then
		LOADED=	# (unknown until every device is configured)
		for d in b0 ha hb; do
			if [ "$mod" = rxecc ]; then
				"$RXECC_TOOL" dcqcn set dev "$d" rp_enable all np_enable all ecn ect0 || return 1
			else
				"$RXECC_TOOL" dcqcn set dev "$d" rp_enable none np_enable none ecn av || return 1
			fi
		done
		echo "$mod: $("$RXECC_TOOL" dcqcn show dev ha | grep -E '^dev |^  (rp_enable|np_enable|ecn) ' |
			tr -s ' \n' ' ')"
	fi
	LOADED=$mod
}

# perf_run TRIAL MODULE NAME DEV GID SERVER_DEV SERVER_GID SERVER_IP TEST ARGS...:
# one perftest pair (TEST with ARGS on both sides; the server on SERVER_DEV),
# the client's report kept as NAME.log. perftest sometimes fails to calibrate
# its clock under TCG and reports inf: such a run is repeated (at most
# twice). With CPU_BYTES=N, cpu_sampler records the run on DEV and the CPU
# time per GB of N bytes is kept (NAME_cpu.value, NAME_kcpu.value).
perf_run() {
	local trial=$1 mod=$2 name=$3 dev=$4 gid=$5 sdev=$6 sgid=$7 sip=$8 t=$9
	local dir="$BENCH_OUT/$1/$2" try v='' sampler='' samples
	shift 9
	samples="$dir/$name.cpu"
	local pre=()
	[ "${PERF:-0}" != 1 ] || pre=(perf record -e cpu-clock -F 999 -a -q -o "$dir/$name.perf.data" --)
	for try in 1 2 3; do
		[ -z "${CPU_BYTES:-}" ] || { cpu_sampler "$samples" "$dev" & sampler=$!; }
		peer_pair "bench-$trial-$mod-$name" "$t" -d "$sdev" -x "$sgid" -F "$@" -- \
			"${pre[@]}" "$t" -d "$dev" -x "$gid" -F "$@" "$sip" >/dev/null || { stop_sampler; return 1; }
		stop_sampler
		cp "$LOGDIR/bench-$trial-$mod-$name.client.log" "$dir/$name.log"
		v=$("$RXECC_TOP/build/userspace/rxecc-report" headline "$dir/$name.log") && break
		echo "trial $trial $mod $name: no valid result (try $try), repeating"
	done
	[ -n "$v" ] || return 1
	[ "${PERF:-0}" != 1 ] || profile_summary "$dir/$name" || return 1
	local cpu=
	if [ -n "${CPU_BYTES:-}" ]; then
		cpu_per_gb "$samples" "$CPU_BYTES" "$dir/$name" || return 1
		cpu=", $(cut -d' ' -f1 "$dir/${name}_cpu.value") CPU-s/GB ($(cut -d' ' -f1 "$dir/${name}_kcpu.value") kernel)"
	fi
	echo "trial $trial $mod $name: $v$cpu"
}
# profile_summary PREFIX: PREFIX.perf.data summed up in PREFIX.profile.md
# (while the module is loaded: perf reads its symbols from /proc/kallsyms),
# the data then removed (megabytes per run).
profile_summary() {
	perf report -i "$1.perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
		python3 "$RXECC_TOP/ci/perf_summary.py" --top 15 >"$1.profile.md" || return 1
	rm -f "$1.perf.data"
}
stop_sampler() {
	[ -n "$sampler" ] || return 0
	kill "$sampler" 2>/dev/null
	wait "$sampler" 2>/dev/null
	sampler=
}

# cpu_sampler FILE DEV: every 20 ms until killed, one line "UPTIME BUSY KERNEL
# PKTS": the jiffies (USER_HZ) of all CPUs that were not idle, of those the
# kernel's (system, irq, softirq), and DEV's sent_pkts. Builtins only, so the
# sampler itself costs little.
cpu_sampler() {
	local up _ u n s i q sq st p tick tfd
	# (read -t on a FIFO nobody writes: a 20 ms wait without a fork)
	tick=$(mktemp -u) && mkfifo "$tick" && exec {tfd}<>"$tick" && rm -f "$tick" || return 1
	while :; do
		read -r up _ </proc/uptime
		read -r _ u n s i _ q sq st _ </proc/stat
		read -r p <"/sys/class/infiniband/$2/ports/1/hw_counters/sent_pkts"
		echo "$up $((u + n + s + q + sq + st)) $((s + q + sq)) $p"
		read -r -t 0.02 -u "$tfd" _ || :
	done >"$1"
}

# cpu_per_gb SAMPLES BYTES PREFIX: CPU time per GB (1e9 B) over the window
# in which the device sent packets (from the sample before the first rise of
# sent_pkts to the sample after the last): PREFIX_cpu.value (all CPU time)
# and PREFIX_kcpu.value (the kernel's). The window's edges add at most one
# sampling period each.
cpu_per_gb() {
	local hz
	hz=$(getconf CLK_TCK) || return 1
	awk -v bytes="$2" -v hz="$hz" -v pre="$3" '
		{ t[NR] = $1; b[NR] = $2; k[NR] = $3; p[NR] = $4 }
		NR > 1 && p[NR] > p[NR - 1] { if (!first) first = NR - 1; last = NR }
		END {
			if (!first || last <= first || bytes <= 0) { print "no transfer in the samples" > "/dev/stderr"; exit 1 }
			gb = bytes / 1e9
			printf "%.2f CPU-s/GB all CPU time per GB moved\n", \
				(b[last] - b[first]) / hz / gb > pre "_cpu.value"
			printf "%.2f s window\n", t[last] - t[first] > pre "_cpu.window"
			printf "%.2f CPU-s/GB kernel CPU time per GB moved\n", \
				(k[last] - k[first]) / hz / gb > pre "_kcpu.value"
		}' "$1"
}

# Bytes in every slab cache (active objects x object size).
slab_bytes() { awk 'NR > 2 { s += $2 * $4 } END { printf "%.0f\n", s }' /proc/slabinfo; }

# qp_memory TRIAL MODULE: the slab memory per QP: perftest's two sides hold
# QP_MEMORY_QPS QPs each on b0 (loopback); the slab total then, less the
# total before, over their number (QPs, CQs, MRs and the uverbs objects that
# come with each QP: the same for both modules, so the difference is what
# rxecc adds).
qp_memory() {
	local trial=$1 mod=$2 dir="$BENCH_OUT/$1/$2" before during n pids=()
	# (8 in flight per QP: perftest's CQ holds depth x QPs)
	local args=(-s 16384 -t 8 -q "$QP_MEMORY_QPS" -D 8)
	sync; echo 2 >/proc/sys/vm/drop_caches
	before=$(slab_bytes)
	ib_write_bw -d b0 -x "$G0" -F "${args[@]}" >"$dir/qp_memory.server.txt" 2>&1 &
	pids+=($!)
	sleep 1
	client_run "$dir/qp_memory.client.txt" ib_write_bw -d b0 -x "$G0" -F "${args[@]}" "$LO_IP" >/dev/null &
	pids+=($!)
	n=$((2 * QP_MEMORY_QPS))
	if ! wait_for 60 bash -c "[ \$(rdma res show qp link b0/1 | grep -c 'type RC') -ge $n ]"; then
		echo "trial $trial $mod: $n RC QPs never existed"
		kill "${pids[@]}" 2>/dev/null
		wait "${pids[@]}"
		return 1
	fi
	during=$(slab_bytes)
	local p rc=0
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	[ $rc -eq 0 ] || return 1
	echo "$(((during - before) / n)) B slab per QP" >"$dir/qp_memory.value"
	echo "trial $trial $mod qp_memory: $(cat "$dir/qp_memory.value") ($n QPs)"
}

# ---- NVMe over Fabrics: a RAM disk behind hb, the host on ha ---------------
SUBSYS=$NVMET/subsystems/$NQN PORTDIR=$NVMET/ports/1 BLK=
nvmf_modules() {
	local m
	modprobe configfs || return 1
	mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config || return 1
	modprobe brd rd_nr=1 rd_size=$((64 * 1024)) max_part=0 || return 1
	for m in nvmet nvmet-rdma nvme-rdma; do modprobe "$m" || return 1; done
	wait_for 10 test -b /dev/ram0 || return 1
	mkdir -p "$SUBSYS" && echo 1 >"$SUBSYS/attr_allow_any_host" || return 1
	mkdir -p "$SUBSYS/namespaces/1" && echo /dev/ram0 >"$SUBSYS/namespaces/1/device_path" &&
		echo 1 >"$SUBSYS/namespaces/1/enable"
}
# nvmf_up: the port on hb's address and the host connected; BLK its namespace
nvmf_up() {
	mkdir "$PORTDIR" || return 1
	echo rdma >"$PORTDIR/addr_trtype" && echo ipv4 >"$PORTDIR/addr_adrfam" &&
		echo "$B_IP" >"$PORTDIR/addr_traddr" && echo 4420 >"$PORTDIR/addr_trsvcid" || return 1
	ln -s "$SUBSYS" "$PORTDIR/subsystems/$NQN" || return 1
	timeout 60 nvme connect -t rdma -n "$NQN" -a "$B_IP" -s 4420 --hostnqn="$HOSTNQN" >/dev/null || return 1
	wait_for 30 nvmf_blk || { echo "no block device of $NQN"; return 1; }
	nvmf_blk
}
# nvmf_blk: the block device of the subsystem's namespace, in BLK
nvmf_blk() {
	local b
	for b in /sys/block/nvme*; do
		if [ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] && [ -b "/dev/${b##*/}" ]; then
			BLK=/dev/${b##*/}
			return 0
		fi
	done
	return 1
}
# nvmf_down: the host disconnected and the port gone (rdma_cm holds the
# device while the port listens, so before any module swap)
nvmf_down() {
	[ -d "$PORTDIR" ] || return 0
	nvme disconnect -n "$NQN" >/dev/null 2>&1
	rm -f "$PORTDIR/subsystems/$NQN"
	rmdir "$PORTDIR"
}

# fio_run TRIAL MODULE NAME RW BS DEPTH: fio on BLK for NVMF_TIME s, the
# throughput as NAME.rate (MB/s, 1e6 B) and the CPU time per GB.
fio_run() {
	local trial=$1 mod=$2 name=$3 dir="$BENCH_OUT/$1/$2" sampler='' out bytes mbs
	local pre=()
	[ "${PERF:-0}" != 1 ] || pre=(perf record -e cpu-clock -F 999 -a -q -o "$dir/$name.perf.data" --)
	cpu_sampler "$dir/$name.cpu" ha &
	sampler=$!
	out=$("${pre[@]}" fio --name="$name" --filename="$BLK" --direct=1 --ioengine=libaio --rw="$4" --bs="$5" \
		--iodepth="$6" --runtime="$NVMF_TIME" --time_based --output-format=terse --terse-version=3)
	local rc=$?
	stop_sampler
	[ $rc -eq 0 ] || { echo "trial $trial $mod $name: fio failed: $out"; return 1; }
	echo "$out" >"$dir/$name.fio"
	[ "${PERF:-0}" != 1 ] || profile_summary "$dir/$name" || return 1
	# terse v3: field 6 read KiB, 7 read KiB/s; 47 write KiB, 48 write KiB/s
	# (a here-string: the guest has no /dev/fd for process substitution)
	read -r bytes mbs <<<"$(awk -F';' 'NR == 1 { k = $6 + $47; r = $7 + $48;
		printf "%.0f %.2f\n", k * 1024, r * 1024 / 1e6 }' <<<"$out")"
	if [ -z "$mbs" ] || [ "${bytes:-0}" -le 0 ]; then
		echo "trial $trial $mod $name: no throughput in $out"
		return 1
	fi
	echo "$mbs MB/s fio $4 $5 iodepth $6" >"$dir/$name.rate"
	cpu_per_gb "$dir/$name.cpu" "$bytes" "$dir/$name" || return 1
	echo "trial $trial $mod $name: $mbs MB/s, $(cut -d' ' -f1 "$dir/${name}_cpu.value") CPU-s/GB" \
		"($(cut -d' ' -f1 "$dir/${name}_kcpu.value") kernel)"
}

# run_case TRIAL MODULE CASE
run_case() {
	local trial=$1 mod=$2 c=$3 big=$((64 * 1024)) q64_iters
	[ "$c" != qp_memory ] || [ "$trial" -le "$QP_MEMORY_TRIALS" ] || return 0
	mkdir -p "$BENCH_OUT/$trial/$mod"
	use "$mod" || return 1
	q64_iters=$((Q64_MIB * 1024 * 1024 / 16384 / 64))	# messages per QP
	case $c in
	lo_write | lo_read | lo_send)
		CPU_BYTES=$((BW_ITERS * big)) perf_run "$trial" "$mod" "$c" b0 "$G0" b0 "$G0" "$LO_IP" \
			"ib_${c#lo_}_bw" -s $big -n "$BW_ITERS" ;;
	lo_lat)
		perf_run "$trial" "$mod" "$c" b0 "$G0" b0 "$G0" "$LO_IP" ib_send_lat -s 2 -n "$LAT_ITERS" ;;
	lo_write_q64)
		CPU_BYTES=$((64 * q64_iters * 16384)) perf_run "$trial" "$mod" "$c" b0 "$G0" b0 "$G0" "$LO_IP" \
			ib_write_bw -s 16384 -t 8 -q 64 -n "$q64_iters" ;;
	2h_write | 2h_read | 2h_send)
		CPU_BYTES=$((BW_ITERS * big)) perf_run "$trial" "$mod" "$c" ha "$GA" hb "$GB" "$B_IP" \
			"ib_${c#2h_}_bw" -s $big -n "$BW_ITERS" ;;
	2h_lat)
		perf_run "$trial" "$mod" "$c" ha "$GA" hb "$GB" "$B_IP" ib_send_lat -s 2 -n "$LAT_ITERS" ;;
	2h_write_q64)
		CPU_BYTES=$((64 * q64_iters * 16384)) perf_run "$trial" "$mod" "$c" ha "$GA" hb "$GB" "$B_IP" \
			ib_write_bw -s 16384 -t 8 -q 64 -n "$q64_iters" ;;
	nvmf)
		nvmf_up || { nvmf_down; return 1; }
		fio_run "$trial" "$mod" nvmf_seq_read read 128k 16 &&
			fio_run "$trial" "$mod" nvmf_seq_write write 128k 16 &&
			fio_run "$trial" "$mod" nvmf_rand_read randread 4k 32
		local rc=$?
		nvmf_down
		return $rc ;;
	qp_memory) qp_memory "$trial" "$mod" ;;
	*) echo "unknown case $c"; return 1 ;;
	esac
}

modules_unload >/dev/null 2>&1
veth_up d0 "$LO_IP/24" || exit 1
two_hosts_up || { echo "bench: the two hosts' network could not be made"; exit 1; }
[[ " $CASES " != *" nvmf "* ]] || nvmf_modules || { echo "bench: NVMe over Fabrics could not be set up"; exit 1; }
fail=0
read -ra mods <<<"$MODULES"
read -ra cases <<<"$CASES"
# The order of the modules reverses from one case to the next, and the
# order of the cases from one trial to the next: each case then runs its
# modules in the opposite order in the next trial (whatever the number of
# cases), and one module swap per case is all it takes.
flip=0
for t in $(seq 1 "$TRIALS"); do
	if [ $((t % 2)) = 0 ]; then
		order_cases=()
		for ((i = ${#cases[@]} - 1; i >= 0; i--)); do order_cases+=("${cases[i]}"); done
	else
		order_cases=("${cases[@]}")
	fi
	for c in "${order_cases[@]}"; do
		order=("${mods[@]}")
		if [ $flip = 1 ]; then
			order=()
			for ((i = ${#mods[@]} - 1; i >= 0; i--)); do order+=("${mods[i]}"); done
		fi
		flip=$((1 - flip))
		for m in "${order[@]}"; do
			run_case "$t" "$m" "$c" || { echo "trial $t $m $c failed"; fail=1; }
		done
	done
done
exit $fail
