# suite/steps.sh: the steps of ./benchmatrix (sourced by it): the one list of the steps a
# run takes, in order, with their estimates (suite_steps: the plan counts it, the run runs
# it), and a function per step, step_ID, which takes its estimate as $1 and appends its
# records to $out. A step that fails says so (step_failed) and the next one runs.

# The steps this run takes, one word each, ID:ESTIMATE (the estimate in seconds, empty when
# unknown). What is wanted but cannot run here is said by suite_skips instead.
suite_steps() {
    if wants net && [ -n "$peer" ]; then
        echo "net_peer:$net_est"
    elif wants net; then
        echo "net_out:$net_out_est net_in:$net_est"
    fi
    ! wants icmp || echo "icmp:$icmp_est"
    ! wants tar || ! has bzip2 || echo "tar:$tar_est"
    ! wants make || [ -z "$cc" ] || ! has make || echo "make:$make_est"
    ! wants cpu || echo "cpu:$cpu_est"
    if wants disk; then
        echo "disk_buffered:$buf_est disk_direct:$disk_est disk_read1:$read1_est"
        echo "disk_read32:$read_est disk_seq:$seq_est meta:$meta_est"
    fi
    if wants kernel && [ -z "$kernel_why" ]; then
        # kernel_steps runs both (the build's source is the tree the first unpacks).
        echo "kernel:$kernel_tar_est kernel_make:$kernel_make_est"
    fi
}

# The wanted steps this machine cannot run, and why.
suite_skips() {
    ! wants tar || has bzip2 || say "tar: skipped, bzip2 is not installed"
    ! wants make || { [ -n "$cc" ] && has make; } || say "make: skipped, no C compiler or no make (install gcc and make)"
    ! wants kernel || [ -z "$kernel_why" ] || say "kernel: left out: $kernel_why"
}

# Runs the steps of suite_steps in order.
suite_run() {
    for s in $(suite_steps); do
        "step_${s%%:*}" "${s#*:}"
    done
}

# --- network throughput, both ways -----------------------------------------------------------
# Stops a listener started in the background with SIGTERM, which ends it with its summary
# written (exit 130); any other status is a failure. Not SIGINT: a background job of a script
# starts with SIGINT ignored, and the tools leave an ignored signal ignored.
stop_listener() {
    kill -TERM "$1" 2>/dev/null || true
    rc=0
    wait "$1" || rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 130 ]
}

# Against a peer both ways are one step, a transfer each way per run.
step_net_peer() {
    say "network: against $peer (serving on ports $port and $((port + 1))), $runs transfers of $net_time each way"
    step "network throughput this->peer and peer->this" \
        "$runs transfers of $net_time each way with $peer" "$1"
    i=0
    while [ $i -lt "$runs" ]; do
        tool "$netpipe" send $q --connect "$peer_at:$port" --time "$net_time" --connect-timeout 5s \
            --label "$label" --name "network throughput this->peer" --tag "peer=$peer" \
            >>"$out" || { step_failed "net this->$peer"; break; }
        tool "$netpipe" recv $q --connect "$peer_at:$((port + 1))" --time "$net_time" --connect-timeout 5s \
            --label "$label" --name "network throughput peer->this" --tag "peer=$peer" \
            >>"$out" || { step_failed "net $peer->this"; break; }
        dot
        i=$((i + 1))
    done
    step_end
}

# Loopback, this->loopback: the receiver's figures are recorded (its clock, first byte to
# EOF); the sender's are discarded, and so are its human lines (-q).
step_net_out() {
    note "network: loopback, $runs transfers of $net_time each way (--peer HOST measures a link)"
    # Each way, the receiver's figures are recorded: its clock, first byte to EOF. The
    # sender's are discarded, and so are its human lines (-q).
    step "network throughput this->loopback" "$runs transfers of $net_time" "$1"
    "$netpipe" recv $q --listen "127.0.0.1:$port" --keep-open --label "$label" \
        --name "network throughput this->loopback" --tag peer=127.0.0.1 >>"$out" &
    rpid=$!; pids="$pids $rpid"
    # The listener must be ours: a port taken by another program fails netpipe at once.
    if wait_listener "$rpid" "$port"; then
        i=0
        while [ $i -lt "$runs" ]; do
            tool "$netpipe" send --connect "127.0.0.1:$port" --time "$net_time" --label "$label" \
                -q >/dev/null || { step_failed "net send"; break; }
            dot
            i=$((i + 1))
        done
        stop_listener "$rpid" || step_failed "net this->loopback"
    else
        step_failed "net: nothing listens on 127.0.0.1:$port (is the port taken? try --port)"
        kill "$rpid" 2>/dev/null || true
    fi
    # Stopped: the cleanup must not signal a pid that may since be another process's.
    pids=""
    step_end
}

