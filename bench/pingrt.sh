#!/bin/sh
# bench/pingrt.sh: pingrt against iputils ping on the same path, alternating A B A B.
#
# 1. Median RTT on loopback (and, as root with ip(8), across a veth pair between two network
#    namespaces this script makes and removes), same count, interval and payload; pingrt with
#    its default kernel send stamp and with --tx-stamp user (ping's method). Prints each
#    round's medians and the ratio pingrt/ping of the medians of the round medians.
# 2. Flood rate (root only): probes per second of `ping -f -q` and `pingrt -f -q`, same count
#    and payload, from each tool's own figure and from the whole command's wall time
#    (timecmd, when built next to PINGRT); checks pingrt's accounting every round.
#
# Usage: bench/pingrt.sh [PINGRT]   (env: ROUNDS=5 COUNT=50 INTERVAL=0.05 SIZE=56 FLOOD=20000;
#                                    RTT=0 skips part 1)
# Needs: ping (iputils), jq, awk; root for intervals below 0.2 s, flood and the veth path.
set -eu
BIN=${1:-target/release/pingrt}
INGEST=${INGEST:-$(dirname "$BIN")/ingest}
ROUNDS=${ROUNDS:-5}
COUNT=${COUNT:-50}
SIZE=${SIZE:-56}
FLOOD=${FLOOD:-20000}
RTT=${RTT:-1}
if [ "$(id -u)" = 0 ]; then INTERVAL=${INTERVAL:-0.05}; else INTERVAL=${INTERVAL:-0.2}; fi
[ -x "$BIN" ] || { echo "bench: $BIN not found; build with cargo build --release -p pingrt" >&2; exit 2; }
[ -x "$INGEST" ] || { echo "bench: $INGEST not found; build with cargo build --release -p ingest (or set INGEST)" >&2; exit 2; }
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

. "$(dirname "$0")/common.sh"

