//! Writing a conversion through the session: the source tool's envelope, the source's times
//! as `at`, a row name per series, `info.converted_by` on every line, and a run of its own
//! (begin, records, summary) for each part the converter closes with `Kind::Ends`.

use crate::input::Input;
use crate::model::{Converted, End, Kind, Out};
use measure::lifecycle::Session;
use measure::parts::Summary;
use measure::{Exit, Failure};
use serde_json::{Map, Value, json};
use std::io::Write;

/// What every converted line's info carries.
fn stamp(info: &mut Map<String, Value>) {
    info.insert("converted_by".into(), json!("ingest"));
    info.insert("ingest_version".into(), json!(env!("CARGO_PKG_VERSION")));
}

/// Writes the converted runs. Each record is named by the session: `--name` (with the
/// series when there are several), else the series' own default.
pub fn write(c: Converted, input: &Input, s: &mut Session) -> Result<Exit, Failure> {
    let mut series: Vec<&str> = c
        .records
        .iter()
        .filter_map(|r| r.series.as_deref())
        .collect();
    series.sort_unstable();
    series.dedup();
    let several = series.len() > 1;
    s.reporter().set_tool(&c.tool, &c.version);
    // Each `Ends` closes a run of its own; what follows the last one is closed by c.end.
    let mut start = 0;
    for (i, r) in c.records.iter().enumerate() {
        if let Kind::Ends(end) = &r.kind {
            let part = Part {
                records: &c.records[start..i],
                end,
                series: r.series.as_deref(),
                first: start == 0,
            };
            run(&c, &part, several, input, s)?;
            start = i + 1;
        }
    }
    if start == 0 || start < c.records.len() {
        let part = Part {
            records: &c.records[start..],
            end: &c.end,
            series: None,
            first: start == 0,
        };
        run(&c, &part, several, input, s)?;
    }
    match (c.end.exit, c.end.error) {
        (Exit::Ok, _) => Ok(Exit::Ok),
        (code, Some(e)) if e.starts_with(&input.name) => Err(Failure {
            code,
            message: Some(e),
        }),
        (code, Some(e)) => Err(Failure {
            code,
            message: Some(format!("{}: {e}", input.name)),
        }),
        (code, None) => Ok(code),
    }
}

/// One run to write: its records, the summary that closes it and the series it is of.
struct Part<'a> {
    records: &'a [Out],
    end: &'a End,
    series: Option<&'a str>,
    /// The first run of the source (the others start with a fresh run id).
    first: bool,
}

/// Writes one run: begin, its records, its summary (with the warnings, said on stderr too).
fn run(
    c: &Converted,
    p: &Part<'_>,
    several: bool,
    input: &Input,
    s: &mut Session,
) -> Result<(), Failure> {
    if !p.first {
        s.next_run();
    }
    s.name_part(&c.name, &c.prefix, p.series, several);
    let mut begin = c.begin.clone();
    stamp(&mut begin);
    begin.insert("source".into(), json!(input.name));
    // Where the source dates only its measurements, begin and the summary take the first
    // and the last of their times.
    let first = p.records.iter().find_map(|r| r.at.clone());
    let last = p.records.iter().rev().find_map(|r| r.at.clone());
    let begin_at = match p.first {
        true => c.begin_at.clone().or(first),
        false => first.or(c.begin_at.clone()),
    };
    s.reporter().set_at(begin_at);
    s.begin_as_is(begin)?;
    for r in p.records {
        s.name_part(&c.name, &c.prefix, r.series.as_deref(), several);
        s.reporter().set_at(r.at.clone());
        let mut info = r.info.clone();
        stamp(&mut info);
        match &r.kind {
            Kind::Sample => s.sample(r.values.clone(), info)?,
            Kind::Failed(why) => s.sample_failed(why, info)?,
            Kind::Interval => s.interval(r.values.clone(), info)?,
            Kind::Ends(_) => {}
        }
    }
    let e = p.end;
    s.name_part(&c.name, &c.prefix, p.series, several);
    s.reporter().set_at(e.at.clone().or(last));
    let mut info = e.info.clone();
    stamp(&mut info);
    if !e.warnings.is_empty() {
        let mut all = match info.remove("warnings") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        };
        for w in &e.warnings {
            let _ = writeln!(std::io::stderr(), "ingest: {}: warning: {w}", input.name);
            all.push(json!(w));
        }
        info.insert("warnings".into(), Value::Array(all));
    }
    s.summary(Summary {
        status: e.status,
        error: e.error.clone(),
        headline: e.headline.clone(),
        headlines: Vec::new(),
        values: e.values.clone(),
        info,
    })
}
