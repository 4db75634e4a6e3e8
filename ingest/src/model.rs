//! What a converter makes of its source (the records to write, in order, with the source's
//! own times), and the helpers that carry the source's figures over exactly.

use measure::parts::Values;
use measure::{Exit, Failure, Status};
use serde_json::{Map, Number, Value};
use std::time::{Duration, SystemTime};

/// The kind of one converted record.
#[derive(Clone, Debug, PartialEq)]
pub enum Kind {
    Sample,
    /// A sample that failed (a lost probe): no values, the reason.
    Failed(String),
    Interval,
    /// The summary that closes a run: the records since the previous `Ends` (or the start)
    /// and this summary are one run, with a run id and a begin of their own, named by this
    /// record's series. A source with several measurements (hyperfine's commands, fping's
    /// hosts) closes each with one; when the records end with an `Ends`, [`Converted::end`]
    /// is not written and only says how ingest exits.
    Ends(Box<End>),
}

/// One record to write besides begin and the summary.
#[derive(Clone, Debug)]
pub struct Out {
    pub kind: Kind,
    /// The series it belongs to (a fio job and direction, a hyperfine command, a pinged
    /// host): with several series, each gets a row name of its own.
    pub series: Option<String>,
    /// When the source measured it, RFC 3339 UTC; `None` is the time of the conversion.
    pub at: Option<String>,
    pub values: Values,
    pub info: Map<String, Value>,
}

impl Out {
    pub fn new(kind: Kind, values: Values, info: Map<String, Value>) -> Self {
        Out {
            kind,
            series: None,
            at: None,
            values,
            info,
        }
    }

    pub fn series(mut self, s: &str) -> Self {
        self.series = Some(s.to_string());
        self
    }

    pub fn at(mut self, at: Option<String>) -> Self {
        self.at = at;
        self
    }
}

/// The end of a conversion: the summary, and how ingest exits.
#[derive(Clone, Debug, PartialEq)]
pub struct End {
    pub status: Status,
    pub error: Option<String>,
    pub headline: Option<String>,
    pub values: Values,
    pub info: Map<String, Value>,
    pub at: Option<String>,
    /// Ok; 1 when the source measured a failure or ends early (said on stderr as well).
    pub exit: Exit,
    /// What the source holds that is read with a doubt (a command without times): added to
    /// the summary's `info.warnings` and said on stderr.
    pub warnings: Vec<String>,
}

impl End {
    /// An ok end with `headline` among `values`.
    pub fn ok(headline: &str, values: Values, info: Map<String, Value>) -> Self {
        End {
            status: Status::Ok,
            error: None,
            headline: Some(headline.to_string()),
            values,
            info,
            at: None,
            exit: Exit::Ok,
            warnings: Vec::new(),
        }
    }

    /// An end that is not ok: the source failed, or its output ends early.
    pub fn not_ok(status: Status, error: String, values: Values, info: Map<String, Value>) -> Self {
        End {
            status,
            error: Some(error),
            headline: None,
            values,
            info,
            at: None,
            exit: Exit::MeasuredFailure,
            warnings: Vec::new(),
        }
    }
}

/// Everything one source file becomes.
#[derive(Clone, Debug)]
pub struct Converted {
    /// The source tool (`iperf3`, `fio`...), the records' `tool`.
    pub tool: String,
    /// Its version as the source says, else `unknown`.
    pub version: String,
    /// The default row name of begin and the summary (and of every record with one series).
    pub name: String,
    /// The prefix of a series' default row name (`fio` for `fio job1 read`).
    pub prefix: String,
    pub begin: Map<String, Value>,
    pub begin_at: Option<String>,
    pub records: Vec<Out>,
    pub end: End,
}

/// A finite number of a JSON value, copied as it is (integers stay integers).
pub fn number(v: Option<&Value>) -> Option<&Number> {
    match v {
        Some(Value::Number(n)) => Some(n),
        _ => None,
    }
}

/// Sets `key` to the source's number exactly as it is (the headline equals the source's
/// figure to the last digit); a negative number, which no unit of a value may be, is left out.
pub fn copy(values: &mut Values, key: &str, v: Option<&Value>) {
    if let Some(n) = number(v)
        && n.as_f64().is_some_and(|f| f >= 0.0)
    {
        values.0.insert(key.to_string(), Value::Number(n.clone()));
    }
}

/// A decimal number's text times 10^`exp10`, rounded once (so `0.044` ms is the f64 nearest
/// to 0.000044 s, not 0.044 / 1000 rounded twice).
pub fn scale_text(text: &str, exp10: i32) -> Option<f64> {
    let (mantissa, e) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], text[i + 1..].parse::<i32>().ok()?),
        None => (text, 0),
    };
    if mantissa.is_empty()
        || !mantissa
            .bytes()
            .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-' || b == b'+')
    {
        return None;
    }
    let f: f64 = format!("{mantissa}e{}", e.checked_add(exp10)?)
        .parse()
        .ok()?;
    f.is_finite().then_some(f)
}

