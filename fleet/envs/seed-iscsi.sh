# fleet/envs/seed-iscsi.sh: the iSCSI target of --table seed's para/lvm/iscsi and
# para/xfs/iscsi columns (sourced by fleet/local-envs after seed.sh and seed-nbd.sh): tgtd,
# Debian's user-space target, in the foreground on 127.0.0.1:3260 of the run's namespace,
# its control socket in a temporary directory of the run's own (TGT_IPC_SOCKET, so neither
# this machine's tgt nor a second run shares it), one target with LUN 1 over a file
# preallocated in --dir. This machine has no iSCSI initiator module: QEMU's own initiator
# (the iscsi driver of qemu-block-extra) is the client. Everything it makes is in
# seed_iscsi_* variables and removed by seed_iscsi_stop.

seed_iscsi_dir="" seed_iscsi_pid="" seed_iscsi_file="" seed_iscsi_qsd="" seed_iscsi_loop=""
seed_iscsi_xfs="" seed_iscsi_iqn=""
# The portal's port on the namespace's own loopback, and tgtd's control port (which names
# its control socket, TGT_IPC_SOCKET.N).
seed_iscsi_port=3260 seed_iscsi_ctl=$(($$ % 60000 + 1))

# seed_iscsi_adm ARGS...: tgtadm on this run's tgtd.
seed_iscsi_adm() {
    TGT_IPC_SOCKET=$seed_iscsi_dir/tgtd.sock tgtadm -C "$seed_iscsi_ctl" --lld iscsi "$@"
}

# seed_iscsi_target DIR BYTES FS: tgtd with a target (seed_iscsi_iqn) whose LUN 1 is a file
# of BYTES preallocated in DIR (seed_iscsi_file) on file system FS, open O_DIRECT where FS
# allows it, all named in seed_iscsi_words; else sets seed_why and returns 1. An ext4 for
# the guest is made on the file first where seed_iscsi_ext4 is set.
seed_iscsi_target() {
    for seed_t in tgtd tgtadm; do
        command -v "$seed_t" >/dev/null 2>&1 || {
            seed_why="no $seed_t (install tgt)"
            return 1
        }
    done
    seed_iscsi_dir=$(mktemp -d "${TMPDIR:-/tmp}/bmseed-iscsi.XXXXXX") || {
        seed_why="cannot make a temporary directory for tgtd's socket"
        return 1
    }
    seed_iscsi_file=$1/bmseed-$$-lun.img
    fallocate -l "$2" "$seed_iscsi_file" 2>"$seed_iscsi_dir/log" || {
        seed_why="cannot preallocate the LUN's file $seed_iscsi_file: $(seed_says "$seed_iscsi_dir/log")"
        return 1
    }
    if [ -n "${seed_iscsi_ext4:-}" ]; then
        vm_mkext4 "$seed_iscsi_file" 2>"$seed_iscsi_dir/log" || {
            seed_why="cannot make ext4 on the LUN's file: $(seed_says "$seed_iscsi_dir/log")"
            return 1
        }
    fi
    seed_iscsi_direct="O_DIRECT" seed_iscsi_bso="--bsoflags direct"
    vm_direct_ok "$seed_iscsi_file" || seed_iscsi_direct="through the page cache" seed_iscsi_bso=""
    TGT_IPC_SOCKET=$seed_iscsi_dir/tgtd.sock ip netns exec "$seed_ns" tgtd -f -C "$seed_iscsi_ctl" \
        --iscsi "portal=127.0.0.1:$seed_iscsi_port" </dev/null >"$seed_iscsi_dir/tgtd.log" 2>&1 &
    seed_iscsi_pid=$!
    seed_listens "$seed_iscsi_pid" "$seed_iscsi_port" || {
        seed_why="tgtd did not listen on 127.0.0.1:$seed_iscsi_port in $seed_ns: $(seed_says "$seed_iscsi_dir/tgtd.log")"
        return 1
    }
    # The IQN's naming authority is the reserved domain invalid (benchmatrix owns none).
    seed_iscsi_iqn=iqn.2026-12.invalid.benchmatrix:seed-$$
    # shellcheck disable=SC2086 # $seed_iscsi_bso is an option and its value, or nothing.
    seed_iscsi_adm --mode target --op new --tid 1 --targetname "$seed_iscsi_iqn" >"$seed_iscsi_dir/log" 2>&1 &&
        seed_iscsi_adm --mode logicalunit --op new --tid 1 --lun 1 --backing-store "$seed_iscsi_file" \
            $seed_iscsi_bso >"$seed_iscsi_dir/log" 2>&1 &&
        seed_iscsi_adm --mode target --op bind --tid 1 --initiator-address 127.0.0.1 >"$seed_iscsi_dir/log" 2>&1 || {
        seed_why="tgtadm could not make the target and its LUN: $(seed_says "$seed_iscsi_dir/log")"
        return 1
    }
    seed_iscsi_words="LUN 1 of target $seed_iscsi_iqn from tgtd $(tgtadm --version) on 127.0.0.1:$seed_iscsi_port"
    seed_iscsi_words="$seed_iscsi_words in the run's namespace (backing store a preallocated file on $3"
    seed_iscsi_words="$seed_iscsi_words opened $seed_iscsi_direct)"
}

