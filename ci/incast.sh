#!/bin/bash
# The 3:1 incast measurement (ci/guest/incast.sh in one guest boot), then its
# analysis on the host: per mode, the aggregate goodput against the port rate,
# each flow's goodput and share (Jain index), switch drops and marks, CNPs,
# limiter deferrals and retransmissions. Goodput counts each data packet once
# (by sender and PSN) in the capture at the switch port, over the time all
# three flows ran.
#   ci/incast.sh [OUT]       (RATE=50mbit DURATION=15 MODES="off lab mlx5")
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/out}
run="$top/build/vm/runs/incast/g0"
"$top/ci/vm.sh" --name incast --smp 2 --timeout 900 -- "$top/ci/guest/incast.sh"
mkdir -p "$out"
python3 "$top/ci/incast_report.py" "$run/incast" "${RATE:-50mbit}" | tee "$out/incast.txt"
