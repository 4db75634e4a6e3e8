//! Row titles: the row's values without the metric, then the metric where it tells rows
//! apart, then the display unit and which way is better (`icmp latency domU<->dom0 (ms) ↓`).

use super::table::Row;
use measure::units::Scale;

fn unit_title(scale: &Scale) -> String {
    if scale.unit.is_empty() {
        String::new()
    } else {
        format!(" ({})", scale.unit)
    }
}

/// `s` with its control characters and non-characters as escapes (`\n`, `\x1b`,
/// `\u{fffe}`: [`crate::escape::visible`]): no format lets them split a row or reach a
/// terminal.
pub fn visible(s: &str) -> String {
    crate::escape::visible(s).into_owned()
}

/// A metric without its unit suffix (`rtt` for `rtt_s`).
fn stem(metric: &str) -> &str {
    match measure::record::unit_suffix(metric) {
        Some(s) => &metric[..metric.len() - s.len()],
        None => metric,
    }
}

/// Titles every row; `metric_in_rows` says whether the metric is a row dimension.
pub(super) fn set_titles(rows: &mut [Row], metric_in_rows: bool) {
    let bases: Vec<String> = rows
        .iter()
        .map(|r| {
            r.dims
                .iter()
                .filter(|(k, _)| k != "metric" && k != "unit")
                .map(|(_, v)| visible(v))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect();
    let mut count: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for b in &bases {
        *count.entry(b.as_str()).or_default() += 1;
    }
    for (i, r) in rows.iter_mut().enumerate() {
        let twins = count[bases[i].as_str()];
        let mut title = bases[i].clone();
        if let (true, Some(role)) = (metric_in_rows, &r.role) {
            title = if title.is_empty() {
                visible(role)
            } else {
                format!("{title}: {}", visible(role))
            };
        } else if metric_in_rows && (twins > 1 || title.is_empty()) {
            let m = r
                .dims
                .iter()
                .find(|(k, _)| k == "metric")
                .map(|(_, v)| visible(stem(v)))
                .unwrap_or_default();
            title = if title.is_empty() {
                m
            } else {
                format!("{title}: {m}")
            };
        }
        r.name = title.clone();
        title.push_str(&unit_title(&r.scale));
        if r.better != super::Better::Unknown {
            title.push(' ');
            title.push_str(r.better.arrow());
        }
        r.title = title;
    }
}
