# bench/compare/netpipe.sh: bench/run's netpipe comparison, sourced by it: netpipe against
# iperf3 (memory to discard, and paced UDP beside CPU hogs), `dd | nc` and nc in netcat mode,
# all on 127.0.0.1. Defines bench_netpipe and the runs it alternates.

# Listening ports below Linux's default ephemeral range (32768-60999), so that no client
# connection of an earlier case (in TIME_WAIT) holds the port a listener needs.
PORT=$((20000 + $$ % 12000))
next_port() { PORT=$((PORT + 1)); [ "$PORT" -lt 32000 ] || PORT=20000; }


# serve CMD...: starts a listener in the background (bounded by timeout), waits for it.
serve() {
	timeout 120 "$@" &
	srv=$!
	echo "$srv" >>"$TMP/pids"
	wait_listen "$PORT" || { kill "$srv" 2>/dev/null; return 1; }
}
served() { wait "$srv"; }

net_mem() { # IMPL [NAME]: one memory-to-discard transfer of NET_MB MiB
	next_port
	bytes=$((NET_MB * 1048576))
	case $1 in
	iperf3)
		serve iperf3 -s -1 -B 127.0.0.1 -p "$PORT" >/dev/null 2>&1 || return 1
		TOUT=$TMP/ip.json
		timed netpipe iperf3 "$NAME_NET_MEM" -- iperf3 -c 127.0.0.1 -p "$PORT" -n "$bytes" -J || return 1
		served || true
		[ -z "${2:-}" ] || peer_records netpipe iperf3 "$2" iperf3 "$TMP/ip.json"
		;;
	netpipe)
		rec=/dev/null
		[ -z "${2:-}" ] || rec=$out
		serve "$BIN/netpipe" recv --listen "127.0.0.1:$PORT" -o "$rec" --name "${2:-x}" --tag bench=netpipe --tag impl=netpipe || return 1
		timed netpipe netpipe "$NAME_NET_MEM" -- "$BIN/netpipe" send --connect "127.0.0.1:$PORT" --bytes "$bytes" -o /dev/null || return 1
		served
		;;
	dd-nc)
		serve nc -l 127.0.0.1 "$PORT" </dev/null >/dev/null || return 1
		bench_env
		timed netpipe dd-nc "$NAME_NET_MEM" --shell -- 'dd if=/dev/zero bs=1M count="$BENCH_NET_MB" 2>/dev/null | nc -N 127.0.0.1 "$BENCH_PORT"' || return 1
		served
		;;
	esac
}

# net_udp IMPL: one paced UDP send of UDP_TIME at --rate 100M in 1460-byte datagrams to a
# receiver on 127.0.0.1, the sender's own achieved rate recorded (netpipe send's sample,
# iperf3 -u's end.sum_sent as ingest reads it): whether the pace holds beside CPU hogs.
net_udp() {
	next_port
	case $1 in
	iperf3)
		serve iperf3 -s -1 -B 127.0.0.1 -p "$PORT" >/dev/null 2>&1 || return 1
		timeout 60 iperf3 -c 127.0.0.1 -p "$PORT" -u -b 100M -l 1460 -t "$UDP_TIME" -J >"$TMP/ipu.json" || return 1
		served || true
		[ -n "$WARM" ] || {
			# The sender's figure is the compared one: renamed to netpipe send's key.
			PEER_SED='s/"throughput_bits_per_s"/"receiver_throughput_bits_per_s"/g; s/"sender_throughput_bits_per_s"/"throughput_bits_per_s"/g'
			peer_records netpipe iperf3 "$NAME_NET_UDP" iperf3 "$TMP/ipu.json"
		}
		;;
	netpipe | netpipe-before)
		rec=$out
		[ -z "$WARM" ] || rec=/dev/null
		timeout 60 "$BIN/netpipe" recv --udp --listen "127.0.0.1:$PORT" -q -o /dev/null &
		udp_r=$!
		echo "$udp_r" >>"$TMP/pids"
		udp_n=0
		until ss -Hlun "sport = :$PORT" 2>/dev/null | grep -q .; do
			udp_n=$((udp_n + 1))
			[ $udp_n -lt 250 ] || { kill "$udp_r"; return 1; }
			sleep 0.02
		done
		"$(tool_bin "$1")/netpipe" send --udp --connect "127.0.0.1:$PORT" --rate 100M -b 1460 -t "$UDP_TIME" -q \
			-o "$rec" --name "$NAME_NET_UDP" --tag bench=netpipe --tag "impl=$1" || { kill "$udp_r"; return 1; }
		wait "$udp_r" || true
		;;
	esac
}

# hogs N: N busy loops beside the benchmark (each ended by timeout after 10 minutes at most),
# their pids in $hogs; unhog ends them.
hogs() {
	hogs=""
	hog_i=0
	while [ $hog_i -lt "$1" ]; do
		timeout 600 sh -c 'while :; do :; done' &
		hogs="$hogs $!"
		echo "$!" >>"$TMP/pids"
		hog_i=$((hog_i + 1))
	done
}
unhog() { for h in $hogs; do kill "$h" 2>/dev/null || true; done; hogs=""; }

