//! Records never land in a file the tool measures or writes its payload to: `-o FILE` naming
//! the target (or the file a command's output goes to), or records and payload sharing one
//! regular file, would corrupt both; so would stdout or stderr opened on the target
//! (`blkread /dev/loop3 > /dev/loop3`, `blkwrite f >> f`). The lifecycle refuses those before
//! anything is written.

use crate::exit::Failure;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A file's identity: its device and inode (following links), when it exists.
fn identity(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// The path with its folder resolved (for a file that does not exist yet).
fn absolute(p: &Path) -> Option<PathBuf> {
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
}

/// Whether `a` and `b` name the same file: the same inode, or, where neither exists yet,
/// the same place.
fn same_file(a: &Path, b: &Path) -> bool {
    match (identity(a), identity(b)) {
        (Some(x), Some(y)) => x == y,
        (None, None) => absolute(a).is_some_and(|x| absolute(b).is_some_and(|y| x == y)),
        _ => false,
    }
}

/// The device and inode of the regular file `fd` writes to, if it is one.
fn regular_file_of(fd: impl std::os::fd::AsFd) -> Option<(u64, u64)> {
    let st = rustix::fs::fstat(fd).ok()?;
    let regular =
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::RegularFile;
    regular.then_some((st.st_dev, st.st_ino))
}

/// Refuses `-o records` where it names one of `guarded` (the files the tool measures or
/// writes payload to), or, for a tool whose stdout carries payload, the file stdout writes to.
pub fn check_output(records: &str, guarded: &[PathBuf], payload: bool) -> Result<(), Failure> {
    let r = Path::new(records);
    if let Some(g) = guarded.iter().find(|g| same_file(r, g)) {
        return Err(Failure::usage(format!(
            "-o {records} names {}, which this run measures or writes to: records and data would overwrite each other; give -o another file",
            g.display()
        )));
    }
    if payload
        && let (Some(out), Some(rec)) = (regular_file_of(io::stdout()), identity(r))
        && out == rec
    {
        return Err(Failure::usage(format!(
            "-o {records} is the file stdout writes to, which carries the payload: the records would mix into it; give -o another file"
        )));
    }
    Ok(())
}

/// A file or block device an open stream writes to: its device and inode, and the device it
/// is for a block device (one disk may have several nodes: /dev/loop3, /dev/block/7:3).
fn stream_target(fd: impl std::os::fd::AsFd) -> Option<(u64, u64, Option<u64>)> {
    use rustix::fs::FileType;
    let st = rustix::fs::fstat(fd).ok()?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Some((st.st_dev, st.st_ino, None)),
        FileType::BlockDevice => Some((st.st_dev, st.st_ino, Some(st.st_rdev))),
        _ => None,
    }
}

/// Whether a stream's target is the file or block device at `p` (following links).
fn stream_is(stream: (u64, u64, Option<u64>), p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    let Ok(m) = std::fs::metadata(p) else {
        return false;
    };
    let block = m.file_type().is_block_device().then_some(m.rdev());
    (stream.0, stream.1) == (m.dev(), m.ino()) || (block.is_some() && stream.2 == block)
}

/// Refuses stdout (when it carries the records) or stderr (always: errors go there) opened
/// on one of `guarded`, the files or devices the tool measures or writes payload to: the
/// records or messages would land in it. Refused for stderr, the tool exits 2 saying
/// nothing, since any message would land there too.
pub fn check_streams(guarded: &[PathBuf], records_on_stdout: bool) -> Result<(), Failure> {
    let streams = [
        (
            "stdout",
            records_on_stdout
                .then(|| stream_target(io::stdout()))
                .flatten(),
        ),
        ("stderr", stream_target(io::stderr())),
    ];
    for (name, target) in streams {
        let Some(t) = target else { continue };
        if guarded.iter().any(|g| stream_is(t, g)) && name == "stderr" {
            // Any message would land in the target too: exit 2 without one.
            return Err(Failure::quiet(crate::exit::Exit::Cannot));
        }
        if let Some(g) = guarded.iter().find(|g| stream_is(t, g)) {
            return Err(Failure::usage(format!(
                "stdout is {}, which this run measures or writes to: the records would land in it (a shell's > empties a regular file before the tool starts); send stdout elsewhere (> FILE, a pipe) or give -o FILE",
                g.display(),
            )));
        }
    }
    Ok(())
}

/// Refuses records on stderr where stderr and a payload stdout are one regular file
/// (`> f 2>&1`): the records would mix into the payload.
pub fn check_stderr() -> Result<(), Failure> {
    match (regular_file_of(io::stdout()), regular_file_of(io::stderr())) {
        (Some(a), Some(b)) if a == b => Err(Failure::usage(
            "stdout and stderr are one file, and stdout carries the payload: the records (on stderr) would mix into it; send them elsewhere with -o FILE or 2>FILE",
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_file_by_any_name() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("target");
        std::fs::write(&f, "x").unwrap();
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(same_file(&f, &link));
        let new = d.path().join("new");
        let dotted = d.path().join(".").join("new");
        assert!(same_file(&new, &dotted));
        assert!(!same_file(&f, &new));
        let e = check_output(link.to_str().unwrap(), std::slice::from_ref(&f), false).unwrap_err();
        assert!(e.to_string().contains("give -o another file"), "{e}");
        assert!(check_output(new.to_str().unwrap(), &[f], false).is_ok());
    }
}
