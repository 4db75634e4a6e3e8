//! blkread's command line: the clap Command (one source for --help and the man page) and the
//! options it parses into.

use crate::blk::flags;
use crate::blk::target::Direct;
use clap::{Arg, ArgAction, ArgMatches, Command};
use measure::Failure;
use std::path::PathBuf;
use std::time::Duration;

const LONG_ABOUT: &str = "\
blkread reads a file or a block device, sequentially or at random aligned offsets, one read \
at a time (pread) or many in flight (io_uring), buffered or O_DIRECT, and reports the \
throughput, the reads per second and per-read latency percentiles from a histogram as \
benchmatrix JSON lines. It shares blkwrite's engine: the same ring, buffers, histogram and \
target facts.

It never writes: the target is opened read-only, so a mounted device may be read. Honest \
figures: a hole (a sparse or never-written region) reads back zeros without touching the \
device, so a file whose range has holes is refused. --create SIZE makes a scratch file \
itself (random data, fsynced, its pages dropped from the page cache), reads it, and removes \
it at the end unless --keep. For buffered reads, begin says how much of the range was in \
the page cache (mincore); --drop-cache writes that file's dirty pages out (fdatasync) and \
evicts its pages first (never the machine-wide drop_caches), and a run where more than 1% of \
the range stays cached (tmpfs keeps its files in memory) is partial, exit 1, saying how much. \
With --time, such a read stops at the end of its first pass (the summary's one_pass says \
why): a second pass would read the page cache the first one filled.

