//! Ctrl-C, SIGTERM, SIGHUP (a dropped ssh session, the usual early end of a remote run) and a
//! SIGPIPE sent by another process: a flag that blocking calls and loops look at, so that a
//! tool writes its summary, removes what it made, and ends with 130 instead of dying mid-line.
//! The SIGPIPE the kernel raises for a write to a pipe nobody reads is not an interruption:
//! the write fails with EPIPE and the tool ends as its output policy says.
//!
//! One rule for every tool, as coreutils and daemons keep it: a signal that was ignored when
//! the process started (`nohup`, `trap '' HUP`, the SIGINT of a non-interactive shell's
//! background job) stays ignored. So scripts stop a background tool with SIGTERM, never
//! SIGINT. SIGPIPE is the exception: the Rust runtime ignores it before `main`, so what the
//! parent chose cannot be seen, and a sent one always ends the run.
//!
//! A measuring tool also watches for being stopped ([`watch_stops`]): SIGCONT stays blocked,
//! so no handler runs and no call is interrupted, and the summary takes a pending one as the
//! sign that the run was stopped and continued (SIGSTOP or Ctrl-Z, then SIGCONT or `fg`): its
//! figures include the pause, so an ok summary becomes partial and says why.

use nix::sys::signal::{SigSet, SigmaskHow, Signal, pthread_sigmask};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

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

/// Whether `sig` is ignored (SIG_IGN) now. Before [`install`] that is what the parent left:
/// exec keeps an ignored signal ignored and resets every handled one to its default.
pub fn ignored(sig: libc::c_int) -> bool {
    let mut old = std::mem::MaybeUninit::<libc::sigaction>::zeroed();
    // SAFETY: sigaction with a null new action changes nothing and only writes the current
    // action into `old`, which is read only when the call succeeded.
    unsafe {
        libc::sigaction(sig, std::ptr::null(), old.as_mut_ptr()) == 0
            && old.assume_init().sa_sigaction == libc::SIG_IGN
    }
}

/// Installs handlers for the [`ENDING`] signals that only record the signal (SIGPIPE only when
/// another process sent it), without SA_RESTART, so that a blocking call returns EINTR and
/// the tool can finish its records. A signal the parent left ignored (`nohup`'s SIGHUP, the
/// SIGINT of a script's `&` job) stays ignored: the tool goes on as its parent asked.
pub fn install() -> io::Result<()> {
    for sig in ENDING {
        if sig == libc::SIGPIPE || !ignored(sig) {
            handle(sig, on_signal)?;
        }
    }
    Ok(())
}

/// Sets up the [`ENDING`] signals of a tool that writes no records and so has no summary to
/// finish: SIGINT, SIGTERM and SIGHUP keep the action the process started with (the
/// default, which ends it, or ignored where the parent ignored them); a SIGPIPE ends it only
/// when another process sent it (a closed pipe fails the write with EPIPE instead).
pub fn default_action() -> io::Result<()> {
    handle(libc::SIGPIPE, pipe_default)
}

/// Whether [`watch_stops`] is on.
static WATCHING: AtomicBool = AtomicBool::new(false);

/// Blocks SIGCONT in the calling thread and in every thread it starts afterwards, so that a
/// continue after a stop stays pending for [`stopped_since`]. A blocked SIGCONT still
/// continues the process; it runs no handler and interrupts no call. Called before the tool
/// starts threads; std's `Command` and timecmd's spawn give children an empty mask.
pub fn watch_stops() -> io::Result<()> {
    // pthread_sigmask(SIG_BLOCK, {SIGCONT}) through nix's safe wrapper: it only adds SIGCONT
    // to this thread's mask.
    let mut set = SigSet::empty();
    set.add(Signal::SIGCONT);
    pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&set), None).map_err(io::Error::from)?;
    WATCHING.store(true, Ordering::SeqCst);
    Ok(())
}

/// Whether the process was continued (SIGCONT) since the last call, or since
/// [`watch_stops`]: takes the pending SIGCONT, so that each run of a tool that makes several
/// answers for itself. Always false without [`watch_stops`].
pub fn stopped_since() -> bool {
    if !WATCHING.load(Ordering::SeqCst) {
        return false;
    }
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a local set holding SIGCONT, which is blocked in this thread (and in every
    // other: watch_stops ran before any was started), and a zero timeout: sigtimedwait takes
    // a pending SIGCONT or fails with EAGAIN at once.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGCONT);
        libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) == libc::SIGCONT
    }
}

/// What a summary says of a run that was stopped and continued.
pub const STOPPED: &str =
    "stopped for a while (SIGSTOP/SIGCONT) during the run: its figures include the pause";

/// `s` as it stands, or, when the process was continued after a stop during the run
/// ([`stopped_since`]), `s` marked: `stopped: true` in info, and an ok status made partial
/// with [`STOPPED`] as its error (a summary already not ok adds it to its error).
pub(crate) fn mark_stopped(mut s: crate::parts::Summary) -> crate::parts::Summary {
    if !stopped_since() {
        return s;
    }
    s.info.insert("stopped".to_string(), true.into());
    if s.status == crate::record::Status::Ok {
        s.status = crate::record::Status::Partial;
    }
    s.error = Some(match s.error.take() {
        Some(e) => format!("{e}; {STOPPED}"),
        None => STOPPED.to_string(),
    });
    s
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
    // nix's raise and rustix's pipe and write: the same calls, safe.
    use nix::sys::signal::raise;

    #[test]
    fn sigint_sets_the_flag_instead_of_killing() {
        // SAFETY: SIG_DFL and SIG_IGN install no handler. SIGINT as a process started in
        // the foreground has it (whatever ran the tests); SIGHUP as under nohup.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
        }
        install().unwrap();
        // SIGHUP was ignored at start: it stays so, and sets no flag.
        assert!(ignored(libc::SIGHUP) && !ignored(libc::SIGINT));
        // SIGHUP to this thread: it is ignored.
        raise(Signal::SIGHUP).unwrap();
        assert!(!interrupted());
        // SIGINT to this thread: the handler stores it.
        raise(Signal::SIGINT).unwrap();
        assert!(interrupted());
        assert_eq!(interrupt_signal(), Some(libc::SIGINT));
        // The kernel's SIGPIPE for a closed pipe names this process as its sender: no
        // interruption, the write fails with EPIPE.
        SIGNAL.store(0, Ordering::SeqCst);
        // Writing to a pipe whose read end is closed raises the kernel's SIGPIPE, which the
        // handler installed above receives.
        let (r, w) = rustix::pipe::pipe().unwrap();
        drop(r);
        assert_eq!(rustix::io::write(&w, b"x"), Err(rustix::io::Errno::PIPE));
        assert!(!interrupted());
    }

    #[test]
    fn a_continue_after_a_stop_is_seen_once() {
        assert!(!stopped_since());
        watch_stops().unwrap();
        assert!(!stopped_since());
        // SIGCONT to this thread, which has it blocked: it stays pending (the continue
        // itself is a no-op on a running process).
        raise(Signal::SIGCONT).unwrap();
        assert!(stopped_since());
        assert!(!stopped_since(), "taken by the first look");
    }
}
