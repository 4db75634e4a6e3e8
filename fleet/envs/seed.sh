# fleet/envs/seed.sh: fleet/local-envs --table seed (sourced after vm.sh): the columns of the
# 2007 comparison (the nas columns' NFS server in seed-nfs.sh, the NBD and iSCSI servers in
# seed-nbd.sh and seed-iscsi.sh, dom0's idle guest in seed-dom0.sh), each a QEMU guest
# whose disk and NIC are what its label says, and the host itself, all in a network
# namespace of the run's own (bmseed-PID) where a bridge (bmbr0, 10.213.255.1/24, which no
# other namespace sees) holds the host side's address and the guests' tap (bmtap0): the
# network rows measure the guest's NIC to a --serve on the bridge, not QEMU's user mode.
# Needs root (the namespace, tmpfs, loop devices and mounts). Everything it makes is named
# in seed_* variables and removed by seed_cleanup on every path.

# The columns this step makes, in the seed's order (emulated devices first, the host last).
seed_all="hvm/nas/net hvmp/nas/net para/nas/net para/lvm/san hvm/file/ram para/file/ram para/lvm/iscsi para/xfs/iscsi para/lvm/disc para/xfs/disc dom0 bare"
seed_ns="" seed_serve="" seed_tmpfs="" seed_xfs="" seed_loops="" seed_files=""
seed_host=10.213.255.1 seed_guest=10.213.255.2/24
# What an xfs for a guest's image takes beyond the image: mkfs.xfs wants 300 MiB at least.
seed_xfs_room=314572800

# Installs, as root, what the table needs beyond a guest's packages: QEMU's NFS and iSCSI
# block drivers (qemu-block-extra, from qemu-system-x86's release), the user-space NFS server
# with its VFS backend and rpcbind (NFSv3), the user-space iSCSI target, and xfsprogs.
seed_install_packages() {
    vm_install_packages qemu-block-extra qemu-utils nfs-ganesha nfs-ganesha-vfs rpcbind tgt xfsprogs
}

# Returns 0 when the table can be made here; else says why and returns 1.
seed_check() {
    [ "$(id -u)" = 0 ] || { echo "seed: needs root (a network namespace, tmpfs, loop devices)" >&2; return 1; }
    for seed_t in ip losetup mkfs.xfs fallocate mount findmnt ss unshare; do
        command -v "$seed_t" >/dev/null 2>&1 || {
            echo "seed: no $seed_t (install iproute2, util-linux, xfsprogs)" >&2
            return 1
        }
    done
    vm_check
}

# The namespace with its bridge and tap, and the --serve on the bridge's address (PORT and
# PORT+1, token in the environment). SEED_ARGS: REPO BIN PORT TOKEN.
seed_net() {
    seed_ns=bmseed-$$
    ip netns add "$seed_ns" &&
        ip -n "$seed_ns" link set lo up &&
        ip -n "$seed_ns" link add bmbr0 type bridge &&
        ip -n "$seed_ns" addr add "$seed_host/24" dev bmbr0 &&
        ip -n "$seed_ns" link set bmbr0 up &&
        ip netns exec "$seed_ns" ip tuntap add dev bmtap0 mode tap &&
        ip -n "$seed_ns" link set bmtap0 master bmbr0 &&
        ip -n "$seed_ns" link set bmtap0 up || {
        echo "seed: cannot make the namespace $seed_ns with its bridge and tap" >&2
        return 1
    }
    BENCHMATRIX_TOKEN=$4 BENCHMATRIX_BIN=$2 ip netns exec "$seed_ns" "$1/benchmatrix" --serve \
        --bind "$seed_host" --port "$3" --serve-time 2h 2>/dev/null &
    seed_serve=$!
    seed_i=0
    until ip netns exec "$seed_ns" ss -Hltn "src $seed_host:$(($3 + 1))" | grep -q .; do
        seed_i=$((seed_i + 1))
        if [ $seed_i -gt 100 ] || ! kill -0 "$seed_serve" 2>/dev/null; then
            echo "seed: the --serve on $seed_host:$3 did not start" >&2
            return 1
        fi
        sleep 0.1
    done
}

