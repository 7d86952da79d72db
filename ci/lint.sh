#!/bin/bash
# Static checks, one result line each (appended to $RESULTS when set):
#   the modules build warning-free with W=1 and with sparse (C=2);
#   checkpatch --strict on rxecc's own kernel files and on every patch;
#   clang-format and (ci/tidy.sh) clang-tidy on the C++ sources;
#   every shell script (with shellcheck) and Python file (pyflakes) in git;
#   every shellcheck disable and NOLINT allowed and with its reason.
# LINT_TIDY=0 leaves clang-tidy out (make check: its 4 minutes of both CPUs
# would take make check past its 30; .ci/run runs it after make check).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kdir=${KDIR:-/lib/modules/$("$top/ci/kver.sh")/build}
checkpatch="$top/build/kernel/checkpatch/scripts/checkpatch.pl"
logdir="$top/build/lint"
mkdir -p "$logdir"
fails=0

result() {	# result OK|FAIL DESC [LOG]
	local line
	if [ "$1" = OK ]; then line="ok lint: $2"; else line="not ok lint: $2"; fails=$((fails + 1)); fi
	echo "$line"
	[ -z "${RESULTS:-}" ] || echo "$line" >> "$RESULTS"
	if [ "$1" != OK ] && [ -n "${3:-}" ]; then sed 's/^/# /' "$3" | head -n 40; fi
}

# The checks run side by side where they can (the sparse build is make -j;
# checkpatch, shellcheck and pyflakes are one process each): about half a
# minute less than one after another on two cores. Their results are printed
# in a fixed order, each once it is known.

# W=1 and sparse in one build, of a copy: the tree's modules, which the
# guests load, stay as they are.
stage=$logdir/mod
"$top/ci/stage-modules.sh" "$stage" || { result FAIL "derive the rxe tree"; exit 1; }
kbuild_log="$logdir/kbuild.log"
make -C "$kdir" M="$stage" W=1 C=2 -j"$(nproc)" modules >"$kbuild_log" 2>&1 &
kbuild_pid=$!
shellcheck_pid='' pyflakes_pid=''
# (a lint run stopped half-way stops its checks too)
trap 'kill $kbuild_pid $shellcheck_pid $pyflakes_pid 2>/dev/null' EXIT

# The shell scripts: *.sh, and the files without an extension whose first
# line runs bash or sh (.ci/run, ci/guest/initramfs-init). shellcheck's
# options (following sourced files, the checks left out) are in
# .shellcheckrc at the top, which it finds from each script's directory.
mapfile -t shells < <(cd "$top" || exit 1
	git ls-files | while IFS= read -r f; do
		case ${f##*/} in
		*.sh) echo "$f" ;;
		*.*) ;;
		*) [ -f "$f" ] && head -n 1 "$f" | grep -qE '^#! ?(/usr)?/bin/(env +)?(ba)?sh( |$)' && echo "$f" ;;
		esac
	done)
shellcheck_log="$logdir/shellcheck.log"
(cd "$top" && shellcheck -f gcc "${shells[@]}") >"$shellcheck_log" 2>&1 &
shellcheck_pid=$!
mapfile -t pys < <(cd "$top" && git ls-files '*.py')
pyflakes_log="$logdir/pyflakes.log"
(cd "$top" && pyflakes3 "${pys[@]}") >"$pyflakes_log" 2>&1 &
pyflakes_pid=$!

# checkpatch's results, printed after the build's
later=()
later_result() { later+=("$1" "$2" "${3:-}"); }
own="$top/drivers/infiniband/sw/rxecc"
for f in "$own"/*.c "$own"/*.h "$top"/net/sched/*.c "$top"/include/net/*.h; do
	[[ $f == *.mod.c ]] && continue	# kbuild's generated module info
	log="$logdir/checkpatch-$(basename "$f").log"
	# The kernel's qdisc types (struct Qdisc, Qdisc_ops) are CamelCase: not
	# checked in the qdisc and in files that read a qdisc.
	ign=()
	if [[ $f == "$top"/net/* ]] || grep -q 'struct Qdisc' "$f"; then ign=(--ignore CAMELCASE); fi
	# The tables declared once as X-macro lists (rxecc_counters.h, the
	# switches in rxecc.h, the DCQCN parameters in rxecc_dcqcn.h) and the
	# files that expand them: a list is a macro of many calls of its
	# argument, and the generators expand to initialisers, declarations
	# (module parameters, static_assert) and statements without a do-while.
	# Each file is spared only the checks its macros fail.
	case $f in
	*/rxecc_counters.h | */rxecc.h | */rxecc_dcqcn.h)
		ign+=(--ignore "COMPLEX_MACRO,MACRO_ARG_REUSE") ;;
	*/rxecc_nl.c)
		ign+=(--ignore "COMPLEX_MACRO,MACRO_ARG_PRECEDENCE,MULTISTATEMENT_MACRO_USE_DO_WHILE,TRAILING_SEMICOLON") ;;
	*/rxecc_config.c)
		ign+=(--ignore "MACRO_ARG_REUSE,MACRO_ARG_PRECEDENCE,MULTISTATEMENT_MACRO_USE_DO_WHILE,TRAILING_SEMICOLON") ;;
	esac
	# The one place each module tells the kernel lines apart (rxecc is built
	# for 6.1 and 6.12): version checks, and a macro that drops an argument.
	case $f in
	*/rxecc_compat.h | */sch_pfc_trace.h)
		ign+=(--ignore "LINUX_VERSION_CODE,CONSTANT_COMPARISON,MACRO_ARG_UNUSED") ;;
	esac
	if perl "$checkpatch" --no-tree --strict --quiet "${ign[@]}" -f "$f" >"$log" 2>&1; then
		later_result OK "checkpatch --strict ${f#"$top"/}"
	else
		later_result FAIL "checkpatch --strict ${f#"$top"/}" "$log"
	fi
