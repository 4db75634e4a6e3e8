//! cpumem: the kernel and memory costs that virtualization changes, each measured as a probe
//! (replaces ubench's "cpu" and "ram i/o" and tells *where* a slower `make -j8` pays).
//!
//! | probe | row (`name`) | sample key | one operation |
//! |---|---|---|---|
//! | syscall | system call round trip | `syscall_s` | getppid as a raw system call |
//! | pipe1 | pipe round trip on one CPU | `pipe_one_cpu_round_trip_s` | a byte there and back over two pipes, both processes on one CPU |
//! | pipe2 | pipe round trip across two CPUs | `pipe_two_cpus_round_trip_s` | the same, each process on a CPU of its own (skipped on one CPU) |
//! | spawn | process spawn and wait | `spawn_s` | posix_spawn and waitpid of a tiny static program |
//! | fault | page fault on first touch | `page_fault_s` | the first write to a fresh anonymous 4 KiB page |
//! | memread, memwrite, memcopy | memory read/write/copy bandwidth | `mem_read_bytes_per_s`... | a pass over a buffer of 4x the LLC |
//! | memlat | memory load latency of a random chase | `mem_latency_s` | one dependent load of a random chase |
//! | clock | monotonic clock read | `clock_read_s` | clock_gettime(CLOCK_MONOTONIC) |
//!
//! # How the rows fit the record contract
//!
//! The lifecycle gives a run one begin and one summary, and one `name` (`cpumem`) on every
//! line. So one run holds every probe's rows: each probe's samples carry its one figure under
//! its own sample key (a batch each, so that collate has a spread and a confidence interval
//! per cell), and the summary lists a headline per measured probe, `{key, role}` with the
//! probe's role, so that each probe is a row of its own, `NAME: ROLE`
//! (`cpumem: system call round trip`). Running one invocation per probe would give each its
//! own summary, but then the begin facts would be repeated for every probe and the probes
//! could not share the calibration of the empty loop.
//!
//! The one summary carries every probe's statistics over its batches under keys named for
//! the probe's sample key with the statistic before the unit (`syscall_median_s`,
//! `syscall_p10_s`, `syscall_p90_s`, `mem_read_median_bytes_per_s`, ...), and the per-probe
//! facts (operations per batch, buffer sizes) in `info.probes`. Each headline's key is its
//! probe's median: collate maps a `_median` headline to the samples' own key under the same
//! role, so every row of the matrix comes from its samples and the summary adds no row of its
//! own. A failed probe
//! is a failed sample (an `error`, no values) under its row, named with why in the summary's
//! `info.failed`, and the exit status is 1; the summary stays `ok` when other probes measured,
//! since the run did finish (collate leaves a run that did not out of every cell, and one
//! probe refused, such as a spawn in a sandbox, must not take the other rows with it). It is
//! `failed` when no probe measured and `partial` after Ctrl-C; a probe skipped (the two-CPU
//! pipe on one CPU) is named with why in `info.skipped`.
//!
//! # Measuring the operation, not the loop
//!
//! Each batch is one timed loop of many operations (calibrated to about `-t / -c` of the
//! thread's CPU time where the work is the thread's own, so that a CPU quota shows in every
//! batch), so the
//! timer's own cost is spread thin; the work's results go through `std::hint::black_box`;
//! for the two shortest operations (syscall and clock) the cost of an empty loop's
//! iteration, measured once at the start, is subtracted. See `cpumem --help` for what each
//! figure includes.

pub(crate) mod cli;
pub(crate) mod engine;
pub(crate) mod facts;
pub(crate) mod ops;
pub mod probe;

pub use cli::command;

use engine::{Ended, Plan};
use measure::lifecycle::{self, Session};
use measure::parts::{Summary, Values};
use measure::record::Status;
use measure::{Exit, Failure, Headline};
use probe::{Probe, Sizes};
use serde_json::{Map, Value, json};
use std::ffi::OsString;

/// cpumem on the lifecycle.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "cpumem";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = cli::Opts;

    fn command() -> clap::Command {
        cli::command()
    }

    fn options(m: &clap::ArgMatches, _sub: Option<&str>) -> Result<cli::Opts, Failure> {
        cli::options(m)
    }

    /// The run's name (`--name` replaces it); each probe is a row "NAME: ROLE" through the
    /// summary's headlines.
    fn name(_: &cli::Opts) -> String {
        "cpumem".to_string()
    }

    fn run(o: cli::Opts, s: &mut Session) -> Result<Exit, Failure> {
        measure_all(o, s)
    }
}

/// Runs cpumem with `args` (the program name first).
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}

/// 64 MiB: the least default buffer of the bandwidth probes.
const MIN_STREAM: u64 = 64 << 20;
/// 256 MiB: the least buffer of the pointer chase (64 Ki pages of 4 KiB, far past any TLB).
const MIN_CHASE: u64 = 256 << 20;

/// The buffer sizes: 4x (bandwidth) and 8x (chase) the last-level cache, at least 64 MiB
/// and 256 MiB, and by default no more than an eighth of memory each (a copy has two), or of
/// the cgroup's memory limit where that is less (a container's OOM killer would end the run).
fn sizes(o: &cli::Opts, llc: Option<u64>, loop_s: f64, cpus: Vec<usize>) -> Sizes {
    let probe = measure::envfacts::Probe::system();
    let limit = probe
        .cgroup_facts()
        .get("memory_limit_bytes")
        .and_then(|v| v.as_u64());
    let mem = probe
        .memory_bytes()
        .unwrap_or(u64::MAX)
        .min(limit.unwrap_or(u64::MAX));
    let cap = (mem / 8).max(16 << 20);
    let llc = llc.unwrap_or(32 << 20);
    Sizes {
        stream_bytes: o.size.unwrap_or_else(|| (4 * llc).max(MIN_STREAM).min(cap)),
        chase_bytes: (8 * llc).max(MIN_CHASE).min(cap),
        loop_s,
        cpus,
    }
}

