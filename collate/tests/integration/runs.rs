//! Runs: a run that did not finish (summary not ok, or none) stays out of every cell, said in
//! every format, without moving a row; `--include-partial` puts it in, marked. A cell that
//! pools runs says how many, a Kruskal-Wallis test marks runs that disagree, and `--latest`
//! keeps each cell's newest run.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::{Value, json};

/// A record of run `run` at second `sec`.
fn rec(
    kind: &str,
    label: &str,
    name: &str,
    run: &str,
    seq: u64,
    values: Value,
    extra: Value,
) -> String {
    let mut e = json!({"run": run, "at": format!("2026-11-30T13:00:{:02}.000000Z", seq % 60)});
    if let (Some(m), Value::Object(x)) = (e.as_object_mut(), extra) {
        m.extend(x);
    }
    line(kind, label, name, values, seq, e)
}

/// `n` samples of `metric` from `base` up in steps of 0.001, then the summary `status`.
fn run_lines(
    label: &str,
    name: &str,
    run: &str,
    base: f64,
    n: u64,
    status: Option<&str>,
) -> Vec<String> {
    let mut out: Vec<String> = (0..n)
        .map(|i| {
            let v = json!({"wall_s": base + i as f64 * 0.001});
            rec("sample", label, name, run, i, v, json!({}))
        })
        .collect();
    match status {
        Some("ok") => out.push(rec(
            "summary",
            label,
            name,
            run,
            n,
            json!({"wall_median_s": base}),
            json!({"status": "ok", "headline": "wall_median_s"}),
        )),
        Some(s) => out.push(rec(
            "summary",
            label,
            name,
            run,
            n,
            json!({}),
            json!({"status": s, "error": "connection reset by peer after 131072 bytes"}),
        )),
        None => {}
    }
    out
}

/// An old killed attempt of `tar` first, then `make` and `tar` that finished, and a run of
/// `make` in column a that ended partial.
fn partial_input() -> String {
    let mut l = run_lines("a", "tar", "0000000killed", 9.0, 4, None);
    l.extend(run_lines("a", "make", "00000000make1", 1.0, 6, Some("ok")));
    l.extend(run_lines("a", "tar", "000000000tar1", 2.0, 6, Some("ok")));
    l.extend(run_lines(
        "a",
        "make",
        "00000partial1",
        5.0,
        6,
        Some("partial"),
    ));
    l.extend(run_lines(
        "b",
        "make",
        "00000failed1",
        7.0,
        3,
        Some("failed"),
    ));
    l.join("\n") + "\n"
}

