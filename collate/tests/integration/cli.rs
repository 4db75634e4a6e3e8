//! The command line: inputs (files, stdin, -), bad input and its messages, the choice
//! flags, the statistics end to end, streaming many lines in bounded memory, and random
//! garbage that must never panic.

// Test helpers outside #[test] functions unwrap too: a failure is a test failure.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::json;
use std::io::Write;
use std::process::{Command, Stdio};

fn code(o: &std::process::Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

#[test]
fn reads_files_stdin_and_dash_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.jsonl");
    let b = dir.path().join("b.jsonl");
    std::fs::write(
        &a,
        complete(&sample("env-a", "row", json!({"x_s": 1.0}), 0)),
    )
    .unwrap();
    let b_text = complete(&sample("env-b", "row", json!({"x_s": 2.0}), 0));
    std::fs::write(&b, b_text.trim_end()).unwrap(); // no final newline
    let stdin = complete(&sample("env-c", "row", json!({"x_s": 3.0}), 0));
    let out = run(
        &[a.to_str().unwrap(), "-", b.to_str().unwrap(), "-f", "csv"],
        &stdin,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let labels: Vec<String> = stdout(&out)
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(1).unwrap().to_string())
        .collect();
    assert_eq!(labels, ["env-a", "env-c", "env-b"]);
    let out = run(&["-f", "csv"], &stdin);
    assert_eq!(
        stdout(&out),
        "row,label,unit,n,value,ci_low,ci_high,excluded\nrow,env-c,s,1,3,,,0\n"
    );
}

#[test]
fn bad_lines_stop_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.jsonl");
    let good = sample("e", "row", json!({"x_s": 1.25}), 0);
    let cases = [
        ("{not json", "not a JSON object"),
        ("[1,2]", "not a JSON object"),
        (
            &good.replace("benchmatrix/1", "benchmatrix/9"),
            "unknown schema \"benchmatrix/9\"",
        ),
        (
            &good.replace("\"host\":\"h1\",", ""),
            "missing envelope field \"host\"",
        ),
        (&good.replace("x_s", "x"), "has no unit suffix"),
        (
            &good.replace("1.25", "\"fast\""),
            "values key \"x_s\" must be a number",
        ),
        (
            &good.replace("\"x_s\":1.25", "\"x_s\":1.25,\"x_s\":5"),
            "duplicate key \"x_s\" in \"values\"",
        ),
        (
            &good.replace("\"label\":\"e\"", "\"label\":\"e\",\"label\":\"f\""),
            "duplicate key \"label\"",
        ),
    ];
    for (bad, why) in cases {
        std::fs::write(&f, format!("{good}\n\n{bad}\n{good}\n")).unwrap();
        let out = run(&[f.to_str().unwrap()], "");
        assert_eq!(code(&out), 2, "{bad}");
        let err = stderr(&out);
        let want = format!("collate: {}:3: ", f.display());
        assert!(err.starts_with(&want), "{err}");
        assert!(err.contains(why), "{err}");
        assert!(err.contains("--skip-invalid"), "{err}");
        assert!(out.stdout.is_empty(), "nothing printed after a bad line");
    }
    // Not UTF-8.
    let mut bytes = format!("{good}\n").into_bytes();
    bytes.extend_from_slice(b"{\"schema\":\"\xff\"}\n");
    std::fs::write(&f, bytes).unwrap();
    let out = run(&[f.to_str().unwrap()], "");
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains(":2: not UTF-8"), "{}", stderr(&out));
}

