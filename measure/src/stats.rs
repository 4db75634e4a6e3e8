//! Order statistics the tools report alike: quantiles interpolated between order statistics
//! (R's type 7, numpy's and benchstat's default) and the median.

/// The `q` quantile (0..=1, clamped) of sorted values, linear between the closest order
/// statistics: the median of an even count is the mean of the middle two. NaN when empty.
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(sorted.len() - 1);
    if lo == hi {
        return sorted[lo];
    }
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// The median of values in any order; `None` when there are none.
pub fn median(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    Some(quantile_sorted(&v, 0.5))
}

/// The mean and the sample standard deviation (n - 1 in the denominator; `None` for a single
/// value) of values in any order; `None` when there are none.
pub fn mean_stddev(xs: &[f64]) -> Option<(f64, Option<f64>)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let stddev = (n > 1).then(|| {
        let ss: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    Some((mean, stddev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_7_quantiles() {
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5), 2.5);
        assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0], 0.5), 2.0);
        assert_eq!(quantile_sorted(&[5.0], 0.9), 5.0);
        assert_eq!(quantile_sorted(&[1.0, 2.0], 1.0), 2.0);
        assert_eq!(quantile_sorted(&[1.0, 2.0], 7.0), 2.0);
        assert!(quantile_sorted(&[], 0.5).is_nan());
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert!((quantile_sorted(&v, 0.9) - 9.1).abs() < 1e-12);
    }

    #[test]
    fn mean_and_sample_stddev() {
        assert_eq!(mean_stddev(&[]), None);
        assert_eq!(mean_stddev(&[2.0]), Some((2.0, None)));
        let (mean, sd) = mean_stddev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(mean, 5.0);
        assert!((sd.unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
