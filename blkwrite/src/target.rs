//! The target: a new file, an existing file (with --force) or a block device (with
//! --force-device, never one that is mounted, in use or holds a signature); how it is opened,
//! the alignment O_DIRECT needs there, and whether O_DIRECT is honoured at all.

use crate::signature;
use measure::Failure;
use measure::envfacts::{PathFacts, Probe};
use measure::exit::CANNOT;
use serde_json::{Map, Value, json};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// What `--direct` asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direct {
    Off,
    On,
    Try,
}

/// How the target is to be opened.
#[derive(Clone, Debug)]
pub struct OpenSpec {
    pub path: PathBuf,
    pub direct: Direct,
    pub dsync: bool,
    pub force: bool,
    pub force_device: bool,
    pub keep: bool,
    /// Only read (for --verify-only): no safety flag needed, nothing created.
    pub read_only: bool,
}

/// What kind of thing the target is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    NewFile,
    ExistingFile,
    BlockDevice,
}

impl Kind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Kind::NewFile => "new-file",
            Kind::ExistingFile => "existing-file",
            Kind::BlockDevice => "block-device",
        }
    }
}

/// Where O_DIRECT needs alignment, and who said so.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Align {
    pub offset: u64,
    pub mem: u64,
    pub source: &'static str,
}

/// Removes a file blkwrite created when dropped, unless disarmed (--keep).
#[derive(Debug)]
pub struct Cleanup {
    path: Option<PathBuf>,
}

