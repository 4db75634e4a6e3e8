//! cpumem's command line: the clap Command (the one source for --help, the man page and the
//! completions) and the options built from it.

use crate::probe::{PROBES, Probe, parse_only};
use clap::{Arg, ArgMatches, Command, value_parser};
use measure::Failure;
use std::time::Duration;

const ABOUT: &str = "\
Measure what virtualization changes: system call, pipe round trip (context switch), process \
spawn, page fault, memory bandwidth and latency, clock read";

const INTRO: &str = "\
Runs each probe in turn for -t (1 s by default) in -c batches (10): each batch is one timed \
loop of many operations, sized so that the timer's cost is spread over about a tenth of a \
second, and is written as a sample whose figure is the time of one operation (or, for the \
bandwidth probes, the bytes per second of the batch). Each probe is a row of the matrix, \
named by what it measures; the summary holds each probe's median and 10th and 90th \
percentile over its batches. The defaults take about 12 s. A batch must get at least 1ms \
(-t 1ms -c 10000 is refused: a batch of a few operations would time the timer).

The probes (--only names), and what one operation is:";

const OUTRO: &str = "\
Every figure is of the operation, not of the loop around it: the timer is read once per \
batch, the work's results go through std::hint::black_box so that the compiler cannot drop \
it, and the two shortest operations (syscall, clock) have the cost of an empty loop's \
iteration, measured at the start, subtracted. Calibration runs before each probe's batches \
(unrecorded) warm the caches and the code, and set the operations per batch: by the thread's \
CPU time for the probes whose work is the thread's own (all but pipe and spawn), so that a \
batch is the same work under a cgroup CPU quota as without one. A batch then takes longer \
under the quota, and its figure (wall time) shows what the quota costs in every batch, not \
only in those a throttle happened to fall in.

begin records the CPU model, the frequency governor where the kernel shows one, the \
clocksource, the transparent huge page setting, the last-level cache and the CPUs used \
(--cpu N pins the process and the processes it starts to CPU N). The pipe round trip is two \
rows because it has two costs: left to the scheduler, its two processes share a CPU in some \
batches (two context switches, a few microseconds) and not in others (two wake-ups across \
CPUs, ten times that on a VM), and the median of the two modes is neither. So pipe1 pins both \
to one CPU and pipe2 each to a CPU of its own (the first one or two CPUs this process may \
use); each sample names both processes' CPUs as the kernel reports them. pipe2 is skipped, \
the summary's info.skipped saying why, where the process may use one CPU only (one CPU, a \
cpuset of one, --cpu); a run that measured nothing else exits 1. --only pipe names both.