#[test]
fn runs_that_did_not_finish_stay_out_and_are_said() {
    let input = partial_input();
    let out = run(&["-f", "json"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    // The old killed attempt of tar came first; make's first value that counts comes first.
    let titles: Vec<&str> = rows
        .iter()
        .map(|r| r["dims"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["make", "tar"]);
    // Column b held only a failed run: no column for it.
    assert_eq!(v["columns"].as_array().unwrap().len(), 1);
    let make = &rows[0]["cells"][0];
    assert_eq!(make["n"], 6);
    assert!((make["value"].as_f64().unwrap() - 1.0025).abs() < 1e-12);
    assert_eq!(rows[0]["excluded"][0], 6);
    assert_eq!(rows[1]["excluded"][0], 4);
    // Text shows the detail with --verbose; the documents always (HTML folded in <details>).
    for f in ["text", "markdown", "dokuwiki", "html", "json", "svg"] {
        let out = stdout(&run(&["-f", f, "--verbose"], &input));
        for want in [
            "Left out: 13 values of 3 runs that did not finish",
            "0000000killed (4 values): no summary",
            "00000partial1 (6 values): status partial: connection reset by peer after 131072 bytes",
            "00000failed1 (3 values): status failed",
            "include-partial",
        ] {
            // Markdown escapes its punctuation, SVG wraps a note into lines: the words stay.
            let got = if f == "svg" {
                let words: Vec<&str> = out
                    .split('<')
                    .filter_map(|p| p.split_once('>').map(|x| x.1))
                    .collect();
                words
                    .join(" ")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                out.replace('\\', "")
            };
            assert!(got.contains(want), "{f}: {want}\n{out}");
        }
    }
    let text = stdout(&run(&[], &input));
    assert!(
        text.contains("Left out: 13 values of 3 runs that did not finish; --include-partial puts them in, marked *. (--verbose: which runs)\n"),
        "{text}"
    );
    assert!(
        !text.contains("0000000killed"),
        "no run list without --verbose: {text}"
    );
    let html = stdout(&run(&["-f", "html"], &input));
    assert!(
        html.contains("<details class=\"note\"><summary>Left out: 13 values"),
        "{html}"
    );
    // CSV: the excluded column, and a line for a cell that only left values out.
    let csv = stdout(&run(&["-f", "csv"], &input));
    assert!(csv.contains("\nmake,a,s,6,1.0025,1,1.005,6\n"), "{csv}");
    assert!(csv.contains("\ntar,a,s,6,2.0025,2,2.005,4\n"), "{csv}");
    // Column b, whose one run failed, is in no matrix, but the tidy CSV has its cell: n 0, no
    // value, its 3 values left out.
    assert!(csv.contains("\nmake,b,s,0,,,,3\n"), "{csv}");
    assert_eq!(
        csv.lines().filter(|l| l.contains(",b,")).count(),
        1,
        "{csv}"
    );
}

#[test]
fn include_partial_puts_them_in_marked() {
    let input = partial_input();
    let out = run(&["-f", "json", "--include-partial"], &input);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    // Now the killed tar attempt is first again, and column b is back.
    assert_eq!(rows[0]["dims"]["name"], "tar");
    assert_eq!(v["columns"].as_array().unwrap().len(), 2);
    let make = rows.iter().find(|r| r["dims"]["name"] == "make").unwrap();
    assert_eq!(make["cells"][0]["n"], 12);
    assert_eq!(make["cells"][0]["partial"], 6);
    let text = stdout(&run(&["--include-partial", "--no-ci"], &input));
    assert!(text.contains(" *"), "{text}");
    assert!(
        text.contains("* marks a cell with values of runs that did not finish"),
        "{text}"
    );
    assert!(!text.contains("Left out"), "{text}");
}

/// Column a pools a run near 1.0 and a later one near 0.5; column b two runs of one
/// distribution.
fn pooled_input() -> String {
    let mut l = run_lines("a", "job", "0000000early", 1.0, 8, Some("ok"));
    let mut late = run_lines("a", "job", "00000000late", 0.5, 8, Some("ok"));
    for r in &mut late {
        *r = r.replace("2026-11-30T13:00:", "2026-11-30T14:00:");
    }
    l.extend(late);
    l.extend(run_lines("b", "job", "0000000same1", 1.0, 8, Some("ok")));
    l.extend(run_lines("b", "job", "0000000same2", 1.0005, 8, Some("ok")));
    l.join("\n") + "\n"
}

#[test]
fn a_cell_of_several_runs_says_so_and_marks_runs_that_differ() {
    let input = pooled_input();
    let text = stdout(&run(&["--no-ci", "--verbose"], &input));
    let row = text.lines().find(|l| l.starts_with("job")).unwrap();
    assert!(row.contains("×2!"), "{row}");
    assert_eq!(row.matches("×2").count(), 2, "{row}");
    assert_eq!(row.matches('!').count(), 1, "{row}");
    assert!(text.contains("×N: the cell pools N runs ("), "{text}");
    assert!(
        text.contains("run 0000000early (8 values, median 1003 ms)"),
        "{text}"
    );
    assert!(
        text.contains("run 00000000late (8 values, median 504 ms)"),
        "{text}"
    );
    assert!(!text.contains("0000000same1 ("), "{text}");
    let v: Value = serde_json::from_slice(&run(&["-f", "json"], &input).stdout).unwrap();
    let a = &v["rows"][0]["cells"][0];
    assert_eq!(a["runs"], 2);
    // 8 against 8 fully apart: H = 11.29..., p = 7.8e-4 (chi-square, 1 degree of freedom).
    let p = a["runs_differ"]["p"].as_f64().unwrap();
    assert!((p - 0.000_777_2).abs() < 1e-6, "{p}");
    assert!(v["rows"][0]["cells"][1]["runs_differ"].is_null());
    for f in ["markdown", "dokuwiki", "html"] {
        let out = stdout(&run(&["-f", f], &input)).replace('\\', "");
        assert!(
            out.contains("×2!") && out.contains("0000000early"),
            "{f}: {out}"
        );
    }
}

#[test]
fn latest_keeps_each_cells_newest_run() {
    let input = pooled_input();
    let v: Value =
        serde_json::from_slice(&run(&["-f", "json", "--latest"], &input).stdout).unwrap();
    let a = &v["rows"][0]["cells"][0];
    assert_eq!((a["runs"].as_u64(), a["n"].as_u64()), (Some(1), Some(8)));
    assert!((a["value"].as_f64().unwrap() - 0.5035).abs() < 1e-12, "{a}");
    // In b both runs share their times: the later in the input is the newer.
    let b = &v["rows"][0]["cells"][1];
    assert!((b["value"].as_f64().unwrap() - 1.004).abs() < 1e-12, "{b}");
    let text = stdout(&run(&["--latest"], &input));
    assert!(!text.contains('×'), "{text}");
}

#[test]
fn a_matrix_of_runs_that_did_not_finish_says_what_to_do() {
    let input = run_lines("a", "tar", "0000000killed", 9.0, 4, None).join("\n");
    let out = run(&[], &input);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("every value is from a run that did not finish (1 run with a summary not ok, or none); --include-partial counts them"),
        "{}",
        stderr(&out)
    );
    assert!(run(&["--include-partial"], &input).status.success());
}

/// Three suite invocations, each of which ran the tool `tools` times (as `./benchmatrix
/// --runs 6` runs blkread six times), with `invocation` in every record.
fn invocations_input(tools: usize) -> String {
    let mut l = Vec::new();
    for (i, inv) in ["inv-one", "inv-two", "inv-three"].iter().enumerate() {
        for t in 0..tools {
            let run = format!("{:0>10}{i}{t}", "r");
            l.extend(in_invocation(
                run_lines("a", "job", &run, 1.0, 2, Some("ok")),
                inv,
                "13",
            ));
        }
    }
    l.join("\n") + "\n"
}

#[test]
fn runs_pool_and_are_tested_by_suite_invocation() {
    // Eighteen tool runs of two values each, from three invocations: ×3, not ×18, and the
    // test between runs compares the invocations (six values each), which agree.
    let text = stdout(&run(&["--no-ci"], &invocations_input(6)));
    let row = text.lines().find(|l| l.starts_with("job")).unwrap();
    assert!(row.contains("×3") && !row.contains('!'), "{text}");
    let v: Value =
        serde_json::from_slice(&run(&["-f", "json"], &invocations_input(6)).stdout).unwrap();
    assert_eq!(v["rows"][0]["cells"][0]["runs"], 3, "{v}");
    assert_eq!(v["rows"][0]["cells"][0]["n"], 36, "{v}");
    // Without the field every tool run is its own.
    let bare: String = invocations_input(6)
        .lines()
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            v.as_object_mut().unwrap().remove("invocation");
            v.to_string() + "\n"
        })
        .collect();
    let v: Value = serde_json::from_slice(&run(&["-f", "json"], &bare).stdout).unwrap();
    assert_eq!(v["rows"][0]["cells"][0]["runs"], 18, "{v}");
}

