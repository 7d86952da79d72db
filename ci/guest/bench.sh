#!/bin/bash
# Guest side of `make bench`: stock rdma_rxe and rdma_rxecc measured
# alternately in this one boot (the order flips every round, the modules are
# swapped between runs), loopback through one device on a veth:
#   ib_write_bw and ib_read_bw at 64 KiB, ib_send_lat at 2 B; rdma_rxecc with
#   DCQCN enabled as it loads (no congestion: the cost of the hooks);
#   scaling: ib_write_bw with 1 .. 256 QPs (perftest -q; 16 KiB messages,
#   8 in flight per QP, SCALE_MIB in all, shared by the QPs), and the guest's
#   CPU time per GB moved while the data flowed (all CPUs, and the kernel's
#   part: system + irq + softirq, where the driver runs);
#   memory: the kernel slab memory per QP while QP_MEMORY_QPS QPs exist.
# Reports go to $BENCH_OUT/<round>/<rxe|rxecc>/<test>.log (and .value for a
# number of the bench's own).
# shellcheck source=../../lib/shell/lib.sh
source "$RXECC_TOP/lib/shell/lib.sh"
ROUNDS=${ROUNDS:-5}
BW_ITERS=${BW_ITERS:-3000}
LAT_ITERS=${LAT_ITERS:-3000}
SCALE_QPS=${SCALE_QPS:-1 16 64 256}
SCALE_MIB=${SCALE_MIB:-64}
QP_MEMORY_QPS=${QP_MEMORY_QPS:-256}
BENCH_OUT=${BENCH_OUT:-/mnt/out/bench}
IP=10.0.0.1

modules_unload >/dev/null 2>&1
veth_up d0 $IP/24 || exit 1
fail=0

measure() {
	local round=$1 mod=$2 dir="$BENCH_OUT/$1/$2"
	mkdir -p "$dir"
	modules_unload || return 1
	if [ "$mod" = rxecc ]; then rxecc_load; else rxe_load; fi || return 1
	rdma_link_add b0 "$mod" d0 || return 1
	if [ "$mod" = rxecc ]; then
		# rdma_rxecc as loaded: DCQCN on (mlx5 profile, ECT(0) on data, the
		# gates and hooks all in the path), no congestion on a loopback.
		local cfg
		cfg=$("$RXECC_TOOL" dcqcn show dev b0) || return 1
		echo "rdma_rxecc: $(echo "$cfg" | grep -E '^dev |^  (rp_enable|np_enable|ecn) ' | tr -s ' \n' ' ')"
		echo "$cfg" | grep -qE '^  rp_enable +0xff ' && echo "$cfg" | grep -qE '^  np_enable +0xff ' || return 1
	fi
	local g
	g=$(wait_gid b0 $IP) || return 1
	local t q
	for t in ib_write_bw ib_read_bw ib_send_lat; do
		case $t in
		*_bw) perf_run "$round" "$mod" "$g" "$t" "$t" -s 65536 -n "$BW_ITERS" ;;
		*_lat) perf_run "$round" "$mod" "$g" "$t" "$t" -s 2 -n "$LAT_ITERS" ;;
		esac || return 1
	done
	# Scaling: SCALE_MIB MiB over QPS QPs (perftest's -n is per QP).
	local name iters
	for q in $SCALE_QPS; do
		name=ib_write_bw_q$(printf %03d "$q")
		iters=$((SCALE_MIB * 64 / q))
		CPU_SAMPLES="$dir/$name.cpu" perf_run "$round" "$mod" "$g" "$name" ib_write_bw \
			-s 16384 -t 8 -q "$q" -n $iters || return 1
		cpu_per_gb "$dir/$name.cpu" $((q * iters * 16384)) "$dir/$name" || return 1
		echo "round $round $mod $name: $(cat "$dir/${name}_cpu.value"), $(cat "$dir/${name}_kcpu.value")," \
			"$(cat "$dir/${name}_cpu.window")"
	done
	qp_memory "$round" "$mod" "$g" || return 1
}

