//! The block layer both tools stand on: the target (opened through one door, `target::open`,
//! with every safety check), the engine (psync and io_uring, latency histogram, ticks), the
//! data pool and block order, the flags and record pieces both tools share, and the words
//! both print.

pub(crate) mod blkid;
mod device;
mod direct;
pub mod engine;
pub(crate) mod flags;
pub(crate) mod lines;
pub(crate) mod opened;
pub mod pattern;
pub(crate) mod records;
pub(crate) mod signature;
pub(crate) mod space;
mod sysblock;
pub(crate) mod target;
