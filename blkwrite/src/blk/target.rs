//! The target: a new file, an existing file (with --force) or a block device (with
//! --force-device, see `device`); the safety checks before anything is opened for writing.
//! How O_DIRECT is set up on a file is in `direct`.

pub use crate::blk::opened::{Align, Cleanup, Direct, Kind, OpenSpec, Target};
use crate::blk::opened::{active_swap, fail};
use crate::blk::{device, direct};
use measure::Exit;
use measure::Failure;
use measure::envfacts::Probe;
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};

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
        None => new_file(spec, flags),
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
            direct::finish_file(spec, Kind::ExistingFile, flags, Cleanup::none(), place)
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

/// A target that does not exist: refused where it is a dangling symlink, under /dev or for
/// --verify-only; else created (O_EXCL) and set up.
fn new_file(spec: &OpenSpec, flags: i32) -> Result<Target, Failure> {
    let p = &spec.path;
    let shown = p.display();
    if let Some(f) = dangling(p) {
        return Err(f);
    }
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
    let cleanup = Cleanup::made("blkwrite", p, spec.keep);
    direct::finish_file(spec, Kind::NewFile, flags, cleanup, place)
}

/// The refusal for a symlink whose target does not exist: dd would create the target through
/// it, but blkwrite creates a file only where none is (O_EXCL), and a link may point anywhere.
fn dangling(p: &std::path::Path) -> Option<Failure> {
    let to = std::fs::read_link(p).ok()?;
    let resolved = match p.parent() {
        Some(dir) if to.is_relative() => dir.join(&to),
        _ => to.clone(),
    };
    Some(fail(format!(
        "{} is a symlink to {}, which does not exist: blkwrite does not follow a symlink to \
         create a file; name the file itself ({}) to create it there, or remove the link",
        p.display(),
        to.display(),
        resolved.display()
    )))
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
