//! The record writer: one compact line per record, the envelope borrowed, flushed as it is
//! written (or batched, bounded in time, for high-rate streams).

use crate::envfacts::{LoadNow, Probe};
use crate::parts::{Envelope, Summary, Values};
use crate::record::{Headline, Kind, SCHEMA, Status};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::time::{Duration, Instant, SystemTime};

/// One line as it is written: the envelope borrowed from the [`Reporter`], the rest from the
/// caller, in the field order of [`Record`] (so a line reads back equal).
#[derive(Serialize)]
struct Line<'a, V: Serialize, I: Serialize> {
    schema: &'static str,
    tool: &'a str,
    version: &'a str,
    #[serde(rename = "type")]
    kind: Kind,
    run: &'a str,
    seq: u64,
    at: &'a str,
    host: &'a str,
    label: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    tags: &'a BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invocation: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<Status>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    headline: Option<&'a str>,
    #[serde(skip_serializing_if = "<[Headline]>::is_empty")]
    headlines: &'a [Headline],
    values: &'a V,
    info: &'a I,
}

/// What the last summary said, kept for the human summary on a terminal.
#[derive(Clone, Debug)]
pub struct Written {
    pub status: Status,
    pub error: Option<String>,
    pub headline: Option<String>,
    pub values: Values,
}

/// Lines held back in batch mode before they are written out at the latest.
const BATCH_BYTES: usize = 64 << 10;

