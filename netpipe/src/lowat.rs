//! The receive low-water mark of a discarding receiver, following the rate.

use socket2::Socket;
use std::os::fd::AsRawFd;

/// The receive low-water mark (SO_RCVLOWAT) of a discarding receiver: how much data wakes it.
///
/// Left at the kernel's 1 byte, a receiver that drops bytes as fast as they come wakes for
/// almost every segment, and each wake-up costs both ends (on loopback most of what a
/// transfer costs, across CPUs an interprocessor interrupt each). Raised to about a
/// millisecond of data at the rate seen so far, the receiver takes the bytes in fewer, larger
/// gulps and its clock loses nothing that matters: the first byte is taken at the default
/// mark (the mark is raised only after it), the end is the peer's FIN (which wakes the
/// receiver whatever the mark), and the bytes of an interval, the --time limit and the
/// idle and tick timeouts are late by a millisecond's worth at most (a timeout returns what
/// has arrived). The mark stays at a quarter of the receive buffer or below, so the kernel
/// never grows the buffer or clamps the window for it (tcp_set_rcvlowat does when the mark
/// needs more room than the buffer has): autotuning, or --window, stays in charge.
pub struct Lowat {
    /// The mark as set; 1 is the kernel's default.
    set: usize,
    /// When (nanoseconds after the first byte) and at what byte count the mark was last
    /// looked at: the rate it follows is the rate since then.
    last: (u64, u64),
    /// `false` once the kernel refused the mark.
    on: bool,
}

impl Lowat {
    /// The highest mark: beyond it the gain ends (loopback, 2 CPUs: 1M moves 54-65 Gb/s,
    /// 2M 63-68, 4M 64-67).
    const MAX: usize = 2 << 20;
    /// The time's worth of data the mark aims at.
    const SPAN_NS: u64 = 1_000_000;
    /// How often the mark follows the rate.
    const EVERY_NS: u64 = 10_000_000;

    pub fn new() -> Self {
        Lowat {
            set: 1,
            last: (0, 0),
            on: true,
        }
    }

    /// Follows the rate: `got` bytes by `since_first_ns` after the first byte.
    pub fn tune(&mut self, s: &Socket, got: u64, since_first_ns: u64) {
        let (t0, b0) = self.last;
        if !self.on || since_first_ns < t0 + Self::EVERY_NS {
            return;
        }
        self.last = (since_first_ns, got);
        let per_span = (u128::from(got - b0) * u128::from(Self::SPAN_NS)
            / u128::from(since_first_ns - t0)) as usize;
        // SO_RCVBUF: the kernel's sk_rcvbuf, as autotuned or set by --window.
        let Ok(rcvbuf) = s.recv_buffer_size() else {
            self.on = false;
            return;
        };
        let want = per_span.min(Self::MAX).min(rcvbuf / 4).max(1);
        // Only a change of more than an eighth is worth a call.
        if want.abs_diff(self.set) <= self.set / 8 {
            return;
        }
        if set_mark(s, want) {
            self.set = want;
        } else {
            self.on = false;
        }
    }
}

/// Sets SO_RCVLOWAT; `false` when the kernel refuses it.
fn set_mark(s: &Socket, want: usize) -> bool {
    let v = want as libc::c_int;
    // Neither socket2 nor rustix sets SO_RCVLOWAT.
    // SAFETY: setsockopt reads one c_int from a valid pointer of the given length.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVLOWAT,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    rc == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowat_of(s: &Socket) -> i32 {
        let mut v: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt writes at most len bytes into v (no safe crate reads the mark).
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVLOWAT,
                (&mut v as *mut libc::c_int).cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0);
        v
    }

    #[test]
    fn lowat_follows_the_rate_within_the_buffer() {
        use socket2::{Domain, Type};
        let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        s.set_recv_buffer_size(1 << 20).unwrap();
        let buf = s.recv_buffer_size().unwrap();
        let mut l = Lowat::new();
        let ms = 1_000_000u64;
        // Not before 10 ms of data.
        l.tune(&s, 1 << 30, 9 * ms);
        assert_eq!(lowat_of(&s), 1);
        // 1000 bytes a millisecond: a mark of 1000.
        l.tune(&s, 10_000, 10 * ms);
        assert_eq!(lowat_of(&s), 1000);
        // A small change is not worth a call; the rate is the latest 10 ms's.
        l.tune(&s, 10_000 + 10_500, 20 * ms);
        assert_eq!(lowat_of(&s), 1000);
        // Fast: capped at a quarter of the receive buffer (here below Lowat::MAX).
        l.tune(&s, 1 << 33, 30 * ms);
        assert_eq!(lowat_of(&s) as usize, (buf / 4).min(Lowat::MAX));
        assert_eq!(
            s.recv_buffer_size().unwrap(),
            buf,
            "the buffer is left alone"
        );
        // Slow again: down it comes.
        l.tune(&s, (1 << 33) + 5_000, 40 * ms);
        assert_eq!(lowat_of(&s), 500);
    }
}
