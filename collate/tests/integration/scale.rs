//! Scale: a wide, sparse matrix (1000 labels of 24 rows each among 2000 names, two million
//! cells, 98.8% empty) in bounded memory and output, every format, with GNU time measuring
//! the peak RSS.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::json;
use std::io::Write;
use std::process::{Command, Output, Stdio};

const TIME: &str = "/usr/bin/time";

/// `collate -f FORMAT -` of `input` under GNU time: its output and peak RSS in KiB.
fn timed(format: &str, input: &str) -> (Output, u64) {
    let mut child = Command::new(TIME)
        .args(["-f", "maxrss_kib=%M", bin(), "-f", format, "-"])
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
    assert!(out.status.success(), "{format}: {err}");
    let rss = err
        .rsplit("maxrss_kib=")
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (out, rss)
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
