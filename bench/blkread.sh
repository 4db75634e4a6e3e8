#!/bin/sh
# bench/blkread.sh: blkread against fio and dd on one file, side by side in one run.
#
# Usage: bench/blkread.sh [SCRATCH_DIR] [ROUNDS] [SIZE] [RAND_SIZE]
#   SCRATCH_DIR  where the test file goes (default: a new directory under /var/tmp)
#   ROUNDS       rounds per case, the tools alternating, the order rotated (default 7)
#   SIZE         the file, read whole by the sequential case (default 512M)
#   RAND_SIZE    the part of it the random cases read, every 4k block once (default 64M)
# Environment: BLKREAD, BLKWRITE = paths to the binaries (default: cargo build --release, then
#   target/release); CASES = the cases to run, of rand-4k-depth1 rand-4k-depth32 seq-1M
#   (default: all three).
#
# One file of random data (written once by blkwrite, fsynced) is read by every run: random
# 4k O_DIRECT reads at depth 1 (blkread, pread, against fio --rw=randread --ioengine=psync)
# and at depth 32 (blkread's io_uring against fio --ioengine=io_uring --iodepth=32), each
# 4k block of RAND_SIZE once per run (fio's random map, blkread's permutation); sequential
# 1M O_DIRECT reads of the whole file (blkread, fio --rw=read --ioengine=psync, dd
# iflag=direct). Each case starts with an untimed warm-up run per tool. Figures, each
# tool's own: reads per second (blkread's reads_per_s, fio's read.iops), per-read latency
# p50 and p99 (blkread's histogram against fio's completion latency, clat: the same span
# for a pread, from submission to completion for io_uring), and bytes per second (blkread's
# throughput_bytes_per_s, fio's read.bw_bytes, dd's own rate). Printed: the median per case
# and tool and the ratio blkread/peer of the medians, then each round's ratio; checked:
# blkread's percentiles in order in every run, every sequential run counting exactly the
# file's bytes, and the file unchanged at the end (its SHA-256).
set -eu

here=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-}
rounds=${2:-7}
size=${3:-512M}
rsize=${4:-64M}
if [ -z "$dir" ]; then
	dir=$(mktemp -d /var/tmp/blkread-bench.XXXXXX)
	made_dir=1
else
	mkdir -p "$dir"
	made_dir=0
fi
f=$dir/blkread-bench.dat
results=$(mktemp)
cleanup() {
	rm -f "$f" "$results"
	[ "$made_dir" = 1 ] && rmdir "$dir" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

for t in fio dd jq awk sha256sum; do
	command -v "$t" >/dev/null 2>&1 || { echo "bench: $t is needed" >&2; exit 2; }
done
if [ -z "${BLKREAD:-}" ] || [ -z "${BLKWRITE:-}" ]; then
	(cd "$here" && cargo build --release -q -p blkwrite)
	BLKREAD=$here/target/release/blkread BLKWRITE=$here/target/release/blkwrite
fi
[ ! -e "$f" ] || { echo "bench: $f exists; remove it first" >&2; exit 2; }
"$BLKWRITE" -s "$size" -b 4M --keep -q -o /dev/null "$f"
bytes=$(stat -c %s "$f")
before=$(sha256sum "$f" | cut -d' ' -f1)

# run CASE TOOL CMD...: one run; records "case tool rate p50_s p99_s bytes" (rate: reads/s
# for the random cases, bytes/s for the sequential one; - where the tool has no figure).
run() {
	case_=$1 tool=$2
	shift 2
	out=$("$@" 2>&1) || { echo "bench: $tool failed: $out" >&2; exit 1; }
	case $tool in
	blkread)
		s=$(printf '%s\n' "$out" | jq -c 'select(.type=="summary") | .values')
		ordered=$(printf '%s\n' "$s" | jq '[.latency_min_s, .latency_p50_s, .latency_p90_s, .latency_p99_s, .latency_p99_9_s, .latency_max_s] as $l | ($l == ($l | sort))')
		[ "$ordered" = true ] || { echo "bench: blkread's percentiles out of order: $s" >&2; exit 1; }
		key=reads_per_s
		[ "$case_" != seq-1M ] || key=throughput_bytes_per_s
		line=$(printf '%s\n' "$s" | jq -r --arg k "$key" '"\(.[$k]) \(.latency_p50_s) \(.latency_p99_s) \(.read_bytes)"')
		;;
	fio)
		key=iops
		[ "$case_" != seq-1M ] || key=bw_bytes
		line=$(printf '%s\n' "$out" | sed -n '/^{/,$p' | jq -r --arg k "$key" '.jobs[0].read |
			"\(.[$k]) \(.clat_ns.percentile["50.000000"] / 1e9) \(.clat_ns.percentile["99.000000"] / 1e9) \(.io_bytes)"')
		;;
	dd)
		line=$(printf '%s\n' "$out" | awk '/copied/ { for (i = 1; i <= NF; i++) if ($i == "s,") { printf "%.0f - - %d", $1 / $(i - 1), $1 } }')
		;;
	esac
	echo "$case_ $tool $line" >>"$results"
	echo "bench: $case_ $tool $line" >&2
	if [ "$case_" = seq-1M ] && [ "$(echo "$line" | awk '{ print $4 }')" != "$bytes" ]; then
		echo "bench: $tool read $(echo "$line" | awk '{ print $4 }') bytes of the $bytes-byte file" >&2
		exit 1
	fi
}