# seed_iscsi_start COLUMN DIR BYTES FS: para/lvm/iscsi: the LUN (standing for the seed's LV
# on the SAN) as the guest's disk through QEMU's own initiator; sets vm_drive0 and
# seed_backing, else seed_why and returns 1.
seed_iscsi_start() {
    seed_iscsi_ext4=1
    seed_iscsi_target "$2" "$3" "$4" || return 1
    vm_drive0=iscsi://127.0.0.1:$seed_iscsi_port/$seed_iscsi_iqn/1
    seed_backing="iSCSI $seed_iscsi_words reached by QEMU's iSCSI initiator"
}

# seed_iscsi_xfs COLUMN DIR BYTES FS: para/xfs/iscsi: an image file of BYTES on xfs on the
# LUN. With no initiator module, the LUN becomes a block device here through QEMU's
# initiator in qemu-storage-daemon, which exports it as a file over FUSE (in the run's
# network namespace, this machine's mount namespace), and a loop device over that file;
# the xfs is made and mounted on the loop device. Sets vm_disk0 and seed_backing, else
# seed_why and returns 1.
seed_iscsi_xfs() {
    for seed_t in qemu-storage-daemon nsenter; do
        command -v "$seed_t" >/dev/null 2>&1 || {
            seed_why="no $seed_t (install qemu-utils and util-linux; or give this machine an iSCSI initiator: open-iscsi and the iscsi_tcp module)"
            return 1
        }
    done
    [ -c /dev/fuse ] || {
        seed_why="no /dev/fuse to make the LUN a block device here (load the fuse module; or give this machine an iSCSI initiator: open-iscsi and the iscsi_tcp module)"
        return 1
    }
    seed_iscsi_ext4=""
    seed_iscsi_target "$2" "$(($3 + seed_xfs_room))" "$4" || return 1
    : >"$seed_iscsi_dir/lun" || return 1
    vm_commas "$seed_iscsi_dir/lun"
    nsenter --net="/run/netns/$seed_ns" qemu-storage-daemon \
        --blockdev "driver=iscsi,node-name=lun,transport=tcp,portal=127.0.0.1:$seed_iscsi_port,target=$seed_iscsi_iqn,lun=1" \
        --export "type=fuse,id=lun,node-name=lun,mountpoint=$vm_out,writable=on,allow-other=off" \
        </dev/null >"$seed_iscsi_dir/qsd.log" 2>&1 &
    seed_iscsi_qsd=$!
    seed_i=0
    until findmnt -rn "$seed_iscsi_dir/lun" >/dev/null; do
        seed_i=$((seed_i + 1))
        [ $seed_i -le 100 ] && kill -0 "$seed_iscsi_qsd" 2>/dev/null || {
            seed_why="qemu-storage-daemon did not export the LUN over FUSE: $(seed_says "$seed_iscsi_dir/qsd.log")"
            return 1
        }
        sleep 0.1
    done
    # Buffered: with direct I/O, a loop device over this FUSE file read back other data than
    # was written (here, Linux 6.18, util-linux 2.38), so the LUN's blocks pass this machine's
    # page cache (the facts say so).
    seed_iscsi_loop=$(losetup -f --show --direct-io=off "$seed_iscsi_dir/lun" 2>"$seed_iscsi_dir/log") || {
        seed_why="no loop device over the LUN's FUSE file: $(seed_says "$seed_iscsi_dir/log")"
        return 1
    }
    seed_iscsi_xfs=$seed_iscsi_dir/xfs
    mkdir "$seed_iscsi_xfs" && mkfs.xfs -q -f "$seed_iscsi_loop" 2>"$seed_iscsi_dir/log" &&
        mount -t xfs "$seed_iscsi_loop" "$seed_iscsi_xfs" 2>"$seed_iscsi_dir/log" || {
        seed_why="cannot make and mount xfs on the LUN ($seed_iscsi_loop): $(seed_says "$seed_iscsi_dir/log")"
        return 1
    }
    vm_disk0=$seed_iscsi_xfs/disk.img
    truncate -s "$3" "$vm_disk0" || return 1
    seed_backing="image file on xfs on $seed_iscsi_loop (buffered) over a FUSE export by"
    seed_backing="$seed_backing qemu-storage-daemon (QEMU's iSCSI initiator) of iSCSI"
    seed_backing="$seed_backing $seed_iscsi_words"
}