/// A JSON number scaled by 10^`exp10` (milliseconds or nanoseconds to seconds).
pub fn scaled(v: Option<&Value>, exp10: i32) -> Option<f64> {
    let n = number(v)?;
    // The source's own digits where its f64 prints shorter (see `literal`).
    let text = v
        .and_then(crate::literal::text_of)
        .unwrap_or_else(|| n.to_string());
    scale_text(&text, exp10)
}

/// Sets `key` to the source's number scaled by 10^`exp10`, when it is there and not negative.
pub fn copy_scaled(values: &mut Values, key: &str, v: Option<&Value>, exp10: i32) {
    if let Some(f) = scaled(v, exp10).filter(|f| *f >= 0.0) {
        values.set(key, f);
    }
}

/// Unix time in whole seconds plus an offset in seconds, rounded to the microsecond.
pub fn at_offset(secs: u64, offset: f64) -> Option<String> {
    if !offset.is_finite() || offset < 0.0 || secs > 253_402_300_799 {
        return None;
    }
    let micros = (offset * 1e6).round() as u64;
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros);
    Some(humantime::format_rfc3339_micros(t).to_string())
}

/// Unix time given as the text of a decimal number (`1796173612.134843`), exactly to the
/// microsecond.
pub fn at_unix_text(text: &str) -> Option<String> {
    let (whole, frac) = text.split_once('.').unwrap_or((text, ""));
    let secs: u64 = whole.parse().ok()?;
    if secs > 253_402_300_799 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut micros = 0u32;
    for i in 0..6 {
        micros = micros * 10 + frac.as_bytes().get(i).map_or(0, |b| u32::from(b - b'0'));
    }
    let t =
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_micros(micros.into());
    Some(humantime::format_rfc3339_micros(t).to_string())
}

/// The failure for input that is not what its format needs: `FILE:LINE: what`, exit 2.
pub fn bad(place: &str, what: impl std::fmt::Display) -> Failure {
    Failure::usage(format!("{place}: {what}"))
}

/// A line as an error message quotes it: at most 80 characters.
pub fn clip(line: &str) -> String {
    match line.char_indices().nth(80) {
        Some((i, _)) => format!("{}...", &line[..i]),
        None => line.to_string(),
    }
}

/// An object's member as an object, or the failure naming what was expected.
pub fn object<'a>(
    v: &'a Value,
    key: &str,
    place: impl Fn() -> String,
) -> Result<&'a Map<String, Value>, Failure> {
    v.get(key)
        .and_then(Value::as_object)
        .ok_or_else(|| bad(&place(), format!("expected an object \"{key}\"")))
}

/// Copies the scalar members of `from` into `info` (parameters, names, flags).
pub fn scalars(info: &mut Map<String, Value>, from: Option<&Value>, prefix: &str) {
    if let Some(Value::Object(m)) = from {
        for (k, v) in m {
            if !v.is_object() && !v.is_array() {
                info.insert(format!("{prefix}{k}"), v.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seventeen_digits_scale_once() {
        let text = r#"{"cpu":{"p":3.6047458169646678}}"#;
        let v: Value = serde_json::from_str(text).expect("JSON");
        crate::literal::remember(text, &v);
        let scaled = scaled(Some(&v["cpu"]["p"]), -2).expect("scaled");
        assert_eq!(scaled, "3.6047458169646678e-2".parse::<f64>().expect("f64"));
        assert_eq!(scaled, 0.036047458169646676);
    }

    #[test]
    fn scaling_rounds_once() {
        assert_eq!(scale_text("0.044", -3), Some(0.000044));
        assert_eq!(
            scale_text("8.298197418114556", -3),
            Some(0.008298197418114556)
        );
        assert_eq!(scale_text("1e-5", -3), Some(1e-8));
        assert_eq!(scale_text("3441.732422", -9), Some(3.441732422e-6));
        assert_eq!(scale_text("abc", -3), None);
        assert_eq!(scale_text("", -3), None);
    }

    #[test]
    fn unix_times_become_rfc3339_micros() {
        assert_eq!(
            at_unix_text("1796173612.134843").as_deref(),
            Some("2026-12-02T01:06:52.134843Z")
        );
        assert_eq!(
            at_unix_text("1796173612.56152").as_deref(),
            Some("2026-12-02T01:06:52.561520Z")
        );
        assert_eq!(
            at_offset(1796173584, 1.009767).as_deref(),
            Some("2026-12-02T01:06:25.009767Z")
        );
        assert_eq!(at_unix_text("x"), None);
    }
}
