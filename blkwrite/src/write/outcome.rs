//! The records after the write phase: its figures, the sample, the read-back check, and the
//! summary (with the human one and the exit status) for each way a run ends.

use crate::blk::engine::{Flush, Outcome, Plan, Stop};
use crate::blk::pattern::Pool;
use crate::blk::records;
use crate::blk::target::Target;
use crate::write::cli::Opts;
use crate::write::ddlines;
use crate::write::human;
use crate::write::verify;
use measure::lifecycle::Session;
use measure::parts::{Summary, Values};
use measure::{Exit, Failure, Status};
use serde_json::{Map, Value, json};

/// What a run works on once set up: the options, the open target, the data and the plan.
pub(crate) struct Job<'a> {
    pub o: &'a Opts,
    pub t: &'a Target,
    pub pool: &'a Pool,
    pub plan: &'a Plan,
}

/// The write phase's figures: bytes, counts, the phases' times, throughput, latency.
fn write_values(out: &Outcome, plan: &Plan) -> Values {
    let total = out.io_s + out.flush_s;
    let mut v = Values::new()
        .with_count("written_bytes", out.bytes)
        .with_count("write_count", out.ops)
        .with_count("sync_count", out.sync_count)
        .with("write_s", out.io_s)
        .with("flush_s", out.flush_s)
        .with("total_s", total);
    if total > 0.0 {
        v.set("throughput_bytes_per_s", out.bytes as f64 / total);
        v.set("writes_per_s", out.ops as f64 / total);
    }
    if out.io_s > 0.0 {
        v.set("write_phase_bytes_per_s", out.bytes as f64 / out.io_s);
    }
    if matches!(plan.flush, Flush::Every(_)) {
        v.set("periodic_flush_s", out.periodic_flush_s);
    }
    records::add_latency(&mut v, "", &out.hist);
    v
}

/// The sample and the summary for the way the write phase ended (then the read-back, with
/// --verify, when it wrote all it was to or ran out of time).
pub(crate) fn finish(s: &mut Session, job: &Job, out: Outcome) -> Result<Exit, Failure> {
    let (o, t, plan) = (job.o, job.t, job.plan);
    let values = write_values(&out, plan);
    let sinfo = records::phase_info(&out, plan, t, ("complete", json!(out.ops == plan.blocks)));
    match out.stop {
        Stop::Done | Stop::Time if out.bytes == 0 => {
            // A run that wrote nothing measured nothing: never an ok figure.
            let msg = nothing_written(out.stop, o);
            s.sample_failed(&msg, sinfo.clone())?;
            fail_summary(s, job, &msg, values, sinfo)?;
            Err(Failure::new(Exit::MeasuredFailure, o.target.display(), msg))
        }
        Stop::Done | Stop::Time => {
            s.sample(values.clone(), sinfo.clone())?;
            if o.verify {
                let flushed = plan.flush != Flush::None || o.dsync;
                return verify_phase(s, job, out.ops, flushed, values, sinfo);
            }
            ok_summary(s, job, "throughput_bytes_per_s", values, sinfo)?;
            Ok(Exit::Ok)
        }
        Stop::Interrupted => {
            // The file goes (when blkwrite made it and --keep was not given) as `t` is dropped.
            let msg = if t.cleanup.removes() {
                "interrupted before the end: partial figures, test file removed"
            } else {
                "interrupted before the end: partial figures"
            };
            s.sample_failed(msg, sinfo.clone())?;
            fail_summary(s, job, msg, values, sinfo)?;
            Ok(Exit::Interrupted)
        }
        Stop::OutputGone => Ok(Exit::Ok),
        Stop::Failed => {
            let msg = failure_text(&out, t.direct_effective);
            s.sample_failed(&msg, sinfo.clone())?;
            fail_summary(s, job, &msg, values, sinfo)?;
            Err(Failure::new(Exit::Cannot, o.target.display(), msg))
        }
    }
}

/// Why a write phase that ended without an error wrote no byte.
fn nothing_written(stop: Stop, o: &Opts) -> String {
    match (stop, o.time) {
        (Stop::Time, Some(t)) => format!(
            "nothing was written: the --time limit ({}) ended before the first write; give a longer --time",
            measure::units::format_seconds(t.as_secs_f64())
        ),
        _ => "nothing was written".into(),
    }
}

/// A failed write phase's error, with a hint for the errors a person can act on.
fn failure_text(out: &Outcome, direct: bool) -> String {
    let raw = out.error.clone().unwrap_or_else(|| "write failed".into());
    let hint = match out.errno {
        Some(libc::ENOSPC) => " (the target is full: give a smaller --size)",
        Some(libc::EROFS) => " (the target is read-only)",
        Some(libc::EIO) => " (the device reported an I/O error: check dmesg)",
        Some(libc::EINVAL) if direct => {
            " (O_DIRECT refused this write: check --bs and --size against the alignment in begin)"
        }
        _ => "",
    };
    format!("{raw}{hint}")
}

