//! The history for a terminal: per series a heading, a sparkline of its runs (Unicode blocks
//! ▁ to █, lowest to highest), a `^` under each change, and a line per change: the run, the
//! level before and after, the shift, and the facts that differ.

use super::words::{change_line, fact_text, short_at, shown};
use super::{History, Series};
use std::fmt::Write as _;

/// The blocks, lowest first.
const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// The most characters a sparkline takes: a longer series draws each character as the
/// median of a run of points.
pub const SPARK_WIDTH: usize = 100;

/// The whole history as text.
pub fn text(h: &History) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "history: each run's {} (95% CI); changes by e-divisive means, kept where p < {} with at least {} runs a side",
        h.stat, h.params.alpha, h.params.min_size
    );
    for s in &h.series {
        out.push('\n');
        series(&mut out, s, &h.stat);
    }
    for n in &h.notes {
        out.push('\n');
        out.push_str(n);
        out.push('\n');
    }
    out
}

/// One series: heading, sparkline, markers, changes; its statistic is named where it is not
/// the history's `stat` (a row whose headline names the mean).
fn series(out: &mut String, s: &Series, stat: &str) {
    let n = s.points.len();
    let (first, last) = (&s.points[0], &s.points[n - 1]);
    let own = if s.stat == stat {
        String::new()
    } else {
        format!(", each run's {}", s.stat)
    };
    let _ = writeln!(
        out,
        "{}  {}: {n} run{}, {} to {}{own}",
        s.title,
        s.key,
        if n == 1 { "" } else { "s" },
        short_at(&first.at),
        short_at(&last.at)
    );
    let values: Vec<f64> = s.points.iter().map(|p| p.value).collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let (line, marks) = sparkline(
        &values,
        &s.changes.iter().map(|c| c.index).collect::<Vec<_>>(),
    );
    let ci = last
        .ci
        .map(|(a, b)| format!(" [{}–{}]", shown(s, a), shown(s, b)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "  {line}  {} .. {}, last {}{ci}",
        shown(s, lo),
        shown(s, hi),
        shown(s, last.value)
    );
    if !s.changes.is_empty() {
        let _ = writeln!(out, "  {}", marks.trim_end());
    }
    for (k, c) in s.changes.iter().enumerate() {
        let _ = writeln!(out, "  {}", change_line(s, k));
        for f in &c.facts {
            let _ = writeln!(out, "    {}", fact_text(f));
        }
    }
    let partial: Vec<String> = (1..=n)
        .filter(|&i| s.points[i - 1].partial > 0)
        .map(|i| i.to_string())
        .collect();
    if !partial.is_empty() {
        let _ = writeln!(
            out,
            "  * runs with values of runs that did not finish (--include-partial): {}",
            partial.join(", ")
        );
    }
    if s.changes.is_empty() && n > 1 {
        out.push_str("  no change\n");
    }
}

/// The sparkline of `values` and the marker line with `^` under each change (`changes`: the
/// first point of each new level); a series longer than [`SPARK_WIDTH`] is drawn in buckets,
/// each the median of its points.
pub fn sparkline(values: &[f64], changes: &[usize]) -> (String, String) {
    let n = values.len();
    let w = n.min(SPARK_WIDTH);
    let bucket = |i: usize| (i * n / w, ((i + 1) * n / w).max(i * n / w + 1));
    let level: Vec<f64> = (0..w)
        .map(|i| {
            let (a, b) = bucket(i);
            let mut v = values[a..b].to_vec();
            v.sort_by(f64::total_cmp);
            crate::stats::quantile_sorted(&v, 0.5)
        })
        .collect();
    let (lo, hi) = level
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| {
            (a.min(v), b.max(v))
        });
    let line: String = level
        .iter()
        .map(|&v| {
            if hi > lo {
                let k = ((v - lo) / (hi - lo) * 7.0).round() as usize;
                BLOCKS[k.min(7)]
            } else {
                BLOCKS[3]
            }
        })
        .collect();
    let marks: String = (0..w)
        .map(|i| {
            let (a, b) = bucket(i);
            if changes.iter().any(|&c| c >= a && c < b) {
                '^'
            } else {
                ' '
            }
        })
        .collect();
    (line, marks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_draws_low_then_high_with_its_mark() {
        let v: Vec<f64> = (0..10).map(|i| if i < 6 { 1.0 } else { 2.0 }).collect();
        let (line, marks) = sparkline(&v, &[6]);
        assert_eq!(line, "▁▁▁▁▁▁████");
        assert_eq!(marks, "      ^   ");
        let (flat, _) = sparkline(&[3.0; 4], &[]);
        assert_eq!(flat, "▄▄▄▄");
        let long: Vec<f64> = (0..1000).map(f64::from).collect();
        let (line, marks) = sparkline(&long, &[500]);
        assert_eq!(line.chars().count(), SPARK_WIDTH);
        assert_eq!(marks.find('^'), Some(50));
        assert!(line.starts_with('▁') && line.ends_with('█'));
    }
}
