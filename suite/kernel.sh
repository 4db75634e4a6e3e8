# The kernel workload of ./benchmatrix (sourced by it: --workload kernel, or kernel in --only):
# unpack a real Linux kernel tarball and build it, in RAM, with warm caches, as the classic
# comparison did ("time tar xjf linux-2.6.19.tar.bz2", "time make -j8 bzImage modules" in the
# domU's RAM). Each step runs --runs times under timecmd after one unrecorded warm-up run.

# The tarball: --kernel-tarball, else the newest linux-source-* package's.
kernel_tarball_default() {
    for t in /usr/src/linux-source-*.tar.xz /usr/src/linux-source-*.tar.bz2 /usr/src/linux-source-*.tar.gz; do
        [ -f "$t" ] && printf '%s\n' "$t"
    done | sort -V | tail -n 1
}

# tar's decompression letter for the tarball $1 (J xz, j bzip2, z gzip); empty for another.
kernel_tar_flag() {
    case $1 in
        *.tar.xz | *.txz) echo J ;;
        *.tar.bz2 | *.tbz2) echo j ;;
        *.tar.gz | *.tgz) echo z ;;
        *) echo "" ;;
    esac
}

# Sets kernel_why to why the kernel steps cannot run here (empty when they can): the
# tarball, its decompressor, the build's programs and headers, and a place for the tree; and
# kernel_tarball, kernel_flag and kernel_tree (the tree's directory: --tree-dir, or empty
# for a tmpfs the script mounts).
kernel_check() {
    kernel_why=""
    kernel_tarball=${kernel_tarball:-$(kernel_tarball_default)}
    if [ -z "$kernel_tarball" ]; then
        kernel_why="no kernel tarball: install Debian's linux-source-6.1 (apt-get install linux-source-6.1 puts /usr/src/linux-source-6.1.tar.xz) or give --kernel-tarball FILE (a kernel.org tarball: .tar.xz, .tar.gz or .tar.bz2)"
        return 0
    fi
    # The script has refused a --kernel-tarball that is not a tarball, and a --tree-dir that
    # is not a directory, before any step.
    if [ ! -r "$kernel_tarball" ]; then
        kernel_why="$kernel_tarball: not readable by this user"
        return 0
    fi
    kernel_flag=$(kernel_tar_flag "$kernel_tarball")
    case $kernel_flag in J) need=xz ;; j) need=bzip2 ;; *) need=gzip ;; esac
    missing=""
    for p in make flex bison bc perl "$need"; do
        command -v "$p" >/dev/null 2>&1 || missing="$missing $p"
    done
    if [ -z "$cc" ]; then
        missing="$missing cc"
    elif ! printf '#include <libelf.h>\n' | "$cc" -E -x c - >/dev/null 2>&1; then
        missing="$missing libelf.h"
    fi
    if [ -n "$missing" ]; then
        kernel_why="the kernel build needs$missing: install Debian's build-essential flex bison bc libelf-dev xz-utils"
    elif [ -n "$tree_dir" ]; then
        kernel_tree=$tree_dir
    elif [ "$(id -u)" = 0 ]; then
        kernel_tree=""
    else
        kernel_why="the tree goes to a tmpfs the script mounts, which needs root: run as root, or give --tree-dir DIR (its file system is recorded in the tag fs)"
    fi
}

