//! From the collected series to the matrix every format renders: which rows and columns, the
//! statistic of each cell with its confidence interval, the display unit of each row, and
//! the comparison of each cell against the baseline column.

mod baseline;
mod cells;
mod columns;
mod facts;
mod include;
mod notes;
mod numbers;
pub mod overall;
mod rows;
mod table;
pub mod titles;

pub use numbers::{fmt_delta, fmt_fixed, fmt_number, row_decimals, run_marks};
pub use table::{
    Better, Cell, Column, Delta, Fact, Overall, Row, RunsDiffer, Slot, Table, Verdict,
};
pub use table::{LeftOut, facts_note};
pub use titles::visible;

use crate::collect::Collector;
use crate::dims::Dim;
use crate::stats::Stat;
use measure::Failure;

/// Confidence level of the ± interval.
pub const CONFIDENCE: f64 = 0.95;
/// Significance level of the baseline comparison.
pub const ALPHA: f64 = 0.05;

/// What the user chose besides grouping.
#[derive(Clone, Debug)]
pub struct Options {
    pub stat: Stat,
    pub baseline: Option<String>,
    pub columns: Option<Vec<String>>,
    pub show_ci: bool,
    /// Put the values of runs that did not finish in (marked).
    pub include_partial: bool,
    /// Keep only each cell's newest run.
    pub latest: bool,
    /// Show the notes' detail under the text matrix (--verbose).
    pub verbose: bool,
}

/// Builds the matrix from what was collected.
pub fn build(c: &Collector, o: &Options) -> Result<Table, Failure> {
    assemble(c, o, false)
}

/// Builds the table with sparse rows: each holds only the cells of the columns it has values
/// in (`Row::cols`), and no `unfinished`; for the history, whose many runs by hand are each
/// one row's column. No format renders it.
pub fn build_sparse(c: &Collector, o: &Options) -> Result<Table, Failure> {
    assemble(c, o, true)
}

fn assemble(c: &Collector, o: &Options, sparse: bool) -> Result<Table, Failure> {
    let spec = &c.spec;
    let keep = rows::shown_series(c);
    let label_depth = columns::label_depth(c);
    let inc = include::Include {
        runs: &c.runs.list,
        units: &c.runs.units,
        partial: o.include_partial,
    };
    let chosen = columns::choose(c, &keep, label_depth, o.columns.as_deref(), &inc)?;
    let mut ids = vec![0; chosen.columns.len()];
    for (id, p) in chosen.pos.iter().enumerate() {
        if let Some(p) = p.filter(|&p| p < ids.len()) {
            ids[p] = id;
        }
    }
    let facts = facts::differing(c, &ids, &inc);
    let columns = chosen.columns;
    let all = columns.len() + chosen.unfinished.len();
    let mut rows = rows::rows(c, &keep, &chosen.pos, all, o, sparse)?;
    for r in &mut rows {
        rows::split_unfinished(r, columns.len());
    }
    titles::set_titles(&mut rows, spec.rows.contains(&Dim::Metric));
    let base_of = match &o.baseline {
        None => None,
        Some(b) => Some(baseline::baseline_columns(&columns, &spec.cols, b)?),
    };
    let mut any_few = false;
    for r in &mut rows {
        if let Some(base_of) = &base_of {
            any_few |= baseline::compare_row(r, base_of);
        }
        numbers::set_texts(r, o.show_ci);
    }
    let any_ci = rows
        .iter()
        .flat_map(|r| r.cells.iter().flatten())
        .any(|cell| cell.ci.is_some());
    let overall = match &base_of {
        Some(base_of) => overall::overall(&rows, base_of),
        None => Vec::new(),
    };
    let left_out = notes::left_out(c, &keep, &inc);
    let notes = notes::notes(o, &rows, &columns, any_ci, any_few, &c.runs.list, left_out);
    Ok(Table {
        overall,
        columns,
        facts,
        unfinished: chosen.unfinished,
        level_keys: columns::level_keys(&spec.cols, label_depth),
        rows,
        notes,
        verbose: o.verbose,
        stat: o.stat.name(),
        baseline: o.baseline.clone(),
        transposed: false,
    })
}
