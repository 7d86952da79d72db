#!/bin/bash
# rxecc-sim from the command line: the lab's default scenario gives one row
# per sample with every column, a totals line, and Rc near the fair share at
# the end; --print-params and --params agree; bad input exits 2 (usage) or 1
# (parameters file) with one line.
set -u
sim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$sim" --profile paper --scale-kbps 25000 --speedup 16 --senders 3 --rate-kbps 25000 \
	--duration 20 --sample-ms 100 >"$dir/out.tsv" 2>"$dir/err" || fail "exit $? $(cat "$dir/err")"
[ "$(head -n 1 "$dir/out.tsv")" = "$(printf 't_ms\tqueue_bytes\trc1_mbps\trc2_mbps\trc3_mbps\tgoodput1_mbps\tgoodput2_mbps\tgoodput3_mbps')" ] ||
	fail "header: $(head -n 1 "$dir/out.tsv")"
[ "$(grep -c '^[0-9]' "$dir/out.tsv")" -eq 200 ] || fail "$(grep -c '^[0-9]' "$dir/out.tsv") rows, not 200"
awk -F'\t' '/^[0-9]/ && NF != 8 { bad = 1 } END { exit bad }' "$dir/out.tsv" || fail "a row without 8 columns"
grep -qE '^# jain [0-9.]+ utilisation [0-9.]+ cnps [1-9][0-9]* marks [0-9]+ drops 0 ' "$dir/out.tsv" ||
	fail "totals: $(grep '^#' "$dir/out.tsv")"
# the last sample: every sender's Rc within 30 % of 25/3 Mbit/s
tail -n 2 "$dir/out.tsv" | head -n 1 |
	awk -F'\t' '{ for (i = 3; i <= 5; i++) if ($i < 8.333 * 0.7 || $i > 8.333 * 1.3) exit 1 }' ||
	fail "Rc at the end: $(tail -n 2 "$dir/out.tsv" | head -n 1)"

# --print-params writes what --params reads: the same run from the file
"$sim" --profile paper --scale-kbps 25000 --speedup 16 --print-params >"$dir/paper.json" ||
	fail "--print-params: exit $?"
grep -q '"rp_ai_rate_kbps": 25,' "$dir/paper.json" || fail "paper scaled to 25 Mbit/s: R_AI not 25 kbit/s"
"$sim" --params "$dir/paper.json" --senders 3 --rate-kbps 25000 --duration 20 --sample-ms 100 \
	>"$dir/file.tsv" || fail "--params from --print-params: exit $?"
cmp -s "$dir/out.tsv" "$dir/file.tsv" || fail "--params gave another run than --profile"

# --stop-ms: sender 2 stops at 5 s; from then on its Rc and goodput are 0
# while sender 1 goes on
"$sim" --profile paper --scale-kbps 25000 --speedup 16 --senders 2 --rate-kbps 25000 --duration 10 \
	--start-ms 0,0 --stop-ms 0,5000 >"$dir/stop.tsv" || fail "--stop-ms: exit $?"
awk -F'\t' '/^[0-9]/ && $1 > 5100 { if ($4 != 0 || $6 != 0 || $3 == 0) bad = 1; n++ }
	/^[0-9]/ && $1 < 4900 && ($4 == 0 || $6 == 0) { bad = 1 }
	END { exit bad || n < 40 }' "$dir/stop.tsv" || fail "sender 2 after its stop: $(sed -n 60p "$dir/stop.tsv")"

usage() {	# CODE WORDS ARGS...: exit CODE, one line on stderr naming WORDS
	local code=$1 words=$2 rc
	shift 2
	"$sim" "$@" >/dev/null 2>"$dir/err"
	rc=$?
	if ! { [ "$rc" -eq "$code" ] && grep -q -- "$words" "$dir/err" &&
		[ "$(grep -c rxecc-sim: "$dir/err")" -eq 1 ]; }; then
		fail "$* -> exit $rc: $(cat "$dir/err")"
	fi
}
usage 2 "give --params or --profile" --senders 3 --rate-kbps 25000
usage 2 "--senders is required" --profile paper --rate-kbps 25000
usage 2 "--senders must be a whole number from 1 to 64" --profile paper --senders 0 --rate-kbps 25000
usage 2 "is not a number" --profile paper --senders 3 --rate-kbps fast
usage 2 "unknown option --rate" --profile paper --senders 3 --rate 25000
usage 2 "no profile 'fast'" --profile fast --senders 3 --rate-kbps 25000
usage 2 "cannot be scaled" --profile lab --scale-kbps 25000 --senders 3 --rate-kbps 25000
usage 2 "--speedup must be a whole number from 1 to 1024" --profile paper --scale-kbps 25000 --speedup 2000 --senders 3 --rate-kbps 25000
usage 2 "goes with --profile" --params x --scale-kbps 2 --senders 3 --rate-kbps 25000
usage 2 "goes with --scale-kbps" --profile paper --speedup 2 --senders 3 --rate-kbps 25000
usage 2 "--speedup must be a whole number" --profile paper --scale-kbps 25000 --speedup 2.5 --senders 3 --rate-kbps 25000
usage 2 "is not a number" --profile paper --senders 3 --rate-kbps 25000 --duration inf
usage 2 "--sample-ms must be from" --profile paper --senders 3 --rate-kbps 25000 --sample-ms 1e-7
usage 2 "more than a million samples" --profile paper --senders 3 --rate-kbps 25000 --duration 3600 --sample-ms 0.001
usage 2 "--kmax must not be below --kmin" --profile paper --senders 3 --rate-kbps 25000 --kmin 5000 --kmax 4000
usage 2 "sender 2 stops before it starts" --profile paper --senders 2 --rate-kbps 25000 --start-ms 0,10 --stop-ms 0,10
usage 2 "--stop-ms takes up to --senders times" --profile paper --senders 2 --rate-kbps 25000 --stop-ms 1,2,3
usage 1 "cannot read" --params "$dir/none.json" --senders 3 --rate-kbps 25000
echo '[{"dcqcn": {}}]' >"$dir/p.json"
usage 1 "no value for" --params "$dir/p.json" --senders 3 --rate-kbps 25000
echo 'not json' >"$dir/p.json"
usage 1 "not JSON" --params "$dir/p.json" --senders 3 --rate-kbps 25000
echo ok
