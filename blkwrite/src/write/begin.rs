//! The begin record's facts: the options as given, the target and its alignment, the data
//! pool, and the preallocation of a new file (fallocate, before timing, as fio does).

use crate::blk::engine::Plan;
use crate::blk::records;
use crate::blk::target::{self, Target};
use crate::write::cli::Opts;
use measure::parts::info;
use measure::{Exit, Failure};
use rustix::fs::FallocateFlags;
use serde_json::{Map, Value, json};

/// The options as begin reports them.
pub(crate) fn options_info(o: &Opts, seed: u64) -> Map<String, Value> {
    info(json!({
        "target": o.target.display().to_string(),
        "bs_bytes": o.bs,
        "direct": o.direct.as_str(),
        "flush": o.flush_text,
        "fdatasync": o.fdatasync,
        "dsync": o.dsync,
        "pattern": o.pattern.as_str(),
        "random": o.random,
        "fallocate": o.fallocate,
        "seed": seed,
        "iodepth": o.iodepth,
        "engine": o.engine.as_str(),
        "time_limit_s": o.time.map(|t| t.as_secs_f64()),
        "verify": o.verify,
        "verify_only": o.verify_only,
        "keep": o.keep,
        "force": o.force,
        "force_device": o.force_device,
    }))
}

/// Adds the plan, the target (kind, O_DIRECT and its alignment, its facts) and the pool to
/// begin (the session adds the machine's facts).
pub(crate) fn add_target(begin: &mut Map<String, Value>, t: &Target, plan: &Plan, slots: u64) {
    records::add_target(begin, t, plan, t.kind == target::Kind::NewFile);
    begin.insert("pool_bytes".into(), json!(slots * plan.bs));
    begin.insert("pool_slots".into(), json!(slots));
    begin.extend(t.facts.clone());
}

/// Preallocates a new file with --fallocate and says how it went in begin. A full target is
/// the one failure that ends the run (any other error is reported and the run goes on).
pub(crate) fn preallocate(
    begin: &mut Map<String, Value>,
    o: &Opts,
    t: &Target,
    plan: &Plan,
) -> Result<(), Failure> {
    if !(o.fallocate && t.kind == target::Kind::NewFile && !o.verify_only) {
        begin.insert("preallocated".into(), json!(false));
        return Ok(());
    }
    let f0 = std::time::Instant::now();
    let done = rustix::fs::fallocate(&t.file, FallocateFlags::empty(), plan.start, plan.size);
    begin.insert("preallocated".into(), json!(done.is_ok()));
    let Err(errno) = done else {
        begin.insert("fallocate_s".into(), json!(f0.elapsed().as_secs_f64()));
        return Ok(());
    };
    let e = std::io::Error::from(errno);
    if e.raw_os_error() == Some(libc::ENOSPC) {
        return Err(Failure::new(
            Exit::Cannot,
            o.target.display(),
            format!(
                "preallocating {} bytes: {e} (the target is full: give a smaller --size)",
                plan.size
            ),
        ));
    }
    begin.insert("fallocate_error".into(), json!(e.to_string()));
    Ok(())
}
