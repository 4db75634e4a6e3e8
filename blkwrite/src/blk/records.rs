//! The record pieces blkwrite and blkread share: the latency percentiles from the histogram,
//! the target's facts in begin, the head of the row name, and the I/O phase with its
//! interval records and progress line.

use crate::blk::engine::{Outcome, Plan, Tick};
use crate::blk::target::Target;
use measure::Failure;
use measure::lifecycle::Session;
use measure::parts::{Values, info};
use serde_json::{Map, Value, json};

pub use measure::latency::add_latency;

/// The sample's and summary's info: how the phase stopped, the engine, whether the ring's
/// buffers were registered, O_DIRECT, the operations issued, the tool's `own` field, and the
/// errno of a failure.
pub(crate) fn phase_info(
    out: &Outcome,
    plan: &Plan,
    t: &Target,
    own: (&str, Value),
) -> Map<String, Value> {
    let mut m = info(json!({
        "stop": out.stop.as_str(),
        "engine": plan.engine.as_str(),
        "fixed_buffers": out.fixed_buffers,
        "direct_effective": t.direct_effective,
        "issued_count": out.issued,
    }));
    m.insert(own.0.into(), own.1);
    if let Some(e) = out.errno {
        m.insert("errno".into(), json!(e));
    }
    m
}

/// Adds the plan's size and blocks and the target (kind, whether the run made it, O_DIRECT
/// and its alignment) to begin; each tool adds the target's facts itself.
pub(crate) fn add_target(begin: &mut Map<String, Value>, t: &Target, plan: &Plan, created: bool) {
    begin.insert("size_bytes".into(), json!(plan.size));
    begin.insert("blocks".into(), json!(plan.blocks));
    begin.insert("target_kind".into(), json!(t.kind.as_str()));
    begin.insert("created".into(), json!(created));
    begin.insert("direct_effective".into(), json!(t.direct_effective));
    if let Some(n) = &t.direct_note {
        begin.insert("direct_note".into(), json!(n));
    }
    if t.direct_effective {
        begin.insert("dio_offset_align".into(), json!(t.align.offset));
        begin.insert("dio_mem_align".into(), json!(t.align.mem));
        begin.insert("dio_align_source".into(), json!(t.align.source));
    }
}

/// The row name's head: `VERB SIZE bs=BS direct|buffered seq|rand`, as dd sizes.
pub(crate) fn name_head(verb: &str, plan: &Plan, t: &Target, random: bool) -> String {
    use crate::blk::lines::compact_size;
    format!(
        "{verb} {} bs={} {} {}",
        compact_size(plan.size),
        compact_size(plan.bs),
        if t.direct_effective {
            "direct"
        } else {
            "buffered"
        },
        if random { "rand" } else { "seq" },
    )
}

/// The value keys of an interval record: bytes, operations and operations per second.
pub(crate) struct Keys {
    pub bytes: &'static str,
    pub ops: &'static str,
    pub ops_per_s: &'static str,
}

/// Runs an I/O phase through `io` (the engine, given the tick), writing an interval record
/// at each tick and, for a person watching, the `progress` line (`None`: no progress line).
pub(crate) fn phase(
    s: &mut Session,
    keys: &Keys,
    progress: Option<&dyn Fn(&Tick) -> String>,
    io: impl FnOnce(&mut dyn FnMut(&Tick) -> bool) -> Outcome,
) -> Result<Outcome, Failure> {
    let (rep, person) = s.parts();
    let mut out_err: Option<std::io::Error> = None;
    let mut tick = |k: &Tick| {
        let secs = k.interval_s.max(1e-9);
        let v = Values::new()
            .with("elapsed_s", k.elapsed_s)
            .with("interval_s", k.interval_s)
            .with_count(keys.bytes, k.bytes)
            .with_count(keys.ops, k.ops)
            .with("throughput_bytes_per_s", k.bytes as f64 / secs)
            .with(keys.ops_per_s, k.ops as f64 / secs);
        if let Some(line) = progress.filter(|_| person.on()) {
            person.progress(&line(k));
        }
        match rep.interval(v, Map::new()) {
            Ok(()) => true,
            Err(e) => {
                out_err = Some(e);
                false
            }
        }
    };
    let out = io(&mut tick);
    person.clear();
    if let Some(e) = out_err {
        return Err(Failure::io("writing the records", &e));
    }
    Ok(out)
}
