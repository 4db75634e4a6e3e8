# fleet/envs/vm.sh: a QEMU guest on this machine, for fleet/local-envs (sourced).
#
# The guest boots Debian's stock kernel (linux-image-*-amd64, fetched once with apt-get
# download into a cache and booted uncompressed, which starts in half the time) with a
# busybox initramfs whose PID 1 is fleet/envs/vm-init. It loads the virtio modules, mounts
# this machine's root read-only over virtio-9p for its programs (the same tools and libraries
# as the bare run), a fresh ext4 file system on a virtio-blk disk for the disk under test and
# the results directory read-write, runs ./benchmatrix in a chroot of those and powers off.
# Its network is QEMU's user mode on virtio-net: the guest holds 10.0.2.15/24 with no default
# route, and 10.0.2.2 is this machine's loopback, where fleet/local-envs's --serve listens.
# KVM where /dev/kvm boots the guest, else TCG (software emulation): the guest's facts say
# which (hypervisor). Needs no root once the packages are in (vm_install_packages).

# This file's directory, where vm-init is: set by the sourcing script, else found beside $0.
for vm_d in "${vm_here:-}" "$(dirname "$0")" "$(dirname "$0")/envs" fleet/envs; do
    [ -n "$vm_d" ] && [ -f "$vm_d/vm-init" ] && { vm_here=$(cd "$vm_d" && pwd); break; }
done
vm_state="" vm_pid=""
# What a caller may set before vm_boot to shape one guest (fleet/local-envs --table seed):
# vm_disk0 an image file or block device for the disk under test (else a fresh file in the
# state directory; linked there, never removed by vm_cleanup), vm_bus its bus (virtio, else
# ide: PIIX IDE, seen as /dev/sda), vm_nic the NIC (virtio, else e1000), vm_netns and vm_tap
# a tap device in that network namespace (QEMU runs in it) instead of user mode, vm_addr the
# guest's address (10.0.2.15/24), vm_peer the --serve's (10.0.2.2), vm_facts facts for every
# tool's begin (BENCHMATRIX_FACTS) and vm_clock a file where the guest/host clock ratio over
# the job is written; vm_drive0 what QEMU opens for that disk instead of vm_disk0, opened by
# QEMU in vm_netns: a URL of one of its network block drivers (nfs://HOST/EXPORT/FILE, which
# names the same file vm_disk0 is on this machine, so vm_disk0 still gets the ext4 file
# system; nbd://HOST:PORT/NAME or iscsi://HOST/IQN/LUN with vm_disk0 empty, their ext4 made
# by the caller, since this machine cannot open them), and vm_clocksource the guest kernel's
# clocksource (clocksource= on its command line; else the kernel's own choice).
vm_disk0="" vm_bus="" vm_nic="" vm_netns="" vm_tap="" vm_addr="" vm_facts="" vm_clock="" vm_peer=""
vm_drive0="" vm_clocksource=""

# The modules the guest loads (with what each needs, from modules.dep), in this order; ext4
# looks up crc32c by name when it mounts, which no modules.dep line says.
# The emulated devices' drivers (ata_piix and sd_mod for an IDE disk, e1000 for its NIC) are
# loaded too, for fleet/local-envs's --table seed.
vm_modules="virtio_pci virtio_blk virtio_net 9pnet_virtio 9p crc32c_generic ext4 ata_piix sd_mod e1000"

# Returns 0 when a guest can be made here; else says why on stderr and returns 1.
vm_check() {
    for vm_t in qemu-system-x86_64 busybox cpio depmod mkfs.ext4 grep flock; do
        command -v "$vm_t" >/dev/null 2>&1 || {
            echo "vm: left out: no $vm_t (as root: sh -c '. fleet/envs/vm.sh && vm_install_packages')" >&2
            return 1
        }
    done
    # The initramfs has no libraries: its busybox must be the static one.
    if ldd "$(command -v busybox)" >/dev/null 2>&1; then
        echo "vm: left out: busybox is linked dynamically (install busybox-static)" >&2
        return 1
    fi
}

