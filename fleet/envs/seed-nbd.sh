# fleet/envs/seed-nbd.sh: the NBD server of --table seed's para/lvm/san column (sourced by
# fleet/local-envs after seed.sh): qemu-nbd exporting a file preallocated in --dir, which
# stands for the seed's LV on the SAN, on 127.0.0.1:10809 of the run's namespace, where
# the guest's QEMU reaches it with its own NBD client (no nbd module on this machine).
# Everything it makes is in seed_nbd_* variables and removed by seed_nbd_stop.

seed_nbd_pid="" seed_nbd_file="" seed_nbd_log=""
# The export's port on the namespace's own loopback (no other run shares that loopback).
seed_nbd_port=10809

# seed_nbd_start COLUMN DIR BYTES FS: the file (BYTES, preallocated in DIR on file system
# FS, an ext4 made on it for the guest's /mnt/bench) exported by qemu-nbd; sets vm_drive0
# and seed_backing, or sets seed_why to one line saying why not and returns 1.
seed_nbd_start() {
    command -v qemu-nbd >/dev/null 2>&1 || {
        seed_why="no qemu-nbd (install qemu-utils)"
        return 1
    }
    seed_nbd_file=$2/bmseed-$$-san.img
    seed_nbd_log=$2/bmseed-$$-san.log
    fallocate -l "$3" "$seed_nbd_file" 2>"$seed_nbd_log" &&
        vm_mkext4 "$seed_nbd_file" 2>>"$seed_nbd_log" || {
        seed_why="cannot make the NBD export's file $seed_nbd_file: $(seed_says "$seed_nbd_log")"
        return 1
    }
    # O_DIRECT on the file (cache=none) as the guest's other disks are, where FS allows it.
    seed_nbd_cache=none
    vm_direct_ok "$seed_nbd_file" || seed_nbd_cache=writeback
    # -t: the export stays for the next client (it would end when the first one leaves).
    ip netns exec "$seed_ns" qemu-nbd -t -b 127.0.0.1 -p "$seed_nbd_port" -x bmseed-san -f raw \
        --cache="$seed_nbd_cache" "$seed_nbd_file" </dev/null >>"$seed_nbd_log" 2>&1 &
    seed_nbd_pid=$!
    seed_listens "$seed_nbd_pid" "$seed_nbd_port" || {
        seed_why="qemu-nbd did not listen on 127.0.0.1:$seed_nbd_port in $seed_ns: $(seed_says "$seed_nbd_log")"
        return 1
    }
    vm_drive0=nbd://127.0.0.1:$seed_nbd_port/bmseed-san
    seed_backing="NBD export bmseed-san from qemu-nbd $(qemu-nbd --version | head -n 1 | awk '{ print $2 }')"
    seed_backing="$seed_backing on 127.0.0.1:$seed_nbd_port in the run's namespace (QEMU's NBD"
    seed_backing="$seed_backing client) over a preallocated file on $4 standing for the LV (cache $seed_nbd_cache)"
}

# seed_listens PID PORT: waits (10 s at most) until PID itself listens on 127.0.0.1:PORT
# in the run's namespace (not another process there, nor PID on another address: tgtd
# falls back to the wildcard when it cannot bind its portal); returns 1 if it does not, or
# ends first.
seed_listens() {
    seed_i=0
    until ip netns exec "$seed_ns" ss -Hltnp "src 127.0.0.1:$2" | grep -q "pid=$1,"; do
        seed_i=$((seed_i + 1))
        [ $seed_i -le 100 ] && kill -0 "$1" 2>/dev/null || return 1
        sleep 0.1
    done
}

# seed_says LOG: the last line of a server's LOG that says what went wrong, else its last;
# tgtd's every start says it found no RDMA and could not adjust its limits (not a cause).
seed_says() {
    grep -iv 'rdma\|adjust' "$1" 2>/dev/null | grep -i 'fail\|unable\|error\|cannot' | tail -n 1 | grep . ||
        tail -n 1 "$1" 2>/dev/null
}

# Stops qemu-nbd (by its pid) and removes its file and log.
seed_nbd_stop() {
    if [ -n "$seed_nbd_pid" ]; then
        kill "$seed_nbd_pid" 2>/dev/null || true
        wait "$seed_nbd_pid" 2>/dev/null || true
        seed_nbd_pid=""
    fi
    rm -f "$seed_nbd_file" "$seed_nbd_log"
    seed_nbd_file="" seed_nbd_log=""
}
