//! Scale: a wide, sparse matrix (1000 labels of 24 rows each among 2000 names, two million
//! cells, 98.8% empty) in bounded memory and output, every format, the history of a label
//! of 1000 runs of 30 rows as one page under 5 MB, and histories of 20,000 and 200,000 series
//! (rows of a label, labels, rows run by hand), with GNU time measuring the peak RSS and the
//! time (said, never a threshold).

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::json;
use std::io::Write;
use std::process::{Command, Output, Stdio};

const TIME: &str = "/usr/bin/time";

/// `collate -f FORMAT -` of `input` under GNU time: its output and peak RSS in KiB.
fn timed(format: &str, input: &str) -> (Output, u64) {
    let (out, rss, _) = timed_args(&["-f", format, "-"], input);
    (out, rss)
}

/// `collate ARGS` of `input` under GNU time: its output, peak RSS in KiB and elapsed seconds.
fn timed_args(args: &[&str], input: &str) -> (Output, u64, f64) {
    let mut child = Command::new(TIME)
        .args(["-f", "elapsed_s=%e maxrss_kib=%M", bin()])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let data = input.as_bytes().to_vec();
    let w = std::thread::spawn(move || stdin.write_all(&data).unwrap());
    let out = child.wait_with_output().unwrap();
    w.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?}: {err}");
    let rss = err
        .rsplit("maxrss_kib=")
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let elapsed = err
        .rsplit("elapsed_s=")
        .next()
        .and_then(|s| s.split_whitespace().next())
        .unwrap()
        .parse()
        .unwrap();
    (out, rss, elapsed)
}

#[test]
fn a_wide_sparse_matrix_renders_in_bounded_memory_and_pages() {
    // 1000 labels of 24 rows each among 2000 names: two million cells, 98.8% empty. Every
    // format holds the matrix once (an empty cell is a pointer), streams JSON row by row,
    // pages the HTML report's table and draws only values in its charts.
    let mut input = String::new();
    for l in 0..1000u64 {
        for k in 0..24u64 {
            let (label, name) = (
                format!("env{l:04}/x"),
                format!("row{:04}", (l * 24 + k) % 2000),
            );
            let v = json!({"wall_median_s": 1.0 + k as f64 * 0.01});
            input.push_str(&summary(&label, &name, v, "wall_median_s"));
            input.push('\n');
        }
    }
    if !std::path::Path::new(TIME).exists() {
        testkit::skip("the memory bound needs GNU time (/usr/bin/time)");
        return;
    }
    for (f, most_mib, most_bytes) in [
        ("text", 400, 40 << 20),
        ("csv", 400, 4 << 20),
        ("json", 600, 120 << 20),
        ("html", 600, 60 << 20),
        ("svg", 400, 20 << 20),
    ] {
        let (out, rss) = timed(f, &input);
        assert!(rss < most_mib << 10, "{f}: peak RSS {} MiB", rss >> 10);
        assert!(
            out.stdout.len() < most_bytes,
            "{f}: {} bytes",
            out.stdout.len()
        );
        eprintln!(
            "{f}: {} bytes, peak RSS {} MiB",
            out.stdout.len(),
            rss >> 10
        );
        if f == "html" {
            let page = String::from_utf8(out.stdout).unwrap();
            assert_eq!(
                page.matches("<table>").count(),
                42,
                "1000 columns in pages of 24"
            );
            assert!(
                page.contains("Columns 1&ndash;24 of 1000")
                    && page.contains("Columns 985&ndash;1000 of 1000")
            );
            for l in [0, 517, 999] {
                assert!(
                    page.contains(&format!("<th scope=\"col\">env{l:04}</th>")),
                    "env{l:04}"
                );
            }
            assert!(page.contains("988 of the 1000 columns have no value in this row (not drawn)"));
        }
    }
}

