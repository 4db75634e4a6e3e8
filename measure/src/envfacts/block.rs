//! The block stack beneath a mount, from /sys: each layer (dm/LVM, dm-crypt, multipath, md,
//! loop, partition, disk, nbd, iSCSI, zram, rbd) with its logical block size and whether it
//! rotates, walked down through slaves and partitions; a network file system is one layer;
//! btrfs, whose mounts have an anonymous device number, has each of its devices
//! (/sys/fs/btrfs/UUID/devices) as a stack of its own; a loop device says whether it reaches
//! its backing file with direct I/O.

use super::Probe;
use super::mountinfo::MountLine;
use std::path::Path;

/// One layer of the block stack beneath a mount.
#[derive(Clone, Debug, PartialEq)]
pub struct Layer {
    /// Kernel device name (`dm-0`, `sda2`, `md0`, `loop3`), or the NFS/CIFS source.
    pub name: String,
    /// `lvm`, `crypt`, `dm`, `md`, `loop`, `partition`, `disk`, `nbd`, `iscsi`, `zram`, `nfs`...
    pub kind: String,
    /// The volume name, RAID level or backing file; for a network file system, the mount
    /// options that shape its figures.
    pub detail: Option<String>,
    pub logical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    /// For a loop device: whether it reads and writes its backing file with direct I/O
    /// (`losetup --direct-io=on`); without it the host's page cache is beneath O_DIRECT.
    pub direct_io: Option<bool>,
    /// The driver of a whole disk's device (`virtio_blk`, `sd`, `nvme`, `xen_blkfront`):
    /// what a VM's disk is reached through.
    pub driver: Option<String>,
}

/// The mount options of a network file system that shape its figures (protocol version,
/// transport, transfer sizes, hard or soft, caching, security, the server's address), in
/// the kernel's order: `vers=4.2,rsize=1048576,wsize=1048576,hard,proto=tcp,sec=sys,addr=...`.
fn net_options(options: &str) -> Option<String> {
    const KEEP: &[&str] = &[
        "vers", "proto", "rsize", "wsize", "nconnect", "hard", "soft", "sync", "noac", "actimeo",
        "cache", "sec", "addr", "trans",
    ];
    let kept: Vec<&str> = options
        .split(',')
        .filter(|o| KEEP.contains(&o.split_once('=').map_or(*o, |(k, _)| k)))
        .collect();
    (!kept.is_empty()).then(|| kept.join(","))
}

impl Probe {
    /// The layers beneath mount `m`, top first.
    pub(super) fn stack_for(&self, m: &MountLine) -> Vec<Layer> {
        let net = ["nfs", "nfs4", "cifs", "smb3", "9p", "ceph", "glusterfs"];
        if net.contains(&m.fs_type.as_str()) || m.fs_type.starts_with("fuse") {
            let kind = if m.fs_type.starts_with("nfs") {
                "nfs".to_string()
            } else {
                m.fs_type.clone()
            };
            return vec![Layer {
                name: m.source.clone(),
                kind,
                detail: net_options(&m.options),
                logical_block_size: None,
                rotational: None,
                direct_io: None,
                driver: None,
            }];
        }
        if m.fs_type == "btrfs" {
            let mut out = Vec::new();
            for dev in self.btrfs_devices(&m.source) {
                self.walk(&dev, &mut out, 0);
            }
            return out;
        }
        let Some(uevent) = self.read(&format!("sys/dev/block/{}/uevent", m.device)) else {
            return Vec::new();
        };
        let Some(name) = uevent.lines().find_map(|l| l.strip_prefix("DEVNAME=")) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        self.walk(name, &mut out, 0);
        out
    }

    fn walk(&self, name: &str, out: &mut Vec<Layer>, depth: usize) {
        if depth > 16 {
            return;
        }
        let (layer, lower) = self.block_layer(name);
        out.push(layer);
        for l in lower {
            self.walk(&l, out, depth + 1);
        }
    }

