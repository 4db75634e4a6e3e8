//! The clock around each run (CLOCK_MONOTONIC) and timecmd's own memory peak.

use nix::sys::resource::{UsageWho, getrusage};
use nix::time::{ClockId, clock_getres, clock_gettime};

/// A CLOCK_MONOTONIC reading in nanoseconds.
pub fn now_ns() -> u64 {
    // CLOCK_MONOTONIC always exists on Linux; a zero reading can only follow a broken kernel.
    clock_gettime(ClockId::CLOCK_MONOTONIC).map_or(0, |ts| {
        (ts.tv_sec() as u64) * 1_000_000_000 + ts.tv_nsec() as u64
    })
}

/// The resolution of CLOCK_MONOTONIC in seconds.
pub fn clock_resolution_s() -> f64 {
    clock_getres(ClockId::CLOCK_MONOTONIC)
        .map_or(0.0, |ts| ts.tv_sec() as f64 + ts.tv_nsec() as f64 * 1e-9)
}

/// The peak RSS of timecmd's own memory (getrusage's ru_maxrss, VmHWM): a child's max RSS
/// never reads below it, because the kernel carries the spawner's peak into the child at exec.
pub fn own_peak_rss_bytes() -> Option<u64> {
    let usage = getrusage(UsageWho::RUSAGE_SELF).ok()?;
    u64::try_from(usage.max_rss()).ok()?.checked_mul(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_moves_forward() {
        let a = now_ns();
        let b = now_ns();
        assert!(b >= a);
        assert!(clock_resolution_s() > 0.0);
        assert!(own_peak_rss_bytes().is_some_and(|b| b > 0));
    }
}
