//! What an opened target is (its kind, O_DIRECT alignment, facts, the clean-up of a file
//! blkwrite made) and the small checks that `target`, `device` and `direct` share.

use measure::Failure;
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

impl Direct {
    /// The --direct value as typed: off, on or try.
    pub fn as_str(self) -> &'static str {
        match self {
            Direct::Off => "off",
            Direct::On => "on",
            Direct::Try => "try",
        }
    }
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
