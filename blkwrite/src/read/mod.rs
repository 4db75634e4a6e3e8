//! blkread: reads, sequential and random, with latency percentiles; the second binary of this
//! crate, on blkwrite's engine (the ring, the buffers, the histogram and the target facts are
//! the same code). See [`command`] for the interface; [`Tool`] runs it on measure's lifecycle.

mod cache;
pub(crate) mod cli;
mod report;
mod scratch;
mod setup;

use crate::blk::engine::{self, Outcome, Plan, Tick};
use crate::blk::opened::Cleanup;
use crate::blk::pattern::Pool;
use crate::blk::records;
use crate::blk::target::Target;
use clap::{ArgMatches, Command};
use measure::lifecycle::{self, Session};
use measure::{Exit, Failure};
use serde_json::{Map, Value, json};
use std::ffi::OsString;

pub use cli::command;

/// Runs blkread with `args` (the program name first) through the lifecycle, as the binary
/// does, and says how it ended.
pub fn run(args: Vec<OsString>) -> Exit {
    lifecycle::run::<Tool>(args)
}

/// blkread for measure's lifecycle: its command, its options and its engine.
#[derive(Debug)]
pub struct Tool;

impl lifecycle::Tool for Tool {
    const NAME: &'static str = "blkread";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    type Options = cli::Opts;

    fn command() -> Command {
        cli::command()
    }

    fn options(m: &ArgMatches, _sub: Option<&str>) -> Result<cli::Opts, Failure> {
        cli::Opts::from(m)
    }

    /// The name until the plan is known (and after a refusal): `read TARGET`.
    fn name(o: &cli::Opts) -> String {
        format!("read {}", o.target.display())
    }

    /// The target: records appended to it would change what is read.
    fn guarded(o: &cli::Opts) -> Vec<std::path::PathBuf> {
        vec![o.target.clone()]
    }

    /// Makes the scratch file (--create), opens the target read-only and works out the plan,
    /// then reads. A refusal writes begin with the options, and the lifecycle the summary.
    fn run(o: cli::Opts, s: &mut Session) -> Result<Exit, Failure> {
        let seed = o.seed.unwrap_or_else(measure::flags::fresh_seed);
        let mut begin = report::options_info(&o, seed);
        // Held to the end of the run: dropping it removes the scratch file (unless --keep).
        let _scratch: Option<Cleanup> = match o.create {
            None => None,
            Some(size) => match scratch::create(&o, size, seed) {
                Ok((guard, secs)) => {
                    begin.insert("create_s".into(), json!(secs));
                    Some(guard)
                }
                Err(scratch::NotMade::Interrupted) => {
                    s.begin(begin)?;
                    return Ok(Exit::Interrupted);
                }
                Err(scratch::NotMade::Failed(f)) => {
                    s.begin(begin)?;
                    return Err(f);
                }
            },
        };
        let prepared = setup::open(&o).and_then(|t| {
            let plan = setup::plan(&o, &t, seed)?;
            setup::refuse_holes(&o, &t, plan.size)?;
            Ok((t, plan))
        });
        let (t, plan) = match prepared {
            Ok(p) => p,
            Err(f) => {
                s.begin(begin)?;
                return Err(f);
            }
        };
        s.set_name(&report::default_name(&plan, &t));
        let still_cached = cache_facts(&mut begin, &o, &t, &plan);
        report::add_target(&mut begin, &t, &plan, o.create.is_some());
        let bufs = Pool::buffers(plan.bs, u64::from(plan.iodepth));
        s.begin(begin)?;
        let mut bufs =
            bufs.map_err(|e| Failure::new(Exit::Cannot, "allocating the read buffers", e))?;
        let out = read_phase(s, &t, &plan, &mut bufs)?;
        report::finish(s, &o, &t, &plan, out, still_cached)
    }
}

/// The share of the range --drop-cache may leave in the page cache (pages it cannot evict:
/// another process mapping them, a few read back by readahead meanwhile).
const CACHE_LEFT_MAX: f64 = 0.01;

/// Evicts the target's pages (--drop-cache) and, for buffered reads, says in begin how much
/// of the range is in the page cache. Returns why the figures are the cache's when
/// --drop-cache left more than [`CACHE_LEFT_MAX`] of the range resident.
fn cache_facts(
    begin: &mut Map<String, Value>,
    o: &cli::Opts,
    t: &Target,
    plan: &Plan,
) -> Option<String> {
    if o.drop_cache {
        let dropped = cache::drop_pages(&t.file, plan.size);
        begin.insert("cache_dropped".into(), json!(dropped.is_ok()));
        if let Err(e) = dropped {
            begin.insert("cache_drop_error".into(), json!(e.to_string()));
        }
    }
    if t.direct_effective {
        return None;
    }
    match cache::resident(&t.file, plan.size) {
        Ok(b) => {
            let ratio = b as f64 / plan.size as f64;
            begin.insert("cache_resident_bytes".into(), json!(b));
            begin.insert("cache_resident_ratio".into(), json!(ratio));
            (o.drop_cache && ratio > CACHE_LEFT_MAX).then(|| {
                format!(
                    "--drop-cache left {b} of the {} bytes read ({:.0}%) in the page cache after \
                     fdatasync and POSIX_FADV_DONTNEED (a file system that keeps its files in \
                     memory, as tmpfs, cannot drop them): the figures are partly the cache's",
                    plan.size,
                    ratio * 100.0
                )
            })
        }
        Err(e) => {
            begin.insert("cache_resident_error".into(), json!(e.to_string()));
            None
        }
    }
}

/// The read phase, with an interval record every -i and, for a person watching, the progress
/// line.
fn read_phase(
    s: &mut Session,
    t: &Target,
    plan: &Plan,
    bufs: &mut Pool,
) -> Result<Outcome, Failure> {
    let keys = records::Keys {
        bytes: "read_bytes",
        ops: "read_count",
        ops_per_s: "reads_per_s",
    };
    let progress = |k: &Tick| report::progress(k, plan);
    records::phase(s, &keys, Some(&progress), |tick| {
        engine::read(&t.file, bufs, plan, tick)
    })
}