    /// One block device (`dm-0`, `sda2`, `md0`, `loop3`) as a layer, and the devices directly
    /// beneath it: a partition's disk, a device-mapper or md device's slaves.
    pub fn block_layer(&self, name: &str) -> (Layer, Vec<String>) {
        let dir = format!("sys/class/block/{name}");
        let num = |rel: &str| {
            self.read(&format!("{dir}/{rel}"))
                .and_then(|s| s.parse::<u64>().ok())
        };
        let mut lower: Vec<String> = Vec::new();
        let (kind, detail) = if let Some(dm) = self.read(&format!("{dir}/dm/name")) {
            let uuid = self.read(&format!("{dir}/dm/uuid")).unwrap_or_default();
            let kind = if uuid.starts_with("LVM-") {
                "lvm"
            } else if uuid.starts_with("CRYPT-") {
                "crypt"
            } else if uuid.starts_with("mpath-") {
                "multipath"
            } else {
                "dm"
            };
            lower = self.list(&format!("{dir}/slaves"));
            (kind.to_string(), Some(dm))
        } else if let Some(level) = self.read(&format!("{dir}/md/level")) {
            lower = self.list(&format!("{dir}/slaves"));
            ("md".into(), Some(level))
        } else if let Some(back) = self.read(&format!("{dir}/loop/backing_file")) {
            ("loop".into(), Some(back))
        } else if self.exists(&format!("{dir}/partition")) {
            if let Some(parent) = self.partition_parent(name) {
                lower.push(parent);
            }
            ("partition".into(), None)
        } else {
            (self.whole_disk_kind(name, &dir).into(), None)
        };
        let layer = Layer {
            name: name.to_string(),
            kind,
            detail,
            logical_block_size: num("queue/logical_block_size"),
            rotational: num("queue/rotational").map(|r| r == 1),
            direct_io: num("loop/dio").map(|d| d == 1),
            driver: self.driver_of(&dir),
        };
        (layer, lower)
    }

    /// The devices of the btrfs whose mount source is `source` (`/dev/loop3`): the file
    /// system in /sys/fs/btrfs that lists the source's device among its own, else the only
    /// btrfs there is.
    fn btrfs_devices(&self, source: &str) -> Vec<String> {
        let named = if self.live() {
            std::fs::canonicalize(source).unwrap_or_else(|_| source.into())
        } else {
            source.into()
        };
        let dev = named.file_name().map(|n| n.to_string_lossy().into_owned());
        let filesystems: Vec<Vec<String>> = self
            .list("sys/fs/btrfs")
            .iter()
            .map(|uuid| self.list(&format!("sys/fs/btrfs/{uuid}/devices")))
            .filter(|devs| !devs.is_empty())
            .collect();
        if let Some(devs) = filesystems
            .iter()
            .find(|devs| dev.as_ref().is_some_and(|d| devs.contains(d)))
        {
            return devs.clone();
        }
        match filesystems.as_slice() {
            [only] => only.clone(),
            _ => Vec::new(),
        }
    }

    /// The kind of a device at the bottom of the stack: an iSCSI session's disk, a network
    /// block device (nbd, rbd), zram, or a local disk.
    fn whole_disk_kind(&self, name: &str, dir: &str) -> &'static str {
        let real = std::fs::canonicalize(self.path(dir))
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if real.contains("/session") {
            "iscsi"
        } else if name.starts_with("nbd") {
            "nbd"
        } else if name.starts_with("zram") {
            "zram"
        } else if name.starts_with("rbd") {
            "rbd"
        } else {
            "disk"
        }
    }

    /// The name of the driver bound to the device of the block device at `dir` (its
    /// `device/driver` link), where it has one.
    fn driver_of(&self, dir: &str) -> Option<String> {
        let link = std::fs::read_link(self.path(&format!("{dir}/device/driver"))).ok()?;
        Some(link.file_name()?.to_string_lossy().into_owned())
    }

    /// The whole disk a partition belongs to: the parent directory of its sysfs node, or,
    /// in a tree without symlinks, the name without its partition number.
    fn partition_parent(&self, name: &str) -> Option<String> {
        if let Ok(real) = std::fs::canonicalize(self.path(&format!("sys/class/block/{name}")))
            && let Some(parent) = real.parent().and_then(Path::file_name)
            && parent != "block"
        {
            return Some(parent.to_string_lossy().into_owned());
        }
        let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
        let trimmed = if trimmed.len() < name.len()
            && trimmed.ends_with('p')
            && trimmed[..trimmed.len() - 1].ends_with(|c: char| c.is_ascii_digit())
        {
            &trimmed[..trimmed.len() - 1]
        } else {
            trimmed
        };
        (trimmed != name && !trimmed.is_empty()).then(|| trimmed.to_string())
    }
}
