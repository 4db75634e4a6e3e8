//! The clock of every send and receive time: CLOCK_REALTIME, which the kernel's software
//! stamps use too.

use nix::time::{ClockId, clock_gettime};

/// The current CLOCK_REALTIME in ns, the clock the kernel's software stamps use (0 if the
/// clock could not be read, which Linux does not do for this clock).
pub fn now_ns() -> i64 {
    clock_gettime(ClockId::CLOCK_REALTIME)
        .map_or(0, |ts| ts.tv_sec() * 1_000_000_000 + ts.tv_nsec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_moves() {
        let a = now_ns();
        let b = now_ns();
        assert!(a > 1_600_000_000_000_000_000 && b >= a);
    }
}