Records: begin (options, target, file system and block stack, logical block size, \
rotational, scheduler, cache state), interval (each -i), one sample, summary (read_bytes, \
read_count, latency percentiles). With --random the one run makes four rows of the matrix, \
its headlines: reads_per_s (\"NAME: reads per second\"), latency_p50_s, latency_p99_s and \
latency_p99_9_s (\"NAME: latency p99\"); sequential reads headline throughput_bytes_per_s. They go to stdout when it is a pipe or a file (or with --json), and to -o \
FILE, appended; on a terminal without -o a progress line and a summary to read instead. \
Exit: 0 ok, 1 nothing was read (--time ended before the first read), 2 could not do the job \
(usage, a missing target, holes, EIO), 130 Ctrl-C (summary written, scratch file removed).";

const EXAMPLES: &str = "\
EXAMPLES:
  Read a file sequentially in 1 MiB reads, bypassing the page cache (dd iflag=direct):
    blkread --direct /mnt/test/file
  4 KiB random O_DIRECT reads one at a time for 10 s (fio --rw=randread --ioengine=psync):
    blkread --direct --random -t 10s /mnt/test/file
  The same with 32 in flight (fio --ioengine=io_uring --iodepth=32):
    blkread --direct --random --iodepth 32 -t 10s /mnt/test/file
  A scratch file of 1 GiB made, read and removed:
    blkread --direct --create 1G /mnt/test/scratch
  A mounted device, read only (nothing is written):
    blkread --direct -s 4G /dev/sda
  Buffered reads of a file after evicting its cached pages:
    blkread --drop-cache /var/tmp/file";

/// The clap Command of blkread.
pub fn command() -> Command {
    let cmd = Command::new("blkread")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Read a file or block device, sequentially or at random; time every read")
        .long_about(LONG_ABOUT)
        .after_help(EXAMPLES)
        .arg(flags::target(
            "File or block device to read (opened read-only); with --create, the scratch file to make",
        ))
        .arg(flags::bs(
            "Bytes per read (default 1M sequential, 4k with --random)",
        ))
        .arg(flags::size(
            "Bytes of the target to read, from its start (default: all of it)",
        ))
        .arg(flags::time(
            "Read for DURATION (10s, 2m; a bare number is seconds), starting over at the end of --size (fio --time_based); buffered reads after --drop-cache stop at the end of the first pass instead (a second would read the page cache)",
        ))
        .arg(flags::random(
            "Uniform random block-aligned offsets, every block once per pass (fio --rw=randread)",
        ))
        .arg(
            measure::flags::seed("Seed for the random offsets"),
        )
        .arg(flags::iodepth(
            "Reads in flight: 1 uses pread(2) (fio psync); more uses io_uring",
        ))
        .arg(flags::direct(
            "O_DIRECT, bypassing the page cache; refused where it would not be honoured (tmpfs) unless --direct=try, which runs and reports direct_effective: false",
        ))
        .arg(
            measure::flags::interval()
                .default_value("1s")
                .help("Write an interval record (and the progress line) this often"),
        )
        .arg(
            flags::size_arg("create")
                .long("create")
                .value_name("SIZE")
                .help("Make TARGET first: SIZE bytes of random data, fsynced, dropped from the cache; removed at the end unless --keep"),
        )
        .arg(flags::keep("Keep the file --create made").requires("create"))
        .arg(
            Arg::new("force")
                .long("force")
                .action(ArgAction::SetTrue)
                .requires("create")
                .help("Make the --create file even where the file system reports less free space than SIZE"),
        )
        .arg(
            Arg::new("drop_cache")
                .long("drop-cache")
                .action(ArgAction::SetTrue)
                .help("Write out and evict the target's own pages from the page cache before reading (fdatasync, posix_fadvise DONTNEED); partial if over 1% stays cached"),
        )
        .arg(measure::flags::quiet());
    measure::flags::record(cmd)
}

/// Parsed options.
#[derive(Clone, Debug)]
pub struct Opts {
    pub target: PathBuf,
    pub bs: u64,
    pub size: Option<u64>,
    pub time: Option<Duration>,
    pub random: bool,
    pub seed: Option<u64>,
    pub iodepth: u32,
    pub direct: Direct,
    pub interval: Duration,
    pub create: Option<u64>,
    pub keep: bool,
    /// --create even beyond the free space statvfs reports.
    pub force: bool,
    pub drop_cache: bool,
}

impl Opts {
    pub fn from(m: &ArgMatches) -> Result<Opts, Failure> {
        let random = m.get_flag("random");
        let bs = m
            .get_one::<u64>("bs")
            .copied()
            .unwrap_or(if random { 4096 } else { 1 << 20 });
        if bs == 0 {
            return Err(Failure::usage(
                "--bs 0: a read needs at least one byte, e.g. --bs 4k",
            ));
        }
        if bs > 1 << 30 {
            return Err(Failure::usage(
                "--bs is larger than 1 GiB, more than one read is worth: use --bs 1G or less",
            ));
        }
        let positive = |id: &str, what: &str| -> Result<Option<Duration>, Failure> {
            let d = m.get_one::<Duration>(id).copied();
            if d.is_some_and(|d| d.is_zero()) {
                return Err(Failure::usage(format!(
                    "--{id} 0 {what}: give a positive duration such as 10s or 500ms"
                )));
            }
            Ok(d)
        };
        let zero =
            |id: &str| Failure::usage(format!("--{id} 0: nothing to read; give e.g. --{id} 1G"));
        let size = m.get_one::<u64>("size").copied();
        if size == Some(0) {
            return Err(zero("size"));
        }
        let create = m.get_one::<u64>("create").copied();
        if create == Some(0) {
            return Err(zero("create"));
        }
        Ok(Opts {
            target: flags::target_of(m)?,
            bs,
            size,
            time: positive("time", "leaves no time to read")?,
            random,
            seed: m.get_one::<u64>("seed").copied(),
            iodepth: m.get_one::<u32>("iodepth").copied().unwrap_or(1),
            direct: flags::direct_of(m),
            interval: positive("interval", "would write records without end")?
                .unwrap_or(Duration::from_secs(1)),
            create,
            keep: m.get_flag("keep"),
            force: m.get_flag("force"),
            drop_cache: m.get_flag("drop_cache"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> Result<Opts, Failure> {
        let m = command()
            .try_get_matches_from(args)
            .map_err(Failure::usage)?;
        Opts::from(&m)
    }

    #[test]
    fn block_size_follows_the_pattern() {
        command().debug_assert();
        assert_eq!(opts(&["blkread", "f"]).unwrap().bs, 1 << 20);
        assert_eq!(opts(&["blkread", "--random", "f"]).unwrap().bs, 4096);
        assert_eq!(
            opts(&["blkread", "--random", "-b", "64k", "f"]).unwrap().bs,
            65536
        );
    }

    #[test]
    fn zero_sizes_and_durations_are_refused_by_name() {
        for (args, flag) in [
            (&["blkread", "-s", "0", "f"][..], "--size"),
            (&["blkread", "-b", "0", "f"][..], "--bs"),
            (&["blkread", "-t", "0", "f"][..], "--time"),
            (&["blkread", "-i", "0", "f"][..], "--interval"),
            (&["blkread", "--create", "0", "f"][..], "--create"),
        ] {
            let e = opts(args).unwrap_err().to_string();
            assert!(e.contains(flag), "{args:?}: {e}");
        }
    }
}
