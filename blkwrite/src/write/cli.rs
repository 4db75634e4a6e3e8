//! The command line: the clap Command (one source for --help and the man page) and the
//! options it parses into.

use crate::blk::engine::{Engine, Flush};
use crate::blk::flags;
use crate::blk::pattern::Pattern;
use crate::blk::target::Direct;
use crate::write::ddform::DdForm;
use clap::builder::PossibleValue;
use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use measure::Failure;
use std::path::PathBuf;
use std::time::Duration;

const LONG_ABOUT: &str = "\
blkwrite writes exactly what it is told to a file or a block device, the way it is told \
(buffered, O_DIRECT, O_DSYNC, with fsync or fdatasync at the end, every N writes or never; \
sequential or random offsets; one write at a time or many in flight through io_uring), and \
reports the write phase, the flush and the total separately as benchmatrix JSON lines, with \
per-write latency percentiles from a histogram.

It replaces `time bash -c 'dd if=/dev/zero of=testfile bs=512M count=4; sync'`, which mixes \
page-cache speed, a global sync of every dirty page on the machine, and the device.

Safety: it creates a new file by default (removed at the end unless --keep, and only while \
its name still holds the file it made), refuses a new file larger than the free space its \
file system reports (statvfs) without --force, and refuses an existing file without --force, a block device without --force-device, and a symlink to a \
missing file (dd would create the link's target; blkwrite does not follow a link to create). It refuses, even \
then, a device that is mounted, in use by LVM, device-mapper or md, holds partitions, or holds \
any signature libblkid knows (file systems, swap, LVM2, LUKS, RAID, partition tables: it asks \
wipefs --no-act, and a built-in list where wipefs is missing; begin's signature_probe says which).

Records: begin (options, target, alignment, file system and block stack, logical block size, \
rotational), interval (each second), sample (the whole write; headline \
throughput_bytes_per_s), summary (the same figures plus the read-back check). They go to \
stdout when it is a pipe or a file (or with --json), and to -o FILE, appended. On a terminal \
without -o there is no JSON: a progress line on stderr while writing (as dd status=progress) \
and a summary to read (bytes written, time, throughput, the write and flush phases, latency \
percentiles). Exit: 0 ok, 1 --verify found bad blocks or nothing was written (--time ended \
before the first write), 2 could not do the job (usage, \
refusal, ENOSPC, EIO), 130 Ctrl-C.";

const EXAMPLES: &str = "\
DD'S OPERANDS:
  blkwrite [OPTIONS] of=FILE [if=/dev/zero|/dev/urandom] [bs=SIZE] count=N [seek=N] \
[oflag=direct,dsync,sync] [conv=fsync|fdatasync,notrunc,excl] [status=none|noxfer|progress]
  runs as dd would (bs= 512 by default, no flush without conv=fsync, the file kept, an existing \
one overwritten and truncated unless conv=notrunc) and prints dd's three closing lines on \
stderr; the records go where they always go. An if= that is a real file, iflag=, skip= and \
other operands are refused (exit 2), and so is a flag that says the same as an operand (-b with bs=).

EXAMPLES:
  Replace `dd if=/dev/zero of=testfile bs=512M count=4; sync`:
    blkwrite -b 512M -c 4 testfile
  The same in dd's words (no flush, as dd; the file kept):
    blkwrite if=/dev/zero of=testfile bs=512M count=4
  Sequential O_DIRECT, 2 GiB in 4 MiB writes, fsync at the end (dd oflag=direct conv=fsync):
    blkwrite --direct -b 4M -s 2G /mnt/test/file
  4 KiB random O_DIRECT writes, 32 in flight (fio --rw=randwrite --iodepth=32):
    blkwrite --direct --random -b 4k -s 256M --iodepth 32 /mnt/test/file
  Every write durable (fio --sync=dsync), for 10 seconds at most:
    blkwrite --dsync -b 4k -s 64M --time 10s file
  A whole logical volume (destroys it), checked afterwards:
    blkwrite --force-device --direct -b 1M --verify /dev/vg/scratch
  Check a file written before with --keep --seed 7:
    blkwrite --verify-only --seed 7 -b 1M -s 1G file";

