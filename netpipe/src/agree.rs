//! How two netpipes in measuring mode agree on what was sent (netpipe/1), while a plain nc,
//! socat or dd on the other end still moves raw bytes.
//!
//! The receiver of the data speaks first, on the direction that carries no data: a 64-byte
//! hello (role, the streams of its session, its limits), as soon as the connection is up
//! when it connected, and when it listens only after the client stayed silent for [`QUIET`]
//! (a netpipe sender waits silently for the hello; a plain client, `dd | nc`, speaks at once
//! and so hears nothing). A sender that gets it within [`hello_wait`] and [`QUIET`] answers
//! with its own hello as the first 64 bytes
//! of the stream and ends with a 32-byte end mark (the bytes it sent on the stream, and
//! whether it finished as asked) before it half-closes. The receiver strips the hello, holds
//! the last 32 bytes back until the FIN and reads the end mark from them, then reports what
//! it received (32 bytes) before it closes. A sender that hears no hello sends the pattern
//! and nothing else; a receiver whose first bytes are not a hello counts them all as data. So
//! with nc on the receiving end the stream is the pattern alone, and with nc on the sending
//! end nc hears nothing, unless it stays silent for [`QUIET`] first (then the receiver's
//! hello reaches nc's stdout, as it does when netpipe connects to nc). Neither side's figure counts
//! the hello, the end mark or the report.

use crate::ctl::Ctl;
use crate::sock;
use crate::wire::MAGIC;
pub use crate::wire::{HELLO_LEN, Hello, MARK_LEN, deny_mark, is_deny, mark, read_mark};
use crate::wire::{KEY_BLOCK_LEN, hello_wire_len};
use rustix::net::{RecvFlags, recv};
use socket2::Socket;
use std::io;
use std::mem::MaybeUninit;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// How far a stream's netpipe/1 greeting went before its thread starts.
#[derive(Clone, Copy, Debug)]
pub enum Pre {
    /// Not begun: the stream's thread does the greeting (a connecting side).
    NotBegun,
    /// The listener looked and the peer said no hello: a plain peer, whose bytes are data.
    Plain,
    /// The listener took this hello from the peer (and, as a receiver, said its own).
    Hello(Hello),
}

impl Pre {
    /// What a listener heard from an accepted connection: a hello, or none.
    pub fn heard(h: Option<Hello>) -> Pre {
        h.map_or(Pre::Plain, Pre::Hello)
    }
}

/// The longest a listener holds a client's hello before it answers: the delay after its
/// address's wrong tokens (`throttle`), which a client waits out for the verdict.
pub const MOST_HELD: Duration = Duration::from_secs(5);

/// What a client says when a listener refused its token (or its lack of one), from the
/// listener's `DENY` mark: which process refused it, so that a stale listener holding the
/// port (an earlier run's, started with another token) can be told from a mistyped token.
pub fn refused(deny: &[u8]) -> String {
    let who = match read_mark(b"DENY", &deny[..deny.len().min(MARK_LEN)]) {
        Some((secs, pid)) if pid != 0 => format!(
            " (netpipe pid {pid} on that machine, listening for {})",
            match secs {
                0..60 => format!("{secs} s"),
                60..3600 => format!("{} min", secs / 60),
                _ => format!("{:.1} h", secs as f64 / 3600.0),
            }
        ),
        _ => String::new(),
    };
    format!(
        "the listener refused this client{who}: it takes only netpipe clients that give the token it was started with, and this is not it: give that token (--token, or NETPIPE_TOKEN); or, if that listener is not the one meant (one left from an earlier run holds the port), stop it or use another port"
    )
}

/// How long a listening receiver waits for the client to speak before it says its hello: a
/// client that sends data at once (nc) is plain and hears nothing; a netpipe sender stays
/// silent, waiting for the hello.
pub const QUIET: Duration = Duration::from_millis(100);

/// How long a sender waits for the receiver's hello before it takes the peer for a plain
/// one: a quarter second, more on a long path.
pub fn hello_wait(s: &Socket) -> Duration {
    let rtt = sock::tcp_info(s).map_or(0.0, |t| t.rtt_s);
    Duration::from_millis(250) + Duration::from_secs_f64(rtt * 4.0)
}

