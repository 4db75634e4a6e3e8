//! The lifecycle of a tool that reads records and writes none of its own (collate, which
//! prints a matrix): the same command line and exit codes as every tool, and nothing of a
//! measuring run's (no session, no begin, no summary to finish).

use crate::exit::{Exit, Failure};
use clap::{ArgMatches, Command};
use std::ffi::OsString;
use std::io::Write;

/// What a reader of records supplies: its command, its options and its engine.
pub trait Reader {
    /// The tool's name, as in error messages.
    const NAME: &'static str;

    /// The typed options the engine runs with.
    type Options;

    /// The command line: the one source for --help, the man page and the completions.
    fn command() -> Command;

    /// The options from the parsed flags; a usage error is exit 2.
    fn options(m: &ArgMatches) -> Result<Self::Options, Failure>;

    /// Reads and writes what the tool writes; says how it ended.
    fn run(o: Self::Options) -> Result<Exit, Failure>;
}

/// Runs reader `R` with the process's arguments and ends with its status.
pub fn main<R: Reader>() -> std::process::ExitCode {
    run::<R>(std::env::args_os().collect()).into()
}

/// Runs reader `R` with `args` (the program name first); prints a failure as `tool: message`.
/// With no summary to finish, Ctrl-C keeps the action the process started with: it ends the
/// tool at once, unless the parent left it ignored.
pub fn run<R: Reader>(args: Vec<OsString>) -> Exit {
    let go = || -> Result<Exit, Failure> {
        let m = crate::lifecycle::parse(R::command(), args)?;
        let opts = R::options(&m)?;
        crate::signal::default_action()
            .map_err(|e| Failure::new(Exit::Cannot, "setting up Ctrl-C", e))?;
        R::run(opts)
    };
    match go() {
        Ok(code) => code,
        Err(f) => {
            if let Some(m) = &f.message {
                let _ = writeln!(std::io::stderr(), "{}: {m}", R::NAME);
            }
            f.code
        }
    }
}
