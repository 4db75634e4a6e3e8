# fleet/envs/seed-dom0.sh: the seed table's dom0 column (sourced after vm.sh and seed.sh).
# KVM has no dom0, the privileged guest of Xen that holds the drivers and the other guests'
# back ends; what stands for it is this machine measured while a guest's machinery is up
# beside it: an idle QEMU guest, booted as the others are (same accelerator, CPUs and
# memory), its NIC on the table's bridge through the tap, waiting for a file in its state
# directory. bare is the same machine with no guest. The idle guest is stopped by
# seed_dom0_stop on every path (seed_cleanup calls it).

seed_dom0_pid="" seed_dom0_state=""

# seed_dom0_start CACHE RESULTS REPO BIN: boots the idle guest in the background and waits
# (up to VM_BOOT_WAIT, 300 s) until its job has started. Returns 1, said, when it did not.
seed_dom0_start() {
    vm_new "$1" || return 1
    seed_dom0_state=$vm_state
    # The job: wait until the host creates `stop` beside it (the state directory is the
    # guest's /run/benchmatrix-vm), saying first that the guest is up.
    # shellcheck disable=SC2016 # "$1" is the job's shell's.
    vm_job sh -c ': >"$1/up" && while [ ! -e "$1/stop" ]; do sleep 1; done' sh /run/benchmatrix-vm || return 1
    vm_netns=$seed_ns vm_tap=bmtap0 vm_addr=$seed_guest vm_label=dom0-idle
    vm_facts="seed_column=dom0 (idle guest)"
    # The guest in a subshell of its own, whose trap stops QEMU (by its pid) when the
    # subshell is ended.
    (
        trap 'vm_cleanup; exit 143' TERM
        vm_boot "$1" "$2" "$3" "$4"
    ) >/dev/null 2>&1 &
    seed_dom0_pid=$!
    vm_state="" vm_netns="" vm_tap="" vm_addr="" vm_facts="" vm_label=""
    seed_i=0
    until [ -e "$seed_dom0_state/up" ]; do
        seed_i=$((seed_i + 1))
        if [ "$seed_i" -gt "$((${VM_BOOT_WAIT:-300} * 10))" ] || ! kill -0 "$seed_dom0_pid" 2>/dev/null; then
            echo "seed: dom0: the idle guest beside the host did not come up" >&2
            seed_dom0_stop
            return 1
        fi
        sleep 0.1
    done
}

# Stops the idle guest: asks it to power off, then ends its subshell (and QEMU) by its pid
# where it has not within 30 s, and removes its state directory.
seed_dom0_stop() {
    [ -n "$seed_dom0_pid" ] || return 0
    [ -z "$seed_dom0_state" ] || [ ! -d "$seed_dom0_state" ] || : >"$seed_dom0_state/stop" 2>/dev/null || true
    seed_i=0
    while kill -0 "$seed_dom0_pid" 2>/dev/null && [ "$seed_i" -lt 300 ]; do
        sleep 0.1
        seed_i=$((seed_i + 1))
    done
    kill "$seed_dom0_pid" 2>/dev/null || true
    wait "$seed_dom0_pid" 2>/dev/null || true
    [ -z "$seed_dom0_state" ] || rm -rf "$seed_dom0_state"
    seed_dom0_pid="" seed_dom0_state=""
}
