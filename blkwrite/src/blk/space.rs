//! The free-space check before a file is made: a size the file system cannot hold would fill
//! it for minutes before ENOSPC, so it is refused up front (statvfs), with the numbers, unless
//! the user says --force.

use measure::Failure;
use std::path::Path;

/// The bytes an unprivileged writer may still use on the file system that holds `dir`, if
/// statvfs answers.
fn available(dir: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Refuses making `bytes` at `target` (`what`: the flag and value as typed) where the file
/// system holding its folder has less free space; `--force` skips the check.
pub(crate) fn check(target: &Path, bytes: u64, what: &str) -> Result<(), Failure> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    match available(dir) {
        Some(free) if bytes > free => Err(Failure::usage(format!(
            "{what}: {bytes} bytes do not fit in the {free} bytes free on the file system of {} \
             (statvfs): give a smaller size, or --force to try anyway",
            dir.display()
        ))),
        _ => Ok(()),
    }
}
