//! timecmd: a command timer that replaces time(1) and `/usr/bin/time -v`, with hyperfine's rigour.
//!
//! Runs a command once (like `time`) or many times (like hyperfine), measures each run with
//! CLOCK_MONOTONIC around the spawn and the reaping and with that run's own `wait4` rusage,
//! and reports `benchmatrix/1` JSON lines: `begin`, a `sample` per run, a `summary`.

mod clock;
pub(crate) mod exit;
pub(crate) mod gnuargs;
pub(crate) mod gnutime;
mod group;
mod human;
pub(crate) mod plan;
pub(crate) mod reap;
mod runner;
mod series;
pub(crate) mod spawn;
pub(crate) mod stats;
mod summary;
pub(crate) mod usage;

use clap::{Arg, ArgAction, ArgMatches, Command, value_parser};
use measure::lifecycle::{self, Session, Stdout};
use measure::{Exit, Failure};
use std::ffi::OsString;

const LONG_ABOUT: &str = "\
Runs COMMAND directly (no shell unless --shell), once like time(1) or -r times like hyperfine, \
and measures each run exactly: CLOCK_MONOTONIC read right before the spawn and right after \
the reaping, and the run's own resource usage from wait4(2): user and system CPU time, max \
RSS, minor and major page faults, voluntary and involuntary context switches, file system \
input and output. Each run is spawned with posix_spawn(3) into a process group of its own.

The command inherits stdin, stdout and stderr (--stdout redirects its stdout, --input its \
stdin). As stdout is the command's, the records go to stderr when stderr is a pipe or a file, \
and are appended to -o FILE when it is given; on a terminal without -o there are none. They \
are benchmatrix/1 JSON lines: a begin record (the command, the options and the machine), a \
sample per measured run, and a summary (mean, median, standard deviation, \
min and max of wall, user and sys time, max RSS; headline wall_median_s), written on every \
path: at the end, after a failure and after Ctrl-C. Warm-up runs are not recorded.

Exit status: the last run's exit status, or 128+N when a signal N ended it; 124 when the \
last run hit --time-limit (as timeout(1)); 125 when timecmd itself failed (bad options, \
--prepare failed, I/O), 126 when COMMAND is not executable, 127 when it is not found (as \
env(1)); 128+N when timecmd got signal N (130 for Ctrl-C: the running command's process \
group gets the signal and 2 s to end, then SIGKILL, and timecmd returns once all of it is gone; \
a second Ctrl-C kills it at once; the summary is written). Without --ignore-failure, the first failing run (non-zero \
exit, signal, time limit) stops the series.

On a terminal (unless -q), a human summary ends the run on stderr, as hyperfine and GNU time \
print one: mean ± σ, median, range, user and system time, CPU share and max RSS, with a \
warning when the runs disagree (a modified Z-score on the median absolute deviation above \
14.8, as hyperfine tests for outliers; the summary record's info.warnings has it too).";

const EXAMPLES: &str = "\
EXAMPLES:
  time tar xjf linux.tar.bz2
      timecmd -- tar xjf linux.tar.bz2
  /usr/bin/time -v make, time -p ./run, /usr/bin/time -f '%e %M' -o t.txt -a ./run
      timecmd -v make;  timecmd -p ./run;  timecmd -f '%e %M' -o t.txt -a ./run
      (GNU time's report after each run; with -p, -v, -f or -a, -o is GNU time's and the
      records take --records FILE)
  /usr/bin/time -v make -j8   (max RSS, faults, context switches)
      timecmd --label para/lvm --prepare 'make clean' -r 3 -- make -j8
  hyperfine -N --warmup 1 --runs 10 --export-json r.json 'gzip -kf big.file'
      timecmd --warmup 1 -r 10 -o r.jsonl -- gzip -kf big.file
  hyperfine --output null --prepare 'sync; echo 3 > /proc/sys/vm/drop_caches' 'cat big.file'
      timecmd -r 5 --stdout null --prepare 'sync; echo 3 > /proc/sys/vm/drop_caches' -- cat big.file
  time bash -c 'dd if=/dev/zero of=testfile bs=512M count=4; sync'
      timecmd --shell 'dd if=/dev/zero of=testfile bs=512M count=4; sync'
  timeout 60 ./flaky-test, ten times, keeping going on failure
      timecmd -r 10 --time-limit 60s --ignore-failure -o results.jsonl -- ./flaky-test
  The median wall time, from the summary (the last record):
      timecmd -o - --stdout null -r 5 -- sleep 0.1 | tail -1 | jq .values.wall_median_s

  For hyperfine users: -r/--runs is hyperfine's; its other short flags are long ones here \
(-w --warmup, -s --setup, -p --prepare, -c --cleanup, -i --ignore-failure, -S --shell, \
-n --name; -p is POSIX time's here, as time -p); its --output WHERE (the command's output) is --stdout WHERE; -o/--output FILE \
appends the records to FILE as JSON lines (hyperfine's --export-json writes one document); \
no shell unless --shell, as hyperfine -N.";

