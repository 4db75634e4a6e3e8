//! The streaming aggregation: each sample's and summary's values go into the series of its
//! (row, column, name, metric), in one pass. Memory holds the distinct keys and the values
//! of the cells, nothing per begin or interval line.

use crate::dims::{Dim, Parts, Source};
use crate::facts::ColumnFacts;
use crate::fastmap::FastMap;
use crate::filter::Filter;
use crate::runs::{RunValues, Runs};
use measure::record::{CellStat, Status};
use measure::{Kind, RecordView};
use std::collections::HashMap;

/// Which metrics become rows.
#[derive(Clone, Debug, PartialEq)]
pub enum MetricChoice {
    /// The headline each summary names (per measurement name); where no summary names one,
    /// every metric the samples carry.
    Headline,
    /// Every metric of samples and summaries.
    All,
    /// These keys only.
    Keys(Vec<String>),
}

/// What to group by.
#[derive(Clone, Debug)]
pub struct Spec {
    pub rows: Vec<Dim>,
    pub cols: Vec<Dim>,
    pub filter: Filter,
    pub metrics: MetricChoice,
}

/// Strings numbered in order of first appearance.
#[derive(Debug, Default)]
pub struct Interner {
    map: FastMap<String, u32>,
    pub list: Vec<String>,
}

impl Interner {
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.map.insert(s.to_string(), i);
        self.list.push(s.to_string());
        i
    }

    pub fn get(&self, s: &str) -> Option<u32> {
        self.map.get(s).copied()
    }
}

/// The values of one metric of one measurement in one (row, column).
#[derive(Debug)]
pub struct Series {
    pub row: u32,
    pub col: u32,
    pub name: u32,
    pub metric: u32,
    pub samples: RunValues,
    pub summaries: RunValues,
}

/// Separates the parts of a group key (the unit separator; a value holding it has it
/// replaced by a space when the key is built, so that the parts stay aligned).
pub const SEP: char = '\u{1f}';

/// The part of a record that collate keeps, extracted on the reader threads into a
/// [`Batch`]: its type, whether it failed, its group key (the values of the grouping
/// dimensions), the headline it names and its values.
#[derive(Debug, Clone, Copy)]
struct Lite {
    kind: Kind,
    failed: bool,
    /// A sample with neither values nor an error.
    empty: bool,
    status: Option<Status>,
    error: Option<(u32, u32)>,
    at: (u32, u32),
    group: (u32, u32),
    headline: Option<(u32, u32)>,
    /// A summary's headlines (key, role, stat), a range of the batch's `roles`.
    roles: (u32, u32),
    /// A begin's environment facts (key, text), a range of the batch's `facts`.
    facts: (u32, u32),
    vals: (u32, u32),
    /// The identity of the record (run, seq) and its line in its input, for the check for
    /// repeats; `repeat` when it repeats a record read before (and is left out).
    run: (u32, u32),
    /// The suite invocation the run belongs to, where the record names one.
    invocation: Option<(u32, u32)>,
    seq: u64,
    line: u64,
    repeat: bool,
}

/// A headline's key and role, as ranges of a batch's text, and the statistic it names.
type Role = ((u32, u32), (u32, u32), Option<CellStat>);

/// A fact's key and text, as ranges of a batch's text.
type FactText = ((u32, u32), (u32, u32));

/// Many records' [`Lite`] parts in a few buffers (few allocations per block of lines).
#[derive(Debug, Default)]
pub struct Batch {
    /// The line in its input of the block's first line: the records' lines are counted
    /// from it (the parser threads number a block's lines from 0, the reader knows where
    /// the block starts).
    first_line: u64,
    buf: String,
    vals: Vec<((u32, u32), f64)>,
    roles: Vec<Role>,
    facts: Vec<FactText>,
    recs: Vec<Lite>,
}

/// One record of a batch.
#[derive(Debug, Clone, Copy)]
pub struct LiteView<'a> {
    pub kind: Kind,
    pub failed: bool,
    pub empty: bool,
    pub status: Option<Status>,
    pub error: Option<&'a str>,
    pub run: &'a str,
    pub invocation: Option<&'a str>,
    pub at: &'a str,
    pub group: &'a str,
    pub headline: Option<&'a str>,
    vals: &'a [((u32, u32), f64)],
    roles: &'a [Role],
    facts: &'a [FactText],
    buf: &'a str,
}

