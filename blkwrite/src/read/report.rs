//! blkread's records and human lines: the options and the target in begin, the row name, the
//! progress line, and the sample and summary for each way a run ends.

use super::cli::Opts;
use crate::blk::engine::{Engine, Outcome, Plan, Stop, Tick};
use crate::blk::lines::{dd_bytes, latency_text};
use crate::blk::records;
use crate::blk::target::Target;
use measure::lifecycle::Session;
use measure::parts::{Summary, Values, info};
use measure::units::{format_bytes, format_bytes_per_s, format_seconds, sig3};
use measure::{Exit, Failure, Headline, Status};
use serde_json::{Map, Value, json};

/// The options as begin reports them.
pub(crate) fn options_info(o: &Opts, seed: u64) -> Map<String, Value> {
    info(json!({
        "target": o.target.display().to_string(),
        "bs_bytes": o.bs,
        "size_limit_bytes": o.size,
        "direct": o.direct.as_str(),
        "random": o.random,
        "seed": seed,
        "iodepth": o.iodepth,
        "engine": Engine::for_depth(o.iodepth).as_str(),
        "time_limit_s": o.time.map(|t| t.as_secs_f64()),
        "interval_s": o.interval.as_secs_f64(),
        "create_bytes": o.create,
        "keep": o.keep,
        "drop_cache": o.drop_cache,
    }))
}

