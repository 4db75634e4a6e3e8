//! The probes' operations, one module per kind of cost: calls (syscall, clock), the pipe
//! round trip, spawn, page faults, memory streams and the pointer chase.

pub mod calls;
pub mod fault;
pub mod mem;
pub mod memlat;
pub mod pipe;
pub mod spawn;

use std::time::Instant;

/// Seconds since `t0`.
pub fn since(t0: Instant) -> f64 {
    t0.elapsed().as_secs_f64()
}
