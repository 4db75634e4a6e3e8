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

# Mounts the tmpfs for the tree (as root, without --tree-dir): the unpacked tree's size, and
# room for the build (tinyconfig's objects are small; a full config's several GB).
kernel_mount() {
    unpacked=$(xz -l --robot "$kernel_tarball" 2>/dev/null | awk '$1 == "totals" { print $5 }')
    [ -n "$unpacked" ] || unpacked=1600000000
    room=1000000000
    [ "$kernel_config" = tinyconfig ] || room=6000000000
    size=$(( (unpacked + room) / 1048576 ))m
    kernel_mnt=$(mktemp -d "${TMPDIR:-/tmp}/benchmatrix-kernel.XXXXXX") || return 1
    mount -t tmpfs -o "size=$size,mode=0700" benchmatrix-kernel "$kernel_mnt" || {
        rmdir "$kernel_mnt"
        kernel_mnt=""
        return 1
    }
    kernel_tree=$kernel_mnt
}

# Unmounts the tmpfs (its tree goes with it), or removes the tree from --tree-dir; called on
# every path, Ctrl-C included. A mount still busy (a build's last process ending) is retried.
kernel_cleanup() {
    if [ -n "${kernel_mnt:-}" ]; then
        i=0
        until umount "$kernel_mnt" 2>/dev/null; do
            i=$((i + 1))
            [ $i -lt 20 ] || { umount -l "$kernel_mnt" 2>/dev/null; break; }
            sleep 0.25
        done
        rmdir "$kernel_mnt" 2>/dev/null
        kernel_mnt=""
    elif [ -n "${kernel_work:-}" ]; then
        rm -rf "$kernel_work"
    fi
    kernel_work=""
    return 0
}

# The kernel version of the unpacked tree $1 (its Makefile's VERSION.PATCHLEVEL.SUBLEVEL).
kernel_version() {
    awk -F' *= *' '$1 == "VERSION" { v = $2 } $1 == "PATCHLEVEL" { p = $2 }
        $1 == "SUBLEVEL" { s = $2 } END { if (v != "") print v "." p "." s }' "$1/Makefile"
}

# The two steps: unpack, then build; each --runs times after a warm-up.
kernel_steps() {
    if [ -z "$kernel_tree" ]; then
        kernel_mount || { step_failed "kernel: cannot mount a tmpfs for the tree"; return 0; }
    fi
    kernel_work=$(mktemp -d "$kernel_tree/benchmatrix-kernel.XXXXXX") || { step_failed "kernel: cannot write in $kernel_tree"; return 0; }
    fs=$(stat -f -c %T "$kernel_work" 2>/dev/null || echo unknown)
    tarball=$(basename "$kernel_tarball")
    step "time tar x${kernel_flag}f linux" "$tarball into $fs at $kernel_work, a warm-up and $runs runs" "$kernel_tar_est"
    "$timecmd" $q -r "$runs" --warmup 1 -o "$out" --label "$label" --name "time tar x${kernel_flag}f linux" \
        --tag "tarball=$tarball" --tag "fs=$fs" \
        --prepare "rm -rf '$kernel_work/x' && mkdir '$kernel_work/x'" \
        -- tar "x${kernel_flag}f" "$kernel_tarball" -C "$kernel_work/x" || step_failed "kernel unpack"
    step_end
    src=$(find "$kernel_work/x" -mindepth 1 -maxdepth 1 -type d | head -n 1)
    if [ -z "$src" ] || [ ! -f "$src/Makefile" ]; then
        step_failed "kernel: $tarball holds no kernel tree"
        return 0
    fi
    version=$(kernel_version "$src")
    step "time make linux ($kernel_config)" "Linux $version, make $kernel_config, -j$jobs, a warm-up and $runs runs" "$kernel_make_est"
    if make -s -C "$src" "$kernel_config" >"$kernel_work/config.log" 2>&1; then
        "$timecmd" $q -r "$runs" --warmup 1 -o "$out" --label "$label" --name "time make linux ($kernel_config)" \
            --tag "kernel=$version" --tag "config=$kernel_config" --tag "jobs=$jobs" --tag "fs=$fs" \
            --stdout null --prepare "make -s -C '$src' clean" \
            -- make -s -C "$src" -j"$jobs" || step_failed "kernel build"
    else
        tail -n 5 "$kernel_work/config.log" >&2
        step_failed "kernel: make $kernel_config"
    fi
    step_end
    kernel_cleanup
}
