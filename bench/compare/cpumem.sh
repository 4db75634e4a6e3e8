# bench/compare/cpumem.sh: bench/run's cpumem comparison, sourced by it: cpumem's probes
# against perf bench and sysbench memory, pinned to CPU 0. Defines bench_cpumem.

# One probe's own figure against a peer's, everything pinned to CPU 0 (cpumem --cpu 0, taskset
# for the peers: the pipe's two processes share it in both, so cpumem's pipe1 is the case), the same buffer size for the
# bandwidth cases. cpumem's figure is each batch's (5 a run); a peer's its run's one figure.
cm_peer() { # IMPL: the peer's run of the current case, its output on stdout
	case $1.$CM_PROBE in
	perf.syscall) taskset -c 0 perf bench syscall basic -l "$CM_SYSCALLS" ;;
	perf.pipe1) taskset -c 0 perf bench sched pipe -l "$CM_PIPES" ;;
	perf.memcopy) taskset -c 0 perf bench mem memcpy -f default -s "${CM_MB}MB" -l "$CM_LOOPS" ;;
	sysbench.memread | sysbench.memwrite)
		taskset -c 0 sysbench memory --threads=1 --memory-block-size="${CM_MB}M" \
			--memory-total-size="$((CM_MB * 16))M" --memory-oper="${CM_PROBE#mem}" run ;;
	esac
}
cm_figure() { # IMPL: the peer's figure in base units, from its output on stdin
	case $1 in
	perf) awk '/usecs\/op/ { printf "%.9g\n", $1 / 1e6 }
		/B\/sec/ { m = $2 == "GB/sec" ? 1073741824 : $2 == "MB/sec" ? 1048576 : $2 == "KB/sec" ? 1024 : 1
			printf "%.9g\n", $1 * m }' ;;
	sysbench) sed -n 's/.*transferred (\([0-9.]*\) MiB\/sec).*/\1/p' | awk '{ printf "%.9g\n", $1 * 1048576 }' ;;
	esac
}
cm_one() { # IMPL: one run of the current case ($CM_PROBE, $CM_KEY, $CM_NAME)
	case $1 in
	cpumem)
		rec=$out
		[ -z "$WARM" ] || rec=/dev/null
		"$BIN/cpumem" -q --only "$CM_PROBE" --cpu 0 -t "$CM_TIME" -c 5 -s "${CM_MB}M" -o "$rec" \
			--name "$CM_NAME" --tag bench=cpumem --tag impl=cpumem
		;;
	*)
		cm_peer "$1" >"$TMP/cm.out" 2>>"$TMP/err" || return 1
		[ -n "$WARM" ] || cm_figure "$1" <"$TMP/cm.out" | tail -n 1 |
			peer_lines "$1" "$(cm_version "$1")" cpumem "$1" "$CM_NAME" "$CM_KEY"
		;;
	esac
}
cm_version() {
	case $1 in
	perf) perf version 2>/dev/null | awk '{ print $NF }' ;;
	sysbench) sysbench --version 2>/dev/null | awk '{ print $NF }' ;;
	esac
}

bench_cpumem() {
	ours cpumem || { skip "cpumem: $BIN/cpumem is not built"; return 0; }
	have taskset || { skip "cpumem: taskset (util-linux) is needed to pin the peers"; return 0; }
	# probe, sample key, peer, row
	for c in "syscall syscall_s perf system call" "pipe1 pipe_one_cpu_round_trip_s perf pipe round trip on one CPU" \
		"memcopy mem_copy_bytes_per_s perf memcpy, $CM_MB MiB" \
		"memread mem_read_bytes_per_s sysbench memory read, $CM_MB MiB" \
		"memwrite mem_write_bytes_per_s sysbench memory write, $CM_MB MiB"; do
		set -- $c
		CM_PROBE=$1 CM_KEY=$2 peer=$3
		shift 3
		CM_NAME="cpumem: $*"
		have "$peer" || { skip "cpumem vs $peer: $peer is not installed ($CM_PROBE)"; continue; }
		say "cpumem: $CM_NAME (cpumem $peer)"
		alternate cm_one cpumem "$peer" && group cpumem "$peer" "$CM_KEY" "$CM_NAME" cpumem
	done
}