# Loopback, loopback->this.
step_net_in() {
    step "network throughput loopback->this" "$runs transfers of $net_time" "$1"
    # The serving side is not measured here (its records are discarded): no lines of its own,
    # and what it says (that a receiver stopped reading when its --time ended) only when
    # it fails.
    "$netpipe" send --listen "127.0.0.1:$port" --keep-open --label "$label" -q >/dev/null \
        2>"$scratch/serve.err" &
    spid=$!; pids="$pids $spid"
    if wait_listener "$spid" "$port"; then
        i=0
        while [ $i -lt "$runs" ]; do
            tool "$netpipe" recv $q --connect "127.0.0.1:$port" --time "$net_time" --label "$label" \
                --name "network throughput loopback->this" --tag peer=127.0.0.1 >>"$out" \
                || { step_failed "net loopback->this"; break; }
            dot
            i=$((i + 1))
        done
        stop_listener "$spid" || { cat "$scratch/serve.err" >&2; step_failed "net send --listen"; }
    else
        cat "$scratch/serve.err" >&2
        step_failed "net: nothing listens on 127.0.0.1:$port (is the port taken? try --port)"
        kill "$spid" 2>/dev/null || true
    fi
    pids=""
    step_end
}

# --- ICMP latency ------------------------------------------------------------------------------
step_icmp() {
    target=${peer:-127.0.0.1} role=peer
    [ -n "$peer" ] || role=loopback
    note "icmp: 20 probes to $target"
    step "latency for icmp this<->$role" "20 probes to $target, $interval s apart" "$1"
    tool "$pingrt" $q -c 20 -i "$interval" --label "$label" --name "latency for icmp this<->$role" \
        --tag "peer=$target" "$target" \
        >>"$out" || step_failed icmp
    step_end
}

# --- tar xjf of a generated archive --------------------------------------------------------------
step_tar() {
    note "tar: making a 16 MiB source-like tree and its .tar.bz2"
    step "time tar xjf tree.tar.bz2" "a 16 MiB source-like tree, its .tar.bz2, $runs runs" \
        "$1"
    mkdir -p "$scratch/tree/src"
    i=0
    while [ $i -lt 64 ]; do
        # Text that compresses like source code: varied words, not one repeated line.
        awk -v seed=$i 'BEGIN { srand(seed); for (l = 0; l < 4000; l++) {
            printf "static int f%d_%d(int x) { return x * %d + %d; } /* %x */\n",
                seed, l, int(rand() * 1000), int(rand() * 100000), int(rand() * 4294967295) } }' \
            >"$scratch/tree/src/file$i.c"
        i=$((i + 1))
    done
    tool tar cjf "$scratch/tree.tar.bz2" -C "$scratch" tree || step_failed "tar archive"
    # The paths reach --prepare's shell in the environment, never in its text.
    export BENCHMATRIX_TREE="$scratch/x"
    tool "$timecmd" $q -r "$runs" -o "$out" --label "$label" --name "time tar xjf tree.tar.bz2" \
        --prepare 'rm -rf -- "$BENCHMATRIX_TREE" && mkdir -- "$BENCHMATRIX_TREE"' \
        -- tar xjf "$scratch/tree.tar.bz2" -C "$scratch/x" || step_failed tar
    rm -rf "$scratch/x" "$scratch/tree"
    step_end
}

# --- make -jN of a generated C tree ----------------------------------------------------------------
step_make() {
    note "make: generating a C tree of 12 files"
    step "time make" "a C tree of 12 files built with $cc -j$jobs, $runs runs" "$1"
    m=$scratch/build
    mkdir -p "$m"
    i=0
    objs=""
    while [ $i -lt 12 ]; do
        awk -v n=$i 'BEGIN { srand(n); for (f = 0; f < 120; f++) {
            printf "int m%d_%d(int a, int b) { int r = a; for (int k = 0; k < b; k++) r = r * %d + k %% %d; return r; }\n",
                n, f, int(rand() * 50) + 2, int(rand() * 90) + 7 } }' >"$m/m$i.c"
        objs="$objs m$i.o"
        i=$((i + 1))
    done
    printf 'int main(void) { return 0; }\n' >"$m/main.c"
    {
        printf 'CC = %s\nCFLAGS = -O2\nOBJS =%s main.o\n' "$cc" "$objs"
        printf 'prog: $(OBJS)\n\t$(CC) -o $@ $(OBJS)\n'
        printf '%%.o: %%.c\n\t$(CC) $(CFLAGS) -c -o $@ $<\n'
        printf 'clean:\n\trm -f $(OBJS) prog\n'
    } >"$m/Makefile"
    # The row is the role; the job count, a parameter of this machine, is a tag.
    export BENCHMATRIX_TREE="$m"
    tool "$timecmd" $q -r "$runs" -o "$out" --label "$label" --name "time make" --tag "jobs=$jobs" \
        --stdout null --prepare 'make -s -C "$BENCHMATRIX_TREE" clean' \
        -- make -s -C "$m" -j"$jobs" || step_failed make
    step_end
}