/// Writes the records of one invocation, numbering them per type.
///
/// The flush policy (the record spec's): every record is flushed as it is written, unless
/// the tool asked for [`Reporter::batch`]: then lines are held for at most the given time (or
/// 64 KiB), for high-rate streams such as `pingrt --flood`, and the summary flushes them all.
/// A reporter without an output ([`Reporter::discarding`]) numbers records and keeps the
/// summary for the human lines but writes nothing.
pub struct Reporter {
    env: Envelope,
    out: Option<Box<dyn Write + Send>>,
    seqs: [u64; 4],
    summary: Option<Written>,
    /// The lines not yet written out, kept between records so that it grows once.
    line: Vec<u8>,
    /// In batch mode, how long a line may wait, and since when the oldest one waits.
    batch: Option<Duration>,
    oldest: Option<Instant>,
    clock: Clock,
    /// The `at` of the lines that follow, when it is the source's time (a converter's).
    at: Option<String>,
    /// The load at this machine's begin ([`Reporter::watch_load`]): the summary adds the
    /// load over the run.
    load: Option<LoadNow>,
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
            out: Some(out),
            seqs: [0; 4],
            summary: None,
            line: Vec::with_capacity(1024),
            batch: None,
            oldest: None,
            clock: Clock::default(),
            at: None,
            load: None,
        }
    }

    /// A reporter that writes nothing (records go nowhere: a terminal without `-o`).
    pub fn discarding(env: Envelope) -> Self {
        let mut r = Reporter::new(env, Box::new(io::sink()));
        r.out = None;
        r
    }

    /// Whether records go anywhere.
    pub fn writes(&self) -> bool {
        self.out.is_some()
    }

    /// Holds lines for at most `max_wait` before writing them (see the flush policy above).
    pub fn batch(&mut self, max_wait: Duration) {
        self.batch = Some(max_wait);
    }

    pub fn envelope(&self) -> &Envelope {
        &self.env
    }

    /// Changes the row name for the lines that follow (before `begin`, normally). Tools name
    /// rows through the session (`Session::set_name`, `Session::name_part`), where `--name`
    /// wins.
    pub(crate) fn set_name(&mut self, name: &str) {
        self.env.name = name.to_string();
    }

    /// Changes the tool and version of the lines that follow: a converter (ingest) writes
    /// the lines of the tool whose output it read.
    pub fn set_tool(&mut self, tool: &str, version: &str) {
        self.env.tool = tool.to_string();
        self.env.version = version.to_string();
    }

    /// The `at` of the lines that follow (RFC 3339 UTC): the time a converted source line
    /// was measured; `None` goes back to the clock.
    pub fn set_at(&mut self, at: Option<String>) {
        self.at = at;
    }

    /// Starts another run after this one's summary: a fresh run id, the sequence numbers
    /// from 0, no summary yet. A converter whose source holds several measurements (the
    /// commands of one hyperfine export) writes each as a run of its own.
    pub fn next_run(&mut self) {
        self.env.run = crate::parts::new_run_id();
        self.seqs = [0; 4];
        self.summary = None;
        self.load = None;
    }

    /// Has the summary say how busy this machine was over the run, from `start` (the load
    /// at begin) to the summary (see `envfacts::LoadNow`).
    pub fn watch_load(&mut self, start: LoadNow) {
        self.load = Some(start);
    }

    /// Whether the summary has been written.
    pub fn summary_written(&self) -> bool {
        self.summary.is_some()
    }

    /// What the summary said, once it is written.
    pub fn written_summary(&self) -> Option<&Written> {
        self.summary.as_ref()
    }

    /// The next sequence number of `kind`.
    fn next_seq(&mut self, kind: Kind) -> u64 {
        let slot = match kind {
            Kind::Begin => 0,
            Kind::Sample => 1,
            Kind::Interval => 2,
            Kind::Summary => 3,
        };
        let seq = self.seqs[slot];
        self.seqs[slot] += 1;
        seq
    }

    /// Serializes one line with the envelope and writes it out (now, or per the batch).
    fn emit<V: Serialize, I: Serialize>(
        &mut self,
        kind: Kind,
        body: Body<'_, V, I>,
    ) -> io::Result<()> {
        let seq = self.next_seq(kind);
        if self.out.is_none() {
            return Ok(());
        }
        let at = match &self.at {
            Some(at) => at.as_str(),
            None => self.clock.now(),
        };
        let e = &self.env;
        let line = Line {
            schema: SCHEMA,
            tool: &e.tool,
            version: &e.version,
            kind,
            run: &e.run,
            seq,
            at,
            host: &e.host,
            label: &e.label,
            name: &e.name,
            tags: &e.tags,
            invocation: e.invocation.as_deref(),
            status: body.status,
            error: body.error,
            headline: body.headline,
            headlines: body.headlines,
            values: body.values,
            info: body.info,
        };
        serde_json::to_writer(&mut self.line, &line).map_err(io::Error::other)?;
        self.line.push(b'\n');
        let due = match self.batch {
            None => true,
            Some(wait) => {
                let oldest = *self.oldest.get_or_insert_with(Instant::now);
                kind == Kind::Summary || self.line.len() >= BATCH_BYTES || oldest.elapsed() >= wait
            }
        };
        if due { self.flush() } else { Ok(()) }
    }

    /// Writes out the lines held back and flushes the output.
    pub fn flush(&mut self) -> io::Result<()> {
        self.oldest = None;
        let Some(out) = self.out.as_mut() else {
            self.line.clear();
            return Ok(());
        };
        let r = out.write_all(&self.line).and_then(|()| out.flush());
        self.line.clear();
        r
    }

    /// In batch mode, writes out the held lines once the oldest has waited its time; loops
    /// that may pause between records call it.
    pub fn flush_due(&mut self) -> io::Result<()> {
        match (self.batch, self.oldest) {
            (Some(wait), Some(t)) if t.elapsed() >= wait => self.flush(),
            _ => Ok(()),
        }
    }

    pub fn begin(&mut self, info: Map<String, Value>) -> io::Result<()> {
        self.emit(Kind::Begin, Body::info(&info))
    }

    pub fn sample(&mut self, values: Values, info: Map<String, Value>) -> io::Result<()> {
        self.emit(Kind::Sample, Body::measured(&values.0, &info))
    }

    /// A sample from borrowed parts: `values` and `info` serialize as JSON objects (a
    /// `#[derive(Serialize)]` struct each, for a high-rate stream that builds no map per
    /// record). The caller keeps the record contract: `values` holds only finite numbers
    /// under keys with a unit suffix.
    pub fn sample_ref<V: Serialize, I: Serialize>(
        &mut self,
        values: &V,
        info: &I,
    ) -> io::Result<()> {
        self.emit(Kind::Sample, Body::measured(values, info))
    }

    /// A sample that failed: no values, the reason in `error`.
    pub fn sample_failed(&mut self, error: &str, info: Map<String, Value>) -> io::Result<()> {
        let mut b = Body::info(&info);
        b.error = Some(error);
        self.emit(Kind::Sample, b)
    }

    pub fn interval(&mut self, values: Values, info: Map<String, Value>) -> io::Result<()> {
        self.emit(Kind::Interval, Body::measured(&values.0, &info))
    }

    /// Writes the summary; a second call does nothing, so error paths may call it freely.
    /// An `ok` summary whose headline is not among its values is written as partial; of
    /// several headlines those among the values are kept, and the first is the headline.
    pub fn summary(&mut self, s: Summary) -> io::Result<()> {
        if self.summary.is_some() {
            return Ok(());
        }
        let mut s = crate::signal::mark_stopped(s);
        if let Some(start) = self.load.take() {
            for (k, v) in Probe::system().load_now().end_facts(&start) {
                s.info.entry(k).or_insert(v);
            }
        }
        let headlines: Vec<Headline> = s
            .headlines
            .into_iter()
            .filter(|h| s.values.0.contains_key(&h.key))
            .collect();
        let headline = match headlines.first() {
            Some(h) => Some(h.key.clone()),
            None => s.headline.filter(|h| s.values.0.contains_key(h)),
        };
        let (status, error) = match (s.status, &headline) {
            (Status::Ok, None) => (
                Status::Partial,
                Some(
                    s.error
                        .unwrap_or_else(|| "no measurement to report".to_string()),
                ),
            ),
            (st, _) => (st, s.error),
        };
        let body = Body {
            status: Some(status),
            error: error.as_deref(),
            headline: headline.as_deref(),
            headlines: &headlines,
            values: &s.values.0,
            info: &s.info,
        };
        let r = self.emit(Kind::Summary, body);
        self.summary = Some(Written {
            status,
            error,
            headline,
            values: s.values,
        });
        r
    }
}

