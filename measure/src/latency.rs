//! Latency percentiles from a histogram of nanoseconds into a record's values, the same keys
//! in every tool that times operations one by one (blkwrite, blkread, fsmeta).

use crate::parts::Values;
use hdrhistogram::Histogram;

/// Sets the latency values `{prefix}latency_min_s`, `_mean_s`, `_p50_s`, `_p90_s`, `_p99_s`,
/// `_p99_9_s` and `_max_s` (seconds) from the histogram of nanoseconds; none when nothing
/// was timed. blkwrite and blkread give no prefix, fsmeta a phase's (`create_`).
pub fn add_latency(v: &mut Values, prefix: &str, h: &Histogram<u64>) {
    if h.is_empty() {
        return;
    }
    let s = |ns: u64| ns as f64 / 1e9;
    let key = |k: &str| format!("{prefix}latency_{k}_s");
    v.set(&key("min"), s(h.min()));
    v.set(&key("mean"), h.mean() / 1e9);
    for (q, k) in [(0.5, "p50"), (0.9, "p90"), (0.99, "p99"), (0.999, "p99_9")] {
        v.set(&key(k), s(h.value_at_quantile(q)));
    }
    v.set(&key("max"), s(h.max()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_in_seconds_under_the_prefix_and_none_for_an_empty_histogram() {
        let mut h = Histogram::<u64>::new(3).expect("histogram");
        let mut v = Values::new();
        add_latency(&mut v, "x_", &h);
        assert!(v.0.is_empty());
        for ns in 1..=1000u64 {
            h.record(ns * 1000).expect("record");
        }
        add_latency(&mut v, "x_", &h);
        let get = |k: &str| v.0[k].as_f64().expect("a number");
        assert!((get("x_latency_p50_s") - 500e-6).abs() < 1e-6);
        assert!((get("x_latency_max_s") - 1e-3).abs() < 2e-6);
        assert!(get("x_latency_min_s") <= get("x_latency_p99_9_s"));
    }
}
