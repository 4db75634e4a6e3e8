//! What sysfs says about a block device: its kernel name, its partitions, what holds it
//! (LVM, device-mapper, md), and a loop device that reaches its backing file through the
//! page cache, read through measure's environment probe.

use measure::envfacts::{Layer, Probe};
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

/// Why O_DIRECT through these layers does not reach a disk, when one of them is a loop
/// device without direct I/O on its backing file: the host's page cache answers beneath it.
pub(crate) fn loop_cache_note(layers: &[Layer]) -> Option<String> {
    let l = layers
        .iter()
        .find(|l| l.kind == "loop" && l.direct_io == Some(false))?;
    let file = l.detail.as_deref().unwrap_or("its backing file");
    Some(format!(
        "O_DIRECT reaches {name}, which reads and writes {file} through the page cache \
         (losetup --direct-io=off): the figures include that cache; losetup --direct-io=on \
         /dev/{name} passes direct I/O on",
        name = l.name
    ))
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
