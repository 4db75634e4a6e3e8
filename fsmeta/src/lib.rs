//! fsmeta: file metadata operations per second (create, stat, unlink), as bonnie++ -n and
//! fs_mark measure them, in a private directory it removes on every path. See [`command`] for
//! the interface and README.md for the records; [`Tool`] runs it on measure's lifecycle.

pub(crate) mod cli;
pub(crate) mod order;
pub(crate) mod phases;
mod report;
pub(crate) mod scratch;
pub(crate) mod slices;

use clap::{ArgMatches, Command};
use measure::lifecycle::{self, Session};
use measure::{Exit, Failure};
use phases::{Job, Phase, Stop};
use scratch::Scratch;
use std::ffi::OsString;

pub use cli::command;

/// Runs fsmeta with `args` (the program name first) through the lifecycle, as the binary
/// does, and says how it ended.
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}

/// fsmeta for measure's lifecycle: its command, its options and its engine.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "fsmeta";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = cli::Opts;

    fn command() -> Command {
        cli::command()
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<cli::Opts, Failure> {
        cli::Opts::from(m)
    }

    /// The run's name (`--name` replaces it): `file metadata in DIR`; its rows are
    /// "NAME: create", "NAME: stat" and "NAME: unlink", the summary's headlines.
    fn name(o: &cli::Opts) -> String {
        format!("file metadata in {}", o.dir.display())
    }

    /// Makes the private directory, runs the three phases, removes it again. A refusal (DIR
    /// missing, not a directory, not writable) writes begin with the options, and the
    /// lifecycle the failed summary.
    fn run(o: cli::Opts, s: &mut Session) -> Result<Exit, Failure> {
        let seed = o.seed.unwrap_or_else(measure::flags::fresh_seed);
        let mut begin = report::begin_info(&o, seed);
        let mut sc = match Scratch::make(&o.dir, o.files, o.dirs) {
            Ok(sc) => sc,
            Err(f) => {
                s.begin(begin)?;
                return Err(f);
            }
        };
        begin.insert(
            "private_dir".into(),
            serde_json::json!(sc.path.display().to_string()),
        );
        s.begin(begin)?;
        let job = Job {
            o: &o,
            data: phases::data(o.size),
        };
        let mut done = Vec::new();
        for (k, phase) in Phase::ALL.into_iter().enumerate() {
            // The orders are made before the phase's clock starts.
            let order = (phase != Phase::Create).then(|| order::shuffled(o.files, seed, k as u64));
            let (d, stop) = phases::run_phase(s, &mut sc, &job, phase, order.as_deref())?;
            done.push(d);
            if !matches!(stop, Stop::Done) {
                s.human().clear();
                return report::finish(s, &o, &mut sc, &done, stop);
            }
        }
        s.human().clear();
        report::finish(s, &o, &mut sc, &done, Stop::Done)
    }
}
