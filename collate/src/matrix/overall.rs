//! With `--baseline`, the line that answers "how much slower is it overall?": per column, the
//! geometric mean of its ratios to the baseline over the rows both have, direction-aware (a
//! time's ratio inverted, so that above 1 is always better), with a 95% bootstrap interval
//! (rows and, within each row, both cells' values resampled; a fixed seed, so the same input
//! gives the same interval) and the count of rows significantly better, worse and the same.

use super::table::{Better, Overall, Row, Verdict};
use crate::bootstrap::Rng;
use crate::stats::Stat;

/// Bootstrap replicates.
const REPLICATES: usize = 1000;
/// The seed of the bootstrap's generator (any fixed value: the output is reproducible).
const SEED: u64 = 0x0b5e_55ed_c011_a7e5;

/// The direction-aware ratio of `value` to `base` (above 1: better); `None` where it has no
/// meaning (a value of 0 or below, or no direction).
fn ratio(better: Better, base: f64, value: f64) -> Option<f64> {
    if !(base > 0.0 && value > 0.0 && base.is_finite() && value.is_finite()) {
        return None;
    }
    match better {
        Better::Higher => Some(value / base),
        Better::Lower => Some(base / value),
        Better::Unknown => None,
    }
}

/// The overall comparison of every column with its baseline column (`None` for a baseline
/// column and a column without a row to compare).
pub fn overall(rows: &[Row], base_of: &[Option<usize>]) -> Vec<Option<Overall>> {
    base_of
        .iter()
        .enumerate()
        .map(|(j, b)| {
            let b = (*b).filter(|&b| b != j)?;
            column(rows, j, b)
        })
        .collect()
}

/// Column `j` against column `b`.
fn column(rows: &[Row], j: usize, b: usize) -> Option<Overall> {
    let mut pairs: Vec<Pair> = Vec::new();
    let mut logs = Vec::new();
    let (mut better, mut worse, mut same) = (0, 0, 0);
    for r in rows {
        let (Some(base), Some(cell)) = (&r.cells[b], &r.cells[j]) else {
            continue;
        };
        let Some(q) = ratio(r.better, base.value, cell.value) else {
            continue;
        };
        logs.push(q.ln());
        pairs.push((r.better, r.stat, &base.sorted, &cell.sorted));
        match cell.verdict(r.better) {
            Some(Verdict::Better) => better += 1,
            Some(Verdict::Worse) => worse += 1,
            Some(Verdict::Same) => same += 1,
            _ => {}
        }
    }
    if logs.is_empty() {
        return None;
    }
    let geomean = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
    let ci = (pairs.len() >= 2).then(|| bootstrap(&pairs, SEED ^ j as u64));
    Some(Overall {
        geomean,
        ci: ci.flatten(),
        rows: logs.len(),
        better,
        worse,
        same,
    })
}

/// A row's direction and statistic, and the sorted values of its baseline and compared cells.
type Pair<'a> = (Better, Stat, &'a [f64], &'a [f64]);

/// The 2.5% and 97.5% quantiles of the geometric mean over resampled rows and values (each
/// row's cells by its own statistic).
fn bootstrap(pairs: &[Pair], seed: u64) -> Option<(f64, f64)> {
    let mut rng = Rng(seed);
    let mut means = Vec::with_capacity(REPLICATES);
    let mut buf = Vec::new();
    let mut resampled = |rng: &mut Rng, v: &[f64], stat: Stat| {
        buf.clear();
        buf.extend((0..v.len()).map(|_| v[rng.below(v.len())]));
        buf.sort_by(f64::total_cmp);
        stat.of_sorted(&buf)
    };
    for _ in 0..REPLICATES {
        let mut sum = 0.0;
        let mut n = 0usize;
        for _ in 0..pairs.len() {
            let (better, stat, base, cell) = pairs[rng.below(pairs.len())];
            let b = resampled(&mut rng, base, stat);
            let c = resampled(&mut rng, cell, stat);
            if let Some(q) = ratio(better, b, c) {
                sum += q.ln();
                n += 1;
            }
        }
        if n > 0 {
            means.push((sum / n as f64).exp());
        }
    }
    if means.len() < REPLICATES / 2 {
        return None;
    }
    means.sort_by(f64::total_cmp);
    let at = |q: f64| means[((means.len() - 1) as f64 * q).round() as usize];
    Some((at(0.025), at(0.975)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_point_the_same_way() {
        assert_eq!(ratio(Better::Lower, 2.0, 1.0), Some(2.0));
        assert_eq!(ratio(Better::Higher, 2.0, 1.0), Some(0.5));
        assert_eq!(ratio(Better::Lower, 0.0, 1.0), None);
        assert_eq!(ratio(Better::Unknown, 1.0, 1.0), None);
    }

    #[test]
    fn the_bootstrap_is_reproducible_and_covers_the_mean() {
        let base: Vec<f64> = (0..10).map(|i| 1.0 + f64::from(i) * 0.01).collect();
        let slow: Vec<f64> = base.iter().map(|x| x * 2.0).collect();
        let fast: Vec<f64> = base.iter().map(|x| x * 0.8).collect();
        let pairs = [
            (Better::Lower, Stat::Median, &base[..], &slow[..]),
            (Better::Lower, Stat::Median, &base[..], &fast[..]),
        ];
        let a = bootstrap(&pairs, 1).unwrap();
        assert_eq!(a, bootstrap(&pairs, 1).unwrap());
        // The geometric mean of 0.5 and 1.25 is 0.79: inside, and the interval is not a point.
        assert!(a.0 < 0.79 && 0.79 < a.1 && a.0 < a.1, "{a:?}");
    }
}
