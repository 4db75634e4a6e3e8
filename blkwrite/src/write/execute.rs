//! A run once set up: begin written, the data pool made, then the write phase with an
//! interval record and the progress line every second, or the read-back alone.

use crate::blk::engine::{self, Outcome, Plan, Tick};
use crate::blk::pattern::Pool;
use crate::blk::records;
use crate::blk::target::Target;
use crate::write::begin;
use crate::write::cli::Opts;
use crate::write::human;
use crate::write::outcome::{self, Job};
use measure::lifecycle::Session;
use measure::parts::Values;
use measure::{Exit, Failure};
use serde_json::{Map, Value, json};

/// Writes begin, makes the pool, and runs the write phase (or, with --verify-only, the
/// read-back), ending with the summary.
pub(crate) fn execute(
    s: &mut Session,
    o: &Opts,
    t: Target,
    plan: Plan,
    seed: u64,
    mut begin: Map<String, Value>,
) -> Result<Exit, Failure> {
    let slots = Pool::slots_for(plan.bs, plan.blocks, o.pattern);
    begin::add_target(&mut begin, &t, &plan, slots);
    if let Err(f) = begin::preallocate(&mut begin, o, &t, &plan) {
        s.begin(begin)?;
        return Err(f);
    }
    let t0 = std::time::Instant::now();
    let pool = Pool::new(plan.bs, plan.blocks, o.pattern, seed);
    begin.insert("pool_fill_s".into(), json!(t0.elapsed().as_secs_f64()));
    s.begin(begin)?;
    let pool = pool.map_err(|e| Failure::new(Exit::Cannot, "allocating the data buffer", e))?;
    let job = Job {
        o,
        t: &t,
        pool: &pool,
        plan: &plan,
    };
    if o.verify_only {
        return outcome::verify_phase(s, &job, plan.blocks, true, Values::new(), Map::new());
    }
    let out = write_phase(s, &job)?;
    outcome::finish(s, &job, out)
}

/// The write phase and the flush, with an interval record every second and, for a person
/// watching, the progress line.
fn write_phase(s: &mut Session, job: &Job) -> Result<Outcome, Failure> {
    let keys = records::Keys {
        bytes: "written_bytes",
        ops: "write_count",
        ops_per_s: "writes_per_s",
    };
    let progress = |k: &Tick| human::progress(k, job.plan.size);
    // dd shows progress only with status=progress.
    let shown = job
        .o
        .dd
        .is_none_or(|d| d.status == crate::write::ddform::Status::Progress);
    let progress: Option<&dyn Fn(&Tick) -> String> = shown.then_some(&progress);
    records::phase(s, &keys, progress, |tick| {
        engine::run(&job.t.file, job.pool, job.plan, tick)
    })
}
