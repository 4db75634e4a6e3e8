//! A block device as the target (with --force-device): refused when it is mounted, active
//! swap, held by LVM, device-mapper or md, holds partitions or a signature; claimed with
//! O_EXCL; its size, block sizes, queue and place in the block stack for begin.

use crate::blk::blkid;
use crate::blk::direct::statx_dio;
use crate::blk::opened::{
    Align, Cleanup, Direct, Kind, OpenSpec, Target, active_swap, fail, open_with,
};
use crate::blk::sysblock::{device_name, holders, loop_cache_note, partitions, sysfs};
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

/// Opens the block device `rdev` named by `spec` after every safety check.
pub(crate) fn open(spec: &OpenSpec, rdev: u64, flags: i32) -> Result<Target, Failure> {
    let p = &spec.path;
    let shown = p.display();
    let name = device_name(rdev).unwrap_or_else(|| "?".into());
    if !spec.read_only {
        refuse_in_use(spec, &name, rdev)?;
    }
    let file = open_with(
        p,
        spec.read_only,
        flags | if spec.read_only { 0 } else { libc::O_EXCL },
    )
    .map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            refusal(
                spec,
                &name,
                "the kernel says it is busy (held open exclusively: mounted, or claimed by LVM, md or another program)",
                "release it first",
            )
        } else {
            Failure::new(Exit::Cannot, format!("opening {shown}"), e)
        }
    })?;
    let size = device_size(&file)
        .map_err(|e| Failure::new(Exit::Cannot, format!("size of {shown}"), e))?;
    let prober = if spec.read_only {
        None
    } else {
        Some(refuse_signature(spec, &name, &file, size)?)
    };
    let (mut facts, lbs) = device_facts(&name, &file, size);
    if let Some(p) = prober {
        facts.insert("signature_probe".into(), json!(p));
    }
    let (align, source) = match statx_dio(&file) {
        Some((mem, off)) if off > 0 => ((u64::from(mem), u64::from(off)), "statx"),
        _ => ((lbs.min(512), lbs), "BLKSSZGET"),
    };
    let direct = spec.direct != Direct::Off;
    if direct {
        set_direct(&file)
            .map_err(|e| Failure::new(Exit::Cannot, format!("setting O_DIRECT on {shown}"), e))?;
    }
    let (layer, _) = Probe::system().block_layer(&name);
    Ok(Target {
        file,
        path: p.clone(),
        kind: Kind::BlockDevice,
        direct_effective: direct,
        direct_note: direct.then(|| loop_cache_note(&[layer])).flatten(),
        align: Align {
            offset: align.1,
            mem: align.0,
            source,
        },
        device_size: Some(size),
        facts,
        cleanup: Cleanup::none(),
    })
}

/// Refuses a device that is mounted (or a partition of it is), active swap, held by
/// another block layer, or that holds partitions.
fn refuse_in_use(spec: &OpenSpec, name: &str, rdev: u64) -> Result<(), Failure> {
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
fn refuse_signature(
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
fn device_facts(name: &str, file: &File, size: u64) -> (Map<String, Value>, u64) {
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
fn set_direct(file: &File) -> io::Result<()> {
    let fl = rustix::fs::fcntl_getfl(file)?;
    rustix::fs::fcntl_setfl(file, fl | OFlags::DIRECT)?;
    Ok(())
}

/// A block device's size: where a seek to its end lands.
fn device_size(mut f: &File) -> io::Result<u64> {
    let end = f.seek(SeekFrom::End(0))?;
    f.seek(SeekFrom::Start(0))?;
    Ok(end)
}