# perf_run ROUND MODULE GID NAME TEST ARGS...: one perftest pair on b0 (TEST
# with ARGS on both sides), the client's report kept as NAME.log. perftest
# sometimes fails to calibrate its clock under TCG and reports inf: such a
# run is repeated (at most twice). With CPU_SAMPLES=FILE, cpu_sampler records
# the run (the last try's).
perf_run() {
	local round=$1 mod=$2 g=$3 name=$4 t=$5 dir="$BENCH_OUT/$1/$2" try v='' sampler=
	shift 5
	for try in 1 2 3; do
		[ -z "${CPU_SAMPLES:-}" ] || { cpu_sampler "$CPU_SAMPLES" & sampler=$!; }
		peer_pair "bench-$round-$mod-$name" "$t" -d b0 -x "$g" -F "$@" -- \
			"$t" -d b0 -x "$g" -F "$@" $IP >/dev/null || return 1
		[ -z "$sampler" ] || { kill "$sampler"; wait "$sampler" 2>/dev/null; sampler=; }
		cp "$LOGDIR/bench-$round-$mod-$name.client.log" "$dir/$name.log"
		v=$("$RXECC_TOP/build/userspace/rxecc-report" headline "$dir/$name.log") && break
		echo "round $round $mod $name: no valid result (try $try), repeating"
	done
	[ -n "$v" ] || return 1
	echo "round $round $mod $name: $v"
}

# cpu_sampler FILE: every 20 ms until killed, one line "UPTIME BUSY KERNEL
# PKTS": the jiffies (USER_HZ) of all CPUs that were not idle, of those the
# kernel's (system, irq, softirq), and b0's sent_pkts. Builtins only, so the
# sampler itself costs little.
cpu_sampler() {
	local up _ u n s i q sq st p tick tfd
	# (read -t on a FIFO nobody writes: a 20 ms wait without a fork)
	tick=$(mktemp -u) && mkfifo "$tick" && exec {tfd}<>"$tick" && rm -f "$tick" || return 1
	while :; do
		read -r up _ </proc/uptime
		read -r _ u n s i _ q sq st _ </proc/stat
		read -r p </sys/class/infiniband/b0/ports/1/hw_counters/sent_pkts
		echo "$up $((u + n + s + q + sq + st)) $((s + q + sq)) $p"
		read -r -t 0.02 -u "$tfd" _ || :
	done >"$1"
}

# cpu_per_gb SAMPLES BYTES PREFIX: CPU time per GB (1e9 B) over the window
# in which b0 sent packets (from the sample before the first rise of
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
			if (!first || last <= first) { print "no transfer in the samples" > "/dev/stderr"; exit 1 }
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

# qp_memory ROUND MODULE GID: the slab memory per QP: perftest's two sides
# hold QP_MEMORY_QPS QPs each on b0 (loopback); the slab total then, less
# the total before, over their number (QPs, CQs, MRs and the uverbs objects
# that come with each QP: the same for both modules, so the difference is
# what rxecc adds).
qp_memory() {
	local round=$1 mod=$2 g=$3 dir="$BENCH_OUT/$1/$2" before during n pids=()
	# (8 in flight per QP, as scale_run: perftest's CQ holds depth x QPs)
	local args=(-s 16384 -t 8 -q "$QP_MEMORY_QPS" -D 8)
	sync; echo 2 >/proc/sys/vm/drop_caches
	before=$(slab_bytes)
	ib_write_bw -d b0 -x "$g" -F "${args[@]}" >"$dir/qp_memory.server.txt" 2>&1 &
	pids+=($!)
	sleep 1
	client_run "$dir/qp_memory.client.txt" ib_write_bw -d b0 -x "$g" -F "${args[@]}" $IP >/dev/null &
	pids+=($!)
	n=$((2 * QP_MEMORY_QPS))
	wait_for 60 bash -c "[ \$(rdma res show qp link b0/1 | grep -c 'type RC') -ge $n ]" ||
		{ echo "round $round $mod: $n RC QPs never existed"; wait "${pids[@]}"; return 1; }
	during=$(slab_bytes)
	wait "${pids[@]}" || return 1
	echo "$(((during - before) / n)) B slab per QP" >"$dir/qp_memory.value"
	echo "round $round $mod qp_memory: $(cat "$dir/qp_memory.value") ($n QPs)"
}

for r in $(seq 1 "$ROUNDS"); do
	if [ $((r % 2)) = 1 ]; then order="rxe rxecc"; else order="rxecc rxe"; fi
	for m in $order; do
		measure "$r" "$m" || { echo "round $r $m failed"; fail=1; }
	done
done
modules_unload >/dev/null 2>&1
exit $fail
