//! The steps of a block device's trip through `target::open` (with --force-device): the
//! refusals where it is mounted, active swap, held by LVM, device-mapper or md, holds
//! partitions or a signature; the claim with O_EXCL; its size, block sizes, queue and place
//! in the block stack for begin; its O_DIRECT alignment.

use crate::blk::blkid;
use crate::blk::direct::statx_dio;
use crate::blk::opened::{Align, OpenSpec, active_swap, fail, open_with};
use crate::blk::sysblock::{self, device_name, holders, partitions, sysfs};
use measure::Exit;
use measure::Failure;
use measure::envfacts::Probe;
use rustix::fs::OFlags;
use serde_json::{Map, Value, json};
use std::fs::File;
use std::io::{self, Seek, SeekFrom};

/// A refusal that no flag overrides, naming the device, what was found and the way on.
fn refusal(spec: &OpenSpec, name: &str, what: &str, how: &str) -> Failure {
    fail(format!(
        "refusing to write {} ({name}): {what}; {how}. blkwrite refuses this even with --force-device",
        spec.path.display()
    ))
}

/// The device's kernel name (`sda1`, `loop0`, `dm-2`), `?` where sysfs does not say.
pub(crate) fn name(rdev: u64) -> String {
    device_name(rdev).unwrap_or_else(|| "?".into())
}

/// Opens the device; for writing, claimed with O_EXCL, so that the kernel refuses it where
/// it is held open exclusively (mounted, or claimed by LVM, md or another program).
pub(crate) fn claim(spec: &OpenSpec, name: &str, flags: i32) -> Result<File, Failure> {
    let excl = if spec.read_only { 0 } else { libc::O_EXCL };
    open_with(&spec.path, spec.read_only, flags | excl).map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            refusal(
                spec,
                name,
                "the kernel says it is busy (held open exclusively: mounted, or claimed by LVM, md or another program)",
                "release it first",
            )
        } else {
            Failure::new(Exit::Cannot, format!("opening {}", spec.path.display()), e)
        }
    })
}

/// The O_DIRECT alignment on the device: statx's when it reports one, else the logical
/// block size (and memory aligned to it, at most 512).
pub(crate) fn align(file: &File, lbs: u64) -> Align {
    match statx_dio(file) {
        Some((mem, off)) if off > 0 => Align {
            offset: u64::from(off),
            mem: u64::from(mem),
            source: "statx",
        },
        _ => Align {
            offset: lbs,
            mem: lbs.min(512),
            source: "BLKSSZGET",
        },
    }
}

/// Why O_DIRECT on this device may still be cached: a loop device whose backing file is read
/// through the page cache.
pub(crate) fn loop_cache_note(name: &str) -> Option<String> {
    let (layer, _) = Probe::system().block_layer(name);
    sysblock::loop_cache_note(&[layer])
}

/// Refuses a device that is mounted (or a partition of it is), active swap, held by
/// another block layer, or that holds partitions.
pub(crate) fn refuse_in_use(spec: &OpenSpec, name: &str, rdev: u64) -> Result<(), Failure> {
    let dev_majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let parts = partitions(name);
    let mounts = Probe::system().mounts();
    let mounted_at = |majmin: &str| {
        mounts
            .iter()
            .filter(|(dev, _)| dev == majmin)
            .map(|(_, at)| at.clone())
            .collect::<Vec<_>>()
    };
    let mut mounted = mounted_at(&dev_majmin)
        .into_iter()
        .map(|m| format!("it is mounted on {m}"))
        .collect::<Vec<_>>();
    for part in &parts {
        if let Some(mm) = sysfs(part, "dev") {
            for m in mounted_at(&mm) {
                mounted.push(format!("its partition {part} is mounted on {m}"));
            }
        }
    }
    if !mounted.is_empty() {
        return Err(refusal(
            spec,
            name,
            &mounted.join(", "),
            "unmount it first (umount)",
        ));
    }
    if let Some(s) = active_swap(0, rdev, true) {
        return Err(refusal(
            spec,
            name,
            &format!("it is active swap ({s})"),
            "swapoff it first",
        ));
    }
    let mut held = holders(name);
    for part in &parts {
        held.extend(holders(part).into_iter().map(|h| format!("{h} on {part}")));
    }
    if !held.is_empty() {
        return Err(refusal(
            spec,
            name,
            &format!("it is in use by {}", held.join(", ")),
            "take it out of that stack first (lvremove/vgreduce/pvremove, dmsetup remove, mdadm --stop)",
        ));
    }
    if !parts.is_empty() {
        return Err(refusal(
            spec,
            name,
            &format!("it holds partitions ({})", parts.join(", ")),
            "write one partition instead, or erase the partition table first (wipefs -a) if you mean to destroy them",
        ));
    }
    Ok(())
}

