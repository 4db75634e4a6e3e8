//! The clock of every send and receive time: CLOCK_REALTIME, which the kernel's software
//! stamps use too.

/// The current CLOCK_REALTIME in ns, the clock the kernel's software stamps use.
pub fn now_ns() -> i64 {
    // SAFETY: clock_gettime writes one timespec that we own.
    let ts = unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts);
        ts
    };
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
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