impl<'a> LiteView<'a> {
    pub fn values(&self) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        let buf = self.buf;
        self.vals
            .iter()
            .map(move |&((a, b), v)| (&buf[a as usize..b as usize], v))
    }

    /// A begin's environment facts: each key and its text.
    pub fn facts(&self) -> impl Iterator<Item = (&'a str, &'a str)> + 'a {
        let buf = self.buf;
        let s = move |(a, b): (u32, u32)| &buf[a as usize..b as usize];
        self.facts.iter().map(move |&(k, v)| (s(k), s(v)))
    }

    /// A summary's headlines: each key, the role of its row and the statistic it names.
    pub fn headlines(&self) -> impl Iterator<Item = (&'a str, &'a str, Option<CellStat>)> + 'a {
        let buf = self.buf;
        let s = move |(a, b): (u32, u32)| &buf[a as usize..b as usize];
        self.roles.iter().map(move |&(k, r, st)| (s(k), s(r), st))
    }
}

impl Batch {
    /// Empties the batch and keeps its buffers, for the next block: the reader hands batches
    /// back to the parser threads, so that their buffers are not allocated (and their pages
    /// faulted in) again for every block of lines.
    pub fn clear(&mut self) {
        self.first_line = 0;
        self.buf.clear();
        self.vals.clear();
        self.roles.clear();
        self.facts.clear();
        self.recs.clear();
    }

    fn push_str(&mut self, s: &str) -> (u32, u32) {
        let a = self.buf.len() as u32;
        self.buf.push_str(s);
        (a, self.buf.len() as u32)
    }

    /// Adds a begin, sample or summary (intervals are left out) grouped by `group_dims`; the
    /// collector counts samples and summaries, `--times` begins too.
    pub fn push(&mut self, r: &RecordView, group_dims: &[Dim]) {
        self.push_at(r, group_dims, 0);
    }

    /// As [`Batch::push`], for the record read at `line` of its input (counted from the
    /// batch's first line: see [`Batch::set_first_line`]).
    pub fn push_at(&mut self, r: &RecordView, group_dims: &[Dim], line: u64) {
        if r.kind == Kind::Interval {
            return;
        }
        let ga = self.buf.len() as u32;
        for d in group_dims {
            let v = d.value(r, "");
            // A value holding the separator would shift the parts: replace it.
            if v.contains(SEP) {
                self.buf.push_str(&v.replace(SEP, " "));
            } else {
                self.buf.push_str(v);
            }
            self.buf.push(SEP);
        }
        let group = (ga, self.buf.len() as u32);
        let headline = match (&r.kind, &r.headline) {
            (Kind::Summary, Some(h)) => Some(self.push_str(h)),
            _ => None,
        };
        let run = self.push_str(&r.run);
        let invocation = r.invocation.as_deref().map(|i| self.push_str(i));
        let at = self.push_str(&r.at);
        let error = match (r.kind, &r.error) {
            (Kind::Summary, Some(e)) => Some(self.push_str(e)),
            _ => None,
        };
        let ra = self.roles.len() as u32;
        if r.kind == Kind::Summary {
            for h in &r.headlines {
                let kr = (self.push_str(&h.key), self.push_str(&h.role), h.stat);
                self.roles.push(kr);
            }
        }
        let roles = (ra, self.roles.len() as u32);
        let fa = self.facts.len() as u32;
        if r.kind == Kind::Begin
            && let Some(info) = &r.info
        {
            for (k, v) in crate::facts::texts(info) {
                let kv = (self.push_str(&k), self.push_str(&v));
                self.facts.push(kv);
            }
        }
        let facts = (fa, self.facts.len() as u32);
        let va = self.vals.len() as u32;
        for (k, v) in &r.values {
            if let Some(x) = v.as_f64() {
                let key = self.push_str(k);
                self.vals.push((key, x));
            }
        }
        self.recs.push(Lite {
            kind: r.kind,
            failed: r.kind == Kind::Sample && r.error.is_some(),
            empty: r.kind == Kind::Sample && r.error.is_none() && r.values.is_empty(),
            status: r.status,
            error,
            at,
            group,
            headline,
            roles,
            facts,
            vals: (va, self.vals.len() as u32),
            run,
            invocation,
            seq: r.seq,
            line,
            repeat: false,
        });
    }

    /// The (run, type, seq) of record `i` and its line.
    pub fn identity(&self, i: usize) -> (&str, Kind, u64, u64) {
        let l = &self.recs[i];
        let run = &self.buf[l.run.0 as usize..l.run.1 as usize];
        (run, l.kind, l.seq, self.first_line + l.line)
    }

    /// Counts the records' lines from `first`, the input line of the batch's first line.
    pub fn set_first_line(&mut self, first: u64) {
        self.first_line = first;
    }

    /// Marks record `i` as a repeat of one read before: the collector leaves it out.
    pub fn set_repeat(&mut self, i: usize) {
        self.recs[i].repeat = true;
    }

    pub fn len(&self) -> usize {
        self.recs.len()
    }

    /// Whether record `i` repeats one read before.
    pub fn is_repeat(&self, i: usize) -> bool {
        self.recs[i].repeat
    }

