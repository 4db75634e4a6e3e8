//! From the collected series to the matrix every format renders: which rows and columns, the
//! statistic of each cell with its confidence interval, the display unit of each row, and
//! the comparison of each cell against the baseline column.

use crate::collect::{Collector, MetricChoice, SEP};
use crate::dims::Dim;
use crate::stats::{self, Stat};
use measure::units::{Scale, choose_scale, sig3};
use measure::{Failure, exit};
use std::collections::HashMap;

/// Confidence level of the ± interval.
pub const CONFIDENCE: f64 = 0.95;
/// Significance level of the baseline comparison.
pub const ALPHA: f64 = 0.05;

/// How a cell compares with its baseline.
#[derive(Clone, Debug, PartialEq)]
pub enum Delta {
    /// This cell is the baseline.
    Baseline,
    /// A significant change of `pct` percent (p < alpha).
    Change { pct: f64, p: f64 },
    /// No significant difference.
    Same { p: f64 },
    /// Too few samples: even a complete separation could not reach alpha.
    TooFew { n: usize, base_n: usize },
    /// The baseline cell is missing in this row.
    NoBaseline,
}

/// One cell: the statistic of the values that fell in it.
#[derive(Clone, Debug)]
pub struct Cell {
    pub n: usize,
    /// The statistic in base units.
    pub value: f64,
    /// The confidence interval in base units, when the sample is large enough.
    pub ci: Option<(f64, f64)>,
    pub delta: Option<Delta>,
    /// What every human format prints.
    pub text: String,
    /// The values, sorted (kept for the comparison; not printed).
    pub sorted: Vec<f64>,
}

/// One row.
#[derive(Clone, Debug)]
pub struct Row {
    pub title: String,
    /// The row's dimension values, as (key, value).
    pub dims: Vec<(String, String)>,
    pub metrics: Vec<String>,
    /// The unit suffix of the row's metrics (`_s`).
    pub suffix: String,
    pub scale: Scale,
    /// `samples`, or `summaries` when no sample in the row carries its metric.
    pub source: &'static str,
    pub cells: Vec<Option<Cell>>,
}

/// One column.
#[derive(Clone, Debug)]
pub struct Column {
    /// The levels joined with `/` (the label, for the default columns).
    pub key: String,
    /// Header levels, top first.
    pub levels: Vec<String>,
    /// (key, value) of every dimension, the label's levels included.
    pub dims: Vec<(String, String)>,
}

/// The matrix, ready to render.
#[derive(Clone, Debug)]
pub struct Table {
    pub columns: Vec<Column>,
    /// Names of the header levels (`label.1`...).
    pub level_keys: Vec<String>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    pub stat: String,
    pub baseline: Option<String>,
    pub transposed: bool,
}

impl Table {
    /// The number of header levels.
    pub fn depth(&self) -> usize {
        self.level_keys.len().max(1)
    }

    /// Header cells of `level` as (text, first column, span): adjacent columns merge when
    /// this level and every level above are the same (DokuWiki's and HTML's colspan).
    pub fn spans(&self, level: usize) -> Vec<(String, usize, usize)> {
        let mut out: Vec<(String, usize, usize)> = Vec::new();
        for (j, c) in self.columns.iter().enumerate() {
            if let Some(last) = out.last_mut() {
                let first = &self.columns[last.1];
                let same = (0..=level).all(|l| level_of(first, l) == level_of(c, l));
                if same && !level_of(c, level).is_empty() {
                    last.2 += 1;
                    continue;
                }
            }
            out.push((level_of(c, level).to_string(), j, 1));
        }
        out
    }

    /// Swaps rows and columns (`--transpose`): row titles become a one-level header.
    pub fn transpose(mut self) -> Table {
        let columns: Vec<Column> = self
            .rows
            .iter()
            .map(|r| Column {
                key: r.title.clone(),
                levels: vec![r.title.clone()],
                dims: r.dims.clone(),
            })
            .collect();
        // The cells move into their new rows: the old rows keep nothing.
        let mut old_cells: Vec<Vec<Option<Cell>>> = self
            .rows
            .iter_mut()
            .map(|r| std::mem::take(&mut r.cells))
            .collect();
        let rows: Vec<Row> = self
            .columns
            .iter()
            .enumerate()
            .map(|(j, c)| Row {
                title: c.key.clone(),
                dims: c.dims.clone(),
                metrics: Vec::new(),
                suffix: String::new(),
                scale: Scale {
                    unit: "",
                    factor: 1.0,
                },
                source: "samples",
                cells: old_cells.iter_mut().map(|cells| cells[j].take()).collect(),
            })
            .collect();
        Table {
            columns,
            level_keys: vec!["row".into()],
            rows,
            notes: self.notes,
            stat: self.stat,
            baseline: self.baseline,
            transposed: true,
        }
    }
}

