//! Runs: every record belongs to the run (one invocation of a tool) its `run` field names,
//! and the run's summary says whether it finished (status ok) or not. Runs pool by their
//! unit: the suite invocation they name (every tool run of one `./benchmatrix`), or the run
//! itself for a tool run by hand. collate keeps, per run,
//! its status, the summary's error and its newest timestamp, and, per series, which run each
//! value came from (as segments, so that a run's consecutive values cost nothing more), so
//! that the matrix can leave partial and killed runs out, test runs against each other and
//! keep only each cell's newest run.

use crate::busy::Load;
use crate::drift::Clock;
use measure::record::Status;
use std::collections::HashMap;

/// What collate knows of one run.
#[derive(Debug, Clone)]
pub struct RunInfo {
    /// The run id as the records carry it.
    pub id: String,
    /// The summary's status; `None` while no summary was read (a tool killed before its end).
    pub status: Option<Status>,
    /// The summary's error, when its status is not ok.
    pub error: Option<String>,
    /// The newest `at` of the run's records (RFC 3339 in UTC, so it orders as text).
    pub at: String,
    /// The oldest `at` of its samples and summaries (where `--history` places its unit).
    pub start: String,
    /// The ordinal of the run's first record (ties of `at` go to the later run).
    pub first: u64,
    /// Its unit of pooling, an index into [`Runs::units`].
    pub unit: u32,
    /// Whether that unit is a suite invocation the records name (else the run itself).
    pub invoked: bool,
    /// The measurement name of its first sample or summary (the collector's name number).
    pub name: Option<u32>,
    /// How busy the machine was, as its begin and summary say ([`crate::busy`]).
    pub load: Load,
    /// Its clock against its host's, as its begin says ([`crate::drift`]).
    pub clock: Clock,
}

impl RunInfo {
    /// Whether the run finished: its summary says ok.
    pub fn complete(&self) -> bool {
        self.status == Some(Status::Ok)
    }

    /// Where the run falls in time: by its newest record, ties to the later run.
    pub fn recency(&self) -> (&str, u64) {
        (self.at.as_str(), self.first)
    }

    /// Why the run is left out (for a run that is not complete).
    pub fn why(&self) -> String {
        match (self.status, &self.error) {
            (None, _) => "no summary (the tool did not finish: killed, or still running)".into(),
            (Some(s), Some(e)) => format!("status {}: {e}", status_name(s)),
            (Some(s), None) => format!("status {}", status_name(s)),
        }
    }
}

/// A status as the records spell it.
pub fn status_name(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Partial => "partial",
        Status::Failed => "failed",
    }
}

/// The runs, numbered in order of first appearance.
#[derive(Debug, Default)]
pub struct Runs {
    map: crate::fastmap::FastMap<String, u32>,
    pub list: Vec<RunInfo>,
    /// The units of pooling by number: an invocation's id, or a run's own.
    pub units: Vec<String>,
    unit_map: HashMap<String, u32>,
    /// The last run looked up: consecutive records mostly share one.
    last: Option<u32>,
    /// The load of runs whose begin was read before any of their samples or summaries.
    pending: HashMap<String, Load>,
    /// The clock of runs whose begin was read before any of their samples or summaries.
    pending_clock: HashMap<String, Clock>,
}

impl Runs {
    /// The number of run `id` (of suite invocation `invocation`, if it names one), seen at
    /// `at` by the record of ordinal `ordinal`.
    pub fn see(&mut self, id: &str, invocation: Option<&str>, at: &str, ordinal: u64) -> u32 {
        let n = match self.last.filter(|&l| self.list[l as usize].id == id) {
            Some(l) => l,
            None => {
                let n = match self.map.get(id) {
                    Some(&n) => n,
                    None => {
                        let n = self.list.len() as u32;
                        self.map.insert(id.to_string(), n);
                        let unit = self.unit(invocation.unwrap_or(id));
                        self.list.push(RunInfo {
                            id: id.to_string(),
                            status: None,
                            error: None,
                            at: String::new(),
                            start: at.to_string(),
                            first: ordinal,
                            unit,
                            invoked: invocation.is_some(),
                            name: None,
                            load: self.pending.remove(id).unwrap_or_default(),
                            clock: self.pending_clock.remove(id).unwrap_or_default(),
                        });
                        n
                    }
                };
                self.last = Some(n);
                n
            }
        };
        let info = &mut self.list[n as usize];
        if at > info.at.as_str() {
            info.at.clear();
            info.at.push_str(at);
        }
        if at < info.start.as_str() {
            info.start.clear();
            info.start.push_str(at);
        }
        n
    }