# Per-probe RTTs in seconds, one per line: ping's text as ingest reads it, then the same
# selection as pingrt's records.
ping_rtts() { # PREFIX... HOST
    "$@" 2>/dev/null | "$INGEST" ping -q -o - | jq -r 'select(.type=="sample" and .values.rtt_s != null) | .values.rtt_s'
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

if [ "$RTT" = 1 ]; then rtt_bench loopback 127.0.0.1; fi

if [ "$RTT" = 1 ] && [ "$(id -u)" = 0 ] && command -v ip >/dev/null 2>&1; then
    NS="pbench$$"
    ip netns add "${NS}c"; ip netns add "${NS}s"
    ip link add "${NS}a" netns "${NS}c" type veth peer name "${NS}b" netns "${NS}s"
    ip -n "${NS}c" addr add 10.78.1.1/24 dev "${NS}a"; ip -n "${NS}c" link set "${NS}a" up; ip -n "${NS}c" link set lo up
    ip -n "${NS}s" addr add 10.78.1.2/24 dev "${NS}b"; ip -n "${NS}s" link set "${NS}b" up; ip -n "${NS}s" link set lo up
    ip netns exec "${NS}c" ping -c 1 -W 2 10.78.1.2 >/dev/null 2>&1 || true
    rtt_bench veth 10.78.1.2 ip netns exec "${NS}c"
fi

if [ "$(id -u)" = 0 ]; then
    # Flood, like for like: the same count and payload, both as root on loopback, one probe
    # out at a time (ping -f's default preload of 1 and pingrt -f both send the next probe
    # when the reply came, or after 10 ms), alternating ping and pingrt each round.
    # Two figures per tool, probes per second computed the same way for both:
    # - own: count / the tool's own span of probing (ping's "time Nms", from the end of its
    #   set-up to its last send, rounded to the millisecond; pingrt's elapsed_s, from its
    #   first send to its last reply);
    # - whole: count / wall time of the whole command (start-up, records and exit included),
    #   from timecmd when it is built next to pingrt, else from date(1) around the command.
    # pingrt's records go to a file, removed before each run (outside the timing).
    TIMECMD=$(dirname "$BIN")/timecmd
    [ -x "$TIMECMD" ] || TIMECMD=""
    wall() { # OUT CMD...: runs CMD with stdout into OUT, prints its wall time in seconds
        out=$1; shift
        rm -f "$out" "$TMP/tc.jsonl"
        if [ -n "$TIMECMD" ]; then
            "$TIMECMD" -q -o "$TMP/tc.jsonl" --stdout "$out" -- "$@" || return 1
            jq -r 'select(.type=="sample") | .values.wall_s' "$TMP/tc.jsonl"
        else
            t0=$(date +%s%N); "$@" >"$out" || return 1; t1=$(date +%s%N)
            awk -v d=$((t1 - t0)) 'BEGIN { printf "%.9f\n", d / 1e9 }'
        fi
    }
    echo "== flood: $ROUNDS rounds of -f -q -c $FLOOD -s $SIZE 127.0.0.1 (probes per second; whole command timed by ${TIMECMD:-date})"
    printf '%-6s %12s %12s %12s %12s %8s %8s  %s\n' round ping_own pingrt_own ping_whole pingrt_whole own_x whole_x pingrt_accounting
    : >"$TMP/f"
    r=1
    while [ "$r" -le "$ROUNDS" ]; do
        pw=$(wall "$TMP/ping.txt" ping -f -q -c "$FLOOD" -s "$SIZE" 127.0.0.1)
        ms=$(sed -n 's/.* time \([0-9]*\)ms.*/\1/p' "$TMP/ping.txt")
        bw=$(wall "$TMP/flood.jsonl" "$BIN" -f -q -c "$FLOOD" -s "$SIZE" 127.0.0.1)
        # Accounting: every probe sent is received or lost (timed out, errored), with
        # duplicates counted apart, and each one has its sample line.
        lines=$(grep -c '"type":"sample"' "$TMP/flood.jsonl" || true)
        acct=$(jq -r --argjson n "$FLOOD" --argjson lines "$lines" 'select(.type=="summary") | .values
            | if .sent_count == $n and .sent_count == .received_count + .timeout_count + .error_count and $lines == .sent_count
              then "ok: \(.sent_count) sent = \(.received_count) received + \(.timeout_count + .error_count) lost, \(.duplicate_count) dup, \($lines) samples"
              else "MISMATCH: \(.sent_count) sent, \(.received_count) received, \(.timeout_count) timeouts, \(.error_count) errors, \($lines) samples" end' "$TMP/flood.jsonl")
        b=$(jq -r 'select(.type=="summary") | .values.probe_rate_per_s' "$TMP/flood.jsonl")
        awk -v r="$r" -v n="$FLOOD" -v ms="$ms" -v b="$b" -v pw="$pw" -v bw="$bw" -v acct="$acct" 'BEGIN {
            a = n / (ms / 1000); aw = n / pw; bwr = n / bw
            printf "%-6s %12.0f %12.0f %12.0f %12.0f %8.3f %8.3f  %s\n", r, a, b, aw, bwr, b / a, bwr / aw, acct }' | tee -a "$TMP/f"
        r=$((r + 1))
    done
    awk '{ a[NR]=$2; b[NR]=$3; aw[NR]=$4; bw[NR]=$5; o[NR]=$6; w[NR]=$7 }
        function med(v, n,   i, j, t, c) { for (i = 1; i <= n; i++) c[i] = v[i]
            for (i = 2; i <= n; i++) for (j = i; j > 1 && c[j-1] > c[j]; j--) { t = c[j]; c[j] = c[j-1]; c[j-1] = t }
            lo = c[1]; hi = c[n]; return (n % 2) ? c[(n+1)/2] : (c[n/2] + c[n/2+1]) / 2 }
        END {
            n = NR
            ma = med(a, n); mb = med(b, n); mo = med(o, n); olo = lo; ohi = hi
            maw = med(aw, n); mbw = med(bw, n); mw = med(w, n); wlo = lo; whi = hi
            printf "flood, own figures: ping median %.0f probes/s, pingrt %.0f (ratio of medians %.3f; per-round ratios median %.3f, min %.3f, max %.3f)\n", ma, mb, mb / ma, mo, olo, ohi
            printf "flood, whole command: ping median %.0f probes/s, pingrt %.0f (ratio of medians %.3f; per-round ratios median %.3f, min %.3f, max %.3f)\n", maw, mbw, mbw / maw, mw, wlo, whi
        }' "$TMP/f"
    if grep -q MISMATCH "$TMP/f"; then
        echo "bench: pingrt flood accounting does not add up (see above)" >&2
        exit 1
    fi
fi
