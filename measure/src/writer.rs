//! The record writer: one compact line per record, flushed as it is written.

use crate::record::{Kind, Record, SCHEMA, Status, has_unit_suffix};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::SystemTime;

/// What every line of one invocation shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    pub tool: String,
    pub version: String,
    pub run: String,
    pub host: String,
    pub label: String,
    pub name: String,
    pub tags: BTreeMap<String, String>,
}

impl Envelope {
    /// An envelope with a fresh run id and this machine's host name as host and label.
    pub fn new(tool: &str, version: &str, name: &str) -> Self {
        let host = crate::envfacts::hostname();
        Envelope {
            tool: tool.to_string(),
            version: version.to_string(),
            run: new_run_id(),
            label: host.clone(),
            host,
            name: name.to_string(),
            tags: BTreeMap::new(),
        }
    }
}

/// 64 random bits from the kernel (/dev/urandom), or from the clock and the process id where
/// it gives none: run ids, seeds, payload cookies.
pub fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most buf.len() bytes into buf; 8 bytes never come short
    // from the kernel's pool (requests up to 256 bytes are not interrupted).
    let got = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), libc::GRND_NONBLOCK) };
    if got == buf.len() as isize {
        return u64::from_le_bytes(buf);
    }
    let nanos = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    (nanos as u64) ^ (u64::from(std::process::id()) << 40)
}

/// A new run id: 12 lower-case hex digits, random where the kernel gives randomness.
pub fn new_run_id() -> String {
    format!("{:012x}", random_u64() & 0xffff_ffff_ffff)
}

/// The current time as RFC 3339 UTC with microseconds.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_micros(SystemTime::now()).to_string()
}

/// Measurements for a record's `values`: finite numbers under keys with a unit suffix.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Values(pub Map<String, Value>);

impl Values {
    pub fn new() -> Self {
        Values(Map::new())
    }

    /// Sets `key` to `v`; a NaN or infinite value is left out (JSON has no such numbers).
    pub fn set(&mut self, key: &str, v: f64) {
        debug_assert!(has_unit_suffix(key), "values key {key} lacks a unit suffix");
        if let Some(n) = serde_json::Number::from_f64(v) {
            self.0.insert(key.to_string(), Value::Number(n));
        }
    }

    /// Sets a count (an integer in the JSON).
    pub fn set_count(&mut self, key: &str, n: u64) {
        debug_assert!(has_unit_suffix(key), "values key {key} lacks a unit suffix");
        self.0.insert(key.to_string(), Value::from(n));
    }

    /// Builder form of [`Values::set`].
    pub fn with(mut self, key: &str, v: f64) -> Self {
        self.set(key, v);
        self
    }

    /// Builder form of [`Values::set_count`].
    pub fn with_count(mut self, key: &str, n: u64) -> Self {
        self.set_count(key, n);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Turns `json!({...})` into the map a record's `info` takes; anything but an object is
/// stored under the key `"value"`.
pub fn info(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        Value::Null => Map::new(),
        other => {
            let mut m = Map::new();
            m.insert("value".to_string(), other);
            m
        }
    }
}

/// What a summary says besides its values.
#[derive(Clone, Debug)]
pub struct Summary {
    pub status: Status,
    pub error: Option<String>,
    pub headline: Option<String>,
    pub values: Values,
    pub info: Map<String, Value>,
}

/// Writes the records of one invocation, numbering them per type and flushing each line.
pub struct Reporter {
    env: Envelope,
    out: Box<dyn Write + Send>,
    seqs: [u64; 4],
    summary_written: bool,
    /// The line being written, kept between records so that it grows once, not per record.
    line: Vec<u8>,
}

impl std::fmt::Debug for Reporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reporter")
            .field("env", &self.env)
            .field("seqs", &self.seqs)
            .finish()
    }
}

impl Reporter {
    pub fn new(env: Envelope, out: Box<dyn Write + Send>) -> Self {
        Reporter {
            env,
            out,
            seqs: [0; 4],
            summary_written: false,
            line: Vec::with_capacity(1024),
        }
    }

    pub fn envelope(&self) -> &Envelope {
        &self.env
    }

    /// Changes the row name for the lines that follow (before `begin`, normally).
    pub fn set_name(&mut self, name: &str) {
        self.env.name = name.to_string();
    }

    /// Whether the summary has been written.
    pub fn summary_written(&self) -> bool {
        self.summary_written
    }

