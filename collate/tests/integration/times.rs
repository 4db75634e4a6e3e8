//! `collate --times`: each measurement's time in each suite run, from its records' own times
//! (begin to summary), its tool runs and samples, and its share of the run.

use crate::common::{line, run, stderr, stdout};
use serde_json::json;

/// A tool run of `name` in suite run `inv` of `label`: a begin at `from` seconds past 13:00,
/// `samples` samples and a summary at `to`.
fn tool_run(
    label: &str,
    inv: &str,
    name: &str,
    id: &str,
    from: f64,
    to: f64,
    samples: u64,
) -> String {
    let at = |s: f64| format!("2026-11-30T13:{:02}:{:09.6}Z", (s / 60.0) as u32, s % 60.0);
    let extra = |kind: &str, t: f64| {
        let mut e = json!({"run": id, "invocation": inv, "at": at(t)});
        if kind == "summary" {
            e["status"] = json!("ok");
            e["headline"] = json!("wall_s");
        }
        e
    };
    let mut out = vec![line(
        "begin",
        label,
        name,
        json!({}),
        0,
        extra("begin", from),
    )];
    for i in 0..samples {
        let t = from + (to - from) * (i + 1) as f64 / (samples + 1) as f64;
        out.push(line(
            "sample",
            label,
            name,
            json!({"wall_s": 1.0}),
            i,
            extra("sample", t),
        ));
    }
    out.push(line(
        "summary",
        label,
        name,
        json!({"wall_s": 1.0}),
        0,
        extra("summary", to),
    ));
    out.join("\n") + "\n"
}

/// Two suite runs of label `m`: the older (A) a listener serving 3 transfers and 2 disk
/// runs; the newer (B) one disk run; and a run of label `n` by hand in between.
fn input() -> String {
    [
        tool_run("m", "A", "net", "r1", 0.0, 3.0, 3),
        tool_run("m", "A", "disk", "r2", 4.0, 5.0, 1),
        tool_run("m", "A", "disk", "r3", 5.0, 6.0, 1),
        tool_run("n", "hand", "disk", "r4", 100.0, 102.5, 1),
        tool_run("m", "B", "disk", "r5", 200.0, 201.5, 1),
    ]
    .concat()
}

#[test]
fn csv_gives_each_measurements_seconds_runs_and_share_per_suite_run() {
    let out = run(&["--times", "-f", "csv"], &input());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "label,run,start,name,tool_runs,samples,seconds,share,\
         run_seconds,between_seconds,between_share,overlap_seconds"
    );
    // Suite run A: 6 s, of which net 3 s and disk 2 s; the second between them, 1/6, is
    // between the tools.
    assert_eq!(
        lines[1..],
        [
            "m,A,2026-11-30T13:00:00.000000Z,net,1,3,3,0.5,6,1,0.16666666666666666,0",
            "m,A,2026-11-30T13:00:04.000000Z,disk,2,2,2,0.3333333333333333,6,1,0.16666666666666666,0",
            "n,hand,2026-11-30T13:01:40.000000Z,disk,1,1,2.5,1,2.5,0,0,0",
            "m,B,2026-11-30T13:03:20.000000Z,disk,1,1,1.5,1,1.5,0,0,0",
        ],
        "{text}"
    );
}

#[test]
fn latest_keeps_each_labels_newest_run_and_text_is_for_a_person() {
    let out = run(&["--times", "--latest"], &input());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(
        text,
        "n hand (2026-11-30T13:01:40Z): 2.5 s from its first record to its last\n\
         \x20    2.5 s  100%  disk  (1 tool run, 1 sample)\n\
         \x20 between the tools 0.0 s (0%)\n\
         \n\
         m B (2026-11-30T13:03:20Z): 1.5 s from its first record to its last\n\
         \x20    1.5 s  100%  disk  (1 tool run, 1 sample)\n\
         \x20 between the tools 0.0 s (0%)\n"
    );
}

/// A guest's suite run whose spans overlap: a listener's 10 s around its peer's 4 s send,
/// a disk run starting before the listener's summary, then a CPU run after a gap. The
/// shares add up to 19/16, so one minus their sum would be negative (-19%).
fn overlapping() -> String {
    [
        tool_run("guest", "G", "net listen", "g1", 0.0, 10.0, 1),
        tool_run("guest", "G", "net send", "g2", 2.0, 6.0, 1),
        tool_run("guest", "G", "disk", "g3", 8.0, 12.0, 1),
        tool_run("guest", "G", "cpu", "g4", 15.0, 16.0, 1),
    ]
    .concat()
}

#[test]
fn overlapping_spans_leave_a_share_between_the_tools_that_is_never_negative_and_are_named() {
    // 16 s in all; the spans' union is 0 to 12 and 15 to 16 (13 s), so 3 s are between the
    // tools; 2 to 6 and 8 to 10 are covered twice (6 s).
    let out = run(&["--times", "-f", "csv"], &overlapping());
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 4, "{text}");
    for l in &lines {
        assert!(l.ends_with(",16,3,0.1875,6"), "{l}: {text}");
    }
    let shares: f64 = lines
        .iter()
        .map(|l| l.split(',').nth(7).and_then(|f| f.parse::<f64>().ok()))
        .sum::<Option<f64>>()
        .expect("the shares");
    assert!(shares > 1.0, "the spans overlap: {shares}");

    let out = run(&["--times"], &overlapping());
    let text = stdout(&out);
    assert!(
        text.contains("\n  between the tools 3.0 s (19%)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "\n  overlapping spans 6.0 s (covered by more than one measurement's span: runs that alternate or ran at once)\n"
        ),
        "{text}"
    );
    assert!(!text.contains("(-"), "no negative share: {text}");
}

#[test]
fn spans_that_only_touch_do_not_overlap() {
    let touching = [
        tool_run("m", "T", "a", "t1", 0.0, 2.0, 1),
        tool_run("m", "T", "b", "t2", 2.0, 5.0, 1),
    ]
    .concat();
    let out = run(&["--times"], &touching);
    let text = stdout(&out);
    assert!(text.contains("  between the tools 0.0 s (0%)\n"), "{text}");
    assert!(!text.contains("overlapping"), "{text}");
}

#[test]
fn times_refuses_a_format_it_has_not_and_input_without_records() {
    let out = run(&["--times", "-f", "html"], &input());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--times prints text or csv"),
        "{}",
        stderr(&out)
    );
    let out = run(&["--times"], "\n");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("no records"), "{}", stderr(&out));
}
