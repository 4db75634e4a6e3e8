//! Signals to a test's own children, by their pid: Ctrl-C (SIGINT), SIGTERM or SIGKILL in the
//! middle of a run, to test what a tool does then; and the dispositions a terminal's shell
//! gives a command, which every child of a test starts with.

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

/// Gives SIGHUP, SIGINT, SIGTERM and SIGQUIT their default action in this test process where
/// it started with them ignored (`nohup cargo test`, a CI runner's background job), once. The
/// tools keep a signal that was ignored at their start ignored, as nohup asks; a test of what a
/// tool or script does on a signal is a test of a user's shell, where these signals are not
/// ignored, so its children must not inherit an ignore from whatever started the tests. A test
/// that wants a signal ignored (nohup's case) sets that up in its own child.
pub fn as_a_shell_gives() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGHUP, libc::SIGINT, libc::SIGTERM, libc::SIGQUIT] {
            // SAFETY: sigaction with a null new action only reads the current one into a
            // zeroed struct; signal(SIG_DFL) installs no code of ours.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction == libc::SIG_IGN
                {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
        }
    });
}
