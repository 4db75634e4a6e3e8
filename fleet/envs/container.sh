# fleet/envs/container.sh: a limited container on this machine, for fleet/local-envs (sourced).
#
# A container is a process tree in namespaces of its own (mount, pid, uts, ipc, and a network
# namespace joined to the host by a veth pair) and in a cgroup of its own with a CPU quota, a
# write throttle on the device under test and a memory limit: cgroup v2 (cpu.max, io.max,
# memory.max) where the unified hierarchy has those controllers, else v1 (cpu.cfs_quota_us,
# blkio.throttle.write_bps_device, memory.limit_in_bytes). Its PID 1 carries container=NAME
# in its environment, as container managers set it (systemd-detect-virt reads it; so do the
# tools' begin facts). Needs root. Every function cleans up what it made, on every path.

# The veth pair's /30 is 10.213.N.0/30, the first N (0 to 255) that no address or route of
# this machine's network namespace overlaps, chosen and given to the host end under a lock
# (ct_claim), so that two runs on one host (or a run and a test) each get their own: the host
# end is .1 (where this container's --serve listens), the container's .2. The namespace, the
# veth ends and the cgroup are named for the run's PID (bmenv-PID, bmhPID and bmcPID).
ct_host="" ct_addr=""
ct_ns="" ct_veth="" ct_dirs="" ct_serve="" ct_launch=""
# The lock that makes choosing a /30 and adding it to the host end one step between runs:
# one path for every run of this machine (never under TMPDIR, which differs between runs).
ct_lock=/run/benchmatrix-local-envs.lock
[ -d /run ] && [ -w /run ] || ct_lock=/tmp/benchmatrix-local-envs.lock

# Returns 0 when a container can be made here; else says why on stderr and returns 1.
container_check() {
    if [ "$(id -u)" != 0 ]; then
        echo "container: left out: making a cgroup and a network namespace needs root" >&2
        return 1
    fi
    for ct_t in unshare nsenter ip findmnt ss flock; do
        command -v "$ct_t" >/dev/null 2>&1 || {
            echo "container: left out: no $ct_t (install: util-linux iproute2)" >&2
            return 1
        }
    done
    if ! ct_cgroup_kind >/dev/null; then
        echo "container: left out: no cgroup hierarchy with the cpu, io/blkio and memory controllers" >&2
        return 1
    fi
}

# v2 when the unified hierarchy offers cpu, io and memory, else v1 when its hierarchies are
# mounted; prints the kind.
ct_cgroup_kind() {
    ct_u=$(findmnt -rn -t cgroup2 -o TARGET | head -n 1)
    if [ -n "$ct_u" ] && [ -r "$ct_u/cgroup.controllers" ]; then
        ct_c=" $(cat "$ct_u/cgroup.controllers") "
        case $ct_c in *" cpu "*) case $ct_c in *" io "*) case $ct_c in *" memory "*) echo v2; return 0 ;; esac ;; esac ;; esac
    fi
    [ -n "$(ct_v1_mount cpu)" ] && [ -n "$(ct_v1_mount blkio)" ] && [ -n "$(ct_v1_mount memory)" ] && { echo v1; return 0; }
    return 1
}

# The mount point of the v1 hierarchy that holds controller $1 (`cpu` in `rw,cpu,cpuacct`).
ct_v1_mount() {
    findmnt -rn -t cgroup -o TARGET,FS-OPTIONS | awk -v c="$1" '
        { n = split($2, o, ","); for (i = 1; i <= n; i++) if (o[i] == c) { print $1; exit } }'
}

# A size or rate in bytes, dd's way: 20M = 20971520, 1G = 1073741824, 20MB = 20000000.
ct_bytes() {
    printf '%s\n' "$1" | awk '{
        u = $0; sub(/^[0-9.]+/, "", u); p = tolower(substr(u, 1, 1)); dec = u ~ /^.B$/
        e = p == "k" ? 1 : p == "m" ? 2 : p == "g" ? 3 : p == "t" ? 4 : 0
        printf "%.0f\n", ($0 + 0) * (dec ? 1000 : 1024) ^ e }'
}

