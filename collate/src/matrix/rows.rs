//! The matrix's rows: which series show (the headline rule or `--metric`), the values that
//! fall in each cell, each cell's statistic and confidence interval, and each row's unit.

use super::Options;
use super::cells::{self, CellRuns};
use super::include::Include;
use super::table::{Better, LeftOut, Row, Slot};
use crate::collect::{Collector, MetricChoice, SEP};
use crate::fastmap::FastMap;
use crate::stats::Stat;
use measure::record::CellStat;
use measure::units::choose_scale;
use measure::{Exit, Failure};
use std::collections::HashMap;

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

/// The headline (measurement name, metric) of a row whose series share one measurement name
/// and one metric: that metric, or the headline it is the per-sample metric of.
fn headline_of(c: &Collector, members: &[usize]) -> Option<(u32, u32)> {
    let s0 = &c.series[*members.first()?];
    let one = members
        .iter()
        .all(|&i| c.series[i].name == s0.name && c.series[i].metric == s0.metric);
    if !one {
        return None;
    }
    let named = c.headlines.get(&s0.name)?;
    if named.contains(&s0.metric) {
        return Some((s0.name, s0.metric));
    }
    let metric = c.metrics.list[s0.metric as usize].as_str();
    named
        .iter()
        .find(|&&h| per_sample_metric(&c.metrics.list[h as usize]).as_deref() == Some(metric))
        .map(|&h| (s0.name, h))
}

/// The statistic of a row's cells: the one its headline names (`mean` for equal-time slices
/// of a rate) under the default median, else `--stat`'s.
fn row_stat(c: &Collector, head: Option<(u32, u32)>, o: &Options) -> Stat {
    match head.and_then(|h| c.stats.get(&h)) {
        Some(CellStat::Mean) if o.stat == Stat::Median => Stat::Mean,
        _ => o.stat,
    }
}

/// Which series show, by index: under the headline rule a measurement's headlines (every
/// metric its samples carry where no summary names one), else every series.
pub(super) fn shown_series(c: &Collector) -> Vec<bool> {
    let headlines = effective_headlines(c);
    c.series
        .iter()
        .map(|s| match &c.spec.metrics {
            MetricChoice::Headline => match headlines.get(&s.name) {
                Some(h) => h.contains(&s.metric),
                None => !s.samples.is_empty(),
            },
            MetricChoice::All | MetricChoice::Keys(_) => true,
        })
        .collect()
}

/// The rows, untitled, in order of first appearance of a value that counts: each holds the
/// kept series that fall in a shown column (`col_pos`), one cell per shown column (`ncols`),
/// or, `sparse`, only the cells of the columns it has values in (`Row::cols` names them), so
/// that many rows each of its own columns (the history's runs by hand) take memory in
/// proportion to their values, not to rows times columns.
pub(super) fn rows(
    c: &Collector,
    keep: &[bool],
    col_pos: &[Option<usize>],
    ncols: usize,
    o: &Options,
    sparse: bool,
) -> Result<Vec<Row>, Failure> {
    let inc = Include {
        runs: &c.runs.list,
        units: &c.runs.units,
        partial: o.include_partial,
    };
    let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); c.rows.list.len()];
    for (i, s) in c.series.iter().enumerate() {
        if keep[i] && col_pos[s.col as usize].is_some() {
            by_row[s.row as usize].push(i);
        }
    }
    let newest = newest_units(c, &by_row, col_pos, ncols, &inc);
    let mut rows = Vec::new();
    for (row_id, members) in by_row.iter().enumerate() {
        let Some(first) = members
            .iter()
            .filter_map(|&i| inc.first(&c.series[i]))
            .min()
        else {
            continue;
        };
        let Some(g) = gather(c, row_id, members, col_pos, &inc)? else {
            continue;
        };
        let stale = stale(&g.values, &newest, c.series[members[0]].name, &inc);
        let head = headline_of(c, members);
        let stat = row_stat(c, head, o);
        let (cols, (cells, left_out)) =
            place(g.values, ncols, sparse, |v| cells::cell(v, o, stat, &inc));
        // The display unit: chosen for the median of the row's cell values.
        let centers: Vec<f64> = cells.iter().flatten().map(|c| c.value.abs()).collect();
        let typical = measure::stats::median(&centers).unwrap_or(f64::NAN);
        let dims: Vec<(String, String)> = c
            .spec
            .rows
            .iter()
            .zip(&c.row_vals[row_id])
            .map(|(d, v)| (d.key(), v.clone()))
            .collect();
        rows.push((
            first,
            Row {
                title: String::new(),
                name: String::new(),
                dims,
                metrics: g.metrics,
                suffix: g.suffix.to_string(),
                scale: choose_scale(g.suffix, typical),
                better: Better::of(g.suffix),
                source: if g.use_samples {
                    "samples"
                } else {
                    "summaries"
                },
                cells,
                cols,
                left_out,
                unfinished: Vec::new(),
                role: head.and_then(|h| c.roles.get(&h)).cloned(),
                stat,
                stale,
            },
        ));
    }
    rows.sort_by_key(|(first, _)| *first);
    Ok(rows.into_iter().map(|(_, r)| r).collect())
}

