//! What an opened target is (its kind, O_DIRECT alignment, facts, the clean-up of a file
//! blkwrite made) and the small checks that `target`, `device` and `direct` share.

use measure::Failure;
use serde_json::{Map, Value};
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
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

/// Removes the file blkwrite or blkread created when dropped, unless disarmed (--keep): only
/// while its name still holds the inode that was made. A file moved away and another put in
/// its place mid-run stays, and a warning says what was left where.
#[derive(Debug)]
pub struct Cleanup {
    made: Option<Made>,
}

/// The created file: its name and the device and inode it was made with.
#[derive(Debug)]
struct Made {
    tool: &'static str,
    path: PathBuf,
    id: (u64, u64),
}

/// The device and inode at `p`, without following a link.
fn id_at(p: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(p)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl Cleanup {
    /// Nothing to remove (the target was there before, or is a device).
    pub fn none() -> Self {
        Cleanup { made: None }
    }

    /// The file `tool` just created at `p` (with O_EXCL, so it is this run's), removed at
    /// the end unless `keep`.
    pub fn made(tool: &'static str, p: &Path, keep: bool) -> Self {
        let made = (!keep)
            .then(|| {
                id_at(p).map(|id| Made {
                    tool,
                    path: p.to_path_buf(),
                    id,
                })
            })
            .flatten();
        Cleanup { made }
    }

    /// Whether the file goes when the target is dropped (this run made it, no --keep, and its
    /// name still holds it).
    pub fn removes(&self) -> bool {
        self.made
            .as_ref()
            .is_some_and(|m| id_at(&m.path) == Some(m.id))
    }
}

/// Where the inode `id` is now among the entries of `dir` (a move within it), if anywhere.
fn moved_to(dir: &Path, id: (u64, u64)) -> Option<PathBuf> {
    std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .find(|p| id_at(p) == Some(id))
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let Some(m) = self.made.take() else { return };
        if id_at(&m.path) == Some(m.id) {
            let _ = std::fs::remove_file(&m.path);
            return;
        }
        let dir = match m.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let now = match moved_to(dir, m.id) {
            Some(p) => format!("{}, remove it when done", p.display()),
            None => "moved out of its directory, or removed".to_string(),
        };
        let _ = writeln!(
            io::stderr(),
            "{}: {} is no longer the file this run made (another took its name mid-run), so it was left alone; the one made: {now}",
            m.tool,
            m.path.display()
        );
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
