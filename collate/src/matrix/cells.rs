//! One cell from the values that fall in it, by unit of pooling (a suite invocation, or a run
//! by hand): the runs that count (complete ones, or all with `--include-partial`; only the
//! newest unit with `--latest`), the statistic with its confidence interval, how many units
//! it pools and whether they disagree (Kruskal-Wallis).

use super::include::Include;
use super::table::{Cell, LeftOut, RunsDiffer, Slot};
use super::{ALPHA, CONFIDENCE, Options};
use crate::kruskal::kruskal_wallis;
use crate::stats::{self, Stat};

/// A run needs this many values in a cell to take part in the test between runs (a run of
/// one or two values is a normal way to gather samples and tells nothing on its own).
pub const KW_MIN: usize = 3;

/// The values of one unit of pooling in a cell, its newest run, and how many of its values
/// come from runs that did not finish (`--include-partial`), from runs on a busy machine and
/// from runs on a drifting clock.
#[derive(Debug)]
struct Pool {
    unit: u32,
    values: Vec<f64>,
    newest: u32,
    partial: usize,
    busy: usize,
    drift: usize,
}

/// A cell's values, by unit, and what was left out.
#[derive(Debug, Default)]
pub(super) struct CellRuns {
    /// The units whose runs count, in order of first appearance.
    pools: Vec<Pool>,
    /// (run, values left out) of the runs that do not count.
    left_out: Vec<(u32, usize)>,
}

impl CellRuns {
    /// How many values the cell holds, counted or not.
    pub fn len(&self) -> usize {
        let pooled: usize = self.pools.iter().map(|p| p.values.len()).sum();
        pooled + self.left_out.iter().map(|(_, n)| n).sum::<usize>()
    }

    /// Adds values of `run`, into its unit's pool where the run counts.
    pub fn add(&mut self, run: u32, vals: &[f64], inc: &Include<'_>) {
        if inc.run(run) {
            let info = &inc.runs[run as usize];
            let partial = if info.complete() { 0 } else { vals.len() };
            let busy = if inc.busy(run) { vals.len() } else { 0 };
            let drift = if inc.drifting(run) { vals.len() } else { 0 };
            match self.pools.iter_mut().find(|p| p.unit == info.unit) {
                Some(p) => {
                    p.values.extend_from_slice(vals);
                    p.partial += partial;
                    p.busy += busy;
                    p.drift += drift;
                    if info.recency() > inc.runs[p.newest as usize].recency() {
                        p.newest = run;
                    }
                }
                None => self.pools.push(Pool {
                    unit: info.unit,
                    values: vals.to_vec(),
                    newest: run,
                    partial,
                    busy,
                    drift,
                }),
            }
        } else {
            match self.left_out.iter_mut().find(|(r, _)| *r == run) {
                Some((_, n)) => *n += vals.len(),
                None => self.left_out.push((run, vals.len())),
            }
        }
    }
}

impl CellRuns {
    /// Why a cell with values lacks unit `u` (the newest run of its column), for a row of
    /// measurement `name`: the reason its records give where `u` measured it and it did not
    /// finish (or gave no value); `None` where the cell has `u`'s values, has none at all, or
    /// `u` did not measure it (a step left out with --only, a tool run apart).
    pub fn lacks(&self, u: u32, name: u32, inc: &Include<'_>) -> Option<String> {
        if self.pools.is_empty() || self.pools.iter().any(|p| p.unit == u) {
            return None;
        }
        let mut runs = inc
            .runs
            .iter()
            .filter(|r| r.unit == u && r.name == Some(name));
        match runs.clone().find(|r| !r.complete()) {
            Some(r) => Some(r.why()),
            None => runs
                .next()
                .map(|_| "its records have no value for this row".into()),
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
    (stat_cell(cr.pools, o, stat, inc).map(Box::new), left_out)
}

fn stat_cell(mut pools: Vec<Pool>, o: &Options, stat: Stat, inc: &Include<'_>) -> Option<Cell> {
    if o.latest && pools.len() > 1 {
        let newest = pools
            .iter()
            .enumerate()
            .max_by_key(|(_, p)| inc.runs[p.newest as usize].recency())
            .map_or(0, |(i, _)| i);
        pools = vec![pools.swap_remove(newest)];
    }
    if pools.is_empty() {
        return None;
    }
    let differ = differ(&pools, inc);
    let partial = pools.iter().map(|p| p.partial).sum();
    let busy = pools.iter().map(|p| p.busy).sum();
    let drift = pools.iter().map(|p| p.drift).sum();
    let nruns = pools.len();
    // One unit (the usual cell) gives its values as they are: no second copy.
    let mut v: Vec<f64> = if nruns == 1 {
        pools.pop().map(|p| p.values).unwrap_or_default()
    } else {
        pools.into_iter().flat_map(|p| p.values).collect()
    };
    v.sort_unstable_by(f64::total_cmp);
    let value = stat.of_sorted(&v);
    let modes = crate::modes::two_modes(&v);
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
        modes,
        busy,
        drift,
    })
}

/// The Kruskal-Wallis test between the units with at least [`KW_MIN`] values: `Some` when
/// they differ at `ALPHA`.
fn differ(pools: &[Pool], inc: &Include<'_>) -> Option<RunsDiffer> {
    let tested: Vec<&Pool> = pools.iter().filter(|p| p.values.len() >= KW_MIN).collect();
    let groups: Vec<&[f64]> = tested.iter().map(|p| p.values.as_slice()).collect();
    let t = kruskal_wallis(&groups)?;
    (t.p < ALPHA).then(|| RunsDiffer {
        p: t.p,
        runs: tested
            .iter()
            .map(|p| {
                let median = {
                    let mut s = p.values.clone();
                    s.sort_unstable_by(f64::total_cmp);
                    stats::Stat::Median.of_sorted(&s)
                };
                (inc.units[p.unit as usize].clone(), p.values.len(), median)
            })
            .collect(),
    })
}
