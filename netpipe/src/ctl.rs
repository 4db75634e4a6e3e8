//! What the streams of a session share (the clock, the stop flag, the byte budget, the time
//! limit) and each stream's progress, read by the supervising thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

const NONE: u64 = u64::MAX;

/// What the streams of one session share: the clock, the stop flag, the byte budget and
/// the time limit.
#[derive(Debug)]
pub struct Ctl {
    pub base: Instant,
    pub stop: AtomicBool,
    /// Bytes left to move in the session (`--bytes`); `None` is unlimited.
    budget: Option<AtomicU64>,
    /// Nanoseconds after `base` of the session's first byte (`NONE` until then).
    first_ns: AtomicU64,
    /// How long the session moves data after its first byte (`--omit` + `--time`).
    run_for: Option<Duration>,
    pub idle: Option<Duration>,
    /// The thread that made the session (its supervisor), woken when a stream ends so that
    /// the process does not wait out its polling tick after the last byte.
    supervisor: std::thread::Thread,
    /// What this side says in its netpipe/1 hello (agree.rs); the stream index is each
    /// stream's own.
    pub greet: crate::wire::Hello,
    /// How many of the session's streams a netpipe peer greeted.
    pub hellos: AtomicU64,
    /// A sender that says its hello first (--bidir's reverse streams, agree.rs).
    pub speak_first: bool,
}

impl Ctl {
    pub fn new(budget: Option<u64>, run_for: Option<Duration>, idle: Option<Duration>) -> Self {
        Ctl {
            base: Instant::now(),
            stop: AtomicBool::new(false),
            budget: budget.map(AtomicU64::new),
            first_ns: AtomicU64::new(NONE),
            run_for,
            idle,
            supervisor: std::thread::current(),
            greet: crate::wire::Hello::default(),
            hellos: AtomicU64::new(0),
            speak_first: false,
        }
    }

    /// Marks a stream done, at `end_ns` (its last byte moved, if any), and wakes the
    /// supervisor.
    pub fn finish(&self, prog: &Progress, end_ns: Option<u64>) {
        prog.end_ns.store(end_ns.unwrap_or(NONE), Ordering::Release);
        prog.done.store(true, Ordering::Release);
        self.supervisor.unpark();
    }

    pub fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.base).as_nanos() as u64
    }

    pub fn now_ns(&self) -> u64 {
        self.ns(Instant::now())
    }

    pub fn mark_first(&self, ns: u64) {
        self.first_ns.fetch_min(ns, Ordering::AcqRel);
    }

    /// The session's first byte, in nanoseconds after `base`.
    pub fn first_ns(&self) -> Option<u64> {
        match self.first_ns.load(Ordering::Acquire) {
            NONE => None,
            n => Some(n),
        }
    }

    /// Whether the session's --time (after --omit) is over at `now_ns`.
    pub fn past_deadline(&self, now_ns: u64) -> bool {
        match (self.run_for, self.first_ns()) {
            (Some(d), Some(f)) => now_ns >= f.saturating_add(d.as_nanos() as u64),
            _ => false,
        }
    }

    /// Takes up to `want` bytes from the budget; 0 when it is spent.
    pub fn claim(&self, want: u64) -> u64 {
        let Some(b) = &self.budget else {
            return want;
        };
        let mut cur = b.load(Ordering::Acquire);
        // Bounded: each failed exchange means another stream took bytes, and the budget
        // only shrinks.
        loop {
            let take = cur.min(want);
            if take == 0 {
                return 0;
            }
            match b.compare_exchange_weak(cur, cur - take, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return take,
                Err(now) => cur = now,
            }
        }
    }

    pub fn give_back(&self, n: u64) {
        if let (Some(b), true) = (&self.budget, n > 0) {
            b.fetch_add(n, Ordering::AcqRel);
        }
    }
}

/// A stream's progress, read by the main thread for intervals.
#[derive(Debug)]
pub struct Progress {
    pub bytes: AtomicU64,
    pub done: AtomicBool,
    /// When the stream's last byte moved (nanoseconds after the session's base), once done.
    end_ns: AtomicU64,
}

impl Progress {
    pub fn new() -> Self {
        Progress {
            bytes: AtomicU64::new(0),
            done: AtomicBool::new(false),
            end_ns: AtomicU64::new(NONE),
        }
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Acquire)
    }

    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }

    /// When a finished stream moved its last byte (as its sample has it).
    pub fn end_ns(&self) -> Option<u64> {
        match self.end_ns.load(Ordering::Acquire) {
            NONE => None,
            n => Some(n),
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_is_shared_exactly() {
        let c = Ctl::new(Some(10), None, None);
        assert_eq!(c.claim(4), 4);
        assert_eq!(c.claim(4), 4);
        assert_eq!(c.claim(4), 2);
        assert_eq!(c.claim(4), 0);
        c.give_back(3);
        assert_eq!(c.claim(9), 3);
        let u = Ctl::new(None, None, None);
        assert_eq!(u.claim(7), 7);
    }
}
