//! `ingest figures` on real output: GNU dd's rates picked out with awk become samples of the
//! tool the command line names, each figure as awk wrote it, the summary their median, and a
//! line that is not KEY=VALUE is refused with its place and a failed summary.

use crate::common::{converted, ingest_stdin};
use measure::Kind;
use std::process::Command;
use testkit::need_tool;

/// Three real dd writes of 4 MiB with conv=fsync, each rate as `throughput_bytes_per_s=N`.
fn dd_rates(dir: &std::path::Path) -> String {
    let mut lines = String::new();
    for _ in 0..3 {
        let out = Command::new("sh")
            .arg("-c")
            .arg("dd if=/dev/zero of=\"$1\" bs=1M count=4 conv=fsync 2>&1 | awk '/copied/ { printf \"throughput_bytes_per_s=%d elapsed_s=%s\\n\", $1 / $(NF-3), $(NF-3) }'")
            .arg("sh")
            .arg(dir.join("f"))
            .output()
            .expect("dd runs");
        lines.push_str(&String::from_utf8_lossy(&out.stdout));
    }
    lines
}

#[test]
fn dd_rates_become_samples_of_dd_and_their_median() {
    if !need_tool("dd") || !need_tool("awk") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let text = dd_rates(dir.path());
    assert_eq!(text.lines().count(), 3, "{text}");
    let args = [
        "figures",
        "--tool",
        "dd",
        "--tool-version",
        "9.1",
        "--name",
        "dd write",
    ];
    let run = ingest_stdin(&args, text.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    converted(&run, "dd");
    let samples: Vec<f64> = run
        .records
        .iter()
        .filter(|r| r.kind == Kind::Sample)
        .filter_map(|r| {
            r.values
                .get("throughput_bytes_per_s")
                .and_then(|v| v.as_f64())
        })
        .collect();
    let want: Vec<f64> = text
        .lines()
        .filter_map(|l| {
            l.split_whitespace()
                .next()?
                .strip_prefix("throughput_bytes_per_s=")
        })
        .filter_map(|v| v.parse().ok())
        .collect();
    assert_eq!(samples, want);
    let summary = run.records.last().expect("a summary");
    assert_eq!(summary.headline.as_deref(), Some("throughput_bytes_per_s"));
    let mut sorted = want.clone();
    sorted.sort_by(f64::total_cmp);
    assert_eq!(
        summary
            .values
            .get("throughput_bytes_per_s")
            .and_then(|v| v.as_f64()),
        Some(sorted[1])
    );
    assert!(
        run.records
            .iter()
            .all(|r| r.name == "dd write" && r.version == "9.1")
    );
}

#[test]
fn a_line_that_is_not_figures_is_refused_where_it_is() {
    let run = ingest_stdin(
        &["figures", "--tool", "dd"],
        b"throughput_bytes_per_s=5\n5 MB/s\n",
    );
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr.contains("stdin:2: \"5\" is not KEY=VALUE"),
        "{}",
        run.stderr
    );
    let summary = run.records.last().expect("a failed summary");
    assert_eq!(summary.kind, Kind::Summary);
    let run = ingest_stdin(&["figures"], b"wall_s=1\n");
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--tool"), "{}", run.stderr);
}