fn level_of(c: &Column, l: usize) -> &str {
    c.levels.get(l).map(String::as_str).unwrap_or("")
}

/// What the user chose besides grouping.
#[derive(Clone, Debug)]
pub struct Options {
    pub stat: Stat,
    pub baseline: Option<String>,
    pub columns: Option<Vec<String>>,
    pub show_ci: bool,
}

/// A number for a cell: integers stay integers for counts, else three significant digits.
pub fn fmt_number(v: f64, suffix: &str) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if suffix == "_count" && v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    sig3(v)
}

/// Decimals for a row's numbers: three significant digits of the row's typical value, the
/// same for every cell (so a row reads evenly), fewer where every value is exact with fewer
/// (`7`, `84`, `230` rather than `7.00`, `84.0`, `230`).
pub fn row_decimals(values: &[f64]) -> usize {
    let abs: Vec<f64> = values
        .iter()
        .map(|v| v.abs())
        .filter(|v| v.is_finite())
        .collect();
    if abs.is_empty() {
        return 0;
    }
    let typical = measure::stats::median(&abs).unwrap_or(0.0);
    if typical == 0.0 {
        return 0;
    }
    let d = (2 - measure::units::decimal_exponent(typical)).clamp(0, 9) as usize;
    // Fewer decimals only where every value has no more (whole numbers typed by hand, counts),
    // not where rounding happens to end in zeros: 1.0035 stays 1.00.
    for fewer in 0..d {
        let f = 10f64.powi(fewer as i32);
        if abs.iter().all(|v| {
            let x = v * f;
            (x - x.round()).abs() <= 1e-9 * x.abs().max(1.0)
        }) {
            return fewer;
        }
    }
    d
}

/// A cell's number with the row's decimals, or more where the value is so small that they
/// would leave no significant digit (never `0` for a value that is not).
pub fn fmt_fixed(v: f64, row_decimals: usize) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let mut d = row_decimals;
    if v != 0.0 {
        let need = -measure::units::decimal_exponent(v);
        d = d.max(need.clamp(0, 12) as usize);
    }
    format!("{v:.d$}")
}

/// `±2%`, `±0.4%`.
fn fmt_spread(center: f64, lo: f64, hi: f64) -> Option<String> {
    if center == 0.0 || !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let pct = ((center - lo).max(hi - center) / center.abs()) * 100.0;
    Some(if pct < 0.95 {
        format!("±{pct:.1}%")
    } else {
        format!("±{pct:.0}%")
    })
}

/// `+20%`, `-3.1%`, `+0.52%`.
pub fn fmt_delta(pct: f64) -> String {
    let a = pct.abs();
    if a >= 10.0 {
        format!("{pct:+.0}%")
    } else if a >= 1.0 {
        format!("{pct:+.1}%")
    } else {
        format!("{pct:+.2}%")
    }
}

/// The smallest two-sided p-value the U test can give for samples of n1 and n2 values (a
/// complete separation without ties): 2 / C(n1+n2, n1).
fn min_p(n1: usize, n2: usize) -> f64 {
    let (a, b) = (n1.min(n2), n1.max(n2));
    let mut c = 1.0f64;
    for i in 1..=a {
        c = c * (b + i) as f64 / i as f64;
    }
    (2.0 / c).min(1.0)
}

fn unit_title(scale: &Scale) -> String {
    if scale.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", scale.unit)
    }
}

fn stem(metric: &str) -> &str {
    match measure::record::unit_suffix(metric) {
        Some(s) => &metric[..metric.len() - s.len()],
        None => metric,
    }
}

