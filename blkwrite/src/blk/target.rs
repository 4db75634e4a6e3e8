//! The target's one front door, [`open`]: a new file, an existing file (with --force) or a
//! block device (with --force-device), opened in one trip whose steps read here in order:
//! what is at the path, the refusals before anything is opened for writing, the open (a new
//! file made with O_EXCL, a device claimed with O_EXCL), a device's size and signature probe,
//! the facts for begin, and O_DIRECT with its alignment. The steps themselves are in `device`
//! (a device's checks and facts) and `direct` (O_DIRECT on a file).

pub use crate::blk::opened::{Align, Cleanup, Direct, Kind, OpenSpec, Target};
use crate::blk::opened::{active_swap, fail, open_with};
use crate::blk::{device, direct};
use measure::Exit;
use measure::Failure;
use measure::envfacts::{PathFacts, Probe};
use serde_json::json;
use std::fs::{Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};

/// Opens the target after every safety check; refusals name what was found and the way on.
pub fn open(spec: &OpenSpec) -> Result<Target, Failure> {
    let flags = if spec.dsync { libc::O_DSYNC } else { 0 };
    match found(spec)? {
        None => open_new_file(spec, flags),
        Some(m) if m.file_type().is_file() => open_existing_file(spec, &m, flags),
        Some(m) => open_device(spec, m.rdev(), flags),
    }
}

/// What is at the path (None: nothing), refused where it is not a file or a block device, or
/// where it is one the flags given do not let blkwrite write.
fn found(spec: &OpenSpec) -> Result<Option<Metadata>, Failure> {
    let p = &spec.path;
    let shown = p.display();
    let m = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Failure::new(Exit::Cannot, shown, e)),
    };
    let t = m.file_type();
    if t.is_file() && !spec.force && !spec.read_only {
        return Err(fail(format!(
            "{shown} exists ({} bytes) and blkwrite does not overwrite a file it was not told to: \
             give --force to overwrite it in place, or name a new file",
            m.len()
        )));
    }
    if t.is_block_device() && !spec.force_device && !spec.read_only {
        return Err(fail(format!(
            "{shown} is a block device and blkwrite destroys the data on it: give --force-device \
             to write it (a device that is mounted, in use, or holds a file system or \
             partition table is refused even then)"
        )));
    }
    if !t.is_file() && !t.is_block_device() {
        return Err(fail(format!(
            "{shown} is a {}, not a file or a block device: name a file to create or a block device",
            describe_type(&t)
        )));
    }
    Ok(Some(m))
}

/// A target that does not exist: refused where it is a dangling symlink, under /dev or for
/// --verify-only; else created (O_EXCL) and opened.
fn open_new_file(spec: &OpenSpec, flags: i32) -> Result<Target, Failure> {
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
    open_file(spec, Kind::NewFile, flags, cleanup, place)
}

/// An existing file (--force, or --verify-only): refused where it is active swap.
fn open_existing_file(spec: &OpenSpec, m: &Metadata, flags: i32) -> Result<Target, Failure> {
    if let Some(s) = active_swap(m.ino(), m.dev(), false) {
        return Err(fail(format!(
            "refusing to write {}: it is an active swap file ({s}); swapoff it first",
            spec.path.display()
        )));
    }
    let place = Probe::system().path_facts(&spec.path);
    open_file(spec, Kind::ExistingFile, flags, Cleanup::none(), place)
}

/// A file's trip once it is there: opened plainly, its facts, then O_DIRECT as asked (which
/// may open it again, see `direct`).
fn open_file(
    spec: &OpenSpec,
    kind: Kind,
    flags: i32,
    cleanup: Cleanup,
    place: Option<PathFacts>,
) -> Result<Target, Failure> {
    let p = &spec.path;
    let file = open_with(p, spec.read_only, flags)
        .map_err(|e| Failure::new(Exit::Cannot, format!("opening {}", p.display()), e))?;
    let cached_loop = direct::cached_loop(place.as_ref());
    let (facts, fs_lbs) = PathFacts::disk_info(place);
    let mut target = Target {
        file,
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
    if spec.direct != Direct::Off {
        direct::set_up(&mut target, spec, flags, fs_lbs, cached_loop)?;
    }
    Ok(target)
}

/// A block device (--force-device, or read only): refused where it is in use, claimed with
/// O_EXCL, sized, refused where it holds a signature, its facts, then O_DIRECT on the
/// descriptor already claimed.
fn open_device(spec: &OpenSpec, rdev: u64, flags: i32) -> Result<Target, Failure> {
    let name = device::name(rdev);
    if !spec.read_only {
        device::refuse_in_use(spec, &name, rdev)?;
    }
    let file = device::claim(spec, &name, flags)?;
    let size = device::size(spec, &file)?;
    let prober = if spec.read_only {
        None
    } else {
        Some(device::refuse_signature(spec, &name, &file, size)?)
    };
    let (mut facts, lbs) = device::facts(&name, &file, size);
    if let Some(p) = prober {
        facts.insert("signature_probe".into(), json!(p));
    }
    let align = device::align(&file, lbs);
    let direct = spec.direct != Direct::Off;
    if direct {
        device::set_direct(spec, &file)?;
    }
    Ok(Target {
        file,
        path: spec.path.clone(),
        kind: Kind::BlockDevice,
        direct_effective: direct,
        direct_note: direct.then(|| device::loop_cache_note(&name)).flatten(),
        align,
        device_size: Some(size),
        facts,
        cleanup: Cleanup::none(),
    })
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