    pub fn is_empty(&self) -> bool {
        self.recs.is_empty()
    }

    pub fn get(&self, i: usize) -> LiteView<'_> {
        let l = self.recs[i];
        let s = |(a, b): (u32, u32)| &self.buf[a as usize..b as usize];
        LiteView {
            kind: l.kind,
            failed: l.failed,
            empty: l.empty,
            status: l.status,
            error: l.error.map(s),
            run: s(l.run),
            invocation: l.invocation.map(s),
            at: s(l.at),
            group: s(l.group),
            headline: l.headline.map(s),
            vals: &self.vals[l.vals.0 as usize..l.vals.1 as usize],
            roles: &self.roles[l.roles.0 as usize..l.roles.1 as usize],
            facts: &self.facts[l.facts.0 as usize..l.facts.1 as usize],
            buf: &self.buf,
        }
    }
}

impl Spec {
    /// The record-level dimensions that decide a record's group: name and type first, then
    /// every other one that rows, columns or the filter read.
    pub fn group_dims(&self) -> Vec<Dim> {
        let mut group_dims = vec![Dim::Name, Dim::Type];
        let mut all = self.rows.clone();
        all.extend(self.cols.iter().cloned());
        self.filter.dims(&mut all);
        for d in all {
            if !d.per_metric() && !group_dims.contains(&d) {
                group_dims.push(d);
            }
        }
        group_dims
    }
}

#[derive(Debug)]
pub struct Collector {
    pub spec: Spec,
    /// Record-level dimensions that decide a record's group.
    pub group_dims: Vec<Dim>,
    groups: Interner,
    cache: FastMap<(u32, u32), Option<u32>>,
    pub metrics: Interner,
    pub names: Interner,
    pub rows: Interner,
    pub row_vals: Vec<Vec<String>>,
    pub cols: Interner,
    pub col_vals: Vec<Vec<String>>,
    pub series: Vec<Series>,
    series_map: FastMap<(u32, u32, u32, u32), u32>,
    /// Headline metrics named by summaries, per measurement name.
    pub headlines: HashMap<u32, Vec<u32>>,
    /// The role of each (measurement name, headline metric) a summary's headlines name.
    pub roles: HashMap<(u32, u32), String>,
    /// The statistic a summary's headline names for a (measurement name, metric)'s cells.
    pub stats: HashMap<(u32, u32), CellStat>,
    pub samples: u64,
    pub summaries: u64,
    pub failed_samples: u64,
    /// Samples with neither values nor an error (left out).
    pub empty_samples: u64,
    /// Every run, with its status.
    pub runs: Runs,
    /// Samples and summaries added so far (each record's ordinal).
    pub ordinal: u64,
    /// Records that the filter let through (at least one metric).
    pub matched: u64,
    /// The environment facts of each column, from its begin records.
    pub facts: ColumnFacts,
    /// The oldest begin of each unit of pooling (a suite invocation, or a run by hand), by
    /// its id: where `--history` places the unit in time.
    pub begun: HashMap<String, String>,
}

impl Collector {
    pub fn new(spec: Spec) -> Self {
        let group_dims = spec.group_dims();
        Collector {
            spec,
            group_dims,
            groups: Interner::default(),
            cache: FastMap::default(),
            metrics: Interner::default(),
            names: Interner::default(),
            rows: Interner::default(),
            row_vals: Vec::new(),
            cols: Interner::default(),
            col_vals: Vec::new(),
            series: Vec::new(),
            series_map: FastMap::default(),
            headlines: HashMap::new(),
            roles: HashMap::new(),
            stats: HashMap::new(),
            samples: 0,
            summaries: 0,
            failed_samples: 0,
            empty_samples: 0,
            runs: Runs::default(),
            ordinal: 0,
            matched: 0,
            facts: ColumnFacts::default(),
            begun: HashMap::new(),
        }
    }

    /// Adds one record (for tests and small inputs; the reader uses batches).
    pub fn add_record(&mut self, r: &RecordView) {
        let mut b = Batch::default();
        b.push(r, &self.group_dims);
        self.add_batch(&b);
    }

    /// Adds every record of a batch, in order.
    pub fn add_batch(&mut self, b: &Batch) {
        for i in 0..b.len() {
            if !b.is_repeat(i) {
                self.add(b.get(i));
            }
        }
    }