/// Adds the plan and the target (kind, O_DIRECT and its alignment, its facts) to begin.
/// `created` says the target is the scratch file of --create.
pub(crate) fn add_target(begin: &mut Map<String, Value>, t: &Target, plan: &Plan, created: bool) {
    records::add_target(begin, t, plan, created);
    for (k, v) in &t.facts {
        begin.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// The row name when --name is not given: `read 1G bs=4k direct rand depth=32`.
pub(crate) fn default_name(plan: &Plan, t: &Target) -> String {
    let random = !matches!(plan.order, crate::blk::pattern::Order::Sequential);
    let mut s = records::name_head("read", plan, t, random);
    if plan.iodepth > 1 {
        s.push_str(&format!(" depth={}", plan.iodepth));
    }
    if plan.wrap {
        s.push_str(" time-based");
    }
    s
}

/// The progress line: how much is read, for how long, at what rate overall and now.
pub(crate) fn progress(k: &Tick, plan: &Plan) -> String {
    let done = k.total_bytes as f64;
    let of = if plan.wrap {
        String::new()
    } else {
        format!(
            " of {} ({:.0}%)",
            format_bytes(plan.size as f64),
            100.0 * done / plan.size as f64
        )
    };
    format!(
        "blkread: {}{of} read, {:.1} s, {}, now {}/s",
        format_bytes(done),
        k.elapsed_s,
        format_bytes_per_s(done / k.elapsed_s.max(1e-9)),
        sig3(k.ops as f64 / k.interval_s.max(1e-9)),
    )
}

/// The read phase's figures: bytes, count, time, throughput, reads per second, latency.
fn values(out: &Outcome) -> Values {
    let mut v = Values::new()
        .with_count("read_bytes", out.bytes)
        .with_count("read_count", out.ops)
        .with("read_s", out.io_s);
    if out.io_s > 0.0 {
        v.set("throughput_bytes_per_s", out.bytes as f64 / out.io_s);
        v.set("reads_per_s", out.ops as f64 / out.io_s);
    }
    records::add_latency(&mut v, "", &out.hist);
    v
}

/// The read phase's info: the engine's, the passes made, and why a time-limited read made
/// only one.
fn phase_info(o: &Opts, t: &Target, plan: &Plan, out: &Outcome) -> Map<String, Value> {
    let passes = json!(out.ops as f64 / plan.blocks as f64);
    let mut sinfo = records::phase_info(out, plan, t, ("passes", passes));
    if super::setup::one_pass(o, t) {
        sinfo.insert(
            "one_pass".into(),
            json!("buffered reads after --drop-cache stop at the end of the first pass, however much of --time is left: a second pass would read the page cache the first one filled"),
        );
    }
    sinfo
}

/// The sample and the summary for the way the read phase ended, and the exit status.
pub(crate) fn finish(
    s: &mut Session,
    o: &Opts,
    t: &Target,
    plan: &Plan,
    out: Outcome,
    still_cached: Option<String>,
) -> Result<Exit, Failure> {
    let v = values(&out);
    let mut sinfo = phase_info(o, t, plan, &out);
    let (headline, headlines) = headlines(o);
    let (status, error, exit) = match out.stop {
        Stop::OutputGone => return Ok(Exit::Ok),
        Stop::Done | Stop::Time if out.bytes == 0 => {
            let e = "nothing was read: the --time limit ended before the first read; give a longer --time";
            (
                Status::Failed,
                Some(e.to_string()),
                Err(Failure::new(Exit::MeasuredFailure, o.target.display(), e)),
            )
        }
        Stop::Done | Stop::Time => match still_cached {
            // Measured, but not what --drop-cache promised: kept, and never a matrix figure.
            Some(why) => (
                Status::Partial,
                Some(why.clone()),
                Err(Failure::new(Exit::MeasuredFailure, o.target.display(), why)),
            ),
            None => (Status::Ok, None, Ok(Exit::Ok)),
        },
        Stop::Interrupted => {
            let e = if o.create.is_some() && !o.keep {
                "interrupted before the end: partial figures, scratch file removed"
            } else {
                "interrupted before the end: partial figures"
            };
            (Status::Partial, Some(e.to_string()), Ok(Exit::Interrupted))
        }
        Stop::Failed => {
            let raw = out.error.clone().unwrap_or_else(|| "read failed".into());
            let hint = match out.errno {
                Some(libc::EIO) => " (the device reported an I/O error: check dmesg)",
                Some(libc::EINVAL) if t.direct_effective => {
                    " (O_DIRECT refused this read: check --bs and --size against the alignment in begin)"
                }
                _ => "",
            };
            let e = format!("{raw}{hint}");
            (
                Status::Failed,
                Some(e.clone()),
                Err(Failure::new(Exit::Cannot, o.target.display(), e)),
            )
        }
    };
    // A read that finished keeps its figures in its sample, even when the cache made them
    // partial.
    let finished = matches!(out.stop, Stop::Done | Stop::Time) && out.bytes > 0;
    match &error {
        Some(e) if !finished => s.sample_failed(e, sinfo.clone())?,
        _ => s.sample(v.clone(), sinfo.clone())?,
    }
    let ok = status == Status::Ok;
    let summary = Summary {
        status,
        error,
        headline: ok.then(|| headline.to_string()),
        headlines: if ok { headlines } else { Vec::new() },
        values: v,
        info: std::mem::take(&mut sinfo),
    };
    let text = s.human().on().then(|| human_summary(s.name(), &summary));
    s.summary(summary)?;
    if let Some(text) = text {
        s.human().summary(&text);
    }
    exit
}

/// What a person reads at the end: how it ended, what was read in what time at what rate,
/// how many reads, and one read's latency percentiles.
fn human_summary(name: &str, s: &Summary) -> String {
    let get = |k: &str| s.values.0.get(k).and_then(Value::as_f64);
    let timed = s.info.get("stop").and_then(Value::as_str) == Some("time");
    let mut out = match (s.status, &s.error) {
        (Status::Ok, _) if timed => format!("{name}: ok, stopped at the --time limit\n"),
        (Status::Ok, _) => format!("{name}: ok\n"),
        (_, Some(e)) => format!("{name}: {e}\n"),
        (_, None) => format!("{name}: failed\n"),
    };
    let mut row = |label: &str, text: String| out.push_str(&format!("  {label:<8} {text}\n"));
    if let (Some(b), Some(secs)) = (get("read_bytes"), get("read_s")) {
        let rate = get("throughput_bytes_per_s")
            .map_or(String::new(), |r| format!(", {}", format_bytes_per_s(r)));
        row(
            "read",
            format!("{} in {}{rate}", dd_bytes(b), format_seconds(secs)),
        );
    }
    if let Some(n) = get("read_count") {
        let iops = get("reads_per_s").map_or(String::new(), |r| format!(" ({}/s)", sig3(r)));
        row("reads", format!("{n}{iops}"));
    }
    if let Some(text) = latency_text(&get) {
        row("latency", text);
    }
    out
}

/// The summary's headline and rows: random reads make four rows of the one run, the rate
/// and the latency's p50, p99 and p99.9 ("NAME: latency p99"); sequential reads one, the
/// throughput.
fn headlines(o: &Opts) -> (&'static str, Vec<Headline>) {
    if !o.random {
        return ("throughput_bytes_per_s", Vec::new());
    }
    let rows = [
        ("reads_per_s", "reads per second"),
        ("latency_p50_s", "latency p50"),
        ("latency_p99_s", "latency p99"),
        ("latency_p99_9_s", "latency p99.9"),
    ];
    (
        "reads_per_s",
        rows.iter().map(|(k, r)| Headline::new(k, r)).collect(),
    )
}
