//! blkread on real block devices and file systems (root): ext4, xfs and btrfs on loop
//! devices (their block stack named, the loop device's backing file and direct-io setting),
//! a mounted device read in place, a read-only mount, and the device-mapper and md layers
//! where the kernel has them (skipped with the reason where it does not; measure's fixtures
//! cover them, and NFS, without the kernel).

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use testkit::mount::Mount;

/// The kernel name of a device path (`/dev/loop3` -> `loop3`).
fn kname(dev: &str) -> String {
    Path::new(dev)
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// Whether the loop device reaches its backing file with direct I/O, as sysfs says.
fn loop_dio(dev: &str) -> Option<bool> {
    let s = std::fs::read_to_string(format!("/sys/block/{}/loop/dio", kname(dev))).ok()?;
    Some(s.trim() == "1")
}

/// The layer named `name` in begin's block stack.
fn layer<'a>(begin: &'a Value, name: &str) -> Option<&'a Value> {
    begin["info"]["block_stack"]
        .as_array()?
        .iter()
        .find(|l| l["name"] == name)
}

/// blkread --create on the file system `fs` made on a loop device: its facts, then the same
/// file read after the file system is mounted read-only.
fn read_on(mkfs: &str, fs: &str, mib: u64) {
    let Some(dev) = fs_loop(mib, mkfs) else {
        return;
    };
    let Some(m) = mounted(&dev.dev, "rw") else {
        return;
    };
    let f = m.path().join("scratch");
    let r = blkread(&[
        "--direct",
        "--random",
        "--iodepth",
        "4",
        "--create",
        "8M",
        arg(&f),
    ]);
    assert_eq!(r.code, 0, "{fs}: {}", r.stderr);
    assert!(!f.exists(), "{fs}: the scratch file is removed");
    let b = r.begin();
    assert_eq!(b["info"]["fs_type"], fs, "{b}");
    assert_eq!(b["info"]["direct_effective"], true, "{fs}: {b}");
    assert_eq!(r.value("read_count"), 2048.0, "{fs}");
    // The stack names the loop device, its backing file and whether direct I/O reaches it.
    let l = layer(&b, &kname(&dev.dev)).unwrap_or_else(|| panic!("{fs}: no {} in {b}", dev.dev));
    assert_eq!(l["kind"], "loop");
    assert_eq!(
        l["detail"].as_str(),
        dev.file().to_str(),
        "{fs}: the backing file"
    );
    let dio = loop_dio(&dev.dev);
    assert_eq!(l["direct_io"].as_bool(), dio, "{fs}: {l}");
    if dio == Some(false) {
        let note = b["info"]["direct_note"].as_str().unwrap_or_default();
        assert!(
            note.contains("page cache") && note.contains("--direct-io"),
            "{fs}: {b}"
        );
    }
    assert!(b["info"]["scheduler"].is_string(), "{fs}: {b}");
    // A file kept, then the file system remounted read-only: read, never written.
    let kept = m.path().join("kept");
    assert_eq!(blkread(&["--create", "4M", "--keep", arg(&kept)]).code, 0);
    assert!(
        testkit::cmd("mount", &["-o", "remount,ro", arg(m.path())]).is_ok(),
        "{fs}: remount ro"
    );
    let r = blkread(&["--direct", arg(&kept)]);
    assert_eq!(r.code, 0, "{fs} read-only: {}", r.stderr);
    assert_eq!(r.value("read_bytes"), 4194304.0);
    let r = blkread(&["--create", "1M", arg(&m.path().join("new"))]);
    assert_eq!(r.code, 2, "{fs}: --create on a read-only mount");
    assert!(r.stderr.contains("Read-only"), "{fs}: {}", r.stderr);
    drop(m);
}

#[test]
fn ext4_on_a_loop_device() {
    read_on("mkfs.ext4 -q -F", "ext4", 64);
}

#[test]
fn xfs_on_a_loop_device() {
    // mkfs.xfs wants 300 MiB at least; the backing file is sparse.
    read_on("mkfs.xfs -q -f", "xfs", 320);
}

#[test]
fn btrfs_on_a_loop_device_names_its_device() {
    read_on("mkfs.btrfs -q -f", "btrfs", 160);
}