    /// Adds one record's extract.
    pub fn add(&mut self, r: LiteView<'_>) {
        match r.kind {
            Kind::Sample => self.samples += 1,
            Kind::Summary => self.summaries += 1,
            Kind::Begin => {
                self.note_begin(r);
                return self.add_facts(r);
            }
            Kind::Interval => return,
        }
        if r.failed {
            self.failed_samples += 1;
        }
        if r.empty {
            self.empty_samples += 1;
        }
        let ordinal = self.ordinal;
        self.ordinal += 1;
        let run = self.runs.see(r.run, r.invocation, r.at, ordinal);
        if self.runs.list[run as usize].name.is_none() {
            let name = r.group.split(SEP).next().unwrap_or("");
            self.runs.list[run as usize].name = Some(self.names.id(name));
        }
        if let (Kind::Summary, Some(st)) = (r.kind, r.status) {
            self.runs.finish(run, st, r.error);
        }
        if r.vals.is_empty() && r.headline.is_none() {
            return;
        }
        let group = self.groups.id(r.group);
        if let Some(h) = r.headline {
            let name = r.group.split(SEP).next().unwrap_or("");
            let n = self.names.id(name);
            let mut named: Vec<(&str, Option<&str>, Option<CellStat>)> = r
                .headlines()
                .map(|(k, role, st)| (k, Some(role), st))
                .collect();
            if named.is_empty() {
                named.push((h, None, None));
            }
            for (key, role, stat) in named {
                let m = self.metrics.id(key);
                let list = self.headlines.entry(n).or_default();
                if !list.contains(&m) {
                    list.push(m);
                }
                if let Some(role) = role {
                    self.roles.entry((n, m)).or_insert_with(|| role.to_string());
                }
                if let Some(st) = stat {
                    self.stats.entry((n, m)).or_insert(st);
                }
            }
        }
        let mut any = false;
        for (key, x) in r.values() {
            let metric = self.metrics.id(key);
            let slot = match self.cache.get(&(group, metric)) {
                Some(&s) => s,
                None => {
                    let s = self.resolve(r.group, key, metric);
                    self.cache.insert((group, metric), s);
                    s
                }
            };
            if let Some(s) = slot {
                any = true;
                let series = &mut self.series[s as usize];
                if r.kind == Kind::Sample {
                    series.samples.push(x, run, ordinal);
                } else {
                    series.summaries.push(x, run, ordinal);
                }
            }
        }
        if any {
            self.matched += 1;
        }
    }

    /// A begin's time, as its unit's oldest where it is.
    fn note_begin(&mut self, r: LiteView<'_>) {
        let unit = r.invocation.unwrap_or(r.run);
        match self.begun.get_mut(unit) {
            Some(at) if r.at < at.as_str() => r.at.clone_into(at),
            Some(_) => {}
            None => {
                self.begun.insert(unit.to_string(), r.at.to_string());
            }
        }
    }

    /// A begin's environment facts, to its column; none where a column dimension is one a
    /// begin has no value of (the metric, the unit, the record type).
    fn add_facts(&mut self, r: LiteView<'_>) {
        let placeable = |d: &Dim| !d.per_metric() && *d != Dim::Type;
        if !self.spec.cols.iter().all(placeable) {
            return;
        }
        let parts = Parts {
            dims: &self.group_dims,
            parts: r.group.split(SEP).collect(),
        };
        let cv: Vec<&str> = self.spec.cols.iter().map(|d| parts.get(d, "")).collect();
        let column = cv.join(&SEP.to_string());
        for (k, v) in r.facts() {
            self.facts.add(&column, k, v);
        }
    }

    /// The series a (record group, metric) feeds, or None when the filter or `--metric`
    /// leaves it out.
    fn resolve(&mut self, group: &str, key: &str, metric: u32) -> Option<u32> {
        let dims = self.group_dims.clone();
        let r = Parts {
            dims: &dims,
            parts: group.split(SEP).collect(),
        };
        if let MetricChoice::Keys(keys) = &self.spec.metrics
            && !keys.iter().any(|k| k == key)
        {
            return None;
        }
        if !self.spec.filter.matches(&r, key) {
            return None;
        }
        let rv: Vec<String> = self
            .spec
            .rows
            .iter()
            .map(|d| r.get(d, key).to_string())
            .collect();
        let cv: Vec<String> = self
            .spec
            .cols
            .iter()
            .map(|d| r.get(d, key).to_string())
            .collect();
        let join = |v: &[String]| v.join(&SEP.to_string());
        let before = self.rows.list.len();
        let row = self.rows.id(&join(&rv));
        if self.rows.list.len() > before {
            self.row_vals.push(rv);
        }
        let before = self.cols.list.len();
        let col = self.cols.id(&join(&cv));
        if self.cols.list.len() > before {
            self.col_vals.push(cv);
        }
        let name = self.names.id(r.parts.first().copied().unwrap_or(""));
        let k = (row, col, name, metric);
        if let Some(&s) = self.series_map.get(&k) {
            return Some(s);
        }
        let s = self.series.len() as u32;
        self.series.push(Series {
            row,
            col,
            name,
            metric,
            samples: RunValues::default(),
            summaries: RunValues::default(),
        });
        self.series_map.insert(k, s);
        Some(s)
    }
}
