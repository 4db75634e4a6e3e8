//! blkwrite: a block writer that replaces `dd ...; sync`, with fio's measurement and dd's
//! simplicity. See [`command`] for the interface and README.md for the records; [`Tool`]
//! runs it on measure's lifecycle. The crate has three rooms: `blk` (the block layer both
//! tools share), `write` (blkwrite's own parts) and `read` (blkread, the second binary).

pub mod blk;
pub mod read;
pub(crate) mod write;

use clap::{ArgMatches, Command};
use measure::lifecycle::{self, Session};
use measure::{Exit, Failure};
use std::ffi::OsString;

use write::{begin, cli, ddform, execute, setup};

pub use cli::command;

/// Runs blkwrite with `args` (the program name first) through the lifecycle, as the binary
/// does, and says how it ended.
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}

/// blkwrite for measure's lifecycle: its command, its options and its engine.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "blkwrite";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = cli::Opts;

    fn command() -> Command {
        cli::command()
    }

    /// dd's operands (`of=F bs=4M count=4 conv=fsync`) as blkwrite's flags.
    fn args(args: Vec<OsString>) -> Result<Vec<OsString>, Failure> {
        ddform::translate(&cli::command(), args)
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<cli::Opts, Failure> {
        cli::Opts::from(m)
    }

    /// The name until the plan is known (and after a refusal): `write to TARGET`.
    fn name(o: &cli::Opts) -> String {
        format!("write to {}", o.target.display())
    }

    /// The target: records written into it would be overwritten, or overwrite it.
    fn guarded(o: &cli::Opts) -> Vec<std::path::PathBuf> {
        vec![o.target.clone()]
    }

    /// Opens the target and works out the plan, then writes (or verifies). A refusal writes
    /// begin with the options, and the lifecycle the failed summary.
    fn run(o: cli::Opts, s: &mut Session) -> Result<Exit, Failure> {
        let seed = o.seed.unwrap_or_else(measure::flags::fresh_seed);
        let begin = begin::options_info(&o, seed);
        match setup::setup(&o, seed) {
            Ok((t, plan)) => {
                s.set_name(&setup::default_name(&o, &plan, &t));
                execute::execute(s, &o, t, plan, seed, begin)
            }
            Err(f) => {
                s.begin(begin)?;
                Err(f)
            }
        }
    }
}
