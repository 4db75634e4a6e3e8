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

# The modules the guest loads (with what each needs, from modules.dep), in this order; ext4
# looks up crc32c by name when it mounts, which no modules.dep line says.
vm_modules="virtio_pci virtio_blk virtio_net 9pnet_virtio 9p crc32c_generic ext4"

# Returns 0 when a guest can be made here; else says why on stderr and returns 1.
vm_check() {
    for vm_t in qemu-system-x86_64 busybox cpio depmod mkfs.ext4 grep; do
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
# busybox-static, cpio and kmod. The backports source is made from the URI of the machine's
# own Debian source.
vm_install_packages() {
    [ "$(id -u)" = 0 ] || { echo "vm: installing packages needs root" >&2; return 1; }
    vm_need=""
    for vm_p in qemu-system-x86 busybox-static cpio kmod e2fsprogs; do
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
# changes.
vm_prepare() {
    vm_cache=$1
    mkdir -p "$vm_cache" || return 2
    if [ ! -s "$vm_cache/vmlinux" ]; then
        vm_fetch_kernel "$vm_cache" || return 2
    fi
    vm_sum=$({ cat "$vm_here/vm-init"; echo "$vm_modules ${VM_MODULES:-}"; } | cksum)
    if [ ! -s "$vm_cache/initrd.cpio" ] || [ "$(cat "$vm_cache/initrd.sum" 2>/dev/null)" != "$vm_sum" ]; then
        vm_initramfs "$vm_cache" || return 2
        echo "$vm_sum" >"$vm_cache/initrd.sum"
    fi
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

# A word quoted for sh.
vm_quote() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

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
# job (job.sh, run in the guest's root as root) before vm_boot.
vm_new() {
    vm_state=$(mktemp -d "$1/run.XXXXXX") || return 2
}

# vm_boot CACHE BIND RESULTS: boots the guest with the job in vm_state. The paths in BIND
# (space-separated) are this machine's, seen at the same place in the guest; RESULTS is
# mounted there read-write. The guest's disks: vda, a fresh ext4 file system of
# VM_DISK_SIZE (default 1G) mounted at /mnt/bench, and VM_EXTRA_DISKS (default 0) blank
# ones of VM_EXTRA_SIZE (256M), vdb on. The modules of the guest's kernel are under its
# /run/guest-kernel (modprobe -d /run/guest-kernel). VM_CPUS (2), VM_MEMORY (1G), VM_TIMEOUT (1800 s) size
# the guest. Returns the job's exit status (2 when the guest did not run it) and removes
# vm_state.
vm_boot() {
    vm_cache=$1 vm_bind=$2 vm_results=$3
    vm_accel=$(vm_accel "$vm_cache") || { vm_cleanup; return 2; }
    vm_disks=""
    vm_i=0
    while [ "$vm_i" -le "${vm_extra:-${VM_EXTRA_DISKS:-0}}" ]; do
        vm_disk=$vm_state/disk$vm_i.img
        [ "$vm_i" = 0 ] && vm_size=${VM_DISK_SIZE:-1G} || vm_size=${VM_EXTRA_SIZE:-256M}
        truncate -s "$vm_size" "$vm_disk" || { vm_cleanup; return 2; }
        vm_disks="$vm_disks $vm_disk"
        vm_i=$((vm_i + 1))
    done
    mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$vm_state/disk0.img" || {
        echo "vm: cannot make the guest's disk in $vm_state" >&2
        vm_cleanup
        return 2
    }
    # The disks are opened O_DIRECT (cache=none) so that the guest's O_DIRECT writes reach
    # the host's disk, as on a hypervisor without a host page cache; where the cache
    # directory's file system refuses O_DIRECT, through the host's cache, said.
    vm_dcache=none
    dd if="$vm_state/disk0.img" of=/dev/null bs=4096 count=1 iflag=direct 2>/dev/null || {
        vm_dcache=writeback
        echo "vm: $vm_cache refuses O_DIRECT: the guest's disks go through this machine's page cache" >&2
    }
    {
        echo "VM_HOSTNAME=$(vm_quote "$(hostname)-${vm_label:-vm}")"
        echo "VM_ADDR=10.0.2.15/24"
        echo "VM_BIND=$(vm_quote "$vm_bind")"
        echo "VM_RESULTS=$(vm_quote "$vm_results")"
        echo "VM_DIR=/mnt/bench"
    } >"$vm_state/vm.conf"
    vm_drives=""
    vm_i=0
    for vm_disk in $vm_disks; do
        vm_drives="$vm_drives -drive file=$vm_disk,format=raw,if=none,id=d$vm_i,cache=$vm_dcache"
        vm_drives="$vm_drives -device virtio-blk-pci,drive=d$vm_i,serial=bm$vm_i"
        vm_i=$((vm_i + 1))
    done
    case $vm_accel in kvm) vm_cpu="-accel kvm -cpu host" ;; *) vm_cpu="-accel tcg,thread=multi -cpu max" ;; esac
    echo "vm: booting the guest ($vm_accel, ${VM_CPUS:-2} CPUs, ${VM_MEMORY:-1G})" >&2
    : >"$vm_state/console.log"
    vm_mods=$vm_cache/kernel/lib/modules
    # shellcheck disable=SC2086 # $vm_cpu and $vm_drives are options, split on purpose.
    timeout -k 10 "${VM_TIMEOUT:-1800}" qemu-system-x86_64 $vm_cpu -smp "${VM_CPUS:-2}" -m "${VM_MEMORY:-1G}" \
        -nodefaults -no-user-config -display none -no-reboot \
        -serial "file:$vm_state/console.log" \
        -kernel "$vm_cache/vmlinux" -initrd "$vm_cache/initrd.cpio" \
        -append "console=ttyS0 quiet loglevel=1 panic=-1" \
        -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
        -virtfs "local,path=$vm_mods,mount_tag=modules,security_model=none,readonly=on" \
        -virtfs "local,path=$vm_state,mount_tag=bmstate,security_model=none" \
        -virtfs "local,path=$vm_results,mount_tag=results,security_model=none" \
        $vm_drives \
        -netdev user,id=n0,ipv6=off,net=10.0.2.0/24 -device virtio-net-pci,netdev=n0,romfile= \
        </dev/null >"$vm_state/qemu.log" 2>&1 &
    vm_pid=$!
    tail -n +1 -f --pid="$vm_pid" "$vm_state/console.log" >&2 &
    vm_tail=$!
    vm_rc=0
    wait "$vm_pid" || vm_rc=$?
    vm_pid=""
    wait "$vm_tail" 2>/dev/null || true
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
    # The token is in the job's environment, never in an argv (the guest's ps), and the job
    # file is its owner's alone (mode 0600, in vm_state, which is 0700).
    umask_was=$(umask)
    umask 077
    {
        echo "cd $(vm_quote "$vm_repo") || exit 2"
        echo "export BENCHMATRIX_TOKEN=$(vm_quote "$vm_token")"
        echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root"
        echo "export BENCHMATRIX_BIN=$(vm_quote "$vm_bin")"
        printf 'exec ./benchmatrix --label %s --results %s --dir /mnt/bench --peer 10.0.2.2' \
            "$(vm_quote "$vm_label")" "$(vm_quote "$vm_results")"
        printf ' --port %s --no-matrix' "$(vm_quote "$vm_port")"
        for vm_a in "$@"; do printf ' %s' "$(vm_quote "$vm_a")"; done
        echo " </dev/null >/dev/console 2>&1"
    } >"$vm_state/job.sh"
    umask "$umask_was"
    vm_boot "$vm_cache" "$vm_repo $vm_bin" "$vm_results"
}

# vm_stacks CACHE REPO BIN RESULTS: fleet/envs/vm-stacks in a guest with three blank disks:
# an LVM volume, an md raid1 and an NFS mount, blkwrite, blkread and fsmeta on each
# (RESULTS/stacks.jsonl), and blkwrite's refusals of a physical volume and an md member
# (RESULTS/refusals.txt). Returns the job's exit status.
vm_stacks() {
    vm_new "$1" || return 2
    {
        echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root"
        echo "export BIN=$(vm_quote "$3") RESULTS=$(vm_quote "$4")"
        echo "exec sh $(vm_quote "$2/fleet/envs/vm-stacks") </dev/null >/dev/console 2>&1"
    } >"$vm_state/job.sh"
    vm_extra=3
    vm_boot "$1" "$2 $3" "$4" || { vm_extra=""; return 1; }
    vm_extra=""
}
