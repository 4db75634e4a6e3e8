//! Round-trip statistics: min, mean, max, iputils' mdev, sample stddev and percentiles.

/// Statistics of a set of round-trip times (seconds).
#[derive(Clone, Debug, PartialEq)]
pub struct RttStats {
    pub min: f64,
    pub mean: f64,
    pub max: f64,
    /// iputils ping's "mdev": sqrt(mean(x^2) - mean(x)^2), the population standard deviation.
    pub mdev: f64,
    /// The sample standard deviation (n - 1 in the denominator); 0 for a single value.
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
}

pub use measure::stats::quantile_sorted as quantile;

/// Statistics of `rtts`; `None` when empty.
pub fn rtt_stats(rtts: &[f64]) -> Option<RttStats> {
    if rtts.is_empty() {
        return None;
    }
    let n = rtts.len() as f64;
    let mut sorted = rtts.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    let (mean, stddev) = measure::stats::mean_stddev(rtts)?;
    let stddev = stddev.unwrap_or(0.0);
    let sum2: f64 = rtts.iter().map(|x| x * x).sum();
    let mdev = (sum2 / n - mean * mean).max(0.0).sqrt();
    Some(RttStats {
        min: sorted[0],
        mean,
        max: sorted[sorted.len() - 1],
        mdev,
        stddev,
        p50: quantile(&sorted, 0.5),
        p90: quantile(&sorted, 0.9),
        p99: quantile(&sorted, 0.99),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn known_values() {
        let s = rtt_stats(&[4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.min, s.max), (1.0, 4.0));
        assert!(close(s.mean, 2.5));
        // mean(x^2) = 7.5, mean^2 = 6.25: mdev = sqrt(1.25).
        assert!(close(s.mdev, 1.25f64.sqrt()));
        assert!(close(s.stddev, (5.0f64 / 3.0).sqrt()));
        assert!(close(s.p50, 2.5));
        assert!(close(s.p90, 3.7));
        assert!(close(s.p99, 3.97));
    }

    #[test]
    fn one_and_none() {
        let s = rtt_stats(&[0.5]).unwrap();
        assert_eq!(
            (s.min, s.mean, s.max, s.mdev, s.stddev, s.p99),
            (0.5, 0.5, 0.5, 0.0, 0.0, 0.5)
        );
        assert!(rtt_stats(&[]).is_none());
        assert!(quantile(&[], 0.5).is_nan());
    }
}
