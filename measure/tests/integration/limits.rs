//! The facts a container or VM changes, on fixture trees: cgroup v1 and v2 limits (the
//! tightest along the path to the root), namespaces of one's own, the clocksource, the
//! mitigations and a virtio disk's driver.

use measure::envfacts::Probe;
use serde_json::json;
use std::path::Path;

fn probe(name: &str) -> Probe {
    Probe::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

#[test]
fn cgroup_v2_limits_are_the_tightest_on_the_path_to_the_root() {
    let f = probe("cgroupv2").cgroup_facts();
    assert_eq!(f["cgroup"], "v2");
    // The service's own quota; the slice above it has none (and the root no cpu.max).
    assert_eq!(f["cpu_quota"], "25000/100000");
    assert_eq!(f["cpuset"], "0-1");
    // The service says max, the slice 1 GiB: the slice's binds.
    assert_eq!(f["memory_limit_bytes"], json!(1_073_741_824u64));
    // Per device, per field the tighter of the two levels; `max` fields are left out.
    assert_eq!(
        f["io_throttle"],
        "7:0 wbps=20971520; 8:0 wbps=41943040 wiops=500"
    );
}

#[test]
fn cgroup_v1_in_a_container_whose_mounts_show_its_own_cgroup() {
    let f = probe("cgroupv1").cgroup_facts();
    assert_eq!(f["cgroup"], "v1");
    assert_eq!(f["cpu_quota"], "50000/100000");
    assert_eq!(f["cpuset"], "0");
    assert_eq!(f["memory_limit_bytes"], json!(268_435_456u64));
    assert_eq!(f["io_throttle"], "7:0 wbps=20971520 riops=1000");
}

#[test]
fn no_cgroup_mounts_and_no_limits_say_so() {
    let none = probe("bare").cgroup_facts();
    assert_eq!(none["cgroup"], "none");
    assert!(none.get("cpu_quota").is_none());
    // This machine: whatever it runs under, every fact is there and well formed.
    let live = Probe::system().cgroup_facts();
    if live["cgroup"] != "none" {
        let quota = live["cpu_quota"].as_str().expect("cpu_quota is text");
        assert!(quota == "max" || quota.split_once('/').is_some(), "{quota}");
        assert!(live["memory_limit_bytes"].is_u64() || live["memory_limit_bytes"] == "max");
    }
}

#[test]
fn namespaces_clocksource_and_mitigations() {
    let p = probe("cgroupv2");
    // uts is the initial one (its fixed number); pid and ipc are the container's own.
    assert_eq!(p.namespaces(), "ipc,pid");
    assert_eq!(p.clocksource().as_deref(), Some("kvm-clock"));
    let m = p.mitigations();
    assert_eq!(m["meltdown"], "Mitigation: PTI");
    assert_eq!(m["l1tf"], "Not affected");
    assert_eq!(probe("bare").namespaces(), "none");
    let facts = p.machine();
    for key in [
        "hypervisor",
        "clocksource",
        "namespaces",
        "cgroup",
        "cpu_quota",
        "mitigations",
    ] {
        assert!(facts.contains_key(key), "machine facts lack {key}");
        assert!(
            measure::envfacts::FACT_KEYS.contains(&key),
            "{key} is no fact key"
        );
    }
}

#[test]
fn a_virtio_disk_names_its_driver() {
    let p = probe("kvm");
    let root = p
        .path_facts(Path::new("/var/tmp/x"))
        .expect("facts for /var/tmp");
    assert_eq!(root.stack[1].name, "vda");
    assert_eq!(root.stack[1].driver.as_deref(), Some("virtio_blk"));
    assert_eq!(root.to_info()["block_stack"][1]["driver"], "virtio_blk");
    // A partition has no driver of its own.
    assert_eq!(root.stack[0].driver, None);
}
