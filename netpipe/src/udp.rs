//! UDP's datagrams and what a receiver makes of them: each datagram carries a sequence
//! number and its send stamp, from which the receiver counts loss, reordering and
//! duplicates, and follows jitter with RFC 3550's estimator. A sender's flow begins with a
//! start datagram, and a receiver takes only a sender whose start proves the session's
//! --token (any start, without one): a stranger's datagram, even one with netpipe's header,
//! takes no receiver.

use crate::wire::Key;
use std::time::Duration;

/// The header at the head of every datagram.
pub const HEADER: usize = 24;
const MAGIC: &[u8; 4] = b"NPU1";
/// Flags: a data datagram, the sender's end (its `seq` is how many it sent), a receiver's
/// hello (to a listening sender), the sender's start (its `seq` is the session's random
/// token). A start and a hello carry the --token's key block after the header.
pub const DATA: u32 = 0;
pub const END: u32 = 1;
pub const HELLO: u32 = 2;
pub const START: u32 = 3;

/// A start datagram or a receiver's hello: the header, then the key block of `key`.
pub fn greeting(kind: u32, session: u64, stamp_ns: u64, key: Option<&Key>) -> Vec<u8> {
    let mut b = vec![0u8; HEADER];
    put_header(&mut b, kind, session, stamp_ns);
    if let Some(k) = key {
        b.extend_from_slice(&k.block());
    }
    b
}

/// Whether the start or hello `b` proves `key` (in constant time; any does without a key).
pub fn proves(b: &[u8], key: Option<&Key>) -> bool {
    match key {
        None => true,
        Some(k) => b
            .get(HEADER..)
            .and_then(Key::from_block)
            .is_some_and(|g| g.same(k)),
    }
}

/// Writes the header into `b` (at least [`HEADER`] bytes).
pub fn put_header(b: &mut [u8], kind: u32, seq: u64, stamp_ns: u64) {
    b[..4].copy_from_slice(MAGIC);
    b[4..8].copy_from_slice(&kind.to_be_bytes());
    b[8..16].copy_from_slice(&seq.to_be_bytes());
    b[16..24].copy_from_slice(&stamp_ns.to_be_bytes());
}

/// The kind, sequence number and send stamp of a datagram, if it is one of ours.
pub fn header(b: &[u8]) -> Option<(u32, u64, u64)> {
    if b.len() < HEADER || &b[..4] != MAGIC {
        return None;
    }
    let kind = u32::from_be_bytes(b[4..8].try_into().ok()?);
    let seq = u64::from_be_bytes(b[8..16].try_into().ok()?);
    let stamp = u64::from_be_bytes(b[16..24].try_into().ok()?);
    Some((kind, seq, stamp))
}

/// The time between datagrams of `size` bytes at `rate` bits per second.
pub fn gap(size: usize, rate: f64) -> Duration {
    Duration::from_secs_f64(size as f64 * 8.0 / rate.max(1.0))
}

/// What a receiver has seen of a flow.
#[derive(Debug, Default)]
pub struct Flow {
    /// Distinct data datagrams and their bytes (headers included, as iperf3 counts).
    pub got: u64,
    pub bytes: u64,
    pub duplicates: u64,
    pub reordered: u64,
    max_seq: Option<u64>,
    /// One bit per sequence number seen (up to [`Flow::TRACKED`]).
    seen: Vec<u64>,
    /// RFC 3550's interarrival jitter, in seconds.
    pub jitter_s: f64,
    last_transit: Option<i128>,
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// The sender's count, from its end datagram.
    pub sent: Option<u64>,
    /// Datagrams that are not the flow's: from another address than the sender's, or not
    /// netpipe's (no header), ignored and counted.
    pub strays: u64,
}

impl Flow {
    /// Sequence numbers beyond this are counted without the duplicate check (16 MiB of bits).
    const TRACKED: u64 = 1 << 27;

    /// Takes one data datagram: `seq`, sent at `stamp_ns` (the sender's clock), arrived at
    /// `now_ns` (ours), `len` bytes.
    pub fn take(&mut self, seq: u64, stamp_ns: u64, now_ns: u64, len: usize) {
        if seq < Self::TRACKED {
            let (w, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
            if self.seen.len() <= w {
                self.seen.resize(w + 1, 0);
            }
            if self.seen[w] & bit != 0 {
                self.duplicates += 1;
                return;
            }
            self.seen[w] |= bit;
        }
        self.got += 1;
        self.bytes += len as u64;
        match self.max_seq {
            Some(m) if seq < m => self.reordered += 1,
            _ => self.max_seq = Some(seq),
        }
        // RFC 3550 6.4.1: J += (|D| - J) / 16, D the change in transit time; the two clocks
        // differ by a constant, which D cancels.
        let transit = i128::from(now_ns) - i128::from(stamp_ns);
        if let Some(prev) = self.last_transit {
            let d = (transit - prev).unsigned_abs() as f64 / 1e9;
            self.jitter_s += (d - self.jitter_s) / 16.0;
        }
        self.last_transit = Some(transit);
        self.first_ns.get_or_insert(now_ns);
        self.last_ns = Some(now_ns);
    }

    /// How many datagrams were sent: the sender's end count, else the highest seen + 1.
    pub fn expected(&self) -> u64 {
        self.sent
            .unwrap_or_else(|| self.max_seq.map_or(0, |m| m + 1))
            .max(self.got)
    }

    pub fn lost(&self) -> u64 {
        self.expected() - self.got
    }

    pub fn loss_ratio(&self) -> f64 {
        match self.expected() {
            0 => 0.0,
            e => self.lost() as f64 / e as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let mut b = [0u8; 64];
        put_header(&mut b, END, 12345, 678);
        assert_eq!(header(&b), Some((END, 12345, 678)));
        assert_eq!(header(&b[..10]), None);
        assert_eq!(header(&[0u8; 64]), None);
        let k = Key::new(b"0123456789abcdef").unwrap();
        let other = Key::new(b"0123456789abcdeX").unwrap();
        let g = greeting(START, 7, 8, Some(&k));
        assert_eq!(header(&g), Some((START, 7, 8)));
        assert!(proves(&g, Some(&k)) && !proves(&g, Some(&other)) && proves(&g, None));
        assert!(!proves(&greeting(START, 7, 8, None), Some(&k)));
    }

    #[test]
    fn loss_reordering_duplicates_and_jitter() {
        let mut f = Flow::default();
        // 0 1 3 2 2 5 arrive (4 lost, 2 twice, 2 after 3), the sender says it sent 6.
        for (i, seq) in [0u64, 1, 3, 2, 2, 5].into_iter().enumerate() {
            f.take(seq, seq * 1000, seq * 1000 + 50 + (i as u64 % 2) * 16, 100);
        }
        f.sent = Some(6);
        assert_eq!((f.got, f.duplicates, f.reordered), (5, 1, 1));
        assert_eq!((f.expected(), f.lost()), (6, 1));
        assert!((f.loss_ratio() - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(f.bytes, 500);
        // Steady transit: no jitter.
        let mut g = Flow::default();
        for s in 0..100u64 {
            g.take(s, s * 1000, s * 1000 + 70, 10);
        }
        assert_eq!(g.jitter_s, 0.0);
        // Transit alternating by 16 us: J tends to 16 us.
        let mut h = Flow::default();
        for s in 0..2000u64 {
            h.take(s, s * 100_000, s * 100_000 + (s % 2) * 16_000, 10);
        }
        assert!((h.jitter_s - 16e-6).abs() < 1e-7, "{}", h.jitter_s);
        assert_eq!(gap(1250, 1e6), Duration::from_millis(10));
    }
}