# Stops what the iSCSI columns made, the users of the LUN first: the xfs mount, the loop
# device, qemu-storage-daemon, then the target (deleted, then tgtd asked to end: it ignores
# SIGTERM; killed by its pid after 5 s), and removes the LUN's file and the directory.
seed_iscsi_stop() {
    if [ -n "$seed_iscsi_xfs" ]; then
        umount "$seed_iscsi_xfs" 2>/dev/null || umount -l "$seed_iscsi_xfs" 2>/dev/null || true
        seed_iscsi_xfs=""
    fi
    [ -z "$seed_iscsi_loop" ] || losetup -d "$seed_iscsi_loop" 2>/dev/null || true
    seed_iscsi_loop=""
    if [ -n "$seed_iscsi_qsd" ]; then
        kill "$seed_iscsi_qsd" 2>/dev/null || true
        wait "$seed_iscsi_qsd" 2>/dev/null || true
        seed_iscsi_qsd=""
    fi
    # A FUSE mount its daemon did not take down (the daemon killed outright).
    [ -z "$seed_iscsi_dir" ] || ! findmnt -rn "$seed_iscsi_dir/lun" >/dev/null ||
        umount -l "$seed_iscsi_dir/lun" 2>/dev/null || true
    if [ -n "$seed_iscsi_pid" ]; then
        seed_iscsi_adm --mode target --op delete --force --tid 1 >/dev/null 2>&1 || true
        seed_iscsi_adm --mode system --op delete >/dev/null 2>&1 || true
        seed_i=0
        while kill -0 "$seed_iscsi_pid" 2>/dev/null && [ $seed_i -lt 50 ]; do
            seed_i=$((seed_i + 1))
            sleep 0.1
        done
        kill -KILL "$seed_iscsi_pid" 2>/dev/null || true
        wait "$seed_iscsi_pid" 2>/dev/null || true
        seed_iscsi_pid=""
    fi
    [ -z "$seed_iscsi_file" ] || rm -f "$seed_iscsi_file"
    [ -z "$seed_iscsi_dir" ] || rm -rf "$seed_iscsi_dir"
    seed_iscsi_file="" seed_iscsi_dir="" seed_iscsi_iqn=""
}
