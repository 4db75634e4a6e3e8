#!/bin/sh
# bench/pingrt.sh: pingrt against iputils ping on the same path, alternating A B A B.
#
# 1. Median RTT on loopback (and, as root with ip(8), across a veth pair between two network
#    namespaces this script makes and removes), same count, interval and payload; pingrt with
#    its default kernel send stamp and with --tx-stamp user (ping's method). Prints each
#    round's medians and the ratio pingrt/ping of the medians of the round medians.
# 2. Flood rate (root only): probes per second of `ping -f -q` and `pingrt -f -q`.
#
# Usage: bench/pingrt.sh [PINGRT]   (env: ROUNDS=5 COUNT=50 INTERVAL=0.05 SIZE=56 FLOOD=20000)
# Needs: ping (iputils), jq, awk; root for intervals below 0.2 s, flood and the veth path.
set -eu
BIN=${1:-target/release/pingrt}
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-50}
SIZE=${SIZE:-56}
FLOOD=${FLOOD:-20000}
if [ "$(id -u)" = 0 ]; then INTERVAL=${INTERVAL:-0.05}; else INTERVAL=${INTERVAL:-0.2}; fi
[ -x "$BIN" ] || { echo "bench: $BIN not found; build with cargo build --release -p pingrt" >&2; exit 2; }
for t in ping jq awk; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench: needs $t" >&2; exit 2; }
done
TMP=$(mktemp -d)
NS=""
cleanup() {
    if [ -n "$NS" ]; then ip netns del "${NS}c" 2>/dev/null || true; ip netns del "${NS}s" 2>/dev/null || true; fi
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

median() { sort -g | awk '{v[NR]=$1} END {if (NR==0) {print "nan"; exit} if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }

# Per-probe RTTs in seconds, one per line.
ping_rtts() { # PREFIX... HOST
    "$@" 2>/dev/null | sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | awk '{printf "%.9f\n", $1/1000}'
}
pingrt_rtts() {
    "$@" 2>/dev/null | jq -r 'select(.type=="sample" and .values.rtt_s != null) | .values.rtt_s'
}

rtt_bench() { # LABEL HOST [netns exec prefix...]
    label=$1; host=$2; shift 2
    : >"$TMP/a"; : >"$TMP/b"; : >"$TMP/c"
    echo "== median RTT, $label: $ROUNDS rounds of -c $COUNT -i $INTERVAL -s $SIZE $host"
    printf '%-6s %14s %14s %20s\n' round ping_us pingrt_us pingrt_user_tx_us
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        a=$(ping_rtts "$@" ping -n -c "$COUNT" -i "$INTERVAL" -s "$SIZE" "$host" | median)
        b=$(pingrt_rtts "$@" "$BIN" -q -c "$COUNT" -i "$INTERVAL" -s "$SIZE" "$host" | median)
        c=$(pingrt_rtts "$@" "$BIN" -q --tx-stamp user -c "$COUNT" -i "$INTERVAL" -s "$SIZE" "$host" | median)
        echo "$a" >>"$TMP/a"; echo "$b" >>"$TMP/b"; echo "$c" >>"$TMP/c"
        awk -v r="$r" -v a="$a" -v b="$b" -v c="$c" 'BEGIN { printf "%-6s %14.1f %14.1f %20.1f\n", r, a*1e6, b*1e6, c*1e6 }'
        r=$((r + 1))
    done
    ma=$(median <"$TMP/a"); mb=$(median <"$TMP/b"); mc=$(median <"$TMP/c")
    awk -v a="$ma" -v b="$mb" -v c="$mc" -v l="$label" 'BEGIN {
        printf "%s: ping median %.1f us, pingrt %.1f us (ratio %.3f), pingrt --tx-stamp user %.1f us (ratio %.3f)\n",
            l, a*1e6, b*1e6, b/a, c*1e6, c/a }'
}

rtt_bench loopback 127.0.0.1

if [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1; then
    NS="pbench$$"
    ip netns add "${NS}c"; ip netns add "${NS}s"
    ip link add "${NS}a" netns "${NS}c" type veth peer name "${NS}b" netns "${NS}s"
    ip -n "${NS}c" addr add 10.78.1.1/24 dev "${NS}a"; ip -n "${NS}c" link set "${NS}a" up; ip -n "${NS}c" link set lo up
    ip -n "${NS}s" addr add 10.78.1.2/24 dev "${NS}b"; ip -n "${NS}s" link set "${NS}b" up; ip -n "${NS}s" link set lo up
    ip netns exec "${NS}c" ping -c 1 -W 2 10.78.1.2 >/dev/null 2>&1 || true
    rtt_bench veth 10.78.1.2 ip netns exec "${NS}c"
fi

if [ "$(id -u)" = 0 ]; then
    echo "== flood: $ROUNDS rounds of -f -q -c $FLOOD 127.0.0.1 (probes per second)"
    : >"$TMP/fa"; : >"$TMP/fb"
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        # ping's own "time Nms" (first send to last reply), pingrt's elapsed_s: start-up excluded.
        ms=$(ping -f -q -c "$FLOOD" 127.0.0.1 2>/dev/null | sed -n 's/.*time \([0-9]*\)ms.*/\1/p')
        a=$(awk -v n="$FLOOD" -v ms="$ms" 'BEGIN{print n/(ms/1000)}')
        "$BIN" -f -q -c "$FLOOD" 127.0.0.1 >"$TMP/flood.jsonl"
        b=$(jq -r 'select(.type=="summary") | .values.probe_rate_per_s' "$TMP/flood.jsonl")
        got=$(jq -r 'select(.type=="summary") | "\(.values.sent_count) sent \(.values.received_count) received \(.values.duplicate_count) dup"' "$TMP/flood.jsonl")
        echo "$a" >>"$TMP/fa"; echo "$b" >>"$TMP/fb"
        printf 'round %s: ping %.0f/s, pingrt %.0f/s (%s)\n' "$r" "$a" "$b" "$got"
        r=$((r + 1))
    done
    ma=$(median <"$TMP/fa"); mb=$(median <"$TMP/fb")
    awk -v a="$ma" -v b="$mb" 'BEGIN { printf "flood: ping median %.0f probes/s, pingrt %.0f probes/s (ratio %.3f)\n", a, b, b/a }'
fi