# Bytes of memory this script may still take: /proc/meminfo's MemAvailable, or less where
# the memory cgroup it runs in, or one above it, has a limit nearer its use (v2 memory.max
# less memory.current, v1 memory.limit_in_bytes less memory.usage_in_bytes): a tmpfs's pages
# are charged to the cgroup of the process that writes them.
kernel_available() {
    awk '
        FILENAME == "/proc/meminfo" { if ($1 == "MemAvailable:") avail = $2 * 1024; next }
        FILENAME == "/proc/self/mounts" {
            if ($3 == "cgroup2") v2 = $2
            else if ($3 == "cgroup" && ("," $4 ",") ~ /,memory,/) v1 = $2
            next
        }
        { n = split($0, f, ":"); path = f[3]; for (i = 4; i <= n; i++) path = path ":" f[i]
          if (f[1] == "0" && f[2] == "") p2 = path
          else if (("," f[2] ",") ~ /,memory,/) p1 = path }
        function readnum(file,    line) {
            line = ""; if ((getline line < file) <= 0) line = ""; close(file); return line
        }
        function walk(root, path, limf, usef,    d, lim, use, left) {
            if (root == "" || path == "") return
            d = path
            while (1) {
                lim = readnum(root d "/" limf); use = readnum(root d "/" usef)
                if (lim ~ /^[0-9]+$/ && use ~ /^[0-9]+$/) {
                    left = lim - use; if (left < 0) left = 0
                    if (left < avail) avail = left
                }
                if (d == "/" || d == "") break
                sub(/\/[^\/]*$/, "", d); if (d == "") d = "/"
            }
        }
        END {
            walk(v2, p2, "memory.max", "memory.current")
            walk(v1, p1, "memory.limit_in_bytes", "memory.usage_in_bytes")
            printf "%.0f\n", avail
        }' /proc/meminfo /proc/self/mounts /proc/self/cgroup
}

# Whether directory $1 is a mount point (assumed so where mountpoint(1) is missing: the
# unmount is then tried).
kernel_mounted() {
    command -v mountpoint >/dev/null 2>&1 || return 0
    mountpoint -q -- "$1" 2>/dev/null
}

# The tarball's own listing, read before the unpack (tar tv through its decompressor, into
# awk through a FIFO, each a child the cleanup ends by its pid; awk opens the FIFO by its
# name, which starts with /, as a child in the background reads /dev/null for its stdin): sets kernel_tree_bytes to the
# memory its tree takes in a tmpfs, its regular files' sizes rounded up to whole pages and a
# page for each symbolic link. The listing stops once that passes $1 bytes (0: no bound),
# which sets kernel_over. Returns 1 with kernel_error set when tar cannot read it to its end.
kernel_listing() {
    kernel_over="" kernel_error="" kernel_tree_bytes=""
    fifo=$scratch/kernel.list
    rm -f "$fifo"
    mkfifo "$fifo" || { kernel_error="cannot make a FIFO in $scratch"; return 1; }
    tar "-t${kernel_flag}v" --numeric-owner -f "$kernel_tarball" >"$fifo" 2>"$scratch/kernel.err" &
    lpid=$!
    pids="$pids $lpid"
    # MODE OWNER SIZE DATE TIME NAME: a regular file (-) takes its size in pages, a symbolic
    # link (l) a page at most; directories and hard links take none.
    tool awk -v limit="$1" '
        { t = substr($1, 1, 1) }
        t == "-" { pages += int(($3 + 4095) / 4096) }
        t == "l" { pages += 1 }
        limit > 0 && pages * 4096 > limit { over = 1; exit }
        END { printf "%s %.0f\n", over ? "over" : "ok", pages * 4096 }' "$fifo" >"$scratch/kernel.size" || true
    read -r kernel_state kernel_tree_bytes <"$scratch/kernel.size" || kernel_state=""
    [ "$kernel_state" != over ] || kill "$lpid" 2>/dev/null || true
    lrc=0
    wait "$lpid" || lrc=$?
    pids=""
    rm -f "$fifo"
    if [ "$kernel_state" = over ]; then
        kernel_over=1
        return 0
    fi
    if [ "$lrc" != 0 ] || [ "$kernel_state" != ok ]; then
        kernel_error="tar cannot read it to its end (truncated or corrupt?): $(head -n 1 "$scratch/kernel.err")"
        return 1
    fi
}

# MiB of $1 bytes, rounded up.
kernel_mib() { awk -v b="$1" 'BEGIN { printf "%.0f\n", (b + 1048575 - (b + 1048575) % 1048576) / 1048576 }'; }