/// The clap Command of blkwrite.
pub fn command() -> Command {
    let cmd = Command::new("blkwrite")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Write a file or block device the way you say; time the writes, the flush and the total")
        .long_about(LONG_ABOUT)
        .after_help(EXAMPLES)
        .arg(flags::target(
            "File to create (or overwrite with --force) or block device (with --force-device)",
        ))
        .arg(
            flags::size("Bytes to write, dd sizes: 512M, 2G, 1000000 (default for a block device: all of it)")
                .conflicts_with("count"),
        )
        .arg(
            measure::flags::count()
                .value_parser(value_parser!(u64).range(1..))
                .help("Number of --bs writes (dd's count=)"),
        )
        .arg(
            flags::bs("Bytes per write (dd's bs=); the last write of an odd --size is shorter")
                .default_value("1M"),
        )
        .arg(
            flags::size_arg("offset")
                .long("offset")
                .value_name("SIZE")
                .help("Start writing at this byte of the target (dd's seek= times bs=); --size counts from there"),
        )
        .arg(flags::direct(
            "O_DIRECT, bypassing the page cache; refused where it would not be honoured (tmpfs, checksummed btrfs) unless --direct=try, which runs and reports direct_effective: false",
        ))
        .arg(
            Arg::new("flush")
                .long("flush")
                .value_name("WHEN")
                .default_value("end")
                .help("fsync: end (once after the last write, dd conv=fsync), every=N (after every N writes and at the end), none"),
        )
        .arg(
            Arg::new("fdatasync")
                .long("fdatasync")
                .action(ArgAction::SetTrue)
                .help("Flush with fdatasync instead of fsync (dd conv=fdatasync)"),
        )
        .arg(
            Arg::new("dsync")
                .long("dsync")
                .action(ArgAction::SetTrue)
                .help("Open with O_DSYNC: every write durable before it returns (dd oflag=dsync)"),
        )
        .arg(
            Arg::new("pattern")
                .long("pattern")
                .value_name("DATA")
                .default_value("random")
                .value_parser([
                    PossibleValue::new("random"),
                    PossibleValue::new("zero").alias("zeros"),
                ])
                .help("Data written: random (generated before timing; zeros flatter compressing and deduplicating storage) or zero"),
        )
        .arg(flags::random(
            "Random offsets within --size, each block written once (fio --rw=randwrite)",
        ))
        .arg(
            Arg::new("fallocate")
                .long("fallocate")
                .value_name("WHEN")
                .default_value("auto")
                .value_parser(["auto", "on", "off"])
                .help("Preallocate a new file with fallocate(2) before timing, as fio does: auto = on with --random (else every random write into a hole also times the file system's allocator), off when sequential (as dd)"),
        )
        .arg(
            measure::flags::seed("Seed for the random data and offsets"),
        )
        .arg(flags::iodepth(
            "Writes in flight: 1 uses pwrite(2) (fio psync); more uses io_uring",
        ))
        .arg(flags::time(
            "Stop writing after DURATION (250ms, 10s, 2m; a bare number is seconds; not 0) even if --size is not reached",
        ))
        .arg(
            Arg::new("verify")
                .long("verify")
                .action(ArgAction::SetTrue)
                .help("After the flush, read everything written back and check it"),
        )
        .arg(
            Arg::new("verify_only")
                .long("verify-only")
                .action(ArgAction::SetTrue)
                .conflicts_with_all(["verify", "time"])
                .help("Write nothing: check a target written before with the same --seed, --bs, --size, --pattern (one shorter than --size is checked as far as it goes, and fails)"),
        )
        .arg(flags::keep(
            "Keep the file blkwrite created (it is removed at the end by default)",
        ))
        .arg(
            Arg::new("force")
                .long("force")
                .action(ArgAction::SetTrue)
                .help("Overwrite an existing regular file in place (it is not truncated, and kept); make a new one even where the file system reports less free space than --size"),
        )
        .arg(
            Arg::new("force_device")
                .long("force-device")
                .action(ArgAction::SetTrue)
                .help("Write a block device (never one mounted, in use, or holding a signature)"),
        )
        .arg(measure::flags::quiet())
        .arg(
            Arg::new("dd_form")
                .long("dd-form")
                .hide(true)
                .value_parser(|s: &str| {
                    DdForm::parse(s).ok_or_else(|| "written by blkwrite from dd's operands".to_string())
                }),
        );
    measure::flags::record(cmd)
}