# seed_backing COLUMN DIR SIZE: makes the column's disk and sets vm_disk0 to it and
# seed_backing to words naming it: a file on a tmpfs (ram), a file on xfs on a loop device
# over a preallocated file in DIR (xfs/disc), a loop device over a preallocated file in DIR
# (lvm/disc: this kernel may have no device-mapper, so no LV; the loop device stands for it),
# a file on an NFS export (nas/net: seed-nfs.sh), an NBD export (lvm/san, seed-nbd.sh) or
# an iSCSI LUN (lvm/iscsi, xfs/iscsi, seed-iscsi.sh) on the namespace's loopback. A column it
# cannot make has seed_why saying why in one line.
seed_backing() {
    seed_why=""
    seed_size=$(ct_bytes "$3")
    seed_fs=$(findmnt -rn -o FSTYPE -T "$2" | head -n 1)
    case $1 in
        */nas/net) seed_nfs_backing "$seed_ns" "$2" "$seed_size" || return 1 ;;
        */file/ram)
            if [ -z "$seed_tmpfs" ]; then
                seed_tmpfs=$(mktemp -d "${TMPDIR:-/tmp}/bmseed-ram.XXXXXX") &&
                    mount -t tmpfs -o "size=$((seed_size + 16777216)),mode=700" bmseed "$seed_tmpfs" || {
                    echo "seed: cannot mount a tmpfs at $seed_tmpfs" >&2
                    return 1
                }
            fi
            vm_disk0=$seed_tmpfs/disk.img
            rm -f "$vm_disk0" && truncate -s "$seed_size" "$vm_disk0" || return 1
            seed_backing="image file on tmpfs"
            ;;
        */xfs/disc)
            seed_f=$2/bmseed-$$-xfs.img
            seed_files="$seed_files $seed_f"
            fallocate -l "$((seed_size + seed_xfs_room))" "$seed_f" || return 1
            seed_l=$(losetup -f --show "$seed_f") || return 1
            seed_loops="$seed_loops $seed_l"
            mkfs.xfs -q -f "$seed_l" || return 1
            seed_xfs=$(mktemp -d "${TMPDIR:-/tmp}/bmseed-xfs.XXXXXX") &&
                mount -t xfs "$seed_l" "$seed_xfs" || return 1
            vm_disk0=$seed_xfs/disk.img
            truncate -s "$seed_size" "$vm_disk0" || return 1
            seed_backing="image file on xfs on $seed_l over a preallocated file on $seed_fs"
            ;;
        */lvm/disc)
            seed_f=$2/bmseed-$$-lvm.img
            seed_files="$seed_files $seed_f"
            fallocate -l "$seed_size" "$seed_f" || return 1
            seed_l=$(losetup -f --show "$seed_f") || return 1
            seed_loops="$seed_loops $seed_l"
            vm_disk0=$seed_l
            seed_backing="loop device $seed_l (host_device) over a preallocated file on $seed_fs"
            ;;
        */lvm/san) seed_nbd_start "$1" "$2" "$seed_size" "$seed_fs" || return 1 ;;
        */lvm/iscsi) seed_iscsi_start "$1" "$2" "$seed_size" "$seed_fs" || return 1 ;;
        */xfs/iscsi) seed_iscsi_xfs "$1" "$2" "$seed_size" "$seed_fs" || return 1 ;;
    esac
}

# Removes one guest column's backing: its xfs mount, loop devices and files (the tmpfs stays
# for the next ram column until seed_cleanup), the NBD and iSCSI servers first.
seed_unback() {
    seed_nbd_stop
    seed_iscsi_stop
    if [ -n "$seed_xfs" ]; then
        umount "$seed_xfs" 2>/dev/null || umount -l "$seed_xfs" 2>/dev/null || true
        rmdir "$seed_xfs" 2>/dev/null || true
        seed_xfs=""
    fi
    for seed_l in $seed_loops; do losetup -d "$seed_l" 2>/dev/null || true; done
    for seed_f in $seed_files; do rm -f "$seed_f"; done
    seed_nfs_unback
    seed_loops="" seed_files="" vm_disk0="" vm_drive0=""
}

