//! blkwrite refuses a device that holds anything the system's prober (libblkid) knows: an
//! image of every file system and image tool on the machine, made on a real loop device, is
//! refused with libblkid's name for it, and the device is unchanged afterwards.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::hash::{DefaultHasher, Hasher};
use std::io::Read;

/// (program, command making the image on `{dev}` from the files in `{dir}`, libblkid's type,
/// device MiB). Each is a Debian package's mkfs or image tool.
const MAKERS: &[(&str, &str, &str, u64)] = &[
    ("mkfs.ext2", "mkfs.ext2 -q -F {dev}", "ext2", 64),
    ("mkfs.ext3", "mkfs.ext3 -q -F {dev}", "ext3", 64),
    ("mkfs.ext4", "mkfs.ext4 -q -F {dev}", "ext4", 64),
    ("mkfs.xfs", "mkfs.xfs -q -f {dev}", "xfs", 320),
    ("mkfs.btrfs", "mkfs.btrfs -q -f {dev}", "btrfs", 320),
    ("mkfs.f2fs", "mkfs.f2fs -q -f {dev}", "f2fs", 320),
    ("mkfs.vfat", "mkfs.vfat {dev}", "vfat", 64),
    ("mkfs.exfat", "mkfs.exfat {dev}", "exfat", 64),
    ("mkfs.ntfs", "mkfs.ntfs -F -Q -q {dev}", "ntfs", 64),
    ("mkfs.jfs", "mkfs.jfs -q {dev}", "jfs", 64),
    ("mkfs.nilfs2", "mkfs.nilfs2 -q -f {dev}", "nilfs2", 320),
    ("mkfs.reiserfs", "mkfs.reiserfs -q -f {dev}", "reiserfs", 64),
    ("mkfs.udf", "mkfs.udf {dev}", "udf", 64),
    ("mkfs.minix", "mkfs.minix {dev}", "minix", 64),
    ("mkfs.bfs", "mkfs.bfs {dev}", "bfs", 16),
    ("mkswap", "mkswap {dev}", "swap", 16),
    ("mkfs.cramfs", "mkfs.cramfs {dir} {dev}", "cramfs", 16),
    (
        "mksquashfs",
        "mksquashfs {dir} {dev} -noappend -quiet",
        "squashfs",
        16,
    ),
    (
        "genisoimage",
        "genisoimage -quiet -o {dev} {dir}",
        "iso9660",
        16,
    ),
    ("mkfs.erofs", "mkfs.erofs {dev} {dir}", "erofs", 16),
    (
        "cryptsetup",
        "cryptsetup luksFormat -q --batch-mode --pbkdf pbkdf2 --pbkdf-force-iterations 1000 \
         --key-file {dir}/f {dev}",
        "crypto_LUKS",
        32,
    ),
];

/// A hash of the whole device's content.
fn digest(dev: &str) -> u64 {
    let mut f = std::fs::File::open(dev).unwrap();
    let mut h = DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h.finish();
        }
        h.write(&buf[..n]);
    }
}

#[test]
fn every_file_system_and_image_tool_on_the_machine_is_refused() {
    if !testkit::need_root("losetup") || !testkit::need_tool("wipefs") {
        return;
    }
    let src = tempfile::tempdir().unwrap();
    std::fs::write(src.path().join("f"), b"a file for the image tools\n").unwrap();
    let mut missing = Vec::new();
    let mut tried = 0;
    for &(program, make, kind, mib) in MAKERS {
        if !sh(&format!("command -v {program} >/dev/null")) {
            missing.push(program);
            continue;
        }
        let Some(l) = loop_dev(mib, &[]) else { return };
        let cmd = make
            .replace("{dev}", &l.dev)
            .replace("{dir}", &src.path().to_string_lossy());
        assert!(sh(&format!("{cmd} >/dev/null 2>&1")), "{cmd} failed");
        let before = digest(&l.dev);
        let r = blkwrite(&["--force-device", "-s", "1M", &l.dev]);
        assert_eq!(r.code, 2, "{program}: {}", r.stderr);
        assert!(r.stderr.contains("refusing"), "{program}: {}", r.stderr);
        assert!(
            r.stderr.contains(&format!("{kind} (")) && r.stderr.contains("libblkid"),
            "{program}: libblkid's name {kind} in {}",
            r.stderr
        );
        assert_eq!(r.summary()["status"], "failed");
        assert_eq!(digest(&l.dev), before, "{program}: the device is unchanged");
        tried += 1;
    }
    if !missing.is_empty() {
        testkit::skip(&format!(
            "signatures: not on this machine, not tried: {}",
            missing.join(", ")
        ));
    }
    assert!(tried > 0, "at least one maker was tried");
}

#[test]
fn a_blank_device_names_the_prober_in_begin() {
    if !testkit::need_tool("wipefs") {
        return;
    }
    let Some(l) = loop_dev(8, &[]) else { return };
    let r = blkwrite(&["--force-device", "-s", "1M", &l.dev]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let prober = r.begin()["info"]["signature_probe"].clone();
    assert!(
        prober.as_str().unwrap().starts_with("libblkid (wipefs"),
        "{prober}"
    );
}