    /// Notes the load facts of a begin or a summary of run `id`: to the run where it is
    /// known, else kept until its first sample or summary.
    pub fn note_load(&mut self, id: &str, l: &Load) {
        match self.map.get(id) {
            Some(&n) => self.list[n as usize].load.merge(l),
            None => self.pending.entry(id.to_string()).or_default().merge(l),
        }
    }

    /// Notes the clock ratio of a begin of run `id`, as [`Runs::note_load`] does its load.
    pub fn note_clock(&mut self, id: &str, c: &Clock) {
        match self.map.get(id) {
            Some(&n) => self.list[n as usize].clock.merge(c),
            None => self
                .pending_clock
                .entry(id.to_string())
                .or_default()
                .merge(c),
        }
    }

    /// The number of unit `u`, numbered on first sight.
    fn unit(&mut self, u: &str) -> u32 {
        if let Some(&n) = self.unit_map.get(u) {
            return n;
        }
        let n = self.units.len() as u32;
        self.unit_map.insert(u.to_string(), n);
        self.units.push(u.to_string());
        n
    }

    /// Notes run `n`'s summary.
    pub fn finish(&mut self, n: u32, status: Status, error: Option<&str>) {
        let info = &mut self.list[n as usize];
        // A run with a summary that is not ok stays not ok, whatever else it repeats.
        if info.status.is_none() || info.complete() {
            info.status = Some(status);
            info.error = error.map(str::to_string);
        }
    }
}

/// The values of one run in a series: they end at `end` (exclusive) in the series' values,
/// and start where the segment before ends.
#[derive(Debug, Clone, Copy)]
pub struct Seg {
    pub run: u32,
    pub end: u32,
    /// The ordinal of the segment's first record (for first-appearance order).
    pub first: u64,
}

/// Values in a series' list past the first go in lists of this many, allocated whole: a
/// list that doubled as it filled would leave each smaller copy freed behind it, and the
/// allocator keeps freed pages a while (about 20 MiB of collate's peak on 1M samples).
const CHUNK: usize = 4096;

/// Values with the run of each, as segments. The values are in chunks: the first grows as
/// a list does up to [`CHUNK`], the others are made [`CHUNK`] long.
#[derive(Debug, Default, Clone)]
pub struct RunValues {
    chunks: Vec<Vec<f64>>,
    len: u32,
    pub segs: Vec<Seg>,
}

impl RunValues {
    /// Appends `x` of run `run`, read as record `ordinal`.
    pub fn push(&mut self, x: f64, run: u32, ordinal: u64) {
        match self.chunks.last_mut() {
            Some(c) if c.len() < CHUNK => c.push(x),
            Some(_) => {
                let mut c = Vec::with_capacity(CHUNK);
                c.push(x);
                self.chunks.push(c);
            }
            None => self.chunks.push(vec![x]),
        }
        self.len += 1;
        let end = self.len;
        match self.segs.last_mut() {
            Some(s) if s.run == run => s.end = end,
            _ => self.segs.push(Seg {
                run,
                end,
                first: ordinal,
            }),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Each segment with its values: in one piece, or in several where it spans chunks.
    pub fn segments(&self) -> impl Iterator<Item = (Seg, &[f64])> + '_ {
        let mut start = 0usize;
        self.segs.iter().flat_map(move |s| {
            let (a, b) = (start, s.end as usize);
            start = b;
            (a / CHUNK..b.div_ceil(CHUNK)).map(move |c| {
                let base = c * CHUNK;
                let piece = &self.chunks[c][a.max(base) - base..b.min(base + CHUNK) - base];
                (*s, piece)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{CHUNK, RunValues};

    #[test]
    fn segments_give_every_value_of_each_run_in_order_across_chunks() {
        let mut v = RunValues::default();
        let runs = [(0u32, 3), (1, CHUNK + 5), (0, 2 * CHUNK - 7), (2, 1)];
        let mut want: Vec<(u32, f64)> = Vec::new();
        let mut x = 0.0;
        for (ordinal, &(run, n)) in runs.iter().enumerate() {
            for _ in 0..n {
                v.push(x, run, ordinal as u64);
                want.push((run, x));
                x += 1.0;
            }
        }
        let got: Vec<(u32, f64)> = v
            .segments()
            .flat_map(|(s, vals)| vals.iter().map(move |&x| (s.run, x)))
            .collect();
        assert_eq!(got, want);
        assert_eq!(v.segs.len(), runs.len());
        // A run that spans chunks comes in pieces, all of its segment.
        assert!(v.segments().count() > runs.len());
        assert!(RunValues::default().is_empty() && !v.is_empty());
    }
}
