//! Which way is better: each row's direction from its unit, a change against the baseline
//! read as better or worse in every format (a word in text, colour as well in HTML and SVG),
//! and the overall line: per column the geometric mean of direction-aware ratios with a
//! reproducible bootstrap interval and the rows better, worse and the same.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::Value;

/// Two rows: a time that doubles in `slow` (worse) and a rate that grows by half (better),
/// 8 samples a cell, fully apart.
fn input() -> String {
    time_and_rate(
        "build",
        0.001,
        &[("base", 1.0, 100e6), ("slow", 2.0, 150e6)],
    )
}

#[test]
fn rows_say_which_way_is_better_and_changes_read_better_or_worse() {
    let args = ["--baseline", "base", "--no-ci"];
    let text = stdout(&run(&args, &input()));
    let build = text.lines().find(|l| l.starts_with("build")).unwrap();
    let copy = text.lines().find(|l| l.starts_with("copy")).unwrap();
    assert!(build.starts_with("build (s) ↓"), "{text}");
    assert!(build.ends_with("+100% worse"), "{text}");
    assert!(copy.contains(" ↑ "), "{text}");
    assert!(copy.ends_with("+50% better"), "{text}");
    assert!(text.contains("↓ lower is better"), "{text}");
    for f in ["markdown", "dokuwiki"] {
        let out = stdout(&run(&[&args[..], &["-f", f]].concat(), &input()));
        assert!(
            out.contains("worse") && out.contains("better") && out.contains('↓'),
            "{f}: {out}"
        );
    }
    let html = stdout(&run(&[&args[..], &["-f", "html"]].concat(), &input()));
    assert!(html.contains("<td class=\"up worse\""), "{html}");
    assert!(html.contains("<td class=\"up better\""), "{html}");
    assert!(html.contains("td.better { color: #1b5e20;"), "{html}");
    let svg = stdout(&run(&[&args[..], &["-f", "svg"]].concat(), &input()));
    assert!(
        svg.contains("fill=\"#c62828\""),
        "a worse bar is red: {svg}"
    );
    assert!(
        svg.contains("fill=\"#2e7d32\""),
        "a better bar is green: {svg}"
    );
    assert!(svg.contains("lower is better") && svg.contains("higher is better"));
    let v: Value = serde_json::from_slice(&run(&["-f", "json"], &input()).stdout).unwrap();
    assert_eq!(v["rows"][0]["better"], "lower");
    assert_eq!(v["rows"][1]["better"], "higher");
}

#[test]
fn the_overall_line_is_a_direction_aware_geometric_mean() {
    let out = run(&["-f", "json", "--baseline", "base"], &input());
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["overall"][0].is_null(), "the baseline has none");
    let o = &v["overall"][1];
    // Time 2x slower: 1/2; rate 1.5x higher: 1.5; sqrt(0.75) = 0.866.
    let g = o["geomean"].as_f64().unwrap();
    assert!((g - 0.75f64.sqrt()).abs() < 1e-9, "{o}");
    assert_eq!(
        (o["better"].as_u64(), o["worse"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!((o["same"].as_u64(), o["rows"].as_u64()), (Some(0), Some(2)));
    let (lo, hi) = (
        o["ci_low"].as_f64().unwrap(),
        o["ci_high"].as_f64().unwrap(),
    );
    assert!(lo <= g && g <= hi && lo < hi, "{o}");
    // Resampled rows: one row alone gives 0.5 or 1.5, so the interval reaches near both.
    assert!(lo < 0.6 && hi > 1.3, "{o}");
    // The same input gives the same interval, in every format.
    let again: Value =
        serde_json::from_slice(&run(&["-f", "json", "--baseline", "base"], &input()).stdout)
            .unwrap();
    assert_eq!(again["overall"], v["overall"]);
    let want = format!("0.87 [{lo:.2}–{hi:.2}] 1/1/0");
    for f in ["text", "markdown", "dokuwiki", "html"] {
        let out = stdout(&run(&["--baseline", "base", "-f", f], &input())).replace('\\', "");
        assert!(
            out.contains("overall (ratio, above 1 is better)"),
            "{f}: {out}"
        );
        assert!(out.contains(&want), "{f}: {want} in {out}");
    }
    let csv = stdout(&run(&["--baseline", "base", "-f", "csv"], &input()));
    assert!(
        csv.contains(&format!(
            "overall: geometric mean,slow,ratio,2,{},{},{},,{},,\n",
            g, lo, hi, g
        )),
        "{csv}"
    );
    assert!(
        csv.contains("overall: rows worse,slow,count,2,1,,,,,,\n"),
        "{csv}"
    );
    // --filter leaves rows out of it: the rate alone is 1.5.
    let out = run(
        &["-f", "json", "--baseline", "base", "--filter", "name:copy"],
        &input(),
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!((v["overall"][1]["geomean"].as_f64().unwrap() - 1.5).abs() < 1e-9);
}