Records: a begin, a sample per batch (values: the probe's one figure; info: the batch's \
operations and seconds), and one summary (the lifecycle's: one per run) that carries every \
probe's statistics under keys such as syscall_median_s, syscall_p10_s and \
mem_read_median_bytes_per_s; its headlines are each probe's median with the probe's role, a \
row \"NAME: ROLE\" each (NAME is cpumem, or --name), whose cell collate takes from the \
probe's samples.";

const EXAMPLES: &str = "\
EXAMPLES:
  ubench's cpu and ram i/o, by cost:
      cpumem -o results.jsonl --label para/lvm/san
  The system call and the clock only, pinned to CPU 0, longer:
      cpumem --only syscall,clock --cpu 0 -t 3s
  How much a tracer costs (the syscall row grows, the memory rows do not):
      strace -f -o /dev/null cpumem --only syscall,memread -o traced.jsonl
  The matrix of two environments:
      collate --baseline bare results/*.jsonl";

/// The long help: the introduction, a paragraph per probe, the rest.
fn long_about() -> String {
    let mut s = String::from(INTRO);
    for p in PROBES {
        s.push_str(&format!(
            "\n\n{}: {} (role \"{}\", key {}).",
            p.only, p.op, p.role, p.key
        ));
    }
    s.push_str("\n\n");
    s.push_str(OUTRO);
    s
}

pub fn command() -> Command {
    let names: Vec<&str> = PROBES.iter().map(|p| p.only).collect();
    let cmd = Command::new("cpumem")
        .version(env!("CARGO_PKG_VERSION"))
        .about(ABOUT)
        .long_about(long_about())
        .after_help(EXAMPLES)
        .arg(
            Arg::new("only")
                .long("only")
                .value_name("LIST")
                .help(format!(
                    "Only these probes, comma-separated: {} (default: all, in that order)",
                    names.join(",")
                )),
        )
        .arg(
            Arg::new("time")
                .short('t')
                .long("time")
                .value_name("DURATION")
                .default_value("1s")
                .help("How long each probe runs, its batches together (250ms, 2s; a bare number is seconds)"),
        )
        .arg(
            measure::flags::count()
                .default_value("10")
                .value_parser(value_parser!(u64).range(1..=10000))
                .help("Batches per probe: the samples of each row"),
        )
        .arg(
            Arg::new("cpu")
                .long("cpu")
                .value_name("N")
                .value_parser(value_parser!(usize))
                .help("Pin the probes (and the processes they start) to CPU N"),
        )
        .arg(
            Arg::new("size")
                .short('s')
                .long("size")
                .value_name("SIZE")
                .help("Buffer of the bandwidth probes (default: 4x the last-level cache, at least 64M, at most an eighth of memory or of the cgroup memory limit; 4k = 4096)"),
        )
        .arg(measure::flags::quiet());
    measure::flags::record(cmd)
}

/// What a run does.
#[derive(Clone, Debug)]
pub struct Opts {
    pub probes: Vec<Probe>,
    /// Each probe's time, its batches together.
    pub time: Duration,
    pub batches: u64,
    pub cpu: Option<usize>,
    pub size: Option<u64>,
}

/// The shortest batch: -t divided by -c below this is refused.
const MIN_BATCH: Duration = Duration::from_millis(1);

pub fn options(m: &ArgMatches) -> Result<Opts, Failure> {
    let probes = match m.get_one::<String>("only") {
        Some(list) => parse_only(list).map_err(Failure::usage)?,
        None => PROBES.iter().map(|p| p.probe).collect(),
    };
    let t = m.get_one::<String>("time").map_or("1s", String::as_str);
    let time =
        measure::units::parse_seconds(t).map_err(|e| Failure::usage(format!("-t {t}: {e}")))?;
    if time < Duration::from_millis(1) || time > Duration::from_secs(3600) {
        return Err(Failure::usage(format!(
            "-t {t}: give a time per probe from 1ms to 1h"
        )));
    }
    let size = match m.get_one::<String>("size") {
        Some(s) => {
            let b = measure::units::parse_size(s)
                .map_err(|e| Failure::usage(format!("-s {s}: {e}")))?;
            if b < 4096 {
                return Err(Failure::usage(format!("-s {s}: give at least 4k")));
            }
            Some(b)
        }
        None => None,
    };
    let cpu = m.get_one::<usize>("cpu").copied();
    if let Some(c) = cpu {
        let allowed = crate::facts::allowed_cpus();
        if !allowed.contains(&c) {
            return Err(Failure::usage(format!(
                "--cpu {c}: this process may run on CPUs {} only",
                crate::facts::cpu_list(&allowed)
            )));
        }
    }
    let batches = m.get_one::<u64>("count").copied().unwrap_or(10);
    // A batch is a timed loop of many operations; under this, a batch is a few operations
    // (one spawn takes about a millisecond) and the probe would run far past -t.
    let per_batch = time / u32::try_from(batches.max(1)).unwrap_or(u32::MAX);
    if per_batch < MIN_BATCH {
        let most = (time.as_nanos() / MIN_BATCH.as_nanos()).max(1);
        return Err(Failure::usage(format!(
            "-t {t} -c {batches}: each batch would last {per_batch:?}, under the {MIN_BATCH:?} a \
             batch of many operations needs; give -c {most} or fewer, or a longer -t"
        )));
    }
    Ok(Opts {
        probes,
        time,
        batches,
        cpu,
        size,
    })
}
