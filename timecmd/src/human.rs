//! The human summary on stderr (when it is a terminal), in hyperfine's layout.

use crate::stats::Stats;

/// Seconds with four significant digits in a unit that suits them: `1.001 s`, `812.4 us`.
pub fn secs(v: f64) -> String {
    if v == 0.0 {
        return "0 s".into();
    }
    let sc = measure::units::choose_scale("_s", v);
    format!("{} {}", measure::units::sig(sc.apply(v), 4), sc.unit)
}

/// The summary block: time (median, mean ± σ), range, user/sys and their share of the wall
/// time (`cpu_ratio`, the summary record's `cpu_median_ratio`), max RSS.
pub fn summary(
    name: &str,
    wall: &Stats,
    user: &Stats,
    sys: &Stats,
    cpu_ratio: f64,
    max_rss: u64,
) -> String {
    let mut s = format!("timecmd: {name}\n");
    let cpu = cpu_ratio * 100.0;
    if wall.n == 1 {
        s.push_str(&format!("  Time:            {}\n", secs(wall.median)));
    } else {
        s.push_str(&format!(
            "  Time (mean ± σ): {} ± {}    median {}\n",
            secs(wall.mean),
            secs(wall.stddev.unwrap_or(0.0)),
            secs(wall.median)
        ));
        s.push_str(&format!(
            "  Range (min … max): {} … {}    {} runs\n",
            secs(wall.min),
            secs(wall.max),
            wall.n
        ));
    }
    s.push_str(&format!(
        "  User: {}, System: {} ({cpu:.0}% CPU)    Max RSS: {}\n",
        secs(user.median),
        secs(sys.median),
        measure::units::format_bytes(max_rss as f64)
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_for_humans() {
        assert_eq!(secs(1.0012), "1.001 s");
        assert_eq!(secs(0.0008124), "812.4 us");
        assert_eq!(secs(0.0), "0 s");
    }

    #[test]
    fn block() {
        let w = crate::stats::stats(&[1.0, 1.002]).unwrap();
        let u = crate::stats::stats(&[0.001, 0.001]).unwrap();
        let text = summary("sleep 1", &w, &u, &u, 0.002, 2 << 20);
        assert!(text.contains("2 runs"));
        assert!(text.contains("Max RSS: 2.00 MiB"));
    }
}
