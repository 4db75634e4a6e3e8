//! What sysfs says about a block device: its kernel name, its partitions, and what holds it
//! (LVM, device-mapper, md), read through measure's environment probe.

use measure::envfacts::Probe;
use std::path::Path;

/// A block device's sysfs file (`queue/scheduler`), trimmed.
pub(crate) fn sysfs(name: &str, rel: &str) -> Option<String> {
    Probe::system().read(&format!("sys/class/block/{name}/{rel}"))
}

/// The names in a block device's sysfs directory (`holders`), sorted.
fn sysfs_list(name: &str, rel: &str) -> Vec<String> {
    Probe::system().list(&format!("sys/class/block/{name}/{rel}"))
}

/// The kernel name of the block device `rdev` (`loop3`, `sda1`, `dm-0`).
pub(crate) fn device_name(rdev: u64) -> Option<String> {
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let link = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// Partitions of a whole-disk device, as sysfs lists them.
pub(crate) fn partitions(name: &str) -> Vec<String> {
    sysfs_list(name, "")
        .into_iter()
        .filter(|p| {
            p.starts_with(name) && Path::new(&format!("/sys/class/block/{p}/partition")).exists()
        })
        .collect()
}

/// What holds a device (LVM, device-mapper, md, bcache), described for a person.
pub(crate) fn holders(name: &str) -> Vec<String> {
    let probe = Probe::system();
    sysfs_list(name, "holders")
        .into_iter()
        .map(|h| {
            let (layer, _) = probe.block_layer(&h);
            let detail = layer.detail.unwrap_or_default();
            match layer.kind.as_str() {
                "lvm" => format!("LVM logical volume {detail} ({h})"),
                "crypt" => format!("dm-crypt mapping {detail} ({h})"),
                "dm" | "multipath" => format!("device-mapper device {detail} ({h})"),
                "md" => format!("md array {h} ({detail})"),
                _ => h,
            }
        })
        .collect()
}
