//! The environment probe on fixture copies of /proc and /sys from several kinds of machine.

use measure::envfacts::{Layer, Probe};
use std::path::Path;

fn probe(name: &str) -> Probe {
    Probe::at(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures")
            .join(name),
    )
}

fn kinds(stack: &[Layer]) -> Vec<(&str, &str)> {
    stack
        .iter()
        .map(|l| (l.name.as_str(), l.kind.as_str()))
        .collect()
}

#[test]
fn bare_metal() {
    let p = probe("bare");
    assert_eq!(p.hostname(), "metal1");
    assert_eq!(p.kernel().as_deref(), Some("6.1.0-28-amd64"));
    assert_eq!(
        p.cpu_model().as_deref(),
        Some("Intel(R) Core(TM) i7-8700 CPU @ 3.20GHz")
    );
    assert_eq!(p.cpu_count(), 2);
    assert_eq!(p.memory_bytes(), Some(32768000 * 1024));
    assert_eq!(p.virtualization(), "none");

    let root = p.path_facts(Path::new("/home/user/testfile")).unwrap();
    assert_eq!(root.fs_type, "ext4");
    assert_eq!(root.mount_point, "/");
    assert_eq!(
        kinds(&root.stack),
        [("nvme0n1p2", "partition"), ("nvme0n1", "disk")]
    );
    assert_eq!(root.stack[1].rotational, Some(false));
    assert_eq!(root.stack[1].logical_block_size, Some(512));

    let data = p.path_facts(Path::new("/srv/data/x")).unwrap();
    assert_eq!(data.fs_type, "xfs");
    assert_eq!(
        kinds(&data.stack),
        [("md0", "md"), ("sda", "disk"), ("sdb", "disk")]
    );
    assert_eq!(data.stack[0].detail.as_deref(), Some("raid1"));

    let tmp = p.path_facts(Path::new("/tmp/f")).unwrap();
    assert_eq!(tmp.fs_type, "tmpfs");
    assert!(tmp.stack.is_empty());
}

#[test]
fn kvm_guest() {
    let p = probe("kvm");
    assert_eq!(p.cpu_count(), 4);
    assert_eq!(
        p.cpu_model().as_deref(),
        Some("AMD EPYC 7763 64-Core Processor")
    );
    assert_eq!(p.vm().as_deref(), Some("kvm"));
    assert_eq!(p.container(), None);
    assert_eq!(p.virtualization(), "kvm");
    let root = p.path_facts(Path::new("/var/tmp/x")).unwrap();
    assert_eq!(kinds(&root.stack), [("vda1", "partition"), ("vda", "disk")]);
    assert_eq!(root.stack[1].rotational, Some(true));
    let img = p.path_facts(Path::new("/mnt/img/f")).unwrap();
    assert_eq!(kinds(&img.stack), [("loop3", "loop")]);
    assert_eq!(
        img.stack[0].detail.as_deref(),
        Some("/var/lib/images/disk.img")
    );
    let info = img.to_info();
    assert_eq!(info["fs_type"], "ext4");
    assert_eq!(info["block_stack"][0]["kind"], "loop");
    // Its backing file is read and written through the page cache (losetup's default).
    assert_eq!(img.stack[0].direct_io, Some(false));
    assert_eq!(info["block_stack"][0]["direct_io"], false);
    assert_eq!(root.stack[1].direct_io, None);
    // A btrfs mount's device number is anonymous (0:45): its devices come from
    // /sys/fs/btrfs, each a stack of its own (a features directory lists none).
    let pool = p.path_facts(Path::new("/srv/pool/f")).unwrap();
    assert_eq!(pool.fs_type, "btrfs");
    assert_eq!(kinds(&pool.stack), [("vdb", "disk"), ("vdc", "disk")]);
    assert_eq!(pool.stack[1].logical_block_size, Some(4096));
}

#[test]
fn xen_pv_guest_with_lvm_and_nfs() {
    let p = probe("xenpv");
    assert_eq!(p.virtualization(), "xen-pv");
    assert_eq!(p.memory_bytes(), Some(2048000 * 1024));
    let root = p.path_facts(Path::new("/srv/blockfile")).unwrap();
    assert_eq!(root.source, "/dev/mapper/vg0-root");
    assert_eq!(
        kinds(&root.stack),
        [("dm-0", "lvm"), ("xvda2", "partition"), ("xvda", "disk")]
    );
    assert_eq!(root.stack[0].detail.as_deref(), Some("vg0-root"));
    let (dm, lower) = p.block_layer("dm-0");
    assert_eq!(
        (dm.kind.as_str(), dm.detail.as_deref()),
        ("lvm", Some("vg0-root"))
    );
    assert_eq!(lower, ["xvda2"]);
    let (part, disk) = p.block_layer("xvda2");
    assert_eq!(
        (part.kind.as_str(), disk),
        ("partition", vec!["xvda".to_string()])
    );
    let nas = p.path_facts(Path::new("/mnt/nas/file")).unwrap();
    assert_eq!(nas.fs_type, "nfs4");
    assert_eq!(kinds(&nas.stack), [("nas:/export/home", "nfs")]);
    // The options that shape an NFS mount's figures, and its server's address.
    assert_eq!(
        nas.stack[0].detail.as_deref(),
        Some("vers=4.2,rsize=1048576,wsize=1048576,hard,proto=tcp,sec=sys,addr=10.0.0.2")
    );
}

#[test]
fn xen_dom0_and_container() {
    assert_eq!(probe("xendom0").virtualization(), "xen-dom0");
    let c = probe("docker");
    assert_eq!(c.container().as_deref(), Some("docker"));
    assert_eq!(c.vm().as_deref(), Some("kvm"));
    assert_eq!(c.virtualization(), "docker");
    let facts = c.machine();
    assert_eq!(facts["vm"], "kvm");
    assert_eq!(facts["container"], "docker");
}

#[test]
fn missing_files_give_defaults_not_panics() {
    let p = Probe::at("/nonexistent-root");
    assert_eq!(p.hostname(), "localhost");
    assert_eq!(p.kernel(), None);
    assert_eq!(p.virtualization(), "none");
    assert!(p.path_facts(Path::new("/x")).is_none());
}