/// The part of a line that is not the envelope.
struct Body<'a, V: Serialize, I: Serialize> {
    status: Option<Status>,
    error: Option<&'a str>,
    headline: Option<&'a str>,
    headlines: &'a [Headline],
    values: &'a V,
    info: &'a I,
}

/// The values of a record that has none.
static NO_VALUES: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

impl<'a, I: Serialize> Body<'a, Map<String, Value>, I> {
    fn info(info: &'a I) -> Self {
        Body::measured(&NO_VALUES, info)
    }
}

impl<'a, V: Serialize, I: Serialize> Body<'a, V, I> {
    fn measured(values: &'a V, info: &'a I) -> Self {
        Body {
            status: None,
            error: None,
            headline: None,
            headlines: &[],
            values,
            info,
        }
    }
}

/// `at` for the line being written: RFC 3339 UTC with microseconds, the part up to the
/// seconds made once per second (a high-rate stream writes thousands of lines in each).
#[derive(Debug, Default)]
struct Clock {
    second: u64,
    text: String,
}

impl Clock {
    fn now(&mut self) -> &str {
        let now = SystemTime::now();
        let d = now
            .duration_since(SystemTime::UNIX_EPOCH)
            .unwrap_or_default();
        if self.text.is_empty() || d.as_secs() != self.second {
            self.second = d.as_secs();
            let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(self.second);
            self.text = humantime::format_rfc3339_seconds(whole).to_string();
            self.text.pop(); // the 'Z', written after the microseconds
            self.text.push('.');
        }
        let keep = self.text.rfind('.').map_or(0, |i| i + 1);
        self.text.truncate(keep);
        let micros = d.subsec_micros();
        let mut digits = [b'0'; 6];
        let mut m = micros;
        for slot in digits.iter_mut().rev() {
            *slot = b'0' + (m % 10) as u8;
            m /= 10;
        }
        self.text.extend(digits.iter().map(|&b| b as char));
        self.text.push('Z');
        &self.text
    }
}

#[cfg(test)]
mod tests;
