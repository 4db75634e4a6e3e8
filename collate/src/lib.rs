//! collate: JSON lines from every environment into one comparison matrix, with the
//! statistics that tell a difference from noise.
//!
//! Reads the records that netpipe, pingrt, blkwrite and timecmd write (any mix of tools and
//! hosts), in one streaming pass, and prints the matrix people used to type by hand: one row
//! per thing measured, one column per environment, the label's `/` levels stacked as merged
//! header rows. See `collate --help` and collate/README.md. [`Tool`] runs it as measure's
//! reader of records (`measure::reading`): it writes a matrix and no records of its own.

pub(crate) mod batch;
pub(crate) mod bootstrap;
pub(crate) mod busy;
pub(crate) mod changepoint;
pub(crate) mod cli;
pub mod collect;
pub mod dims;
pub(crate) mod drift;
pub(crate) mod engine;
pub(crate) mod escape;
pub(crate) mod facts;
pub(crate) mod fastmap;
pub mod filter;
pub(crate) mod gather;
pub(crate) mod history;
pub(crate) mod kruskal;
pub mod matrix;
pub(crate) mod modes;
pub mod read;
pub mod render;
pub(crate) mod repeats;
pub(crate) mod runs;
pub(crate) mod shape;
pub mod stats;
pub(crate) mod times;

use clap::{ArgMatches, Command};
use measure::reading::{self, Reader};
use measure::{Exit, Failure};
use std::ffi::OsString;

pub use cli::{Opts, command};

/// Runs collate with `args` (the program name first), as the binary does, and says how it
/// ended.
pub fn run(args: Vec<OsString>) -> Exit {
    reading::run::<Tool>(args)
}

/// collate as measure's reader of records: its command, its options and its engine.
#[derive(Debug)]
pub struct Tool;

impl Reader for Tool {
    const NAME: &'static str = "collate";
    type Options = Opts;

    fn command() -> Command {
        cli::command()
    }

    fn options(m: &ArgMatches) -> Result<Opts, Failure> {
        Opts::from_matches(m)
    }

    fn run(o: Opts) -> Result<Exit, Failure> {
        engine::run(o)
    }
}