/// Keeps a row's cells of the `shown` columns; in the matrix, what the row left out of the
/// columns after them (those whose every run was left out) moves to `unfinished`.
pub(super) fn split_unfinished(r: &mut Row, shown: usize) {
    if r.cols.is_empty() {
        r.unfinished = r.left_out.split_off(shown.min(r.left_out.len()));
        r.cells.truncate(shown);
        return;
    }
    let n = r.cols.partition_point(|&j| j < shown);
    r.cols.truncate(n);
    r.cells.truncate(n);
    r.left_out.truncate(n);
}

/// A row's cells from its values by column (`values`, in order of column): one per column of
/// `ncols` (an empty one where the row has no value), or, `sparse`, only those, with their
/// columns.
fn place(
    values: Vec<(usize, CellRuns)>,
    ncols: usize,
    sparse: bool,
    cell: impl Fn(CellRuns) -> (Slot, LeftOut) + Sync,
) -> (Vec<usize>, (Vec<Slot>, Vec<LeftOut>)) {
    let made = cells_of(values, CellRuns::len, cell);
    if sparse {
        let cols = made.iter().map(|(j, _)| *j).collect();
        return (cols, made.into_iter().map(|(_, c)| c).unzip());
    }
    let mut cells: Vec<Slot> = (0..ncols).map(|_| None).collect();
    let mut left_out = vec![LeftOut::default(); ncols];
    for (j, c) in made {
        (cells[j], left_out[j]) = c;
    }
    (Vec::new(), (cells, left_out))
}

/// A row with this many values has its cells made on every CPU (the matrix is made after
/// the read, when the parser threads are done; a cell's sort and tests are the cost).
const PARALLEL_VALUES: usize = 100_000;

