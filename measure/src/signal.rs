//! Ctrl-C, SIGTERM, SIGHUP (a dropped ssh session, the usual early end of a remote run) and a
//! SIGPIPE sent by another process: a flag that blocking calls and loops look at, so that a
//! tool writes its summary, removes what it made, and ends with 130 instead of dying mid-line.
//! The SIGPIPE the kernel raises for a write to a pipe nobody reads is not an interruption:
//! the write fails with EPIPE and the tool ends as its output policy says.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// The signal that arrived (0: none yet).
static SIGNAL: AtomicI32 = AtomicI32::new(0);

/// The signals that end a run early, each with its summary written.
pub const ENDING: [libc::c_int; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGPIPE];

/// Whether a signal's sender is another process. The kernel's own SIGPIPE (a write to a
/// closed pipe) names the writing process itself as its sender.
fn from_elsewhere(info: *const libc::siginfo_t) -> bool {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; si_pid is read
    // from it and getpid is async-signal-safe.
    unsafe { info.is_null() || (*info).si_pid() != libc::getpid() }
}

extern "C" fn on_signal(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if sig != libc::SIGPIPE || from_elsewhere(info) {
        SIGNAL.store(sig, Ordering::SeqCst);
    }
}

/// For a tool without records: a SIGPIPE from another process ends it as the default action
/// would; the kernel's own (a closed pipe) is left to fail the write with EPIPE.
extern "C" fn pipe_default(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    if from_elsewhere(info) {
        // SAFETY: signal and raise are async-signal-safe; SIG_DFL runs no code of ours.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

type Handler = extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void);

/// Installs `handler` for `sig` with SA_SIGINFO and without SA_RESTART, so that a blocking
/// call returns EINTR.
fn handle(sig: libc::c_int, handler: Handler) -> io::Result<()> {
    // SAFETY: sigaction with a zeroed struct, an empty mask and a handler that only stores to
    // an atomic or restores the default action, both async-signal-safe.
    let rc = unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as *const () as libc::sighandler_t;
        libc::sigemptyset(&mut sa.sa_mask);
        sa.sa_flags = libc::SA_SIGINFO;
        libc::sigaction(sig, &sa, std::ptr::null_mut())
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Installs handlers for the [`ENDING`] signals that only record the signal (SIGPIPE only when
/// another process sent it), without SA_RESTART, so that a blocking call returns EINTR and
/// the tool can finish its records. They are installed even where the parent ignored the signal: a non-interactive shell starts its
/// background jobs with SIGINT ignored, and scripts stop a background listener with
/// `kill -INT`, as ping and netcat are stopped.
pub fn install() -> io::Result<()> {
    for sig in ENDING {
        handle(sig, on_signal)?;
    }
    Ok(())
}

/// Gives the [`ENDING`] signals their default action (the process ends), for a tool that writes
/// no records and so has no summary to finish: even where the parent ignored them, as a
/// non-interactive shell does for its background jobs, `kill -INT` ends it. A SIGPIPE ends it
/// only when another process sent it (a closed pipe fails the write with EPIPE instead).
pub fn default_action() -> io::Result<()> {
    handle(libc::SIGPIPE, pipe_default)?;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
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
        // The kernel's SIGPIPE for a closed pipe names this process as its sender: no
        // interruption, the write fails with EPIPE.
        SIGNAL.store(0, Ordering::SeqCst);
        let mut fds = [0; 2];
        // SAFETY: pipe fills two fds; closing the read end and writing to the other raises
        // the kernel's SIGPIPE, which the handler installed above receives.
        let n = unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            libc::close(fds[0]);
            let n = libc::write(fds[1], b"x".as_ptr().cast(), 1);
            libc::close(fds[1]);
            n
        };
        assert_eq!(n, -1);
        assert!(!interrupted());
    }
}
