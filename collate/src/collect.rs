//! The streaming aggregation: each sample's and summary's values go into the series of its
//! (row, column, name, metric), in one pass. Memory holds the distinct keys and the values
//! of the cells, nothing per begin or interval line.

use crate::dims::Dim;
use crate::filter::Filter;
use measure::{Kind, Record};
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
    map: HashMap<String, u32>,
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
    pub samples: Vec<f64>,
    pub summaries: Vec<f64>,
}

/// Separates the parts of an interned compound key (a control character that JSON strings
/// from the tools would escape but that may still appear; the parts are kept separately too).
const SEP: char = '\u{1f}';

#[derive(Debug)]
pub struct Collector {
    pub spec: Spec,
    /// Record-level dimensions that decide a record's group.
    group_dims: Vec<Dim>,
    buf: String,
    groups: Interner,
    cache: HashMap<(u32, u32), Option<u32>>,
    pub metrics: Interner,
    pub names: Interner,
    pub rows: Interner,
    pub row_vals: Vec<Vec<String>>,
    pub cols: Interner,
    pub col_vals: Vec<Vec<String>>,
    pub series: Vec<Series>,
    series_map: HashMap<(u32, u32, u32, u32), u32>,
    /// Headline metrics named by summaries, per measurement name.
    pub headlines: HashMap<u32, Vec<u32>>,
    pub samples: u64,
    pub summaries: u64,
    pub failed_samples: u64,
    /// Records that the filter let through (at least one metric).
    pub matched: u64,
}

impl Collector {
    pub fn new(spec: Spec) -> Self {
        let mut group_dims = vec![Dim::Name, Dim::Type];
        let mut all = spec.rows.clone();
        all.extend(spec.cols.iter().cloned());
        spec.filter.dims(&mut all);
        for d in all {
            if !d.per_metric() && !group_dims.contains(&d) {
                group_dims.push(d);
            }
        }
        Collector {
            spec,
            group_dims,
            buf: String::new(),
            groups: Interner::default(),
            cache: HashMap::new(),
            metrics: Interner::default(),
            names: Interner::default(),
            rows: Interner::default(),
            row_vals: Vec::new(),
            cols: Interner::default(),
            col_vals: Vec::new(),
            series: Vec::new(),
            series_map: HashMap::new(),
            headlines: HashMap::new(),
            samples: 0,
            summaries: 0,
            failed_samples: 0,
            matched: 0,
        }
    }

    /// Adds one record (samples and summaries; other types are ignored).
    pub fn add(&mut self, r: &Record) {
        match r.kind {
            Kind::Sample => self.samples += 1,
            Kind::Summary => self.summaries += 1,
            Kind::Begin | Kind::Interval => return,
        }
        if r.kind == Kind::Sample && r.error.is_some() {
            self.failed_samples += 1;
        }
        if r.kind == Kind::Summary
            && let Some(h) = &r.headline
        {
            let n = self.names.id(&r.name);
            let m = self.metrics.id(h);
            let list = self.headlines.entry(n).or_default();
            if !list.contains(&m) {
                list.push(m);
            }
        }
        if r.values.is_empty() {
            return;
        }
        self.buf.clear();
        for d in &self.group_dims {
            self.buf.push_str(d.value(r, ""));
            self.buf.push(SEP);
        }
        let group = self.groups.id(&self.buf);
        let mut any = false;
        for (key, v) in &r.values {
            let Some(x) = v.as_f64() else { continue };
            let metric = self.metrics.id(key);
            let slot = match self.cache.get(&(group, metric)) {
                Some(&s) => s,
                None => {
                    let s = self.resolve(r, key, metric);
                    self.cache.insert((group, metric), s);
                    s
                }
            };
            if let Some(s) = slot {
                any = true;
                let series = &mut self.series[s as usize];
                if r.kind == Kind::Sample {
                    series.samples.push(x);
                } else {
                    series.summaries.push(x);
                }
            }
        }
        if any {
            self.matched += 1;
        }
    }

    /// The series a (record group, metric) feeds, or None when the filter or `--metric`
    /// leaves it out.
    fn resolve(&mut self, r: &Record, key: &str, metric: u32) -> Option<u32> {
        if let MetricChoice::Keys(keys) = &self.spec.metrics
            && !keys.iter().any(|k| k == key)
        {
            return None;
        }
        if !self.spec.filter.matches(r, key) {
            return None;
        }
        let rv: Vec<String> = self
            .spec
            .rows
            .iter()
            .map(|d| d.value(r, key).to_string())
            .collect();
        let cv: Vec<String> = self
            .spec
            .cols
            .iter()
            .map(|d| d.value(r, key).to_string())
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
        let name = self.names.id(&r.name);
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
            samples: Vec::new(),
            summaries: Vec::new(),
        });
        self.series_map.insert(k, s);
        Some(s)
    }
}
