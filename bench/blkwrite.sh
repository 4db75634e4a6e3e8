#!/bin/sh
# bench/blkwrite.sh: blkwrite against fio and dd on one file system, side by side in one run.
#
# Usage: bench/blkwrite.sh [SCRATCH_DIR] [ROUNDS] [SIZE]
#   SCRATCH_DIR  where the test files go (default: a new directory under /var/tmp)
#   ROUNDS       rounds per case, the tools alternating A B (C) A B (C)... (default 5)
#   SIZE         bytes per run, dd/fio sizes (default 256M)
# Environment: BLKWRITE=path to the binary (default: cargo build --release, then target/release),
#   INGEST likewise (it reads fio's JSON, the text before it included);
#   CASES=the cases to run, of seq-direct-4M buffered-1M-fsync rand-4k-depth1 rand-4k-depth32
#   (default: all four), e.g. CASES=seq-direct-4M bench/blkwrite.sh DIR 7 2G, then the random
#   ones at a smaller SIZE, each under its own lock on a shared machine.
#
# Cases: sequential O_DIRECT 4M writes + fsync (blkwrite, fio psync, dd oflag=direct
# conv=fsync); buffered 1M writes + fsync (blkwrite, fio psync end_fsync, dd conv=fsync);
# random 4k O_DIRECT at depth 1 (blkwrite psync vs fio psync) and depth 32 (blkwrite vs fio
# io_uring). Each case starts with one untimed warm-up run per tool, then the tools take
# turns, the order rotated each round. Every run writes a fresh file, removed outside the timing. Two figures per run:
# wall-clock throughput (SIZE / the whole process, start-up and flush included) and the
# tool's own figure (blkwrite throughput_bytes_per_s, which includes the fsync, against dd's
# own rate, which does too; blkwrite write_phase_bytes_per_s against fio's write bw_bytes,
# which leave the final fsync out). Printed: the median of
# each, and the ratio blkwrite/peer of the medians (> 1 means blkwrite is faster). dd writes
# zeros, and some storage (a VM's sparse or compressing backing) takes zeros faster, so dd is
# compared with blkwrite --pattern zero (blkwrite-zero); fio and blkwrite both write random data.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-}
rounds=${2:-5}
size=${3:-256M}
if [ -z "$dir" ]; then
	dir=$(mktemp -d /var/tmp/blkwrite-bench.XXXXXX)
	made_dir=1
else
	mkdir -p "$dir"
	made_dir=0
fi
cleanup() {
	rm -f "$dir/bw.dat" "$dir/fio.dat" "$dir/dd.dat"
	[ "$made_dir" = 1 ] && rmdir "$dir" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

for t in fio dd jq awk; do
	command -v "$t" >/dev/null 2>&1 || { echo "bench: $t is needed" >&2; exit 2; }
done
if [ -z "${BLKWRITE:-}" ]; then
	(cd "$here" && cargo build --release -q -p blkwrite)
	BLKWRITE=$here/target/release/blkwrite
fi
if [ -z "${INGEST:-}" ]; then
	(cd "$here" && cargo build --release -q -p ingest)
	INGEST=$here/target/release/ingest
fi

bytes=$("$BLKWRITE" --help >/dev/null && awk -v s="$size" 'BEGIN {
	n = s + 0; u = substr(s, length(n "") + 1)
	m = (u == "k" || u == "K") ? 1024 : (u == "M") ? 1048576 : (u == "G") ? 1073741824 : 1
	printf "%d", n * m }')
results=$(mktemp)

now() { date +%s%N; }

# run CASE TOOL CMD...: time one run, record "case tool wall_Bps own_Bps".
run() {
	case_=$1 tool=$2
	shift 2
	sync
	t0=$(now)
	out=$("$@" 2>&1) || { echo "bench: $tool failed: $out" >&2; exit 1; }
	t1=$(now)
	wall=$(awk -v b="$bytes" -v ns=$((t1 - t0)) 'BEGIN { printf "%.0f", b / (ns / 1e9) }')
	case $tool in
	blkwrite*)
		own=$(printf '%s\n' "$out" | jq -r 'select(.type=="summary") | .values.throughput_bytes_per_s')
		phase=$(printf '%s\n' "$out" | jq -r 'select(.type=="summary") | .values.write_phase_bytes_per_s')
		;;
	# fio's write bw_bytes, as ingest carries it over (its summary's throughput_bytes_per_s).
	fio) own=$(printf '%s\n' "$out" | "$INGEST" fio -q -o - | jq -r 'select(.type=="summary") | .values.throughput_bytes_per_s') ;;
	dd) own=$(printf '%s\n' "$out" | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { printf "%.0f", $1 / $(i - 1) } }') ;;
	esac
	[ "$tool" = "${tool#blkwrite}" ] && phase=$own
	echo "$case_ $tool $wall $own $phase" >>"$results"
	echo "bench: $case_ $tool wall $wall own $own phase $phase" >&2
	rm -f "$dir/bw.dat" "$dir/fio.dat" "$dir/dd.dat"
}

fio_() { fio --output-format=json --name=bench --filename="$dir/fio.dat" --size="$size" "$@"; }

