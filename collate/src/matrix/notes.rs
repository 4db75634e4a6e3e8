//! The notes under the matrix: what ± is, what the deltas are against and what `~` and `?`
//! mean, and which rows are means or come from summaries rather than samples.

use super::cells::KW_MIN;
use super::include::Include;
use super::table::{Better, Column, Delta, Note, Row};
use super::{ALPHA, CONFIDENCE, Options};
use crate::collect::Collector;
use crate::runs::RunInfo;
use crate::stats;
use std::collections::BTreeMap;

/// The notes for `rows`; `any_ci` says whether a cell shows a confidence interval, `any_few`
/// whether a cell has too few values for the baseline comparison.
pub(super) fn notes(
    o: &Options,
    rows: &[Row],
    columns: &[Column],
    any_ci: bool,
    any_few: bool,
    runs: &[RunInfo],
    left_out: Option<Note>,
) -> Vec<Note> {
    let mut notes: Vec<Note> = Vec::new();
    notes.extend(left_out);
    notes.extend(stale(rows, columns));
    if o.include_partial {
        notes.extend(partial(rows, runs));
    }
    notes.extend(busy(rows, runs, o.include_partial));
    notes.extend(drift(rows, runs, o.include_partial));
    if let Some(n) = pooled(rows, columns) {
        push(&mut notes, n);
    }
    if let Some(n) = bimodal(rows, columns) {
        push(&mut notes, n);
    }
    if rows.iter().any(|r| r.better != Better::Unknown) {
        push(
            &mut notes,
            "↓ lower is better (times, sizes, counts, ratios), ↑ higher is better (rates): from the row's unit.",
        );
    }
    if let Some(q) = o.stat.quantile()
        && o.show_ci
        && any_ci
        && rows.iter().any(|r| r.stat == o.stat)
    {
        let min = stats::ci_min_samples(q, CONFIDENCE);
        let what = if q == 0.5 {
            "median".to_string()
        } else {
            o.stat.name()
        };
        push(
            &mut notes,
            format!(
                "± is the 95% confidence interval of the {what} (order statistics, binomial distribution); a cell shows it with at least {min} values."
            ),
        );
    }
    if let Some(b) = &o.baseline {
        let mut n = format!(
            "Deltas are against {b}, where a Mann-Whitney U test finds a difference at p < {ALPHA}; ~ means no significant difference."
        );
        let any_diff = rows
            .iter()
            .flat_map(|r| r.cells.iter().flatten())
            .any(|c| matches!(c.delta, Some(Delta::Diff { .. })));
        if any_diff {
            n.push_str(" Where the baseline is 0 a change is the difference in the row's unit (+3.0 ms), as no percentage of 0 exists.");
        }
        if any_few {
            n.push_str(" ? means too few values to tell: even values entirely apart could not reach p < 0.05 (4 against 4 can).");
        }
        n.push_str(" better and worse follow the row's direction.");
        push(&mut notes, n);
        push(
            &mut notes,
            "overall: per column, the geometric mean of its ratios to the baseline over the rows both have, a time's inverted so that above 1 is always better, with its 95% bootstrap interval in [ ], then how many rows are significantly better/worse/the same; --filter leaves rows out of it.",
        );
    }
    sources(o, rows, &mut notes);
    notes
}

/// Which rows are means of slices, and which come from summaries rather than samples.
fn sources(o: &Options, rows: &[Row], notes: &mut Vec<Note>) {
    let mean_rows: Vec<&str> = rows
        .iter()
        .filter(|r| r.stat == stats::Stat::Mean && o.stat != stats::Stat::Mean)
        .map(|r| r.title.as_str())
        .collect();
    if !mean_rows.is_empty() {
        push(
            notes,
            format!(
                "Means of equal-time slices of a rate (the work over the time, the tool's own figure), ± a 95% bootstrap interval: {}.",
                mean_rows.join("; ")
            ),
        );
    }
    let summary_rows: Vec<&str> = rows
        .iter()
        .filter(|r| r.source == "summaries")
        .map(|r| r.title.as_str())
        .collect();
    if !summary_rows.is_empty() && summary_rows.len() < rows.len() {
        push(
            notes,
            format!(
                "From summaries (one value per run): {}.",
                summary_rows.join("; ")
            ),
        );
    } else if !summary_rows.is_empty() {
        push(notes, "Every cell is over summaries (one value per run).");
    }
}

