//! One measured connection: the send loop (from a pre-generated source) and the discarding
//! receive loop (recv with MSG_TRUNC: the kernel drops the bytes without copying them).

use crate::agree::{self, Held, Hello, Pre};
use crate::ctl::{Ctl, Progress};
use crate::end::{End, Outcome, classify};
use crate::lowat::Lowat;
use crate::sock;
use crate::source::Source;
use socket2::Socket;
use std::io::{self, Read};
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Sends from `src` until the budget, the time limit, Ctrl-C or a fault; then half-closes
/// and waits for the peer to close, so that the end time covers delivery. Stream `index` of
/// its session greets a netpipe peer first (agree.rs).
pub fn send(
    s: &Socket,
    ctl: &Ctl,
    prog: &Progress,
    src: &mut Source,
    index: u16,
    pre: Pre,
) -> Outcome {
    let me = Hello { index, ..ctl.greet };
    let greeted = match pre {
        Pre::NotBegun => agree::greet_as_sender(s, &me, ctl),
        Pre::Hello(_) if !agree::write_within(s, &me.encode(), Duration::from_secs(1)) => {
            Err("the receiver took the connection but not our hello".into())
        }
        Pre::Hello(h) => Ok(Some(h)),
        Pre::Plain => Ok(None),
    };
    let peer = match greeted {
        Ok(p) => p,
        Err(why) => {
            ctl.finish(prog, None);
            return Outcome::nothing(End::Failed(why), src.word());
        }
    };
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
            Err(e) => break cut_or(classify(&e), peer.as_ref(), &me),
        }
    };
    let mut o = Outcome::nothing(end, src.word());
    o.bytes = sent;
    o.peer_hello = peer;
    o.first_ns = (sent > 0).then_some(start);
    send_end(s, ctl, &mut o);
    ctl.finish(prog, o.end_ns);
    o
}

