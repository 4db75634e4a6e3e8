//! Waiting for a run: signals through a signalfd, the time limit, Ctrl-C, and `wait4`.
//!
//! SIGCHLD, SIGINT, SIGTERM and SIGHUP are blocked and read from a signalfd, and the wait is
//! a `ppoll` on it (and on the `--stdout pipe` pipe), so a signal can never slip in between
//! a check and a blocking call. When the child has exited, `wait4` reaps it and hands back
//! that run's own rusage; the clock is read right after. A signal that timecmd's parent
//! had set to be ignored (`nohup`, `cmd &` in a script) stays ignored.
//!
//! When timecmd is in the foreground of a terminal, it keeps the terminal (so Ctrl-C and
//! Ctrl-Z reach timecmd and the other commands of its pipeline, and timecmd forwards them to
//! the run's process group). A run that reads from the terminal (or sets its modes) is
//! stopped by the kernel because its group is in the background: timecmd then gives it the
//! terminal, as a shell does for `fg`, continues it, and takes the terminal back after it.

use std::io;
use std::mem::{MaybeUninit, size_of};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::Duration;

use nix::poll::{PollFd, PollFlags, ppoll};
use nix::sys::signal::{SigSet, SigmaskHow, Signal, killpg, pthread_sigmask, raise};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::time::TimeSpec;
use nix::unistd::{Pid, getpgrp, isatty, tcgetpgrp, tcsetpgrp};

use crate::clock::now_ns;
use crate::spawn::Drain;

/// How long a child has to end after a forwarded Ctrl-C before it gets SIGKILL.
pub const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// How a run ended.
#[derive(Clone, Copy)]
pub struct Reaped {
    /// The raw wait status.
    pub status: libc::c_int,
    /// The child's (and its waited-for descendants') resource usage.
    pub usage: libc::rusage,
    /// CLOCK_MONOTONIC right after reaping.
    pub end_ns: u64,
    /// The time limit was reached and the process group killed.
    pub timed_out: bool,
    /// timecmd got this signal during the run and forwarded it.
    pub interrupt: Option<i32>,
}

impl std::fmt::Debug for Reaped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reaped")
            .field("status", &self.status)
            .field("end_ns", &self.end_ns)
            .field("timed_out", &self.timed_out)
            .field("interrupt", &self.interrupt)
            .finish()
    }
}

/// The blocked signals, their signalfd, and the terminal hand-off.
pub struct Signals {
    fd: SignalFd,
    /// The first interrupting signal (SIGINT, SIGTERM, SIGHUP) received, if any.
    interrupted: Option<i32>,
    /// The terminal to hand to a run that needs it, when timecmd is in its foreground.
    tty: Option<OwnedFd>,
    own_pgrp: Pid,
    /// Whether the current run has the terminal.
    handed: bool,
}

impl std::fmt::Debug for Signals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Signals")
            .field("interrupted", &self.interrupted)
            .field("tty", &self.tty)
            .finish()
    }
}

/// The signals timecmd waits for (SIGTSTP only on a terminal).
const WAITED: [Signal; 4] = [
    Signal::SIGINT,
    Signal::SIGTERM,
    Signal::SIGHUP,
    Signal::SIGTSTP,
];

/// Those of the waited-for signals that timecmd's parent set to be ignored (`nohup`, `cmd &`
/// in a script): the lifecycle leaves them ignored (measure's signal rule), and so does
/// timecmd, for itself and for every run.
pub fn ignored_signals() -> Vec<Signal> {
    WAITED
        .into_iter()
        .filter(|&sig| measure::signal::ignored(sig as libc::c_int))
        .collect()
}

/// A descriptor of the terminal whose foreground process group is timecmd's (stdin, then
/// stderr, then stdout), if any.
fn foreground_terminal(own_pgrp: Pid) -> Option<OwnedFd> {
    let (stdin, stderr, stdout) = (io::stdin(), io::stderr(), io::stdout());
    [stdin.as_fd(), stderr.as_fd(), stdout.as_fd()]
        .into_iter()
        .find(|&fd| isatty(fd).unwrap_or(false) && tcgetpgrp(fd).is_ok_and(|p| p == own_pgrp))
        .and_then(|fd| fd.try_clone_to_owned().ok())
}

/// Passes an interrupt on to the run's process group; returns when (CLOCK_MONOTONIC ns) the
/// group is killed if it is still there.
fn forward(pgrp: Pid, sig: i32) -> u64 {
    if let Ok(s) = Signal::try_from(sig) {
        let _ = killpg(pgrp, s);
    }
    now_ns() + INTERRUPT_GRACE.as_nanos() as u64
}

/// `wait4` without blocking: the wait status and rusage of `pid` once it ended (or stopped),
/// `None` while it runs. Neither nix nor rustix hands back wait4's rusage.
fn wait4(pid: libc::pid_t, flags: libc::c_int) -> io::Result<Option<(libc::c_int, libc::rusage)>> {
    let mut status: libc::c_int = 0;
    let mut usage = MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: wait4 on our own child with pointers to live values; the kernel fills in the
    // rusage when it returns the child's pid, and only then is it read.
    unsafe {
        match libc::wait4(pid, &mut status, flags, usage.as_mut_ptr()) {
            r if r == pid => Ok(Some((status, usage.assume_init()))),
            r if r < 0 => Err(io::Error::last_os_error()),
            _ => Ok(None),
        }
    }
}