/// Adds a note of one line, or with its detail.
fn push(notes: &mut Vec<Note>, n: impl Into<Note>) {
    notes.push(n.into());
}

/// The most rows named per column in the note on stale cells.
const STALE_NAMED: usize = 8;

/// Cells that show older runs because their column's newest run has no value for the row (a
/// step that failed or was left out that time), per column, with the newest run's reason.
fn stale(rows: &[Row], columns: &[Column]) -> Option<Note> {
    let mut by_col: BTreeMap<usize, (String, Vec<String>)> = BTreeMap::new();
    for r in rows {
        for (j, unit, why) in r.stale.iter().filter(|s| s.0 < columns.len()) {
            let e = by_col
                .entry(*j)
                .or_insert_with(|| (unit.clone(), Vec::new()));
            e.1.push(format!("{} ({why})", r.title));
        }
    }
    if by_col.is_empty() {
        return None;
    }
    let cols = by_col.len();
    let cells: usize = by_col.values().map(|v| v.1.len()).sum();
    let parts: Vec<String> = by_col
        .into_iter()
        .map(|(j, (unit, mut what))| {
            let more = what.len().saturating_sub(STALE_NAMED);
            what.truncate(STALE_NAMED);
            let tail = if more > 0 {
                format!(", and {more} more")
            } else {
                String::new()
            };
            let col = &columns[j].key;
            format!(
                "in {col}, the newest run {unit} has no {}{tail}",
                what.join(", ")
            )
        })
        .collect();
    Some(Note::with(
        format!(
            "Cells from older runs: in {cols} column{}, the newest run has no value for {cells} cell{} shown from older runs.",
            if cols == 1 { "" } else { "s" },
            if cells == 1 { "" } else { "s" },
        ),
        format!("{}.", parts.join("; ")),
    ))
}

/// Values left out because their run did not finish: how many, of which runs, and why.
/// Counted over every series that shows (`keep`), so that a column whose every run failed
/// is named too.
pub(super) fn left_out(c: &Collector, keep: &[bool], inc: &Include<'_>) -> Option<Note> {
    let mut per_run: BTreeMap<u32, usize> = BTreeMap::new();
    for (s, _) in c.series.iter().zip(keep).filter(|(_, k)| **k) {
        let v = if s.samples.is_empty() {
            &s.summaries
        } else {
            &s.samples
        };
        for (seg, vals) in v.segments() {
            if !inc.run(seg.run) {
                *per_run.entry(seg.run).or_default() += vals.len();
            }
        }
    }
    let values: usize = per_run.values().sum();
    if values == 0 {
        return None;
    }
    let list: Vec<String> = per_run
        .iter()
        .map(|(&r, n)| {
            let info = &c.runs.list[r as usize];
            format!(
                "run {} ({n} value{}): {}",
                info.id,
                if *n == 1 { "" } else { "s" },
                info.why()
            )
        })
        .collect();
    Some(Note::with(
        format!(
            "Left out: {values} value{} of {} run{} that did not finish; --include-partial puts them in, marked *.",
            if values == 1 { "" } else { "s" },
            list.len(),
            if list.len() == 1 { "" } else { "s" },
        ),
        format!("{}.", list.join("; ")),
    ))
}

/// What ×N and ! mean, and which runs differ in which cells.
fn pooled(rows: &[Row], columns: &[Column]) -> Option<Note> {
    let mut differ = Vec::new();
    let mut any = false;
    for r in rows {
        for (j, c) in r.placed() {
            any |= c.runs > 1;
            if let Some(d) = &c.differ {
                let runs: Vec<String> = d
                    .runs
                    .iter()
                    .map(|(id, n, med)| {
                        format!("run {id} ({n} values, median {})", fmt_base(*med, r))
                    })
                    .collect();
                let col = columns
                    .get(j)
                    .map_or(String::new(), |c| super::visible(&c.key));
                differ.push(format!(
                    "{} in {col}: {} (p = {})",
                    r.title,
                    runs.join(", "),
                    fmt_p(d.p)
                ));
            }
        }
    }
    if !any {
        return None;
    }
    let mut n = "×N: the cell pools N runs (a run is one ./benchmatrix invocation, whose tool runs carry its id, or one tool run by hand).".to_string();
    if differ.is_empty() {
        return Some(n.into());
    }
    n.push_str(&format!(
        " ! means its runs differ from each other (Kruskal-Wallis, p < {ALPHA}, runs of at least {KW_MIN} values): a drifting machine, not a spread; --latest keeps each cell's newest run."
    ));
    Some(Note::with(n, format!("{}.", differ.join("; "))))
}

