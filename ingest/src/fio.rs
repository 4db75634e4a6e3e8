//! fio `--output-format=json` and `json+` output (fio 2.x's microsecond latencies and 3.x's
//! nanosecond ones): a sample per job and direction with IOPS, bandwidth and completion
//! latency percentiles in seconds; text fio prints before its JSON is skipped.

use crate::input::Input;
use crate::json::{Doc, document};
use crate::model::{Converted, End, Kind, Out, at_offset, bad, copy, copy_scaled, number, scalars};
use measure::parts::Values;
use measure::{Failure, Status};
use serde_json::{Map, Value, json};

const WHAT: &str = "fio --output-format=json output";

/// The key of the entries fio 2.x to 3.1 pad a percentile list with.
const PADDING: &str = "0.00";

/// The directions fio reports, with the key of their operations per second.
const DIRECTIONS: [(&str, &str); 3] = [
    ("read", "reads_per_s"),
    ("write", "writes_per_s"),
    ("trim", "trims_per_s"),
];

/// fio's JSON, after whatever text fio printed before it (job layout, warnings).
pub fn convert(input: &Input) -> Result<Converted, Failure> {
    let (doc, start, trailing) = read(input)?;
    let place = input.place(input.line_of(start));
    let jobs = doc
        .get("jobs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad(&place, format!("no \"jobs\" array: expected {WHAT}")))?;
    let at = match doc.get("timestamp_ms").and_then(Value::as_u64) {
        Some(ms) => at_offset(ms / 1000, (ms % 1000) as f64 / 1000.0),
        None => doc
            .get("timestamp")
            .and_then(Value::as_u64)
            .and_then(|s| at_offset(s, 0.0)),
    };
    let mut begin = Map::new();
    for key in ["time", "global options"] {
        if let Some(v) = doc.get(key) {
            begin.insert(key.replace(' ', "_"), v.clone());
        }
    }
    let mut acc = Jobs::default();
    for (j, job) in jobs.iter().enumerate() {
        acc.job(j, job, &at, &place)?;
    }
    let version = doc
        .get("fio version")
        .and_then(Value::as_str)
        .map_or("unknown", |v| v.trim_start_matches("fio-"))
        .to_string();
    let name = match acc.records.as_slice() {
        [r] => format!("fio {}", r.series.as_deref().unwrap_or("")),
        _ => "fio".to_string(),
    };
    let mut end = acc.end(jobs.len());
    if let Some(line) = trailing {
        // fio's own messages after its JSON (2>&1): kept as a warning, not read.
        let w = format!("{}: text after fio's JSON, not read", input.place(line));
        end.info.insert("warning".into(), json!(w));
    }
    end.at = at.clone();
    Ok(Converted {
        tool: "fio".into(),
        version,
        name,
        prefix: "fio".into(),
        begin,
        begin_at: at,
        records: acc.records,
        end,
    })
}

/// The JSON document, where it starts, and the line where text follows it, if any.
fn read(input: &Input) -> Result<(Value, usize, Option<usize>), Failure> {
    let start = json_start(&input.text).ok_or_else(|| {
        bad(
            &input.place(1),
            format!("no line starts a JSON object: expected {WHAT}"),
        )
    })?;
    match document(input, start, WHAT)? {
        Doc::Whole(v, trailing) => Ok((v, start, trailing)),
        Doc::Truncated(_, line) => Err(bad(
            &input.place(line),
            format!("the input ends early: expected all of {WHAT}"),
        )),
    }
}

/// The samples of the jobs read so far, their totals per direction, and their errors.
#[derive(Default)]
struct Jobs {
    records: Vec<Out>,
    totals: Values,
    first: Option<&'static str>,
    failed: Vec<String>,
}

impl Jobs {
    /// Job `j`'s samples: one per direction that did I/O.
    fn job(
        &mut self,
        j: usize,
        job: &Value,
        at: &Option<String>,
        place: &str,
    ) -> Result<(), Failure> {
        let jobname = job
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("job")
            .to_string();
        let mut jinfo = Map::new();
        jinfo.insert("job".into(), json!(jobname));
        scalars(&mut jinfo, job.get("job options"), "option_");
        for key in [
            "groupid", "error", "usr_cpu", "sys_cpu", "ctx", "majf", "minf",
        ] {
            if let Some(v) = job.get(key) {
                jinfo.insert(key.into(), v.clone());
            }
        }
        if job.get("error").and_then(Value::as_i64).unwrap_or(0) != 0 {
            self.failed
                .push(format!("job {jobname} ended with error {}", job["error"]));
        }
        for (dir, ops_key) in DIRECTIONS {
            let Some(d) = job.get(dir).filter(|d| d.is_object()) else {
                continue;
            };
            let ios = d.get("total_ios").and_then(Value::as_u64).unwrap_or(0);
            let bytes = d
                .get("io_bytes")
                .and_then(Value::as_u64)
                .or_else(|| d.get("io_kbytes").and_then(Value::as_u64).map(|k| k * 1024));
            if ios == 0 && bytes.unwrap_or(0) == 0 {
                continue;
            }
            let values = direction(d, ops_key);
            if !values.0.contains_key(ops_key) {
                return Err(bad(
                    place,
                    format!("job {j} ({jobname}) {dir}: no \"iops\": expected {WHAT}"),
                ));
            }
            for (k, v) in &values.0 {
                if k == ops_key {
                    add(&mut self.totals, k, v);
                } else if k == "throughput_bytes_per_s" || k == "io_bytes" {
                    add(&mut self.totals, &format!("{dir}_{k}"), v);
                }
            }
            self.first.get_or_insert(ops_key);
            let mut info = jinfo.clone();
            info.insert("direction".into(), json!(dir));
            self.records.push(
                Out::new(Kind::Sample, values, info)
                    .series(&format!("{jobname} {dir}"))
                    .at(at.clone()),
            );
        }
        Ok(())
    }

