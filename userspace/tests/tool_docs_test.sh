#!/bin/bash
# Host tests of the tool's man page and bash completion (run by ctest).
#   tool_docs_test.sh man|completion TOOL SRCDIR
set -uo pipefail
export LC_ALL=C
what=$1 tool=$2 src=$3
fail() { echo "FAIL: $*"; exit 1; }

# "  name   unit, min..max" lines of the tool's own help: the parameter table.
params() { "$tool" dcqcn help | awk '/^Parameters/ { p = 1; next } /^Profiles:/ { p = 0 } p'; }

case $what in
man)
	warn=$(groff -man -t -ww -z "$src/rxecc.8" 2>&1) || fail "groff failed: $warn"
	[ -z "$warn" ] || fail "groff warnings: $warn"
	text=$(groff -man -t -Tutf8 "$src/rxecc.8" 2>/dev/null | col -bx)
	# Every parameter with the tool's range; every exit code the tool names.
	while read -r name _ range; do
		range=${range##*, }
		[ "$name" = ecn ] && continue	# its range is a list of words
		grep -qE "^ *$name +.* $range *$" <<<"$text" || fail "man page: no row '$name ... $range'"
	done < <(params | sed 's/,\(.*\), /\1, /')
	for code in 0 1 2 3 4 5 6 7 8; do
		grep -qE "^ *$code +[A-Z]" <<<"$text" || fail "man page: exit status $code missing"
	done
	for cmd in "dcqcn show" "dcqcn set" "dcqcn profile" "stats show" "stats reset" "qp show" monitor \
		"qdisc show" "qdisc add" "qdisc del" metrics dscp2prio; do
		grep -q "$cmd" <<<"$text" || fail "man page: command '$cmd' missing"
	done
	echo "man page: every parameter, command and exit status"
	;;
completion)
	source /usr/share/bash-completion/bash_completion 2>/dev/null ||
		fail "bash-completion is not installed"
	# shellcheck source=userspace/tool/rxecc.bash-completion
	source "$src/rxecc.bash-completion"
	PATH="$(dirname "$tool"):$PATH"
	complete_words() {	# the candidates for the command line "$@" (last word = current)
		COMP_WORDS=("$@")
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		COMPREPLY=()
		_rxecc
		printf '%s\n' "${COMPREPLY[@]}" | sort | tr '\n' ' '
	}
	expect() {	# expect "WANTED WORDS" CMDLINE...
		local want=$1 got
		shift
		got=$(complete_words "$@")
		[ "$got" = "$want " ] || fail "completing '$*': got '$got', want '$want'"
	}
	expect "dcqcn help metrics monitor qdisc qp stats" rxecc ""
	expect "dev help openmetrics" rxecc metrics ""
	expect "alert drop forward" rxecc qdisc change dev lo wd_action ""
	expect "add change del help replace show" rxecc qdisc ""
	expect "dscp pcp" rxecc qdisc add dev lo trust ""
	expect "pfc pmax prio" rxecc qdisc add dev lo rate 5 p
	expect "lo" rxecc qdisc show dev l
	expect "dscp2prio" rxecc dcqcn set dev r0 dscp
	expect "--help --json --netns --pretty --version -V -h -j -n -p" rxecc "-"
	expect "dcqcn" rxecc -j dc
	expect "dcqcn" rxecc -n ns1 dc
	expect "help profile set show" rxecc --netns ns1 -j dcqcn ""
	expect "help profile set show" rxecc dcqcn ""
	expect "defaults dev" rxecc dcqcn set ""
	expect "lab mlx5 paper" rxecc dcqcn profile defaults ""
	expect "lab mlx5 paper" rxecc dcqcn profile dev x0 ""
	expect "scale" rxecc dcqcn profile dev x0 paper ""
	expect "speedup" rxecc dcqcn profile defaults paper scale 25mbit ""
	expect "scale" rxecc -j dcqcn profile dev x0 paper ""
	expect "" rxecc dcqcn profile defaults paper scale ""
	expect "ect0 ect1" rxecc dcqcn set dev r0 ecn ect
	expect "all" rxecc dcqcn set defaults rp_enable a
	expect "rp_gd" rxecc dcqcn set dev r0 rp_g
	expect "np_cnp_dscp np_cnp_prio" rxecc dcqcn set dev r0 rp_gd 3 np_cnp
	expect "reset" rxecc stats res
	# Every parameter of the tool is offered.
	all=$(complete_words rxecc dcqcn set defaults "")
	while read -r name _; do
		grep -qw -- "$name" <<<"$all" || fail "completion misses '$name'"
	done < <(params)
	echo "completion: objects, commands, targets, every parameter, profiles, values"
	;;
*)
	fail "unknown test $what"
	;;
esac
