//! `collate --history`: each row of each label as its runs in order of time, the change
//! points e-divisive means finds (where the level shifted, none in noise alone), the facts
//! that differ around a change, and the text, CSV and JSON shapes; the formats that cannot
//! show a history refuse.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::*;
use serde_json::Value;

/// 40 runs of 8 samples, noise 3%, the level 15% higher from run 25 on (and the kernel
/// 6.12.0 there, 6.1.0 before).
fn shifted() -> String {
    history("bare/xfs", "time make", 40, 8, 1, (25, 0.15), 0.03)
}

fn json_of(args: &[&str], input: &str) -> Value {
    let out = run(args, input);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_shift_at_run_25_is_found_there_with_the_kernel_that_changed() {
    let v = json_of(&["--history", "-f", "json"], &shifted());
    let series = v["series"].as_array().unwrap();
    assert_eq!(series.len(), 1, "{v}");
    let s = &series[0];
    assert_eq!(s["column"], "bare/xfs");
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 40);
    // In order of time, each with its interval (8 values: the median's 95% CI is bounded).
    let ats: Vec<&str> = points.iter().map(|p| p["at"].as_str().unwrap()).collect();
    assert!(ats.windows(2).all(|w| w[0] < w[1]), "{ats:?}");
    for p in points {
        let (lo, val, hi) = (
            p["ci_low"].as_f64().unwrap(),
            p["value"].as_f64().unwrap(),
            p["ci_high"].as_f64().unwrap(),
        );
        assert!(lo <= val && val <= hi, "{p}");
    }
    let changes = s["changes"].as_array().unwrap();
    assert_eq!(
        changes.len(),
        1,
        "one change and none elsewhere: {changes:?}"
    );
    let c = &changes[0];
    // Run 25 is point 24.
    let at = c["index"].as_u64().unwrap();
    eprintln!(
        "change at point {at} (run {}), shift {}%",
        at + 1,
        c["shift_pct"]
    );
    assert!((23..=25).contains(&at), "{c}");
    assert_eq!(c["run"], points[at as usize]["run"]);
    let pct = c["shift_pct"].as_f64().unwrap();
    assert!((10.0..20.0).contains(&pct), "{c}");
    assert!(c["p"].as_f64().unwrap() < 0.01);
    let facts = c["facts"].as_array().unwrap();
    assert_eq!(facts.len(), 1, "only the kernel differs: {facts:?}");
    assert_eq!(facts[0]["key"], "kernel");
    assert_eq!(facts[0]["before"], serde_json::json!(["6.1.0"]));
    assert_eq!(facts[0]["after"], serde_json::json!(["6.12.0"]));
    assert_eq!(v["change_points"]["alpha"], 0.01);
    assert_eq!(v["change_points"]["min_runs"], 3);
}