# one CASE TOOL: one run of TOOL in CASE.
one() {
	case "$1 $2" in
	"seq-direct-4M blkwrite") run "$1" "$2" "$BLKWRITE" --direct -b 4M -s "$size" --keep -q "$dir/bw.dat" ;;
	"seq-direct-4M blkwrite-zero") run "$1" "$2" "$BLKWRITE" --pattern zero --direct -b 4M -s "$size" --keep -q "$dir/bw.dat" ;;
	"seq-direct-4M fio") run "$1" "$2" fio_ --rw=write --bs=4M --direct=1 --ioengine=psync --end_fsync=1 ;;
	"seq-direct-4M dd") run "$1" "$2" dd if=/dev/zero of="$dir/dd.dat" bs=4M count=$((bytes / 4194304)) oflag=direct conv=fsync ;;
	"buffered-1M-fsync blkwrite") run "$1" "$2" "$BLKWRITE" -b 1M -s "$size" --keep -q "$dir/bw.dat" ;;
	"buffered-1M-fsync blkwrite-zero") run "$1" "$2" "$BLKWRITE" --pattern zero -b 1M -s "$size" --keep -q "$dir/bw.dat" ;;
	"buffered-1M-fsync fio") run "$1" "$2" fio_ --rw=write --bs=1M --ioengine=psync --end_fsync=1 ;;
	"buffered-1M-fsync dd") run "$1" "$2" dd if=/dev/zero of="$dir/dd.dat" bs=1M count=$((bytes / 1048576)) conv=fsync ;;
	"rand-4k-depth1 blkwrite") run "$1" "$2" "$BLKWRITE" --direct --random -b 4k -s "$size" --keep -q "$dir/bw.dat" ;;
	"rand-4k-depth1 fio") run "$1" "$2" fio_ --rw=randwrite --bs=4k --direct=1 --ioengine=psync --end_fsync=1 ;;
	"rand-4k-depth32 blkwrite") run "$1" "$2" "$BLKWRITE" --direct --random -b 4k -s "$size" --iodepth 32 --keep -q "$dir/bw.dat" ;;
	"rand-4k-depth32 fio") run "$1" "$2" fio_ --rw=randwrite --bs=4k --direct=1 --ioengine=io_uring --iodepth=32 --end_fsync=1 ;;
	esac
}

. "$(dirname "$0")/common.sh"

echo "bench: $rounds rounds of $size on $dir ($(df -PT "$dir" | awk 'NR==2 {print $2 " on " $1}'))" >&2
cases=${CASES:-seq-direct-4M buffered-1M-fsync rand-4k-depth1 rand-4k-depth32}
for c in $cases; do
	case $c in
	seq-direct-4M | buffered-1M-fsync) case_rounds "$c" blkwrite fio blkwrite-zero dd ;;
	rand-4k-depth1 | rand-4k-depth32) case_rounds "$c" blkwrite fio ;;
	*) echo "bench: unknown case $c (seq-direct-4M buffered-1M-fsync rand-4k-depth1 rand-4k-depth32)" >&2; exit 2 ;;
	esac
done

# Medians per case and tool, then blkwrite/peer ratios.
awk "$MEDIAN_AWK"'
{ k = $1 SUBSEP $2; wall[k] = wall[k] " " $3; own[k] = own[k] " " $4; phase[k] = phase[k] " " $5; if (!($1 in seen)) { seen[$1] = 1; order[++nc] = $1 }
  if (!(k in tools)) { tools[k] = 1; tl[$1] = tl[$1] " " $2 } }
END {
	printf "%-18s %-13s %12s %12s %9s %9s\n", "case", "tool", "wall MB/s", "own MB/s", "wall x", "own x"
	for (c = 1; c <= nc; c++) {
		cs = order[c]
		n = split(tl[cs], ts, " ")
		for (t = 1; t <= n; t++) {
			w = median(wall[cs SUBSEP ts[t]]); o = median(own[cs SUBSEP ts[t]])
			base = (ts[t] == "dd") ? "blkwrite-zero" : "blkwrite"
			bw = median(wall[cs SUBSEP base])
			# the fio figure leaves out its end_fsync: set the blkwrite write phase against it.
			bo = (ts[t] == "fio") ? median(phase[cs SUBSEP base]) : median(own[cs SUBSEP base])
			printf "%-18s %-13s %12.1f %12.1f %9.3f %9.3f\n", cs, ts[t], w / 1e6, o / 1e6, bw / w, bo / o
		}
	}
}' "$results"

# Per-round ratios of the own figures (round i of blkwrite against round i of the peer, the
# same pairing as the medians above), sorted, and in how many rounds blkwrite was ahead.
echo
awk '
{ k = $1 SUBSEP $2; n[k]++; phase[k, n[k]] = $5; own[k, n[k]] = $4
  if (!($1 in seen)) { seen[$1] = 1; order[++nc] = $1 }
  if (!(k in tools)) { tools[k] = 1; tl[$1] = tl[$1] " " $2 } }
END {
	for (c = 1; c <= nc; c++) {
		cs = order[c]; m = split(tl[cs], ts, " ")
		for (t = 1; t <= m; t++) {
			p = ts[t]
			if (p != "fio" && p != "dd") continue
			base = (p == "dd") ? "blkwrite-zero" : "blkwrite"
			r = n[cs SUBSEP p]; if (n[cs SUBSEP base] < r) r = n[cs SUBSEP base]
			ahead = 0; line = ""
			for (i = 1; i <= r; i++) {
				x[i] = (p == "fio") ? phase[cs SUBSEP base, i] / phase[cs SUBSEP p, i] : own[cs SUBSEP base, i] / own[cs SUBSEP p, i]
				if (x[i] >= 1) ahead++
			}
			for (i = 2; i <= r; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
			for (i = 1; i <= r; i++) line = line sprintf(" %.3f", x[i])
			printf "%-18s %-13s per-round own x, sorted:%s (ahead in %d of %d)\n", cs, base "/" p, line, ahead, r
		}
	}
}' "$results"
rm -f "$results"
