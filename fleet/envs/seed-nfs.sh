# fleet/envs/seed-nfs.sh: the NFS export of the seed table's nas columns (hvm/nas/net,
# hvmp/nas/net, para/nas/net), for fleet/local-envs --table seed (sourced beside seed.sh).
#
# The guest's disk is an image file in a directory of --dir (bmseed-PID-nfs), exported over
# NFSv3 by nfs-ganesha (user space, FSAL VFS: this kernel needs no nfsd) with rpcbind beside
# it (NFSv3's MOUNT and NFS programs are found through the portmapper), both on the loopback
# of the run's network namespace; QEMU, started in that namespace, opens the image with its
# own NFS client (the nfs block driver of qemu-block-extra, libnfs), so this machine needs no
# NFS client module either. rpcbind and ganesha.nfsd write fixed paths (/run/rpcbind.sock,
# /run/rpcbind.lock, /run/rpcbind/, /run/ganesha/): they run in a mount namespace of their
# own (unshare -m, private) with a tmpfs over /run, so neither this machine's own rpcbind nor
# another table run's sees them; their configuration, log and pid file are in a temporary
# directory. The export directory is bound at /run/bmseed-export in that mount namespace and
# exported by that name, so that whatever characters --dir holds (a space, a quote), neither
# ganesha's configuration nor QEMU's URL holds more than that plain path. Started once, for the first nas column; stopped by PID (and
# everything removed) by seed_nfs_cleanup on every path.

seed_nfs_pid="" seed_nfs_state="" seed_nfs_export=""

# The servers, run as `sh -c` in the new mount namespace: constant text whose arguments are
# the state directory and the export directory (bound at /run/bmseed-export). This shell stays their parent (their PIDs in rpcbind.pid and
# nfsd.pid): on TERM it stops both, waits for them and ends, so that nothing it started
# outlives it; it ends too when ganesha does. rpcbind listens on every address of the
# namespace (its -h 127.0.0.1 ends in a double free here, rpcbind 1.2.6), the bridge's too,
# where a guest could ask it which ports ganesha has; ganesha itself listens on 127.0.0.1.
seed_nfs_text='d=$1
mount -t tmpfs -o mode=755,size=16m bmseed-nfs /run || exit 1
mkdir -p /run/rpcbind /run/ganesha/recovery /run/bmseed-export && chown _rpc /run/rpcbind 2>/dev/null
mount --bind "$2" /run/bmseed-export || { echo "cannot bind $2 at /run/bmseed-export" >"$d/failed"; exit 1; }
rpcbind -f &
r=$!
echo $r >"$d/rpcbind.pid"
trap "kill $r 2>/dev/null" TERM HUP INT
i=0
until [ -S /run/rpcbind.sock ]; do
    i=$((i + 1))
    [ $i -le 100 ] && kill -0 $r 2>/dev/null || { echo "rpcbind did not start" >"$d/failed"; kill $r; exit 1; }
    sleep 0.1
done
ganesha.nfsd -F -f "$d/ganesha.conf" -L "$d/ganesha.log" -p "$d/ganesha.pid" -N NIV_EVENT &
g=$!
echo $g >"$d/nfsd.pid"
trap "kill $g $r 2>/dev/null" TERM HUP INT
wait $g
kill $g $r 2>/dev/null
wait $g
wait $r
'

# seed_nfs_config: ganesha's configuration: NFSv3 over TCP only (libnfs's protocol), no NLM,
# RQUOTA or UDP, on 127.0.0.1 (the namespace's loopback), no grace period (nothing to
# recover) and its NFSv4 recovery directory on its own /run; one export of
# /run/bmseed-export, read-write for 127.0.0.1 alone, root not squashed (QEMU runs as root). ganesha resolves
# Bind_Addr with AI_ADDRCONFIG, which wants an IPv4 address besides loopback in the namespace
# (the bridge's): with lo alone it refuses 127.0.0.1 ("Name or service not known").
seed_nfs_config() {
    cat <<EOF
NFS_CORE_PARAM {
    Protocols = 3;
    Bind_Addr = 127.0.0.1;
    Enable_NLM = false;
    Enable_RQUOTA = false;
    Enable_UDP = false;
}
NFSv4 {
    RecoveryRoot = "/run/ganesha/recovery";
    Graceless = true;
}
EXPORT_DEFAULTS {
    Access_Type = None;
}
EXPORT {
    Export_Id = 1;
    Path = "/run/bmseed-export";
    Pseudo = "/run/bmseed-export";
    Protocols = 3;
    Transports = TCP;
    SecType = sys;
    Squash = No_Root_Squash;
    CLIENT {
        Clients = 127.0.0.1;
        Access_Type = RW;
    }
    FSAL {
        Name = VFS;
    }
}
EOF
}

