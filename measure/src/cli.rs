//! CLI plumbing every tool shares: exit codes, the error type, broken pipes, Ctrl-C, outputs.

use std::ffi::OsString;
use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

/// Exit codes of DESIGN.md.
pub mod exit {
    /// The run worked (also when the stdout reader went away).
    pub const OK: u8 = 0;
    /// The run worked but measured a failure (no reply, no records).
    pub const MEASURED_FAILURE: u8 = 1;
    /// The tool could not do the job: usage, I/O, permission.
    pub const CANNOT: u8 = 2;
    /// Stopped by Ctrl-C (SIGINT) after writing the summary.
    pub const INTERRUPTED: u8 = 130;
}

/// An error that carries its exit code; printed by [`main`] as `tool: context: cause`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub code: u8,
    /// `context: cause`, or `None` when there is nothing to print (already printed, or a
    /// broken pipe on stdout, which ends a tool quietly).
    pub message: Option<String>,
}

impl Failure {
    /// A failure with exit code `code`, printed as `tool: context: cause`.
    pub fn new(code: u8, context: impl fmt::Display, cause: impl fmt::Display) -> Self {
        Failure {
            code,
            message: Some(format!("{context}: {cause}")),
        }
    }

    /// A usage error (exit 2) with a message that says what was wrong and how to fix it.
    pub fn usage(msg: impl fmt::Display) -> Self {
        Failure {
            code: exit::CANNOT,
            message: Some(msg.to_string()),
        }
    }

    /// An I/O error in `context`; a broken pipe becomes a quiet exit 0.
    pub fn io(context: impl fmt::Display, e: &io::Error) -> Self {
        if e.kind() == io::ErrorKind::BrokenPipe {
            return Failure::quiet(exit::OK);
        }
        Failure::new(exit::CANNOT, context, e)
    }

    /// Ends with `code` and prints nothing.
    pub fn quiet(code: u8) -> Self {
        Failure {
            code,
            message: None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.message {
            Some(m) => f.write_str(m),
            None => write!(f, "exit {}", self.code),
        }
    }
}

impl std::error::Error for Failure {}

/// Runs a tool's `run` with the process arguments and turns its result into the exit code,
/// printing a failure as `tool: context: cause` on stderr.
pub fn main(tool: &str, run: fn(Vec<OsString>) -> Result<ExitCode, Failure>) -> ExitCode {
    match run(std::env::args_os().collect()) {
        Ok(code) => code,
        Err(f) => ExitCode::from(report(tool, &f)),
    }
}

/// Says a failure's message (if it has one) on stderr; returns its exit code.
fn report(tool: &str, f: &Failure) -> u8 {
    if let Some(m) = &f.message {
        let _ = writeln!(io::stderr(), "{tool}: {m}");
    }
    f.code
}

/// [`main`] for a binary that starts at the C entry point (`#![no_main]` and an
/// `extern "C" fn main`), without std's start-up: no read of /proc/self/maps for the main
/// thread's stack guard and no signal stack, which a tool that is itself timed as a whole
/// (timecmd against time(1)) should not pay for. As std would, it ignores SIGPIPE, so a
/// reader that goes away still means a quiet exit 0, and flushes stdout at the end.
pub fn c_main(tool: &str, run: fn(Vec<OsString>) -> Result<u8, Failure>) -> libc::c_int {
    // SAFETY: sets SIGPIPE's disposition to ignore before any thread exists; no handler.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let code = run(std::env::args_os().collect()).unwrap_or_else(|f| report(tool, &f));
    let _ = io::stdout().flush();
    libc::c_int::from(code)
}

/// Parses arguments with clap; `--help` and `--version` print and end with exit 0, a usage
/// error prints clap's message (naming the flag and the fix) and ends with exit 2.
pub fn parse(cmd: clap::Command, args: Vec<OsString>) -> Result<clap::ArgMatches, Failure> {
    cmd.try_get_matches_from(args).map_err(|e| {
        let _ = e.print();
        let code = if e.use_stderr() {
            exit::CANNOT
        } else {
            exit::OK
        };
        Failure::quiet(code)
    })
}

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    SIGNAL.store(sig, Ordering::SeqCst);
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Installs handlers for SIGINT and SIGTERM that only set a flag, without SA_RESTART, so a
/// blocking call returns EINTR and the tool can write its summary and exit 130.
pub fn install_interrupt_handler() -> io::Result<()> {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction with a zeroed struct, an empty mask and a handler that only
        // stores to atomics, which is async-signal-safe.
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

/// Whether SIGINT or SIGTERM arrived since the handler was installed.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The signal that interrupted the tool, if any.
pub fn interrupt_signal() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Where records go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultOutput {
    Stdout,
    Stderr,
}

/// Opens the record output: `-o FILE` appends to FILE (JSON lines stand alone, so appending
/// keeps every earlier line and its meaning), `-o -` is stdout, no `-o` is `default`.
pub fn open_output(
    path: Option<&str>,
    default: DefaultOutput,
) -> Result<Box<dyn Write + Send>, Failure> {
    match path {
        Some("-") => Ok(Box::new(io::stdout())),
        Some(p) => {
            let f = OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .map_err(|e| Failure::new(exit::CANNOT, format!("-o {p}"), e))?;
            Ok(Box::new(f))
        }
        None => match default {
            DefaultOutput::Stdout => Ok(Box::new(io::stdout())),
            DefaultOutput::Stderr => Ok(Box::new(io::stderr())),
        },
    }
}

/// Whether file descriptor `fd` is a terminal (for progress lines on stderr).
pub fn is_terminal(fd: i32) -> bool {
    // SAFETY: isatty only inspects the descriptor number.
    unsafe { libc::isatty(fd) == 1 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broken_pipe_is_quiet_success() {
        let f = Failure::io("stdout", &io::Error::from(io::ErrorKind::BrokenPipe));
        assert_eq!(f, Failure::quiet(exit::OK));
        let f = Failure::io("stdout", &io::Error::from(io::ErrorKind::PermissionDenied));
        assert_eq!(f.code, exit::CANNOT);
        assert!(f.to_string().starts_with("stdout: "));
    }

    #[test]
    fn usage_errors_exit_2() {
        let cmd = clap::Command::new("t").arg(clap::Arg::new("x").long("x"));
        let e = parse(cmd.clone(), vec!["t".into(), "--nope".into()]).unwrap_err();
        assert_eq!(e.code, exit::CANNOT);
        let m = parse(cmd, vec!["t".into(), "--x".into(), "1".into()]).unwrap();
        assert_eq!(m.get_one::<String>("x").map(String::as_str), Some("1"));
    }

    #[test]
    fn sigint_sets_the_flag_instead_of_killing() {
        install_interrupt_handler().unwrap();
        assert!(!interrupted() || interrupt_signal().is_some());
        // SAFETY: raise delivers SIGINT to this thread; the handler only stores atomics.
        unsafe { libc::raise(libc::SIGINT) };
        assert!(interrupted());
        assert_eq!(interrupt_signal(), Some(libc::SIGINT));
    }

    #[test]
    fn output_appends() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        std::fs::write(&p, "old\n").unwrap();
        let mut w = open_output(p.to_str(), DefaultOutput::Stdout).unwrap();
        w.write_all(b"new\n").unwrap();
        drop(w);
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\nnew\n");
        let e = open_output(Some("/nonexistent/dir/x"), DefaultOutput::Stdout)
            .err()
            .unwrap();
        assert!(e.to_string().contains("-o /nonexistent/dir/x"));
    }
}
