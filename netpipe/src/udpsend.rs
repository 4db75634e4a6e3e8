//! The paced UDP sender: a deadline schedule (datagram N is due at start + N gaps), kept on
//! average whatever the machine does. A late wake-up (a sleep that overshoots, a busy
//! machine, a stall) leaves datagrams due, and all of them go at once, up to [`BATCH`] to a
//! sendmmsg call, until the schedule is caught up: the rate holds over the run as iperf3's
//! does, where a sender that skips what it missed falls short by every stall.

use crate::ctl::Ctl;
use crate::plan::Plan;
use crate::source;
use crate::udp::{self, DATA, END, HEADER};
use rustix::net::addr::SocketAddrArg;
use rustix::net::{MMsgHdr, SendAncillaryBuffer, SendFlags, SocketAddrAny};
use std::io::{self, IoSlice};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The most datagrams one sendmmsg call sends: a backlog goes out this many at a time.
const BATCH: usize = 32;

/// What a paced send did.
pub struct Sent {
    pub end: &'static str,
    pub seq: u64,
    pub bytes: u64,
    pub refused: u64,
    /// Calls that sent more than one datagram (the schedule catching up).
    pub batches: u64,
    pub start: Instant,
    pub last: Instant,
    /// When the loop ended (the limit, Ctrl-C).
    pub stopped: Instant,
}

impl Sent {
    /// The send's seconds: each datagram stands for its `gap` of the pace, but never past
    /// where the run stopped (-t or Ctrl-C ends a slow pace between datagrams; --bytes ends
    /// right after the last one).
    pub fn seconds(&self, gap: Duration, timed: bool) -> f64 {
        let paced = (self.last - self.start).as_secs_f64() + gap.as_secs_f64();
        if self.end == "limit" && !timed {
            paced
        } else {
            paced.min((self.stopped - self.start).as_secs_f64())
        }
    }
}

/// Where the datagrams go: `to`, else the connected peer.
struct Dest<'a> {
    s: &'a UdpSocket,
    to: Option<SocketAddrAny>,
    plain: Option<&'a SocketAddr>,
}

impl Dest<'_> {
    /// One datagram, with a plain send.
    fn one(&self, b: &[u8]) -> io::Result<usize> {
        match self.plain {
            Some(a) => self.s.send_to(b, a),
            None => self.s.send(b),
        }
    }

    /// Sends the first `lens.len()` buffers, each cut to its length: one send for one, one
    /// sendmmsg for more; how many went.
    fn send(&self, bufs: &[Vec<u8>], lens: &[usize]) -> io::Result<usize> {
        if let [len] = lens {
            return self.one(&bufs[0][..*len]).map(|_| 1);
        }
        let iovs: Vec<[IoSlice<'_>; 1]> = bufs
            .iter()
            .zip(lens)
            .map(|(b, &l)| [IoSlice::new(&b[..l])])
            .collect();
        let mut controls: Vec<SendAncillaryBuffer<'_, '_, '_>> = lens
            .iter()
            .map(|_| SendAncillaryBuffer::default())
            .collect();
        let mut msgs: Vec<MMsgHdr<'_>> = iovs
            .iter()
            .zip(controls.iter_mut())
            .map(|(iov, c)| match &self.to {
                Some(a) => MMsgHdr::new_with_addr(a, iov, c),
                None => MMsgHdr::new(iov, c),
            })
            .collect();
        rustix::net::sendmmsg(self.s, &mut msgs, SendFlags::empty()).map_err(io::Error::from)
    }
}

/// The lengths of the next datagrams due: `due` of them at most, [`BATCH`] at most, each
/// `size` bytes, the last cut to what --bytes leaves (never below a header); none when
/// --bytes is reached.
fn lengths(due: u64, size: usize, left: Option<u64>, out: &mut Vec<usize>) {
    out.clear();
    let mut left = left;
    for _ in 0..due.min(BATCH as u64) {
        let len = match left {
            Some(0) => break,
            Some(b) => (b as usize).clamp(HEADER, size),
            None => size,
        };
        left = left.map(|b| b.saturating_sub(len as u64));
        out.push(len);
    }
}

