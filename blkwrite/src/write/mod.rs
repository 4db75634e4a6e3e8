//! blkwrite's own room: its command and options (with dd's operand form), the plan from the
//! options and the target, the write run with its records and human lines, and the read-back.

pub(crate) mod begin;
pub(crate) mod cli;
pub(crate) mod ddform;
mod ddlines;
mod ddsize;
pub(crate) mod execute;
mod human;
mod outcome;
pub(crate) mod setup;
pub(crate) mod verify;
