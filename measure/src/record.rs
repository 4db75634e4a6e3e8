//! The record type and the strict reader (`parse_line`) of the `benchmatrix/1` contract.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// The schema string on every line this crate writes and the only one it reads.
pub const SCHEMA: &str = "benchmatrix/1";

/// Unit suffixes a key in `values` may end with, longest first so that matching is unambiguous.
pub const UNIT_SUFFIXES: [&str; 7] = [
    "_bytes_per_s",
    "_bits_per_s",
    "_per_s",
    "_bytes",
    "_ratio",
    "_count",
    "_s",
];

/// The envelope fields every line carries.
pub const ENVELOPE: [&str; 10] = [
    "schema", "tool", "version", "type", "run", "seq", "at", "host", "label", "name",
];

/// The record type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Begin,
    Sample,
    Interval,
    Summary,
}

impl Kind {
    /// The name as it appears in the `type` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Begin => "begin",
            Kind::Sample => "sample",
            Kind::Interval => "interval",
            Kind::Summary => "summary",
        }
    }
}

/// The outcome a summary reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Partial,
    Failed,
}

pub use crate::headline::{CellStat, HEADLINE_STATS, Headline};

mod de;
mod scan;
mod strict;
mod view;

use de::Info;
pub use view::{RecordView, Reuse};

/// One line of the contract. It reads itself strictly (`de`): a key twice in any object is
/// an error, `seq` is a whole number, an optional field is absent or its type, never `null`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Record {
    pub schema: String,
    pub tool: String,
    pub version: String,
    #[serde(rename = "type")]
    pub kind: Kind,
    pub run: String,
    pub seq: u64,
    pub at: String,
    pub host: String,
    pub label: String,
    pub name: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub tags: BTreeMap<String, String>,
    /// The suite invocation the run belongs to (one `./benchmatrix`); `None` for a tool run
    /// by hand, which is its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invocation: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
    /// The figures a summary headlines, each a row of the matrix: `headline` is the first's
    /// key, so that a reader that knows only `headline` sees the first row.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headlines: Vec<Headline>,
    pub values: Map<String, Value>,
    pub info: Map<String, Value>,
}

impl Record {
    /// A value as f64, when the key is present.
    pub fn value(&self, key: &str) -> Option<f64> {
        self.values.get(key).and_then(Value::as_f64)
    }

    /// The record as one compact JSON line, without the newline.
    pub fn to_line(&self) -> String {
        // Serializing a struct of strings, maps and numbers cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Why a line was rejected by [`parse_line`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

fn reject(msg: impl Into<String>) -> ParseError {
    ParseError(msg.into())
}

/// Whether `key` ends with a known unit suffix and has a name before it.
pub fn has_unit_suffix(key: &str) -> bool {
    // Every rate ends in `_s` too, so these four decide (checked for every value read).
    (key.len() > 2 && key.ends_with("_s"))
        || (key.len() > 6
            && matches!(
                &key.as_bytes()[key.len() - 6..],
                b"_bytes" | b"_ratio" | b"_count"
            ))
}

/// The unit suffix of `key` (`"_bits_per_s"` for `"throughput_bits_per_s"`), if any.
pub fn unit_suffix(key: &str) -> Option<&'static str> {
    UNIT_SUFFIXES
        .iter()
        .find(|s| key.len() > s.len() && key.ends_with(*s))
        .copied()
}

/// Reads one line strictly: an unknown schema, a missing or mistyped envelope field, a
/// `values` key without a unit suffix, a value that is not a number, a summary without
/// its status, or a key that appears twice in one object (at any depth: the envelope,
/// `values`, `info`, `tags`) all give an error that says which field and why. Unknown
/// fields are ignored.
pub fn parse_line(line: &str) -> Result<Record, ParseError> {
    read(line, Info::Keep, &mut Reuse::default()).map(RecordView::into_record)
}

/// Reads one line as [`parse_line`] does, with the same checks and messages, into a view
/// that borrows its texts from `line` and builds `info` only for a begin or a summary record
/// (one of each per run; every sample's and interval's is checked, not kept): for a reader
/// of many lines.
pub fn parse_view(line: &str) -> Result<RecordView<'_>, ParseError> {
    read(line, Info::Ends, &mut Reuse::default())
}