/// Sends datagrams of `size` bytes at `rate` bits per second (to `to`, else to the connected
/// peer) until the limits, Ctrl-C or an error, then the end datagram three times (any may be
/// lost).
pub fn paced(
    plan: &Plan,
    s: &UdpSocket,
    to: Option<&SocketAddr>,
    ctl: &Ctl,
    size: usize,
    rate: f64,
) -> io::Result<Sent> {
    // The gap in f64 seconds: a gap rounded to whole nanoseconds would drift from the rate by
    // its rounding over every datagram of the run.
    let gap_s = size as f64 * 8.0 / rate.max(1.0);
    let dest = Dest {
        s,
        to: to.map(SocketAddrArg::as_any),
        plain: to,
    };
    let mut bufs: Vec<Vec<u8>> = (0..BATCH)
        .map(|_| source::pattern(size, plan.random))
        .collect();
    let mut lens = Vec::with_capacity(BATCH);
    let start = Instant::now();
    let mut sent = Sent {
        end: "limit",
        seq: 0,
        bytes: 0,
        refused: 0,
        batches: 0,
        start,
        last: start,
        stopped: start,
    };
    // Datagrams sent or refused so far: the schedule's position.
    let mut slots = 0u64;
    sent.end = loop {
        if measure::signal::interrupted() {
            ctl.stop.store(true, Ordering::Relaxed);
            break "interrupted";
        }
        let now = Instant::now();
        if plan.time.is_some_and(|t| now - start >= t) {
            break "limit";
        }
        let next = start + Duration::from_secs_f64(gap_s * slots as f64);
        if now < next {
            pace(next - now);
            continue;
        }
        let due = 1 + ((now - next).as_secs_f64() / gap_s) as u64;
        lengths(
            due,
            size,
            plan.bytes.map(|b| b - sent.bytes.min(b)),
            &mut lens,
        );
        if lens.is_empty() {
            break "limit";
        }
        for (i, b) in bufs.iter_mut().take(lens.len()).enumerate() {
            udp::put_header(b, DATA, sent.seq + i as u64, ctl.ns(now));
        }
        slots += sent.count(dest.send(&bufs, &lens), &lens, now)?;
    };
    sent.stopped = Instant::now();
    send_end(&dest, sent.seq, ctl);
    Ok(sent)
}

impl Sent {
    /// Counts what one send did at `now` (the `lens` it was given); the schedule's slots it
    /// used: those sent, one refused (ICMP port unreachable), none when the socket had no room.
    fn count(&mut self, r: io::Result<usize>, lens: &[usize], now: Instant) -> io::Result<u64> {
        match r {
            Ok(n) => {
                self.seq += n as u64;
                self.bytes += lens[..n].iter().sum::<usize>() as u64;
                self.batches += u64::from(n > 1);
                self.last = now;
                Ok(n as u64)
            }
            Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
                self.refused += 1;
                Ok(1)
            }
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => Ok(0),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(0),
            Err(e) => Err(e),
        }
    }
}

/// The end datagram, three times 5 ms apart (any may be lost), after datagram `seq`.
fn send_end(dest: &Dest<'_>, seq: u64, ctl: &Ctl) {
    let mut e = [0u8; HEADER];
    for _ in 0..3 {
        udp::put_header(&mut e, END, seq, ctl.now_ns());
        let _ = dest.one(&e);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The longest one pacing sleep lasts: the loop then looks at -t and at signals again (a sleep
/// is not cut short by a signal), so that a slow --rate (one datagram per hours at
/// `--rate 1`) still ends at -t and on Ctrl-C at once.
const PACE_SLICE: Duration = Duration::from_millis(50);

/// Waits `d`, at most [`PACE_SLICE`]: sleeps the most of it, and spins the last bit (a sleep
/// overshoots by tens of microseconds, which at a high rate is several datagrams).
fn pace(d: Duration) {
    if d > PACE_SLICE {
        std::thread::sleep(PACE_SLICE);
    } else if d > Duration::from_micros(200) {
        std::thread::sleep(d - Duration::from_micros(100));
    } else {
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backlog_goes_in_batches_and_bytes_cut_the_last() {
        let mut lens = Vec::new();
        lengths(1, 1460, None, &mut lens);
        assert_eq!(lens, [1460]);
        lengths(100, 1460, None, &mut lens);
        assert_eq!(lens.len(), BATCH);
        lengths(5, 1000, Some(2500), &mut lens);
        assert_eq!(lens, [1000, 1000, 500]);
        lengths(5, 1000, Some(3), &mut lens);
        assert_eq!(lens, [HEADER]);
        lengths(5, 1000, Some(0), &mut lens);
        assert!(lens.is_empty());
    }
}
