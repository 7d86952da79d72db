#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the rxecc guest selftests (selftests/rxecc/) and the
# guest side of the lab, bench and soak (ci/guest/): KTAP output (kselftest
# conventions), module loading, netdevs, GID lookup and verbs peer pairs.
# Source it from a test script; it runs inside a guest (or any machine where
# loading modules is allowed).

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

RXECC_TOP=${RXECC_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RXECC_MODULE=${RXECC_MODULE:-$RXECC_TOP/build/kernel/rxecc/rdma_rxecc.ko}
PFC_MODULE=${PFC_MODULE:-$RXECC_TOP/net/sched/sch_pfc.ko}
# The configuration tool (userspace/tool), as built in the tree.
RXECC_TOOL=${RXECC_TOOL:-$RXECC_TOP/build/userspace/rxecc}
# scaled_rate MBIT: a bottleneck of MBIT Mbit/s divided by RXECC_RATE_SCALE
# (whole Mbit/s, at least 1). make check-debug sets the scale: its kernel
# moves data about ten times slower, and a port only congests if the senders
# can outrun it.
scaled_rate() {
	local r=$(($1 / ${RXECC_RATE_SCALE:-1}))
	echo $((r > 0 ? r : 1))
}
# scaled_count N MIN: N divided by RXECC_RATE_SCALE, at least MIN: an amount
# of data (iterations, queue bytes) that keeps its time at a scaled rate.
scaled_count() {
	local n=$(($1 / ${RXECC_RATE_SCALE:-1}))
	echo $((n > $2 ? n : $2))
}
# scaled_time SECONDS: SECONDS times RXECC_TIMEOUT_SCALE, for a run that must
# outlast steps the slower debug kernel stretches (make check-debug sets 3).
scaled_time() { echo $(($1 * ${RXECC_TIMEOUT_SCALE:-1})); }
# Where a test keeps its logs: the guest's output share when there is one.
if [ -d /mnt/out ] && [ -w /mnt/out ]; then
	LOGDIR=${LOGDIR:-/mnt/out/logs}
else
	LOGDIR=${LOGDIR:-$(mktemp -d)}
fi
mkdir -p "$LOGDIR"
# RXECC_XTRACE=1 (ci/vm.sh passes it on): every command a test script runs,
# with its time and process, to $LOGDIR/xtrace-SCRIPT.log; ci/xtrace-report.py
# sums where the time went.
if [ "${RXECC_XTRACE:-0}" = 1 ]; then
	exec {_xtrace_fd}>>"$LOGDIR/xtrace-$(basename "$0" .sh).log"
	BASH_XTRACEFD=$_xtrace_fd
	PS4='+ ${EPOCHREALTIME} ${BASHPID} ${BASH_SOURCE[0]##*/}:${LINENO} '
	set -x
fi

# ---- KTAP -----------------------------------------------------------------
_ktap_num=0 _ktap_pass=0 _ktap_fail=0 _ktap_skip=0 _ktap_mark=$SECONDS
# _ktap_took: a diagnostic with the seconds since the previous result, so a
# run's log shows which test spends the time budget of make check.
_ktap_took() {
	echo "# time: $((SECONDS - _ktap_mark)) s"
	_ktap_mark=$SECONDS
}

ktap_header() { echo "TAP version 13"; }
ktap_plan() { echo "1..$1"; }
ktap_diag() { local l; while IFS= read -r l; do echo "# $l"; done <<<"$*"; }

ktap_pass() {
	_ktap_num=$((_ktap_num + 1)) _ktap_pass=$((_ktap_pass + 1))
	echo "ok $_ktap_num $*"
	_ktap_took
}

ktap_fail() {
	_ktap_num=$((_ktap_num + 1)) _ktap_fail=$((_ktap_fail + 1))
	echo "not ok $_ktap_num $*"
	_ktap_took
}

# ktap_skip_this REASON: inside a test run by ktap_result, the test could not
# measure what it is for (it ran without a failure): report it as skipped.
ktap_skip_this() {
	echo "$*"
	echo "$*" >"${_ktap_skip_file:?ktap_skip_this outside ktap_result}"
}

# ktap_skip DESC REASON
ktap_skip() {
	_ktap_num=$((_ktap_num + 1)) _ktap_skip=$((_ktap_skip + 1))
	echo "ok $_ktap_num $1 # SKIP $2"
	_ktap_took
}

# ktap_result DESC CMD...: run CMD, pass if it exits 0; on failure its output
# (kept in $LOGDIR) is printed as diagnostics. CMD that exits 0 after
# ktap_skip_this REASON is reported as skipped, with REASON.
ktap_result() {
	local desc=$1 log
	shift
	# RXECC_ONLY=ERE (ci/vm.sh passes it on): only the tests whose
	# description matches run; the others are skipped.
	if [ -n "${RXECC_ONLY:-}" ] && ! grep -qE -- "$RXECC_ONLY" <<<"$desc"; then
		# (a pattern grep cannot read would skip every test: an error)
		grep -qE -- "$RXECC_ONLY" <<<"" 2>/dev/null
		[ $? -ne 2 ] || {
			echo "RXECC_ONLY '$RXECC_ONLY': not an extended regular expression" >&2
			exit $KSFT_FAIL
		}
		ktap_skip "$desc" "not in RXECC_ONLY"
		return 0
	fi
	log="$LOGDIR/step-$((_ktap_num + 1)).log"
	# (names a test function's own variables cannot clash with)
	local _ktap_t0=$SECONDS _ktap_rc=0
	_ktap_skip_file="$LOGDIR/step-$((_ktap_num + 1)).skip"
	rm -f "$_ktap_skip_file"
	"$@" >"$log" 2>&1 || _ktap_rc=$?
	# each test's seconds, for finding where a script's time goes
	echo "$((SECONDS - _ktap_t0)) ${0##*/} $((_ktap_num + 1)) $desc" >>"$LOGDIR/times.txt"
	if [ $_ktap_rc -eq 0 ] && [ -s "$_ktap_skip_file" ]; then
		ktap_skip "$desc" "$(head -n 1 "$_ktap_skip_file")"
	elif [ $_ktap_rc -eq 0 ]; then
		ktap_pass "$desc"
	else
		ktap_diag "$(tail -n 25 "$log")"
		ktap_diag "exit code $_ktap_rc: $*"
		ktap_fail "$desc"
	fi
	unset _ktap_skip_file
}

# Exit with the kselftest code: fail if any test failed, skip if all skipped.
ktap_finished() {
	echo "# Totals: pass:$_ktap_pass fail:$_ktap_fail xfail:0 xpass:0 skip:$_ktap_skip error:0"
	if [ $_ktap_fail -gt 0 ]; then
		exit $KSFT_FAIL
	elif [ $_ktap_pass -eq 0 ] && [ $_ktap_skip -gt 0 ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

ktap_exit_skip() {
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

# ---- small utilities -------------------------------------------------------

# wait_for SECONDS CMD...: poll CMD every 0.2 s until it succeeds.
wait_for() {
	local deadline=$((SECONDS + $1))
	shift
	until "$@" >/dev/null 2>&1; do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.2
	done
}

# ---- modules ---------------------------------------------------------------
need_root() { [ "$(id -u)" -eq 0 ] || ktap_exit_skip "needs root"; }

# The verbs core and what userspace needs (uverbs, rdma_cm) plus rxe's deps.
load_rdma_core() {
	modprobe -a ib_core ib_uverbs rdma_ucm udp_tunnel ip6_udp_tunnel
}

module_loaded() { [ -d "/sys/module/$1" ]; }

# Load rdma_rxecc: the installed one if RXECC_USE_INSTALLED=1, else the one built in the tree.
rxecc_load() {
	module_loaded rdma_rxecc && return 0
	load_rdma_core || return 1
	if [ "${RXECC_USE_INSTALLED:-0}" = 1 ]; then
		modprobe rdma_rxecc
	else
		insmod "$RXECC_MODULE"
	fi
}

# pfc_load: the switch-port qdisc sch_pfc (net/sched/sch_pfc.ko).
pfc_load() {
	module_loaded sch_pfc && return 0
	if [ "${RXECC_USE_INSTALLED:-0}" = 1 ]; then
		modprobe sch_pfc
	else
		insmod "$PFC_MODULE"
	fi
}

rxe_load() {
	module_loaded rdma_rxe && return 0
	load_rdma_core && modprobe rdma_rxe
}

rdma_links_delete_all() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] || continue
		rdma link delete "${d##*/}" 2>/dev/null
	done
	wait_for 10 no_ib_devices
}

# no_ib_devices [ERE]: no RDMA device (whose name matches ERE) is left.
no_ib_devices() {
	local d
	for d in /sys/class/infiniband/*; do
		[ -e "$d" ] || continue
		[ -z "${1:-}" ] || [[ ${d##*/} =~ $1 ]] || continue
		return 1
	done
	return 0
}