/// [`parse_view`] into the lists of views handed back to `reuse`.
pub fn parse_view_reusing<'a>(
    line: &'a str,
    reuse: &mut Reuse,
) -> Result<RecordView<'a>, ParseError> {
    read(line, Info::Ends, reuse)
}

fn read<'a>(line: &'a str, info: Info, reuse: &mut Reuse) -> Result<RecordView<'a>, ParseError> {
    use serde::de::DeserializeSeed;
    let line = line.trim_end_matches(['\n', '\r']);
    // The common shape by the hand scanner, anything else straight into the view by serde
    // (which refuses a repeated key as it reads), then the checks neither makes. Anything
    // serde rejects goes through the slow path below, which words the error.
    let view = match scan::view(line, info, reuse) {
        Some(view) => view,
        None => {
            let mut de = serde_json::Deserializer::from_str(line);
            let read = de::ViewSeed(info)
                .deserialize(&mut de)
                .and_then(|view| de.end().map(|()| view));
            match read {
                Ok(view) => view,
                Err(e) => {
                    return Err(parse_slow(line)
                        .unwrap_or_else(|| reject(format!("malformed record: {e}"))));
                }
            }
        }
    };
    if view.schema != SCHEMA {
        return Err(reject(format!(
            "unknown schema \"{}\": this reader understands \"{SCHEMA}\"",
            view.schema
        )));
    }
    for (key, n) in &view.values {
        check_number(key, n)?;
    }
    check_semantics(&view)?;
    Ok(view)
}

/// A key in `values` has a unit suffix.
fn check_key(key: &str) -> Result<(), ParseError> {
    if has_unit_suffix(key) {
        return Ok(());
    }
    Err(reject(format!(
        "values key \"{key}\" has no unit suffix: use one of {}",
        UNIT_SUFFIXES.join(", ")
    )))
}

/// A key in `values` has a unit suffix and its number is not negative.
fn check_number(key: &str, n: &serde_json::Number) -> Result<(), ParseError> {
    check_key(key)?;
    // Seconds, bytes, rates, ratios and counts are never below 0.
    if n.as_f64().is_some_and(|f| f < 0.0) {
        return Err(reject(format!(
            "values key \"{key}\" is {n}: a measurement in {} is never negative",
            unit_suffix(key).unwrap_or("its unit")
        )));
    }
    Ok(())
}

/// Every key in `values` has a unit suffix and every value is a number.
fn check_values(values: &Map<String, Value>) -> Result<(), ParseError> {
    for (key, val) in values {
        let Value::Number(n) = val else {
            check_key(key)?;
            return Err(reject(format!(
                "values key \"{key}\" must be a number, got {val}"
            )));
        };
        check_number(key, n)?;
    }
    Ok(())
}

/// Why the fast path rejected `line`, worded field by field; None where these checks find
/// nothing more to say than serde's own message.
fn parse_slow(line: &str) -> Option<ParseError> {
    slow_checks(line).err()
}