impl Cleanup {
    /// Whether the file goes when the target is dropped (blkwrite made it, no --keep).
    pub fn removes(&self) -> bool {
        self.path.is_some()
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(p) = self.path.take() {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// An opened target.
#[derive(Debug)]
pub struct Target {
    pub file: File,
    pub path: PathBuf,
    pub kind: Kind,
    pub direct_effective: bool,
    /// Why O_DIRECT is not in effect although asked for.
    pub direct_note: Option<String>,
    pub align: Align,
    pub device_size: Option<u64>,
    pub facts: Map<String, Value>,
    pub cleanup: Cleanup,
}

fn fail(msg: impl std::fmt::Display) -> Failure {
    Failure::usage(msg)
}

/// Opens the target after every safety check; refusals name what was found and the way on.
pub fn open(spec: &OpenSpec) -> Result<Target, Failure> {
    let p = &spec.path;
    let shown = p.display();
    let meta = match std::fs::metadata(p) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Failure::new(CANNOT, shown, e)),
    };
    let mut flags = 0;
    if spec.dsync {
        flags |= libc::O_DSYNC;
    }
    match meta {
        None => {
            if spec.read_only {
                return Err(fail(format!(
                    "{shown} does not exist: --verify-only reads back a file written before"
                )));
            }
            // The mount that will hold the file: asked once, for this check and the facts.
            let place = Probe::system().path_facts(p);
            if place.as_ref().is_some_and(|f| f.fs_type == "devtmpfs") {
                return Err(fail(format!(
                    "{shown} does not exist, and blkwrite does not create a file under /dev \
                     (a mistyped device name would fill memory): name an existing block device"
                )));
            }
            // Created without O_DIRECT first: a file system that refuses O_DIRECT must not
            // leave us unsure whether the file was made.
            OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(p)
                .map_err(|e| Failure::new(CANNOT, format!("creating {shown}"), e))?;
            let cleanup = Cleanup {
                path: (!spec.keep).then(|| p.clone()),
            };
            finish_file(spec, Kind::NewFile, flags, cleanup, place)
        }
        Some(m) if m.file_type().is_file() => {
            if !spec.force && !spec.read_only {
                return Err(fail(format!(
                    "{shown} exists ({} bytes) and blkwrite does not overwrite a file it was not told to: \
                     give --force to overwrite it in place, or name a new file",
                    m.len()
                )));
            }
            if let Some(s) = active_swap(m.ino(), m.dev(), false) {
                return Err(fail(format!(
                    "refusing to write {shown}: it is an active swap file ({s}); swapoff it first"
                )));
            }
            let place = Probe::system().path_facts(p);
            finish_file(
                spec,
                Kind::ExistingFile,
                flags,
                Cleanup { path: None },
                place,
            )
        }
        Some(m) if m.file_type().is_block_device() => {
            if !spec.force_device && !spec.read_only {
                return Err(fail(format!(
                    "{shown} is a block device and blkwrite destroys the data on it: give --force-device \
                     to write it (a device that is mounted, in use, or holds a file system or \
                     partition table is refused even then)"
                )));
            }
            open_device(spec, m.rdev(), flags)
        }
        Some(m) => Err(fail(format!(
            "{shown} is a {}, not a file or a block device: name a file to create or a block device",
            describe_type(&m.file_type())
        ))),
    }
}

fn describe_type(t: &std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "directory"
    } else if t.is_char_device() {
        "character device"
    } else if t.is_fifo() {
        "FIFO"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

fn open_with(path: &Path, read_only: bool, flags: i32) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(!read_only)
        .custom_flags(flags)
        .open(path)
}

fn finish_file(
    spec: &OpenSpec,
    kind: Kind,
    flags: i32,
    cleanup: Cleanup,
    place: Option<PathFacts>,
) -> Result<Target, Failure> {
    let p = &spec.path;
    let shown = p.display();
    let plain = open_with(p, spec.read_only, flags)
        .map_err(|e| Failure::new(CANNOT, format!("opening {shown}"), e))?;
    let facts_info = place.map(|f| {
        let lbs = f.stack.first().and_then(|l| l.logical_block_size);
        let rot = if f.stack.iter().any(|l| l.rotational == Some(true)) {
            Some(true)
        } else {
            f.stack.first().and_then(|l| l.rotational)
        };
        let mut m = f.to_info();
        m.insert("logical_block_size".into(), json!(lbs));
        m.insert("rotational".into(), json!(rot));
        (m, lbs)
    });
    let (facts, fs_lbs) = match facts_info {
        Some((m, l)) => (m, l),
        None => (Map::new(), None),
    };
    let mut target = Target {
        file: plain,
        path: p.clone(),
        kind,
        direct_effective: false,
        direct_note: None,
        align: Align {
            offset: 1,
            mem: 1,
            source: "none",
        },
        device_size: None,
        facts,
        cleanup,
    };
    if spec.direct == Direct::Off {
        return Ok(target);
    }
    let dio = statx_dio(&target.file);
    target.align = match dio {
        Some((mem, off)) if off > 0 => Align {
            offset: u64::from(off),
            mem: u64::from(mem),
            source: "statx",
        },
        _ => Align {
            offset: fs_lbs.unwrap_or(512),
            mem: 512,
            source: if fs_lbs.is_some() {
                "block-device"
            } else {
                "assumed"
            },
        },
    };
    let mut not_honoured = direct_not_honoured(&target.file);
    if not_honoured.is_none() && dio == Some((0, 0)) {
        not_honoured = Some("the file system reports no direct-I/O support for it (statx)".into());
    }
    match open_with(p, spec.read_only, flags | libc::O_DIRECT) {
        Ok(f) if not_honoured.is_none() => {
            target.file = f;
            target.direct_effective = true;
        }
        // Not honoured: the plain descriptor stays, so the run is plainly buffered.
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            not_honoured = Some("the file system refuses O_DIRECT (EINVAL)".into());
        }
        Err(e) => return Err(Failure::new(CANNOT, format!("opening {shown} O_DIRECT"), e)),
    }
    if let Some(why) = &not_honoured
        && spec.direct == Direct::On
    {
        return Err(fail(format!(
            "--direct on {shown}: {why}, so the figures would be page-cache speed: drop --direct, \
             or give --direct=try to run anyway and report direct_effective: false"
        )));
    }
    target.direct_note = not_honoured;
    Ok(target)
}

