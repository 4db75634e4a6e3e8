//! `collate --history`: each row of each label (a series) as its runs in order of time, each
//! run's statistic with its 95% confidence interval, and the runs where the row's level
//! shifted (e-divisive means, [`crate::changepoint`]) with the environment facts that differ
//! between the runs before and after.
//!
//! A run is a unit of pooling as the matrix knows it: a suite invocation (every tool run of
//! one `./benchmatrix`), or a tool run by hand; its time is its records' first `at`. The
//! history is the matrix with that unit added to the columns: every point is a cell as the
//! matrix computes it (the runs that count, the statistic, its interval), and every run's
//! facts are the facts of its column. Its rows are sparse (each holds only the runs it has),
//! as runs by hand are each one row's: the work is in proportion to the records.

mod chart;
mod text;
mod tidy;
mod words;

use crate::changepoint::{self, Params};
use crate::cli::Opts;
use crate::collect::{Collector, SEP};
use crate::dims::Dim;
use crate::facts::order;
use crate::matrix::{self, Better, Cell, Row, Table};
use crate::render::Format;
use measure::units::Scale;
use measure::{Exit, Failure};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The formats that show a history.
pub const FORMATS: &str = "text, html, svg, json or csv";

/// Every series of the input, and how they were computed.
#[derive(Debug)]
pub struct History {
    /// The statistic of the points (`--stat`).
    pub stat: String,
    pub params: Params,
    pub series: Vec<Series>,
    /// The matrix's notes that concern the runs (left out, partial).
    pub notes: Vec<String>,
}

/// One row of one column (label): its runs in order of time.
#[derive(Debug)]
pub struct Series {
    /// The row's title as the matrix gives it (name, unit, direction).
    pub title: String,
    /// The title without the unit and the direction.
    pub name: String,
    pub row_dims: Vec<(String, String)>,
    /// The unit suffix of the row's metrics (`_s`).
    pub suffix: String,
    pub scale: Scale,
    pub better: Better,
    /// The statistic of its points (the row's: `--stat`, or the mean its headline names).
    pub stat: String,
    /// The column's key (the label, by default).
    pub key: String,
    /// The column's dimensions (key, value), the run unit left out.
    pub col_dims: Vec<(String, String)>,
    pub points: Vec<Point>,
    pub changes: Vec<Shift>,
}

/// One run of a series.
#[derive(Debug)]
pub struct Point {
    /// The run unit's id: the suite invocation, or the tool run's own id.
    pub unit: String,
    /// Its time: its records' first `at`.
    pub at: String,
    pub n: usize,
    /// The statistic, in base units.
    pub value: f64,
    pub ci: Option<(f64, f64)>,
    /// Values from runs that did not finish (`--include-partial`).
    pub partial: usize,
}

/// A change of level: the points from `index` on are on a new level.
#[derive(Debug)]
pub struct Shift {
    /// The first point of the new level (0-based).
    pub index: usize,
    /// The permutation test's p-value.
    pub p: f64,
    /// The median of the points of the segment before and of the one after.
    pub before: f64,
    pub after: f64,
    /// The change of level in percent of the level before (`None` from a level of 0).
    pub pct: Option<f64>,
    /// The environment facts whose values differ between the two segments' runs.
    pub facts: Vec<FactShift>,
}

/// A fact with the values the runs before a change saw, and those the runs after saw.
#[derive(Debug, Clone, PartialEq)]
pub struct FactShift {
    pub key: String,
    pub before: Vec<String>,
    pub after: Vec<String>,
}