/// The reader that says which field is wrong and why, for lines the fast path rejects.
fn slow_checks(line: &str) -> Result<(), ParseError> {
    let v: Value =
        serde_json::from_str(line).map_err(|e| reject(format!("not a JSON object: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| reject("not a JSON object: a record is one {...} per line"))?;
    strict::check(line)?;
    match obj.get("schema") {
        None => return Err(reject("missing envelope field \"schema\"")),
        Some(Value::String(s)) if s == SCHEMA => {}
        Some(Value::String(s)) => {
            return Err(reject(format!(
                "unknown schema \"{s}\": this reader understands \"{SCHEMA}\""
            )));
        }
        Some(_) => return Err(reject("field \"schema\" must be a string")),
    }
    for field in ENVELOPE {
        let Some(val) = obj.get(field) else {
            return Err(reject(format!("missing envelope field \"{field}\"")));
        };
        let ok = if field == "seq" {
            crate::fields::seq_of(val).is_some()
        } else {
            val.is_string()
        };
        if !ok {
            let want = if field == "seq" {
                "a whole number from 0 to 2^53 - 1"
            } else {
                "a string"
            };
            return Err(reject(format!(
                "field \"{field}\" must be {want}, got {val}"
            )));
        }
    }
    if let Some(values) = obj.get("values") {
        let values = values
            .as_object()
            .ok_or_else(|| reject("field \"values\" must be an object"))?;
        check_values(values)?;
    }
    for field in ["info", "tags"] {
        if let Some(val) = obj.get(field)
            && !val.is_object()
        {
            return Err(reject(format!("field \"{field}\" must be an object")));
        }
    }
    headlines_shape(obj.get("headlines"))?;
    if let Some(v) = obj.get("invocation")
        && !v.is_string()
        && !v.is_null()
    {
        return Err(reject(format!(
            "field \"invocation\" must be a string, got {v}"
        )));
    }
    for field in ["status", "error", "headline", "invocation"] {
        if obj.get(field).is_some_and(Value::is_null) {
            return Err(reject(format!(
                "field \"{field}\" is null: leave it out, or give it"
            )));
        }
    }
    if let Some(Value::Object(tags)) = obj.get("tags")
        && let Some((k, v)) = tags.iter().find(|(_, v)| !v.is_string())
    {
        return Err(reject(format!("tag \"{k}\" must be a string, got {v}")));
    }
    let view = serde::de::DeserializeSeed::deserialize(de::ViewSeed(Info::Keep), v)
        .map_err(|e| reject(format!("malformed record: {e}")))?;
    check_semantics(&view)
}

const HEADLINES_SHAPE: &str = "field \"headlines\" must be a list of one or more {\"key\": ..., \"role\": ...}, each a non-empty string, with \"stat\", where given, \"median\" or \"mean\"";

/// `headlines`, when present: a list of one or more objects with a non-empty key and role.
fn headlines_shape(h: Option<&Value>) -> Result<(), ParseError> {
    let Some(h) = h else {
        return Ok(());
    };
    let text = |x: &Value, k: &str| {
        x.get(k)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    let stat = |x: &Value| {
        x.get("stat")
            .is_none_or(|s| s.as_str().is_some_and(|s| HEADLINE_STATS.contains(&s)))
    };
    let ok = h.as_array().is_some_and(|a| {
        !a.is_empty()
            && a.iter()
                .all(|x| text(x, "key") && text(x, "role") && stat(x))
    });
    if ok {
        Ok(())
    } else {
        Err(reject(HEADLINES_SHAPE))
    }
}

/// The rules of `headlines` a JSON Schema cannot state: on a summary with `headline` the
/// first's key, every key in `values`, no key twice.
fn check_headlines(r: &RecordView) -> Result<(), ParseError> {
    let Some(first) = r.headlines.first() else {
        return Ok(());
    };
    if r.kind != Kind::Summary || r.headline.as_deref() != Some(first.key.as_str()) {
        return Err(reject(
            "\"headlines\" belongs to a summary whose \"headline\" is its first key",
        ));
    }
    for (i, h) in r.headlines.iter().enumerate() {
        if h.key.is_empty() || h.role.is_empty() {
            return Err(reject(HEADLINES_SHAPE));
        }
        if !r.has_value(&h.key) {
            return Err(reject(format!(
                "headlines key \"{}\" names no key in \"values\"",
                h.key
            )));
        }
        if r.headlines[..i].iter().any(|o| o.key == h.key) {
            return Err(reject(format!("headlines names \"{}\" twice", h.key)));
        }
    }
    Ok(())
}

fn check_semantics(r: &RecordView) -> Result<(), ParseError> {
    for (field, text) in [("tool", &r.tool), ("run", &r.run)] {
        if text.is_empty() {
            return Err(reject(format!("field \"{field}\" is empty")));
        }
    }
    if r.invocation.as_deref() == Some("") {
        return Err(reject(
            "field \"invocation\" is empty: leave it out, or give it",
        ));
    }
    if !crate::fields::valid_at(&r.at) {
        return Err(reject(format!(
            "field \"at\" is \"{}\": expected an RFC 3339 time in UTC, such as 2026-11-30T13:00:00.123456Z",
            r.at
        )));
    }
    if let Some(h) = &r.headline
        && !r.has_value(h)
    {
        return Err(reject(format!(
            "headline \"{h}\" names no key in \"values\""
        )));
    }
    check_headlines(r)?;
    match r.kind {
        Kind::Summary => {
            let status = r
                .status
                .ok_or_else(|| reject("a summary must carry \"status\" (ok, partial, failed)"))?;
            if status != Status::Ok && r.error.is_none() {
                return Err(reject(
                    "a summary whose status is not ok must carry \"error\"",
                ));
            }
            if r.headline.is_none() && status == Status::Ok {
                return Err(reject("an ok summary must name its \"headline\""));
            }
        }
        Kind::Sample => {
            if r.error.is_some() && !r.values.is_empty() {
                return Err(reject("a failed sample (with \"error\") carries no values"));
            }
        }
        Kind::Begin | Kind::Interval => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        assert!(has_unit_suffix("rtt_s"));
        assert!(has_unit_suffix("throughput_bits_per_s"));
        assert!(!has_unit_suffix("_s"));
        assert!(!has_unit_suffix("rtt"));
        assert_eq!(unit_suffix("x_bytes_per_s"), Some("_bytes_per_s"));
        assert_eq!(unit_suffix("writes_per_s"), Some("_per_s"));
        // The quick check agrees with the list, suffix by suffix, at every length.
        for suffix in UNIT_SUFFIXES {
            for key in [
                suffix.to_string(),
                format!("x{suffix}"),
                suffix[1..].to_string(),
                format!("{suffix}x"),
                format!("a_b{}", &suffix[..suffix.len() - 1]),
            ] {
                let listed = UNIT_SUFFIXES
                    .iter()
                    .any(|s| key.len() > s.len() && key.ends_with(s));
                assert_eq!(has_unit_suffix(&key), listed, "{key}");
                assert_eq!(unit_suffix(&key).is_some(), listed, "{key}");
            }
        }
    }

    #[test]
    fn duplicate_keys_are_refused_at_every_level() {
        let base = r#"{"schema":"benchmatrix/1","tool":"t","version":"1","type":"sample","run":"r","seq":0,"at":"2026-11-30T13:00:00Z","host":"h","label":"l","name":"n","tags":{"k":"v"},"values":{"rtt_s":8.3e-6},"info":{"x":{"y":1}}}"#;
        assert!(parse_line(base).is_ok());
        for (from, to, key) in [
            (
                r#""values":{"rtt_s":8.3e-6}"#,
                r#""values":{"rtt_s":8.3e-6,"rtt_s":5}"#,
                r#""rtt_s" in "values""#,
            ),
            (r#""label":"l""#, r#""label":"l","label":"m""#, r#""label""#),
            (
                r#""tags":{"k":"v"}"#,
                r#""tags":{"k":"v","k":"w"}"#,
                r#""k" in "tags""#,
            ),
            (
                r#""info":{"x":{"y":1}}"#,
                r#""info":{"x":{"y":1,"y":2}}"#,
                r#""y" in "x""#,
            ),
            (
                r#""info":{"x":{"y":1}}"#,
                r#""info":{"x":1,"x":1}"#,
                r#""x" in "info""#,
            ),
            (
                r#""host":"h""#,
                r#""host":"h","extra":1,"extra":2"#,
                r#""extra""#,
            ),
            (
                r#""values":{"rtt_s":8.3e-6}"#,
                r#""values":{"rtt_s":8.3e-6,"rtt\u005fs":5}"#,
                r#""rtt_s" in "values""#,
            ),
        ] {
            let line = base.replace(from, to);
            let err = parse_line(&line).expect_err(&line).to_string();
            assert!(
                err.contains(&format!("duplicate key {key}")),
                "{line}: {err}"
            );
        }
        // Keys of the same name in different objects are fine.
        let nested = base.replace(
            r#""info":{"x":{"y":1}}"#,
            r#""info":{"rtt_s":1,"name":{"name":2}}"#,
        );
        assert!(parse_line(&nested).is_ok(), "{nested}");
        // An object with many keys (each looked up in the object as it is built), its last one
        // repeated.
        let many: Vec<String> = (0..100).map(|i| format!(r#""k{i}":{i}"#)).collect();
        let info = format!(r#""info":{{{},"k7":0}}"#, many.join(","));
        let line = base.replace(r#""info":{"x":{"y":1}}"#, &info);
        let err = parse_line(&line)
            .expect_err("100 keys, one twice")
            .to_string();
        assert!(err.contains(r#"duplicate key "k7" in "info""#), "{err}");
        let line = base.replace(
            r#""info":{"x":{"y":1}}"#,
            &format!(r#""info":{{{}}}"#, many.join(",")),
        );
        assert!(parse_line(&line).is_ok());
    }
}
