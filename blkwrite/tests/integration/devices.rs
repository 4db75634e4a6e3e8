//! blkwrite on real block devices (testkit's loop devices over scratch files, detached on drop):
//! writes a blank device with --force-device, and refuses one that holds a file system, swap,
//! an LVM2 PV, a partition table, partitions, or is mounted, each naming what it found.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::os::unix::fs::FileExt;

fn head(dev: &str, n: usize) -> Vec<u8> {
    let f = std::fs::File::open(dev).unwrap();
    let mut b = vec![0u8; n];
    f.read_exact_at(&mut b, 0).unwrap();
    b
}

#[test]
fn blank_device_needs_force_device_then_is_written_and_verified() {
    let Some(l) = loop_dev(32, &[]) else { return };
    let r = blkwrite(&[&l.dev]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--force-device"), "{}", r.stderr);
    assert_eq!(r.summary()["status"], "failed");
    let r = blkwrite(&[
        "--force-device",
        "--direct",
        "-b",
        "1M",
        "--verify",
        "--seed",
        "3",
        &l.dev,
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.value("written_bytes"),
        (32 << 20) as f64,
        "the whole device by default"
    );
    assert_eq!(r.value("verify_bad_block_count"), 0.0);
    let b = r.begin();
    assert_eq!(b["info"]["target_kind"], "block-device");
    assert_eq!(b["info"]["device_kind"], "loop");
    assert_eq!(b["info"]["logical_block_size"], 512);
    assert!(b["info"]["rotational"].is_boolean());
    assert_eq!(b["info"]["direct_effective"], true);
    assert!(l.dev.ends_with(b["info"]["device"].as_str().unwrap()));
    // The backing file holds what the device was given, byte for byte; dd reads the same.
    let r = blkwrite(&["--verify-only", "--seed", "3", "-b", "1M", &l.dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(std::fs::read(l.file()).unwrap() == head(&l.dev, 32 << 20));
    // Its own random data does not look like a signature: a second run is allowed.
    let r = blkwrite(&["--force-device", "-s", "1M", &l.dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let r = blkwrite(&["--force-device", "-s", "64M", &l.dev]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("do not fit"), "{}", r.stderr);
}

#[test]
fn four_k_sector_device_refuses_small_direct_writes() {
    let Some(l) = loop_dev(16, &["-b", "4096"]) else {
        return;
    };
    let r = blkwrite(&[
        "--force-device",
        "--direct",
        "-b",
        "512",
        "-s",
        "1M",
        &l.dev,
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("multiple of 4096"), "{}", r.stderr);
    let r = blkwrite(&["--force-device", "--direct", "-b", "4k", "-s", "1M", &l.dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.begin()["info"]["logical_block_size"], 4096);
}

fn refused(dev: &str, word: &str) {
    let before = head(dev, 1 << 17);
    let r = blkwrite(&["--force-device", "-s", "1M", dev]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("refusing"), "{}", r.stderr);
    assert!(r.stderr.contains(word), "expected {word}: {}", r.stderr);
    assert_eq!(r.summary()["status"], "failed");
    assert!(head(dev, 1 << 17) == before, "nothing written");
}

#[test]
fn file_systems_and_signatures_are_refused() {
    for (mkfs, word) in [
        ("mkfs.ext4 -q -F", "ext4 ("),
        ("mkfs.xfs -q -f", "xfs"),
        ("mkfs.btrfs -q -f", "btrfs"),
        ("mkswap", "swap"),
        ("pvcreate -q -ff -y", "LVM2"),
    ] {
        let Some(l) = fs_loop(320, mkfs) else {
            continue;
        };
        refused(&l.dev, word);
        assert!(
            blkwrite(&["--force-device", "-s", "1M", &l.dev])
                .stderr
                .contains("wipefs")
        );
    }
}

#[test]
fn partition_tables_and_partitions_are_refused() {
    if !testkit::need_tool("sfdisk") {
        return;
    }
    for label in ["gpt", "dos"] {
        let Some(l) = loop_dev(16, &[]) else { return };
        assert!(sh(&format!(
            "echo 'label: {label}' | sfdisk -q --no-reread {} >/dev/null 2>&1",
            l.dev
        )));
        refused(&l.dev, if label == "gpt" { "gpt (" } else { "dos (" });
    }
    // With a partition the kernel knows about: refused for its partitions.
    let Some(l) = loop_dev(16, &["-P"]) else {
        return;
    };
    assert!(sh(&format!(
        "echo ',,L' | sfdisk -q {} >/dev/null 2>&1; partx -u {} 2>/dev/null; true",
        l.dev, l.dev
    )));
    rescan(&l.dev);
    let name = l.dev.trim_start_matches("/dev/");
    if std::path::Path::new(&format!("/sys/class/block/{name}p1")).exists() {
        refused(&l.dev, "partitions");
    } else {
        refused(&l.dev, "dos (");
    }
}

#[test]
fn mounted_device_is_refused() {
    let Some(l) = fs_loop(16, "mkfs.ext4 -q -F") else {
        return;
    };
    let Some(m) = mounted(&l.dev, "rw") else {
        return;
    };
    let r = blkwrite(&["--force-device", "-s", "1M", &l.dev]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("mounted on"), "{}", r.stderr);
    assert!(
        r.stderr.contains(m.path().to_str().unwrap()),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("umount"), "{}", r.stderr);
}

#[test]
fn device_mapper_holder_is_refused() {
    if !std::path::Path::new("/dev/mapper/control").exists() {
        testkit::skip("no device-mapper in this kernel");
        return;
    }
    if !testkit::need_tool("dmsetup") {
        return;
    }
    let Some(l) = loop_dev(16, &[]) else { return };
    let name = format!("blkwrite-test-{}", std::process::id());
    if !sh(&format!(
        "dmsetup create --noudevsync {name} --table '0 2048 linear {} 0' 2>/dev/null",
        l.dev
    )) {
        testkit::skip("dmsetup create failed");
        return;
    }
    struct Dm(String);
    impl Drop for Dm {
        fn drop(&mut self) {
            sh(&format!(
                "dmsetup remove --noudevsync {} 2>/dev/null",
                self.0
            ));
        }
    }
    let _dm = Dm(name.clone());
    let r = blkwrite(&["--force-device", "-s", "1M", &l.dev]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("in use by") && r.stderr.contains(&name),
        "{}",
        r.stderr
    );
}

#[test]
fn a_missing_device_name_is_not_created_under_dev() {
    let name = format!("/dev/blkwrite-nonexistent-{}", std::process::id());
    let r = blkwrite(&["-s", "1M", &name]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("/dev"), "{}", r.stderr);
    assert!(!std::path::Path::new(&name).exists());
}