/// `lines` with `invocation` set to `inv` and their time moved to hour `hour`.
fn in_invocation(lines: Vec<String>, inv: &str, hour: &str) -> Vec<String> {
    lines
        .into_iter()
        .map(|l| {
            let mut v: Value =
                serde_json::from_str(&l.replace("2026-11-30T13:", &format!("2026-11-30T{hour}:")))
                    .unwrap();
            v["invocation"] = Value::from(inv);
            v.to_string()
        })
        .collect()
}

#[test]
fn a_row_the_newest_run_lacks_is_named_with_why() {
    // The first invocation measured tar and net; the second measured tar, and its net step
    // failed (its summary says why), and it did not run make at all.
    let runs = [
        ("tar", "0000000tar01", 1.0, 6, "ok", "first", "13"),
        ("net", "0000000net01", 2.0, 6, "ok", "first", "13"),
        ("make", "000000make01", 3.0, 6, "ok", "first", "13"),
        ("tar", "0000000tar02", 1.0, 6, "ok", "second", "14"),
        ("net", "0000000net02", 2.0, 0, "failed", "second", "14"),
    ];
    let l: Vec<String> = runs
        .iter()
        .flat_map(|&(name, run, base, n, status, inv, hour)| {
            in_invocation(run_lines("a", name, run, base, n, Some(status)), inv, hour)
        })
        .collect();
    let input = l.join("\n") + "\n";
    let text = stdout(&run(&["--no-ci", "--verbose"], &input));
    assert!(
        text.contains("in a, the newest run second has no net (s) ↓ (status failed: connection reset by peer after 131072 bytes)."),
        "{text}"
    );
    // tar has the newest run, and the newest run did not measure make: neither is named.
    assert!(
        !text.contains("no tar") && !text.contains("make (s) ↓ ("),
        "{text}"
    );
}
