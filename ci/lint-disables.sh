#!/bin/bash
# The linters' exceptions against the lists of what each allows (ci/lint.sh,
# make lint):
#   ci/lint-disables.sh shellcheck SCRIPT...
#       every `# shellcheck disable=` names only kinds that .shellcheckrc lists
#       (its `# allow SCxxxx what` lines) and says why on its own line
#       (`# shellcheck disable=SC2086 # why`); every kind listed is disabled
#       somewhere
#   ci/lint-disables.sh clang-tidy
#       every NOLINT, NOLINTNEXTLINE and NOLINTBEGIN in the C++ sources under
#       userspace/ names its checks, only ones that userspace/.clang-tidy
#       lists (its `# nolint CHECK why` lines, CHECK as the NOLINT writes it),
#       and says why (`// NOLINT(CHECK): why`); NOLINTEND names its checks;
#       every check listed is used somewhere
# Prints each finding as FILE:LINE: what (paths from the top of the
# repository) and exits 1 if there is one.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 2

case ${1:-} in
shellcheck)
	shift
	rc=.shellcheckrc
	# The allowed kinds, then each script's directives.
	{ sed -nE 's/^# allow (SC[0-9]+)[[:space:]]+[^[:space:]].*/ALLOW \1/p' "$rc"
	  [ $# -eq 0 ] || grep -nHE '^[[:space:]]*#[[:space:]]*shellcheck[[:space:]].*disable=' -- "$@"; } |
	awk -v rc="$rc" '
		$1 == "ALLOW" && NF == 2 { allowed[$2] = 1; order[++n] = $2; next }
		{
			i = index($0, ":"); file = substr($0, 1, i - 1); rest = substr($0, i + 1)
			i = index(rest, ":"); line = substr(rest, 1, i - 1); text = substr(rest, i + 1)
			where = file ":" line ": "
			if (!match(text, /disable=[A-Za-z0-9,]+/)) {
				print where "a disable that names no SC code"; bad = 1; next
			}
			codes = substr(text, RSTART + 8, RLENGTH - 8); after = substr(text, RSTART + RLENGTH)
			k = split(codes, c, ",")
			for (j = 1; j <= k; j++) {
				used[c[j]] = 1
				if (!(c[j] in allowed)) {
					print where c[j] " is not among the kinds " rc " allows (# allow " c[j] " what)"
					bad = 1
				}
			}
			if (after !~ /^[[:space:]]+#[[:space:]]*[^[:space:]]/) {
				print where "no reason: write it on the line, # shellcheck disable=" codes " # why"
				bad = 1
			}
		}
		END {
			for (j = 1; j <= n; j++) if (!(order[j] in used)) {
				print rc ": " order[j] " is allowed but no script disables it: remove its line"
				bad = 1
			}
			exit bad
		}'
	;;
clang-tidy)
	cfg=userspace/.clang-tidy
	mapfile -t srcs < <(git ls-files 'userspace/*.cpp' 'userspace/*.hpp' 'userspace/*.h' 'userspace/*.c' \
		2>/dev/null || find userspace -name '*.[ch]' -o -name '*.[ch]pp')
	{ sed -nE 's/^# nolint ([^[:space:]]+)[[:space:]]+[^[:space:]].*/ALLOW \1/p' "$cfg"
	  [ ${#srcs[@]} -eq 0 ] || grep -nH 'NOLINT' -- "${srcs[@]}"; } |
	awk -v cfg="$cfg" '
		$1 == "ALLOW" && NF == 2 { allowed[$2] = 1; order[++n] = $2; next }
		{
			i = index($0, ":"); file = substr($0, 1, i - 1); rest = substr($0, i + 1)
			i = index(rest, ":"); line = substr(rest, 1, i - 1); text = substr(rest, i + 1)
			where = file ":" line ": "
			match(text, /NOLINT(NEXTLINE|BEGIN|END)?/)
			kind = substr(text, RSTART, RLENGTH); after = substr(text, RSTART + RLENGTH)
			if (!match(after, /^\([^)]*\)/)) {
				print where "a bare " kind ": name its checks, " kind "(CHECK): why"; bad = 1; next
			}
			checks = substr(after, 2, RLENGTH - 2); after = substr(after, RLENGTH + 1)
			gsub(/[[:space:]]/, "", checks)
			k = split(checks, c, ",")
			if (k == 0) { print where kind "() names no check"; bad = 1 }
			for (j = 1; j <= k; j++) {
				used[c[j]] = 1
				if (!(c[j] in allowed)) {
					print where c[j] " is not among the checks " cfg " allows (# nolint " c[j] " why)"
					bad = 1
				}
			}
			if (kind != "NOLINTEND" && after !~ /^:[[:space:]]*[^[:space:]*\/]/) {
				print where "no reason: write it on the line, " kind "(" checks "): why"; bad = 1
			}
		}
		END {
			for (j = 1; j <= n; j++) if (!(order[j] in used)) {
				print cfg ": " order[j] " is allowed but no NOLINT names it: remove its line"
				bad = 1
			}
			exit bad
		}'
	;;
*)
	echo "usage: ci/lint-disables.sh shellcheck SCRIPT... | clang-tidy" >&2
	exit 2
	;;
esac