# seed_nfs_start NS DIR: the export directory in DIR and the two servers in namespace NS.
# Returns 1 with the reason in seed_why when they cannot start.
seed_nfs_start() {
    for seed_t in ganesha.nfsd rpcbind rpcinfo unshare qemu-img; do
        command -v "$seed_t" >/dev/null 2>&1 || {
            seed_why="no $seed_t (install nfs-ganesha, nfs-ganesha-vfs, rpcbind and qemu-utils: seed_install_packages)"
            return 1
        }
    done
    seed_d=$(cd "$2" && pwd) || {
        seed_why="cannot enter --dir $2"
        return 1
    }
    seed_nfs_export=$seed_d/bmseed-$$-nfs
    mkdir -m 700 "$seed_nfs_export" &&
        seed_nfs_state=$(mktemp -d "${TMPDIR:-/tmp}/bmseed-nfs.XXXXXX") &&
        seed_nfs_config >"$seed_nfs_state/ganesha.conf" || {
        seed_why="cannot make the export directory $seed_nfs_export and ganesha's configuration"
        return 1
    }
    ip netns exec "$1" unshare -m --propagation private sh -c "$seed_nfs_text" sh "$seed_nfs_state" "$seed_nfs_export" \
        </dev/null >"$seed_nfs_state/out" 2>&1 &
    seed_nfs_pid=$!
    # Up when ganesha listens on 2049 and has registered MOUNT with rpcbind (50 s at most:
    # it starts in 1 to 2 s here, but the machine may be loaded).
    seed_i=0
    until ip netns exec "$1" rpcinfo -T tcp 127.0.0.1 mountd 3 >/dev/null 2>&1 &&
        ip netns exec "$1" ss -Hltn "src 127.0.0.1:2049" | grep -q .; do
        seed_i=$((seed_i + 1))
        if [ $seed_i -gt 500 ] || ! seed_nfs_runs "$seed_nfs_pid"; then
            seed_why="nfs-ganesha did not start: $(seed_nfs_log_tail)"
            return 1
        fi
        sleep 0.1
    done
}

# The line that says why the servers stopped: rpcbind's failure, else the last CRIT, FATAL or
# MAJ of ganesha's log (but the ones it logs on every start here: no D-Bus, no Kerberos), else
# the last line either wrote.
seed_nfs_log_tail() {
    cat "$seed_nfs_state/failed" 2>/dev/null ||
        grep -hE ' :(CRIT|FATAL|MAJ) :' "$seed_nfs_state/ganesha.log" 2>/dev/null |
        grep -v -e DBUS -e 'credentials for principal' -e keytab -e krb5 | tail -n 1 |
        sed 's/.*\] //' | grep . ||
        cat "$seed_nfs_state/out" "$seed_nfs_state/ganesha.log" 2>/dev/null | tail -n 1 | grep . ||
        echo "it wrote nothing"
}

# Whether process PID runs (a zombie, ended but not yet waited for, does not).
seed_nfs_runs() {
    seed_s=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
    case $seed_s in Z*) return 1 ;; esac
}

# seed_nfs_backing NS DIR SIZE: the image file of SIZE bytes in the export (the servers
# started for the first nas column, and again for a later one if they stopped), vm_disk0
# naming it here and vm_drive0 over NFS, and the words for the backing fact; checked by
# opening it as QEMU will (qemu-img info over nfs://, in NS). Returns 1 with the reason in
# seed_why.
seed_nfs_backing() {
    if [ -z "$seed_nfs_pid" ] || ! seed_nfs_runs "$seed_nfs_pid"; then
        seed_nfs_cleanup
        seed_nfs_start "$1" "$2" || { seed_nfs_cleanup; return 1; }
    fi
    vm_disk0=$seed_nfs_export/disk.img
    rm -f "$vm_disk0" && truncate -s "$3" "$vm_disk0" || {
        seed_why="cannot make the image file $vm_disk0"
        return 1
    }
    vm_drive0=nfs://127.0.0.1/run/bmseed-export/disk.img
    seed_e=$(ip netns exec "$1" qemu-img info -f raw "$vm_drive0" 2>&1) || {
        seed_why="QEMU cannot open $vm_drive0: $(printf '%s\n' "$seed_e" | tail -n 1)"
        return 1
    }
    seed_v=$(ganesha.nfsd -v 2>/dev/null | sed -n 's/.*Release = V*//p' | head -n 1)
    seed_backing="image file on NFSv3 export $seed_nfs_export from nfs-ganesha ${seed_v:-?} (FSAL VFS, on $(findmnt -rn -o FSTYPE -T "$2" | head -n 1)) on 127.0.0.1, QEMU's libnfs client"
}

# Removes one nas column's image file (the export and servers stay for the next one).
seed_nfs_unback() {
    [ -z "$seed_nfs_export" ] || rm -f "$seed_nfs_export/disk.img"
    vm_drive0=""
}

# Stops ganesha and rpcbind (TERM to the shell that started them, which stops both and waits
# for them: ganesha takes some 5 s; to them by their PIDs where that shell's PID was not yet
# known; after 15 s each is sent KILL) and removes the export directory and the state
# directory. Their mount namespace, with its tmpfs, goes with the last of them.
seed_nfs_cleanup() {
    seed_p=""
    for seed_f in rpcbind nfsd; do
        [ -n "$seed_nfs_state" ] && seed_q=$(cat "$seed_nfs_state/$seed_f.pid" 2>/dev/null) || continue
        case $seed_q in '' | *[!0-9]*) ;; *) seed_p="$seed_p $seed_q" ;; esac
    done
    for seed_q in ${seed_nfs_pid:-$seed_p}; do kill "$seed_q" 2>/dev/null || true; done
    seed_i=0
    while [ $seed_i -lt 150 ]; do
        seed_alive=""
        for seed_q in $seed_nfs_pid $seed_p; do ! seed_nfs_runs "$seed_q" || seed_alive=1; done
        [ -n "$seed_alive" ] || break
        seed_i=$((seed_i + 1))
        sleep 0.1
    done
    for seed_q in $seed_p $seed_nfs_pid; do
        ! seed_nfs_runs "$seed_q" || kill -KILL "$seed_q" 2>/dev/null || true
    done
    [ -z "$seed_nfs_pid" ] || wait "$seed_nfs_pid" 2>/dev/null || true
    [ -z "$seed_nfs_export" ] || rm -rf "$seed_nfs_export"
    [ -z "$seed_nfs_state" ] || rm -rf "$seed_nfs_state"
    seed_nfs_pid="" seed_nfs_state="" seed_nfs_export="" vm_drive0=""
}