fn measure_all(o: cli::Opts, s: &mut Session) -> Result<Exit, Failure> {
    if let Some(c) = o.cpu {
        facts::pin(c).map_err(|e| Failure::new(Exit::Cannot, format!("--cpu {c}"), e))?;
    }
    let cpus = facts::allowed_cpus();
    let first = cpus.first().copied().unwrap_or(0);
    let llc = facts::llc_bytes(first);
    let needs_loop = o
        .probes
        .iter()
        .any(|p| matches!(p, Probe::Syscall | Probe::Clock));
    let loop_s = if needs_loop {
        ops::calls::loop_cost()
    } else {
        0.0
    };
    let z = sizes(&o, llc, loop_s, cpus.clone());
    let plan = Plan {
        batch_s: o.time.as_secs_f64() / o.batches as f64,
        batches: o.batches,
    };
    let only: Vec<&str> = o.probes.iter().map(|p| p.spec().only).collect();
    s.begin(measure::parts::info(json!({
        "probes": only.join(","),
        "time_per_probe_s": o.time.as_secs_f64(),
        "batches": o.batches,
        "pinned_cpu": o.cpu,
        "cpus_used": facts::cpu_list(&cpus),
        "governor": facts::governor(first),
        "clocksource": facts::clocksource(),
        "transparent_hugepage": facts::thp(),
        "llc_bytes": llc,
        "stream_buffer_bytes": z.stream_bytes,
        "chase_buffer_bytes": z.chase_bytes,
        "loop_overhead_s": loop_s,
    })))?;
    let mut ended = Vec::new();
    for &p in &o.probes {
        let e = engine::run_probe(p, &z, plan, s)?;
        let stop = matches!(e, Ended::Interrupted(_));
        ended.push((p.spec().role.to_string(), e));
        if stop {
            break;
        }
    }
    s.human().clear();
    summarize(s, &ended)
}

/// Writes the one summary: every probe's statistics, and a headline for each measured probe's
/// median, its row "NAME: ROLE"; the failed probes named in info; partial after Ctrl-C,
/// failed when no probe measured.
fn summarize(s: &mut Session, ended: &[(String, Ended)]) -> Result<Exit, Failure> {
    let mut values = Values::new();
    let mut probes = Map::new();
    let mut headlines = Vec::new();
    let mut failed = Map::new();
    let mut skipped = Map::new();
    let mut errors = Vec::new();
    let mut table: Vec<(String, String)> = Vec::new();
    for (name, e) in ended {
        let st = match e {
            Ended::Done(st) | Ended::Interrupted(Some(st)) => st,
            Ended::Interrupted(None) => continue,
            Ended::Skipped(why) => {
                skipped.insert(name.clone(), json!(why));
                table.push((name.clone(), "skipped".into()));
                continue;
            }
            Ended::Failed(why) => {
                errors.push(format!("{name}: {why}"));
                failed.insert(name.clone(), json!(why));
                table.push((name.clone(), "failed".into()));
                continue;
            }
        };
        st.put(&mut values);
        let mut info = st.info.clone();
        info.insert("name".into(), json!(name));
        info.insert("batches".into(), json!(st.batches));
        info.insert("ops_per_batch".into(), json!(st.ops_per_batch));
        probes.insert(st.spec.only.into(), Value::Object(info));
        let median = measure::human::value_text(st.spec.key, st.median);
        table.push((name.clone(), median));
        headlines.push(Headline::new(&st.key("median"), name));
    }
    let mut code = engine::exit_of(ended.iter().map(|(_, e)| e));
    if code == Exit::Ok && headlines.is_empty() {
        // Every probe asked for was skipped: the run measured nothing.
        code = Exit::MeasuredFailure;
        let why: Vec<String> = skipped
            .iter()
            .map(|(n, w)| format!("{n}: skipped: {}", w.as_str().unwrap_or("")))
            .collect();
        errors.extend(why);
    }
    let (status, error) = match code {
        Exit::Ok => (Status::Ok, None),
        Exit::Interrupted => (Status::Partial, Some("interrupted".to_string())),
        _ if headlines.is_empty() => (Status::Failed, Some(errors.join("; "))),
        _ => (Status::Ok, None),
    };
    let said = (!errors.is_empty()).then(|| errors.join("; "));
    let text = summary_text(status, error.as_deref().or(said.as_deref()), &table);
    s.summary(Summary {
        status,
        error,
        headline: None,
        headlines,
        values,
        info: measure::parts::info(
            json!({ "probes": probes, "failed": failed, "skipped": skipped }),
        ),
    })?;
    s.human().summary(&text);
    Ok(code)
}

/// The human summary: the status, then each probe's row and median, aligned.
fn summary_text(status: Status, error: Option<&str>, table: &[(String, String)]) -> String {
    let word = match status {
        Status::Ok => "ok",
        Status::Partial => "partial",
        Status::Failed => "failed",
    };
    let mut out = match error {
        Some(e) => format!("cpumem: {word}: {e}\n"),
        None => format!("cpumem: {word}, medians of the batches:\n"),
    };
    let width = table.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, v) in table {
        out.push_str(&format!("  {name:<width$}  {v}\n"));
    }
    out
}