/// The per-sample metric that a summary's headline aggregates: `wall_s` for
/// `wall_median_s`, `rtt_s` for `rtt_mean_s`.
fn per_sample_metric(headline: &str) -> Option<String> {
    let suffix = measure::record::unit_suffix(headline)?;
    let stem = &headline[..headline.len() - suffix.len()];
    let base = stem
        .strip_suffix("_median")
        .or_else(|| stem.strip_suffix("_mean"))?;
    Some(format!("{base}{suffix}"))
}

/// The headline metrics per measurement name, where a headline that aggregates a per-sample
/// metric (`wall_median_s` over the runs' `wall_s`) is replaced by that metric when samples
/// carry it: the cell then comes from every run, with its spread and its significance test,
/// rather than from one summary value per invocation.
fn effective_headlines(c: &Collector) -> HashMap<u32, Vec<u32>> {
    c.headlines
        .iter()
        .map(|(&name, hs)| {
            let mapped = hs
                .iter()
                .map(|&h| {
                    per_sample_metric(&c.metrics.list[h as usize])
                        .and_then(|m| c.metrics.get(&m))
                        .filter(|&m| {
                            c.series
                                .iter()
                                .any(|s| s.name == name && s.metric == m && !s.samples.is_empty())
                        })
                        .unwrap_or(h)
                })
                .collect();
            (name, mapped)
        })
        .collect()
}

