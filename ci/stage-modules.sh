#!/bin/bash
# ci/stage-modules.sh DIR: a copy of the module sources (the derived rxe tree,
# sch_pfc and the headers, without objects) in DIR, for a build that must not
# touch the tree's own modules: one against the debug kernel
# (ci/check-debug.sh), or the W=1 + sparse build of ci/lint.sh, which must
# leave the modules the guests load as they are.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
stage=${1:?usage: stage-modules.sh DIR}
"$top/ci/derive.sh" >/dev/null || { echo "stage-modules: deriving the rxe tree failed" >&2; exit 1; }
rm -rf "$stage"
mkdir -p "$stage"
(cd "$top" && tar -ch --exclude='*.o' --exclude='*.ko' --exclude='.*.cmd' --exclude='*.mod' \
	--exclude='*.mod.c' --exclude=modules.order --exclude=Module.symvers --exclude=.pc \
	Kbuild build/kernel/rxecc net/sched include) | tar -x -C "$stage"
