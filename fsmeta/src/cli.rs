//! fsmeta's command line: the clap `command()` (the one source for --help, the man page and the
//! completions) and [`Opts`], the checked options it gives.

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use measure::Failure;
use std::path::PathBuf;

const LONG_ABOUT: &str = "\
Measures what a file system does for file metadata: in a private directory of its own made
inside DIR (fsmeta.XXXXXX, mode 0700), it creates N files (open O_CREAT|O_EXCL, SIZE bytes
written, fsync with --fsync, close), then stats them all in a random order, then unlinks them
all in a random order, and times every operation. It replaces bonnie++ -n and fs_mark.

DIR is left as it was found: the private directory and everything in it go at the end, after
Ctrl-C or SIGTERM (checked between operations), and after any error (a full file system,
ENOSPC or EDQUOT; too many open files; a read-only file system), which ends the run with a
summary saying how far it got and exit 2. fsmeta works only inside its own directory, by
names relative to its descriptor (openat, statat, unlinkat), and removes only the names it
created; it never touches a file it did not make.

Records (benchmatrix/1): begin with the options, the private directory, and the file system
and block stack under DIR (as blkwrite reports them); one sample per 1/16 of each phase's
time (their mean is the phase's rate, the matrix cell), so that a cell has a spread, keyed for
the phase: creates_per_s, stats_per_s,
unlinks_per_s; the summary, whose headlines make the run's three rows, NAME: create,
NAME: stat and NAME: unlink, where NAME is --name or \"file metadata in DIR\" (creates_per_s
first, as the headline: creating a file is what the journal, the allocator and the device
beneath decide, while a stat of a file just made is mostly the kernel's caches), with files_count,
creates_per_s, stats_per_s, unlinks_per_s, each phase's time (create_s, stat_s, unlink_s) and
latency (create_latency_min_s, _mean_s, _p50_s, _p90_s, _p99_s, _p99_9_s, _max_s, and the
same for stat_ and unlink_).

Exit status: 0 done; 2 bad options, DIR missing or not writable, or an error during the run
(the summary says how far it got); 130 after Ctrl-C or SIGTERM (summary written).";

const EXAMPLES: &str = "\
EXAMPLES:
  bonnie++ -n 16:0:0:1's create, stat and delete rates, on the file system of /mnt/test:
    fsmeta /mnt/test
  5000 files of 4 KiB each, fsynced before close, spread over 10 subdirectories:
    fsmeta -n 5000 -s 4k --fsync --dirs 10 /mnt/test
  The same random orders in two runs, appended to a results file:
    fsmeta --seed 7 -o results.jsonl /var/tmp";

/// The clap Command of fsmeta.
pub fn command() -> Command {
    let cmd = Command::new("fsmeta")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Create, stat and unlink many files in a private directory; time each operation")
        .long_about(LONG_ABOUT)
        .after_help(EXAMPLES)
        .arg(
            Arg::new("dir")
                .value_name("DIR")
                .required(true)
                .value_parser(value_parser!(PathBuf))
                .help("Directory on the file system to measure; fsmeta works in a private directory it makes there"),
        )
        .arg(
            Arg::new("files")
                .short('n')
                .long("files")
                .value_name("N")
                .default_value("16384")
                .value_parser(files_arg)
                .help("Number of files to create, stat and unlink (fs_mark's -n; bonnie++ -n 16 is 16384)"),
        )
        .arg(
            Arg::new("size")
                .short('s')
                .long("size")
                .value_name("SIZE")
                .default_value("0")
                .value_parser(|s: &str| measure::units::parse_size(s))
                .help("Bytes written into each file, dd sizes: 0, 4k, 1M"),
        )
        .arg(
            Arg::new("dirs")
                .long("dirs")
                .value_name("D")
                .default_value("0")
                .value_parser(value_parser!(u64).range(0..=MAX_DIRS))
                .help("Spread the files over D subdirectories of the private directory, in turn (0: all in it)"),
        )
        .arg(
            Arg::new("fsync")
                .long("fsync")
                .action(ArgAction::SetTrue)
                .help("fsync each file before closing it (bonnie++ -b, fs_mark -S 1)"),
        )
        .arg(
            measure::flags::seed("Seed of the random orders of the stat and unlink phases"),
        )
        .arg(measure::flags::quiet());
    measure::flags::record(cmd)
}

/// `-n`: a whole number of files, 1 to [`MAX_FILES`].
fn files_arg(s: &str) -> Result<u64, String> {
    match s.parse::<u64>() {
        Ok(0) => Err("give 1 or more files".into()),
        Ok(n) if n <= MAX_FILES => Ok(n),
        Ok(_) => Err(format!("give at most {MAX_FILES} files (100 million)")),
        Err(_) => Err("give a whole number of files, such as 16384".into()),
    }
}

/// At most this many files: a run holds a byte and an order entry (4 bytes) per file, so
/// 100 million take half a gigabyte.
pub const MAX_FILES: u64 = 100_000_000;
/// At most this many subdirectories (each is held open during the run).
pub const MAX_DIRS: u64 = 65536;
/// At most this many bytes a file: the run writes N of them.
pub const MAX_SIZE: u64 = 1 << 40;

/// The checked options.
#[derive(Clone, Debug)]
pub struct Opts {
    pub dir: PathBuf,
    pub files: u32,
    pub size: u64,
    pub dirs: u32,
    pub fsync: bool,
    pub seed: Option<u64>,
}

impl Opts {
    /// The options from the parsed flags; a value out of range names the flag and the fix.
    pub fn from(m: &ArgMatches) -> Result<Opts, Failure> {
        let dir = m
            .get_one::<PathBuf>("dir")
            .cloned()
            .ok_or_else(|| Failure::usage("give DIR, the directory to measure in"))?;
        let files = m.get_one::<u64>("files").copied().unwrap_or(16384);
        let size = m.get_one::<u64>("size").copied().unwrap_or(0);
        if size > MAX_SIZE {
            return Err(Failure::usage(format!(
                "--size {size}: at most 1T a file; fsmeta measures metadata, blkwrite large files"
            )));
        }
        let dirs = m.get_one::<u64>("dirs").copied().unwrap_or(0);
        Ok(Opts {
            dir,
            files: u32::try_from(files).unwrap_or(u32::MAX),
            size,
            dirs: u32::try_from(dirs).unwrap_or(u32::MAX),
            fsync: m.get_flag("fsync"),
            seed: m.get_one::<u64>("seed").copied(),
        })
    }
}