/// Why O_DIRECT on this open file would not reach the device, if it would not.
// f_type's width differs between architectures, hence the casts.
#[allow(clippy::unnecessary_cast)]
fn direct_not_honoured(f: &File) -> Option<String> {
    // SAFETY: statfs is plain data; fstatfs fills it from a valid descriptor.
    let mut sfs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open and `sfs` is a valid, writable struct.
    if unsafe { libc::fstatfs(f.as_raw_fd(), &mut sfs) } != 0 {
        return None;
    }
    let t = sfs.f_type as i64;
    if t == libc::TMPFS_MAGIC as i64 || t == 0x8584_58f6 {
        return Some("tmpfs/ramfs keeps the data in memory and buffers O_DIRECT writes".into());
    }
    if t == libc::BTRFS_SUPER_MAGIC as i64 {
        let mut attr: libc::c_long = 0;
        // SAFETY: FS_IOC_GETFLAGS writes one long into `attr`.
        let rc = unsafe { libc::ioctl(f.as_raw_fd(), libc::FS_IOC_GETFLAGS, &mut attr) };
        const FS_NOCOW_FL: libc::c_long = 0x0080_0000;
        if rc == 0 && attr & FS_NOCOW_FL == 0 {
            return Some(
                "btrfs writes checksummed files through the page cache even with O_DIRECT \
                 (chattr +C on a new empty file, or a nodatacow mount, gives direct I/O)"
                    .into(),
            );
        }
    }
    None
}

/// statx's direct-I/O alignment: (memory, offset), or None when the kernel or file system
/// does not report it.
fn statx_dio(f: &File) -> Option<(u32, u32)> {
    // SAFETY: statx is plain data.
    let mut sx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: an empty path with AT_EMPTY_PATH names the open descriptor; `sx` is writable.
    let rc = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut sx,
        )
    };
    if rc != 0 || sx.stx_mask & libc::STATX_DIOALIGN == 0 {
        return None;
    }
    Some((sx.stx_dio_mem_align, sx.stx_dio_offset_align))
}

/// A block device's sysfs file (`queue/scheduler`), trimmed.
fn sysfs(name: &str, rel: &str) -> Option<String> {
    Probe::system().read(&format!("sys/class/block/{name}/{rel}"))
}

/// The names in a block device's sysfs directory (`holders`), sorted.
fn sysfs_list(name: &str, rel: &str) -> Vec<String> {
    Probe::system().list(&format!("sys/class/block/{name}/{rel}"))
}

/// The kernel name of the block device `rdev` (`loop3`, `sda1`, `dm-0`).
fn device_name(rdev: u64) -> Option<String> {
    let (maj, min) = (libc::major(rdev), libc::minor(rdev));
    let link = std::fs::read_link(format!("/sys/dev/block/{maj}:{min}")).ok()?;
    Some(link.file_name()?.to_string_lossy().into_owned())
}

/// Partitions of a whole-disk device, as sysfs lists them.
fn partitions(name: &str) -> Vec<String> {
    sysfs_list(name, "")
        .into_iter()
        .filter(|p| {
            p.starts_with(name) && Path::new(&format!("/sys/class/block/{p}/partition")).exists()
        })
        .collect()
}