fio_() { fio --output-format=json --name=bench --filename="$f" --direct=1 "$@"; }

# one CASE TOOL: one run of TOOL in CASE.
one() {
	case "$1 $2" in
	"rand-4k-depth1 blkread") run "$1" "$2" "$BLKREAD" --direct --random -s "$rsize" "$f" ;;
	"rand-4k-depth1 fio") run "$1" "$2" fio_ --rw=randread --bs=4k --size="$rsize" --ioengine=psync ;;
	"rand-4k-depth32 blkread") run "$1" "$2" "$BLKREAD" --direct --random --iodepth 32 -s "$rsize" "$f" ;;
	"rand-4k-depth32 fio") run "$1" "$2" fio_ --rw=randread --bs=4k --size="$rsize" --ioengine=io_uring --iodepth=32 ;;
	"seq-1M blkread") run "$1" "$2" "$BLKREAD" --direct -b 1M "$f" ;;
	"seq-1M fio") run "$1" "$2" fio_ --rw=read --bs=1M --size="$bytes" --ioengine=psync ;;
	"seq-1M dd") run "$1" "$2" dd if="$f" of=/dev/null bs=1M iflag=direct ;;
	esac
}

. "$(dirname "$0")/common.sh"

echo "bench: $rounds rounds on $f ($size, random over $rsize; $(df -PT "$dir" | awk 'NR==2 {print $2 " on " $1}'))" >&2
for c in ${CASES:-rand-4k-depth1 rand-4k-depth32 seq-1M}; do
	case $c in
	rand-4k-depth1 | rand-4k-depth32) case_rounds "$c" blkread fio ;;
	seq-1M) case_rounds "$c" blkread fio dd ;;
	*) echo "bench: unknown case $c (rand-4k-depth1 rand-4k-depth32 seq-1M)" >&2; exit 2 ;;
	esac
done
after=$(sha256sum "$f" | cut -d' ' -f1)
[ "$before" = "$after" ] || { echo "bench: the file changed under the reads" >&2; exit 1; }

# Medians per case and tool, the ratios blkread/peer of the medians, then each round's ratio.
awk "$MEDIAN_AWK"'
{ k = $1 SUBSEP $2; n[k]++; rate[k] = rate[k] " " $3; p50[k] = p50[k] " " $4; p99[k] = p99[k] " " $5; r[k, n[k]] = $3
  if ($4 == "-") nolat[k] = 1
  if (!($1 in seen)) { seen[$1] = 1; order[++nc] = $1 }
  if (!(k in tools)) { tools[k] = 1; tl[$1] = tl[$1] " " $2 } }
END {
	printf "%-16s %-8s %14s %10s %10s %9s %9s %9s\n", "case", "tool", "rate", "p50 us", "p99 us", "rate x", "p50 x", "p99 x"
	for (c = 1; c <= nc; c++) {
		cs = order[c]; m = split(tl[cs], ts, " ")
		b = cs SUBSEP "blkread"
		for (t = 1; t <= m; t++) {
			k = cs SUBSEP ts[t]
			unit = (cs == "seq-1M") ? "MB/s" : "k/s"
			v = median(rate[k]) / ((cs == "seq-1M") ? 1e6 : 1e3)
			lat = (k in nolat) ? "         -          -" : sprintf("%10.1f %10.1f", median(p50[k]) * 1e6, median(p99[k]) * 1e6)
			rx = median(rate[b]) / median(rate[k])
			lx = (k in nolat) ? "        -         -" : sprintf("%9.3f %9.3f", median(p50[b]) / median(p50[k]), median(p99[b]) / median(p99[k]))
			printf "%-16s %-8s %9.1f %4s %s %9.3f %s\n", cs, ts[t], v, unit, lat, rx, lx
		}
	}
	print ""
	for (c = 1; c <= nc; c++) {
		cs = order[c]; m = split(tl[cs], ts, " ")
		for (t = 1; t <= m; t++) {
			p = ts[t]
			if (p == "blkread") continue
			cnt = n[cs SUBSEP p]; if (n[cs SUBSEP "blkread"] < cnt) cnt = n[cs SUBSEP "blkread"]
			ahead = 0; line = ""
			for (i = 1; i <= cnt; i++) { x[i] = r[cs SUBSEP "blkread", i] / r[cs SUBSEP p, i]; if (x[i] >= 1) ahead++ }
			for (i = 2; i <= cnt; i++) { v = x[i]; for (j = i - 1; j >= 1 && x[j] > v; j--) x[j + 1] = x[j]; x[j + 1] = v }
			for (i = 1; i <= cnt; i++) line = line sprintf(" %.3f", x[i])
			printf "%-16s blkread/%-5s per-round rate x, sorted:%s (ahead in %d of %d)\n", cs, p, line, ahead, cnt
		}
	}
}' "$results"
echo "bench: the file read back unchanged (sha256 $after); every sequential run counted $bytes bytes" >&2
