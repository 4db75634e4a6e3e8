//! The target: a new file, an existing file (with --force) or a block device (with
//! --force-device, see `device`); the safety checks before anything is opened for writing.
//! How O_DIRECT is set up on a file is in `direct`.

use crate::{device, direct};
use measure::Exit;
use measure::Failure;
use measure::envfacts::Probe;
use serde_json::{Map, Value};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
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
    pub(crate) path: Option<PathBuf>,
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

pub(crate) fn fail(msg: impl std::fmt::Display) -> Failure {
    Failure::usage(msg)
}

/// Opens the target after every safety check; refusals name what was found and the way on.
pub fn open(spec: &OpenSpec) -> Result<Target, Failure> {
    let p = &spec.path;
    let shown = p.display();
    let meta = match std::fs::metadata(p) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(Failure::new(Exit::Cannot, shown, e)),
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
                .map_err(|e| Failure::new(Exit::Cannot, format!("creating {shown}"), e))?;
            let cleanup = Cleanup {
                path: (!spec.keep).then(|| p.clone()),
            };
            direct::finish_file(spec, Kind::NewFile, flags, cleanup, place)
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
            direct::finish_file(
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
            device::open(spec, m.rdev(), flags)
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

pub(crate) fn open_with(path: &Path, read_only: bool, flags: i32) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(!read_only)
        .custom_flags(flags)
        .open(path)
}

/// The active swap entry (from /proc/swaps) that is this file or device, if any.
pub(crate) fn active_swap(ino: u64, dev: u64, is_dev: bool) -> Option<String> {
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