#[test]
fn skip_invalid_counts_and_says_so() {
    let good = sample("e", "row", json!({"x_s": 1.0}), 0);
    let input = complete(&format!("{good}\ngarbage\n{good}\n{{\"schema\":\"x\"}}\n"));
    let out = run(&["--skip-invalid", "-", "-f", "csv"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("skipped 2 invalid lines of 5 (--skip-invalid)"),
        "{err}"
    );
    assert!(err.contains("-:2: not a JSON object"), "{err}");
    assert_eq!(
        stdout(&out),
        "row,label,unit,n,value,ci_low,ci_high,excluded\nrow,e,s,1,1,,,0\n"
    );
}

#[test]
fn no_records_is_exit_1() {
    let out = run(&[], "");
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("no records"), "{}", stderr(&out));
    // Only begin and interval lines: no samples or summaries either.
    let input = line("begin", "e", "row", json!({}), 0, json!({})) + "\n";
    let out = run(&[], &input);
    assert_eq!(code(&out), 1);
    let out = run(&["--filter", "label:nothing"], &fixture());
    assert_eq!(code(&out), 1);
    assert!(stderr(&out).contains("no record matches --filter"));
    let out = run(&["--metric", "nope_s"], &fixture());
    assert_eq!(code(&out), 1);
    assert!(
        stderr(&out).contains("the metrics are:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn usage_errors_are_exit_2() {
    for args in [
        vec!["--stat", "mode"],
        vec!["--rows", "label", "--cols", "label"],
        vec!["--filter", "name:(a"],
        vec!["--metric", "rtt"],
        vec!["-f", "xml"],
        vec!["--baseline", "no/such/label"],
        vec!["--columns", "no/such/label"],
        vec!["/nonexistent/file.jsonl"],
    ] {
        let out = run(&args, &fixture());
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).is_empty());
    }
    let out = run(&["--baseline", "no/such/label"], &fixture());
    assert!(stderr(&out).contains("the columns are: hvm/nas/net"));
}

#[test]
fn a_row_that_mixes_units_is_an_error() {
    let out = run(&["--rows", "label", "--cols", "name"], &fixture());
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("mixes units"), "{}", stderr(&out));
}

