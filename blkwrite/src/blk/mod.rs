//! The block layer both tools stand on: the target (opened through one door, `target::open`,
//! with every safety check), the engine (psync and io_uring, latency histogram, ticks), the
//! data pool and block order, the flags and record pieces both tools share, and the words
//! both print.

pub mod blkid;
mod device;
mod direct;
pub mod engine;
pub(crate) mod flags;
pub mod lines;
pub mod opened;
pub mod pattern;
pub mod records;
pub mod signature;
pub(crate) mod space;
mod sysblock;
pub mod target;