/// The command line interface: the one source for --help and the man page.
pub fn command() -> Command {
    let cmd = Command::new("timecmd")
        .version(env!("CARGO_PKG_VERSION"))
        .about("Time a command like time(1) and hyperfine: wall, CPU, max RSS and rusage per run, as JSON lines")
        .long_about(LONG_ABOUT)
        .after_help(EXAMPLES)
        .arg(
            Arg::new("runs")
                .short('r')
                .long("runs")
                .value_name("N")
                .default_value("1")
                .value_parser(value_parser!(u64).range(1..))
                .help("Measured runs (1 is like time)"),
        )
        .arg(
            Arg::new("warmup")
                .long("warmup")
                .value_name("N")
                .default_value("0")
                .value_parser(value_parser!(u64))
                .help("Unrecorded runs before the measured ones, to warm caches"),
        )
        .arg(
            Arg::new("setup")
                .long("setup")
                .value_name("CMD")
                .help("Shell command run once before all runs (e.g. building the input); a failure stops timecmd (exit 125)"),
        )
        .arg(
            Arg::new("prepare")
                .long("prepare")
                .value_name("CMD")
                .help("Shell command run before every run, warm-ups included (e.g. dropping caches); its stdout is discarded; a failure stops timecmd (exit 125)"),
        )
        .arg(
            Arg::new("cleanup")
                .long("cleanup")
                .value_name("CMD")
                .help("Shell command run once after the last run (also after a failure or Ctrl-C)"),
        )
        .arg(
            Arg::new("time-limit")
                .long("time-limit")
                .value_name("DURATION")
                .value_parser(|s: &str| {
                    let d = measure::units::parse_seconds(s)?;
                    if d.is_zero() {
                        return Err("--time-limit must be more than zero, e.g. 30s".to_string());
                    }
                    Ok(d)
                })
                .help("Kill a run's whole process group (SIGKILL) after DURATION (30s, 500ms; a bare number is seconds) and record it as timed out"),
        )
        .arg(
            Arg::new("ignore-failure")
                .long("ignore-failure")
                .action(ArgAction::SetTrue)
                .help("Keep going after a run that fails (non-zero exit, signal, time limit); count the runs that ended in the statistics"),
        )
        .arg(
            Arg::new("shell")
                .long("shell")
                .value_name("SHELL")
                .num_args(0..=1)
                .require_equals(true)
                .default_missing_value("sh")
                .help("Run COMMAND (its words joined by spaces) as one string through SHELL -c (default sh)"),
        )
        .arg(
            Arg::new("stdout")
                .long("stdout")
                .value_name("WHERE")
                .default_value("inherit")
                .value_parser(|s: &str| spawn::Stdout::parse(s))
                .help("The command's stdout: inherit, null, pipe (read and discarded by timecmd, for programs that skip work on /dev/null), or FILE (truncated before each run; hyperfine's --output)"),
        )
        .arg(
            Arg::new("input")
                .long("input")
                .value_name("WHERE")
                .default_value("inherit")
                .value_parser(|s: &str| spawn::Stdin::parse(s))
                .help("The command's stdin: inherit, null, or FILE (every run reads it from the start)"),
        )
        .arg(measure::flags::quiet())
        .arg(
            Arg::new("command")
                .value_name("COMMAND")
                .num_args(1..)
                .required(true)
                .trailing_var_arg(true)
                .value_parser(value_parser!(OsString))
                .help("The command and its arguments (put -- before it when it starts with -)"),
        );
    measure::flags::record(gnuargs::args(cmd))
        .mut_arg("output", |a| {
            a.alias("records").help(
                "Append the records to FILE (- is stdout); a terminal still gets the human summary. With GNU time's -p, -v, -f or -a, -o is GNU time's (--time-output): give the records as --records FILE",
            )
        })
        // Records never go to stdout on their own here: it is the command's.
        .mut_arg("json", |a| {
            a.help("Records on stderr even when it is a terminal (stdout is the command's)")
        })
}

/// Runs timecmd with `args` (the program name first) through measure's lifecycle.
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}

/// timecmd on measure's lifecycle: the flags above, a [`plan::Plan`] of the runs, and the
/// series as its engine.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "timecmd";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    // Usage errors and timecmd's own failures exit 125 (not 2), as env(1) and timeout(1)
    // do, so that they cannot be mistaken for the command's own exit status 2.
    const CANNOT: Exit = Exit::Code(exit::EXIT_OWN_FAILURE);
    type Options = plan::Plan;

    fn command() -> Command {
        command()
    }

    /// GNU time's `-o FILE` beside -p, -v, -f or -a (see [`gnuargs`]).
    fn args(args: Vec<OsString>) -> Result<Vec<OsString>, Failure> {
        Ok(gnuargs::rewrite(&command(), args))
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<plan::Plan, Failure> {
        Ok(plan::Plan::from_matches(m))
    }

    fn name(o: &plan::Plan) -> String {
        o.display.clone()
    }

    fn stdout(_o: &plan::Plan) -> Stdout {
        Stdout::Payload
    }

    /// The file the command's output goes to (`--stdout FILE`), truncated before every run.
    fn guarded(o: &plan::Plan) -> Vec<std::path::PathBuf> {
        match &o.stdout {
            spawn::Stdout::File(p) => vec![p.clone()],
            _ => Vec::new(),
        }
    }

    fn run(o: plan::Plan, s: &mut Session) -> Result<Exit, Failure> {
        runner::run(&o, s).map(Exit::from_code)
    }
}
