//! Signals to a test's own children, by their pid: Ctrl-C (SIGINT), SIGTERM or SIGKILL in the
//! middle of a run, to test what a tool does then.

use crate::process::Spawned;
use rustix::process::{Pid, Signal, kill_process};

/// Sends signal `sig` (a `libc::SIG*` number) to process `pid`; false when the number or the
/// pid is not valid or the process is gone.
pub fn signal(pid: u32, sig: i32) -> bool {
    let (Some(pid), Some(sig)) = (
        i32::try_from(pid).ok().and_then(Pid::from_raw),
        Signal::from_named_raw(sig),
    ) else {
        return false;
    };
    kill_process(pid, sig).is_ok()
}

impl Spawned {
    /// Sends signal `sig` (a `libc::SIG*` number) to the process.
    pub fn signal(&self, sig: i32) -> bool {
        signal(self.pid(), sig)
    }
}