    /// The summary: one job and direction's figures as they are, else the totals.
    fn end(&self, jobs: usize) -> End {
        let end = match (self.first, self.records.as_slice()) {
            (Some(key), [r]) => End::ok(key, r.values.clone(), r.info.clone()),
            (Some(key), _) => End::ok(key, self.totals.clone(), json_info(jobs)),
            (None, _) => End::not_ok(
                Status::Failed,
                "no job did any I/O".into(),
                Values::new(),
                json_info(jobs),
            ),
        };
        if self.failed.is_empty() {
            return end;
        }
        let why = format!("fio: {}", self.failed.join("; "));
        End::not_ok(Status::Partial, why, end.values, end.info)
    }
}

/// Adds `v` to the total under `key`: integers stay integers (bytes), others are f64.
fn add(totals: &mut Values, key: &str, v: &Value) {
    match totals.0.get(key) {
        None => drop(totals.0.insert(key.to_string(), v.clone())),
        Some(t) => match (t.as_u64(), v.as_u64()) {
            (Some(a), Some(b)) => totals.set_count(key, a.saturating_add(b)),
            _ => totals.set(key, t.as_f64().unwrap_or(0.0) + v.as_f64().unwrap_or(0.0)),
        },
    }
}

fn json_info(jobs: usize) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("jobs".into(), json!(jobs));
    m
}

/// The byte offset of the first line that starts with `{`.
fn json_start(text: &str) -> Option<usize> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with('{') {
            return Some(at + (line.len() - line.trim_start().len()));
        }
        at += line.len();
    }
    None
}

/// One direction's figures: IOPS as `ops_key`, bandwidth (bw_bytes, or fio 2.x's KiB/s bw),
/// bytes, runtime, completion latency and its percentiles in seconds.
fn direction(d: &Value, ops_key: &str) -> Values {
    let mut v = Values::new();
    copy(&mut v, ops_key, d.get("iops"));
    match d.get("bw_bytes") {
        Some(b) => copy(&mut v, "throughput_bytes_per_s", Some(b)),
        None => {
            if let Some(kib) = number(d.get("bw")).and_then(|n| n.as_u64()) {
                v.set_count("throughput_bytes_per_s", kib * 1024);
            }
        }
    }
    // fio 2.x wrote KiB under "io_bytes" (and had neither io_kbytes nor bw_bytes); fio 3.x
    // writes bytes there, with io_kbytes beside it.
    let kib_named_bytes = d.get("io_kbytes").is_none() && d.get("bw_bytes").is_none();
    match d.get("io_bytes") {
        Some(k) if kib_named_bytes => {
            if let Some(k) = number(Some(k)).and_then(|n| n.as_u64()) {
                v.set_count("io_bytes", k * 1024);
            }
        }
        Some(b) => copy(&mut v, "io_bytes", Some(b)),
        None => {
            if let Some(k) = number(d.get("io_kbytes")).and_then(|n| n.as_u64()) {
                v.set_count("io_bytes", k * 1024);
            }
        }
    }
    copy(&mut v, "io_count", d.get("total_ios"));
    copy_scaled(&mut v, "runtime_s", d.get("runtime"), -3);
    // fio 3.x: clat_ns; fio 2.x: clat in microseconds.
    let (clat, exp) = match d.get("clat_ns") {
        Some(c) => (Some(c), -9),
        None => (d.get("clat"), -6),
    };
    if let Some(c) = clat {
        for (from, to) in [
            ("mean", "latency_mean_s"),
            ("min", "latency_min_s"),
            ("max", "latency_max_s"),
            ("stddev", "latency_stddev_s"),
        ] {
            copy_scaled(&mut v, to, c.get(from), exp);
        }
        if let Some(Value::Object(p)) = c.get("percentile") {
            // fio 2.x to 3.1 pad the list to 20 entries with "0.00": 0 (a real percentile is
            // written with six decimals, "1.000000"): padding, no percentile.
            for (pct, x) in p.iter().filter(|(pct, _)| pct.as_str() != PADDING) {
                if let Some(key) = percentile_key(pct) {
                    copy_scaled(&mut v, &key, Some(x), exp);
                }
            }
        }
    }
    v
}

/// `99.900000` -> `latency_p99_9_s`, `50.000000` -> `latency_p50_s`.
fn percentile_key(pct: &str) -> Option<String> {
    let (whole, frac) = pct.split_once('.').unwrap_or((pct, ""));
    if whole.is_empty()
        || !whole.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let frac = frac.trim_end_matches('0');
    Some(if frac.is_empty() {
        format!("latency_p{whole}_s")
    } else {
        format!("latency_p{whole}_{frac}_s")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_keys() {
        assert_eq!(
            percentile_key("99.900000").as_deref(),
            Some("latency_p99_9_s")
        );
        assert_eq!(
            percentile_key("50.000000").as_deref(),
            Some("latency_p50_s")
        );
        assert_eq!(
            percentile_key("99.990000").as_deref(),
            Some("latency_p99_99_s")
        );
        assert_eq!(percentile_key("x"), None);
    }

    #[test]
    fn json_starts_after_text() {
        assert_eq!(json_start("j: Laying out IO file\n{\n"), Some(22));
        assert_eq!(json_start("no json"), None);
    }
}