/// Builds the matrix from what was collected.
pub fn build(c: &Collector, o: &Options) -> Result<Table, Failure> {
    let spec = &c.spec;
    let headlines = effective_headlines(c);
    // Which series show: the headline rule, or every metric.
    let keep: Vec<bool> = c
        .series
        .iter()
        .map(|s| match &spec.metrics {
            MetricChoice::Headline => match headlines.get(&s.name) {
                Some(h) => h.contains(&s.metric),
                None => !s.samples.is_empty(),
            },
            MetricChoice::All | MetricChoice::Keys(_) => true,
        })
        .collect();
    // Columns: in order of first appearance, or as --columns says.
    let label_depth = spec
        .cols
        .iter()
        .position(|d| *d == Dim::Label)
        .map(|i| {
            c.col_vals
                .iter()
                .map(|v| v[i].split('/').count())
                .max()
                .unwrap_or(1)
        })
        .unwrap_or(0);
    let all_cols: Vec<Column> = (0..c.cols.list.len())
        .map(|id| column(&spec.cols, &c.col_vals[id], label_depth))
        .collect();
    let mut used_col = vec![false; all_cols.len()];
    for (s, k) in c.series.iter().zip(&keep) {
        if *k {
            used_col[s.col as usize] = true;
        }
    }
    // col_map[j] = the collected column shown as column j: those with data in order of first
    // appearance, or exactly the ones --columns names (all missing if they hold no data).
    let col_map: Vec<usize> = match &o.columns {
        None => (0..all_cols.len()).filter(|&id| used_col[id]).collect(),
        Some(names) => {
            let mut map = Vec::new();
            for name in names {
                let Some(id) = all_cols.iter().position(|col| &col.key == name) else {
                    let known: Vec<&str> = all_cols.iter().map(|c| c.key.as_str()).collect();
                    return Err(Failure::usage(format!(
                        "--columns: no column \"{name}\" in the input; the columns are: {}",
                        known.join(", ")
                    )));
                };
                map.push(id);
            }
            map
        }
    };
    let columns: Vec<Column> = col_map.iter().map(|&id| all_cols[id].clone()).collect();
    let col_pos: Vec<Option<usize>> = (0..all_cols.len())
        .map(|id| col_map.iter().position(|&m| m == id))
        .collect();
    // Rows.
    let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); c.rows.list.len()];
    for (i, s) in c.series.iter().enumerate() {
        if keep[i] && col_pos[s.col as usize].is_some() {
            by_row[s.row as usize].push(i);
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut any_ci = false;
    let q = o.stat.quantile();
    let ci_min = q.map(|q| stats::ci_min_samples(q, CONFIDENCE));
    for (row_id, members) in by_row.iter().enumerate() {
        if members.is_empty() {
            continue;
        }
        let use_samples = members.iter().any(|&i| !c.series[i].samples.is_empty());
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); columns.len()];
        let mut metrics: Vec<String> = Vec::new();
        let mut suffix: Option<(&str, &str)> = None;
        for &i in members {
            let s = &c.series[i];
            let v = if use_samples {
                &s.samples
            } else {
                &s.summaries
            };
            if v.is_empty() {
                continue;
            }
            let metric = c.metrics.list[s.metric as usize].as_str();
            let suf = measure::record::unit_suffix(metric).unwrap_or("");
            match suffix {
                None => suffix = Some((suf, metric)),
                Some((first, other)) if first != suf => {
                    return Err(Failure::new(
                        exit::CANNOT,
                        format!("row \"{}\"", c.rows.list[row_id].replace(SEP, ", ")),
                        format!(
                            "mixes units: {other} ({first}) and {metric} ({suf}); put metric in --rows or pick one with --metric"
                        ),
                    ));
                }
                _ => {}
            }
            if !metrics.iter().any(|m| m == metric) {
                metrics.push(metric.to_string());
            }
            if let Some(j) = col_pos[s.col as usize] {
                values[j].extend_from_slice(v);
            }
        }
        let Some((suffix, _)) = suffix else { continue };
        let mut cells: Vec<Option<Cell>> = Vec::with_capacity(columns.len());
        for mut v in values {
            if v.is_empty() {
                cells.push(None);
                continue;
            }
            v.sort_by(f64::total_cmp);
            let value = o.stat.of_sorted(&v);
            let ci = match q {
                Some(q) => {
                    let ci = stats::quantile_ci(v.len(), q, CONFIDENCE);
                    if ci.bounded(v.len()) {
                        Some(ci.bounds(&v))
                    } else {
                        None
                    }
                }
                None => None,
            };
            any_ci |= ci.is_some();
            cells.push(Some(Cell {
                n: v.len(),
                value,
                ci,
                delta: None,
                text: String::new(),
                sorted: v,
            }));
        }
        // The display unit: chosen for the median of the row's cell values.
        let centers: Vec<f64> = cells.iter().flatten().map(|c| c.value.abs()).collect();
        let typical = measure::stats::median(&centers).unwrap_or(f64::NAN);
        let scale = choose_scale(suffix, typical);
        let dims: Vec<(String, String)> = spec
            .rows
            .iter()
            .zip(&c.row_vals[row_id])
            .map(|(d, v)| (d.key(), v.clone()))
            .collect();
        rows.push(Row {
            title: String::new(),
            dims,
            metrics,
            suffix: suffix.to_string(),
            scale,
            source: if use_samples { "samples" } else { "summaries" },
            cells,
        });
    }
    // Titles: the row's values without the metric, then the metric where it tells rows
    // apart, then the unit.
    let metric_in_rows = spec.rows.contains(&Dim::Metric);
    let bases: Vec<String> = rows
        .iter()
        .map(|r| {
            r.dims
                .iter()
                .filter(|(k, _)| k != "metric" && k != "unit")
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    for (i, r) in rows.iter_mut().enumerate() {
        let twins = bases.iter().filter(|b| **b == bases[i]).count();
        let mut title = bases[i].clone();
        if metric_in_rows && (twins > 1 || title.is_empty()) {
            let m = r
                .dims
                .iter()
                .find(|(k, _)| k == "metric")
                .map(|(_, v)| stem(v).to_string())
                .unwrap_or_default();
            title = if title.is_empty() {
                m
            } else {
                format!("{title}: {m}")
            };
        }
        title.push_str(&unit_title(&r.scale));
        r.title = title;
    }
    // The baseline comparison.
    let base_of: Option<Vec<Option<usize>>> = match &o.baseline {
        None => None,
        Some(b) => Some(baseline_columns(&columns, &spec.cols, b)?),
    };
    let mut any_few = false;
    for r in &mut rows {
        if let Some(base_of) = &base_of {
            for (j, &b) in base_of.iter().enumerate() {
                let Some(b) = b else { continue };
                let delta = if b == j {
                    Delta::Baseline
                } else {
                    match (&r.cells[b], &r.cells[j]) {
                        (None, Some(_)) => Delta::NoBaseline,
                        (Some(base), Some(cell)) => {
                            compare(&base.sorted, base.value, &cell.sorted, cell.value)
                        }
                        (_, None) => continue,
                    }
                };
                any_few |= matches!(delta, Delta::TooFew { .. });
                if let Some(cell) = r.cells[j].as_mut() {
                    cell.delta = Some(delta);
                }
            }
        }
        let scale = r.scale.clone();
        let shown: Vec<f64> = r
            .cells
            .iter()
            .flatten()
            .map(|c| scale.apply(c.value))
            .collect();
        let decimals = row_decimals(&shown);
        for cell in r.cells.iter_mut().flatten() {
            cell.text = cell_text(cell, decimals, &scale, o.show_ci);
        }
    }
    let mut notes = Vec::new();
    if let (Some(q), Some(min)) = (q, ci_min)
        && o.show_ci
        && any_ci
    {
        let what = if q == 0.5 {
            "median".to_string()
        } else {
            o.stat.name()
        };
        notes.push(format!(
            "± is the 95% confidence interval of the {what} (order statistics, binomial distribution); a cell shows it with at least {min} values."
        ));
    }
    if let Some(b) = &o.baseline {
        let mut n = format!(
            "Deltas are against {b}, where a Mann-Whitney U test finds a difference at p < {ALPHA}; ~ means no significant difference."
        );
        if any_few {
            n.push_str(" ? means too few values to tell: even values entirely apart could not reach p < 0.05 (4 against 4 can).");
        }
        notes.push(n);
    }
    let summary_rows: Vec<&str> = rows
        .iter()
        .filter(|r| r.source == "summaries")
        .map(|r| r.title.as_str())
        .collect();
    if !summary_rows.is_empty() && summary_rows.len() < rows.len() {
        notes.push(format!(
            "From summaries (one value per run): {}.",
            summary_rows.join("; ")
        ));
    } else if !summary_rows.is_empty() {
        notes.push("Every cell is over summaries (one value per run).".into());
    }
    let level_keys = level_keys(&spec.cols, label_depth);
    Ok(Table {
        columns,
        level_keys,
        rows,
        notes,
        stat: o.stat.name(),
        baseline: o.baseline.clone(),
        transposed: false,
    })
}

fn compare(base: &[f64], base_value: f64, cell: &[f64], value: f64) -> Delta {
    if min_p(base.len(), cell.len()) > ALPHA {
        return Delta::TooFew {
            n: cell.len(),
            base_n: base.len(),
        };
    }
    let p = stats::mann_whitney(base, cell).map(|t| t.p).unwrap_or(1.0);
    if p < ALPHA && base_value != 0.0 {
        Delta::Change {
            pct: (value - base_value) / base_value.abs() * 100.0,
            p,
        }
    } else {
        Delta::Same { p }
    }
}

fn cell_text(cell: &Cell, decimals: usize, scale: &Scale, show_ci: bool) -> String {
    let mut t = fmt_fixed(scale.apply(cell.value), decimals);
    if show_ci
        && let Some((lo, hi)) = cell.ci
        && let Some(s) = fmt_spread(cell.value, lo, hi)
    {
        t.push(' ');
        t.push_str(&s);
    }
    match &cell.delta {
        Some(Delta::Change { pct, .. }) => {
            t.push(' ');
            t.push_str(&fmt_delta(*pct));
        }
        Some(Delta::Same { .. }) => t.push_str(" ~"),
        Some(Delta::TooFew { .. }) => t.push_str(" ?"),
        _ => {}
    }
    t
}

/// A column from the values of the column dimensions.
/// A column from the values of the column dimensions; the label's levels are padded with
/// empty ones at the bottom to `label_depth`, so that the dimensions after it line up.
fn column(dims: &[Dim], vals: &[String], label_depth: usize) -> Column {
    let mut levels = Vec::new();
    let mut kv = Vec::new();
    for (d, v) in dims.iter().zip(vals) {
        kv.push((d.key(), v.clone()));
        let mut ls = d.levels(v);
        if *d == Dim::Label {
            for (i, l) in ls.iter().enumerate() {
                kv.push((format!("label.{}", i + 1), l.clone()));
            }
            ls.resize(label_depth.max(ls.len()), String::new());
        }
        levels.extend(ls);
    }
    Column {
        key: vals.join("/"),
        levels,
        dims: kv,
    }
}

fn level_keys(dims: &[Dim], label_depth: usize) -> Vec<String> {
    let mut keys = Vec::new();
    for d in dims {
        if *d == Dim::Label {
            keys.extend((1..=label_depth.max(1)).map(|i| format!("label.{i}")));
        } else {
            keys.push(d.key());
        }
    }
    keys
}

/// For each column, the column it is compared with: `--baseline LABEL` names one column;
/// `--baseline KEY=VALUE` pairs each column with the one that differs only in KEY, which
/// is VALUE there.
fn baseline_columns(
    columns: &[Column],
    col_dims: &[Dim],
    b: &str,
) -> Result<Vec<Option<usize>>, Failure> {
    if let Some(j) = columns.iter().position(|c| c.key == b) {
        return Ok(vec![Some(j); columns.len()]);
    }
    if let Some((k, v)) = b.split_once('=')
        && let Ok(dim) = Dim::parse(k)
    {
        let key = dim.key();
        let known = columns
            .iter()
            .any(|c| c.dims.iter().any(|(ck, _)| *ck == key));
        if !known {
            let keys: Vec<String> = col_dims.iter().map(Dim::key).collect();
            return Err(Failure::usage(format!(
                "--baseline {b}: {key} is not a column dimension (the columns are by {}); use --cols to make it one",
                keys.join(",")
            )));
        }
        let ignore = |ck: &str| {
            ck == key
                || (key.starts_with("label.") && ck == "label")
                || (key == "label" && ck.starts_with("label."))
        };
        let value_of = |c: &Column, k: &str| {
            c.dims
                .iter()
                .find(|(ck, _)| ck == k)
                .map(|(_, v)| v.clone())
        };
        let mut out = Vec::new();
        let mut found = false;
        for c in columns {
            let target = columns.iter().position(|t| {
                value_of(t, &key).as_deref() == Some(v)
                    && c.dims
                        .iter()
                        .filter(|(ck, _)| !ignore(ck))
                        .all(|(ck, cv)| value_of(t, ck).as_deref() == Some(cv.as_str()))
            });
            found |= target.is_some();
            out.push(target);
        }
        if !found {
            return Err(Failure::usage(format!(
                "--baseline {b}: no column has {key} = {v}"
            )));
        }
        return Ok(out);
    }
    let known: Vec<&str> = columns.iter().map(|c| c.key.as_str()).collect();
    Err(Failure::usage(format!(
        "--baseline {b}: no such column; the columns are: {} (or give KEY=VALUE, e.g. label.1=bare)",
        known.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(fmt_delta(20.0), "+20%");
        assert_eq!(fmt_delta(-3.12), "-3.1%");
        assert_eq!(fmt_delta(0.523), "+0.52%");
        assert_eq!(fmt_number(12.0, "_count"), "12");
        assert_eq!(fmt_number(7.0, "_s"), "7.00");
        assert_eq!(fmt_spread(100.0, 98.0, 103.0).as_deref(), Some("±3%"));
        assert_eq!(row_decimals(&[7.0, 84.0, 230.0]), 0);
        assert_eq!(row_decimals(&[17.0, 14.0, 25.0]), 0);
        assert_eq!(row_decimals(&[1.503, 1.49, 1.5]), 2);
        assert_eq!(row_decimals(&[0.2, 0.1, 0.03]), 2);
        assert_eq!(row_decimals(&[12.5, 14.0]), 1);
        assert_eq!(row_decimals(&[1.0035, 1.1]), 2);
        assert_eq!(fmt_fixed(0.004, 0), "0.004");
        assert_eq!(fmt_fixed(7.0, 0), "7");
        assert_eq!(fmt_fixed(230.0, 0), "230");
        assert_eq!(fmt_fixed(1.5, 2), "1.50");
        assert_eq!(fmt_spread(100.0, 99.7, 100.2).as_deref(), Some("±0.3%"));
        assert!((min_p(5, 5) - 0.007_936_507_936_507_936).abs() < 1e-15);
        assert!(min_p(3, 3) > ALPHA && min_p(4, 4) < ALPHA);
        assert!(min_p(1, 38) > ALPHA && min_p(1, 39) <= ALPHA);
    }
}
