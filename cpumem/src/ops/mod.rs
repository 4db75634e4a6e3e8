//! The probes' operations, one module per kind of cost: calls (syscall, clock), the pipe
//! round trip, spawn, page faults, memory streams and the pointer chase.

pub mod calls;
pub mod fault;
pub mod mem;
pub mod memlat;
pub mod pipe;
pub mod spawn;

use std::io;
use std::time::Instant;

/// Seconds since `t0`.
pub fn since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}

/// One probe's operation, ready to run: prepared once (buffers, the second process, the
/// program to spawn), then run in batches.
pub trait Op {
    /// Performs `n` operations and returns the seconds they took, with work outside the
    /// operation (mapping, unmapping) left out of the time.
    fn run(&mut self, n: u64) -> io::Result<f64>;

    /// Bytes one operation moves (bandwidth probes; 0 for the others).
    fn bytes_per_op(&self) -> u64 {
        0
    }

    /// Seconds to subtract from each operation's time: the empty loop's, where the
    /// operation is so short that the loop around it counts.
    fn overhead_s(&self) -> f64 {
        0.0
    }

    /// Facts about the last batch for its sample's info (the pipe probe's shared CPU).
    fn batch_info(&mut self) -> serde_json::Map<String, serde_json::Value> {
        serde_json::Map::new()
    }

    /// Facts about the probe for the summary and the first sample (buffer size, program).
    fn info(&self) -> serde_json::Map<String, serde_json::Value>;
}
