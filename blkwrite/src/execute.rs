//! A run once set up: begin written, the data pool made, then the write phase with an
//! interval record (and a progress line on a terminal) every second, or the read-back alone.

use crate::begin;
use crate::cli::Opts;
use crate::engine::{self, Outcome, Plan, Tick};
use crate::outcome::{self, fail_summary};
use crate::pattern::Pool;
use crate::target::Target;
use measure::Failure;
use measure::exit;
use measure::writer::{Reporter, Values};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::process::ExitCode;

/// What a run works on once set up: the options, the open target, the data and the plan.
pub(crate) struct Job<'a> {
    pub o: &'a Opts,
    pub t: &'a Target,
    pub pool: &'a Pool,
    pub plan: &'a Plan,
}

/// Writes begin, makes the pool, and runs the write phase (or, with --verify-only, the
/// read-back), ending with the summary.
pub(crate) fn execute(
    rep: &mut Reporter,
    o: &Opts,
    t: Target,
    plan: Plan,
    seed: u64,
    mut begin: Map<String, Value>,
) -> Result<ExitCode, Failure> {
    let outerr = |e: std::io::Error| Failure::io("output", &e);
    let slots = Pool::slots_for(plan.bs, plan.blocks, o.pattern);
    begin::add_target(&mut begin, &t, &plan, slots);
    if let Err(f) = begin::preallocate(&mut begin, o, &t, &plan) {
        rep.begin(begin).map_err(outerr)?;
        fail_summary(rep, &f.to_string(), Values::new(), Map::new())?;
        return Err(f);
    }
    let t0 = std::time::Instant::now();
    let pool = Pool::new(plan.bs, plan.blocks, o.pattern, seed);
    begin.insert("pool_fill_s".into(), json!(t0.elapsed().as_secs_f64()));
    rep.begin(begin).map_err(outerr)?;
    let pool = match pool {
        Ok(p) => p,
        Err(e) => {
            let f = Failure::new(exit::CANNOT, "allocating the data buffer", e);
            fail_summary(rep, &f.to_string(), Values::new(), Map::new())?;
            return Err(f);
        }
    };
    let job = Job {
        o,
        t: &t,
        pool: &pool,
        plan: &plan,
    };
    if o.verify_only {
        return outcome::verify_phase(rep, &job, plan.blocks, true, Values::new(), Map::new());
    }
    let out = write_phase(rep, &job)?;
    outcome::finish(rep, &job, out)
}

/// The write phase and the flush, with an interval record every second and, when stderr is
/// a terminal and not --quiet, a progress line.
fn write_phase(rep: &mut Reporter, job: &Job) -> Result<Outcome, Failure> {
    let progress = !job.o.quiet && measure::cli::is_terminal(2);
    let mut out_err: Option<std::io::Error> = None;
    let mut tick = |k: &Tick| {
        let secs = k.interval_s.max(1e-9);
        let v = Values::new()
            .with("elapsed_s", k.elapsed_s)
            .with("interval_s", k.interval_s)
            .with_count("written_bytes", k.bytes)
            .with_count("write_count", k.writes)
            .with("throughput_bytes_per_s", k.bytes as f64 / secs)
            .with("writes_per_s", k.writes as f64 / secs);
        if progress {
            let _ = write!(
                std::io::stderr(),
                "\rblkwrite: {:>10} written, {}   ",
                measure::units::format_bytes(k.total_bytes as f64),
                measure::units::format_bytes_per_s(k.bytes as f64 / secs)
            );
        }
        match rep.interval(v, Map::new()) {
            Ok(()) => true,
            Err(e) => {
                out_err = Some(e);
                false
            }
        }
    };
    let out = engine::run(&job.t.file, job.pool, job.plan, &mut tick);
    if progress {
        let _ = writeln!(std::io::stderr());
    }
    if let Some(e) = out_err {
        return Err(Failure::io("output", &e));
    }
    Ok(out)
}