# Installs what a guest needs, as root, from Debian's packages: qemu-system-x86 (from
# bookworm-backports on bookworm, to match the qemu-utils that may come from there),
# busybox-static, cpio and kmod, and the packages named as arguments from the same release
# (the seed table's servers and QEMU's block drivers, which must match qemu-system-x86). The
# backports source is made from the URI of the machine's own Debian source.
vm_install_packages() {
    [ "$(id -u)" = 0 ] || { echo "vm: installing packages needs root" >&2; return 1; }
    vm_need=""
    for vm_p in qemu-system-x86 busybox-static cpio kmod e2fsprogs "$@"; do
        dpkg-query -W -f='${Status}' "$vm_p" 2>/dev/null | grep -q "install ok installed" ||
            vm_need="$vm_need $vm_p"
    done
    [ -n "$vm_need" ] || return 0
    vm_target=""
    if grep -qs '^VERSION_CODENAME=bookworm' /etc/os-release; then
        vm_src=/etc/apt/sources.list.d/benchmatrix-backports.sources
        if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d; then
            vm_uri=$(awk '/^URIs:/ { u = $2 } /^Suites:/ && / bookworm( |$)/ { print u; exit }' \
                /etc/apt/sources.list.d/*.sources 2>/dev/null)
            [ -n "$vm_uri" ] || vm_uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
                /etc/apt/sources.list 2>/dev/null)
            [ -n "$vm_uri" ] || { echo "vm: no Debian bookworm source to add backports beside" >&2; return 1; }
            printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$vm_uri" >"$vm_src"
        fi
        vm_target="-t bookworm-backports"
    fi
    echo "vm: installing$vm_need" >&2
    apt-get update -qq || return 1
    # shellcheck disable=SC2086 # $vm_target and $vm_need are split on purpose.
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $vm_target $vm_need
}

# vm_prepare CACHE: the kernel (CACHE/vmlinux, its modules under CACHE/kernel) and the
# initramfs (CACHE/initrd.cpio), made once and again only when vm-init or the module list
# changes. Runs sharing CACHE make it one at a time (flock on CACHE/prepare.lock): a second
# run waits for the first's files instead of unpacking over them.
vm_prepare() {
    vm_cache=$1
    mkdir -p "$vm_cache" || return 2
    (
        flock -w 900 9 || { echo "vm: another run held $vm_cache/prepare.lock for 15 min" >&2; exit 2; }
        if [ ! -s "$vm_cache/vmlinux" ]; then
            vm_fetch_kernel "$vm_cache" || exit 2
        fi
        vm_sum=$({ cat "$vm_here/vm-init"; echo "$vm_modules ${VM_MODULES:-}"; } | cksum)
        if [ ! -s "$vm_cache/initrd.cpio" ] || [ "$(cat "$vm_cache/initrd.sum" 2>/dev/null)" != "$vm_sum" ]; then
            vm_initramfs "$vm_cache" || exit 2
            echo "$vm_sum" >"$vm_cache/initrd.sum"
        fi
    ) 9>"$vm_cache/prepare.lock"
}

# Fetches Debian's kernel package (the one linux-image-amd64 depends on, or the .deb named by
# VM_KERNEL_DEB), unpacks it into CACHE/kernel, runs depmod there and writes CACHE/vmlinux.
vm_fetch_kernel() {
    vm_c=$1
    vm_deb=${VM_KERNEL_DEB:-}
    if [ -z "$vm_deb" ]; then
        vm_pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
            awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
        [ -n "$vm_pkg" ] || { echo "vm: apt knows no linux-image-amd64 (give VM_KERNEL_DEB=FILE.deb)" >&2; return 1; }
        echo "vm: fetching $vm_pkg (once, into $vm_c)" >&2
        (cd "$vm_c" && apt-get download -qq "$vm_pkg" 2>/dev/null) || {
            echo "vm: apt-get download $vm_pkg failed" >&2
            return 1
        }
        vm_deb=$(ls "$vm_c/${vm_pkg}"_*.deb | head -n 1)
    fi
    rm -rf "$vm_c/kernel"
    dpkg-deb -x "$vm_deb" "$vm_c/kernel" || { echo "vm: cannot unpack $vm_deb" >&2; return 1; }
    vm_ver=$(ls "$vm_c/kernel/lib/modules" | head -n 1)
    depmod -b "$vm_c/kernel" "$vm_ver" || { echo "vm: depmod failed for $vm_ver" >&2; return 1; }
    vm_extract_vmlinux "$vm_c/kernel/boot/vmlinuz-$vm_ver" "$vm_c/vmlinux.tmp" || {
        echo "vm: found no ELF kernel inside vmlinuz-$vm_ver" >&2
        return 1
    }
    mv "$vm_c/vmlinux.tmp" "$vm_c/vmlinux"
    [ -n "${VM_KERNEL_DEB:-}" ] || rm -f "$vm_deb"
}

# vm_extract_vmlinux VMLINUZ OUT: the ELF kernel inside a bzImage, found by trying each
# compressor's magic at each offset it occurs until one decompresses to an ELF file.
vm_extract_vmlinux() {
    for vm_m in 'xz \xfd7zXZ\x00' 'zstd \x28\xb5\x2f\xfd' 'gzip \x1f\x8b\x08' 'lzma \x5d\x00\x00\x00' 'bzip2 BZh'; do
        vm_dec=${vm_m%% *}
        command -v "$vm_dec" >/dev/null 2>&1 || continue
        for vm_o in $(LC_ALL=C grep -obUaP "${vm_m#* }" "$1" 2>/dev/null | cut -d: -f1 | head -n 8); do
            tail -c +"$((vm_o + 1))" "$1" | "$vm_dec" -dc >"$2" 2>/dev/null
            [ "$(head -c 4 "$2" | od -An -tx1 | tr -d ' \n')" = 7f454c46 ] && return 0
        done
    done
    rm -f "$2"
    return 1
}

# The modules to load, with their dependencies first, as paths under the kernel's module
# directory (none for a module built in).
vm_module_paths() {
    awk -v want="$vm_modules ${VM_MODULES:-}" '
        function base(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z]+)?$/, "", p); gsub(/-/, "_", p); return p }
        function visit(n,   a, c, i) {
            if (n in done || !(n in path)) return
            done[n] = 1
            c = split(deps[n], a, " ")
            for (i = c; i >= 1; i--) visit(base(a[i]))
            print path[n]
        }
        { k = $1; sub(/:$/, "", k); n = base(k); path[n] = k; deps[n] = ""
          for (i = 2; i <= NF; i++) deps[n] = deps[n] " " $i }
        END { c = split(want, w, " "); for (i = 1; i <= c; i++) { m = w[i]; gsub(/-/, "_", m); visit(m) } }
    ' "$1/modules.dep"
}

# Builds CACHE/initrd.cpio: busybox, vm-init as /init, the modules (decompressed) and the
# order to load them in.
vm_initramfs() {
    vm_c=$1
    vm_ver=$(ls "$vm_c/kernel/lib/modules" | head -n 1)
    vm_md=$vm_c/kernel/lib/modules/$vm_ver
    vm_t=$vm_c/initrd.tree
    rm -rf "$vm_t"
    mkdir -p "$vm_t/bin" "$vm_t/lib/modules" "$vm_t/proc" "$vm_t/sys" "$vm_t/dev" "$vm_t/host" \
        "$vm_t/newroot" || return 1
    cp "$(command -v busybox)" "$vm_t/bin/busybox" && cp "$vm_here/vm-init" "$vm_t/init" &&
        chmod 755 "$vm_t/init" || return 1
    : >"$vm_t/modules.list"
    for vm_p in $(vm_module_paths "$vm_md"); do
        vm_n=$(basename "$vm_p")
        case $vm_n in
            *.ko.xz) xz -dc "$vm_md/$vm_p" >"$vm_t/lib/modules/${vm_n%.xz}" ;;
            *.ko.zst) zstd -qdc "$vm_md/$vm_p" >"$vm_t/lib/modules/${vm_n%.zst}" ;;
            *.ko.gz) gzip -dc "$vm_md/$vm_p" >"$vm_t/lib/modules/${vm_n%.gz}" ;;
            *) cp "$vm_md/$vm_p" "$vm_t/lib/modules/$vm_n" ;;
        esac || return 1
        vm_n=${vm_n%.xz} vm_n=${vm_n%.zst} vm_n=${vm_n%.gz}
        echo "$vm_n" >>"$vm_t/modules.list"
    done
    (cd "$vm_t" && find . | cpio -o -H newc -R 0:0 --quiet) >"$vm_c/initrd.cpio.tmp" || return 1
    mv "$vm_c/initrd.cpio.tmp" "$vm_c/initrd.cpio"
    rm -rf "$vm_t"
}

# The accelerator to boot with, printed: VM_ACCEL (kvm or tcg) when set, else kvm when
# /dev/kvm boots this kernel (a probe boot, remembered in CACHE per host kernel and QEMU),
# else tcg. A KVM that opens but cannot run the guest (a nested one missing what the stock
# kernel needs) fails the probe and the guest runs under TCG.
vm_accel() {
    case ${VM_ACCEL:-auto} in kvm | tcg) echo "$VM_ACCEL"; return 0 ;; auto) ;; *)
        echo "vm: VM_ACCEL=$VM_ACCEL: give kvm, tcg or auto" >&2; return 1 ;; esac
    if [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then echo tcg; return 0; fi
    vm_key="$(uname -r) $(qemu-system-x86_64 --version | head -n 1)"
    if [ -f "$1/accel" ] && [ "$(sed -n 2p "$1/accel")" = "$vm_key" ]; then
        sed -n 1p "$1/accel"
        return 0
    fi
    vm_a=tcg
    rm -f "$1/probe.log"
    timeout -k 5 "${VM_PROBE_TIMEOUT:-15}" qemu-system-x86_64 -accel kvm -cpu host -m 256 -smp 1 \
        -nodefaults -no-user-config -display none -no-reboot -serial "file:$1/probe.log" \
        -kernel "$1/vmlinux" -initrd "$1/initrd.cpio" -append "console=ttyS0 quiet panic=-1 bm.probe" \
        >/dev/null 2>&1 </dev/null || : # a KVM that cannot run the guest hangs until the timeout
    grep -qs 'benchmatrix-vm: probe ok' "$1/probe.log" && vm_a=kvm
    [ "$vm_a" = kvm ] || echo "vm: /dev/kvm cannot boot the guest here; using TCG (software emulation)" >&2
    printf '%s\n%s\n' "$vm_a" "$vm_key" >"$1/accel"
    echo "$vm_a"
}

# The guest's job, run by vm-init in the guest's root: constant text that takes its command
# from the files argv/1001, argv/1002, ... beside it, one argument each, read exactly (a
# trailing newline too), and the run's token from the file token beside it (mode 0600) into
# BENCHMATRIX_TOKEN, so that no argv holds it; no value is ever shell text.
vm_job_text='d=${0%/*}
if [ -f "$d/token" ]; then
    BENCHMATRIX_TOKEN=$(cat "$d/token") || exit 2
    export BENCHMATRIX_TOKEN
fi
d=$d/argv
set --
for f in "$d"/*; do
    a=$(cat "$f" && echo .) || exit 2
    set -- "$@" "${a%.}"
done
exec "$@"
'

# vm_job ARGS...: writes the job that runs ARGS in the guest (vm_job_text, and ARGS in files).
vm_job() {
    mkdir "$vm_state/argv" || return 2
    vm_n=1000
    for vm_a in "$@"; do
        vm_n=$((vm_n + 1))
        printf '%s' "$vm_a" >"$vm_state/argv/$vm_n" || return 2
    done
    printf '%s' "$vm_job_text" >"$vm_state/job.sh"
}

# vm_value NAME VALUE: VALUE in the file NAME of the state directory, which vm-init reads.
vm_value() { printf '%s' "$2" >"$vm_state/$1"; }

# Sets vm_out to $1 with each comma doubled, as QEMU reads a comma inside an option's value.
vm_commas() {
    vm_in=$1 vm_out=""
    while :; do
        case $vm_in in
            *,*) vm_out="$vm_out${vm_in%%,*},," vm_in=${vm_in#*,} ;;
            *) break ;;
        esac
    done
    vm_out="$vm_out$vm_in"
}

# vm_stamp STATE: copies the guest's console from stdin to stdout and stamps its clock lines
# with this machine's: `benchmatrix-vm: clock NAME T` gives the guest's uptime T (its
# CLOCK_BOOTTIME) at a point of its run (cal every quarter second for 4 s before the job,
# then calend; end after the job). A line arrives late by however long this machine took to
# read it (tens of ms on a loaded host: 1.6% of 3 s, where two lines 3 s apart read a steady
# guest as 1.0156), never early, so on calend the ratio is taken between the least late line
# (the least host-minus-guest time) of the first third and of the last (vm_cal_ratio); it
# goes to STATE/clock_ratio (which the guest waits for and gives its tools as the fact
# guest_clock_ratio), and on end the ratio from the first third's line over the whole job
# to STATE/clock_run.
vm_stamp() {
    vm_sd=$1 vm_cr=$(printf '\r')
    set -f
    while IFS= read -r vm_line; do
        read -r vm_up _ </proc/uptime
        printf '%s\n' "$vm_line"
        vm_line=${vm_line%"$vm_cr"}
        case $vm_line in
            *"benchmatrix-vm: clock "*)
                # shellcheck disable=SC2086 # the name and the time, split on purpose.
                set -- ${vm_line#*benchmatrix-vm: clock }
                case $1 in
                    cal) printf '%s %s\n' "$2" "$vm_up" >>"$vm_sd/clock_cal" ;;
                    calend)
                        # shellcheck disable=SC2046 # the ratio and the reference, split on purpose.
                        set -- $(vm_cal_ratio <"$vm_sd/clock_cal")
                        [ $# = 3 ] && vm_g0=$2 vm_h0=$3 && printf '%s\n' "$1" >"$vm_sd/clock_ratio.tmp" &&
                            mv "$vm_sd/clock_ratio.tmp" "$vm_sd/clock_ratio" ;;
                    end) [ -z "${vm_g0:-}" ] || awk -v g="$2" -v g0="$vm_g0" -v h="$vm_up" -v h0="$vm_h0" \
                        'BEGIN { printf "%.4f\n", (g - g0) / (h - h0) }' >"$vm_sd/clock_run" ;;
                esac
                ;;
        esac
    done
}

# vm_cal_ratio: from lines `GUEST HOST` (the guest's uptime and this machine's as the line
# arrived), the guest's span over this machine's between the least late line of the first
# third and of the last (thirds, not halves: the two lines are then at least a third of the
# span apart, so the uptimes' 10 ms steps weigh little), then that first line's two times:
# `RATIO GUEST HOST`. Nothing for fewer than 6 lines or lines no time apart.
vm_cal_ratio() {
    awk '{ n++; g[n] = $1; h[n] = $2 }
        END {
            if (n < 6) exit 1
            k = int(n / 3)
            a = 1; for (i = 2; i <= k; i++) if (h[i] - g[i] < h[a] - g[a]) a = i
            b = n - k + 1; for (i = b + 1; i <= n; i++) if (h[i] - g[i] < h[b] - g[b]) b = i
            if (h[b] <= h[a]) exit 1
            printf "%.4f %s %s\n", (g[b] - g[a]) / (h[b] - h[a]), g[a], h[a] }'
}

# vm_mkext4 FILE: the ext4 a guest mounts at /mnt/bench, made on FILE (an image or a
# server's backing file) with its tables written now, so that the guest's first writes do
# not pay for them.
vm_mkext4() {
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1"
}

# vm_direct_ok FILE: whether FILE opens O_DIRECT (its file system honours it: tmpfs before
# Linux 6.6 does not), so that a disk on it can be cache=none.
vm_direct_ok() {
    dd if="$1" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null
}

# Stops the guest (by pid) and removes its state directory (the disk image among it).
vm_cleanup() {
    if [ -n "$vm_pid" ]; then
        kill "$vm_pid" 2>/dev/null || true
        wait "$vm_pid" 2>/dev/null || true
        vm_pid=""
    fi
    [ -z "$vm_state" ] || rm -rf "$vm_state"
    vm_state=""
}

# vm_new CACHE: a state directory for one guest (vm_state), where its caller writes the
# job (vm_job: job.sh and its arguments, run in the guest's root as root) before vm_boot.
vm_new() {
    vm_state=$(mktemp -d "$1/run.XXXXXX") || return 2
}

# vm_boot CACHE RESULTS BIND...: boots the guest with the job in vm_state. The paths BIND
# are this machine's, seen at the same place in the guest; RESULTS is
# mounted there read-write. The guest's disks: vda, a fresh ext4 file system of
# VM_DISK_SIZE (default 1G) mounted at /mnt/bench, and VM_EXTRA_DISKS (default 0) blank
# ones of VM_EXTRA_SIZE (256M), vdb on. The modules of the guest's kernel are under its
# /run/guest-kernel (modprobe -d /run/guest-kernel). VM_CPUS (2), VM_MEMORY (1G), VM_TIMEOUT (1800 s) size
# the guest. Returns the job's exit status (2 when the guest did not run it) and removes
# vm_state.
vm_boot() {
    vm_cache=$1 vm_results=$2
    shift 2
    # What vm-init needs, each value in a file of its own: the host name, the results
    # directory and the paths to bind (bind/1, bind/2, ...).
    mkdir "$vm_state/bind" && vm_value hostname "$(hostname)-${vm_label:-vm}" &&
        vm_value results "$vm_results" || { vm_cleanup; return 2; }
    vm_i=0
    for vm_p in "$@"; do
        vm_i=$((vm_i + 1))
        vm_value "bind/$vm_i" "$vm_p" || { vm_cleanup; return 2; }
    done
    vm_accel=$(vm_accel "$vm_cache") || { vm_cleanup; return 2; }
    vm_value disk "$([ "${vm_bus:-virtio}" = virtio ] && echo vda || echo sda)" &&
        vm_value addr "${vm_addr:-10.0.2.15/24}" || { vm_cleanup; return 2; }
    # The link's target absolute (a TMPDIR or --dir given relative to the working directory).
    case $vm_disk0 in '' | /*) ;; *) vm_disk0=$(pwd)/$vm_disk0 ;; esac
    [ -z "$vm_disk0" ] || ln -s "$vm_disk0" "$vm_state/disk0.img" || { vm_cleanup; return 2; }
    vm_i=0
    [ -z "$vm_drive0" ] || vm_i=1
    while [ "$vm_i" -le "${vm_extra:-${VM_EXTRA_DISKS:-0}}" ]; do
        vm_disk=$vm_state/disk$vm_i.img
        [ ! -e "$vm_disk" ] || { vm_i=$((vm_i + 1)); continue; }
        [ "$vm_i" = 0 ] && vm_size=${VM_DISK_SIZE:-1G} || vm_size=${VM_EXTRA_SIZE:-256M}
        truncate -s "$vm_size" "$vm_disk" || { vm_cleanup; return 2; }
        vm_i=$((vm_i + 1))
    done
    # The guest's disk0, made here or named by vm_disk0, gets the ext4; a vm_drive0 with no
    # vm_disk0 has its own, made by the caller.
    [ ! -e "$vm_state/disk0.img" ] || vm_mkext4 "$(readlink -f "$vm_state/disk0.img")" || {
        echo "vm: cannot make the guest's disk in $vm_state" >&2
        vm_cleanup
        return 2
    }
    # The disks are opened O_DIRECT (cache=none) so that the guest's O_DIRECT writes reach
    # the host's disk, as on a hypervisor without a host page cache; where the cache
    # directory's file system refuses O_DIRECT, through the host's cache, said. A network
    # disk with no file here (an NBD or iSCSI vm_drive0) is cache=none too: QEMU's NBD and
    # iSCSI drivers keep no cache.
    vm_dcache=none
    [ ! -e "$vm_state/disk0.img" ] || vm_direct_ok "$vm_state/disk0.img" || {
        vm_dcache=writeback
        echo "vm: $vm_cache refuses O_DIRECT: the guest's disks go through this machine's page cache" >&2
    }
    # QEMU's options, each an argument: the accelerator, then the disks.
    case $vm_accel in
        kvm) set -- -accel kvm -cpu host ;;
        *) set -- -accel tcg,thread=multi -cpu max ;;
    esac
    vm_i=0
    while [ -e "$vm_state/disk$vm_i.img" ] || { [ "$vm_i" = 0 ] && [ -n "$vm_drive0" ]; }; do
        if [ "$vm_i" = 0 ] && [ -n "$vm_drive0" ]; then
            vm_commas "$vm_drive0"
        else
            vm_commas "$(readlink -f "$vm_state/disk$vm_i.img")"
        fi
        set -- "$@" -drive "file=$vm_out,format=raw,if=none,id=d$vm_i,cache=$vm_dcache"
        if [ "$vm_i" = 0 ] && [ "${vm_bus:-virtio}" = ide ]; then
            set -- "$@" -device "ide-hd,drive=d0,bus=ide.0,serial=bm0"
        else
            set -- "$@" -device "virtio-blk-pci,drive=d$vm_i,serial=bm$vm_i"
        fi
        vm_i=$((vm_i + 1))
    done
    # The network: a tap on the caller's bridge (QEMU in its namespace), else user mode.
    [ "${vm_nic:-virtio}" = e1000 ] && vm_nd=e1000 || vm_nd=virtio-net-pci
    if [ -n "$vm_tap" ]; then
        set -- "$@" -netdev "tap,id=n0,ifname=$vm_tap,script=no,downscript=no"
    else
        set -- "$@" -netdev user,id=n0,ipv6=off,net=10.0.2.0/24
    fi
    set -- "$@" -device "$vm_nd,netdev=n0,romfile="
    echo "vm: booting the guest ($vm_accel, ${VM_CPUS:-2} CPUs, ${VM_MEMORY:-1G}, disk cache=$vm_dcache)" >&2
    # The caller's facts, with what only this function knows: the accelerator and cache mode.
    [ -z "$vm_facts" ] || vm_facts="$vm_facts;accel=$vm_accel;disk_cache=$vm_dcache"
    vm_value facts "$vm_facts" || { vm_cleanup; return 2; }
    : >"$vm_state/console.log"
    # The paths in QEMU's options, their commas doubled.
    vm_commas "$vm_cache/kernel/lib/modules"
    vm_mods=$vm_out
    vm_commas "$vm_state"
    vm_st=$vm_out
    vm_commas "$vm_results"
    vm_res=$vm_out
    set -- timeout -k 10 "${VM_TIMEOUT:-1800}" qemu-system-x86_64 "$@"
    [ -z "$vm_netns" ] || set -- ip netns exec "$vm_netns" "$@"
    # The guest's clock is its kernel's own choice unless vm_clocksource names one (the seed's
    # hvm and hvmp columns): kvm-clock under KVM, the HPET under TCG
    # (QEMU's HPET counts QEMU's virtual clock, which follows this machine's). No clock
    # option is given: under TCG here, -rtc clock=host (QEMU's default already; the RTC
    # only sets the wall clock at boot), -rtc clock=rt, clocksource=tsc and
    # clocksource=acpi_pm each gave whole-run ratios within 0.998 to 1.004, as the HPET did,
    # and the TSC is worse where it differs: the guest calibrates its rate at boot against
    # the other timers, which a loaded host upsets. no_timer_check: on a loaded host an
    # emulated CPU can miss the kernel's boot-time check of the IO-APIC timer, which then
    # panics ("IO-APIC + timer doesn't work!", one boot in about 30 at a load of 7).
    "$@" -smp "${VM_CPUS:-2}" -m "${VM_MEMORY:-1G}" \
        -nodefaults -no-user-config -display none -no-reboot \
        -serial "file:$vm_state/console.log" \
        -kernel "$vm_cache/vmlinux" -initrd "$vm_cache/initrd.cpio" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check${vm_clocksource:+ clocksource=$vm_clocksource}" \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$vm_mods,mount_tag=modules,security_model=none,readonly=on" \
        -virtfs "local,path=$vm_st,mount_tag=bmstate,security_model=none" \
        -virtfs "local,path=$vm_res,mount_tag=results,security_model=none" \
        </dev/null >"$vm_state/qemu.log" 2>&1 &
    vm_pid=$!
    tail -n +1 -f --pid="$vm_pid" "$vm_state/console.log" | vm_stamp "$vm_state" >&2 &
    vm_tail=$!
    vm_rc=0
    wait "$vm_pid" || vm_rc=$?
    vm_pid=""
    wait "$vm_tail" 2>/dev/null || true
    [ -z "$vm_clock" ] || [ ! -s "$vm_state/clock_run" ] || cp "$vm_state/clock_run" "$vm_clock"
    if [ -s "$vm_state/rc" ]; then
        vm_rc=$(cat "$vm_state/rc")
    else
        echo "vm: the guest did not run its job (qemu exit $vm_rc):" >&2
        tail -n 20 "$vm_state/qemu.log" >&2
        vm_rc=2
    fi
    vm_cleanup
    return "$vm_rc"
}

# vm_run CACHE REPO BIN LABEL RESULTS PORT TOKEN -- SUITE_ARGS...
# Runs REPO/benchmatrix with SUITE_ARGS in a guest (vm_boot), the tools from BIN, its disk
# step on the guest's own virtio disk, its network rows measuring the link to this
# machine's --serve on 127.0.0.1 (PORT and PORT+1, token TOKEN), which the guest sees as
# 10.0.2.2; the records go to RESULTS/LABEL.jsonl. Returns the suite's exit status.
vm_run() {
    vm_cache=$1 vm_repo=$2 vm_bin=$3 vm_label=$4 vm_results=$5 vm_port=$6 vm_token=$7
    shift 7
    [ "${1:-}" = "--" ] && shift
    vm_new "$vm_cache" || return 2
    # The token is in the job's environment, never in an argv (the guest's ps): the job reads
    # it from a file of its owner's alone (mode 0600, in vm_state, which is 0700).
    (umask 077 && printf '%s' "$vm_token" >"$vm_state/token") || { vm_cleanup; return 2; }
    # shellcheck disable=SC2016 # "$1" and "$@" are the job's shell's.
    vm_job env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        BENCHMATRIX_BIN="$vm_bin" sh -c 'cd -- "$1" && shift && exec "$@"' sh "$vm_repo" \
        ./benchmatrix --label "$vm_label" --results "$vm_results" --dir /mnt/bench --peer "${vm_peer:-10.0.2.2}" \
        --port "$vm_port" --no-matrix "$@" || { vm_cleanup; return 2; }
    vm_boot "$vm_cache" "$vm_results" "$vm_repo" "$vm_bin"
}

# vm_stacks CACHE REPO BIN RESULTS: fleet/envs/vm-stacks in a guest with three blank disks:
# an LVM volume, an md raid1 and an NFS mount, blkwrite, blkread and fsmeta on each
# (RESULTS/stacks.jsonl), and blkwrite's refusals of a physical volume and an md member
# (RESULTS/refusals.txt). Returns the job's exit status.
vm_stacks() {
    vm_new "$1" || return 2
    vm_job env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
        BIN="$3" RESULTS="$4" sh "$2/fleet/envs/vm-stacks" || { vm_cleanup; return 2; }
    vm_extra=3
    vm_boot "$1" "$4" "$2" "$3" || { vm_extra=""; return 1; }
    vm_extra=""
}
