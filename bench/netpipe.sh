#!/bin/sh
# Benchmark netpipe against its peers on loopback, alternating A B A B in one run, and print
# the ratio of the medians and the spread of the per-round ratios:
#   1. memory to discard, one stream, the same --time/-t and no omit on both, each tool's
#      receiver figure: iperf3 -c/-s  vs  netpipe send/recv with default options (issue 4's
#      bar), and netpipe's zero-copy send methods (sendfile, splice) besides; once for each
#      congestion control in CCS, given to both tools (-C on iperf3's client, on netpipe's
#      sender and receiver)
#   2. pipe to pipe: dd | nc -N host port, nc -l port > /dev/null  vs  the same with netpipe
# Usage: bench/netpipe.sh   (ROUNDS=5 SECS=3 COUNT_MB=2048 CCS="cubic bbr" to change them)
# Traffic stays on 127.0.0.1. Every loop is bounded by ROUNDS; every command by timeout.
set -eu
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-5}
SECS=${SECS:-3}
COUNT_MB=${COUNT_MB:-2048}
CCS=${CCS:-cubic bbr}
NP=${NETPIPE:-target/release/netpipe}
INGEST=${INGEST:-target/release/ingest}
PORT=$((20000 + $$ % 20000))
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

for t in iperf3 nc dd jq awk; do
    command -v "$t" >/dev/null 2>&1 || { echo "bench: $t is not installed" >&2; exit 2; }
done
if [ ! -x "$NP" ]; then
    cargo build --release -p netpipe >&2
fi
if [ ! -x "$INGEST" ]; then
    cargo build --release -p ingest >&2
fi

now() { date +%s.%N; }


. bench/common.sh

# One iperf3 run: prints the receiver's bits per second.
run_iperf3() {
    timeout 60 iperf3 -s -1 -B 127.0.0.1 -p "$PORT" >/dev/null 2>&1 &
    srv=$!
    wait_listen "$PORT"
    timeout 60 iperf3 -c 127.0.0.1 -p "$PORT" -t "$SECS" -C "$CC" -J >"$TMP/ip.json"
    wait $srv || true
    # bits/s, and CPU seconds (user+sys, both ends) per GB moved, from ingest's summary
    # (end.sum_received.bits_per_second; the CPU percentages / 100).
    "$INGEST" iperf3 -q -o - "$TMP/ip.json" | jq -r 'select(.type == "summary") | .values
        | "\(.throughput_bits_per_s) \((.host_cpu_seconds_per_s + .remote_cpu_seconds_per_s) / (.throughput_bits_per_s / 8e9))"'
}

# One netpipe run with send method $1 (default: no --send-method): prints the receiver's bits
# per second.
run_netpipe() {
    rm -f "$TMP/np.jsonl"
    timeout 60 "$NP" recv --listen "127.0.0.1:$PORT" -C "$CC" -o "$TMP/np.jsonl" &
    srv=$!
    wait_listen "$PORT"
    if [ "$1" = default ]; then set --; else set -- --send-method "$1"; fi
    timeout 60 "$NP" send --connect "127.0.0.1:$PORT" --time "$SECS" -C "$CC" "$@" >"$TMP/nps.jsonl"
    wait $srv
    cs=$(jq 'select(.type == "summary") | .values.cpu_seconds_per_s' "$TMP/nps.jsonl")
    jq -r --argjson cs "$cs" 'select(.type == "summary") | .values
        | "\(.throughput_bits_per_s) \((.cpu_seconds_per_s + $cs) / (.throughput_bits_per_s / 8e9))"' "$TMP/np.jsonl"
}

