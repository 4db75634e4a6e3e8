//! Ctrl-C, SIGTERM and SIGHUP (a dropped ssh session, the usual early end of a remote run): a
//! flag that blocking calls and loops look at, so that a tool writes its summary, removes
//! what it made, and ends with 130 instead of dying mid-line.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that arrived (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals that end a run early, each with its summary written.
pub const ENDING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
}

/// Installs handlers for the [`ENDING`] signals that only record the signal, without SA_RESTART,
/// so that a blocking call returns EINTR and the tool can finish its records. They are
/// installed even where the parent ignored the signal: a non-interactive shell starts its
/// background jobs with SIGINT ignored, and scripts stop a background listener with
/// `kill -INT`, as ping and netcat are stopped.
pub fn install() -> io::Result<()> {
    for sig in ENDING {
        // SAFETY: sigaction with a zeroed struct, an empty mask and a handler that only
        // stores to an atomic, which is async-signal-safe.
        let rc = unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut sa.sa_mask);
            sa.sa_flags = 0;
            libc::sigaction(sig, &sa, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Gives the [`ENDING`] signals their default action (the process ends), for a tool that writes
/// no records and so has no summary to finish: even where the parent ignored them, as a
/// non-interactive shell does for its background jobs, `kill -INT` ends it.
pub fn default_action() -> io::Result<()> {
    for sig in ENDING {
        // SAFETY: SIG_DFL installs no handler, so no code of ours runs in signal context.
        if unsafe { libc::signal(sig, libc::SIG_DFL) } == libc::SIG_ERR {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Whether one of the [`ENDING`] signals arrived since [`install`].
pub fn interrupted() -> bool {
    SIGNAL.load(Ordering::SeqCst) != 0
}

/// The signal that interrupted the tool, if any.
pub fn interrupt_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sigint_sets_the_flag_instead_of_killing() {
        install().unwrap();
        // SAFETY: raise delivers SIGINT to this thread; the handler only stores an atomic.
        unsafe { libc::raise(libc::SIGINT) };
        assert!(interrupted());
        assert_eq!(interrupt_signal(), Some(libc::SIGINT));
    }
}
