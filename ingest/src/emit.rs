//! Writing a conversion through the session: the source tool's envelope, the source's times
//! as `at`, a row name per series, `info.converted_by` on every line.

use crate::input::Input;
use crate::model::{Converted, Kind, Out};
use measure::lifecycle::Session;
use measure::writer::Summary;
use measure::{Exit, Failure};
use serde_json::{Map, Value, json};

/// What every converted line's info carries.
fn stamp(info: &mut Map<String, Value>) {
    info.insert("converted_by".into(), json!("ingest"));
    info.insert("ingest_version".into(), json!(env!("CARGO_PKG_VERSION")));
}

/// The row name of a series: the given name (with the series when there are several), else
/// the series' own default.
fn row(c: &Converted, given: Option<&str>, several: bool, r: &Out) -> String {
    let join = |a: &str, b: &str| {
        if a.is_empty() {
            b.to_string()
        } else {
            format!("{a} {b}")
        }
    };
    match (&r.series, given) {
        (None, Some(g)) => g.to_string(),
        (None, None) => c.name.clone(),
        (Some(_), Some(g)) if !several => g.to_string(),
        (Some(s), Some(g)) => join(g, s),
        (Some(_), None) if !several => c.name.clone(),
        (Some(s), None) => join(&c.prefix, s),
    }
}

pub fn write(c: Converted, input: &Input, s: &mut Session) -> Result<Exit, Failure> {
    let given = s.name_given().then(|| s.name().to_string());
    let mut series: Vec<&str> = c
        .records
        .iter()
        .filter_map(|r| r.series.as_deref())
        .collect();
    series.sort_unstable();
    series.dedup();
    let several = series.len() > 1;
    let base = given.clone().unwrap_or_else(|| c.name.clone());
    s.reporter().set_tool(c.tool, &c.version);
    s.reporter().set_name(&base);
    let mut begin = c.begin.clone();
    stamp(&mut begin);
    begin.insert("source".into(), json!(input.name));
    // Where the source dates only its measurements, begin and the summary take the first
    // and the last of their times.
    let first = c.records.iter().find_map(|r| r.at.clone());
    let last = c.records.iter().rev().find_map(|r| r.at.clone());
    s.reporter().set_at(c.begin_at.clone().or(first));
    s.begin_as_is(begin)?;
    for r in &c.records {
        let name = row(&c, given.as_deref(), several, r);
        s.reporter().set_name(&name);
        s.reporter().set_at(r.at.clone());
        let mut info = r.info.clone();
        stamp(&mut info);
        match &r.kind {
            Kind::Sample => s.sample(r.values.clone(), info)?,
            Kind::Failed(why) => s.sample_failed(why, info)?,
            Kind::Interval => s.interval(r.values.clone(), info)?,
        }
    }
    s.reporter().set_name(&base);
    s.reporter().set_at(c.end.at.clone().or(last));
    let mut info = c.end.info.clone();
    stamp(&mut info);
    s.summary(Summary {
        status: c.end.status,
        error: c.end.error.clone(),
        headline: c.end.headline.clone(),
        values: c.end.values.clone(),
        info,
    })?;
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