/// Each column's cell, in order: on [`crate::read::threads`] threads where the
/// row has many values (`len` counts a column's), else on this one.
fn cells_of<T: Send, C: Send>(
    values: Vec<(usize, T)>,
    len: impl Fn(&T) -> usize,
    cell: impl Fn(T) -> C + Sync,
) -> Vec<(usize, C)> {
    let n: usize = values.iter().map(|(_, v)| len(v)).sum();
    let threads = crate::read::threads().min(values.len());
    if n < PARALLEL_VALUES || threads < 2 {
        return values.into_iter().map(|(j, v)| (j, cell(v))).collect();
    }
    let per = values.len().div_ceil(threads);
    let mut parts: Vec<Vec<(usize, T)>> = Vec::new();
    let mut rest = values.into_iter();
    loop {
        let part: Vec<_> = rest.by_ref().take(per).collect();
        if part.is_empty() {
            break;
        }
        parts.push(part);
    }
    let cell = &cell;
    std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .into_iter()
            .map(|part| {
                s.spawn(move || {
                    part.into_iter()
                        .map(|(j, v)| (j, cell(v)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    })
}

/// The columns where a row's cell lacks the column's newest invocation (`newest`), for a
/// row of measurement `name`: (column, the invocation's id, why).
fn stale(
    values: &[(usize, CellRuns)],
    newest: &[Option<u32>],
    name: u32,
    inc: &Include<'_>,
) -> Vec<(usize, String, String)> {
    values
        .iter()
        .filter_map(|&(j, ref cr)| {
            let u = newest[j]?;
            let why = cr.lacks(u, name, inc)?;
            Some((j, inc.units[u as usize].clone(), why))
        })
        .collect()
}

/// The newest suite invocation of each shown column, over the runs that count in any of its
/// cells (by their newest record, ties to the later run). Runs by hand name none: each is
/// one row's, so no other row lacks it.
fn newest_units(
    c: &Collector,
    by_row: &[Vec<usize>],
    col_pos: &[Option<usize>],
    ncols: usize,
    inc: &Include<'_>,
) -> Vec<Option<u32>> {
    let mut best: Vec<Option<u32>> = vec![None; ncols];
    for &i in by_row.iter().flatten() {
        let s = &c.series[i];
        let Some(j) = col_pos[s.col as usize] else {
            continue;
        };
        for g in s.samples.segs.iter().chain(&s.summaries.segs) {
            let r = &inc.runs[g.run as usize];
            if !inc.run(g.run) || !r.invoked {
                continue;
            }
            if best[j].is_none_or(|b| r.recency() > inc.runs[b as usize].recency()) {
                best[j] = Some(g.run);
            }
        }
    }
    best.into_iter()
        .map(|b| b.map(|r| inc.runs[r as usize].unit))
        .collect()
}

/// One row's values, per shown column it has values in (in order of column), before the
/// statistics.
struct Gathered<'a> {
    values: Vec<(usize, CellRuns)>,
    metrics: Vec<String>,
    /// The unit suffix every metric of the row shares.
    suffix: &'a str,
    /// Whether the cells are over samples (else over summaries).
    use_samples: bool,
}

/// Gathers the values of the series `members` of row `row_id` into their columns, by run:
/// the samples where any series of the row has some that count, else the summaries. `None`
/// when no series has a value; an error when the row's metrics mix units.
fn gather<'a>(
    c: &'a Collector,
    row_id: usize,
    members: &[usize],
    col_pos: &[Option<usize>],
    inc: &Include<'_>,
) -> Result<Option<Gathered<'a>>, Failure> {
    let counts = |v: &crate::runs::RunValues| v.segs.iter().any(|g| inc.run(g.run));
    let use_samples = members.iter().any(|&i| counts(&c.series[i].samples));
    let mut values: Vec<(usize, CellRuns)> = Vec::new();
    // Where each column's values are in `values`.
    let mut at: FastMap<usize, usize> = FastMap::default();
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
                    Exit::Cannot,
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
            let k = *at.entry(j).or_insert_with(|| {
                values.push((j, CellRuns::default()));
                values.len() - 1
            });
            for (seg, vals) in v.segments() {
                values[k].1.add(seg.run, vals, inc);
            }
        }
    }
    values.sort_by_key(|(j, _)| *j);
    Ok(suffix.map(|(suffix, _)| Gathered {
        values,
        metrics,
        suffix,
        use_samples,
    }))
}

#[cfg(test)]
mod tests {
    use super::{PARALLEL_VALUES, cells_of};

    #[test]
    fn cells_come_in_column_order_on_one_thread_or_many() {
        for per_column in [1, PARALLEL_VALUES / 3] {
            let values: Vec<(usize, usize)> = (0..7).map(|j| (j * 2, per_column + j)).collect();
            let made = cells_of(values, |&n| n, |n| n * 10);
            let want: Vec<(usize, usize)> =
                (0..7).map(|j| (j * 2, (per_column + j) * 10)).collect();
            assert_eq!(made, want);
        }
        assert!(cells_of(Vec::<(usize, usize)>::new(), |&n| n, |n| n).is_empty());
    }
}
