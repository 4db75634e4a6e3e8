//! Summary statistics of the runs, and hyperfine's outlier test (modified Z-score on the MAD).

/// Mean, median, sample standard deviation, min and max of a series.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    /// The sample standard deviation (n-1); `None` for a single value.
    pub stddev: Option<f64>,
    pub min: f64,
    pub max: f64,
}

pub use measure::stats::median;

/// The statistics of `xs`, or `None` when it is empty.
pub fn stats(xs: &[f64]) -> Option<Stats> {
    let median = median(xs)?;
    let n = xs.len();
    let (mean, stddev) = measure::stats::mean_stddev(xs)?;
    let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(Stats {
        n,
        mean,
        median,
        stddev,
        min,
        max,
    })
}

/// A modified Z-score above this marks an outlier: 10 standard deviations, with 1.4826
/// turning the MAD into an estimate of the standard deviation (hyperfine's threshold).
pub const OUTLIER_THRESHOLD: f64 = 1.4826 * 10.0;

/// Modified Z-scores `(x - median) / MAD` (a MAD of zero counts as machine epsilon).
pub fn modified_zscores(xs: &[f64]) -> Vec<f64> {
    let Some(med) = median(xs) else {
        return Vec::new();
    };
    let dev: Vec<f64> = xs.iter().map(|x| (x - med).abs()).collect();
    let mad = median(&dev).unwrap_or(0.0);
    let mad = if mad > 0.0 { mad } else { f64::EPSILON };
    xs.iter().map(|x| (x - med) / mad).collect()
}

/// What the outlier test found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outliers {
    /// How many runs are outliers.
    pub count: usize,
    /// The first run is a slow outlier (cold caches: try --warmup or --prepare).
    pub slow_first: bool,
}

/// Applies the outlier test to the wall times of the counted runs, in run order.
pub fn outliers(xs: &[f64]) -> Outliers {
    if xs.len() < 3 {
        return Outliers {
            count: 0,
            slow_first: false,
        };
    }
    let z = modified_zscores(xs);
    Outliers {
        count: z.iter().filter(|s| s.abs() > OUTLIER_THRESHOLD).count(),
        slow_first: z[0] > OUTLIER_THRESHOLD,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_stats() {
        let s = stats(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert_eq!(s.n, 4);
        assert_eq!(s.mean, 2.5);
        assert_eq!(s.median, 2.5);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 4.0);
        let sd = s.stddev.unwrap();
        assert!((sd - 1.290_994_448_7).abs() < 1e-9);
        let one = stats(&[7.0]).unwrap();
        assert_eq!(one.median, 7.0);
        assert_eq!(one.stddev, None);
        assert!(stats(&[]).is_none());
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
    }

    #[test]
    fn outlier_test() {
        let steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98];
        assert_eq!(outliers(&steady).count, 0);
        let mut spiky = steady.to_vec();
        spiky.push(5.0);
        let o = outliers(&spiky);
        assert_eq!(o.count, 1);
        assert!(!o.slow_first);
        let mut cold = vec![5.0];
        cold.extend_from_slice(&steady);
        let o = outliers(&cold);
        assert!(o.slow_first);
        // Identical values: MAD 0, no outliers.
        assert_eq!(outliers(&[1.0, 1.0, 1.0]).count, 0);
        assert_eq!(outliers(&[1.0, 9.0]).count, 0);
    }
}
