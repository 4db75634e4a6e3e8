//! A summary that headlines several figures makes a row of each, titled "NAME: ROLE", in
//! every format; a headline that aggregates a per-sample metric (`reads_median_per_s` over
//! `reads_per_s`) takes its cell from the samples; a file of single headlines is read as
//! before.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::json;

/// One run of `label`: 6 samples with a rate and a latency, then a summary headlining the
/// median rate, the p50 and the p99 latency.
fn run_lines(label: &str, base: f64) -> Vec<String> {
    let mut l: Vec<String> = (0..6)
        .map(|i| {
            let v = json!({"reads_per_s": base + i as f64, "latency_s": 0.001 * (1.0 + i as f64 / 10.0)});
            line("sample", label, "random read 4k", v, i, json!({}))
        })
        .collect();
    l.push(line(
        "summary",
        label,
        "random read 4k",
        json!({"reads_median_per_s": base + 2.5, "latency_p50_s": 0.00125, "latency_p99_s": 0.0015}),
        6,
        json!({"status": "ok", "headline": "reads_median_per_s", "headlines": [
            {"key": "reads_median_per_s", "role": "reads per second"},
            {"key": "latency_p50_s", "role": "latency p50"},
            {"key": "latency_p99_s", "role": "latency p99"},
        ]}),
    ));
    l
}

#[test]
fn one_summary_of_three_headlines_makes_three_rows_in_every_format() {
    let mut l = run_lines("a", 1000.0);
    l.extend(run_lines("b", 2000.0));
    let input = l.join("\n") + "\n";
    let text = stdout(&run(&[], &input));
    for row in [
        "random read 4k: reads per second",
        "random read 4k: latency p50",
        "random read 4k: latency p99",
    ] {
        assert_eq!(
            text.lines().filter(|l| l.starts_with(row)).count(),
            1,
            "{row}:\n{text}"
        );
        for f in ["csv", "html", "json", "markdown", "dokuwiki", "svg"] {
            assert!(stdout(&run(&["-f", f], &input)).contains(row), "{f}: {row}");
        }
    }
    // The rate's cell is the median of the six samples, with its interval, not one value.
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["-f", "json"], &input))).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "{v}");
    assert_eq!(rows[0]["metrics"][0], "reads_per_s");
    assert_eq!(rows[0]["cells"][0]["n"], 6);
    assert_eq!(rows[0]["cells"][1]["value"], 2002.5);
    assert_eq!(
        rows[2]["cells"][0]["n"], 1,
        "the p99 comes from the summary"
    );
}

#[test]
fn a_single_headline_file_gives_the_matrix_it_gave() {
    // The same runs without "headlines": one row, titled by the name alone, as before.
    let mut l = Vec::new();
    for (label, base) in [("a", 1000.0), ("b", 2000.0)] {
        for r in run_lines(label, base) {
            let mut v: serde_json::Value = serde_json::from_str(&r).unwrap();
            if let Some(m) = v.as_object_mut() {
                m.remove("headlines");
            }
            l.push(v.to_string());
        }
    }
    let text = stdout(&run(&[], &(l.join("\n") + "\n")));
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("random read 4k"))
        .collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(!rows[0].contains(':'), "no role, no \"NAME: ROLE\": {text}");
}

#[test]
fn a_headline_that_names_the_mean_gets_it_with_a_bootstrap_interval() {
    // Sixteen equal-time slices of a rate: a fast quarter and a slow rest. The run's rate
    // (work over time) is their mean, 325; their median, 100, is a typical slice's.
    let rates: Vec<f64> = (0..16)
        .map(|i| if i < 4 { 1000.0 } else { 100.0 })
        .collect();
    let mut l: Vec<String> = rates
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let v = json!({ "creates_per_s": r });
            line("sample", "a", "fsmeta", v, i as u64, json!({}))
        })
        .collect();
    l.push(line(
        "summary",
        "a",
        "fsmeta",
        json!({"creates_per_s": 325.0}),
        16,
        json!({"status": "ok", "headline": "creates_per_s", "headlines": [
            {"key": "creates_per_s", "role": "create", "stat": "mean"},
        ]}),
    ));
    let input = l.join("\n") + "\n";
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["-f", "json"], &input))).unwrap();
    let c = &v["rows"][0]["cells"][0];
    assert_eq!(c["value"], 325.0, "{v}");
    let (lo, hi) = (
        c["ci_low"].as_f64().unwrap(),
        c["ci_high"].as_f64().unwrap(),
    );
    assert!(
        lo < 325.0 && 325.0 < hi && lo >= 100.0 && hi <= 1000.0,
        "{c}"
    );
    // The same input twice gives the same interval (a fixed seed).
    let again: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["-f", "json"], &input))).unwrap();
    assert_eq!(again["rows"][0]["cells"][0], *c);
    let text = stdout(&run(&[], &input));
    assert!(text.contains("Means of equal-time slices"), "{text}");
    // Another --stat is the user's choice, and applies to this row too.
    let v: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["-f", "json", "--stat", "p90"], &input))).unwrap();
    assert_eq!(v["rows"][0]["cells"][0]["value"], 1000.0, "{v}");
}