/// `collate --history`: reads the inputs, builds every series and prints them.
pub fn run(o: &Opts) -> Result<Exit, Failure> {
    if matches!(o.format, Format::Dokuwiki | Format::Markdown) {
        return Err(Failure::usage(format!(
            "--history with -f {}: a table has no room for a series of runs; --history prints {FORMATS} (-f text, html, svg, json, csv)",
            if o.format == Format::Dokuwiki {
                "dokuwiki"
            } else {
                "markdown"
            }
        )));
    }
    let mut spec = o.spec.clone();
    let series_dims = spec.cols.clone();
    spec.cols.push(Dim::RunUnit);
    let collector = crate::gather::collect_spec(spec, &o.files, o.on_invalid)?;
    crate::gather::unknown_keys(&collector)?;
    let mopts = matrix::Options {
        baseline: None,
        columns: None,
        latest: false,
        verbose: false,
        ..o.matrix.clone()
    };
    let table = matrix::build_sparse(&collector, &mopts)?;
    if table.rows.is_empty() || table.columns.is_empty() {
        return Err(Failure::new(
            Exit::MeasuredFailure,
            "empty history",
            crate::gather::why_empty(&collector),
        ));
    }
    let h = build(&collector, &table, &series_dims, o.change);
    crate::render::print(&match o.format {
        Format::Json => tidy::json(&h),
        Format::Csv => tidy::csv(&h),
        Format::Html => chart::page(&h),
        Format::Svg => chart::document(&h),
        _ => text::text(&h),
    })
}

/// One column of the table (a run of a series' column), placed.
struct RunCol<'a> {
    /// Its place in the table.
    j: usize,
    unit: &'a str,
    at: String,
    /// Its key in the collector (the column dimensions' values), for its facts.
    collected: String,
}

/// The table's columns grouped by series column (the values of `dims`), in order of first
/// appearance, each group's runs in order of time (ties by id).
fn groups<'a>(c: &Collector, t: &'a Table, dims: &[Dim]) -> Vec<(String, usize, Vec<RunCol<'a>>)> {
    let starts = unit_starts(c);
    let mut out: Vec<(String, usize, Vec<RunCol<'a>>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (j, col) in t.columns.iter().enumerate() {
        let get = |k: &str| {
            col.dims
                .iter()
                .find(|(ck, _)| ck == k)
                .map_or("", |(_, v)| v.as_str())
        };
        let vals: Vec<&str> = dims.iter().map(|d| get(&d.key())).collect();
        let unit = get(&Dim::RunUnit.key());
        let key = vals.join("/");
        let mut collected = vals.join(&SEP.to_string());
        if !dims.is_empty() {
            collected.push(SEP);
        }
        collected.push_str(unit);
        let at = starts.get(unit).cloned().unwrap_or_default();
        let g = *index.entry(key.clone()).or_insert_with(|| {
            out.push((key, j, Vec::new()));
            out.len() - 1
        });
        out[g].2.push(RunCol {
            j,
            unit,
            at,
            collected,
        });
    }
    for g in &mut out {
        g.2.sort_by(|a, b| (&a.at, a.unit).cmp(&(&b.at, b.unit)));
    }
    out
}

/// Each unit's time: the oldest `at` of its runs' records (its begins included).
fn unit_starts(c: &Collector) -> HashMap<&str, String> {
    let mut out: HashMap<&str, String> = HashMap::new();
    for r in &c.runs.list {
        let unit = c.runs.units[r.unit as usize].as_str();
        let e = out.entry(unit).or_insert_with(|| r.start.clone());
        if r.start < *e {
            r.start.clone_into(e);
        }
    }
    for (unit, at) in &c.begun {
        if let Some(e) = out.get_mut(unit.as_str())
            && at < e
        {
            at.clone_into(e);
        }
    }
    out
}