/// Parsed options.
#[derive(Clone, Debug)]
pub struct Opts {
    pub target: PathBuf,
    pub size: Option<u64>,
    pub count: Option<u64>,
    /// Where the first write goes (--offset, dd's seek=).
    pub offset: u64,
    /// Given in dd's form: dd's closing lines, and an existing file overwritten as dd does.
    pub dd: Option<DdForm>,
    pub bs: u64,
    pub direct: Direct,
    pub flush: Flush,
    pub flush_text: String,
    pub fdatasync: bool,
    pub dsync: bool,
    pub pattern: Pattern,
    pub random: bool,
    pub fallocate: bool,
    pub seed: Option<u64>,
    pub iodepth: u32,
    pub engine: Engine,
    pub time: Option<Duration>,
    pub verify: bool,
    pub verify_only: bool,
    pub keep: bool,
    pub force: bool,
    pub force_device: bool,
}

fn parse_flush(s: &str) -> Result<Flush, Failure> {
    match s {
        "end" => Ok(Flush::End),
        "none" => Ok(Flush::None),
        _ => {
            let n = s
                .strip_prefix("every=")
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|&n| n > 0);
            n.map(Flush::Every).ok_or_else(|| {
                Failure::usage(format!(
                    "--flush {s}: expected end, none or every=N with N >= 1 (e.g. --flush every=64)"
                ))
            })
        }
    }
}

impl Opts {
    pub fn from(m: &ArgMatches) -> Result<Opts, Failure> {
        let flush_text = m
            .get_one::<String>("flush")
            .cloned()
            .unwrap_or_else(|| "end".into());
        let bs = m.get_one::<u64>("bs").copied().unwrap_or(1 << 20);
        if bs == 0 {
            return Err(Failure::usage(
                "--bs 0: a write needs at least one byte, e.g. --bs 4k",
            ));
        }
        if bs > 1 << 31 {
            return Err(Failure::usage(
                "--bs is larger than 2 GiB, more than one write(2) can carry: use --bs 1G or less",
            ));
        }
        let iodepth = m.get_one::<u32>("iodepth").copied().unwrap_or(1);
        if m.get_one::<Duration>("time").is_some_and(|t| t.is_zero()) {
            return Err(Failure::usage(
                "--time 0 leaves no time to write: give a positive duration such as 10s or 500ms, or leave --time out",
            ));
        }
        Ok(Opts {
            target: flags::target_of(m)?,
            size: m.get_one::<u64>("size").copied(),
            count: m.get_one::<u64>("count").copied(),
            offset: m.get_one::<u64>("offset").copied().unwrap_or(0),
            dd: m.get_one::<DdForm>("dd_form").copied(),
            bs,
            direct: flags::direct_of(m),
            flush: parse_flush(&flush_text)?,
            flush_text,
            fdatasync: m.get_flag("fdatasync"),
            dsync: m.get_flag("dsync"),
            pattern: match m.get_one::<String>("pattern").map(String::as_str) {
                Some("zero" | "zeros") => Pattern::Zero,
                _ => Pattern::Random,
            },
            random: m.get_flag("random"),
            fallocate: match m.get_one::<String>("fallocate").map(String::as_str) {
                Some("on") => true,
                Some("off") => false,
                _ => m.get_flag("random"),
            },
            seed: m.get_one::<u64>("seed").copied(),
            iodepth,
            engine: Engine::for_depth(iodepth),
            time: m.get_one::<Duration>("time").copied(),
            verify: m.get_flag("verify"),
            verify_only: m.get_flag("verify_only"),
            // dd leaves the file it wrote, and overwrites one that is there (not with conv=excl).
            keep: m.get_flag("keep") || m.contains_id("dd_form"),
            force: m.get_flag("force") || m.get_one::<DdForm>("dd_form").is_some_and(|d| !d.excl),
            force_device: m.get_flag("force_device"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_forms() {
        assert_eq!(parse_flush("end").unwrap(), Flush::End);
        assert_eq!(parse_flush("every=8").unwrap(), Flush::Every(8));
        assert!(parse_flush("every=0").is_err());
        assert!(
            parse_flush("sometimes")
                .unwrap_err()
                .to_string()
                .contains("every=N")
        );
    }

    #[test]
    fn command_is_well_formed() {
        command().debug_assert();
    }
}