/// The end of a send: the end mark to a netpipe peer, the half-close, and the wait for the
/// peer to close (bounded by a grace after --time or Ctrl-C, so --time holds however slowly
/// the peer reads: a peer that has not taken everything by then is `Stalled`).
fn send_end(s: &Socket, ctl: &Ctl, o: &mut Outcome) {
    let end_ns = ctl.now_ns();
    o.end_ns = (o.bytes > 0).then_some(end_ns);
    o.tcp = sock::tcp_info(s);
    let stopped = o.end == End::Stopped;
    if !o.end.is_clean() && !stopped {
        return;
    }
    let grace = Duration::from_secs(1)
        + o.tcp
            .map_or(Duration::ZERO, |t| Duration::from_secs_f64(t.rtt_s * 4.0));
    if o.peer_hello.is_some() {
        let finished = o.end.is_clean() || ctl.greet.unlimited();
        let m = agree::mark(b"END ", o.bytes, u32::from(finished));
        if !agree::write_within(s, &m, grace) {
            o.end = stalled(s, grace, "--time");
            return;
        }
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    if stopped && o.peer_hello.is_none() {
        return;
    }
    let timed = ctl.greet.time_ns != 0 || stopped;
    let limit = if timed {
        grace
    } else {
        ctl.idle.unwrap_or(Duration::from_secs(10))
    };
    let mut report = Vec::new();
    match drain_until_close(s, ctl, limit, !stopped, &mut report) {
        Ok(()) => {
            o.peer_closed = true;
            o.end_ns = o.end_ns.map(|_| ctl.now_ns());
        }
        Err(Some(e)) => o.end = e,
        Err(None) if timed && (o.peer_hello.is_some() || !acked(s)) => {
            o.end = stalled(s, grace, if stopped { "Ctrl-C" } else { "--time" });
        }
        Err(None) => {}
    }
    o.tcp = sock::tcp_info(s).or(o.tcp);
    if o.peer_hello.is_some() {
        o.peer_count = agree::read_mark(b"GOT ", &report).map(|(n, _)| n);
        match o.peer_count {
            Some(n) if n < o.bytes && o.end.is_clean() => {
                o.end = End::PeerGone(format!(
                    "the receiver took {n} of the {} bytes sent on this stream",
                    o.bytes
                ));
            }
            None if o.end.is_clean() => {
                o.end = End::PeerGone("the receiver closed without saying what it got".into());
            }
            _ => {}
        }
    }
}

/// A sender whose receiver closed on it: when the receiver's hello gave a cap that this
/// sender's own limits go past (a --serve's --session-bytes or --session-time), the
/// receiver cut the session at its cap, and the sample says so.
fn cut_or(end: End, peer: Option<&Hello>, me: &Hello) -> End {
    let (End::PeerGone(why), Some(h)) = (&end, peer) else {
        return end;
    };
    let over_bytes = h.bytes != u64::MAX && me.bytes > h.bytes;
    let over_time = h.time_ns != 0 && (me.time_ns == 0 || me.time_ns > h.time_ns);
    let cap = if over_bytes {
        format!(
            "its --bytes of {}",
            measure::units::format_bytes(h.bytes as f64)
        )
    } else if over_time {
        format!(
            "its --time of {}",
            measure::units::format_seconds(h.time_ns as f64 / 1e9)
        )
    } else {
        return end;
    };
    End::PeerGone(format!(
        "cut: the receiver ended the session at {cap}, before this sender's limit ({why})"
    ))
}

/// Whether the peer's kernel has acknowledged everything written.
fn acked(s: &Socket) -> bool {
    sock::tcp_info(s).is_none_or(|t| t.all_acked())
}

fn stalled(s: &Socket, grace: Duration, after: &str) -> End {
    let left = sock::tcp_info(s).map_or(0, |t| t.unacked_bytes());
    End::Stalled(format!(
        "the peer stopped reading: about {left} bytes were still not taken {} after {after} ended",
        measure::units::format_seconds(grace.as_secs_f64())
    ))
}

/// After the half-close, reads until the peer closes: that is when the peer has everything.
/// The first bytes go to `report` (a netpipe receiver's count). Gives up after `limit`, or
/// on Ctrl-C when `heed_stop`.
fn drain_until_close(
    s: &Socket,
    ctl: &Ctl,
    limit: Duration,
    heed_stop: bool,
    report: &mut Vec<u8>,
) -> Result<(), Option<End>> {
    let started = Instant::now();
    let mut buf = [0u8; 4096];
    // Bounded by `limit` and Ctrl-C; each pass waits a tick at most.
    loop {
        if (heed_stop && ctl.stop.load(Ordering::Relaxed)) || started.elapsed() >= limit {
            return Err(None);
        }
        match (&*s).read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => {
                let room = agree::MARK_LEN.saturating_sub(report.len()).min(n);
                report.extend_from_slice(&buf[..room]);
            }
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
/// what lands is never read. Stream `index` greets a netpipe peer first (agree.rs), and then
/// holds back the sender's end mark until the FIN.
pub fn recv(
    s: &Socket,
    ctl: &Ctl,
    prog: &Progress,
    buf: &mut [MaybeUninit<u8>],
    index: u16,
    pre: Pre,
) -> Outcome {
    let me = Hello { index, ..ctl.greet };
    let greeted = match pre {
        Pre::NotBegun => agree::greet_as_receiver(s, &me, ctl),
        Pre::Hello(h) => Ok(Some(h)),
        Pre::Plain => Ok(None),
    };
    let peer = match greeted {
        Ok(p) => p,
        Err(e) => {
            ctl.finish(prog, None);
            let _ = s.shutdown(std::net::Shutdown::Both);
            return Outcome::nothing(classify(&e), "");
        }
    };
    let mut lowat = Lowat::new();
    let mut o = Outcome::nothing(End::Eof, "");
    o.peer_hello = peer;
    let mut tail = Vec::new();
    o.end = recv_loop(s, ctl, prog, buf, &mut lowat, &mut o, &mut tail);
    if o.end == End::Limit && peer.is_some_and(|p| ends_by_itself(&p, ctl)) {
        drain_to_fin(s, buf);
    }
    if peer.is_some() {
        judge_end_mark(&mut o, tail);
        let got = agree::mark(b"GOT ", o.bytes, 0);
        let _ = agree::write_within(s, &got, Duration::from_millis(500));
    }
    // Done first, then close at once so that a sender waiting for our close sees it now:
    // whoever stops a --keep-open listener after the sender has ended (a script's Ctrl-C)
    // must find this stream finished, not cut short.
    if o.bytes == 0 {
        o.end_ns = None;
    }
    ctl.finish(prog, o.end_ns);
    let _ = s.shutdown(std::net::Shutdown::Both);
    o
}

/// Whether a netpipe sender, at this receiver's limit, ends by itself at about the same
/// moment: its own --bytes is within this receiver's, or its own --time within this one's.
/// A sender that asked for more is cut at the cap (the socket closed), not drained.
fn ends_by_itself(p: &Hello, ctl: &Ctl) -> bool {
    let me = &ctl.greet;
    let by_bytes = p.bytes != u64::MAX && me.bytes != u64::MAX && p.bytes <= me.bytes;
    let by_time = p.time_ns != 0 && me.time_ns != 0 && p.time_ns <= me.time_ns;
    by_bytes || by_time
}

/// How long a receiver past its own limit waits for a limited netpipe sender's FIN.
const DRAIN: Duration = Duration::from_secs(2);

/// After this side's limit, a netpipe sender with a limit of its own ends by itself at about
/// the same moment: take (and drop, uncounted) what it still sends until its FIN, for at most
/// [`DRAIN`], so that the close is not a reset, which the sender would rightly take for a
/// fault (closing with unread bytes makes the kernel reset the connection).
fn drain_to_fin(s: &Socket, buf: &mut [MaybeUninit<u8>]) {
    let until = Instant::now() + DRAIN;
    while Instant::now() < until {
        match s.recv_with_flags(buf, libc::MSG_TRUNC) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted || sock::is_tick(&e) => {}
            Err(_) => return,
        }
    }
}

/// What the sender's end mark says of a stream that reached EOF: all arrived, or how not.
/// Held-back bytes that are no end mark are data.
fn judge_end_mark(o: &mut Outcome, tail: Vec<u8>) {
    if o.end != End::Eof {
        // Data that arrived; but past a limit (--bytes, --time) it is not counted.
        if o.end != End::Limit {
            o.bytes += tail.len() as u64;
        }
        return;
    }
    let m = agree::read_mark(b"END ", &tail);
    o.peer_count = m.map(|(n, _)| n);
    o.end = match m {
        Some((n, 1)) if n == o.bytes => End::Eof,
        Some((n, 1)) => End::PeerGone(format!(
            "the sender sent {n} bytes on this stream, {} arrived",
            o.bytes
        )),
        Some(_) => End::PeerGone("the sender was interrupted before its limit".into()),
        None => {
            o.bytes += tail.len() as u64;
            End::PeerGone(
                "the sender vanished: its stream ended without netpipe's end mark (killed?)".into(),
            )
        }
    };
}

/// The receive loop: takes data until EOF (`tail` then holds what was held back), a limit,
/// Ctrl-C, the idle timeout or an error; counts into `o` and `prog`.
fn recv_loop(
    s: &Socket,
    ctl: &Ctl,
    prog: &Progress,
    buf: &mut [MaybeUninit<u8>],
    lowat: &mut Lowat,
    o: &mut Outcome,
    tail: &mut Vec<u8>,
) -> End {
    let held = o.peer_hello.is_some();
    let mut last_move = Instant::now();
    let mut flags = libc::MSG_TRUNC;
    // Ends on EOF, the limit, Ctrl-C, the idle timeout or an error; each pass waits a tick
    // at most.
    loop {
        if ctl.stop.load(Ordering::Relaxed) {
            return End::Stopped;
        }
        let want = ctl.claim(buf.len() as u64);
        if want == 0 {
            return End::Limit;
        }
        let rc = if held {
            match agree::held_recv(s, &mut buf[..want as usize], flags, tail) {
                Ok(Held::Data(0)) => {
                    ctl.give_back(want);
                    continue;
                }
                Ok(Held::Data(n)) => Ok(n),
                Ok(Held::Fin) => Ok(0),
                Err(e) => Err(e),
            }
        } else {
            s.recv_with_flags(&mut buf[..want as usize], flags)
        };
        let now = Instant::now();
        match rc {
            Ok(n) if n > 0 => {
                let n = n as u64;
                ctl.give_back(want - n.min(want));
                let ns = ctl.ns(now);
                let first = *o.first_ns.get_or_insert_with(|| {
                    ctl.mark_first(ns);
                    ns
                });
                o.bytes += n;
                prog.bytes.fetch_add(n, Ordering::AcqRel);
                o.end_ns = Some(ns);
                last_move = now;
                lowat.tune(s, o.bytes, ns.saturating_sub(first));
                if ctl.past_deadline(ns) {
                    return End::Limit;
                }
            }
            Ok(_) => {
                ctl.give_back(want);
                o.end_ns = Some(ctl.ns(now));
                return End::Eof;
            }
            Err(e) => {
                ctl.give_back(want);
                if let Some(end) = recv_error(&e, ctl, now, last_move, &mut flags) {
                    return end;
                }
            }
        }
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
