//! Netcat mode's stdin side: sends stdin to the socket (splice from a pipe, sendfile from a
//! file, else read and send), then half-closes.

use crate::fdio::{CHUNK, FdKind, fd_kind, grow_pipe};
use crate::sock::{self, net_error};
use rustix::fs::sendfile;
use rustix::io::Errno;
use rustix::pipe::{SpliceFlags, splice};
use rustix::stdio::stdin;
use socket2::Socket;
use std::io;
use std::net::Shutdown;
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
    let mut sent = Sent {
        bytes: 0,
        first: None,
        last: None,
        any: sent_any,
    };
    let mut mode = fd_kind(stdin());
    if mode == FdKind::Pipe {
        grow_pipe(stdin());
    }
    let mut buf: Vec<u8> = Vec::new();
    // Ends at EOF, a fault or Ctrl-C; each pass waits a tick at most.
    let err: Option<String> = loop {
        if measure::signal::interrupted() {
            break Some("interrupted".into());
        }
        let step = match mode {
            FdKind::Other => copy_step(s, &mut buf, &mut sent),
            _ => kernel_step(s, mode, &mut sent),
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

/// One splice (from a pipe) or sendfile (from a file) of stdin into the socket `s`.
fn kernel_step(s: &Socket, mode: FdKind, sent: &mut Sent) -> Step {
    let rc = if mode == FdKind::Pipe {
        let flags = SpliceFlags::MOVE | SpliceFlags::MORE;
        splice(stdin(), None, s, None, CHUNK, flags)
    } else {
        sendfile(s, stdin(), None, CHUNK)
    };
    let e = match rc {
        Ok(0) => return Step::Eof,
        Ok(n) => {
            sent.add(n as u64);
            return Step::More;
        }
        Err(e) => io::Error::from(e),
    };
    if e.kind() == io::ErrorKind::Interrupted || sock::is_tick(&e) {
        return Step::More;
    }
    if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOSYS)) && sent.bytes == 0 {
        return Step::Fallback;
    }
    Step::Fail(net_error(&e))
}

/// One read of stdin into `buf`, all of it then sent to the socket `s`.
fn copy_step(s: &Socket, buf: &mut Vec<u8>, sent: &mut Sent) -> Step {
    if buf.is_empty() {
        *buf = vec![0u8; 256 << 10];
    }
    match rustix::io::read(stdin(), &mut buf[..]) {
        Ok(0) => Step::Eof,
        Ok(n) => send_all(s, &buf[..n], sent),
        Err(Errno::INTR) => Step::More,
        Err(e) => Step::Fail(format!("reading stdin: {}", io::Error::from(e))),
    }
}

/// Sends all of `data` to the socket `s`, waiting out full buffers a tick at a time.
fn send_all(s: &Socket, data: &[u8], sent: &mut Sent) -> Step {
    let mut off = 0usize;
    // Bounded by Ctrl-C; every other pass sends at least a byte or fails.
    while off < data.len() {
        match s.send_with_flags(&data[off..], libc::MSG_NOSIGNAL) {
            Ok(w) => {
                off += w;
                sent.add(w as u64);
            }
            Err(e) if sock::is_tick(&e) || e.kind() == io::ErrorKind::Interrupted => {
                if measure::signal::interrupted() {
                    return Step::Fail("interrupted".into());
                }
            }
            Err(e) => return Step::Fail(net_error(&e)),
        }
    }
    Step::More
}
