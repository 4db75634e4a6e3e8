//! One cell from the values that fall in it, by run: the runs that count (complete ones, or
//! all with `--include-partial`; only the newest with `--latest`), the statistic with its
//! confidence interval, how many runs it pools and whether they disagree (Kruskal-Wallis).

use super::include::Include;
use super::table::{Cell, LeftOut, RunsDiffer, Slot};
use super::{ALPHA, CONFIDENCE, Options};
use crate::kruskal::kruskal_wallis;
use crate::stats::{self, Stat};

/// A run needs this many values in a cell to take part in the test between runs (a run of
/// one or two values is a normal way to gather samples and tells nothing on its own).
pub const KW_MIN: usize = 3;

/// A cell's values, by run, and what was left out.
#[derive(Debug, Default)]
pub(super) struct CellRuns {
    /// (run, values) of the runs that count, in order of first appearance.
    runs: Vec<(u32, Vec<f64>)>,
    /// (run, values left out) of the runs that do not.
    left_out: Vec<(u32, usize)>,
}

impl CellRuns {
    /// Adds values of `run`; `counts` says whether the run's values count.
    pub fn add(&mut self, run: u32, vals: &[f64], counts: bool) {
        if counts {
            match self.runs.iter_mut().find(|(r, _)| *r == run) {
                Some((_, v)) => v.extend_from_slice(vals),
                None => self.runs.push((run, vals.to_vec())),
            }
        } else {
            match self.left_out.iter_mut().find(|(r, _)| *r == run) {
                Some((_, n)) => *n += vals.len(),
                None => self.left_out.push((run, vals.len())),
            }
        }
    }
}

/// A cell's statistic over the values of the runs that count, with the confidence interval
/// where the statistic is a quantile and there are enough values; `None` for a cell with no
/// value that counts.
pub(super) fn cell(cr: CellRuns, o: &Options, stat: Stat, inc: &Include<'_>) -> (Slot, LeftOut) {
    let left_out = LeftOut {
        values: cr.left_out.iter().map(|(_, n)| n).sum(),
        runs: cr
            .left_out
            .iter()
            .map(|(r, _)| {
                let info = &inc.runs[*r as usize];
                (info.id.clone(), info.why())
            })
            .collect(),
    };
    (stat_cell(cr.runs, o, stat, inc).map(Box::new), left_out)
}

fn stat_cell(
    mut runs: Vec<(u32, Vec<f64>)>,
    o: &Options,
    stat: Stat,
    inc: &Include<'_>,
) -> Option<Cell> {
    if o.latest && runs.len() > 1 {
        let newest = runs
            .iter()
            .enumerate()
            .max_by(|a, b| {
                let (ra, rb) = (&inc.runs[a.1.0 as usize], &inc.runs[b.1.0 as usize]);
                ra.at.cmp(&rb.at).then(ra.first.cmp(&rb.first))
            })
            .map_or(0, |(i, _)| i);
        runs = vec![runs.swap_remove(newest)];
    }
    if runs.is_empty() {
        return None;
    }
    let differ = differ(&runs, inc);
    let partial: usize = runs
        .iter()
        .filter(|(r, _)| !inc.runs[*r as usize].complete())
        .map(|(_, v)| v.len())
        .sum();
    let nruns = runs.len();
    // One run (the usual cell) gives its values as they are: no second copy.
    let mut v: Vec<f64> = if nruns == 1 {
        runs.pop().map(|(_, v)| v).unwrap_or_default()
    } else {
        runs.into_iter().flat_map(|(_, v)| v).collect()
    };
    v.sort_by(f64::total_cmp);
    let value = stat.of_sorted(&v);
    let ci = match stat {
        Stat::Mean => crate::bootstrap::mean_ci(&v, CONFIDENCE),
        _ => stat.quantile().and_then(|q| {
            let ci = stats::quantile_ci(v.len(), q, CONFIDENCE);
            ci.bounded(v.len()).then(|| ci.bounds(&v))
        }),
    };
    Some(Cell {
        n: v.len(),
        value,
        ci,
        delta: None,
        base: None,
        text: String::new(),
        shown: String::new(),
        sorted: v,
        runs: nruns,
        differ,
        partial,
    })
}

/// The Kruskal-Wallis test between the runs with at least [`KW_MIN`] values: `Some` when
/// they differ at `ALPHA`.
fn differ(runs: &[(u32, Vec<f64>)], inc: &Include<'_>) -> Option<RunsDiffer> {
    let tested: Vec<&(u32, Vec<f64>)> = runs.iter().filter(|(_, v)| v.len() >= KW_MIN).collect();
    let groups: Vec<&[f64]> = tested.iter().map(|(_, v)| v.as_slice()).collect();
    let t = kruskal_wallis(&groups)?;
    (t.p < ALPHA).then(|| RunsDiffer {
        p: t.p,
        runs: tested
            .iter()
            .map(|(r, v)| {
                let median = {
                    let mut s = v.clone();
                    s.sort_by(f64::total_cmp);
                    stats::Stat::Median.of_sorted(&s)
                };
                (inc.runs[*r as usize].id.clone(), v.len(), median)
            })
            .collect(),
    })
}