/// What ‖ means, and each such cell's two modes.
fn bimodal(rows: &[Row], columns: &[Column]) -> Option<Note> {
    let mut cells = Vec::new();
    for r in rows {
        for (j, c) in r.placed() {
            let Some(m) = c.modes else { continue };
            let col = columns
                .get(j)
                .map_or(String::new(), |c| super::visible(&c.key));
            cells.push(format!(
                "{} in {col}: two modes: {} ({} values) and {} ({} values)",
                r.title,
                fmt_base(m.low, r),
                m.n_low,
                fmt_base(m.high, r),
                m.n_high
            ));
        }
    }
    if cells.is_empty() {
        return None;
    }
    // The modes themselves are the point of the note, so they are on its line, not in the
    // detail that only --verbose shows.
    Some(
        format!(
            "‖ marks a cell whose values fall in two modes apart (a gap over {} times either cluster's range), so that its statistic is neither's: measure the two apart. {}.",
            crate::modes::GAP_RATIO,
            cells.join("; ")
        )
        .into(),
    )
}

/// A value in the row's display unit, three significant digits.
fn fmt_base(v: f64, r: &Row) -> String {
    let s = super::fmt_number(r.scale.apply(v), &r.suffix);
    if r.scale.unit.is_empty() {
        s
    } else {
        format!("{s} {}", r.scale.unit)
    }
}

/// A p-value: `0.012`, `3.1e-5`.
pub fn fmt_p(p: f64) -> String {
    if p < 0.001 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

/// What † means, and which runs were busy and why.
fn busy(rows: &[Row], runs: &[RunInfo], include_partial: bool) -> Option<Note> {
    if !rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.busy > 0)
    {
        return None;
    }
    let list: Vec<String> = runs
        .iter()
        .filter(|r| (include_partial || r.complete()) && r.load.busy())
        .map(|r| format!("run {} ({})", r.id, r.load.reasons().join(", ")))
        .collect();
    Some(Note::with(
        format!(
            "{} marks a cell with values of runs on a busy machine (a load average or tasks runnable besides the tool above the CPU count, or steal above {:.0}% of the CPUs' time): its figure, and a better or worse beside it, may be the other work's.",
            crate::busy::MARK,
            crate::busy::STEAL_MAX * 100.0
        ),
        format!("{}.", list.join("; ")),
    ))
}

/// What ‡ means, and which runs measured on a drifting clock and its ratio.
fn drift(rows: &[Row], runs: &[RunInfo], include_partial: bool) -> Option<Note> {
    if !rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.drift > 0)
    {
        return None;
    }
    let list: Vec<String> = runs
        .iter()
        .filter(|r| include_partial || r.complete())
        .filter_map(|r| Some(format!("run {} ({})", r.id, r.clock.reason()?)))
        .collect();
    Some(Note::with(
        format!(
            "{} marks a cell with values of runs on a drifting clock (a guest whose clock ran more than {:.0}% apart from its host's, given.guest_clock_ratio): its times and rates are off by as much.",
            crate::drift::MARK,
            crate::drift::DRIFT_MAX * 100.0
        ),
        format!("{}.", list.join("; ")),
    ))
}

/// With `--include-partial`: what * means, and which runs did not finish.
fn partial(rows: &[Row], runs: &[RunInfo]) -> Option<Note> {
    if !rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|c| c.partial > 0)
    {
        return None;
    }
    let list: Vec<String> = runs
        .iter()
        .filter(|r| !r.complete())
        .map(|r| format!("run {} ({})", r.id, r.why()))
        .collect();
    Some(Note::with(
        "* marks a cell with values of runs that did not finish (--include-partial).".into(),
        format!("{}.", list.join("; ")),
    ))
}