/// The number of changes in each series of `input`'s JSON history.
fn change_counts(input: &str) -> Vec<usize> {
    let v = json_of(&["--history", "-f", "json"], input);
    v["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["changes"].as_array().unwrap().len())
        .collect()
}

#[test]
fn noise_alone_shows_no_change_in_at_least_98_of_100_seeds_short_or_long() {
    // 100 labels of 40 runs and 100 of 10, each run 8 samples with 3% noise and no shift.
    for (runs, samples) in [(40, 8), (10, 8), (10, 1)] {
        let mut input = String::new();
        for seed in 0..100u64 {
            input.push_str(&history(
                &format!("seed{seed:03}"),
                "time make",
                runs,
                samples,
                1000 + seed,
                (999, 0.0),
                0.03,
            ));
        }
        let counts = change_counts(&input);
        assert_eq!(counts.len(), 100);
        let with_change = counts.iter().filter(|&&c| c > 0).count();
        eprintln!("null series of {runs} runs with a change: {with_change} of 100");
        assert!(
            with_change <= 2,
            "{with_change} of 100 series of {runs} runs without a shift show a change"
        );
    }
}

#[test]
fn a_clean_step_in_a_series_of_10_runs_is_found_at_run_6() {
    // Five runs near 1 s, five near 1.5 s, 3% noise: the exact p of the split is below 0.01
    // (2 * 5! 5! of the 10! orders keep the levels apart: 0.0079), so it passes alpha.
    for (seed, samples) in [(1, 8), (2, 8), (3, 1), (4, 1)] {
        let v = json_of(
            &["--history", "-f", "json"],
            &history("short", "time make", 10, samples, seed, (6, 0.5), 0.03),
        );
        let changes = v["series"][0]["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "seed {seed}: {v}");
        assert_eq!(changes[0]["index"], 5, "run 6 is point 5: {v}");
        let p = changes[0]["p"].as_f64().unwrap();
        assert!((2.0 / 252.0..0.01).contains(&p), "seed {seed}: p {p}");
    }
    // Nine runs cannot pass 0.01: at best 2 * 4! 5! of the 9! orders (0.016) keep them apart.
    let v = json_of(
        &["--history", "-f", "json"],
        &history("short", "time make", 9, 8, 1, (5, 0.5), 0.03),
    );
    assert_eq!(v["series"][0]["changes"], serde_json::json!([]), "{v}");
}

/// 40 runs of `samples` values each (3% noise) whose level rises by 15% in equal steps from
/// the first run to the last.
fn drift(samples: usize) -> String {
    let mut input = String::new();
    let mut rng = Noise(11);
    for k in 0..40u64 {
        let level = 1.0 + 0.15 * k as f64 / 39.0;
        let values: Vec<f64> = (0..samples)
            .map(|_| level * (1.0 + 0.03 * rng.normal()))
            .collect();
        let (run, inv) = (format!("drift-{k:04}"), format!("inv-{k:04}"));
        input.push_str(&history_run(
            "drift",
            "time make",
            (&run, Some(&inv)),
            k * 60,
            "6.1.0",
            &values,
        ));
    }
    input
}

#[test]
fn a_slow_drift_of_15_percent_over_40_runs_shows_as_a_staircase() {
    // No one split holds a drift, so e-divisive cuts it into levels where the drift has
    // moved farther than the noise between runs: two steps at 3% noise a run (one value),
    // more where the runs' medians are steadier (8 values: about 1%).
    for (samples, steps) in [(1, 2..=2), (8, 3..=4)] {
        let v = json_of(&["--history", "-f", "json"], &drift(samples));
        let changes = v["series"][0]["changes"].as_array().unwrap();
        let at: Vec<u64> = changes
            .iter()
            .map(|c| c["index"].as_u64().unwrap())
            .collect();
        eprintln!("drift, {samples} values a run: changes at points {at:?}");
        assert!(steps.contains(&changes.len()), "{samples}: {changes:?}");
        for c in changes {
            let pct = c["shift_pct"].as_f64().unwrap();
            assert!(
                pct > 0.0 && pct < 15.0,
                "each step a part of the drift: {c}"
            );
        }
    }
}

#[test]
fn json_rows_name_their_statistic() {
    // A row whose headline names the mean (equal-time slices of a rate) beside one of
    // medians: the text says which is which, and so does each JSON row.
    let mut input = shifted();
    for k in 0..4u64 {
        let (run, inv) = (format!("rate-{k}"), format!("bare/xfs-inv-{:04}", k + 1));
        let mut lines = history_run(
            "bare/xfs",
            "copy",
            (&run, Some(&inv)),
            (k + 1) * 60,
            "6.1.0",
            &[5.0, 5.5, 4.5, 5.2, 4.8, 5.1],
        );
        lines = lines.replace("wall_s", "rate_per_s").replace(
            "\"headline\":\"rate_per_s\"",
            "\"headline\":\"rate_per_s\",\"headlines\":[{\"key\":\"rate_per_s\",\"role\":\"rate\",\"stat\":\"mean\"}]",
        );
        input.push_str(&lines);
    }
    let stats = |v: &Value, list: &str| -> Vec<(String, String)> {
        v[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let title = r["row"].as_str().or(r["title"].as_str()).unwrap();
                (
                    title.to_string(),
                    r["stat"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let h = json_of(&["--history", "-f", "json"], &input);
    let m = json_of(&["-f", "json"], &input);
    let want = [
        ("time make (s) ↓".to_string(), "median".to_string()),
        ("copy: rate (/s) ↑".to_string(), "mean".to_string()),
    ];
    assert_eq!(stats(&h, "series"), want, "{h}");
    assert_eq!(stats(&m, "rows"), want, "{m}");
}

#[test]
fn the_text_has_a_sparkline_a_marker_and_the_change_line() {
    let out = run(&["--history"], &shifted());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.starts_with("time make (s) ↓  bare/xfs: 40 runs, 2026-11-"))
        .unwrap_or_else(|| panic!("{text}"));
    let spark = lines[head + 1].trim_start();
    let blocks: String = spark
        .chars()
        .take_while(|c| ('▁'..='█').contains(c))
        .collect();
    assert_eq!(blocks.chars().count(), 40, "{text}");
    // Low before the change, high after it.
    assert!(blocks.chars().take(20).all(|c| c <= '▄'), "{blocks}");
    assert!(blocks.chars().skip(27).all(|c| c >= '▅'), "{blocks}");
    let marks = lines[head + 2];
    assert_eq!(marks.trim(), "^", "{text}");
    let col = marks.chars().position(|c| c == '^').unwrap() - 2;
    assert!((23..=25).contains(&col), "{text}");
    let change = lines[head + 3];
    assert!(change.starts_with("  change at run 2"), "{text}");
    assert!(change.contains(" of 40 (2026-11-"), "{change}");
    assert!(
        change.contains(" s -> ") && change.contains(", +1") && change.contains("% (p 0.00"),
        "{change}"
    );
    assert_eq!(lines[head + 4], "    kernel: 6.1.0 -> 6.12.0", "{text}");
}

#[test]
fn csv_is_a_line_per_row_label_and_run() {
    let mut input = shifted();
    input.push_str(&history(
        "para/lvm",
        "time make",
        10,
        8,
        2,
        (999, 0.0),
        0.03,
    ));
    let out = run(&["--history", "-f", "csv"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let head: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(
        head,
        [
            "row",
            "label",
            "unit",
            "index",
            "run",
            "at",
            "n",
            "value",
            "ci_low",
            "ci_high",
            "level",
            "change_pct",
            "change_p"
        ]
    );
    let recs: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    assert_eq!(recs.len(), 50);
    assert_eq!(recs.iter().filter(|r| &r[1] == "bare/xfs").count(), 40);
    for r in &recs {
        for k in [7, 8, 9, 10] {
            r[k].parse::<f64>().unwrap_or_else(|_| panic!("{r:?}"));
        }
    }
    let starts: Vec<&csv::StringRecord> = recs.iter().filter(|r| !r[11].is_empty()).collect();
    assert_eq!(starts.len(), 1, "{text}");
    assert!(&starts[0][1] == "bare/xfs" && starts[0][11].parse::<f64>().unwrap() > 10.0);
    // The level after the change is about 15% above the level before.
    let level = |i: usize| recs[i][10].parse::<f64>().unwrap();
    assert!((level(39) / level(0) - 1.15).abs() < 0.03, "{text}");
}

#[test]
fn filters_and_columns_choose_the_series_and_runs_by_hand_are_runs() {
    let mut input = shifted();
    input.push_str(&history(
        "para/lvm",
        "time make",
        10,
        8,
        2,
        (999, 0.0),
        0.03,
    ));
    // Runs by hand: no invocation, each tool run its own run.
    for k in 0..5u64 {
        let run = format!("hand-{k}");
        input.push_str(&history_run(
            "hand",
            "time make",
            (&run, None),
            k * 60,
            "6.1.0",
            &[1.0, 1.1, 0.9],
        ));
    }
    let v = json_of(&["--history", "-f", "json"], &input);
    let cols: Vec<&str> = v["series"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["column"].as_str().unwrap())
        .collect();
    assert_eq!(cols, ["bare/xfs", "para/lvm", "hand"]);
    let hand = &v["series"][2]["points"];
    assert_eq!(hand.as_array().unwrap().len(), 5);
    assert_eq!(hand[0]["run"], "hand-0");
    let v = json_of(
        &["--history", "-f", "json", "--filter", "label:para/*"],
        &input,
    );
    assert_eq!(v["series"].as_array().unwrap().len(), 1);
    assert_eq!(v["series"][0]["column"], "para/lvm");
    // --cols label.1: a series per first level; --stat p90 per run.
    let v = json_of(
        &[
            "--history",
            "-f",
            "json",
            "--cols",
            "label.1",
            "--stat",
            "p90",
        ],
        &input,
    );
    assert_eq!(v["series"][0]["column"], "bare");
    assert_eq!(v["stat"], "p90");
    // A stricter alpha and a longer smallest segment are taken and reported.
    let v = json_of(
        &[
            "--history",
            "-f",
            "json",
            "--change-alpha",
            "0.001",
            "--change-min-runs",
            "5",
        ],
        &shifted(),
    );
    assert_eq!(v["change_points"]["alpha"], 0.001);
    assert_eq!(v["change_points"]["min_runs"], 5);
    assert!(v["change_points"]["permutations"].as_u64().unwrap() >= 1999);
    assert_eq!(v["series"][0]["changes"].as_array().unwrap().len(), 1);
}

#[test]
fn formats_and_flags_that_cannot_make_a_history_refuse() {
    for f in ["markdown", "dokuwiki"] {
        let out = run(&["--history", "-f", f], &shifted());
        assert_eq!(out.status.code(), Some(2), "{f}");
        let err = stderr(&out);
        assert!(err.contains(&format!("--history with -f {f}")), "{err}");
        assert!(err.contains("text, html, svg, json or csv"), "{err}");
    }
    for args in [
        &["--history", "--baseline", "bare/xfs"][..],
        &["--history", "--latest"],
        &["--history", "--transpose"],
        &["--change-alpha", "0.05"],
        &["--history", "--change-alpha", "2"],
        &["--history", "--change-min-runs", "1"],
    ] {
        let out = run(args, &shifted());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
    // The SVG charts: one per series, with its change marked.
    let out = run(&["--history", "-f", "svg"], &shifted());
    assert!(out.status.success(), "{}", stderr(&out));
    let svg = stdout(&out);
    assert_eq!(svg.matches("<g class=\"series\"").count(), 1);
    assert_eq!(svg.matches("class=\"change\"").count(), 1);
    assert!(svg.contains("kernel: 6.1.0 -&gt; 6.12.0"), "{svg}");
}

#[test]
fn a_run_that_did_not_finish_is_left_out_or_marked() {
    // Run 11's summary says failed.
    let input: String = shifted()
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            if v["type"] == "summary" && v["run"] == "bare/xfs-time make-0011" {
                v["status"] = "failed".into();
                v["error"] = "killed".into();
            }
            v.to_string() + "\n"
        })
        .collect();
    let out = run(&["--history"], &input);
    let text = stdout(&out);
    assert!(text.contains("bare/xfs: 39 runs"), "{text}");
    assert!(text.contains("Left out: 8 values of 1 run"), "{text}");
    let out = run(&["--history", "--include-partial"], &input);
    let text = stdout(&out);
    assert!(text.contains("bare/xfs: 40 runs"), "{text}");
    assert!(text.contains("(--include-partial): 11\n"), "{text}");
    let out = run(&["--history", "--include-partial", "-f", "html"], &input);
    assert_eq!(stdout(&out).matches("class=\"partial\"").count(), 1);
    let v = json_of(&["--history", "--include-partial", "-f", "json"], &input);
    assert_eq!(v["series"][0]["points"][10]["partial"], 8);
}

/// The arguments that draw README.md's history: three rows of the real series in
/// doc/history-nightly.jsonl (doc/history-nightly.sh made it).
fn readme_history_args(format: &str) -> Vec<String> {
    let records =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../doc/history-nightly.jsonl");
    [
        "--history",
        "-f",
        format,
        "--filter=-name:\"network throughput loopback->this\"",
        "--metric",
        "throughput_bits_per_s,syscall_s,mem_read_bytes_per_s",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain([records.display().to_string()])
    .collect()
}

#[test]
fn the_readme_history_is_what_collate_makes_of_the_real_series() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let draw = |format: &str| {
        let args = readme_history_args(format);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run(&args, "");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        stdout(&out)
    };
    // The chart README.md shows is collate's own drawing (UPDATE_GOLDEN=1 draws it again).
    let svg = draw("svg");
    let path = root.join("doc/history-nightly.svg");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &svg).unwrap();
    }
    let kept = std::fs::read_to_string(&path).unwrap();
    assert!(
        kept == svg,
        "{} is not what collate draws now (UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
    // Each row changes once, at the ninth run, where the cgroup's quota began.
    assert_eq!(svg.matches("class=\"change\"").count(), 3, "{svg}");
    assert_eq!(
        svg.matches("cpu_quota: max -&gt; 50000/100000").count(),
        3,
        "{svg}"
    );
    // The text under it in README.md is collate's text of the same rows.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    for line in draw("text").lines().filter(|l| !l.trim().is_empty()) {
        assert!(
            readme.contains(line),
            "README.md lacks collate's line {line:?}"
        );
    }
}
