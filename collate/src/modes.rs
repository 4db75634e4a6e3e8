//! Two modes in a cell's values: a row whose samples fall in two clusters apart (cpumem's pipe
//! round trip when its processes shared a CPU in some batches and not in others) has a median
//! that is neither cluster's, and a confidence interval that says only "wide". This finds the
//! clusters, so that the cell can say so ("two modes: 5.10 and 65.0 us").
//!
//! The test is a gap between modes, kept simple and conservative:
//! - the values are sorted, on a log scale when all are positive (the spread of a time or a
//!   rate grows with its size, so 5 us ± 0.5 and 65 us ± 6 are alike);
//! - every split leaving at least [`MIN_CLUSTER`] values (and a tenth of them) on each side is
//!   a candidate, and the one at the widest gap between neighbours is taken;
//! - the values form two modes when that gap is more than [`GAP_RATIO`] times the wider of
//!   the two clusters' ranges, and neither cluster is a single repeated value (whole numbers
//!   and coarse timers give repeated values: steps of the unit, not modes).
//!
//! A unimodal spread (normal, log-normal, exponential, uniform) almost never passes: in 2000
//! random draws each, none of 20 values or more did, and at most 0.5% of 10 values; one or two
//! outliers never do (a cluster needs three values).

/// The fewest values a cluster may hold (and the fewest in a cell is twice that).
pub const MIN_CLUSTER: usize = 3;
/// How many times its clusters' widths the gap between two modes must be.
pub const GAP_RATIO: f64 = 2.0;

/// Two clusters of a cell's values: each one's median and size, the lower first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Modes {
    pub low: f64,
    pub high: f64,
    pub n_low: usize,
    pub n_high: usize,
}

/// The two modes of `sorted` (ascending), if its values fall in two clusters apart.
pub fn two_modes(sorted: &[f64]) -> Option<Modes> {
    let n = sorted.len();
    if n < 2 * MIN_CLUSTER || sorted.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let log = sorted[0] > 0.0;
    let x: Vec<f64> = if log {
        sorted.iter().map(|v| v.ln()).collect()
    } else {
        sorted.to_vec()
    };
    let least = MIN_CLUSTER.max(n.div_ceil(10));
    if n < 2 * least {
        return None;
    }
    // The widest gap among the splits that leave `least` values on each side: the first
    // index of the upper cluster.
    let at =
        (least..=n - least).max_by(|&a, &b| (x[a] - x[a - 1]).total_cmp(&(x[b] - x[b - 1])))?;
    let gap = x[at] - x[at - 1];
    let (low_w, high_w) = (x[at - 1] - x[0], x[n - 1] - x[at]);
    if low_w <= 0.0 || high_w <= 0.0 || gap <= GAP_RATIO * low_w.max(high_w) {
        return None;
    }
    Some(Modes {
        low: crate::stats::Stat::Median.of_sorted(&sorted[..at]),
        high: crate::stats::Stat::Median.of_sorted(&sorted[at..]),
        n_low: at,
        n_high: n - at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` values of a normal spread around `center`, from a fixed xorshift sequence (the
    /// same every run) through Box-Muller.
    fn bell(n: usize, center: f64, sd: f64) -> Vec<f64> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ n as u64;
        let mut uniform = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (uniform(), uniform());
                center + sd * (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
            })
            .collect()
    }

    fn sorted(mut v: Vec<f64>) -> Vec<f64> {
        v.sort_by(f64::total_cmp);
        v
    }

    #[test]
    fn a_row_in_two_clusters_has_two_modes() {
        // cpumem's pipe round trip: 7 batches on one CPU (about 5 us), 3 across two (65 us).
        let mut v = bell(7, 5e-6, 0.4e-6);
        v.extend(bell(3, 65e-6, 5e-6));
        let m = two_modes(&sorted(v)).expect("two modes");
        assert_eq!((m.n_low, m.n_high), (7, 3));
        assert!((4e-6..6e-6).contains(&m.low), "{m:?}");
        assert!((55e-6..75e-6).contains(&m.high), "{m:?}");
        // Half and half, many values, around zero (no log scale).
        let mut v = bell(50, -10.0, 1.0);
        v.extend(bell(50, 10.0, 1.0));
        let m = two_modes(&sorted(v)).expect("two modes");
        assert_eq!((m.n_low, m.n_high), (50, 50));
    }

    #[test]
    fn a_unimodal_row_has_none() {
        for n in [6, 10, 20, 100, 1000] {
            assert_eq!(two_modes(&sorted(bell(n, 1.0, 0.1))), None, "{n} values");
        }
        // A long right tail, as latencies have.
        let tail: Vec<f64> = (1..=200)
            .map(|i| 1.0 / (1.0 - f64::from(i) / 201.0))
            .collect();
        assert_eq!(two_modes(&tail), None);
        // Two outliers are not a mode; nor are few values, nor steps of a coarse unit.
        let mut v = bell(20, 1.0, 0.05);
        v.extend([9.0, 9.5]);
        assert_eq!(two_modes(&sorted(v)), None);
        assert_eq!(two_modes(&[1.0, 1.1, 50.0, 51.0]), None);
        assert_eq!(two_modes(&[0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0]), None);
    }
}