# --- CPU and memory costs: a row per cpumem probe ----------------------------------------------
step_cpu() {
    note "cpu: cpumem's probes (system call, pipe on one CPU and across two, spawn, page fault, memory, clock), 1 s each"
    step "cpu and memory costs" "cpumem: 10 probes of 1 s, a row each" "$1"
    tool "$cpumem" $q --label "$label" >>"$out" || step_failed cpu
    step_end
}

# --- disk: block writes and reads on --dir ------------------------------------------------------
# Each measurement runs --runs times (6 by default), so that its cells show a 95% CI and
# collate's test can tell a difference (four against four is the fewest it can).
# Row names say the role; the size, block size and depth are tags. The first disk step makes
# the directory (removed by the last one, and on every exit), the writes leave the file the
# reads read.
disk_dir() {
    [ -z "${diskdir:-}" ] || return 0
    # The cleanup's variable is the one mktemp's answer is put in: a signal's trap runs after
    # that command, so the directory is known to it as soon as it exists.
    if [ -n "$dir" ]; then
        diskdir_made=$(mktemp -d "$dir/benchmatrix-disk.XXXXXX") || die "cannot write in $dir"
    else
        diskdir_made=$(mktemp -d "./benchmatrix-disk.XXXXXX") || die "cannot write in $(pwd)"
    fi
    diskdir=$diskdir_made
    f=$diskdir/blockfile
    note "disk: writing $disk_size into $diskdir, buffered+fsync, then O_DIRECT, and reading it back, $disk_runs runs each"
}
# Writes $disk_runs times with blkwrite's options after $1, $2 and $3 (the step's short
# name, the row's and its estimate); the last write is kept as the file the reads read.
disk_write() {
    n=$1 what=$2 est=$3; shift 3
    step "disk write ($what)" "$disk_size into $diskdir, $disk_runs runs" "$est"
    i=1
    while [ $i -le "$disk_runs" ]; do
        rm -f "$f.w"
        keep=""
        [ $i -lt "$disk_runs" ] || keep=--keep
        tool "$blkwrite" $q -s "$disk_size" -b 4M "$@" $keep --label "$label" --name "disk write ($what)" \
            --tag "size=$disk_size" --tag bs=4M "$f.w" >>"$out" || { step_failed "disk $n"; step_end; return 0; }
        dot
        i=$((i + 1))
    done
    mv -f "$f.w" "$f"
    step_end
}
# Reads the file $disk_runs times: row name $1, tags $2, estimate $3, then blkread's options.
disk_read() {
    name=$1 tags=$2 est=$3; shift 3
    step "$name" "$tags, $disk_runs runs" "$est"
    i=1
    while [ $i -le "$disk_runs" ]; do
        tool "$blkread" $q --direct=try "$@" --label "$label" --name "$name" --tag "size=$disk_size" \
            $(for t in $tags; do printf -- '--tag %s ' "$t"; done) "$f" \
            >>"$out" || { step_failed "disk read: $name"; step_end; return 0; }
        dot
        i=$((i + 1))
    done
    step_end
}
# The reads need the file the writes left; its absence is said once.
disk_file() {
    [ -f "$f" ] && return 0
    [ -n "${disk_missing:-}" ] || step_failed "disk reads: no file was written to read"
    disk_missing=1
    return 1
}
step_disk_buffered() { disk_dir; disk_write buffered "buffered+fsync" "$1"; }
step_disk_direct() { disk_dir; disk_write direct "O_DIRECT" "$1" --direct; }
# One random read run makes four rows: reads per second, latency p50, p99 and p99.9.
step_disk_read1() {
    disk_file || return 0
    disk_read "disk random read, one at a time (O_DIRECT)" "bs=4k iodepth=1" "$1" --random -t "$read_time"
}
step_disk_read32() {
    disk_file || return 0
    disk_read "disk random read, many in flight (O_DIRECT)" "bs=4k iodepth=32" "$1" \
        --random --iodepth 32 -t "$read_time"
}
step_disk_seq() {
    ! disk_file || disk_read "disk sequential read (O_DIRECT)" "bs=1M" "$1" -b 1M
    rm -rf "$diskdir"
    diskdir_made=""
}

# --- file metadata: creates, stats and unlinks on the --dir file system ---------------------------
# fsmeta makes its own private directory there and removes it on every path (Ctrl-C too); its
# one run makes three rows, "file metadata: create", ": stat" and ": unlink", in files per second.
step_meta() {
    metadir=${dir:-.}
    note "files: $meta_files created, stat'ed and unlinked in $metadir"
    step "file metadata" "$meta_files files created, then stat'ed and unlinked, in $metadir" "$1"
    tool "$fsmeta" $q -n "$meta_files" --label "$label" --name "file metadata" "$metadir" \
        >>"$out" || step_failed "files"
    step_end
}

# --- the kernel workload: unpack and build a real Linux kernel in RAM ----------------------------
step_kernel() {
    note "kernel: $(basename "$kernel_tarball") unpacked and built ($kernel_config, -j$jobs), a warm-up and $runs runs each"
    kernel_steps
}
# Run by step_kernel, which builds the tree it unpacked.
step_kernel_make() { :; }