# The MAJ:MIN of the whole block device beneath directory $1 (a partition's disk), which the
# write throttle names; nothing for a file system without one (tmpfs, overlay, btrfs).
ct_device() {
    ct_mm=$(findmnt -rn -o MAJ:MIN -T "$1" | head -n 1)
    case $ct_mm in "" | 0:*) return 1 ;; esac
    if [ -e "/sys/dev/block/$ct_mm/partition" ]; then
        ct_mm=$(cat "/sys/dev/block/$ct_mm/../dev") || return 1
    fi
    echo "$ct_mm"
}

# Prints the first N (0 to 255) whose 10.213.N.0/30 overlaps no IPv4 address (of any
# interface) and no route of this network namespace: another run's veth holds its .1 and
# its route; nothing when every one is taken.
ct_free_slot() {
    { ip -o -4 addr show | awk '{ print $4 }'; ip -4 route show table all | awk '{ print $1 ~ /^[0-9]/ ? $1 : $2 }'; } |
        awk -F '[./]' '
        NF >= 4 && $1 ~ /^[0-9]+$/ {
            p = NF >= 5 ? $5 + 0 : 32
            n++; a[n] = (($1 * 256 + $2) * 256 + $3) * 256 + $4; len[n] = p < 30 ? p : 30
        }
        END {
            for (s = 0; s < 256; s++) {
                base = ((10 * 256 + 213) * 256 + s) * 256; free = 1
                for (i = 1; i <= n && free; i++) {
                    unit = 2 ^ (32 - len[i])
                    if (int(a[i] / unit) == int(base / unit)) free = 0
                }
                if (free) { print s; exit }
            }
        }'
}

# Makes the network namespace and the veth pair of this run, its host end holding the first
# free 10.213.N.1/30 (ct_free_slot): chosen and added while holding ct_lock, which every run
# takes for that step only, so that no two runs choose the same N. Sets ct_host and ct_addr.
ct_claim() {
    ct_ns=bmenv-$$ ct_veth=bmh$$
    ip netns add "$ct_ns" &&
        ip link add "$ct_veth" type veth peer name bmc$$ &&
        ip link set bmc$$ netns "$ct_ns" || return 1
    # fd 9 holds the lock for the choice and the address only; the children started later
    # do not inherit it.
    # A redirection that fails on exec ends a POSIX shell: the file is checked first.
    { : >>"$ct_lock"; } 2>/dev/null || {
        echo "container: cannot write the lock $ct_lock" >&2
        return 1
    }
    exec 9>>"$ct_lock"
    if ! flock -w 60 9; then
        exec 9>&-
        echo "container: another local-envs run held $ct_lock for 60 s" >&2
        return 1
    fi
    ct_n=$(ct_free_slot)
    if [ -z "$ct_n" ]; then
        exec 9>&-
        echo "container: no free /30 in 10.213.0.0/16: every one overlaps an address or route of this machine" >&2
        return 1
    fi
    ct_host=10.213.$ct_n.1 ct_addr=10.213.$ct_n.2
    ip addr add "$ct_host/30" dev "$ct_veth"
    ct_rc=$?
    exec 9>&-
    [ "$ct_rc" = 0 ] || return 1
    ip link set "$ct_veth" up &&
        ip -n "$ct_ns" addr add "$ct_addr/30" dev bmc$$ &&
        ip -n "$ct_ns" link set bmc$$ up &&
        ip -n "$ct_ns" link set lo up
}

