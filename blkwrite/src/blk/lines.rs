//! The words blkwrite and blkread both print: sizes as dd writes them (`4k`, `512M`), bytes as
//! dd prints them, and one operation's latency percentiles on a human line.

use measure::units::{format_bytes, format_seconds, sig3};

/// A size the way dd would write it: `4k`, `512M`, `2G`, or bytes.
pub fn compact_size(b: u64) -> String {
    for (shift, unit) in [(40, "T"), (30, "G"), (20, "M"), (10, "k")] {
        if b >= 1 << shift && b.is_multiple_of(1 << shift) {
            return format!("{}{unit}", b >> shift);
        }
    }
    b.to_string()
}

/// Bytes as dd prints them: `1073741824 bytes (1.07 GB, 1.00 GiB)`.
pub fn dd_bytes(b: f64) -> String {
    if b < 1000.0 {
        return format!("{b} bytes");
    }
    let (unit, f) = [("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)]
        .into_iter()
        .find(|&(_, f)| b >= f)
        .unwrap_or(("kB", 1e3));
    format!("{b} bytes ({} {unit}, {})", sig3(b / f), format_bytes(b))
}

/// One operation's latency (a write's or a read's): min, p50, p90, p99, p99.9, max.
pub fn latency_text(get: &dyn Fn(&str) -> Option<f64>) -> Option<String> {
    let keys = [
        ("min", "latency_min_s"),
        ("p50", "latency_p50_s"),
        ("p90", "latency_p90_s"),
        ("p99", "latency_p99_s"),
        ("p99.9", "latency_p99_9_s"),
        ("max", "latency_max_s"),
    ];
    let parts: Vec<String> = keys
        .iter()
        .filter_map(|(label, k)| get(k).map(|s| format!("{label} {}", format_seconds(s))))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_dd() {
        assert_eq!(compact_size(4096), "4k");
        assert_eq!(compact_size(512 << 20), "512M");
        assert_eq!(compact_size(1000), "1000");
    }

    #[test]
    fn bytes_read_like_dd() {
        assert_eq!(dd_bytes(512.0), "512 bytes");
        assert_eq!(
            dd_bytes(1073741824.0),
            "1073741824 bytes (1.07 GB, 1.00 GiB)"
        );
    }
}