modules_unload() {
	rdma_links_delete_all
	local m
	for m in rdma_rxecc rdma_rxe sch_pfc; do
		if module_loaded $m; then
			rmmod $m || return 1
		fi
	done
}

# ---- netdevs, devices, GIDs -------------------------------------------------
# veth_up NAME IPV4/PREFIX [IPV6/PREFIX]: a veth pair NAME/NAME-p, both up,
# the addresses on NAME. (veth reports a link speed, dummy does not, which
# makes ib_core warn on every port query.)
veth_up() {
	ip link add "$1" type veth peer name "$1-p" || return 1
	ip addr add "$2" dev "$1" || return 1
	[ -z "${3:-}" ] || ip addr add "$3" dev "$1" nodad || return 1
	ip link set "$1-p" up && ip link set "$1" up
}

# local_pair_routes A_IP A_DEV A_VIA B_IP B_DEV B_VIA: what this namespace
# sends between two of its own addresses, A_IP on A_DEV and B_IP on B_DEV,
# goes out through A_DEV (to A_VIA, or straight to B_IP when A_VIA is
# empty) and B_DEV, instead of through the loopback: routes in tables 101
# and 102, rules 10-13 before the local table (for what this machine sends,
# iif lo, and for lookups bound to the device, as rdma_cm makes: it checks
# that a request's source is reached through the device it arrived on), the
# local table moved from rule 0 to rule 100 (what arrives still finds it),
# and accept_local for packets that arrive from a local source. For two RDMA
# devices in one namespace, as the kernel's ULPs (NVMe over Fabrics) and
# Linux 6.1's rdma_rxe need. local_pair_unroute undoes it.
local_pair_routes() {
	local a=$1 adev=$2 avia=$3 b=$4 bdev=$5 bvia=$6
	sysctl -qw net.ipv4.conf.all.rp_filter=0 "net.ipv4.conf.$adev.rp_filter=0" \
		"net.ipv4.conf.$bdev.rp_filter=0" "net.ipv4.conf.$adev.accept_local=1" \
		"net.ipv4.conf.$bdev.accept_local=1" || return 1
	ip route add "$b" ${avia:+via "$avia"} dev "$adev" src "$a" table 101 || return 1
	ip route add "$a" ${bvia:+via "$bvia"} dev "$bdev" src "$b" table 102 || return 1
	ip rule add pref 10 to "$b" iif lo lookup 101 || return 1
	ip rule add pref 11 to "$a" iif lo lookup 102 || return 1
	ip rule add pref 12 to "$b" oif "$adev" lookup 101 || return 1
	ip rule add pref 13 to "$a" oif "$bdev" lookup 102 || return 1
	ip rule add pref 100 lookup local && ip rule del pref 0 lookup local
}
local_pair_unroute() {
	local p
	for p in 10 11 12 13; do ip rule del pref "$p" 2>/dev/null; done
	ip rule show | grep -q '^0:.*lookup local' || ip rule add pref 0 lookup local 2>/dev/null
	ip rule del pref 100 lookup local 2>/dev/null
	ip route flush table 101 2>/dev/null
	ip route flush table 102 2>/dev/null
	return 0
}