/// Writes the summary record and, for a person watching, blkwrite's own summary of it; in
/// dd's form, dd's closing lines instead, on stderr whoever watches (as dd prints them).
fn summarize(s: &mut Session, job: &Job, summary: Summary) -> Result<(), Failure> {
    if let Some(dd) = job.o.dd {
        let get = |k: &str| summary.values.0.get(k).and_then(Value::as_f64);
        let written = get("written_bytes").unwrap_or(0.0) as u64;
        let text = ddlines::lines(
            dd.status,
            written,
            job.plan.bs,
            get("total_s").unwrap_or(0.0),
        );
        s.summary(summary)?;
        if s.human().on() {
            s.human().summary(&text);
        } else if !text.is_empty() {
            let _ = std::io::Write::write_all(&mut std::io::stderr(), text.as_bytes());
        }
        return Ok(());
    }
    let text = s
        .human()
        .on()
        .then(|| human::summary(s.name(), job.o, &summary));
    s.summary(summary)?;
    if let Some(text) = text {
        s.human().summary(&text);
    }
    Ok(())
}

fn ok_summary(
    s: &mut Session,
    job: &Job,
    headline: &str,
    values: Values,
    sinfo: Map<String, Value>,
) -> Result<(), Failure> {
    let summary = Summary {
        status: Status::Ok,
        error: None,
        headline: Some(headline.into()),
        headlines: Vec::new(),
        values,
        info: sinfo,
    };
    summarize(s, job, summary)
}

fn fail_summary(
    s: &mut Session,
    job: &Job,
    msg: &str,
    values: Values,
    sinfo: Map<String, Value>,
) -> Result<(), Failure> {
    let summary = Summary {
        status: Status::Failed,
        error: Some(msg.to_string()),
        headline: None,
        headlines: Vec::new(),
        values,
        info: sinfo,
    };
    summarize(s, job, summary)
}

/// A target shorter than what was to be checked: both sizes, and what its bytes held.
fn short_text(o: &Opts, size: u64, have: u64, c: &verify::Checked) -> String {
    let found = match c.first_bad_offset {
        None => format!("the {} bytes it has match", c.bytes),
        Some(off) => format!(
            "{} of the {} blocks it has differ, the first at offset {off}",
            c.bad_blocks, c.blocks
        ),
    };
    let asked = match (o.size, o.count) {
        (None, Some(n)) => format!("-c {n} x --bs {}", crate::blk::lines::compact_size(o.bs)),
        _ => "--size".into(),
    };
    format!(
        "verify: {} is {have} bytes, shorter than {asked}: {size} bytes ({}); {found}, and the last {} bytes are missing",
        o.target.display(),
        crate::blk::lines::compact_size(size),
        size - have.min(size)
    )
}

/// Reads back the first `written` blocks and writes the summary with what it found.
pub(crate) fn verify_phase(
    s: &mut Session,
    job: &Job,
    written: u64,
    flushed: bool,
    mut values: Values,
    mut sinfo: Map<String, Value>,
) -> Result<Exit, Failure> {
    let (o, t) = (job.o, job.t);
    let direct = t.direct_effective;
    if s.human().on() {
        let what = measure::units::format_bytes((written * job.plan.bs).min(job.plan.size) as f64);
        s.human()
            .progress(&format!("blkwrite: reading {what} back to verify it"));
    }
    let checked = verify::check(&t.path, direct, flushed, job.pool, job.plan, written);
    s.human().clear();
    match checked {
        Ok(c) => {
            values.set_count("verified_bytes", c.bytes);
            values.set_count("verify_bad_block_count", c.bad_blocks);
            values.set("verify_s", c.secs);
            if c.secs > 0.0 {
                values.set("verify_bytes_per_s", c.bytes as f64 / c.secs);
            }
            sinfo.insert("verify_source".into(), json!(c.source));
            if let Some(off) = c.first_bad_offset {
                sinfo.insert("verify_first_bad_offset".into(), json!(off));
            }
            let headline = if o.verify_only {
                "verify_bytes_per_s"
            } else {
                "throughput_bytes_per_s"
            };
            if let Some(have) = c.short_of {
                sinfo.insert("target_bytes".into(), json!(have));
                let msg = short_text(o, job.plan.size, have, &c);
                fail_summary(s, job, &msg, values, sinfo)?;
                return Err(Failure::new(Exit::MeasuredFailure, o.target.display(), msg));
            }
            if c.bad_blocks > 0 {
                let msg = format!(
                    "verify: {} of {} blocks differ from what was written, the first at offset {}",
                    c.bad_blocks,
                    c.blocks,
                    c.first_bad_offset.unwrap_or(0)
                );
                fail_summary(s, job, &msg, values, sinfo)?;
                return Err(Failure::new(Exit::MeasuredFailure, o.target.display(), msg));
            }
            ok_summary(s, job, headline, values, sinfo)?;
            Ok(Exit::Ok)
        }
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            fail_summary(s, job, "interrupted while verifying", values, sinfo)?;
            Ok(Exit::Interrupted)
        }
        Err(e) => {
            let msg = format!("verify: reading {} back: {e}", o.target.display());
            fail_summary(s, job, &msg, values, sinfo)?;
            Err(Failure::new(Exit::Cannot, "verify", e))
        }
    }
}