#[test]
fn a_mounted_device_is_read_in_place_and_left_as_it_was() {
    let Some(dev) = fs_loop(64, "mkfs.ext4 -q -F") else {
        return;
    };
    // Mounted read-only: a read-write ext4 writes to its device by itself (lazy inode table
    // initialisation, the journal), which would hide a write of ours.
    let Some(m) = mounted(&dev.dev, "ro") else {
        return;
    };
    let sum = || {
        let out = Command::new("sha256sum").arg(&dev.dev).output().unwrap();
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_string()
    };
    let before = sum();
    let r = blkread(&["--direct", "-b", "64k", &dev.dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.value("read_bytes"),
        (64u64 << 20) as f64,
        "all of the device by default"
    );
    let b = r.begin();
    assert_eq!(b["info"]["target_kind"], "block-device");
    assert_eq!(b["info"]["device_kind"], "loop");
    assert_eq!(b["info"]["loop_backing_file"].as_str(), dev.file().to_str());
    assert_eq!(b["info"]["loop_direct_io"].as_bool(), loop_dio(&dev.dev));
    assert_eq!(sum(), before, "the device is unchanged");
    drop(m);
}

#[test]
fn a_loop_device_with_direct_io_on_says_o_direct_reaches_the_disk() {
    let Some(dev) = loop_dev(16, &["--direct-io=on"]) else {
        return;
    };
    let r = blkread(&["--direct", "-s", "4M", &dev.dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let b = r.begin();
    let dio = loop_dio(&dev.dev);
    assert_eq!(b["info"]["loop_direct_io"].as_bool(), dio, "{b}");
    if dio == Some(true) {
        assert!(b["info"].get("direct_note").is_none(), "{b}");
    } else {
        testkit::skip("losetup --direct-io=on fell back to buffered I/O on this backing file");
    }
}

/// A device-mapper linear mapping over a loop device, removed on drop.
struct Linear(String);

impl Drop for Linear {
    fn drop(&mut self) {
        sh(&format!("dmsetup remove {} 2>/dev/null", self.0));
    }
}

#[test]
fn a_device_mapper_layer_is_named() {
    if !Path::new("/dev/mapper/control").exists() {
        testkit::skip(
            "this kernel has no device-mapper (/dev/mapper/control): LVM/dm layers are covered by measure's fixtures",
        );
        return;
    }
    if !testkit::need_tool("dmsetup") {
        return;
    }
    let Some(dev) = loop_dev(32, &[]) else { return };
    let name = format!("bmread-{}", std::process::id());
    let table = format!("0 {} linear {} 0", 32 * 2048, dev.dev);
    if !sh(&format!("dmsetup create {name} --table '{table}'")) {
        testkit::skip("dmsetup create failed");
        return;
    }
    let linear = Linear(name.clone());
    let mapped = format!("/dev/mapper/{name}");
    assert!(sh(&format!("mkfs.ext4 -q -F {mapped}")));
    let m = Mount::new(&mapped, "rw").unwrap();
    let r = blkread(&["--create", "4M", arg(&m.path().join("f"))]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let stack = r.begin()["info"]["block_stack"].clone();
    assert_eq!(stack[0]["kind"], "dm", "{stack}");
    assert_eq!(stack[0]["detail"], name.as_str());
    assert!(
        layer(&r.begin(), &kname(&dev.dev)).is_some(),
        "the loop device beneath: {stack}"
    );
    drop(m);
    drop(linear);
}

#[test]
fn an_md_layer_is_named() {
    if !Path::new("/proc/mdstat").exists() {
        testkit::skip(
            "this kernel has no md (no /proc/mdstat): md layers are covered by measure's fixtures",
        );
        return;
    }
    if !testkit::need_tool("mdadm") {
        return;
    }
    let (Some(a), Some(b)) = (loop_dev(32, &[]), loop_dev(32, &[])) else {
        return;
    };
    let md = format!("/dev/md/bmread{}", std::process::id());
    let create = format!(
        "mdadm --create {md} --run --quiet --level=1 --raid-devices=2 --metadata=1.2 --assume-clean {} {} 2>/dev/null",
        a.dev, b.dev
    );
    if !sh(&create) {
        testkit::skip("mdadm --create failed");
        return;
    }
    let r = blkread(&["--direct", "-s", "4M", &md]);
    sh(&format!("mdadm --stop {md} 2>/dev/null"));
    sh(&format!(
        "mdadm --zero-superblock {} {} 2>/dev/null",
        a.dev, b.dev
    ));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.begin()["info"]["device_kind"], "md");
}
