//! The system call and clock read probes, and the empty loop whose cost they subtract: each
//! batch is one timed loop of `n` calls, so the timer's own cost is spread over the batch.

use super::{Op, since};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use std::io;
use std::time::Instant;

/// The cost of one iteration of an empty loop (the counter and the branch that every probe
/// loop has): the least of a few runs of a million iterations.
pub fn loop_cost() -> f64 {
    const N: u64 = 1_000_000;
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let t0 = Instant::now();
        for i in 0..N {
            black_box(i);
        }
        best = best.min(since(t0) / N as f64);
    }
    best
}

/// `getppid(2)` as a real system call: rustix makes the call itself (no libc cache, no vDSO).
#[derive(Debug)]
pub struct Syscall {
    loop_s: f64,
}

impl Syscall {
    pub fn new(loop_s: f64) -> Self {
        Syscall { loop_s }
    }
}

impl Op for Syscall {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let t0 = Instant::now();
        for _ in 0..n {
            black_box(rustix::process::getppid());
        }
        Ok(since(t0))
    }

    fn overhead_s(&self) -> f64 {
        self.loop_s
    }

    fn info(&self) -> Map<String, Value> {
        let m = json!({"call": "getppid", "loop_overhead_s": self.loop_s});
        measure::parts::info(m)
    }
}

/// `clock_gettime(CLOCK_MONOTONIC)` through the vDSO, as programs read the time.
#[derive(Debug)]
pub struct Clock {
    loop_s: f64,
}

impl Clock {
    pub fn new(loop_s: f64) -> Self {
        Clock { loop_s }
    }
}

impl Op for Clock {
    fn run(&mut self, n: u64) -> io::Result<f64> {
        let id = rustix::time::ClockId::Monotonic;
        let t0 = Instant::now();
        for _ in 0..n {
            black_box(rustix::time::clock_gettime(black_box(id)));
        }
        Ok(since(t0))
    }

    fn overhead_s(&self) -> f64 {
        self.loop_s
    }

    fn info(&self) -> Map<String, Value> {
        let m = json!({
            "clock": "CLOCK_MONOTONIC",
            "clocksource": crate::facts::clocksource(),
            "loop_overhead_s": self.loop_s,
        });
        measure::parts::info(m)
    }
}