/// Writes all of `b` within `limit` (the socket's send timeout is a tick); `false` if not.
pub fn write_within(s: &Socket, b: &[u8], limit: Duration) -> bool {
    let start = Instant::now();
    let mut off = 0;
    // Bounded by `limit`; each pass waits a tick at most.
    while off < b.len() {
        if start.elapsed() >= limit {
            return false;
        }
        match s.send_with_flags(&b[off..], libc::MSG_NOSIGNAL) {
            Ok(n) => off += n,
            Err(e) if sock::is_tick(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
    true
}

/// The receiver's side of the greeting: says hello, then looks (without taking them) at the
/// first bytes: the sender's hello is taken off, anything else is data. `Err` is the error
/// that ended the stream first; `Ok(None)` a plain peer.
pub fn greet_as_receiver(s: &Socket, me: &Hello, ctl: &Ctl) -> io::Result<Option<Hello>> {
    let _ = write_within(s, &me.encode(), Duration::from_secs(1));
    let mut b = [0u8; HELLO_LEN + KEY_BLOCK_LEN];
    let started = Instant::now();
    // Bounded by Ctrl-C and the idle timeout; each pass waits a tick at most.
    loop {
        if ctl.stop.load(Ordering::Relaxed) || ctl.idle.is_some_and(|d| started.elapsed() >= d) {
            return Ok(None);
        }
        match recv(s, &mut b[..HELLO_LEN], RecvFlags::PEEK | RecvFlags::WAITALL) {
            Ok((n, _)) => {
                let got = &b[..n];
                if is_deny(got) && n >= MARK_LEN {
                    return Err(io::Error::other(refused(got)));
                }
                let prefix = n.min(12);
                let hello_prefix = [&MAGIC[..], b"HELO"].concat();
                let deny_prefix = [&MAGIC[..], b"DENY"].concat();
                if (n < 12 && got == &deny_prefix[..n]) || (is_deny(got) && n < MARK_LEN) {
                    // Part of a refusal, or of a hello: wait for the rest.
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
                if n == 0 || got[..prefix] != hello_prefix[..prefix] {
                    return Ok(None);
                }
                let whole = hello_wire_len(got).unwrap_or(HELLO_LEN);
                if n == HELLO_LEN && whole > n {
                    // A hello with a key block: look at both.
                    if let Ok((m, _)) = recv(s, &mut b[..whole], RecvFlags::PEEK)
                        && m < whole
                    {
                        std::thread::sleep(Duration::from_millis(1));
                        continue;
                    }
                }
                if n == HELLO_LEN {
                    let h = Hello::decode(&b[..whole]);
                    if h.is_some() {
                        let _ = recv(s, &mut b[..whole], RecvFlags::WAITALL);
                    }
                    // A listening receiver greets every connection as from a sender; ours
                    // (--bidir's reverse) asks it to send: its sender's hello follows.
                    if h.is_some_and(|h| h.role == b'R') {
                        continue;
                    }
                    return Ok(h.filter(|h| h.role == b'S'));
                }
                // A part of a hello: wait for the rest (MSG_WAITALL returned at a tick).
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) if e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::INTR => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// The sender's side: waits for the receiver's hello and answers it. `Ok(None)` is a plain
/// peer; `Err` a stream that a netpipe peer did not take (it greeted the session's others).
///
/// A --bidir client's reverse sender speaks first (`ctl.speak_first`): a listening sender
/// says nothing until spoken to, and a hello in its own role asks it to receive.
pub fn greet_as_sender(s: &Socket, me: &Hello, ctl: &Ctl) -> Result<Option<Hello>, String> {
    // A listening receiver says its hello after QUIET of the client's silence.
    let wait = hello_wait(s) + QUIET;
    if ctl.speak_first && !write_within(s, &me.encode(), wait) {
        return Err("the peer did not take our hello".into());
    }
    let started = Instant::now();
    let mut have = 0usize;
    let mut got = [0u8; HELLO_LEN];
    // Bounded by `wait` and Ctrl-C; each pass waits a tick at most.
    while have < HELLO_LEN && !ctl.stop.load(Ordering::Relaxed) {
        let left = wait.saturating_sub(started.elapsed());
        if left.is_zero() || !sock::poll_in(s, left.min(sock::TICK)).unwrap_or(false) {
            if left.is_zero() {
                break;
            }
            continue;
        }
        match recv(s, &mut got[have..], RecvFlags::empty()) {
            Ok((0, _)) | Err(_) => break,
            Ok((n, _)) => have += n,
        }
    }
    if is_deny(&got[..have]) {
        return Err(refused(&got[..have]));
    }
    match Hello::decode(&got[..have]).filter(|h| h.role == b'R') {
        Some(h) => {
            ctl.hellos.fetch_add(1, Ordering::AcqRel);
            if h.wants_token && me.key.is_none() {
                return Err("the listener takes only clients that give its token: give the same --token (or NETPIPE_TOKEN) as it was given".into());
            }
            if !ctl.speak_first && !write_within(s, &me.encode(), wait) {
                return Err("the receiver took the connection but not our hello".into());
            }
            if h.wants_token && !ctl.speak_first {
                admitted(s, wait, ctl)?;
            }
            Ok(Some(h))
        }
        None if ctl.hellos.load(Ordering::Acquire) > 0 => Err(format!(
            "the peer (a netpipe) greeted this session's other streams but did not take this one within {} (does it take fewer streams, -P?)",
            measure::units::format_seconds(wait.as_secs_f64())
        )),
        None if ctl.speak_first => Err(format!(
            "the peer did not take the reverse direction (--bidir) within {}: is it a netpipe listener?",
            measure::units::format_seconds(wait.as_secs_f64())
        )),
        None => Ok(None),
    }
}

/// A sender's wait for a token-checking listener's answer to its hello: `OK  ` or `DENY`
/// (after [`MOST_HELD`] at most, where the listener holds the hellos of an address that gave
/// wrong tokens).
fn admitted(s: &Socket, wait: Duration, ctl: &Ctl) -> Result<(), String> {
    let wait = wait + MOST_HELD;
    let started = Instant::now();
    let mut b = [0u8; MARK_LEN];
    let mut have = 0;
    // Bounded by `wait` and Ctrl-C; each pass waits a tick at most.
    while have < MARK_LEN && !ctl.stop.load(Ordering::Relaxed) {
        let left = wait.saturating_sub(started.elapsed());
        if left.is_zero() {
            break;
        }
        if !sock::poll_in(s, left.min(sock::TICK)).unwrap_or(false) {
            continue;
        }
        match recv(s, &mut b[have..], RecvFlags::empty()) {
            Ok((0, _)) | Err(_) => break,
            Ok((n, _)) => have += n,
        }
    }
    match read_mark(b"OK  ", &b[..have]) {
        Some(_) => Ok(()),
        None if is_deny(&b[..have]) => Err(refused(&b[..have])),
        None => Err(
            "the listener took our hello but did not say whether it admits us (its --token check)"
                .into(),
        ),
    }
}

/// What a listener sees, without waiting, at the head of a connection it has accepted.
#[derive(Debug)]
pub enum Peeked {
    /// The peer's hello (taken off the stream).
    Hello(Hello),
    /// A plain peer: data that is no hello, the end of the stream, or an error.
    Raw,
    /// Nothing yet, or part of a hello.
    NotYet,
}

/// Looks, without blocking, for a peer's hello (either role: one in the listener's own role
/// asks for the other direction, --bidir).
pub fn peek_hello(s: &Socket) -> Peeked {
    let mut b = [0u8; HELLO_LEN + KEY_BLOCK_LEN];
    match recv(s, &mut b[..], RecvFlags::PEEK | RecvFlags::DONTWAIT) {
        Ok((0, _)) => Peeked::Raw,
        Ok((n, _)) => {
            let prefix = [&MAGIC[..], b"HELO"].concat();
            let k = n.min(prefix.len());
            if b[..k] != prefix[..k] {
                return Peeked::Raw;
            }
            let whole = hello_wire_len(&b[..n]).unwrap_or(HELLO_LEN);
            if n < whole {
                return Peeked::NotYet;
            }
            match Hello::decode(&b[..whole]).filter(|h| h.role == b'S' || h.role == b'R') {
                Some(h) => {
                    let _ = recv(s, &mut b[..whole], RecvFlags::WAITALL);
                    Peeked::Hello(h)
                }
                None => Peeked::Raw,
            }
        }
        Err(rustix::io::Errno::AGAIN) | Err(rustix::io::Errno::INTR) => Peeked::NotYet,
        Err(_) => Peeked::Raw,
    }
}

/// What a held-back receive gave.
pub enum Held {
    /// Data bytes now known to be data (0: look again).
    Data(usize),
    /// The peer's FIN came: `held` has the stream's last bytes.
    Fin,
}

/// A receive that keeps the stream's latest [`MARK_LEN`] bytes in `held` (copied out, so the
/// socket's memory is freed: a partly read buffer left in the socket would keep the whole
/// of it and close the window), so that the end mark is never discarded with the data.
/// Bytes followed by `MARK_LEN` more are data. Returns at most `buf.len()` data bytes.
pub fn held_recv(
    s: &Socket,
    buf: &mut [MaybeUninit<u8>],
    flags: i32,
    held: &mut Vec<u8>,
) -> io::Result<Held> {
    let q = sock::unread_bytes(s) as usize;
    if q == 0 {
        return match sock::poll_hup(s, sock::TICK)? {
            None => Err(io::ErrorKind::WouldBlock.into()),
            Some(true) if sock::unread_bytes(s) == 0 => {
                // The FIN, or an error that the next recv reports.
                match recv(s, &mut [0u8; 1][..], RecvFlags::DONTWAIT) {
                    Ok((0, _)) => Ok(Held::Fin),
                    Ok(_) => Ok(Held::Data(0)),
                    Err(e) => Err(e.into()),
                }
            }
            Some(_) => Ok(Held::Data(0)),
        };
    }
    if q > MARK_LEN && buf.len() > held.len() {
        let n = (buf.len() - held.len()).min(q - MARK_LEN);
        let n = s.recv_with_flags(&mut buf[..n], flags)?;
        if n == 0 {
            return Ok(Held::Data(0));
        }
        let data = held.len() + n;
        held.clear();
        return Ok(Held::Data(data));
    }
    let mut b = [0u8; MARK_LEN];
    let take = q.min(MARK_LEN).min(buf.len());
    let (n, _) = recv(s, &mut b[..take], RecvFlags::empty())?;
    held.extend_from_slice(&b[..n]);
    let extra = held.len().saturating_sub(MARK_LEN);
    held.drain(..extra);
    Ok(Held::Data(extra))
}

/// A session token: random enough that two clients of one listener differ.
pub fn token() -> u64 {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut x = t ^ (u64::from(std::process::id()) << 32) ^ 0x9e37_79b9_7f4a_7c15;
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^ (x >> 33)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hello_and_marks_round_trip() {
        let h = Hello {
            role: b'S',
            streams: 3,
            index: 2,
            token: 0x0102_0304_0506_0708,
            bytes: u64::MAX,
            time_ns: 2_000_000_000,
            wants_token: true,
            key: crate::wire::Key::new(b"0123456789abcdef-0123"),
        };
        assert_eq!(h.encode().len(), HELLO_LEN + KEY_BLOCK_LEN);
        assert_eq!(hello_wire_len(&h.encode()), Some(HELLO_LEN + KEY_BLOCK_LEN));
        assert_eq!(Hello::decode(&h.encode()), Some(h));
        // A flagged hello without its key block is none; one without a key is 64 bytes.
        assert_eq!(Hello::decode(&h.encode()[..HELLO_LEN]), None);
        let plain = Hello { key: None, ..h };
        assert_eq!(plain.encode().len(), HELLO_LEN);
        assert_eq!(Hello::decode(&plain.encode()), Some(plain));
        let k = |t: &[u8]| crate::wire::Key::new(t);
        assert!(k(b"short").is_none() && k(b"with space 0123456").is_none());
        assert!(k(&[b'x'; 49]).is_none() && k(&[b'x'; 48]).is_some());
        let a = k(b"0123456789abcdef").unwrap();
        assert!(a.same(&k(b"0123456789abcdef").unwrap()));
        assert!(!a.same(&k(b"0123456789abcdeg").unwrap()));
        assert!(!a.same(&k(b"0123456789abcdef0").unwrap()));
        assert!(!format!("{a:?}").contains("0123"));
        assert!(refused(&deny_mark(42, 7200)).contains("pid 42"));
        assert!(Hello::decode(&[0u8; HELLO_LEN]).is_none());
        assert!(!h.unlimited());
        let m = mark(b"END ", 10_485_760, 1);
        assert_eq!(read_mark(b"END ", &m), Some((10_485_760, 1)));
        assert_eq!(read_mark(b"GOT ", &m), None);
        assert_eq!(read_mark(b"END ", &m[..31]), None);
        assert!(is_deny(&mark(b"DENY", 0, 0)) && !is_deny(&m));
        assert_ne!(token(), 0);
    }
}