# rdma_link_add NAME TYPE NETDEV: create the device and wait until it is ACTIVE.
rdma_link_add() {
	rdma link add "$1" type "$2" netdev "$3" || return 1
	wait_for 10 grep -q ACTIVE "/sys/class/infiniband/$1/ports/1/state"
}

# gid_of IP: the GID of an IPv4 (IPv4-mapped) or IPv6 address, written as
# sysfs writes it (eight groups of four lower-case hex digits). Plain bash:
# a python3 start takes seconds on an emulated CPU, and tests look GIDs up
# often.
gid_of() {
	local ip=$1 a b c d h t i hs=() ts=() out=()
	if [[ $ip != *:* ]]; then
		IFS=. read -r a b c d <<<"$ip"
		printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$a" "$b" "$c" "$d"
		return
	fi
	if [[ $ip == *::* ]]; then h=${ip%%::*} t=${ip#*::}; else h=$ip t=; fi
	[ -z "$h" ] || IFS=: read -ra hs <<<"$h"
	[ -z "$t" ] || IFS=: read -ra ts <<<"$t"
	out=("${hs[@]}")
	for ((i = ${#hs[@]} + ${#ts[@]}; i < 8; i++)); do out+=(0); done
	out+=("${ts[@]}")
	for i in "${!out[@]}"; do printf -v "out[i]" '%04x' "0x${out[i]}"; done
	(IFS=:; echo "${out[*]}")
}

# gid_index DEV IP: the index of the RoCEv2 GID of IP (IPv4 or IPv6) on port 1.
gid_index() {
	local dev=$1 want i g
	want=$(gid_of "$2")
	for i in $(seq 0 15); do
		g=
		read -r g 2>/dev/null <"/sys/class/infiniband/$dev/ports/1/gids/$i" || continue
		if [ "$g" = "$want" ]; then
			echo "$i"
			return 0
		fi
	done
	return 1
}

# wait_gid DEV IP: wait until the GID of IP is in the table and print its index.
wait_gid() {
	local deadline=$((SECONDS + 10)) idx
	while ! idx=$(gid_index "$1" "$2"); do
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.2
	done
	echo "$idx"
}

# ere_quote STRING: STRING as an extended regular expression matching it
# literally (for pkill/pgrep -f: a path such as OUT/dcqcn+pfc/... has '+').
ere_quote() { printf '%s' "$1" | sed 's/[][\.*^$+?(){}|]/\\&/g'; }

# capture_stop FILE: stop the capture (dumpcap) writing FILE, let it finish
# the file, and wait until it is gone. (A background job ignores SIGINT, so
# `kill -INT` on it does not reach dumpcap; TERM to the processes whose
# command line names FILE does: timeout passes it on, dumpcap closes the
# file.)
# capture_ready PCAP: the dumpcap writing PCAP has opened its interface
# (it writes the file's header then).
capture_ready() { wait_for "$(scaled_time 30)" test -s "$1"; }

capture_stop() {
	local re
	re="-w $(ere_quote "$1")( |\$)"
	pkill -TERM -f -- "$re" 2>/dev/null
	wait_for 20 no_process "$re"
}

# gone PID: process PID has ended.
gone() { ! kill -0 "$1" 2>/dev/null; }

# no_process ERE: no process's command line matches ERE.
no_process() { ! pgrep -f -- "$1" >/dev/null; }

# kill_tree PID: SIGKILL PID and every process below it. A job started as
# `fabric_in N timeout ... prog &` is a subshell whose children (ip netns
# exec, timeout, prog) outlive a kill of the subshell alone.
kill_tree() {
	local c
	for c in $(pgrep -P "$1"); do kill_tree "$c"; done
	kill -9 "$1" 2>/dev/null
}

# port_counter DEV NAME: an rxe hw counter of port 1 (read by the shell:
# starting cat costs some 70 ms in the emulated guest, and tests read
# hundreds of counters).
port_counter() {
	local v
	read -r v <"/sys/class/infiniband/$1/ports/1/hw_counters/$2" || return 1
	echo "$v"
}

# softnet_drops: packets the kernel dropped because a CPU's receive backlog
# was full (every namespace shares the guest's CPUs: a veth hands packets to
# that backlog); the sum over CPUs of /proc/net/softnet_stat's second column.
softnet_drops() {
	local s=0 d
	while read -r _ d _; do s=$((s + 16#$d)); done </proc/net/softnet_stat
	echo $s
}

# ns_run NS CMD...: CMD in network namespace NS (here if NS is empty). ip,
# tc, ss and the rxecc tool enter it themselves: one exec where ip netns exec
# makes two (a tenth of a second or more each in the guest); the tool also
# skips the sysfs remount the others make.
ns_run() {
	local ns=$1 c
	shift
	[ -n "$ns" ] || { "$@"; return; }
	c=$1
	case $c in
	ip | tc) shift; "$c" -n "$ns" "$@" ;;
	ss) shift; ss -N "$ns" "$@" ;;
	"$RXECC_TOOL") shift; "$c" -n "$ns" "$@" ;;
	*) ip netns exec "$ns" "$@" ;;
	esac
}

# ---- peers -----------------------------------------------------------------
# peer_pair NAME SERVER_CMD -- CLIENT_CMD: run a server in the background and
# a client against it (client_run: retried while the server is not yet
# listening). Both must exit 0. Logs: $LOGDIR/NAME.{server,client}.log.
# SERVER_NS / CLIENT_NS, when set, name the network namespaces to run in.
peer_pair() {
	local name=$1 srv=() in_srv=() in_cli=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	[ -z "${SERVER_NS:-}" ] || in_srv=(ip netns exec "$SERVER_NS")
	[ -z "${CLIENT_NS:-}" ] || in_cli=(ip netns exec "$CLIENT_NS")
	local slog="$LOGDIR/$name.server.log" clog="$LOGDIR/$name.client.log"
	local before
	before=$(listeners "${SERVER_NS:-}")
	timeout "$(scaled_time 120)" "${in_srv[@]}" "${srv[@]}" >"$slog" 2>&1 &
	local spid=$! crc src
	# Start the client once the server listens (a new TCP socket or rdma_cm
	# ID in LISTEN state): an rdma_cm client that comes too early is
	# rejected, and perftest's UD client has been seen to crash when it
	# then tries again.
	wait_for 15 listening_more_than "$before" "${SERVER_NS:-}" ||
		echo "peer_pair: $name: no new listener after 15 s"
	client_run "$clog" "${in_cli[@]}" "$@" >/dev/null
	crc=$?
	PEER_CLIENT_RC=$crc
	wait $spid
	src=$?
	echo "== server (exit $src): ${srv[*]}"
	tail -n 15 "$slog"
	echo "== client (exit $crc): $*"
	tail -n 15 "$clog"
	[ $src -eq 0 ] && [ $crc -eq 0 ]
}

# tcp_listeners [NS]: how many TCP sockets are listening (in NS);
# tcp_listening NS N: at least N.
tcp_listeners() {
	local n=0 l
	# (here-strings: the guest has no /dev/fd for process substitution)
	while IFS= read -r l; do [ -z "$l" ] || n=$((n + 1)); done <<<"$(ns_run "${1:-}" ss -Hltn)"
	echo $n
}
tcp_listening() { [ "$(tcp_listeners "$1")" -ge "$2" ]; }
# tcp_listening_on NS PORT: a TCP socket listens on PORT in NS.
tcp_listening_on() { [[ $(ns_run "$1" ss -Hltn sport = ":$2") ]]; }

# listeners [NS]: how many TCP sockets (in NS) and rdma_cm IDs are listening.
listeners() {
	local n l
	n=$(tcp_listeners "${1:-}")
	while IFS= read -r l; do
		[[ $l != *"state LISTEN"* ]] || n=$((n + 1))
	done <<<"$(rdma resource show cm_id 2>/dev/null)"
	echo "$n"
}
listening_more_than() { [ "$(listeners "${2:-}")" -gt "$1" ]; }

# client_run LOG CMD...: run a client, retrying while its server is not
# listening yet (TCP or rdma_cm); it must then succeed.
client_run() {
	local log=$1 try rc=1
	shift
	for try in $(seq 1 40); do
		timeout "$(scaled_time 120)" "$@" >"$log" 2>&1 && { tail -n 5 "$log"; return 0; }
		rc=$?
		grep -qiE "couldn't connect|connection refused|unable to|rejected|not listening|failed to connect" "$log" || break
		sleep 0.5
	done
	tail -n 20 "$log"
	# A client killed by a signal (exit 128 + N) says so.
	[ $rc -ge 128 ] && return $rc
	return 1
}

# perftest_value LOG COLUMN: a value from the result row of a perftest table,
# by its column header (e.g. 'BW average[MB/sec]', 't_typical[usec]').
perftest_value() {
	"$RXECC_TOP/build/userspace/rxecc-report" value "$1" "$2"
}

# perftest_result NAME COLUMN: after `peer_pair NAME ...` with perftest, print
# COLUMN as each side reports it; succeed if at least one side reports a
# positive finite value. (Both sides print the table; under TCG perftest's
# clock calibration sometimes fails on one side, which then prints 0 or inf.)
perftest_result() {
	local name=$1 column=$2 side v ok=1
	for side in client server; do
		v=$(perftest_value "$LOGDIR/$name.$side.log" "$column") || continue
		echo "$name: $side reports $column = $v"
		python3 -c 'import math, sys; v = float(sys.argv[1]); sys.exit(0 if math.isfinite(v) and v > 0 else 1)' "$v" && ok=0
	done
	return $ok
}

# perftest_measured NAME COLUMN CMD...: run CMD (a peer_pair of perftest
# tools that logs as NAME); it must succeed and one side must report a
# positive COLUMN. A run that completed but where neither side measured
# anything (perftest's cycle clock under TCG now and then reads 0 on both),
# or whose client died of a signal, runs once more, and the log says so.
# When perftest says why it measured nothing (its estimate of the CPU clock
# failed: "Correlation coefficient r^2 < 0.9", seen on the debug kernel in
# both runs), a run that completed with both sides exiting 0 is a test that
# measured nothing: skipped, with the reason.
perftest_measured() {
	local name=$1 column=$2 try
	shift 2
	for try in 1 2; do
		PEER_CLIENT_RC=0
		if ! "$@"; then
			# perftest's rdma_cm client has been seen to die of a general
			# protection fault inside librdmacm (userspace; the kernel log
			# shows the trap): run such a pair once more, logged.
			[ "$try" = 1 ] && [ "$PEER_CLIENT_RC" -ge 128 ] || return 1
			echo "$name: the client died of signal $((PEER_CLIENT_RC - 128)); once more"
			continue
		fi
		perftest_result "$name" "$column" && return 0
		echo "$name: completed, but no side reported a value"
	done
	grep -qsF 'Correlation coefficient r^2' "$LOGDIR/$name.client.log" "$LOGDIR/$name.server.log" ||
		return 1
	ktap_skip_this "$name: perftest could not estimate its CPU clock (r^2 < 0.9) and timed nothing;" \
		"both sides completed and exited 0"
}

# ---- two guests ---------------------------------------------------------
# barrier NAME: two guests (RXECC_GUEST_INDEX 0 and 1, the peer at
# $PEER_IP) both reach this point: guest 0 listens, guest 1 connects.
barrier() {
	local port=$((19000 + $(echo "$1" | cksum | cut -d' ' -f1) % 1000))
	if [ "${RXECC_GUEST_INDEX:?}" = 0 ]; then
		timeout 300 python3 -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[1]))); s.listen(1); c, _ = s.accept(); c.sendall(b"go"); c.close()' "$port"
	else
		timeout 300 python3 -c '
import socket, sys, time
while True:
    try:
        c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=2)
        if c.recv(2) == b"go": break
    except OSError:
        time.sleep(0.3)' "$PEER_IP" "$port"
	fi
}
