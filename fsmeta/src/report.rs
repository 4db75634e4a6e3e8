//! The records around the phases: begin's options and target facts, and the summary for each
//! way a run ends (all three phases done, Ctrl-C, an error), after the private directory is
//! removed, with the human summary and the exit status.

use crate::cli::Opts;
use crate::phases::{Done, Phase, Stop};
use crate::scratch::{self, Scratch};
use measure::envfacts::{PathFacts, Probe};
use measure::lifecycle::Session;
use measure::parts::{Summary, Values, info};
use measure::units::format_seconds;
use measure::{Exit, Failure, Headline, Status};
use serde_json::{Map, Value, json};

/// The options as begin reports them, with the file system and the block stack under DIR
/// (blkwrite's facts for a file there: fs_type, the stack, logical block size, rotational).
pub fn begin_info(o: &Opts, seed: u64) -> Map<String, Value> {
    let mut m = info(json!({
        "dir": o.dir.display().to_string(),
        "files": o.files,
        "size_bytes": o.size,
        "dirs": o.dirs,
        "fsync": o.fsync,
        "seed": seed,
        "slices": crate::phases::BATCHES,
    }));
    let (facts, _) = PathFacts::disk_info(Probe::system().path_facts(&o.dir));
    m.extend(facts);
    m
}

/// The summary's values: how many files, each phase's rate, time and latency percentiles.
fn values(done: &[Done]) -> Values {
    let mut v = Values::new();
    let count = |p: Phase| done.iter().find(|d| d.phase == p).map_or(0, |d| d.count);
    v.set_count("files_count", u64::from(count(Phase::Create)));
    v.set_count("stat_count", u64::from(count(Phase::Stat)));
    v.set_count("unlink_count", u64::from(count(Phase::Unlink)));
    for d in done {
        let p = d.phase.as_str();
        v.set(&format!("{p}_s"), d.secs);
        if d.secs > 0.0 && d.count > 0 {
            v.set(d.phase.rate_key(), f64::from(d.count) / d.secs);
        }
        measure::latency::add_latency(&mut v, &format!("{p}_"), &d.hist);
    }
    v
}

/// How far a run that stopped got: `after 1234 of 5000 creates`.
fn how_far(o: &Opts, done: &[Done]) -> String {
    match done.last() {
        Some(d) => format!("after {} of {} {}", d.count, o.files, d.phase.plural()),
        None => "before the first file".into(),
    }
}

/// Removes the private directory, then writes the summary for the way the run ended and
/// says how it ends.
pub fn finish(
    s: &mut Session,
    o: &Opts,
    sc: &mut Scratch,
    done: &[Done],
    stop: Stop,
) -> Result<Exit, Failure> {
    let removed = sc.remove();
    let mut sinfo = info(json!({
        "private_dir": sc.path.display().to_string(),
        "phase": done.last().map(|d| d.phase.as_str()),
        "complete": matches!(stop, Stop::Done),
        "removed": removed.is_ok(),
    }));
    let vals = values(done);
    let (status, error, exit) = match (&stop, &removed) {
        (Stop::Done, Ok(())) => (Status::Ok, None, Exit::Ok),
        (Stop::Done, Err(r)) => (
            Status::Failed,
            Some(format!(
                "all phases done, but the private directory was not removed: {r}"
            )),
            Exit::Cannot,
        ),
        (Stop::Interrupted, _) => {
            let tail = match &removed {
                Ok(()) => "private directory removed".to_string(),
                Err(r) => format!("but the private directory was not removed: {r}"),
            };
            let msg = format!("interrupted {}: partial figures, {tail}", how_far(o, done));
            (Status::Partial, Some(msg), Exit::Interrupted)
        }
        (Stop::Failed { at, errno, what }, _) => {
            if let Some(e) = errno {
                sinfo.insert("errno".into(), json!(e.raw_os_error()));
            }
            let hint = errno.map_or("", scratch::hint);
            let tail = match &removed {
                Ok(()) => "private directory removed".to_string(),
                Err(r) => format!("and the private directory was not removed: {r}"),
            };
            let msg = format!(
                "{} failed {}: {}: {what}{hint}; {tail}",
                done.last().map_or("create", |d| d.phase.as_str()),
                how_far(o, done),
                sc.shown(*at)
            );
            (Status::Failed, Some(msg), Exit::Cannot)
        }
    };
    let summary = Summary {
        status,
        error: error.clone(),
        headline: (status == Status::Ok).then(|| Phase::Create.rate_key().to_string()),
        // One run, a row per phase: "NAME: create", "NAME: stat", "NAME: unlink".
        headlines: match status {
            Status::Ok => Phase::ALL
                .iter()
                .map(|p| Headline::mean(p.rate_key(), p.as_str()))
                .collect(),
            _ => Vec::new(),
        },
        values: vals,
        info: sinfo,
    };
    let text = s.human().on().then(|| human(o, &summary));
    s.summary(summary)?;
    if let (Some(t), Exit::Ok | Exit::Interrupted) = (text, exit) {
        s.human().summary(&t);
    }
    match (exit, error) {
        (Exit::Cannot, Some(e)) => Err(Failure::new(Exit::Cannot, o.dir.display(), e)),
        (code, _) => Ok(code),
    }
}

/// The summary for a person: one line per phase, its rate and latency percentiles.
fn human(o: &Opts, summary: &Summary) -> String {
    let v = &summary.values.0;
    let get = |k: &str| v.get(k).and_then(Value::as_f64);
    let mut out = format!(
        "fsmeta: {} files of {} bytes in {}{}\n",
        get("files_count").unwrap_or(0.0),
        o.size,
        o.dir.display(),
        match &summary.error {
            Some(e) => format!(": {e}"),
            None => String::new(),
        }
    );
    for p in Phase::ALL {
        let Some(rate) = get(p.rate_key()) else {
            continue;
        };
        let lat = |q: &str| {
            get(&format!("{}_latency_{q}_s", p.as_str())).map_or("-".into(), format_seconds)
        };
        out.push_str(&format!(
            "  {:<7} {:>10}  p50 {}  p99 {}  p99.9 {}  max {}\n",
            p.as_str(),
            measure::human::value_text(p.rate_key(), rate),
            lat("p50"),
            lat("p99"),
            lat("p99_9"),
            lat("max")
        ));
    }
    out
}