    /// A record of `kind` with the envelope filled in and the next sequence number.
    fn record(&mut self, kind: Kind) -> Record {
        let slot = match kind {
            Kind::Begin => 0,
            Kind::Sample => 1,
            Kind::Interval => 2,
            Kind::Summary => 3,
        };
        let seq = self.seqs[slot];
        self.seqs[slot] += 1;
        Record {
            schema: SCHEMA.to_string(),
            tool: self.env.tool.clone(),
            version: self.env.version.clone(),
            kind,
            run: self.env.run.clone(),
            seq,
            at: now_rfc3339(),
            host: self.env.host.clone(),
            label: self.env.label.clone(),
            name: self.env.name.clone(),
            tags: self.env.tags.clone(),
            status: None,
            error: None,
            headline: None,
            values: Map::new(),
            info: Map::new(),
        }
    }

    /// Writes one record as a line and flushes it.
    pub fn write(&mut self, r: &Record) -> io::Result<()> {
        self.line.clear();
        serde_json::to_writer(&mut self.line, r).map_err(io::Error::other)?;
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.out.flush()
    }

    pub fn begin(&mut self, info: Map<String, Value>) -> io::Result<()> {
        let mut r = self.record(Kind::Begin);
        r.info = info;
        self.write(&r)
    }

    pub fn sample(&mut self, values: Values, info: Map<String, Value>) -> io::Result<()> {
        let mut r = self.record(Kind::Sample);
        r.values = values.0;
        r.info = info;
        self.write(&r)
    }

    /// A sample that failed: no values, the reason in `error`.
    pub fn sample_failed(&mut self, error: &str, info: Map<String, Value>) -> io::Result<()> {
        let mut r = self.record(Kind::Sample);
        r.error = Some(error.to_string());
        r.info = info;
        self.write(&r)
    }

    pub fn interval(&mut self, values: Values, info: Map<String, Value>) -> io::Result<()> {
        let mut r = self.record(Kind::Interval);
        r.values = values.0;
        r.info = info;
        self.write(&r)
    }

    /// Writes the summary; a second call does nothing, so error paths may call it freely.
    pub fn summary(&mut self, s: Summary) -> io::Result<()> {
        if self.summary_written {
            return Ok(());
        }
        self.summary_written = true;
        let mut r = self.record(Kind::Summary);
        r.status = Some(s.status);
        r.error = s.error;
        r.headline = s.headline.filter(|h| s.values.0.contains_key(h));
        if r.headline.is_none() && r.status == Some(Status::Ok) {
            r.status = Some(Status::Partial);
            r.error = Some(
                r.error
                    .unwrap_or_else(|| "no measurement to report".to_string()),
            );
        }
        r.values = s.values.0;
        r.info = s.info;
        self.write(&r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::parse_line;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);
    impl Write for Shared {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0
                .lock()
                .map_err(|_| io::Error::other("poisoned"))?
                .extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn writes_lines_that_the_reader_accepts() {
        let buf = Shared::default();
        let mut env = Envelope::new("pingrt", "0.1.0", "icmp latency");
        env.tags.insert("peer".into(), "::1".into());
        let mut rep = Reporter::new(env, Box::new(buf.clone()));
        rep.begin(info(serde_json::json!({"count": 2}))).unwrap();
        rep.sample(Values::new().with("rtt_s", 1e-4), Map::new())
            .unwrap();
        rep.sample_failed("timeout", Map::new()).unwrap();
        rep.interval(Values::new().with_count("sent_count", 2), Map::new())
            .unwrap();
        rep.summary(Summary {
            status: Status::Ok,
            error: None,
            headline: Some("rtt_mean_s".into()),
            values: Values::new()
                .with("rtt_mean_s", 1e-4)
                .with("bad_s", f64::NAN),
            info: Map::new(),
        })
        .unwrap();
        rep.summary(Summary {
            status: Status::Failed,
            error: Some("twice".into()),
            headline: None,
            values: Values::new(),
            info: Map::new(),
        })
        .unwrap();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
        assert_eq!(recs.len(), 5);
        assert_eq!(recs[1].seq, 0);
        assert_eq!(recs[2].seq, 1);
        assert_eq!(recs[2].error.as_deref(), Some("timeout"));
        assert!(recs[4].values.get("bad_s").is_none());
        assert_eq!(recs[4].tags.get("peer").map(String::as_str), Some("::1"));
        assert!(
            recs.iter()
                .all(|r| r.run == recs[0].run && r.run.len() == 12)
        );
    }

    #[test]
    fn summary_without_its_headline_is_partial() {
        let buf = Shared::default();
        let mut rep = Reporter::new(Envelope::new("t", "0", "n"), Box::new(buf.clone()));
        rep.summary(Summary {
            status: Status::Ok,
            error: None,
            headline: Some("missing_s".into()),
            values: Values::new(),
            info: Map::new(),
        })
        .unwrap();
        let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
        let r = parse_line(text.trim()).unwrap();
        assert_eq!(r.status, Some(Status::Partial));
        assert!(r.error.is_some());
    }
}