# net_pipe IMPL: netcat mode, dd | IMPL -> IMPL -l | cat (pipes at both ends);
# net_null IMPL: dd | IMPL -> IMPL -l > /dev/null (issue 4's bar: at least 2x nc).
net_pipe() { net_cat "$1" "$NAME_NET_PIPE" "| cat >/dev/null"; }
net_null() { net_cat "$1" "$NAME_NET_NULL" ">/dev/null"; }
net_cat() { # IMPL NAME SINK (SINK is this file's own text, never data)
	next_port
	bench_env
	# The shell text is fixed; the port, the size and the binary's path reach it in the
	# environment, never pasted into it.
	case $1 in
	nc) c_l='nc -l 127.0.0.1 "$BENCH_PORT"' c_s='nc -N 127.0.0.1 "$BENCH_PORT"' ;;
	netpipe) c_l='"$BENCH_NETPIPE" -l 127.0.0.1 "$BENCH_PORT" -o /dev/null' c_s='"$BENCH_NETPIPE" 127.0.0.1 "$BENCH_PORT" -o /dev/null' ;;
	esac
	serve sh -c "$c_l </dev/null $3" || return 1
	timed netpipe "$1" "$2" --shell -- 'dd if=/dev/zero bs=1M count="$BENCH_NET_MB" 2>/dev/null | '"$c_s" || return 1
	served
}

# bench_env: the values the shell text of a transfer refers to, in its environment.
bench_env() {
	BENCH_PORT=$PORT BENCH_NET_MB=$NET_MB BENCH_NETPIPE=$BIN/netpipe
	export BENCH_PORT BENCH_NET_MB BENCH_NETPIPE
}

bench_netpipe() {
	ours netpipe || { skip "netpipe: $BIN/netpipe is not built"; return 0; }
	have ss || { skip "netpipe: ss (iproute2) is needed to wait for listeners"; return 0; }
	have timeout || { skip "netpipe: timeout (coreutils) is needed"; return 0; }
	NAME_NET_MEM="netpipe: memory to discard, $NET_MB MiB"
	NAME_NET_OWN="netpipe: memory to discard, $NET_MB MiB, own figure"
	NAME_NET_PIPE="netpipe: dd | X, X -l | cat, $NET_MB MiB"
	NAME_NET_NULL="netpipe: dd | X, X -l > /dev/null, $NET_MB MiB"
	impls=netpipe
	if have iperf3; then
		impls="$impls iperf3"
	else skip "netpipe vs iperf3: iperf3 is not installed"; fi
	if have nc; then impls="$impls dd-nc"; else skip "netpipe vs dd | nc: nc is not installed"; fi
	[ "$impls" != netpipe ] || return 0
	say "netpipe: memory to discard, $NET_MB MiB a run, 127.0.0.1 ($impls)"
	# net_mem_own: the same transfer, keeping the receiver's own figure (netpipe recv's records,
	# iperf3's receiver bits/s) besides timecmd's wall time of the sender.
	net_mem_own() { if [ -n "$WARM" ]; then net_mem "$1"; else net_mem "$1" "$NAME_NET_OWN"; fi; }
	if alternate net_mem_own $impls; then
		case $impls in *iperf3*)
			group netpipe iperf3 wall_s "$NAME_NET_MEM" netpipe
			group netpipe iperf3 throughput_bits_per_s "$NAME_NET_OWN" netpipe
			;;
		esac
		case $impls in *dd-nc*) group netpipe dd-nc wall_s "$NAME_NET_MEM" netpipe ;; esac
	fi
	if have iperf3; then
		NAME_NET_UDP="netpipe: UDP --rate 100M, 1460-byte datagrams, ${UDP_TIME}s, beside 8 CPU hogs, sender's rate"
		say "netpipe: UDP at 100 Mb/s for $UDP_TIME s a run, beside 8 CPU hogs (netpipe iperf3)"
		hogs 8
		# shellcheck disable=SC2046 # before's word is an impl or nothing
		alternate net_udp netpipe $(before netpipe) iperf3 && {
			group netpipe iperf3 throughput_bits_per_s "$NAME_NET_UDP" netpipe $(before netpipe)
			target netpipe "netpipe UDP under load: sent rate against iperf3 -u's" "$NAME_NET_UDP" throughput_bits_per_s min iperf3 ours/peer '>=' 0.99
			target netpipe "netpipe UDP under load: slowest sent rate against --rate 100M" "$NAME_NET_UDP" throughput_bits_per_s min =100000000 ours/peer within 0.01
		}
		unhog
	fi
	if have nc; then
		say "netpipe: pipe to pipe, $NET_MB MiB a run"
		alternate net_pipe netpipe nc && group netpipe nc wall_s "$NAME_NET_PIPE" netpipe
		say "netpipe: pipe to /dev/null, $NET_MB MiB a run"
		alternate net_null netpipe nc && group netpipe nc wall_s "$NAME_NET_NULL" netpipe
	fi
}
