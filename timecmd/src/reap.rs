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
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::clock::now_ns;

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
    fd: OwnedFd,
    /// The first interrupting signal (SIGINT, SIGTERM, SIGHUP) received, if any.
    interrupted: Option<i32>,
    /// The terminal to hand to a run that needs it, when timecmd is in its foreground.
    tty: Option<RawFd>,
    own_pgrp: libc::pid_t,
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

/// Whether `sig` is currently ignored (SIG_IGN), as a parent may have set it.
fn ignored(sig: i32) -> bool {
    // SAFETY: sigaction with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

impl Signals {
    /// Blocks the signals timecmd waits for and opens their signalfd.
    pub fn install() -> io::Result<Signals> {
        // SAFETY: sigset_t is plain data initialised by sigemptyset; the calls take
        // pointers to live values; signalfd returns a new descriptor or -1.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            let own_pgrp = libc::getpgrp();
            let tty = [0, 2, 1]
                .into_iter()
                .find(|&fd| libc::isatty(fd) == 1 && libc::tcgetpgrp(fd) == own_pgrp);
            let mut wanted = vec![libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
            if tty.is_some() {
                // Ctrl-Z stops the run and timecmd together.
                wanted.push(libc::SIGTSTP);
            }
            for sig in wanted {
                if !ignored(sig) {
                    libc::sigaddset(&mut set, sig);
                }
            }
            let mut block = set;
            // Blocked SIGTTOU lets timecmd take the terminal back from the background.
            libc::sigaddset(&mut block, libc::SIGTTOU);
            if libc::pthread_sigmask(libc::SIG_BLOCK, &block, std::ptr::null_mut()) != 0 {
                return Err(io::Error::last_os_error());
            }
            let fd = libc::signalfd(-1, &set, libc::SFD_CLOEXEC | libc::SFD_NONBLOCK);
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(Signals {
                fd: OwnedFd::from_raw_fd(fd),
                interrupted: None,
                tty,
                own_pgrp,
                handed: false,
            })
        }
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
            // SAFETY: stops timecmd itself; the shell's `fg` continues it.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        rest
    }

    /// Every pending signal but SIGCHLD, in order.
    fn drain_all(&mut self) -> Vec<i32> {
        const BATCH: usize = 8;
        let mut got = Vec::new();
        loop {
            // SAFETY: signalfd_siginfo is plain data; read writes at most the array's size.
            let mut si: [libc::signalfd_siginfo; BATCH] = unsafe { std::mem::zeroed() };
            let size = std::mem::size_of_val(&si);
            // SAFETY: reading into a buffer of exactly `size` bytes; signalfd returns whole
            // signalfd_siginfo records.
            let n = unsafe { libc::read(self.fd.as_raw_fd(), si.as_mut_ptr().cast(), size) };
            let records =
                usize::try_from(n).unwrap_or(0) / std::mem::size_of::<libc::signalfd_siginfo>();
            got.extend(
                si[..records]
                    .iter()
                    .map(|r| r.ssi_signo as i32)
                    .filter(|&sig| sig != libc::SIGCHLD),
            );
            // A short read (or EAGAIN) means the queue is empty.
            if records < BATCH {
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

    fn give_terminal(&self, pgrp: libc::pid_t) {
        if let Some(fd) = self.tty {
            // SAFETY: tcsetpgrp on a terminal descriptor; SIGTTOU is blocked so it works
            // from the background too. A failure leaves job control as it was.
            unsafe {
                libc::tcsetpgrp(fd, pgrp);
            }
        }
    }

    /// Waits for `pid` (the leader of its own process group) to end, draining `pipe` and
    /// killing the group at `deadline_ns` (CLOCK_MONOTONIC) or after an interrupt. With
    /// `stop_if_interrupted`, an interrupt that came before the spawn is forwarded at once.
    pub fn wait(
        &mut self,
        pid: libc::pid_t,
        deadline_ns: Option<u64>,
        pipe: Option<RawFd>,
        stop_if_interrupted: bool,
    ) -> io::Result<Reaped> {
        let mut kill_at = deadline_ns;
        let mut force_at: Option<u64> = None;
        let mut timed_out = false;
        let mut interrupt = None;
        let flags = if self.tty.is_some() {
            libc::WNOHANG | libc::WUNTRACED
        } else {
            libc::WNOHANG
        };
        self.handed = false;
        // An interrupt that arrived just before the spawn still stops this run.
        if let Some(sig) = self.interrupted.filter(|_| stop_if_interrupted) {
            interrupt = Some(sig);
            force_at = Some(forward(pid, sig));
        }
        loop {
            let mut fds = [
                libc::pollfd {
                    fd: self.fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                },
                libc::pollfd {
                    fd: pipe.unwrap_or(-1),
                    events: libc::POLLIN,
                    revents: 0,
                },
            ];
            let wake = match (kill_at, force_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let ts = wake.map(|w| {
                let left = w.saturating_sub(now_ns());
                libc::timespec {
                    tv_sec: (left / 1_000_000_000) as libc::time_t,
                    tv_nsec: (left % 1_000_000_000) as libc::c_long,
                }
            });
            let tsp = ts.as_ref().map_or(std::ptr::null(), |t| t as *const _);
            // SAFETY: two live pollfd entries (a negative fd is ignored by ppoll), a
            // timespec or null, and no signal mask change.
            let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, tsp, std::ptr::null()) };
            if rc < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    self.take_terminal_back();
                    return Err(e);
                }
            }
            if fds[0].revents != 0 {
                for sig in self.drain_all() {
                    if sig == libc::SIGTSTP {
                        self.suspend_with(pid);
                    } else if interrupt.is_none() {
                        interrupt = Some(sig);
                        self.interrupted.get_or_insert(sig);
                        force_at = Some(forward(pid, sig));
                    } else {
                        // A second Ctrl-C: no more grace.
                        // SAFETY: as above.
                        unsafe { libc::kill(-pid, libc::SIGKILL) };
                    }
                }
            }
            if let Some(p) = pipe
                && fds[1].revents != 0
            {
                drain_pipe(p);
            }
            let mut status: libc::c_int = 0;
            // SAFETY: rusage is plain data that wait4 fills in.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: wait4 on our own child with pointers to live values.
            let r = unsafe { libc::wait4(pid, &mut status, flags, &mut usage) };
            if r == pid {
                let end_ns = now_ns();
                if libc::WIFSTOPPED(status) {
                    self.on_stop(pid, libc::WSTOPSIG(status));
                    continue;
                }
                self.take_terminal_back();
                if let Some(p) = pipe {
                    drain_pipe(p);
                }
                return Ok(Reaped {
                    status,
                    usage,
                    end_ns,
                    timed_out,
                    interrupt,
                });
            }
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    self.take_terminal_back();
                    return Err(e);
                }
            }
            let now = now_ns();
            if kill_at.is_some_and(|k| now >= k) {
                kill_at = None;
                timed_out = true;
                // SAFETY: kill of the process group we created (the leader is not reaped
                // yet, so the group id cannot have been reused).
                unsafe { libc::kill(-pid, libc::SIGKILL) };
            }
            if force_at.is_some_and(|f| now >= f) {
                force_at = None;
                // SAFETY: as above.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
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
    fn on_stop(&mut self, pid: libc::pid_t, sig: i32) {
        if sig != libc::SIGTTIN && sig != libc::SIGTTOU {
            if !self.handed {
                return;
            }
            self.take_terminal_back();
            // SAFETY: stops timecmd itself; the shell's `fg` continues it.
            unsafe { libc::raise(libc::SIGSTOP) };
        }
        self.give_terminal(pid);
        self.handed = true;
        // SAFETY: continues the process group we created.
        unsafe { libc::kill(-pid, libc::SIGCONT) };
    }

    /// Ctrl-Z reached timecmd during a run: stop the run's group, then timecmd; after `fg`
    /// continue both.
    fn suspend_with(&mut self, pid: libc::pid_t) {
        // SAFETY: stops and later continues the process group we created, and stops
        // timecmd itself until the shell continues it.
        unsafe {
            libc::kill(-pid, libc::SIGSTOP);
            libc::raise(libc::SIGSTOP);
            libc::kill(-pid, libc::SIGCONT);
        }
    }
}

/// Reads and discards what is in the pipe now.
/// Passes an interrupt on to the run's process group; returns when (CLOCK_MONOTONIC ns) the
/// group is killed if it is still there.
fn forward(pid: libc::pid_t, sig: i32) -> u64 {
    // SAFETY: kill of the process group we created.
    unsafe { libc::kill(-pid, sig) };
    now_ns() + INTERRUPT_GRACE.as_nanos() as u64
}

fn drain_pipe(fd: RawFd) {
    // Never read back, so never zeroed: the wait for a run does not pay for it.
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 16384];
    loop {
        // SAFETY: read into a live buffer of buf.len() bytes from a non-blocking pipe; the
        // bytes are discarded, never read as initialised values.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
    }
}