#[test]
fn choosing_rows_columns_and_metrics() {
    let f = fixture();
    // --columns fixes the order and the selection.
    let out = run(&["-f", "csv", "--columns", "dom0/xfs/disc,hvm/nas/net"], &f);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let labels: Vec<&str> = text
        .lines()
        .skip(1)
        .take(2)
        .map(|l| l.split(',').nth(1).unwrap())
        .collect();
    assert_eq!(labels, ["dom0", "hvm"], "{text}");
    // --metric all adds the metrics that the headline hides.
    let out = run(&["--metric", "all", "--no-ci"], &f);
    let text = stdout(&out);
    // bytes_count is a count (no unit), from the summaries: no sample carries it.
    let bytes = text
        .lines()
        .find(|l| l.starts_with("network throughput domU->dom0: bytes ↓ "))
        .unwrap_or_else(|| panic!("{text}"));
    assert_eq!(bytes.matches("5368709120").count(), 5, "{bytes}");
    assert!(
        text.contains("icmp latency domU<->dom0: loss (%) ↓"),
        "{text}"
    );
    assert!(
        text.contains("time make -j8 bzImage: maxrss (MiB) ↓"),
        "{text}"
    );
    // --metric picks keys.
    let out = run(&["-f", "csv", "--metric", "wall_s"], &f);
    assert_eq!(stdout(&out).lines().count(), 1 + 4);
    // --filter in benchstat's syntax.
    let out = run(&["-f", "csv", "--filter", "label:para* -name:icmp*"], &f);
    let text = stdout(&out);
    assert!(
        text.lines().skip(1).all(|l| l.contains(",para domU,")),
        "{text}"
    );
    assert!(!text.contains("icmp"));
    // Label levels as columns: para domU's two labels pool into one column, of two runs.
    let out = run(&["-f", "json", "--cols", "label.1"], &f);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"][0]["cells"][1]["n"], 12);
    assert_eq!(v["rows"][0]["cells"][1]["runs"], 2);
    // Transposed: environments as rows.
    let out = run(&["--transpose", "--no-ci"], &f);
    let text = stdout(&out);
    assert!(
        text.lines().nth(1).unwrap().starts_with("hvm/nas/net "),
        "{text}"
    );
    // CSV and SVG have no transposed form: a usage error that says why.
    for fmt in ["csv", "svg"] {
        let out = run(&["--transpose", "-f", fmt], &f);
        assert_eq!(code(&out), 2, "{fmt}");
        assert!(
            stderr(&out).contains("--transpose with -f"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn statistics_end_to_end() {
    // Two environments, 8 samples each, the second 10% slower and fully separated: the
    // exact two-sided p is 2 / C(16, 8) = 1.554e-4; a third overlaps the first (~); one
    // value against 8 cannot reach p < 0.05 even fully apart (2 / 9): too few (?).
    let mut lines = Vec::new();
    for i in 0..8 {
        let x = 1.0 + i as f64 * 0.001;
        lines.push(sample("base", "job", json!({"wall_s": x}), i));
        lines.push(sample("slow", "job", json!({"wall_s": x * 1.1}), i));
        lines.push(sample("same", "job", json!({"wall_s": x + 0.0005}), i));
        if i < 1 {
            lines.push(sample("few", "job", json!({"wall_s": x * 2.0}), i));
        }
    }
    let input = complete(&lines.join("\n"));
    let out = run(&["-f", "json", "--baseline", "base"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cells = &v["rows"][0]["cells"];
    let p = cells[1]["compare"]["p"].as_f64().unwrap();
    assert!((p - 2.0 / 12870.0).abs() < 1e-12, "{p}");
    assert!((cells[1]["compare"]["delta_pct"].as_f64().unwrap() - 10.0).abs() < 1e-9);
    assert_eq!(cells[2]["compare"]["significant"], false);
    assert_eq!(cells[3]["compare"]["too_few"], true);
    // The median of 1.000..1.007 is 1.0035. The 95% CI of 8 values by order statistics:
    // X(2)..X(7) covers 238/256 = 93%, too little; the two equal neighbours taken together
    // (the symmetric rule) give X(1)..X(8) at 254/256 = 99.2%.
    assert!((cells[0]["value"].as_f64().unwrap() - 1.0035).abs() < 1e-12);
    assert_eq!(cells[0]["ci_low"], 1.0);
    assert_eq!(cells[0]["ci_high"], 1.007);
    let out = run(&["--baseline", "base", "--no-ci"], &input);
    let text = stdout(&out);
    let row = text.lines().nth(1).unwrap();
    assert!(row.contains("1.10 +10%"), "{text}");
    assert!(row.contains("1.00 ~"), "{text}");
    assert!(row.contains("2.00 ?"), "{text}");
    // --stat: min, max, mean, p90.
    for (stat, want) in [("min", 1.0), ("max", 1.007), ("mean", 1.0035)] {
        let out = run(&["-f", "json", "--stat", stat], &input);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let got = v["rows"][0]["cells"][0]["value"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-12, "{stat}: {got}");
    }
    let out = run(&["-f", "json", "--stat", "p90"], &input);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let got = v["rows"][0]["cells"][0]["value"].as_f64().unwrap();
    assert!((got - 1.0063).abs() < 1e-12, "{got}");
}

#[test]
fn baseline_by_tag() {
    let mut lines = Vec::new();
    for host in ["h1", "h2"] {
        for (disk, base) in [("lvm", 10.0), ("file", 20.0)] {
            for i in 0..5 {
                lines.push(line(
                    "sample",
                    host,
                    "write",
                    json!({"wall_s": base + i as f64 * 0.1}),
                    i,
                    json!({"tags": {"disk": disk}}),
                ));
            }
        }
    }
    let input = complete(&lines.join("\n"));
    let out = run(
        &[
            "--cols",
            "label,tag.disk",
            "--baseline",
            "disk=lvm",
            "-f",
            "csv",
        ],
        &input,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("row,label,tag_disk,unit,n,value,ci_low,ci_high,excluded,ratio,p_value,verdict\nwrite,h1,lvm,s,5,10.2,,,0,1,,\nwrite,h1,file,s,5,20.2,,,0,"),
        "{text}"
    );
    // Each file column against its own host's lvm column: 20.2 s against 10.2 s is worse.
    assert_eq!(text.matches(",worse\n").count(), 2, "{text}");
}

#[test]
fn failed_samples_are_reported_not_counted() {
    let input = [
        sample("e", "row", json!({"x_s": 1.0}), 0),
        line(
            "sample",
            "e",
            "row",
            json!({}),
            1,
            json!({"error": "timeout"}),
        ),
    ]
    .join("\n");
    let out = run(&["-f", "json"], &complete(&input));
    assert_eq!(code(&out), 0);
    assert!(stderr(&out).contains("1 failed sample"), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["rows"][0]["cells"][0]["n"], 1);
}

#[test]
fn streams_many_lines_in_bounded_memory() {
    // 40,000 sample lines over 100 cells, then 30,000 interval lines of 2 KiB each
    // (60 MiB): the samples are all counted, and memory does not grow with the interval
    // lines (they are checked and dropped as they pass). GNU time measures the peak RSS.
    let time = std::path::Path::new("/usr/bin/time");
    let mut cmd = if time.exists() {
        let mut c = Command::new(time);
        c.args(["-f", "maxrss_kib=%M", bin()]);
        c
    } else {
        eprintln!("skipped: the memory bound needs GNU time (/usr/bin/time); counting only");
        Command::new(bin())
    };
    let mut child = cmd
        // The runs end without summaries: --include-partial counts them (memory is the point).
        .args(["-f", "json", "--include-partial", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let mut buf = String::new();
        for i in 0..40_000u64 {
            let c = i % 100;
            buf.push_str(&sample(
                &format!("env{}", c % 10),
                &format!("bench {}", c / 10),
                json!({"wall_s": 1.0 + (i % 7) as f64}),
                i,
            ));
            buf.push('\n');
            if buf.len() > 1 << 20 {
                stdin.write_all(buf.as_bytes()).unwrap();
                buf.clear();
            }
        }
        let pad = "x".repeat(2048);
        for i in 0..30_000u64 {
            buf.push_str(&line(
                "interval",
                "env0",
                "bench 0",
                json!({"rate_bytes_per_s": 1.0}),
                i,
                json!({"info": {"pad": pad}}),
            ));
            buf.push('\n');
            if buf.len() > 1 << 20 {
                stdin.write_all(buf.as_bytes()).unwrap();
                buf.clear();
            }
        }
        stdin.write_all(buf.as_bytes()).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10);
    let total: u64 = rows
        .iter()
        .flat_map(|r| r["cells"].as_array().unwrap().iter())
        .map(|c| c["n"].as_u64().unwrap())
        .sum();
    assert_eq!(total, 40_000);
    let err = stderr(&out);
    if let Some(rss) = err.rsplit("maxrss_kib=").next().filter(|_| time.exists()) {
        let rss: u64 = rss.trim().parse().unwrap();
        // 60 MiB of interval lines went through; the reader holds a few 256 KiB blocks. The
        // peak varies by 2 MiB steps from run to run (36-45 MiB measured: the allocator's pages
        // per reader thread), so the bound is one that holding the input would break.
        assert!(rss < 50 * 1024, "peak RSS {rss} KiB");
    }
}

/// A deterministic xorshift generator for the garbage below.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn garbage_never_panics() {
    // Mutations of valid lines (byte flips, cuts, splices, duplications) through the line
    // reader, the aggregation and every renderer: errors are fine, panics are not. The
    // cargo-fuzz target in collate/fuzz does the same without a bound.
    let seeds: Vec<String> = fixture().lines().map(str::to_string).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut kept = Vec::new();
    for _ in 0..20_000 {
        let mut b = seeds[(rng.next() % seeds.len() as u64) as usize]
            .clone()
            .into_bytes();
        for _ in 0..(rng.next() % 4) {
            let at = (rng.next() % (b.len() as u64 + 1)) as usize;
            match rng.next() % 4 {
                0 if at < b.len() => b[at] = (rng.next() & 0xff) as u8,
                1 => b.truncate(at),
                2 => {
                    let other = &seeds[(rng.next() % seeds.len() as u64) as usize];
                    let from = (rng.next() % other.len() as u64) as usize;
                    b.splice(at..at, other.as_bytes()[from..].iter().copied());
                }
                _ => {
                    let tail: Vec<u8> = b[at..].to_vec();
                    b.extend_from_slice(&tail);
                }
            }
        }
        if let Ok(Some(r)) = collate::read::parse_raw(&b) {
            kept.push(r.into_record());
        }
    }
    assert!(!kept.is_empty());
    let spec = collate::collect::Spec {
        rows: vec![collate::dims::Dim::Name, collate::dims::Dim::Metric],
        cols: vec![collate::dims::Dim::Label],
        filter: collate::filter::Filter::All,
        metrics: collate::collect::MetricChoice::All,
    };
    let mut c = collate::collect::Collector::new(spec);
    for r in &kept {
        c.add_record(&r.as_view());
    }
    let o = collate::matrix::Options {
        stat: collate::stats::Stat::Median,
        baseline: None,
        columns: None,
        show_ci: true,
        include_partial: true,
        latest: false,
        verbose: true,
    };
    if let Ok(t) = collate::matrix::build(&c, &o) {
        for f in collate::render::Format::NAMES {
            let f = collate::render::Format::parse(f).unwrap();
            let _ = collate::render::render(&t, f, false);
            let _ = collate::render::render(&t, f, true);
        }
    }
}

#[test]
fn a_median_headline_is_shown_from_the_runs_samples() {
    // timecmd's shape: a sample per run with wall_s, a summary whose headline is wall_median_s.
    let mut input = String::new();
    for (label, base) in [("a", 1.0), ("b", 2.0)] {
        for i in 0..8u32 {
            let x = base + f64::from(i) * 0.01;
            input += &(sample(label, "make", json!({"wall_s": x}), u64::from(i)) + "\n");
        }
        input += &(summary(
            label,
            "make",
            json!({"wall_median_s": base + 0.035}),
            "wall_median_s",
        ) + "\n");
    }
    let out = run(&["--baseline", "a"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("From summaries"), "{text}");
    let row = text.lines().find(|l| l.starts_with("make")).unwrap();
    // Every run counts: a ± spread and a significant delta.
    assert!(row.contains('±'), "{row}");
    assert!(row.contains("+97%"), "{row}");
}

#[test]
fn a_record_read_twice_counts_once_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("r.jsonl");
    let mut lines: Vec<String> = (0..7u64)
        .map(|i| sample("e", "row", json!({"x_s": 1.0 + (i * i) as f64}), i))
        .collect();
    lines.push(sample("e2", "row", json!({"x_s": 3.0}), 0));
    let text = complete(&(lines.join("\n") + "\n"));
    std::fs::write(&f, &text).unwrap();
    let path = f.to_str().unwrap();
    let once = run(&[path, "-f", "json"], "");
    assert_eq!(code(&once), 0, "{}", stderr(&once));
    assert_eq!(stderr(&once), "", "no warning for a file read once");
    let twice = run(&[path, path, "-f", "json"], "");
    assert_eq!(code(&twice), 0, "{}", stderr(&twice));
    assert_eq!(
        stdout(&twice),
        stdout(&once),
        "the same figures, the same CI"
    );
    let err = stderr(&twice);
    assert_eq!(
        err.lines().count(),
        1,
        "one warning per pair of inputs: {err}"
    );
    let want = format!("collate: {path}:1 repeats the record at {path}:1 (run ");
    assert!(err.starts_with(&want), "{err}");
    assert!(
        err.contains(", sample seq 0) and 9 more records of"),
        "{err}"
    );
    // Concatenated on stdin: the places are lines of the one input.
    let piped = run(&["-f", "json"], &(text.clone() + &text));
    assert_eq!(stdout(&piped), stdout(&once));
    let err = stderr(&piped);
    assert!(
        err.starts_with("collate: -:11 repeats the record at -:1 ("),
        "{err}"
    );
    assert!(err.contains("and 9 more records of - again in -"), "{err}");
}

#[test]
fn a_baseline_without_any_finished_run_says_why_there_are_no_columns() {
    // Samples only: the tool was killed before its summary, so no run counts.
    let input = sample("a", "t", json!({"wall_s": 1.0}), 0) + "\n";
    let out = run(&["--baseline", "a"], &input);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("no run in the input finished"), "{err}");
    assert!(err.contains("--include-partial"), "{err}");
}