# Removes everything the table made: the guest, the --serve, the backings, the tmpfs and the
# namespace (with its bridge and tap).
seed_cleanup() {
    vm_cleanup
    seed_dom0_stop
    if [ -n "$seed_serve" ]; then
        kill "$seed_serve" 2>/dev/null || true
        wait "$seed_serve" 2>/dev/null || true
        seed_serve=""
    fi
    seed_unback
    seed_nfs_cleanup
    if [ -n "$seed_tmpfs" ]; then
        umount "$seed_tmpfs" 2>/dev/null || umount -l "$seed_tmpfs" 2>/dev/null || true
        rmdir "$seed_tmpfs" 2>/dev/null || true
        seed_tmpfs=""
    fi
    [ -z "$seed_ns" ] || ip netns del "$seed_ns" 2>/dev/null || true
    seed_ns=""
}

# seed_column COLUMN CACHE REPO BIN RESULTS DIR PORT TOKEN -- SUITE_ARGS...: one column's
# run: the host itself in the namespace (bare), else a guest on the column's backing, bus
# and NIC with its tap on the bridge. Returns the suite's exit status.
seed_column() {
    seed_c=$1 seed_cache=$2 seed_repo=$3 seed_bin=$4 seed_res=$5 seed_dir=$6 seed_port=$7 seed_tok=$8
    shift 8
    [ "${1:-}" = "--" ] && shift
    seed_clock=""
    # The NFS server serves the nas columns (the first ones); every other column runs
    # without it beside.
    case $seed_c in */nas/net) ;; *) seed_nfs_cleanup ;; esac
    if [ "$seed_c" = bare ] || [ "$seed_c" = dom0 ]; then
        seed_label=$seed_c/$(findmnt -rn -o FSTYPE -T "$seed_dir" | head -n 1)/disc
        seed_f="seed_column=$seed_c;backing=$seed_dir on this machine;beside=no guest"
        if [ "$seed_c" = dom0 ]; then
            seed_dom0_start "$seed_cache" "$seed_res" "$seed_repo" "$seed_bin" || return 2
            seed_f="${seed_f%;beside=*};beside=an idle QEMU guest ($(vm_accel "$seed_cache"), ${VM_CPUS:-2} CPUs, ${VM_MEMORY:-1G}) on bmtap0"
        fi
        BENCHMATRIX_FACTS=$seed_f \
            BENCHMATRIX_TOKEN=$seed_tok BENCHMATRIX_BIN=$seed_bin ip netns exec "$seed_ns" \
            "$seed_repo/benchmatrix" --label "$seed_label" --results "$seed_res" --dir "$seed_dir" \
            --peer "$seed_host" --port "$seed_port" --no-matrix "$@" &
        env_pid=$!
        seed_rc=0
        wait "$env_pid" || seed_rc=$?
        env_pid=""
        seed_dom0_stop
        return "$seed_rc"
    fi
    seed_why=""
    seed_backing "$seed_c" "$seed_dir" "${VM_DISK_SIZE:-1G}" || {
        echo "seed: $seed_c: left out: ${seed_why:-cannot make its disk}" >&2
        seed_unback
        return 2
    }
    # hvm: emulated devices; hvmp: an emulated machine with paravirtual drivers; both on an
    # emulated clock (hpet, which under TCG is the kernel's own choice too); para: virtio
    # with the kernel's own clock (kvm-clock under KVM).
    case $seed_c in
        hvm/*) vm_bus=ide vm_nic=e1000 seed_bus="ide (PIIX, ata_piix)" seed_nicw="e1000 (e1000)" ;;
        *) vm_bus=virtio vm_nic=virtio seed_bus="virtio-blk (virtio_blk)" seed_nicw="virtio-net-pci (virtio_net)" ;;
    esac
    case $seed_c in hvm/* | hvmp/*) vm_clocksource=hpet ;; esac
    vm_netns=$seed_ns vm_tap=bmtap0 vm_addr=$seed_guest vm_peer=$seed_host
    vm_facts="seed_column=$seed_c;disk_bus=$seed_bus;nic=$seed_nicw;backing=$seed_backing;guest_root=host's root over virtio-9p"
    vm_clock=$seed_res/$(printf '%s' "$seed_c" | tr '/' '_').clock seed_clock=$vm_clock
    seed_rc=0
    vm_run "$seed_cache" "$seed_repo" "$seed_bin" "$seed_c" "$seed_res" "$seed_port" "$seed_tok" -- \
        "$@" || seed_rc=$?
    vm_bus="" vm_nic="" vm_netns="" vm_tap="" vm_addr="" vm_facts="" vm_clock="" vm_peer=""
    vm_clocksource=""
    seed_unback
    return "$seed_rc"
}
