//! blkwrite: a block writer that replaces `dd ...; sync`, with fio's measurement and dd's
//! simplicity. See [`command`] for the interface and README.md for the records.

mod begin;
pub mod cli;
mod device;
mod direct;
pub mod engine;
mod execute;
mod outcome;
pub mod pattern;
mod setup;
pub mod signature;
mod sysblock;
pub mod target;
pub mod verify;

use measure::Failure;
use measure::writer::{Reporter, Values};
use serde_json::Map;
use std::ffi::OsString;
use std::process::ExitCode;

pub use cli::command;

/// Runs blkwrite with `args` (the program name first).
pub fn run(args: Vec<OsString>) -> Result<ExitCode, Failure> {
    let m = measure::cli::parse(command(), args)?;
    let o = cli::Opts::from(&m)?;
    let env = measure::label::envelope("blkwrite", env!("CARGO_PKG_VERSION"), &m, "blkwrite")?;
    let out = measure::cli::open_output(o.output.as_deref(), measure::cli::DefaultOutput::Stdout)?;
    let mut rep = Reporter::new(env, out);
    measure::cli::install_interrupt_handler()
        .map_err(|e| Failure::io("installing the Ctrl-C handler", &e))?;
    let seed = o.seed.unwrap_or_else(measure::writer::random_u64);
    let mut begin = begin::options_info(&o, seed);
    match setup::setup(&o, seed) {
        Ok((t, plan)) => {
            if m.get_one::<String>("name").is_none() {
                rep.set_name(&setup::default_name(&o, &plan, &t));
            }
            execute::execute(&mut rep, &o, t, plan, seed, begin)
        }
        Err(f) => {
            if m.get_one::<String>("name").is_none() {
                rep.set_name(&format!("write to {}", o.target.display()));
            }
            begin.extend(measure::envfacts::Probe::system().machine());
            let msg = f.to_string();
            rep.begin(begin).map_err(|e| Failure::io("output", &e))?;
            outcome::fail_summary(&mut rep, &msg, Values::new(), Map::new())?;
            Err(f)
        }
    }
}
