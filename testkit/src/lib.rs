//! Real parts for the benchmatrix tests, in one place for every crate: skips that say why
//! (and are listed at the end of CI), network namespaces joined by veth or on one bridge
//! (optionally behind `tc tbf`), loop devices over scratch files, child processes ended by
//! their pid, and the release binaries every test drives. Each part is removed by its Drop,
//! even when a test fails.

pub mod alone;
pub mod bridge;
pub mod captured;
pub mod loopdev;
pub mod mount;
pub mod netns;
pub mod process;
pub mod pty;
pub mod release;
pub mod routed;
pub mod shape;
pub mod signal;
pub mod skip;

pub use alone::alone;
pub use bridge::Bridge;
pub use captured::Captured;
pub use loopdev::LoopDev;
pub use netns::{A_ADDR, A_ADDR6, B_ADDR, B_ADDR6, NetPair, cmd, unique};
pub use process::{Spawned, free_port};
pub use pty::{odd_tempdir, on_terminal, tool_on_terminal};
pub use release::tool;
pub use signal::signal;
pub use skip::{is_root, need_root, need_tool, skip};
