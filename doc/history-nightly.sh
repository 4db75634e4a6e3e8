#!/bin/sh
# doc/history-nightly.sh: the real series behind README.md's history chart. Sixteen runs of
# ./benchmatrix's cpu and net steps as one label ("nightly"), the last eight in a cgroup that
# holds them to half a CPU (cpu.max 50000/100000, or cpu.cfs_quota_us on cgroup v1), then
# collate --history of three of its rows as doc/history-nightly.svg. As root, from the
# workspace; about 5 minutes. The records go to doc/history-nightly.jsonl (replaced).
#
# Usage: doc/history-nightly.sh     (BENCHMATRIX_BIN=DIR for prebuilt tools, as ./benchmatrix takes)
set -eu
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "doc/history-nightly.sh: needs root (it makes a cgroup)" >&2; exit 2; }
out=doc/history-nightly.jsonl
res=$(mktemp -d "${TMPDIR:-/tmp}/history-nightly.XXXXXX")
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
	cg=/sys/fs/cgroup/bm-history-nightly
	limit() { echo "+cpu" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true; echo "50000 100000" >"$cg/cpu.max"; }
	join=$cg/cgroup.procs
else
	cg=/sys/fs/cgroup/cpu/bm-history-nightly
	limit() { echo 100000 >"$cg/cpu.cfs_period_us"; echo 50000 >"$cg/cpu.cfs_quota_us"; }
	join=$cg/tasks
fi
trap 'rmdir "$cg" 2>/dev/null || true; rm -rf "$res"' EXIT
run() { ./benchmatrix --label nightly --only cpu,net --runs 3 --results "$res" --no-matrix >/dev/null; }
i=1
while [ $i -le 16 ]; do
	if [ $i -le 8 ]; then
		run
	else
		[ -d "$cg" ] || { mkdir "$cg"; limit; }
		# A subshell that moves itself into the cgroup, then runs the suite there.
		(sh -c 'echo $PPID' >"$join" && run)
	fi
	echo "doc/history-nightly.sh: run $i of 16 done" >&2
	i=$((i + 1))
done
cp "$res/nightly.jsonl" "$out"
bin=${BENCHMATRIX_BIN:-${CARGO_TARGET_DIR:-target}/release}
"$bin/collate" --history -f svg --filter='-name:"network throughput loopback->this"' \
	--metric throughput_bits_per_s,syscall_s,mem_read_bytes_per_s "$out" >doc/history-nightly.svg
