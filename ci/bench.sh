#!/bin/bash
# `make bench`: rdma_rxecc against stock rdma_rxe in one guest boot,
# interleaved per test (ci/guest/bench.sh), then per test the medians, the
# best, the rxecc/rxe ratio with its 95 % confidence interval and a paired
# test, printed and written to OUT/bench.json (OUT defaults to ./out).
#   TRIALS (default 10; ROUNDS, its old name, is read as it), CASES (default: all, see ci/guest/bench.sh), MODULES
#   (rxe rxecc rxecc-nocc), BW_ITERS (1500 messages of 64 KiB), LAT_ITERS
#   (5000), Q64_MIB (64), NVMF_TIME (3 s per fio run), QP_MEMORY_QPS (256),
#   QP_MEMORY_TRIALS (3) tune the run. PERF=1 (make profile, which passes
#   OUT/profile as the directory) runs every client under perf and writes
#   profile.md there: where the cycles went, per test and module.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
mkdir -p "$out"
# (ROUNDS: the bench's name for its repetitions before 2026-12-07)
trials=${TRIALS:-${ROUNDS:-10}}
vars=(TRIALS="$trials" CASES="${CASES:-}" MODULES="${MODULES:-}" BW_ITERS="${BW_ITERS:-1500}"
	LAT_ITERS="${LAT_ITERS:-5000}" Q64_MIB="${Q64_MIB:-64}" NVMF_TIME="${NVMF_TIME:-3}"
	QP_MEMORY_QPS="${QP_MEMORY_QPS:-256}" QP_MEMORY_TRIALS="${QP_MEMORY_TRIALS:-3}"
	PERF="${PERF:-}")
# (an empty CASES or MODULES: the guest's default)
env_args=()
for v in "${vars[@]}"; do [ -z "${v#*=}" ] || env_args+=("$v"); done
echo "bench: one guest, $trials trials, each test on rdma_rxe and rdma_rxecc back to back"
# (perf report and its summary add about a minute per case and module)
per_trial=600
[ "${PERF:-0}" != 1 ] || per_trial=2400
"$top/ci/vm.sh" --name bench --smp 2 --timeout $((600 + per_trial * trials)) -- \
	env "${env_args[@]}" "$top/ci/guest/bench.sh"
rc=$?
# exit 1 with results: some runs failed (each named in the log); the others
# are still reported, and the bench fails at the end
if [ $rc -ne 0 ] && { [ $rc -ne 1 ] || [ ! -d "$top/build/vm/runs/bench/g0/bench" ]; }; then
	echo "bench: the guest run failed (exit $rc; logs in build/vm/runs/bench)" >&2
	exit 1
fi
rm -rf "$out/bench"
cp -r "$top/build/vm/runs/bench/g0/bench" "$out/bench"
echo
echo "bench: per test the median (best) of each module over $trials trials; ratio = rxecc/rxe of the"
echo "medians; 95% CI: of the per-trial ratios' geometric mean; p: Wilcoxon signed-rank (paired by"
echo "trial); for 5%: trials for an interval of +-5 %, which tells a 10 % difference; ^ higher is better"
echo
meta=(--meta "kernel=$("$top/ci/kver.sh")" --meta "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	--meta "commit=$(git -C "$top" describe --always --dirty 2>/dev/null || echo unknown)"
	--meta "command=make bench")
for v in "${env_args[@]}"; do k=${v%%=*}; meta+=(--meta "${k,,}=${v#*=}"); done
"$top/build/userspace/rxecc-report" bench "$out/bench" --json "$out/bench.json" "${meta[@]}" || rc=1
echo "bench: raw reports in $out/bench, summary in $out/bench.json"
if [ $rc -ne 0 ]; then
	echo "bench: runs that failed:" >&2
	grep -E '^trial [0-9]+ .* failed' "$top/build/vm/runs/bench/g0/output.txt" >&2
fi
[ "${PERF:-0}" = 1 ] || exit $rc
# The profiles, one section per test and module (trial 1).
{
	echo "# Where the cycles go ($(date -u +%Y-%m-%d), commit $(git -C "$top" rev-parse --short HEAD 2>/dev/null))"
	echo
	echo "perf record -e cpu-clock -F 999 -a around each client; \`${env_args[*]} make profile\`"
	for f in "$out"/bench/1/*/*.profile.md; do
		[ -e "$f" ] || continue
		m=$(basename "$(dirname "$f")")
		echo
		echo "## $(basename "$f" .profile.md), $m"
		echo
		cat "$f"
	done
} >"$out/profile.md"
echo "bench: profiles in $out/profile.md"
exit $rc
