//! Waiting on the socket for input or an error-queue entry, to the nanosecond.

use std::io;
use std::os::fd::RawFd;

/// Waits up to `timeout_ns` (`None`: without limit) for input or an error-queue entry;
/// returns (readable, error queue ready).
pub fn wait(fd: RawFd, timeout_ns: Option<i64>) -> io::Result<(bool, bool)> {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = timeout_ns.map(|ns| {
        let ns = ns.max(0);
        libc::timespec {
            tv_sec: ns / 1_000_000_000,
            tv_nsec: ns % 1_000_000_000,
        }
    });
    let tp = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: p is one live pollfd; tp is null or points to a live timespec.
    let rc = unsafe { libc::ppoll(&mut p, 1, tp, std::ptr::null()) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((
        p.revents & libc::POLLIN != 0,
        p.revents & libc::POLLERR != 0,
    ))
}
