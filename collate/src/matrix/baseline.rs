//! `--baseline`: which column each column is compared with, and the Mann-Whitney U test that
//! tells each cell's change against its baseline cell from noise.

use super::ALPHA;
use super::table::{Column, Delta, Row};
use crate::dims::Dim;
use crate::stats;
use measure::Failure;

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

fn compare(base: &[f64], base_value: f64, cell: &[f64], value: f64) -> Delta {
    if min_p(base.len(), cell.len()) > ALPHA {
        return Delta::TooFew {
            n: cell.len(),
            base_n: base.len(),
        };
    }
    let p = stats::mann_whitney(base, cell).map(|t| t.p).unwrap_or(1.0);
    // The mark follows the test; only how the change is shown depends on the baseline.
    if p >= ALPHA {
        Delta::Same { p }
    } else if base_value != 0.0 {
        Delta::Change {
            pct: (value - base_value) / base_value.abs() * 100.0,
            p,
        }
    } else {
        Delta::Diff {
            diff: value - base_value,
            p,
        }
    }
}

/// Sets the delta of every cell of `r` that has a baseline column in `base_of`; true when
/// some cell has too few values to tell.
pub(super) fn compare_row(r: &mut Row, base_of: &[Option<usize>]) -> bool {
    let mut any_few = false;
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
        let base = r.cells[b].as_ref().map(|c| c.value);
        if let Some(cell) = r.cells[j].as_mut() {
            cell.delta = Some(delta);
            cell.base = base;
        }
    }
    any_few
}

/// For each column, the column it is compared with: `--baseline LABEL` names one column;
/// `--baseline KEY=VALUE` pairs each column with the one that differs only in KEY, which
/// is VALUE there.
pub(super) fn baseline_columns(
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
        return pair_by_key(columns, col_dims, b, &dim.key(), v);
    }
    if columns.is_empty() {
        return Err(Failure::usage(format!(
            "--baseline {b}: there are no columns to compare: no run in the input finished (each \
             one's summary is partial or failed, or missing: a killed tool); --include-partial \
             counts them"
        )));
    }
    let known: Vec<&str> = columns.iter().map(|c| c.key.as_str()).collect();
    Err(Failure::usage(format!(
        "--baseline {b}: no such column; the columns are: {} (or give KEY=VALUE, e.g. label.1=bare)",
        known.join(", ")
    )))
}

/// `--baseline KEY=VALUE`: each column's baseline is the column where `key` is `v` and every
/// other dimension is the same (the label and its levels count as one when `key` is either).
fn pair_by_key(
    columns: &[Column],
    col_dims: &[Dim],
    b: &str,
    key: &str,
    v: &str,
) -> Result<Vec<Option<usize>>, Failure> {
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
    let mut out = Vec::new();
    let mut found = false;
    for c in columns {
        let target = columns.iter().position(|t| {
            value_of(t, key) == Some(v)
                && c.dims
                    .iter()
                    .filter(|(ck, _)| !ignore(ck))
                    .all(|(ck, cv)| value_of(t, ck) == Some(cv.as_str()))
        });
        found |= target.is_some();
        out.push(target);
    }
    if !found {
        return Err(Failure::usage(format!(
            "--baseline {b}: no column has {key} = {v}"
        )));
    }
    Ok(out)
}

/// The value of dimension `k` in column `c`.
fn value_of<'a>(c: &'a Column, k: &str) -> Option<&'a str> {
    c.dims
        .iter()
        .find(|(ck, _)| ck == k)
        .map(|(_, v)| v.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_p() {
        assert!((min_p(5, 5) - 0.007_936_507_936_507_936).abs() < 1e-15);
        assert!(min_p(3, 3) > ALPHA && min_p(4, 4) < ALPHA);
        assert!(min_p(1, 38) > ALPHA && min_p(1, 39) <= ALPHA);
    }
}