# Makes the cgroup NAME with a quota of $2 percent of one CPU, a write throttle of $3 bytes/s
# on device $4 (MAJ:MIN, or empty for none) and a memory limit of $5 bytes; sets ct_dirs to
# the directories a process joins.
ct_cgroup_make() {
    ct_name=$1 ct_pct=$2 ct_bps=$3 ct_dev=$4 ct_mem=$5
    ct_quota=$((ct_pct * 1000))
    case $(ct_cgroup_kind) in
        v2)
            ct_u=$(findmnt -rn -t cgroup2 -o TARGET | head -n 1)
            # The controllers must be on for the root's children.
            echo "+cpu +io +memory" >"$ct_u/cgroup.subtree_control" 2>/dev/null || true
            mkdir "$ct_u/$ct_name" || return 1
            ct_dirs="$ct_u/$ct_name" ct_cpudir="$ct_u/$ct_name"
            echo "$ct_quota 100000" >"$ct_u/$ct_name/cpu.max" &&
                echo "$ct_mem" >"$ct_u/$ct_name/memory.max" &&
                { [ -z "$ct_dev" ] || echo "$ct_dev wbps=$ct_bps" >"$ct_u/$ct_name/io.max"; }
            ;;
        v1)
            for ct_c in cpu blkio memory; do
                ct_d=$(ct_v1_mount "$ct_c")/$ct_name
                mkdir "$ct_d" || return 1
                ct_dirs="$ct_dirs $ct_d"
            done
            ct_cpu=$(ct_v1_mount cpu)/$ct_name ct_cpudir=$(ct_v1_mount cpu)/$ct_name ct_blkio=$(ct_v1_mount blkio)/$ct_name ct_memory=$(ct_v1_mount memory)/$ct_name
            echo 100000 >"$ct_cpu/cpu.cfs_period_us" &&
                echo "$ct_quota" >"$ct_cpu/cpu.cfs_quota_us" &&
                echo "$ct_mem" >"$ct_memory/memory.limit_in_bytes" &&
                { [ -z "$ct_dev" ] || echo "$ct_dev $ct_bps" >"$ct_blkio/blkio.throttle.write_bps_device"; }
            ;;
        *) return 1 ;;
    esac
}

# Ends the processes in the container's cgroup (every one of them was started by
# container_run): SIGTERM, so that its ./benchmatrix ends its tools and removes its scratch,
# then SIGKILL for what is left after 10 s.
ct_end_tree() {
    ct_first=${ct_dirs%% *}
    [ -n "$ct_first" ] && [ -r "$ct_first/cgroup.procs" ] || return 0
    for ct_sig in TERM KILL; do
        ct_i=0
        while [ -s "$ct_first/cgroup.procs" ] && [ $ct_i -lt 100 ]; do
            [ $ct_i != 0 ] || for ct_p in $(cat "$ct_first/cgroup.procs"); do kill -s "$ct_sig" "$ct_p" 2>/dev/null || true; done
            sleep 0.1
            ct_i=$((ct_i + 1))
        done
    done
}

# Removes what container_run made: the processes in its cgroup, its --serve (by pid), the
# network namespace (and with it the veth pair) and the cgroup directories (retried while
# the last processes exit).
container_cleanup() {
    if [ -n "$ct_launch" ]; then
        ct_end_tree
        wait "$ct_launch" 2>/dev/null || true
        ct_launch=""
    fi
    if [ -n "$ct_serve" ]; then
        kill "$ct_serve" 2>/dev/null || true
        wait "$ct_serve" 2>/dev/null || true
        ct_serve=""
    fi
    [ -z "$ct_ns" ] || ip netns del "$ct_ns" 2>/dev/null || true
    [ -z "$ct_veth" ] || ip link del "$ct_veth" 2>/dev/null || true
    ct_ns="" ct_veth="" ct_host="" ct_addr=""
    for ct_d in $ct_dirs; do
        ct_i=0
        while [ -d "$ct_d" ] && ! rmdir "$ct_d" 2>/dev/null && [ $ct_i -lt 50 ]; do
            sleep 0.1
            ct_i=$((ct_i + 1))
        done
    done
    ct_dirs=""
}

