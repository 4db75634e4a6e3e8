//! Netcat mode's stdin side: sends stdin to the socket (splice from a pipe, sendfile from a
//! file, else read and send), then half-closes.

use crate::fdio::{CHUNK, FdKind, fd_kind, grow_pipe};
use crate::relay::net_error;
use crate::sock;
use socket2::Socket;
use std::io;
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What the stdin side sent.
#[derive(Debug)]
pub struct Sent<'a> {
    pub bytes: u64,
    pub first: Option<Instant>,
    pub last: Option<Instant>,
    /// Set at the first byte sent, for the socket side to see.
    any: &'a AtomicBool,
}

impl Sent<'_> {
    fn add(&mut self, n: u64) {
        self.bytes += n;
        self.any.store(true, Ordering::Release);
        let now = Instant::now();
        self.first.get_or_insert(now);
        self.last = Some(now);
    }
}

/// What one step of the stdin loop came to.
enum Step {
    More,
    Eof,
    /// The kernel cannot splice or sendfile this stdin: read and send instead.
    Fallback,
    Fail(String),
}

/// Sends stdin to the socket, then half-closes (a client always; a listener only when it
/// sent something, so that a listener with an empty stdin never cuts a client short).
/// Returns the byte count, the first and last send, and the error if any.
pub fn stdin_to_socket(
    s: &Socket,
    listener: bool,
    sent_any: &AtomicBool,
) -> (u64, Option<Instant>, Option<Instant>, Option<String>) {
    let fd = s.as_raw_fd();
    let mut sent = Sent {
        bytes: 0,
        first: None,
        last: None,
        any: sent_any,
    };
    let mut mode = fd_kind(0);
    if mode == FdKind::Pipe {
        grow_pipe(0);
    }
    let mut buf: Vec<u8> = Vec::new();
    // Ends at EOF, a fault or Ctrl-C; each pass waits a tick at most.
    let err: Option<String> = loop {
        if measure::cli::interrupted() {
            break Some("interrupted".into());
        }
        let step = match mode {
            FdKind::Other => copy_step(fd, &mut buf, &mut sent),
            _ => kernel_step(fd, mode, &mut sent),
        };
        match step {
            Step::More => {}
            Step::Fallback => mode = FdKind::Other,
            Step::Eof => break None,
            Step::Fail(e) => break Some(e),
        }
    };
    if err.is_none() && (!listener || sent.bytes > 0) {
        let _ = s.shutdown(Shutdown::Write);
    }
    (sent.bytes, sent.first, sent.last, err)
}

/// One splice (from a pipe) or sendfile (from a file) of stdin into the socket `fd`.
fn kernel_step(fd: i32, mode: FdKind, sent: &mut Sent) -> Step {
    let rc: isize = if mode == FdKind::Pipe {
        // SAFETY: splice between two valid descriptors, no offsets.
        unsafe {
            libc::splice(
                0,
                std::ptr::null_mut(),
                fd,
                std::ptr::null_mut(),
                CHUNK,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
            )
        }
    } else {
        // SAFETY: sendfile from stdin's current offset into the socket.
        unsafe { libc::sendfile(fd, 0, std::ptr::null_mut(), CHUNK) }
    };
    if rc > 0 {
        sent.add(rc as u64);
        return Step::More;
    }
    if rc == 0 {
        return Step::Eof;
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::Interrupted || sock::is_tick(&e) {
        return Step::More;
    }
    if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) && sent.bytes == 0 {
        return Step::Fallback;
    }
    Step::Fail(net_error(&e))
}

/// One read of stdin into `buf`, all of it then sent to the socket `fd`.
fn copy_step(fd: i32, buf: &mut Vec<u8>, sent: &mut Sent) -> Step {
    if buf.is_empty() {
        *buf = vec![0u8; 256 << 10];
    }
    // SAFETY: buf is writable for buf.len() bytes.
    let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Step::More;
        }
        return Step::Fail(format!("reading stdin: {e}"));
    }
    if n == 0 {
        return Step::Eof;
    }
    send_all(fd, &buf[..n as usize], sent)
}

/// Sends all of `data` to the socket `fd`, waiting out full buffers a tick at a time.
fn send_all(fd: i32, data: &[u8], sent: &mut Sent) -> Step {
    let mut off = 0usize;
    // Bounded by Ctrl-C; every other pass sends at least a byte or fails.
    while off < data.len() {
        // SAFETY: data[off..] is initialised and in bounds.
        let w = unsafe {
            libc::send(
                fd,
                data.as_ptr().add(off).cast(),
                data.len() - off,
                libc::MSG_NOSIGNAL,
            )
        };
        if w < 0 {
            let e = io::Error::last_os_error();
            if sock::is_tick(&e) || e.kind() == io::ErrorKind::Interrupted {
                if measure::cli::interrupted() {
                    return Step::Fail("interrupted".into());
                }
                continue;
            }
            return Step::Fail(net_error(&e));
        }
        off += w as usize;
        sent.add(w as u64);
    }
    Step::More
}