/// Refuses a device that holds any signature libblkid knows (a file system, swap, LVM2,
/// LUKS, RAID, a partition table), or the built-in list where libblkid cannot be asked;
/// returns which prober looked, for begin.
pub(crate) fn refuse_signature(
    spec: &OpenSpec,
    name: &str,
    file: &File,
    size: u64,
) -> Result<String, Failure> {
    let shown = spec.path.display();
    let probed = blkid::probe(&spec.path, file, size).map_err(|e| {
        Failure::new(
            Exit::Cannot,
            format!("reading the first blocks of {shown}"),
            e,
        )
    })?;
    if probed.found.is_empty() {
        return Ok(probed.prober);
    }
    Err(refusal(
        spec,
        name,
        &format!(
            "it holds {}, found by {}",
            probed.found.join(" and "),
            probed.prober
        ),
        &format!(
            "if you mean to destroy it, erase the signatures first (wipefs -a {shown}) and run again"
        ),
    ))
}

/// The device's facts for begin, and its logical block size.
pub(crate) fn facts(name: &str, file: &File, size: u64) -> (Map<String, Value>, u64) {
    // The device as measure's environment probe sees it; a partition's queue is its disk's.
    let (layer, lower) = Probe::system().block_layer(name);
    let queue_of = match lower.first() {
        Some(disk) if layer.kind == "partition" => disk.clone(),
        _ => name.to_string(),
    };
    let num = |rel: &str| sysfs(&queue_of, rel).and_then(|s| s.parse::<u64>().ok());
    let lbs = match rustix::fs::ioctl_blksszget(file) {
        Ok(n) if n > 0 => u64::from(n),
        _ => num("queue/logical_block_size").unwrap_or(512),
    };
    let kind = match layer.kind.as_str() {
        "lvm" | "crypt" | "multipath" | "dm" => "dm",
        "loop" => "loop",
        "md" => "md",
        "partition" => "partition",
        _ => "disk",
    };
    let mut facts = Map::new();
    facts.insert("device".into(), json!(name));
    facts.insert("device_kind".into(), json!(kind));
    if layer.kind == "loop"
        && let Some(b) = &layer.detail
    {
        facts.insert("loop_backing_file".into(), json!(b));
        facts.insert("loop_direct_io".into(), json!(layer.direct_io));
    }
    facts.insert("device_size_bytes".into(), json!(size));
    facts.insert("logical_block_size".into(), json!(lbs));
    facts.insert(
        "physical_block_size".into(),
        json!(num("queue/physical_block_size")),
    );
    facts.insert(
        "rotational".into(),
        json!(num("queue/rotational").map(|r| r == 1)),
    );
    facts.insert(
        "scheduler".into(),
        json!(sysfs(&queue_of, "queue/scheduler")),
    );
    (facts, lbs)
}

/// Sets O_DIRECT on the descriptor already open (and claimed with O_EXCL), so that the claim
/// is never let go between the checks and the writes.
pub(crate) fn set_direct(spec: &OpenSpec, file: &File) -> Result<(), Failure> {
    let on = |file: &File| -> io::Result<()> {
        let fl = rustix::fs::fcntl_getfl(file)?;
        rustix::fs::fcntl_setfl(file, fl | OFlags::DIRECT)?;
        Ok(())
    };
    on(file).map_err(|e| {
        let shown = spec.path.display();
        Failure::new(Exit::Cannot, format!("setting O_DIRECT on {shown}"), e)
    })
}

/// A block device's size: where a seek to its end lands.
pub(crate) fn size(spec: &OpenSpec, file: &File) -> Result<u64, Failure> {
    let mut f = file;
    f.seek(SeekFrom::End(0))
        .and_then(|end| f.seek(SeekFrom::Start(0)).map(|_| end))
        .map_err(|e| Failure::new(Exit::Cannot, format!("size of {}", spec.path.display()), e))
}