done
# The patches as kernel patches: paths made relative to the kernel tree.
# Every kernel line's series (patches/X.Y/).
for p in "$own"/patches/*/*.patch; do
	name=${p#"$own"/}
	log="$logdir/checkpatch-${name//\//-}.log"
	if sed -E 's@^(---|\+\+\+) (a|b)/@\1 \2/drivers/infiniband/sw/rxe/@' "$p" |
		perl "$checkpatch" --no-tree --strict --quiet --no-signoff - >"$log" 2>&1; then
		later_result OK "checkpatch --strict $name"
	else
		later_result FAIL "checkpatch --strict $name" "$log"
	fi
done


wait "$kbuild_pid"
rc=$?
if [ $rc -eq 0 ] && ! grep -qE 'warning:|error:' "$kbuild_log"; then
	result OK "rdma_rxecc and sch_pfc build with W=1 and sparse (C=2) without a warning"
else
	grep -E 'warning:|error:' "$kbuild_log" > "$kbuild_log.warn"
	result FAIL "rdma_rxecc and sch_pfc build with W=1 and sparse (C=2) without a warning" "$kbuild_log.warn"
fi
for ((i = 0; i < ${#later[@]}; i += 3)); do
	result "${later[i]}" "${later[i + 1]}" "${later[i + 2]}"
done

mapfile -t cxx < <(cd "$top" || exit 1
	git ls-files 'userspace/*.cpp' 'userspace/*.hpp' 2>/dev/null || find userspace -name '*.[ch]pp')
log="$logdir/clang-format.log"
if (cd "$top" && clang-format --dry-run -Werror "${cxx[@]}") >"$log" 2>&1; then
	result OK "clang-format on the C++ sources"
else
	result FAIL "clang-format on the C++ sources" "$log"
fi

wait "$shellcheck_pid"
rc=$?
if [ ${#shells[@]} -gt 0 ] && [ $rc -eq 0 ]; then
	result OK "shellcheck on the ${#shells[@]} shell scripts"
else
	result FAIL "shellcheck on the ${#shells[@]} shell scripts" "$shellcheck_log"
fi
# The exceptions each linter is told to make: every shellcheck disable and
# every NOLINT names only what .shellcheckrc and userspace/.clang-tidy list as
# allowed, and says why on its line (ci/lint-disables.sh).
log="$logdir/shellcheck-disables.log"
if "$top/ci/lint-disables.sh" shellcheck "${shells[@]}" >"$log" 2>&1; then
	result OK "every shellcheck disable allowed by .shellcheckrc, with its reason"
else
	result FAIL "every shellcheck disable allowed by .shellcheckrc, with its reason" "$log"
fi
log="$logdir/nolint.log"
if "$top/ci/lint-disables.sh" clang-tidy >"$log" 2>&1; then
	result OK "every NOLINT names checks userspace/.clang-tidy allows, with its reason"
else
	result FAIL "every NOLINT names checks userspace/.clang-tidy allows, with its reason" "$log"
fi
wait "$pyflakes_pid"
rc=$?
if [ ${#pys[@]} -gt 0 ] && [ $rc -eq 0 ]; then
	result OK "pyflakes on the ${#pys[@]} Python files"
else
	result FAIL "pyflakes on the ${#pys[@]} Python files" "$pyflakes_log"
fi
if [ "${LINT_TIDY:-1}" != 0 ]; then
	"$top/ci/tidy.sh" || fails=$((fails + 1))
fi
[ $fails -eq 0 ]
