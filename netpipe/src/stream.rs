//! One measured connection: the send loop (from a pre-generated source) and the discarding
//! receive loop (recv with MSG_TRUNC: the kernel drops the bytes without copying them).

use crate::ctl::{Ctl, Progress};
use crate::end::{End, Outcome, classify};
use crate::lowat::Lowat;
use crate::sock;
use crate::source::Source;
use socket2::Socket;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Sends from `src` until the budget, the time limit, Ctrl-C or a fault; then half-closes
/// and waits for the peer to close, so that the end time covers delivery.
pub fn send(s: &Socket, ctl: &Ctl, prog: &Progress, src: &mut Source) -> Outcome {
    let start = ctl.now_ns();
    ctl.mark_first(start);
    let mut claimed = 0u64;
    let mut last_move = Instant::now();
    let mut sent = 0u64;
    let chunk = src.chunk();
    // Ends on the limit, Ctrl-C, the idle timeout or an error; each pass waits a tick at most.
    let end = loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break End::Stopped;
        }
        let now = Instant::now();
        if ctl.past_deadline(ctl.ns(now)) {
            break End::Limit;
        }
        if claimed == 0 {
            claimed = ctl.claim(chunk);
            if claimed == 0 {
                break End::Limit;
            }
        }
        match src.push(s, claimed as usize) {
            Ok(n) => {
                claimed -= n as u64;
                sent += n as u64;
                prog.bytes.fetch_add(n as u64, Ordering::AcqRel);
                last_move = now;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if sock::is_tick(&e) => {
                if let Some(idle) = ctl.idle
                    && last_move.elapsed() >= idle
                {
                    break End::Idle(idle);
                }
            }
            Err(e) => break classify(&e),
        }
    };
    let mut end_ns = ctl.now_ns();
    let mut tcp = sock::tcp_info(s);
    let mut peer_closed = false;
    let mut end = end;
    if end.is_clean() {
        let _ = s.shutdown(std::net::Shutdown::Write);
        match drain_until_close(s, ctl) {
            Ok(()) => {
                peer_closed = true;
                end_ns = ctl.now_ns();
            }
            Err(Some(e)) => end = e,
            Err(None) => {}
        }
        tcp = sock::tcp_info(s).or(tcp);
    } else if end == End::Stopped {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let end_ns = (sent > 0).then_some(end_ns);
    ctl.finish(prog, end_ns);
    Outcome {
        end,
        bytes: sent,
        first_ns: (sent > 0).then_some(start),
        end_ns,
        tcp,
        peer_closed,
        method: src.word(),
    }
}

/// After the half-close, reads (and drops) until the peer closes: that is when the peer has
/// everything. Gives up after the idle timeout (10 s without one) or on Ctrl-C.
fn drain_until_close(s: &Socket, ctl: &Ctl) -> Result<(), Option<End>> {
    let limit = ctl.idle.unwrap_or(Duration::from_secs(10));
    let started = Instant::now();
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    // Bounded by `limit` and Ctrl-C; each pass waits a tick at most.
    loop {
        if ctl.stop.load(Ordering::Relaxed) || started.elapsed() >= limit {
            return Err(None);
        }
        match s.recv_with_flags(&mut buf, libc::MSG_TRUNC) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
            Err(e) if sock::is_tick(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return match classify(&e) {
                    // A reset after everything was sent and acknowledged is how some peers
                    // close.
                    End::PeerGone(_) => Err(None),
                    other => Err(Some(other)),
                };
            }
        }
    }
}

/// Receives and drops everything until EOF, the budget, the time limit, Ctrl-C or a fault.
/// `buf` is only a landing area for the fallback copy; with MSG_TRUNC nothing is copied, and
/// what lands is never read.
pub fn recv(s: &Socket, ctl: &Ctl, prog: &Progress, buf: &mut [MaybeUninit<u8>]) -> Outcome {
    let mut first: Option<u64> = None;
    let mut got = 0u64;
    let mut last_move = Instant::now();
    let mut end_ns = None;
    let mut flags = libc::MSG_TRUNC;
    let mut lowat = Lowat::new();
    // Ends on EOF, the limit, Ctrl-C, the idle timeout or an error; each pass waits a tick
    // at most.
    let end = loop {
        if ctl.stop.load(Ordering::Relaxed) {
            break End::Stopped;
        }
        let want = ctl.claim(buf.len() as u64);
        if want == 0 {
            break End::Limit;
        }
        let rc = s.recv_with_flags(&mut buf[..want as usize], flags);
        let now = Instant::now();
        match rc {
            Ok(n) if n > 0 => {
                let n = n as u64;
                ctl.give_back(want - n.min(want));
                let ns = ctl.ns(now);
                if first.is_none() {
                    first = Some(ns);
                    ctl.mark_first(ns);
                }
                got += n;
                prog.bytes.fetch_add(n, Ordering::AcqRel);
                end_ns = Some(ns);
                last_move = now;
                if let Some(f) = first {
                    lowat.tune(s, got, ns.saturating_sub(f));
                }
                if ctl.past_deadline(ns) {
                    break End::Limit;
                }
                continue;
            }
            Ok(_) => {
                ctl.give_back(want);
                end_ns = Some(ctl.ns(now));
                break End::Eof;
            }
            Err(e) => {
                ctl.give_back(want);
                if let Some(end) = recv_error(&e, ctl, now, last_move, &mut flags) {
                    break end;
                }
            }
        }
    };
    // Done first, then close at once so that a sender waiting for our close sees it now:
    // whoever stops a --keep-open listener after the sender has ended (a script's Ctrl-C)
    // must find this stream finished, not cut short.
    let end_ns = if got > 0 { end_ns } else { None };
    ctl.finish(prog, end_ns);
    let _ = s.shutdown(std::net::Shutdown::Both);
    Outcome {
        end,
        bytes: got,
        first_ns: first,
        end_ns,
        tcp: None,
        peer_closed: false,
        method: "",
    }
}

/// What a failed recv means for the stream: how it ends, or `None` to go on (after EINTR or a
/// tick, or copying where the socket has no MSG_TRUNC discard).
fn recv_error(
    e: &io::Error,
    ctl: &Ctl,
    now: Instant,
    last_move: Instant,
    flags: &mut i32,
) -> Option<End> {
    if e.kind() == io::ErrorKind::Interrupted {
        return None;
    }
    if sock::is_tick(e) {
        if ctl.past_deadline(ctl.ns(now)) {
            return Some(End::Limit);
        }
        if let Some(idle) = ctl.idle
            && last_move.elapsed() >= idle
        {
            return Some(End::Idle(idle));
        }
        return None;
    }
    if e.raw_os_error() == Some(libc::EINVAL) && *flags != 0 {
        // No MSG_TRUNC discard on this socket: copy into the buffer instead.
        *flags = 0;
        return None;
    }
    Some(classify(e))
}