# Reads the listing and, for a tmpfs (as root, without --tree-dir), checks that the tree and
# its build fit in the memory this script may take: the tree, room for the build's objects
# in the tmpfs (about 1 GB for tinyconfig, 6 GB for a full config) and 512 MiB for the
# compilers. Fails the step, saying both figures, when they do not.
kernel_fits() {
    kernel_room=1000000000
    [ "$kernel_config" = tinyconfig ] || kernel_room=6000000000
    reserve=536870912
    limit=0
    if [ -z "$kernel_tree" ]; then
        avail=$(kernel_available)
        limit=$((avail - kernel_room - reserve))
        [ "$limit" -gt 0 ] || limit=1
    fi
    if ! kernel_listing "$limit"; then
        step_failed "kernel: cannot unpack $kernel_tarball: $kernel_error"
        return 1
    fi
    [ -z "$kernel_tree" ] || return 0
    if [ -n "$kernel_over" ]; then
        need="more than $(kernel_mib "$((limit + kernel_room + reserve))")"
    else
        need=$(kernel_mib "$((kernel_tree_bytes + kernel_room + reserve))")
        [ "$((kernel_tree_bytes + kernel_room + reserve))" -gt "$avail" ] || return 0
    fi
    step_failed "kernel: $kernel_tarball needs $need MiB of memory (its tree by its listing, $(kernel_mib "$kernel_room") MiB of tmpfs for the build's objects and $(kernel_mib "$reserve") MiB for the compilers) and this machine has $(kernel_mib "$avail") MiB available (MemAvailable, or its memory cgroup's limit less its use): give --tree-dir DIR on a disk, or free memory"
    return 1
}

# Mounts a tmpfs for the tree (as root, without --tree-dir), the size of the tree by its
# listing and no more, so that a tree that outgrows its listing stops the unpack (ENOSPC);
# kernel_grow makes room for the build once the tree is in.
kernel_mount() {
    kernel_mnt=$(mktemp -d "$tmpdir/benchmatrix-kernel.XXXXXX") || { kernel_mnt=""; return 1; }
    kernel_size=$((kernel_tree_bytes / 1024 + 1024))
    mount -t tmpfs -o "size=${kernel_size}k,mode=0700" benchmatrix-kernel "$kernel_mnt" || {
        rmdir "$kernel_mnt" 2>/dev/null || true
        kernel_mnt=""
        return 1
    }
    kernel_tree=$kernel_mnt
}

# Room for the build's objects in the tmpfs, once the tree is unpacked.
kernel_grow() {
    [ -n "${kernel_mnt:-}" ] || return 0
    mount -o "remount,size=$((kernel_size + kernel_room / 1024))k" "$kernel_mnt"
}

# Unmounts the tmpfs (its tree goes with it), or removes the tree from --tree-dir; called on
# every path, Ctrl-C included. A mount still busy (a build's last process ending) is retried.
kernel_cleanup() {
    if [ -n "${kernel_mnt:-}" ]; then
        i=0
        while kernel_mounted "$kernel_mnt" && ! umount "$kernel_mnt" 2>/dev/null; do
            i=$((i + 1))
            if [ $i -ge 20 ]; then
                umount -l "$kernel_mnt" 2>/dev/null || true
                break
            fi
            sleep 0.25
        done
        rmdir "$kernel_mnt" 2>/dev/null || true
        kernel_mnt=""
        kernel_tree=""
    elif [ -n "${kernel_work:-}" ]; then
        rm -rf "$kernel_work"
    fi
    kernel_work=""
    return 0
}

# The kernel version of the unpacked tree $1 (its Makefile's VERSION.PATCHLEVEL.SUBLEVEL).
kernel_version() {
    [ -f "$1/Makefile" ] || return 0
    awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
        $1 == "SUBLEVEL" { s = $2 } END { if (v != "") print v "." p "." s }' <"$1/Makefile"
}

# The tree the unpack left in $1: its one top directory (linux-6.1/, whatever its name),
# else $1 itself (a tarball of the tree's files without a top directory).
kernel_src() {
    n=0 one=""
    for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
        [ -e "$e" ] || [ -L "$e" ] || continue
        n=$((n + 1))
        one=$e
    done
    if [ "$n" = 1 ] && [ -d "$one" ] && [ ! -L "$one" ]; then
        printf '%s/\n' "$one"
    else
        printf '%s/\n' "$1"
    fi
}