# container_run REPO BIN LABEL RESULTS DIR PORT TOKEN PCT BPS MEM -- SUITE_ARGS...
# Runs REPO/benchmatrix with SUITE_ARGS in a container limited to PCT percent of one CPU, BPS
# bytes/s of writes to DIR's device and MEM bytes of memory, its network rows measuring the
# veth link to a --serve of its own on the host end (PORT and PORT+1, token TOKEN); the
# records go to RESULTS/LABEL.jsonl. Returns the suite's exit status.
container_run() {
    ct_repo=$1 ct_bin=$2 ct_label=$3 ct_results=$4 ct_dir=$5 ct_port=$6 ct_token=$7 ct_pct=$8 ct_bps=$9
    shift 9
    ct_mem=$1
    shift
    [ "${1:-}" = "--" ] && shift
    ct_claim || {
        echo "container: cannot make the network namespace and its veth pair" >&2
        container_cleanup
        return 2
    }
    ct_dev=$(ct_device "$ct_dir") || {
        echo "container: $ct_dir is on no block device: no write throttle" >&2
        ct_dev=""
    }
    ct_cgroup_make "bmenv-$$" "$ct_pct" "$ct_bps" "$ct_dev" "$ct_mem" || {
        echo "container: cannot make the cgroup with its limits" >&2
        container_cleanup
        return 2
    }
    # The token goes in the environment, never in an argv (which ps shows any local user).
    BENCHMATRIX_TOKEN=$ct_token BENCHMATRIX_BIN=$ct_bin "$ct_repo/benchmatrix" --serve \
        --bind "$ct_host" --port "$ct_port" --serve-time 2h 2>/dev/null &
    ct_serve=$!
    ct_i=0
    until ss -Hltn "src $ct_host:$((ct_port + 1))" | grep -q .; do
        ct_i=$((ct_i + 1))
        if [ $ct_i -gt 100 ] || ! kill -0 "$ct_serve" 2>/dev/null; then
            echo "container: the host's --serve on $ct_host:$ct_port did not start" >&2
            container_cleanup
            return 2
        fi
        sleep 0.1
    done
    # The launcher joins the cgroup, then becomes the container: its network namespace
    # (nsenter, which leaves /sys and the cgroup mounts as they are), then new mount, pid,
    # uts and ipc namespaces with their own /proc.
    # The launcher runs in the background and is waited for, so that a signal's trap runs at
    # once; the cgroup directories reach its shell as arguments (their count first), never
    # in its text.
    ct_rc=0
    # shellcheck disable=SC2016 # $$ and "$@" are the inner shell's.
    # shellcheck disable=SC2086 # $ct_dirs is the directories, split on purpose.
    BENCHMATRIX_TOKEN=$ct_token sh -c 'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ >"$1/cgroup.procs" || exit 2; shift; n=$((n - 1)); done; exec "$@"' sh \
        "$(echo $ct_dirs | wc -w)" $ct_dirs \
        nsenter --net="/run/netns/$ct_ns" \
        unshare --mount --pid --uts --ipc --fork --mount-proc \
        env container=benchmatrix-local-envs BENCHMATRIX_BIN="$ct_bin" \
        "$ct_repo/benchmatrix" --label "$ct_label" --results "$ct_results" --dir "$ct_dir" \
        --peer "$ct_host" --port "$ct_port" --no-matrix "$@" &
    ct_launch=$!
    wait "$ct_launch" || ct_rc=$?
    ct_launch=""
    ct_cpu_stat "$ct_results/$ct_label.cpu.stat"
    container_cleanup
    return $ct_rc
}

# Keeps what the cgroup's CPU controller counted over the run in FILE: cpu.stat as the
# kernel writes it (nr_periods, nr_throttled and throttled_usec in v2, throttled_time in
# ns in v1), the quota's own account of how often and how long it held the container back.
ct_cpu_stat() {
    [ -n "${ct_cpudir:-}" ] && [ -r "$ct_cpudir/cpu.stat" ] || return 0
    cp "$ct_cpudir/cpu.stat" "$1" || echo "container: cannot write $1" >&2
}
