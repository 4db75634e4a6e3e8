# bench/compare/pingrt.sh: bench/run's pingrt comparison, sourced by it: pingrt against iputils
# ping on loopback and across a veth pair between two network namespaces it makes and removes
# (veth_down, which bench/run's cleanup also calls). Defines bench_pingrt.

ping_one() { # IMPL: -c PING_COUNT -i PING_INTERVAL -s 56 to 127.0.0.1
	rec=$out
	[ -z "$WARM" ] || rec=/dev/null
	case $1 in
	ping)
		ping -n -c "$PING_COUNT" -i "$PING_INTERVAL" -s 56 127.0.0.1 >"$TMP/ping.out" 2>"$TMP/err" || return 1
		[ -n "$WARM" ] || peer_records pingrt ping "$NAME_PING" ping "$TMP/ping.out"
		;;
	pingrt) "$BIN/pingrt" -q -c "$PING_COUNT" -i "$PING_INTERVAL" -s 56 -o "$rec" --name "$NAME_PING" --tag bench=pingrt --tag impl=pingrt 127.0.0.1 ;;
	pingrt-user) "$BIN/pingrt" -q --tx-stamp user -c "$PING_COUNT" -i "$PING_INTERVAL" -s 56 -o "$rec" --name "$NAME_PING" --tag bench=pingrt --tag impl=pingrt-user 127.0.0.1 ;;
	esac
}

# The same over a veth pair between two network namespaces this case makes (and removes, here
# and in cleanup): the path where the send stamp's place shows (issue 44: TX_SCHED's figure sat
# about 2 us above the wire's, TX_SOFTWARE's at it). ping and pingrt run in the client's namespace.
VETH_NS=""
veth_up() {
	VETH_NS="bmv$$"
	ip netns add "${VETH_NS}c" && ip netns add "${VETH_NS}s" &&
		ip link add "${VETH_NS}a" netns "${VETH_NS}c" type veth peer name "${VETH_NS}b" netns "${VETH_NS}s" &&
		ip -n "${VETH_NS}c" addr add 10.78.2.1/24 dev "${VETH_NS}a" && ip -n "${VETH_NS}c" link set "${VETH_NS}a" up &&
		ip -n "${VETH_NS}s" addr add 10.78.2.2/24 dev "${VETH_NS}b" && ip -n "${VETH_NS}s" link set "${VETH_NS}b" up &&
		ip netns exec "${VETH_NS}c" ping -c 1 -W 2 10.78.2.2 >/dev/null 2>&1
}
veth_down() {
	[ -n "$VETH_NS" ] || return 0
	ip netns del "${VETH_NS}c" 2>/dev/null || true
	ip netns del "${VETH_NS}s" 2>/dev/null || true
	VETH_NS=""
}
ping_veth() { # IMPL: -c PING_VETH_COUNT -i PING_VETH_INTERVAL -s 56 across the veth pair
	rec=$out
	[ -z "$WARM" ] || rec=/dev/null
	case $1 in
	ping)
		ip netns exec "${VETH_NS}c" ping -n -c "$PING_VETH_COUNT" -i "$PING_VETH_INTERVAL" -s 56 10.78.2.2 >"$TMP/ping.out" 2>"$TMP/err" || return 1
		[ -n "$WARM" ] || peer_records pingrt ping "$NAME_PING_VETH" ping "$TMP/ping.out"
		;;
	pingrt) ip netns exec "${VETH_NS}c" "$BIN/pingrt" -q -c "$PING_VETH_COUNT" -i "$PING_VETH_INTERVAL" -s 56 -o "$rec" --name "$NAME_PING_VETH" --tag bench=pingrt --tag impl=pingrt 10.78.2.2 ;;
	esac
}

bench_pingrt() {
	ours pingrt || { skip "pingrt: $BIN/pingrt is not built"; return 0; }
	have ping || { skip "pingrt vs ping: ping is not installed"; return 0; }
	NAME_PING="pingrt: RTT to 127.0.0.1, -i $PING_INTERVAL -s 56"
	say "pingrt: $PING_COUNT probes a run, interval $PING_INTERVAL s, 56 bytes"
	alternate ping_one pingrt ping pingrt-user && group pingrt ping rtt_s "$NAME_PING" pingrt pingrt-user
	if [ "$(id -u)" != 0 ] || ! have ip; then
		skip "pingrt vs ping across a veth pair: needs root and ip (iproute2) to make two network namespaces"
		return 0
	fi
	PING_VETH_INTERVAL=0.005
	NAME_PING_VETH="pingrt: RTT across a veth pair, -i $PING_VETH_INTERVAL -s 56"
	veth_up || { veth_down; skip "pingrt vs ping across a veth pair: the namespaces could not be made"; return 0; }
	say "pingrt: $PING_VETH_COUNT probes a run across a veth pair, interval $PING_VETH_INTERVAL s, 56 bytes"
	alternate ping_veth ping pingrt && group pingrt ping rtt_s "$NAME_PING_VETH" pingrt &&
		target pingrt "pingrt across a veth pair: median RTT against ping's" "$NAME_PING_VETH" rtt_s median ping ours/peer '<=' 1.0
	veth_down
}
