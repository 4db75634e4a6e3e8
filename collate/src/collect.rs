//! The streaming aggregation: each sample's and summary's values go into the series of its
//! (row, column, name, metric), in one pass. Memory holds the distinct keys and the values
//! of the cells, nothing per begin or interval line.

pub use crate::batch::{Batch, LiteView, SEP};
use crate::dims::{Dim, Parts, Source};
use crate::facts::ColumnFacts;
use crate::fastmap::FastMap;
use crate::filter::Filter;
use crate::runs::{RunValues, Runs};
use crate::shape::Shape;
use measure::record::CellStat;
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
    /// The last record's group and keys, to skip the lookups above for the next.
    shape: Shape,
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
            shape: Shape::default(),
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
                if let Some(l) = &r.load {
                    self.runs.note_load(r.run, l);
                }
                if let Some(c) = &r.clock {
                    self.runs.note_clock(r.run, c);
                }
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
        if let Some(l) = &r.load {
            self.runs.list[run as usize].load.merge(l);
        }
        if r.vals.is_empty() && r.headline.is_none() {
            return;
        }
        let group = match self.shape.group(r.group) {
            Some(g) => g,
            None => {
                let g = self.groups.id(r.group);
                self.shape.set_group(r.group, g);
                g
            }
        };
        if let Some(h) = r.headline {
            self.note_headlines(&r, h);
        }
        let mut any = false;
        for (i, (key, x)) in r.values().enumerate() {
            let slot = match self.shape.slot(i, key) {
                Some(s) => s,
                None => {
                    let s = self.slot(r.group, group, key);
                    self.shape.learn(i, key, s);
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

    /// The headlines a summary names (`h`, or its `headlines` with their roles and
    /// statistics), per measurement name.
    fn note_headlines(&mut self, r: &LiteView<'_>, h: &str) {
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

    /// The series that `key` of a record of group `text` (numbered `group`) feeds, or None
    /// where it is left out.
    fn slot(&mut self, text: &str, group: u32, key: &str) -> Option<u32> {
        let metric = self.metrics.id(key);
        if let Some(&s) = self.cache.get(&(group, metric)) {
            return s;
        }
        let s = self.resolve(text, key, metric);
        self.cache.insert((group, metric), s);
        s
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
