//! collate: JSON lines from every environment into one comparison matrix, with the
//! statistics that tell a difference from noise.
//!
//! Reads the records that netpipe, pingrt, blkwrite and timecmd write (any mix of tools and
//! hosts), in one streaming pass, and prints the matrix people used to type by hand: one row
//! per thing measured, one column per environment, the label's `/` levels stacked as merged
//! header rows. See `collate --help` and collate/README.md. [`Tool`] runs it on measure's
//! lifecycle; collate reads records and writes a matrix, so it writes no records itself.

pub mod cli;
pub mod collect;
pub mod dims;
pub mod engine;
pub mod filter;
pub mod kruskal;
pub mod matrix;
pub mod read;
pub mod render;
pub mod repeats;
pub mod runs;
pub mod stats;

use clap::{ArgMatches, Command};
use measure::lifecycle::{self, Session};
use measure::{Exit, Failure};
use std::ffi::OsString;

pub use cli::{Opts, command};

/// Runs collate with `args` (the program name first) through the lifecycle, as the binary
/// does, and says how it ended.
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}

/// collate for measure's lifecycle: its command, its options and its engine.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "collate";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    /// The matrix goes to stdout; there are no records, no begin and no summary.
    const RECORDS: bool = false;
    type Options = Opts;

    fn command() -> Command {
        cli::command()
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<Opts, Failure> {
        Opts::from_matches(m)
    }

    /// No records carry a name of collate's.
    fn name(_o: &Opts) -> String {
        String::new()
    }

    fn run(o: Opts, _s: &mut Session) -> Result<Exit, Failure> {
        engine::run(o)
    }
}
