//! The clock around each run (CLOCK_MONOTONIC) and timecmd's own memory peak.

/// A CLOCK_MONOTONIC reading in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we pass; CLOCK_MONOTONIC always exists.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64) * 1_000_000_000 + ts.tv_nsec as u64
}

/// The resolution of CLOCK_MONOTONIC in seconds.
pub fn clock_resolution_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_getres writes into the timespec we pass.
    unsafe {
        libc::clock_getres(libc::CLOCK_MONOTONIC, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// The peak RSS of timecmd's own memory (getrusage's ru_maxrss, VmHWM): a child's max RSS
/// never reads below it, because the kernel carries the spawner's peak into the child at exec.
pub fn own_peak_rss_bytes() -> Option<u64> {
    // SAFETY: rusage is plain data that getrusage fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    u64::try_from(usage.ru_maxrss).ok()?.checked_mul(1024)
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
