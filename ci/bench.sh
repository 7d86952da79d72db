#!/bin/bash
# `make bench`: rdma_rxecc against stock rdma_rxe in one guest boot,
# alternating (ci/guest/bench.sh), then medians and rxecc/rxe ratios printed
# and written to OUT/bench.json (OUT defaults to ./out).
#   ROUNDS (default 5), BW_ITERS, LAT_ITERS, SCALE_QPS (default "1 16 64
#   256"), SCALE_MIB (64), QP_MEMORY_QPS (256) tune the run.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
mkdir -p "$out"
rounds=${ROUNDS:-5}
echo "bench: one guest, $rounds rounds of rdma_rxe and rdma_rxecc (alternating), loopback on a veth"
"$top/ci/vm.sh" --name bench --smp 2 --timeout 3600 -- \
	env ROUNDS="$rounds" BW_ITERS="${BW_ITERS:-3000}" LAT_ITERS="${LAT_ITERS:-3000}" \
	SCALE_QPS="${SCALE_QPS:-1 16 64 256}" SCALE_MIB="${SCALE_MIB:-64}" \
	QP_MEMORY_QPS="${QP_MEMORY_QPS:-256}" "$top/ci/guest/bench.sh"
rc=$?
[ $rc -eq 0 ] || { echo "bench: the guest run failed (exit $rc; logs in build/vm/runs/bench)" >&2; exit 1; }
rm -rf "$out/bench"
cp -r "$top/build/vm/runs/bench/g0/bench" "$out/bench"
echo
echo "bench: medians over $rounds rounds (ratio = rxecc/rxe; bandwidth: higher is better, latency: lower is better)"
"$top/build/userspace/rxecc-report" bench "$out/bench" --json "$out/bench.json" \
	--meta "kernel=$("$top/ci/kver.sh")" --meta "rounds=$rounds" \
	--meta "bw_iters=${BW_ITERS:-3000}" --meta "lat_iters=${LAT_ITERS:-3000}" \
	--meta "scale_qps=${SCALE_QPS:-1 16 64 256}" --meta "scale_mib=${SCALE_MIB:-64}" \
	--meta "qp_memory_qps=${QP_MEMORY_QPS:-256}" \
	--meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)" --meta "command=make bench" || exit 1
echo "bench: raw reports in $out/bench, summary in $out/bench.json"