/// Every series: for each row of the table, each series column with a value in it. Each row
/// gives only the cells it has (the table is sparse), so the work is in proportion to the
/// cells, not to rows times columns.
fn build(c: &Collector, t: &Table, dims: &[Dim], params: Params) -> History {
    let groups = groups(c, t, dims);
    // Each column's series column (its group) and its place among that group's runs.
    let mut place = vec![(0, 0); t.columns.len()];
    for (g, (_, _, runs)) in groups.iter().enumerate() {
        for (k, rc) in runs.iter().enumerate() {
            place[rc.j] = (g, k);
        }
    }
    let dim_keys: Vec<String> = dims.iter().map(Dim::key).collect();
    let mut series = Vec::new();
    for r in &t.rows {
        let mut cells: Vec<((usize, usize), &Cell)> =
            r.placed().map(|(j, cell)| (place[j], cell)).collect();
        cells.sort_by_key(|(p, _)| *p);
        for run in cells.chunk_by(|a, b| a.0.0 == b.0.0) {
            let (key, first, runs) = &groups[run[0].0.0];
            let col_dims = t.columns[*first]
                .dims
                .iter()
                .filter(|(k, _)| dim_keys.contains(k))
                .cloned()
                .collect();
            let points: Vec<(&RunCol<'_>, &Cell)> = run
                .iter()
                .map(|((_, k), cell)| (&runs[*k], *cell))
                .collect();
            series.push(one(c, r, key, col_dims, &points, &params));
        }
    }
    History {
        stat: t.stat.clone(),
        params,
        series,
        notes: t
            .notes
            .iter()
            .filter(|n| n.detail.is_some())
            .map(|n| n.text.clone())
            .collect(),
    }
}

/// The series of row `r` in the series column `key`, from its cells in order of time.
fn one(
    c: &Collector,
    r: &Row,
    key: &str,
    col_dims: Vec<(String, String)>,
    cells: &[(&RunCol<'_>, &Cell)],
    params: &Params,
) -> Series {
    let points: Vec<Point> = cells
        .iter()
        .map(|(rc, cell)| Point {
            unit: rc.unit.to_string(),
            at: rc.at.clone(),
            n: cell.n,
            value: cell.value,
            ci: cell.ci,
            partial: cell.partial,
        })
        .collect();
    let cols: Vec<&str> = cells.iter().map(|(rc, _)| rc.collected.as_str()).collect();
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    let found = changepoint::e_divisive(&values, params);
    let changes = shifts(c, &values, &found, &cols);
    Series {
        title: r.title.clone(),
        name: r.name.clone(),
        row_dims: r.dims.clone(),
        suffix: r.suffix.clone(),
        scale: r.scale.clone(),
        better: r.better,
        stat: r.stat.name(),
        key: key.to_string(),
        col_dims,
        points,
        changes,
    }
}

/// The changes `found` in `values` with their levels (the median of each segment's points)
/// and the facts that differ between the runs of the segments around each.
fn shifts(
    c: &Collector,
    values: &[f64],
    found: &[changepoint::Change],
    cols: &[&str],
) -> Vec<Shift> {
    let mut bounds = vec![0];
    bounds.extend(found.iter().map(|f| f.index));
    bounds.push(values.len());
    let level = |lo: usize, hi: usize| {
        let mut v = values[lo..hi].to_vec();
        v.sort_by(f64::total_cmp);
        crate::stats::quantile_sorted(&v, 0.5)
    };
    found
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let (lo, mid, hi) = (bounds[k], bounds[k + 1], bounds[k + 2]);
            let (before, after) = (level(lo, mid), level(mid, hi));
            Shift {
                index: f.index,
                p: f.p,
                before,
                after,
                pct: (before != 0.0).then(|| (after - before) / before.abs() * 100.0),
                facts: fact_shifts(c, &cols[lo..mid], &cols[mid..hi]),
            }
        })
        .collect()
}

/// The facts whose values differ between the runs `before` and `after` (their collector
/// column keys), in the facts' order.
fn fact_shifts(c: &Collector, before: &[&str], after: &[&str]) -> Vec<FactShift> {
    let seen = |cols: &[&str]| {
        let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for col in cols {
            for (k, v) in c.facts.of(col).into_iter().flatten() {
                m.entry(k.clone())
                    .or_default()
                    .extend(v.seen.iter().cloned());
            }
        }
        m
    };
    let (b, a) = (seen(before), seen(after));
    let mut keys: Vec<&String> = b.keys().chain(a.keys()).collect();
    keys.sort_by_key(|k| order(k));
    keys.dedup();
    let empty = BTreeSet::new();
    keys.into_iter()
        .filter_map(|k| {
            let (vb, va) = (b.get(k).unwrap_or(&empty), a.get(k).unwrap_or(&empty));
            (vb != va).then(|| FactShift {
                key: k.clone(),
                before: vb.iter().cloned().collect(),
                after: va.iter().cloned().collect(),
            })
        })
        .collect()
}