# Why the unpack failed: the tmpfs full (under 1 MiB free) at the listing's size, else tar's
# error.
kernel_unpack_error() {
    if [ -n "${kernel_mnt:-}" ] && [ "$(stat -f -c %a -- "$kernel_mnt" 2>/dev/null || echo 256)" -lt 256 ]; then
        echo "its tree outgrew the $(kernel_mib "$kernel_tree_bytes") MiB its own listing gives (the tmpfs is that size until the tree is in)"
    else
        echo "tar failed (its message above)"
    fi
}

# The two steps: unpack, then build; each --runs times after a warm-up. A tarball tar cannot
# list or unpack to its end, or whose tree holds no kernel Makefile, fails the step with
# one error naming it, and the build does not run.
kernel_steps() {
    tarball=$(basename -- "$kernel_tarball")
    fs=tmpfs
    [ -z "$kernel_tree" ] || fs=$(stat -f -c %T -- "$kernel_tree" 2>/dev/null || echo unknown)
    step "time tar x${kernel_flag}f linux" "$tarball into $fs${kernel_tree:+ at $kernel_tree}, a warm-up and $runs runs" "$kernel_tar_est"
    if ! kernel_fits; then
        step_end
        return 0
    fi
    if [ -z "$kernel_tree" ]; then
        kernel_mount || { step_failed "kernel: cannot mount a tmpfs for the tree"; step_end; return 0; }
    fi
    kernel_work=$(mktemp -d "$kernel_tree/benchmatrix-kernel.XXXXXX") || {
        kernel_work=""
        step_failed "kernel: cannot write in $kernel_tree"
        step_end
        kernel_cleanup
        return 0
    }
    # The path reaches --prepare's shell in the environment, never in its text.
    export BENCHMATRIX_TREE="$kernel_work/x"
    if ! tool "$timecmd" $q -r "$runs" --warmup 1 -o "$out" --label "$label" --name "time tar x${kernel_flag}f linux" \
        --tag "tarball=$tarball" --tag "fs=$fs" \
        --prepare 'rm -rf -- "$BENCHMATRIX_TREE" && mkdir -- "$BENCHMATRIX_TREE"' \
        -- tar "x${kernel_flag}f" "$kernel_tarball" -C "$kernel_work/x"; then
        step_failed "kernel: cannot unpack $kernel_tarball: $(kernel_unpack_error)"
        step_end
        kernel_cleanup
        return 0
    fi
    step_end
    src=$(kernel_src "$kernel_work/x")
    src=${src%?}
    version=$(kernel_version "$src")
    if [ -z "$version" ]; then
        step_failed "kernel: $kernel_tarball holds no kernel tree: no Makefile with VERSION at the top of what it unpacks to"
        kernel_cleanup
        return 0
    fi
    kernel_grow || { step_failed "kernel: cannot make room for the build in the tmpfs"; kernel_cleanup; return 0; }
    step "time make linux ($kernel_config)" "Linux $version, make $kernel_config, -j$jobs, a warm-up and $runs runs" "$kernel_make_est"
    # The compilers' temporary files go beside the tree (TMPDIR, in the environment of the
    # build only): in RAM with it, and gone with it even where a killed compiler left one.
    ktmp="$kernel_work/tmp"
    mkdir -- "$ktmp" || { step_failed "kernel: cannot write in $kernel_work"; step_end; kernel_cleanup; return 0; }
    if tool env "TMPDIR=$ktmp" make -s -C "$src" "$kernel_config" >"$kernel_work/config.log" 2>&1; then
        export BENCHMATRIX_TREE="$src"
        tool env "TMPDIR=$ktmp" "$timecmd" $q -r "$runs" --warmup 1 -o "$out" --label "$label" --name "time make linux ($kernel_config)" \
            --tag "kernel=$version" --tag "config=$kernel_config" --tag "jobs=$jobs" --tag "fs=$fs" \
            --stdout null --prepare 'make -s -C "$BENCHMATRIX_TREE" clean' \
            -- make -s -C "$src" -j"$jobs" || step_failed "kernel build"
    else
        tail -n 5 "$kernel_work/config.log" >&2
        step_failed "kernel: make $kernel_config"
    fi
    step_end
    kernel_cleanup
}
