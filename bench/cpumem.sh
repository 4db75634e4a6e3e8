#!/bin/sh
# cpumem against its peers, alternating A B, B A ... in one run, reporting the median of each
# side's figures and their ratio (cpumem / peer), with the spread of the per-round ratios:
#   syscall_s             vs `perf bench syscall basic` (getppid through syscall(2), usecs/op)
#   pipe_one_cpu_round_trip_s vs `perf bench sched pipe` (a round trip between two processes)
#   mem_copy_bytes_per_s  vs `perf bench mem memcpy -f default` (glibc's memcpy), same size
#   mem_read_bytes_per_s, mem_write_bytes_per_s vs `sysbench memory --memory-oper=read|write`,
#                         its block the same size as cpumem's buffer, one thread
# Everything runs pinned to CPU $CPU (cpumem --cpu, taskset -c for the peers), so the pipe's two
# processes share that CPU in both tools. The bar (issue 17): every ratio within 0.67..1.5.
# Needs: a release build (cargo build --release -p cpumem), perf (linux-perf), sysbench,
# taskset (util-linux), jq, awk.
# Usage: sh bench/cpumem.sh            (ROUNDS=7 CPU=0 SIZE_MB=128 CPUMEM=path to override)
set -eu

CPUMEM=${CPUMEM:-target/release/cpumem}
ROUNDS=${ROUNDS:-7}
CPU=${CPU:-0}
SIZE_MB=${SIZE_MB:-128}
for tool in "$CPUMEM" perf sysbench taskset jq awk; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "bench/cpumem.sh: $tool not found (cargo build --release -p cpumem; apt-get install linux-perf sysbench util-linux jq)" >&2
		exit 2
	}
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

. "$(dirname "$0")/common.sh"

# cpumem's figure for probe $1: the summary's median over 5 batches of 1 s in all.
ours() {
	"$CPUMEM" -q --only "$1" --cpu "$CPU" -t 1s -c 5 -s "${SIZE_MB}M" -o - |
		jq -r --arg k "$2" 'select(.type == "summary") | .values[$k]'
}

# The peer's figure for probe $1, in base units (seconds, bytes per second).
peer() {
	case $1 in
	syscall) taskset -c "$CPU" perf bench syscall basic -l 1000000 | awk '/usecs\/op/ { printf "%.9g\n", $1 / 1e6 }' ;;
	pipe1) taskset -c "$CPU" perf bench sched pipe -l 20000 | awk '/usecs\/op/ { printf "%.9g\n", $1 / 1e6 }' ;;
	memcopy)
		# perf's MB and GB are binary (its -s 128MB is 128 MiB, its GB/sec 2^30 bytes a second).
		taskset -c "$CPU" perf bench mem memcpy -f default -s "${SIZE_MB}MB" -l 10 |
			awk '/B\/sec/ { m = $2 == "GB/sec" ? 1073741824 : $2 == "MB/sec" ? 1048576 : $2 == "KB/sec" ? 1024 : 1; printf "%.9g\n", $1 * m }'
		;;
	memread | memwrite)
		taskset -c "$CPU" sysbench memory --threads=1 --memory-block-size="${SIZE_MB}M" \
			--memory-total-size="$((SIZE_MB * 16))M" --memory-oper="${1#mem}" run |
			sed -n 's/.*transferred (\([0-9.]*\) MiB\/sec).*/\1/p' | awk '{ printf "%.9g\n", $1 * 1048576 }'
		;;
	esac
}

load() { awk '{ print $1 }' /proc/loadavg; }
echo "machine: $(nproc) CPUs, $(uname -r), $(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo); pinned to CPU $CPU"
echo "peers: $(perf version), $(sysbench --version); $ROUNDS rounds A B / B A; load average at the start $(load)"

# probe, sample key, summary key, peer's name
cases="syscall syscall_s syscall_median_s perf-bench-syscall-basic
pipe1 pipe_one_cpu_round_trip_s pipe_one_cpu_round_trip_median_s perf-bench-sched-pipe
memcopy mem_copy_bytes_per_s mem_copy_median_bytes_per_s perf-bench-mem-memcpy
memread mem_read_bytes_per_s mem_read_median_bytes_per_s sysbench-memory-read
memwrite mem_write_bytes_per_s mem_write_median_bytes_per_s sysbench-memory-write"

echo "$cases" | while read -r probe key skey name; do
	: >"$tmp/a"
	: >"$tmp/b"
	: >"$tmp/r"
	ours "$probe" "$skey" >/dev/null # warm-up, unrecorded
	peer "$probe" >/dev/null
	i=0
	while [ "$i" -lt "$ROUNDS" ]; do
		if [ $((i % 2)) = 0 ]; then
			a=$(ours "$probe" "$skey")
			b=$(peer "$probe")
		else
			b=$(peer "$probe")
			a=$(ours "$probe" "$skey")
		fi
		echo "$a" >>"$tmp/a"
		echo "$b" >>"$tmp/b"
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", a / b }' >>"$tmp/r"
		i=$((i + 1))
	done
	ma=$(median "$tmp/a")
	mb=$(median "$tmp/b")
	lo=$(sort -g "$tmp/r" | head -n 1)
	hi=$(sort -g "$tmp/r" | tail -n 1)
	awk -v p="$probe" -v k="$key" -v n="$name" -v a="$ma" -v b="$mb" -v lo="$lo" -v hi="$hi" -v mr="$(median "$tmp/r")" 'BEGIN {
		unit = k ~ /_bytes_per_s$/ ? "GB/s" : "us"; f = unit == "us" ? 1e6 : 1e-9
		ok = a / b >= 0.67 && a / b <= 1.5 ? "within 0.67..1.5" : "OUTSIDE 0.67..1.5"
		printf "%-9s cpumem %.4g %s, %s %.4g %s: ratio of medians %.3f (per round %.3f, %.3f..%.3f) %s\n",
			p, a * f, unit, n, b * f, unit, a / b, mr, lo, hi, ok }'
done
echo "load average at the end $(load)"
