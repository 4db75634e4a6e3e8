//! The descriptors behind stdin and stdout: what kind of file each is, pipes of our own,
//! and moving bytes out of a pipe or a buffer to stdout.

use rustix::fs::{FileType, OFlags, fcntl_getfl, fstat, makedev};
use rustix::io::Errno;
use rustix::pipe::{PipeFlags, SpliceFlags, fcntl_setpipe_size, pipe_with, splice};
use rustix::stdio::stdout;
use std::io;
use std::os::fd::{AsFd, OwnedFd};

/// The most bytes one splice, sendfile or pipe holds.
pub const CHUNK: usize = 1 << 20;

/// Kind of file behind a descriptor, for choosing splice, sendfile or copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdKind {
    Pipe,
    Regular,
    Other,
}

pub fn fd_kind(fd: impl AsFd) -> FdKind {
    match fstat(fd).map(|st| FileType::from_raw_mode(st.st_mode)) {
        Ok(FileType::Fifo) => FdKind::Pipe,
        Ok(FileType::RegularFile) => FdKind::Regular,
        _ => FdKind::Other,
    }
}

pub fn is_append(fd: impl AsFd) -> bool {
    fcntl_getfl(fd).is_ok_and(|fl| fl.contains(OFlags::APPEND))
}

pub fn is_dev_null(fd: impl AsFd) -> bool {
    fstat(fd).is_ok_and(|st| {
        FileType::from_raw_mode(st.st_mode) == FileType::CharacterDevice
            && st.st_rdev == makedev(1, 3)
    })
}

/// Asks for a 1 MiB pipe behind `fd` (stdin or stdout), so that the process on the other end
/// and we trade fewer, larger turns; the kernel may refuse, which only costs speed.
pub fn grow_pipe(fd: impl AsFd) {
    let _ = fcntl_setpipe_size(fd, CHUNK);
}

/// A pipe of our own (read end, write end), grown like [`grow_pipe`].
pub fn make_pipe() -> Option<(OwnedFd, OwnedFd)> {
    let (r, w) = pipe_with(PipeFlags::CLOEXEC).ok()?;
    grow_pipe(&w);
    Some((r, w))
}

/// Moves exactly `n` bytes from the pipe `r` to stdout.
pub fn drain_pipe(r: impl AsFd, mut n: usize) -> io::Result<()> {
    // Bounded: every pass moves at least one byte or returns an error.
    while n > 0 {
        match splice(
            &r,
            None,
            stdout(),
            None,
            n,
            SpliceFlags::MOVE | SpliceFlags::MORE,
        ) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "stdout took nothing",
                ));
            }
            Ok(k) => n -= k,
            Err(Errno::INTR) => {}
            // stdout refuses splice after all: copy what is in the pipe.
            Err(Errno::INVAL) => return copy_pipe(r, n),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Copies exactly `n` bytes from the pipe `r` to stdout through a buffer.
fn copy_pipe(r: impl AsFd, mut n: usize) -> io::Result<()> {
    let mut buf = vec![0u8; n.min(CHUNK)];
    // Bounded: every pass moves at least one byte or returns an error.
    while n > 0 {
        let want = n.min(buf.len());
        match rustix::io::read(&r, &mut buf[..want]) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the pipe ran dry",
                ));
            }
            Ok(got) => {
                write_all(&buf[..got])?;
                n -= got;
            }
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Writes all of `b` to stdout.
pub fn write_all(mut b: &[u8]) -> io::Result<()> {
    // Bounded: every pass writes at least one byte or returns an error.
    while !b.is_empty() {
        match rustix::io::write(stdout(), b) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "stdout took nothing",
                ));
            }
            Ok(k) => b = &b[k..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}
