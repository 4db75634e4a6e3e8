//! Waiting on the socket for input or an error-queue entry, to the nanosecond (ppoll).

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::time::TimeSpec;
use std::io;
use std::os::fd::AsFd;

/// Waits up to `timeout_ns` (`None`: without limit) for input or an error-queue entry;
/// returns (readable, error queue ready).
pub fn wait(fd: &impl AsFd, timeout_ns: Option<i64>) -> io::Result<(bool, bool)> {
    let mut p = [PollFd::new(fd.as_fd(), PollFlags::POLLIN)];
    let ts = timeout_ns.map(|ns| {
        let ns = ns.max(0);
        TimeSpec::new(ns / 1_000_000_000, ns % 1_000_000_000)
    });
    ppoll(&mut p, ts, None).map_err(io::Error::from)?;
    let got = p[0].revents().unwrap_or(PollFlags::empty());
    Ok((
        got.contains(PollFlags::POLLIN),
        got.contains(PollFlags::POLLERR),
    ))
}