/// The state of one wait: when to kill the group, and what happened so far.
#[derive(Default)]
struct Waiting {
    /// The --time-limit deadline (CLOCK_MONOTONIC ns), until it has struck.
    kill_at: Option<u64>,
    /// The end of the grace after a forwarded interrupt.
    force_at: Option<u64>,
    timed_out: bool,
    interrupt: Option<i32>,
}

impl Waiting {
    /// The next time the wait has to wake up by itself, as a timeout from now.
    fn timeout(&self) -> Option<TimeSpec> {
        let wake = match (self.kill_at, self.force_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }?;
        Some(TimeSpec::from(Duration::from_nanos(
            wake.saturating_sub(now_ns()),
        )))
    }

    /// Kills the group at the time limit or at the end of the grace.
    fn strike(&mut self, pgrp: Pid) {
        let now = now_ns();
        if self.kill_at.is_some_and(|k| now >= k) {
            self.kill_at = None;
            self.timed_out = true;
            // The leader is not reaped yet, so the group id cannot have been reused.
            let _ = killpg(pgrp, Signal::SIGKILL);
        }
        if self.force_at.is_some_and(|f| now >= f) {
            self.force_at = None;
            let _ = killpg(pgrp, Signal::SIGKILL);
        }
    }
}

/// Whether the signalfd and the pipe are readable after a `ppoll` on both until `timeout`.
fn poll(
    sigfd: BorrowedFd<'_>,
    pipe: Option<BorrowedFd<'_>>,
    timeout: Option<TimeSpec>,
) -> io::Result<(bool, bool)> {
    let mut fds = [
        PollFd::new(sigfd, PollFlags::POLLIN),
        PollFd::new(pipe.unwrap_or(sigfd), PollFlags::POLLIN),
    ];
    let n = if pipe.is_some() { 2 } else { 1 };
    match ppoll(&mut fds[..n], timeout, None) {
        Ok(_) | Err(nix::errno::Errno::EINTR) => {}
        Err(e) => return Err(e.into()),
    }
    let ready = |fd: &PollFd<'_>| fd.revents().is_some_and(|r| !r.is_empty());
    Ok((ready(&fds[0]), n == 2 && ready(&fds[1])))
}