#[test]
fn a_history_of_1000_runs_of_30_rows_is_one_page_under_5_mb() {
    // One label, 1000 suite runs an hour apart, each measuring 30 rows of 5 samples (3% noise),
    // row k 10% slower from run 400 + 10 k on: 210,000 lines.
    let mut input = String::with_capacity(60 << 20);
    let mut rng = Noise(7);
    for k in 0..1000u64 {
        let inv = format!("inv{k:04}");
        for row in 0..30u64 {
            let slower = if k >= 400 + 10 * row { 1.1 } else { 1.0 };
            let level = (1.0 + row as f64 * 0.1) * slower;
            let values: Vec<f64> = (0..5)
                .map(|_| level * (1.0 + 0.03 * rng.normal()))
                .collect();
            let (name, run) = (format!("step {row:02}"), format!("r{k:04}{row:02}"));
            let kernel = if k < 500 { "6.1.0" } else { "6.12.0" };
            input.push_str(&history_run(
                "bare/xfs",
                &name,
                (&run, Some(&inv)),
                k * 60 + row,
                kernel,
                &values,
            ));
        }
    }
    if !std::path::Path::new(TIME).exists() {
        testkit::skip("the figures need GNU time (/usr/bin/time)");
        return;
    }
    let (out, rss, elapsed) = timed_args(&["--history", "-f", "html", "-"], &input);
    let page = String::from_utf8(out.stdout).unwrap();
    eprintln!(
        "history of 1000 runs x 30 rows: {} input bytes, page {} bytes, {elapsed} s, peak RSS {} MiB",
        input.len(),
        page.len(),
        rss >> 10
    );
    assert!(page.len() < 5 << 20, "page of {} bytes", page.len());
    assert!(rss < 600 << 10, "peak RSS {} MiB", rss >> 10);
    assert_eq!(page.matches("class=\"chart history\"").count(), 30);
    assert_eq!(page.matches("<circle").count(), 30_000);
    // Every row's change found near its run (401 + 10 k, 1-based); a few more at most (each
    // row tests both sides of its change again, at alpha 0.01).
    let changes = page.matches("class=\"change\"").count();
    assert!((30..=33).contains(&changes), "{changes} changes");
    for row in 0..30u64 {
        let near = (399 + 10 * row..=403 + 10 * row)
            .any(|r| page.contains(&format!("change at run {r} of 1000")));
        assert!(near, "row {row}'s change");
    }
}

/// How [`many_series`] lays out its series.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// One label of `n` rows whose runs are two suite invocations.
    Rows,
    /// `n` labels of one row each, run by hand.
    Labels,
    /// One label of `n` rows, each row's runs by hand (a column of its own per run).
    Names,
}

/// `n` series of 2 runs of one summary each, laid out as `shape` says.
fn many_series(n: usize, shape: Shape) -> String {
    let mut input = String::with_capacity(n * 2 * 300);
    for s in 0..n {
        for k in 0..2 {
            let (run, inv, label, name) = match shape {
                Shape::Rows => (
                    format!("a{s}-{k}"),
                    format!(",\"invocation\":\"inv{k}\""),
                    "suite".to_string(),
                    format!("row{s}"),
                ),
                Shape::Labels => (
                    format!("b{s}-{k}"),
                    String::new(),
                    format!("hand{s}"),
                    "make".to_string(),
                ),
                Shape::Names => (
                    format!("c{s}-{k}"),
                    String::new(),
                    "hand".to_string(),
                    format!("row{s}"),
                ),
            };
            input.push_str(&format!(
                "{{\"schema\":\"benchmatrix/1\",\"tool\":\"timecmd\",\"version\":\"0.1.0\",\"type\":\"summary\",\"run\":\"{run}\",\"seq\":0,\"at\":\"2026-11-01T00:0{k}:00.000000Z\",\"host\":\"h\",\"label\":\"{label}\",\"name\":\"{name}\"{inv},\"status\":\"ok\",\"headline\":\"wall_s\",\"values\":{{\"wall_s\":{}}},\"info\":{{}}}}\n",
                1.0 + k as f64 * 0.01
            ));
        }
    }
    input
}

#[test]
fn a_history_of_200k_series_takes_time_and_memory_in_proportion() {
    // 200,000 series as many rows of one label, as many labels of one row, and as many rows
    // of one label each run by hand: the history keys each row, column and run once, and
    // each row holds only the cells it has, so 10 times the series take about 10 times the
    // time and memory (said, never a threshold) and every series is a line per run. 2,000
    // rows run by hand come first: a table of every row against every run (8 million cells)
    // takes 354 MiB there, the bound is 128 MiB (46 MiB without that table).
    if !std::path::Path::new(TIME).exists() {
        testkit::skip("the figures need GNU time (/usr/bin/time)");
        return;
    }
    for shape in [Shape::Rows, Shape::Labels, Shape::Names] {
        let mut rss_of = Vec::new();
        for n in [2_000, 20_000, 200_000] {
            let input = many_series(n, shape);
            let (out, rss, elapsed) = timed_args(&["--history", "-f", "csv", "-"], &input);
            eprintln!(
                "history of {n} series ({shape:?}, 2 runs each): {} input bytes, {elapsed} s, peak RSS {} MiB",
                input.len(),
                rss >> 10
            );
            assert!(
                n > 2_000 || rss < 128 << 10,
                "{shape:?}: peak RSS {} MiB for 2,000 series",
                rss >> 10
            );
            assert_eq!(
                out.stdout.iter().filter(|&&b| b == b'\n').count(),
                1 + 2 * n
            );
            rss_of.push(rss);
        }
        assert!(
            rss_of[2] < 1536 << 10,
            "{shape:?}: peak RSS {} MiB",
            rss_of[2] >> 10
        );
        assert!(
            rss_of[2] < 20 * rss_of[1],
            "{shape:?}: peak RSS {} MiB for 200,000 series, {} MiB for 20,000",
            rss_of[2] >> 10,
            rss_of[1] >> 10
        );
    }
}
