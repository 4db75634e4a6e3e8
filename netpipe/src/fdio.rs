//! The descriptors behind stdin and stdout: what kind of file each is, pipes of our own,
//! and moving bytes out of a pipe or a buffer to stdout.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// The most bytes one splice, sendfile or pipe holds.
pub const CHUNK: usize = 1 << 20;

/// Kind of file behind a descriptor, for choosing splice, sendfile or copying.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FdKind {
    Pipe,
    Regular,
    Other,
}

pub fn fd_kind(fd: RawFd) -> FdKind {
    // SAFETY: stat is plain old data; fstat fills it for a valid descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid, writable stat.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return FdKind::Other;
    }
    match st.st_mode & libc::S_IFMT {
        libc::S_IFIFO => FdKind::Pipe,
        libc::S_IFREG => FdKind::Regular,
        _ => FdKind::Other,
    }
}

pub fn is_append(fd: RawFd) -> bool {
    // SAFETY: F_GETFL only reads the descriptor's flags.
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    fl >= 0 && fl & libc::O_APPEND != 0
}

pub fn is_dev_null(fd: RawFd) -> bool {
    // SAFETY: as in fd_kind.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: st is a valid, writable stat.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return false;
    }
    st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == libc::makedev(1, 3)
}

/// Asks for a 1 MiB pipe behind `fd` (stdin or stdout), so that the process on the other end
/// and we trade fewer, larger turns; the kernel may refuse, which only costs speed.
pub fn grow_pipe(fd: RawFd) {
    // SAFETY: F_SETPIPE_SZ on a descriptor that fstat says is a pipe; failure is harmless.
    unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
}

pub fn make_pipe() -> Option<(OwnedFd, OwnedFd)> {
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    let (r, w) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: F_SETPIPE_SZ on our own pipe; failure leaves the default size, which works.
    unsafe { libc::fcntl(w.as_raw_fd(), libc::F_SETPIPE_SZ, CHUNK as libc::c_int) };
    Some((r, w))
}

/// Moves exactly `n` bytes from the pipe `r` to stdout.
pub fn drain_pipe(r: RawFd, mut n: usize) -> io::Result<()> {
    // Bounded: every pass moves at least one byte or returns an error.
    while n > 0 {
        // SAFETY: splice between two valid descriptors, no offsets.
        let rc = unsafe {
            libc::splice(
                r,
                std::ptr::null_mut(),
                1,
                std::ptr::null_mut(),
                n,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
            )
        };
        if rc > 0 {
            n -= rc as usize;
            continue;
        }
        if rc == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "stdout took nothing",
            ));
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if e.raw_os_error() == Some(libc::EINVAL) {
            // stdout refuses splice after all: copy what is in the pipe.
            let mut buf = vec![0u8; n.min(CHUNK)];
            while n > 0 {
                let want = n.min(buf.len());
                // SAFETY: buf is writable for want bytes.
                let got = unsafe { libc::read(r, buf.as_mut_ptr().cast(), want) };
                if got <= 0 {
                    return Err(io::Error::last_os_error());
                }
                write_all(1, &buf[..got as usize])?;
                n -= got as usize;
            }
            return Ok(());
        }
        return Err(e);
    }
    Ok(())
}

pub fn write_all(fd: RawFd, mut b: &[u8]) -> io::Result<()> {
    // Bounded: every pass writes at least one byte or returns an error.
    while !b.is_empty() {
        // SAFETY: b is a valid initialised slice.
        let rc = unsafe { libc::write(fd, b.as_ptr().cast(), b.len()) };
        if rc < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if rc == 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                "stdout took nothing",
            ));
        }
        b = &b[rc as usize..];
    }
    Ok(())
}
