//! Records never land in a file the tool measures or writes its payload to: `-o FILE` naming
//! the target (or the file a command's output goes to), or records and payload sharing one
//! regular file, would corrupt both. The lifecycle refuses those before anything is written.

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
            "-o {records} names {}, which this run writes to: records and data would overwrite each other; give -o another file",
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
