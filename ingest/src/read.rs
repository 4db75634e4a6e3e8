//! Reading a source whole, bounded and interruptible: at most `--max-input` bytes are held
//! (a source past it is refused, naming the limit), and SIGINT, SIGTERM and SIGHUP end a
//! wait for input however long it is (a FIFO without a writer, a silent pipe).
//!
//! A path is opened with O_NONBLOCK, so that the open itself never waits (a FIFO's blocking
//! open waits for a writer, and the standard library retries it through EINTR); every read
//! then waits in a `ppoll` that unblocks the ending signals only while it waits, so that a
//! signal can never arrive between the check of the flag and the wait. A FIFO opened so
//! still waits for its writer: `ppoll` reports it neither readable nor hung up before a writer
//! came.
//!
//! Ctrl-C reaches a whole pipeline: `ping HOST | ingest` gets SIGINT in both, and ping answers
//! it by printing its statistics and ending. So a SIGINT while a pipe that has already given
//! bytes is read lets ingest read on to the pipe's end; SIGTERM and SIGHUP (and SIGINT
//! before any byte, or on a file, a device or a terminal) end the read at once.

use measure::{Exit, Failure};
use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The most bytes read into memory unless `--max-input` says otherwise.
pub const DEFAULT_MAX: u64 = 256 << 20;

/// The size of one read.
const CHUNK: usize = 1 << 18;

/// The name and the bytes of `path` (`None` or `-`: stdin), at most `max` of them.
pub fn source(path: Option<&Path>, max: u64) -> Result<(String, Vec<u8>), Failure> {
    let (name, file) = match path {
        Some(p) if p != Path::new("-") => {
            let name = p.display().to_string();
            let file = OpenOptions::new()
                .read(true)
                .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
                .open(p)
                .map_err(|e| Failure::new(Exit::Cannot, &name, e))?;
            (name, file)
        }
        _ => {
            // A file of its own on stdin's open file description: read without a buffer of
            // the standard library's in between, and its flags left as they are.
            let fd = std::io::stdin()
                .as_fd()
                .try_clone_to_owned()
                .map_err(|e| Failure::new(Exit::Cannot, "stdin", e))?;
            ("stdin".to_string(), File::from(fd))
        }
    };
    let bytes = all(&file, &name, max)?;
    Ok((name, bytes))
}

/// What a wait for input ended with.
enum Waited {
    /// Input (or its end, or an error the read will report) is there.
    Ready,
    /// A signal arrived that ends the read.
    Stop(i32),
}

/// Waits until `fd` can be read, or an ending signal arrives; a SIGINT does not end the wait
/// when `drain` (a pipe that has given bytes: its writer got the same Ctrl-C).
fn wait(fd: BorrowedFd<'_>, drain: bool) -> Result<Waited, Errno> {
    let mut ending = SigSet::empty();
    for sig in measure::signal::ENDING {
        if let Ok(s) = Signal::try_from(sig) {
            ending.add(s);
        }
    }
    let mut old = SigSet::empty();
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&ending), Some(&mut old))?;
    let stop = |sig: i32| !(drain && sig == libc::SIGINT);
    let result = match measure::signal::interrupt_signal() {
        Some(sig) if stop(sig) => Ok(Waited::Stop(sig)),
        _ => {
            let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
            match ppoll(&mut fds, None, Some(old)) {
                Err(Errno::EINTR) => match measure::signal::interrupt_signal() {
                    Some(sig) if stop(sig) => Ok(Waited::Stop(sig)),
                    _ => Err(Errno::EINTR),
                },
                r => r.map(|_| Waited::Ready),
            }
        }
    };
    pthread_sigmask(SigmaskHow::SIG_SETMASK, Some(&old), None)?;
    result
}

/// Every byte `file` gives up to its end.
fn all(file: &File, name: &str, max: u64) -> Result<Vec<u8>, Failure> {
    let meta = file.metadata().ok();
    let pipe = meta
        .as_ref()
        .is_some_and(|m| m.file_type().is_fifo() || m.file_type().is_socket());
    let mut buf: Vec<u8> = Vec::new();
    if let Some(m) = meta.filter(|m| m.is_file()) {
        // A file says its size: one past the limit is refused unread.
        if m.len() > max {
            return Err(too_big(name, max));
        }
        buf.reserve_exact(m.len() as usize);
    }
    let mut chunk = vec![0u8; CHUNK];
    loop {
        match wait(file.as_fd(), pipe && !buf.is_empty()) {
            Ok(Waited::Ready) => {}
            Ok(Waited::Stop(sig)) => return Err(interrupted(name, sig, buf.len())),
            Err(Errno::EINTR) => continue,
            Err(e) => return Err(Failure::new(Exit::Cannot, name, std::io::Error::from(e))),
        }
        let n = match (&mut &*file).read(&mut chunk) {
            Ok(0) => return Ok(buf),
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::Interrupted | ErrorKind::WouldBlock) => {
                continue;
            }
            Err(e) => return Err(Failure::new(Exit::Cannot, name, e)),
        };
        if (buf.len() + n) as u64 > max {
            return Err(too_big(name, max));
        }
        if buf.capacity() - buf.len() < n {
            // Grown by doubling, but never past the limit: the memory held stays within it.
            let room = usize::try_from(max).unwrap_or(usize::MAX) - buf.len();
            buf.reserve_exact(buf.len().max(CHUNK).min(room).max(n));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The refusal of a source larger than `max`.
fn too_big(name: &str, max: u64) -> Failure {
    Failure::usage(format!(
        "{name}: more than --max-input {} ({max} bytes), the most ingest holds in memory: \
         one run of a tool writes less (is it the right file?); to read a larger one, raise \
         it (--max-input 2G)",
        size_text(max)
    ))
}

/// `max` as --max-input takes it: `256M` for 268435456.
fn size_text(max: u64) -> String {
    for (unit, shift) in [("G", 30), ("M", 20), ("K", 10)] {
        if max >= 1 << shift && max.is_multiple_of(1 << shift) {
            return format!("{}{unit}", max >> shift);
        }
    }
    max.to_string()
}

/// The end of a read that a signal cut short: nothing is converted from a part of a source.
fn interrupted(name: &str, sig: i32, read: usize) -> Failure {
    let what = Signal::try_from(sig).map_or("a signal", Signal::as_str);
    Failure {
        code: Exit::Interrupted,
        message: Some(format!(
            "{name}: interrupted by {what} while reading, after {read} bytes: nothing converted"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_limit_is_the_flags_default() {
        assert_eq!(measure::units::parse_size("256M"), Ok(DEFAULT_MAX));
        assert_eq!(size_text(DEFAULT_MAX), "256M");
        assert_eq!(size_text(3 << 30), "3G");
        assert_eq!(size_text(3072), "3K");
        assert_eq!(size_text(1000), "1000");
    }
}
