//! The pieces of the lifecycle that tools not yet on [`crate::lifecycle`] call directly:
//! exit codes as numbers, a `main` wrapper, the record output and the interrupt flag.

use crate::exit::Exit;
pub use crate::exit::Failure;
use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

/// Exit codes of DESIGN.md as numbers ([`Exit`] is the type to use).
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
    f.code.code()
}

/// [`main`] for a binary that starts at the C entry point; ignores SIGPIPE as std would.
pub fn c_main(tool: &str, run: fn(Vec<OsString>) -> Result<u8, Failure>) -> libc::c_int {
    // SAFETY: sets SIGPIPE's disposition to ignore before any thread exists; no handler.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let code = run(std::env::args_os().collect()).unwrap_or_else(|f| report(tool, &f));
    let _ = io::stdout().flush();
    libc::c_int::from(code)
}

/// See [`crate::lifecycle::parse`].
pub fn parse(cmd: clap::Command, args: Vec<OsString>) -> Result<clap::ArgMatches, Failure> {
    crate::lifecycle::parse(cmd, args)
}

/// See [`crate::signal::install`].
pub fn install_interrupt_handler() -> io::Result<()> {
    crate::signal::install()
}

/// See [`crate::signal::interrupted`].
pub fn interrupted() -> bool {
    crate::signal::interrupted()
}

/// See [`crate::signal::interrupt_signal`].
pub fn interrupt_signal() -> Option<i32> {
    crate::signal::interrupt_signal()
}

/// Where records go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefaultOutput {
    Stdout,
    Stderr,
}

/// Opens the record output: `-o FILE` appends to FILE, `-o -` is stdout, no `-o` is `default`.
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
                .map_err(|e| Failure::new(Exit::Cannot, format!("-o {p}"), e))?;
            Ok(Box::new(f))
        }
        None => match default {
            DefaultOutput::Stdout => Ok(Box::new(io::stdout())),
            DefaultOutput::Stderr => Ok(Box::new(io::stderr())),
        },
    }
}

/// Whether file descriptor 0, 1 or 2 is a terminal.
pub fn is_terminal(fd: i32) -> bool {
    match fd {
        0 => io::stdin().is_terminal(),
        1 => io::stdout().is_terminal(),
        _ => io::stderr().is_terminal(),
    }
}