/// What holds a device (LVM, device-mapper, md, bcache), described for a person.
fn holders(name: &str) -> Vec<String> {
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

/// The active swap entry (from /proc/swaps) that is this file or device, if any.
fn active_swap(ino: u64, dev: u64, is_dev: bool) -> Option<String> {
    let swaps = std::fs::read_to_string("/proc/swaps").ok()?;
    swaps.lines().skip(1).find_map(|l| {
        let name = l.split_whitespace().next()?;
        let m = std::fs::metadata(name.replace("\\040", " ")).ok()?;
        let same = if is_dev {
            m.file_type().is_block_device() && m.rdev() == dev
        } else {
            m.ino() == ino && m.dev() == dev
        };
        same.then(|| name.to_string())
    })
}

fn open_device(spec: &OpenSpec, rdev: u64, flags: i32) -> Result<Target, Failure> {
    let p = &spec.path;
    let shown = p.display();
    let name = device_name(rdev).unwrap_or_else(|| "?".into());
    let refuse = |what: String, how: &str| {
        fail(format!(
            "refusing to write {shown} ({name}): {what}; {how}. blkwrite refuses this even with --force-device"
        ))
    };
    let dev_majmin = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
    let parts = partitions(&name);
    if !spec.read_only {
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
            return Err(refuse(mounted.join(", "), "unmount it first (umount)"));
        }
        if let Some(s) = active_swap(0, rdev, true) {
            return Err(refuse(
                format!("it is active swap ({s})"),
                "swapoff it first",
            ));
        }
        let mut held = holders(&name);
        for part in &parts {
            held.extend(holders(part).into_iter().map(|h| format!("{h} on {part}")));
        }
        if !held.is_empty() {
            return Err(refuse(
                format!("it is in use by {}", held.join(", ")),
                "take it out of that stack first (lvremove/vgreduce/pvremove, dmsetup remove, mdadm --stop)",
            ));
        }
        if !parts.is_empty() {
            return Err(refuse(
                format!("it holds partitions ({})", parts.join(", ")),
                "write one partition instead, or erase the partition table first (wipefs -a) if you mean to destroy them",
            ));
        }
    }
    let file = open_with(
        p,
        spec.read_only,
        flags | if spec.read_only { 0 } else { libc::O_EXCL },
    )
    .map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            refuse(
                "the kernel says it is busy (held open exclusively: mounted, or claimed by LVM, md or another program)".into(),
                "release it first",
            )
        } else {
            Failure::new(CANNOT, format!("opening {shown}"), e)
        }
    })?;
    let size =
        device_size(&file).map_err(|e| Failure::new(CANNOT, format!("size of {shown}"), e))?;
    if !spec.read_only {
        let head_len = signature::HEAD_BYTES.min(size as usize);
        let mut head = vec![0u8; head_len];
        let tail_len = signature::TAIL_BYTES.min(size as usize);
        let mut tail = vec![0u8; tail_len];
        file.read_exact_at(&mut head, 0)
            .and_then(|()| file.read_exact_at(&mut tail, size - tail_len as u64))
            .map_err(|e| Failure::new(CANNOT, format!("reading the first blocks of {shown}"), e))?;
        let found = signature::scan(&head, &tail, size);
        if !found.is_empty() {
            return Err(refuse(
                format!("it holds {}", found.join(" and ")),
                &format!(
                    "if you mean to destroy it, erase the signature first (wipefs -a {shown}) and run again"
                ),
            ));
        }
    }
    // The device as measure's environment probe sees it; a partition's queue is its disk's.
    let (layer, lower) = Probe::system().block_layer(&name);
    let queue_of = match lower.first() {
        Some(disk) if layer.kind == "partition" => disk.clone(),
        _ => name.clone(),
    };
    let num = |rel: &str| sysfs(&queue_of, rel).and_then(|s| s.parse::<u64>().ok());
    let mut lbs: libc::c_int = 0;
    // SAFETY: BLKSSZGET writes one int into `lbs`.
    let rc = unsafe { libc::ioctl(file.as_raw_fd(), libc::BLKSSZGET, &mut lbs) };
    let lbs = if rc == 0 && lbs > 0 {
        lbs as u64
    } else {
        num("queue/logical_block_size").unwrap_or(512)
    };
    let (align, source) = match statx_dio(&file) {
        Some((mem, off)) if off > 0 => ((u64::from(mem), u64::from(off)), "statx"),
        _ => ((lbs.min(512), lbs), "BLKSSZGET"),
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
    let direct = spec.direct != Direct::Off;
    if direct {
        // Set on the descriptor already open (and claimed with O_EXCL), so the claim is
        // never let go between the checks and the writes.
        // SAFETY: F_GETFL/F_SETFL on a valid descriptor only change its status flags.
        let rc = unsafe {
            let fl = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(file.as_raw_fd(), libc::F_SETFL, fl | libc::O_DIRECT)
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            return Err(Failure::new(
                CANNOT,
                format!("setting O_DIRECT on {shown}"),
                e,
            ));
        }
    }
    Ok(Target {
        file,
        path: p.clone(),
        kind: Kind::BlockDevice,
        direct_effective: direct,
        direct_note: None,
        align: Align {
            offset: align.1,
            mem: align.0,
            source,
        },
        device_size: Some(size),
        facts,
        cleanup: Cleanup { path: None },
    })
}

fn device_size(f: &File) -> io::Result<u64> {
    // SAFETY: lseek on a valid descriptor; SEEK_END gives a block device's size.
    let end = unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_END) };
    if end < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above, back to the start.
    unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_SET) };
    Ok(end as u64)
}