# One pipe-to-pipe run with nc ($1 = nc) or netpipe ($1 = np): prints bits per second
# from the sender pipeline's wall time (listener ready before the clock starts).
run_pipe() {
    if [ "$1" = nc ]; then
        timeout 120 nc -l 127.0.0.1 "$PORT" </dev/null >/dev/null &
    else
        timeout 120 "$NP" -l 127.0.0.1 "$PORT" </dev/null >/dev/null 2>/dev/null &
    fi
    srv=$!
    wait_listen "$PORT"
    t0=$(now)
    if [ "$1" = nc ]; then
        dd if=/dev/zero bs=1M count="$COUNT_MB" 2>/dev/null | timeout 120 nc -N 127.0.0.1 "$PORT"
    else
        dd if=/dev/zero bs=1M count="$COUNT_MB" 2>/dev/null | timeout 120 "$NP" 127.0.0.1 "$PORT" 2>/dev/null
    fi
    wait $srv
    t1=$(now)
    awk -v b="$COUNT_MB" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.0f\n", b * 1048576 * 8 / (z - a) }'
}

echo "bench: $ROUNDS rounds, $SECS s per memory run, $COUNT_MB MiB per pipe run, port $PORT, congestion control: $CCS" >&2
echo "bench: $(nproc) CPUs, $(uname -r), $("$NP" --version), $(iperf3 --version | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for CC in $CCS; do
    r=1
    while [ $r -le "$ROUNDS" ]; do
        set -- $(run_iperf3);           a=$1; echo "$1" >>"$TMP/iperf3.$CC"; echo "$2" >>"$TMP/iperf3_cpu.$CC"
        set -- $(run_netpipe default);  c=$1; echo "$1" >>"$TMP/np_copy.$CC"; echo "$2" >>"$TMP/np_copy_cpu.$CC"
        set -- $(run_netpipe sendfile); f=$1; echo "$1" >>"$TMP/np_sendfile.$CC"
        set -- $(run_netpipe splice);   b=$1; echo "$1" >>"$TMP/np_splice.$CC"
        awk -v a="$a" -v c="$c" 'BEGIN { print c / a }' >>"$TMP/ratio.$CC"
        echo "$CC round $r: iperf3 $a  netpipe $c  netpipe(sendfile) $f  netpipe(splice) $b (bits/s)" >&2
        r=$((r + 1))
    done
done
r=1
while [ $r -le "$ROUNDS" ]; do
    d=$(run_pipe nc);        echo "$d" >>"$TMP/nc"
    e=$(run_pipe np);        echo "$e" >>"$TMP/np_pipe"
    echo "pipe round $r: dd|nc $d  dd|netpipe $e (bits/s)" >&2
    r=$((r + 1))
done

for CC in $CCS; do
    mi=$(median <"$TMP/iperf3.$CC"); ms=$(median <"$TMP/np_splice.$CC"); mc=$(median <"$TMP/np_copy.$CC")
    mf=$(median <"$TMP/np_sendfile.$CC")
    ci=$(median <"$TMP/iperf3_cpu.$CC"); cc=$(median <"$TMP/np_copy_cpu.$CC")
    mr=$(median <"$TMP/ratio.$CC"); rs=$(sort -g "$TMP/ratio.$CC" | awk '{ printf "%s%.2f", (NR > 1 ? " " : ""), $1 }')
    awk -v cca="$CC" -v mi="$mi" -v ms="$ms" -v mc="$mc" -v mf="$mf" -v ci="$ci" -v cc="$cc" -v mr="$mr" -v rs="$rs" 'BEGIN {
        printf "%s: memory to discard, 1 stream (median Gb/s): iperf3 %.2f  netpipe %.2f  netpipe sendfile %.2f  netpipe splice %.2f\n", cca, mi/1e9, mc/1e9, mf/1e9, ms/1e9
        printf "  ratio netpipe/iperf3 = %.2f (per round: median %.2f; sorted: %s)\n", mc/mi, mr, rs
        printf "  ratio netpipe(sendfile)/iperf3 = %.2f   netpipe(splice)/iperf3 = %.2f\n", mf/mi, ms/mi
        printf "  process CPU s per GB, both ends (median; softirq time not charged): iperf3 %.3f  netpipe %.3f\n", ci, cc
    }'
done
mn=$(median <"$TMP/nc"); mp=$(median <"$TMP/np_pipe")
awk -v mn="$mn" -v mp="$mp" 'BEGIN {
    printf "pipe to pipe, dd | X (median Gb/s): nc %.2f  netpipe %.2f\n", mn/1e9, mp/1e9
    printf "  ratio netpipe/nc = %.2f\n", mp/mn
}'