impl Signals {
    /// Blocks the signals timecmd waits for (but the `ignored` ones) and opens their
    /// signalfd. A Ctrl-C that reached the lifecycle's handler before counts as received.
    pub fn install(ignored: &[Signal]) -> io::Result<Signals> {
        let own_pgrp = getpgrp();
        let tty = foreground_terminal(own_pgrp);
        let mut set = SigSet::empty();
        set.add(Signal::SIGCHLD);
        for sig in WAITED {
            // Ctrl-Z stops the run and timecmd together, on a terminal.
            let wanted = sig != Signal::SIGTSTP || tty.is_some();
            if wanted && !ignored.contains(&sig) {
                set.add(sig);
            }
        }
        let mut block = set;
        // Blocked SIGTTOU lets timecmd take the terminal back from the background.
        block.add(Signal::SIGTTOU);
        pthread_sigmask(SigmaskHow::SIG_BLOCK, Some(&block), None)?;
        let fd = SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK)?;
        Ok(Signals {
            fd,
            interrupted: measure::signal::interrupt_signal(),
            tty,
            own_pgrp,
            handed: false,
        })
    }

    /// The first interrupting signal received so far.
    pub fn interrupted(&self) -> Option<i32> {
        self.interrupted
    }

    /// Whether timecmd is in the foreground of a terminal (a run that needs it gets it).
    pub fn hands_off_terminal(&self) -> bool {
        self.tty.is_some()
    }

    /// Reads every pending signal without waiting; returns the interrupting ones in order.
    /// A Ctrl-Z between runs stops timecmd at once.
    fn drain(&mut self) -> Vec<i32> {
        let got = self.drain_all();
        let (stops, rest): (Vec<i32>, Vec<i32>) =
            got.into_iter().partition(|&s| s == libc::SIGTSTP);
        if !stops.is_empty() {
            // The shell's `fg` continues timecmd.
            let _ = raise(Signal::SIGSTOP);
        }
        rest
    }

    /// Every pending signal but SIGCHLD, in order.
    fn drain_all(&mut self) -> Vec<i32> {
        // Room for every signal that can be pending at once (each blocked signal once), so
        // that one read empties the queue: the wake-up after the child's exit is in the
        // measured span. signalfd returns whole records; the signal number comes first.
        const RECORD: usize = size_of::<libc::signalfd_siginfo>();
        const BATCH: usize = 8;
        let mut got = Vec::new();
        loop {
            let mut buf = [0u8; RECORD * BATCH];
            let n = nix::unistd::read(&self.fd, &mut buf).unwrap_or(0);
            got.extend(
                buf[..n]
                    .chunks_exact(RECORD)
                    .map(|r| i32::from_ne_bytes([r[0], r[1], r[2], r[3]]))
                    .filter(|&sig| sig != libc::SIGCHLD),
            );
            // A short read (or EAGAIN) means the queue is empty.
            if n < buf.len() {
                break;
            }
        }
        got
    }

    /// Between runs: notes an interrupt that arrived, without waiting.
    pub fn poll_interrupt(&mut self) -> Option<i32> {
        for sig in self.drain() {
            self.interrupted.get_or_insert(sig);
        }
        self.interrupted
    }

    fn give_terminal(&self, pgrp: Pid) {
        if let Some(fd) = &self.tty {
            // SIGTTOU is blocked, so this works from the background too. A failure leaves
            // job control as it was.
            let _ = tcsetpgrp(fd, pgrp);
        }
    }

    /// Waits for `pid` (the leader of its own process group) to end, draining `pipe` and
    /// killing the group at `deadline_ns` (CLOCK_MONOTONIC) or after an interrupt. With
    /// `stop_if_interrupted`, an interrupt that came before the spawn is forwarded at once.
    pub fn wait(
        &mut self,
        pid: libc::pid_t,
        deadline_ns: Option<u64>,
        mut pipe: Option<&mut Drain>,
        stop_if_interrupted: bool,
    ) -> io::Result<Reaped> {
        let pgrp = Pid::from_raw(pid);
        let mut w = Waiting {
            kill_at: deadline_ns,
            ..Waiting::default()
        };
        let flags = if self.tty.is_some() {
            libc::WNOHANG | libc::WUNTRACED
        } else {
            libc::WNOHANG
        };
        self.handed = false;
        // An interrupt that arrived just before the spawn still stops this run.
        if let Some(sig) = self.interrupted.filter(|_| stop_if_interrupted) {
            w.interrupt = Some(sig);
            w.force_at = Some(forward(pgrp, sig));
        }
        loop {
            let pipe_fd = pipe.as_ref().map(|d| d.fd());
            let polled = poll(self.fd.as_fd(), pipe_fd, w.timeout());
            let (signalled, pipe_ready) = polled.inspect_err(|_| self.take_terminal_back())?;
            if signalled {
                self.on_signals(pgrp, &mut w);
            }
            if let Some(d) = pipe.as_deref_mut().filter(|_| pipe_ready) {
                d.drain();
            }
            match wait4(pid, flags) {
                Ok(Some((status, usage))) => {
                    let end_ns = now_ns();
                    if libc::WIFSTOPPED(status) {
                        self.on_stop(pgrp, libc::WSTOPSIG(status));
                        continue;
                    }
                    self.take_terminal_back();
                    if let Some(d) = pipe.as_deref_mut() {
                        d.drain();
                    }
                    if let Some(force_at) = w.force_at {
                        crate::group::settle(pgrp, force_at);
                    }
                    return Ok(Reaped {
                        status,
                        usage,
                        end_ns,
                        timed_out: w.timed_out,
                        interrupt: w.interrupt,
                    });
                }
                Ok(None) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.take_terminal_back();
                    return Err(e);
                }
            }
            w.strike(pgrp);
        }
    }

    /// The signals that woke a wait: Ctrl-Z suspends the run with timecmd, the first
    /// interrupt is forwarded with a grace, a second one kills at once.
    fn on_signals(&mut self, pgrp: Pid, w: &mut Waiting) {
        for sig in self.drain_all() {
            if sig == libc::SIGTSTP {
                suspend_with(pgrp);
            } else if w.interrupt.is_none() {
                w.interrupt = Some(sig);
                self.interrupted.get_or_insert(sig);
                w.force_at = Some(forward(pgrp, sig));
            } else {
                let _ = killpg(pgrp, Signal::SIGKILL);
            }
        }
    }

    /// Gives the terminal back to timecmd's group if the run had it.
    fn take_terminal_back(&mut self) {
        if self.handed {
            self.give_terminal(self.own_pgrp);
            self.handed = false;
        }
    }

    /// A run stopped (only reported on a terminal). On a read from or a mode change of the
    /// terminal it gets the terminal and goes on. After Ctrl-Z typed while it had the
    /// terminal, timecmd stops too and both go on after `fg`. A stop that someone else sent
    /// stays as it is.
    fn on_stop(&mut self, pgrp: Pid, sig: i32) {
        if sig != libc::SIGTTIN && sig != libc::SIGTTOU {
            if !self.handed {
                return;
            }
            self.take_terminal_back();
            // The shell's `fg` continues timecmd.
            let _ = raise(Signal::SIGSTOP);
        }
        self.give_terminal(pgrp);
        self.handed = true;
        let _ = killpg(pgrp, Signal::SIGCONT);
    }
}

/// Ctrl-Z reached timecmd during a run: stop the run's group, then timecmd; after `fg`
/// continue both.
fn suspend_with(pgrp: Pid) {
    let _ = killpg(pgrp, Signal::SIGSTOP);
    let _ = raise(Signal::SIGSTOP);
    let _ = killpg(pgrp, Signal::SIGCONT);
}
