//! The flags blkwrite and blkread share, one builder each (id, short and long name, value
//! name, parser), with each tool's own help text, and the readers of their values.

use crate::blk::target::Direct;
use clap::{Arg, ArgAction, ArgMatches, value_parser};
use measure::Failure;
use std::path::PathBuf;

/// A flag whose value is a size, dd style (`4k` = 4096, `4kB` = 4000).
pub(crate) fn size_arg(id: &'static str) -> Arg {
    Arg::new(id).value_parser(|s: &str| measure::units::parse_size(s))
}

/// TARGET, the file or block device.
pub(crate) fn target(help: &'static str) -> Arg {
    Arg::new("target")
        .value_name("TARGET")
        .required(true)
        .value_parser(value_parser!(PathBuf))
        .help(help)
}

/// -b/--bs (alias --block-size): bytes per operation.
pub(crate) fn bs(help: &'static str) -> Arg {
    size_arg("bs")
        .short('b')
        .long("bs")
        .alias("block-size")
        .value_name("SIZE")
        .help(help)
}

/// -s/--size: bytes of the target to work on.
pub(crate) fn size(help: &'static str) -> Arg {
    size_arg("size")
        .short('s')
        .long("size")
        .value_name("SIZE")
        .help(help)
}

/// -t/--time: a duration with unit, a bare number being seconds.
pub(crate) fn time(help: &'static str) -> Arg {
    Arg::new("time")
        .short('t')
        .long("time")
        .value_name("DURATION")
        .value_parser(|s: &str| measure::units::parse_seconds(s))
        .help(help)
}

/// --random: random block-aligned offsets.
pub(crate) fn random(help: &'static str) -> Arg {
    Arg::new("random")
        .long("random")
        .action(ArgAction::SetTrue)
        .help(help)
}

/// --iodepth N: operations in flight, 1 to 4096 (1 is pwrite/pread, more io_uring).
pub(crate) fn iodepth(help: &'static str) -> Arg {
    Arg::new("iodepth")
        .long("iodepth")
        .value_name("N")
        .default_value("1")
        .value_parser(value_parser!(u32).range(1..=4096))
        .help(help)
}

/// --direct[=on|try|off]: O_DIRECT.
pub(crate) fn direct(help: &'static str) -> Arg {
    Arg::new("direct")
        .long("direct")
        .value_name("WHEN")
        .num_args(0..=1)
        .require_equals(true)
        .default_missing_value("on")
        .value_parser(["on", "try", "off"])
        .help(help)
}

/// --keep: keep the file the tool made.
pub(crate) fn keep(help: &'static str) -> Arg {
    Arg::new("keep")
        .long("keep")
        .action(ArgAction::SetTrue)
        .help(help)
}

/// The --direct given (off without it).
pub(crate) fn direct_of(m: &ArgMatches) -> Direct {
    match m.get_one::<String>("direct").map(String::as_str) {
        Some("on") => Direct::On,
        Some("try") => Direct::Try,
        _ => Direct::Off,
    }
}

/// The TARGET given.
pub(crate) fn target_of(m: &ArgMatches) -> Result<PathBuf, Failure> {
    m.get_one::<PathBuf>("target")
        .cloned()
        .ok_or_else(|| Failure::usage("TARGET is missing"))
}
