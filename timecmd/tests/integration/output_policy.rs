//! Where the records and the human summary go, on a real terminal (script(1) gives timecmd a
//! pseudo-terminal) and piped: the command's output is on stdout, so records go to a piped
//! stderr or to -o FILE, and a person at a terminal gets a summary to read instead of JSON.
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use crate::common::*;
use measure::record::{Kind, Status, parse_line};

/// The lines of terminal output that are records.
fn json_lines(out: &str) -> usize {
    out.lines()
        .filter(|l| parse_line(l.trim_end_matches('\r')).is_ok() || l.contains("\"schema\""))
        .count()
}

#[test]
fn on_a_terminal_a_summary_to_read_and_no_json() {
    let cmd = r#""$BIN" -r 3 -- echo from-the-command"#;
    let Some((code, out)) = on_a_terminal(cmd, &[], b"", || true) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert_eq!(json_lines(&out), 0, "no records on a terminal: {out}");
    let lines = out.lines().map(|l| l.trim_end_matches('\r'));
    assert_eq!(
        lines.filter(|l| *l == "from-the-command").count(),
        3,
        "{out}"
    );
    assert!(out.contains("timecmd: echo from-the-command"), "{out}");
    assert!(out.contains("Time (mean ± σ)"), "{out}");
    assert!(out.contains("3 runs") && out.contains("Max RSS"), "{out}");
}

#[test]
fn on_a_terminal_with_o_the_file_gets_the_records() {
    let d = scratch();
    let rec = d.path().join("r.jsonl");
    let cmd = r#""$BIN" -o "$REC" -- true"#;
    let Some((code, out)) = on_a_terminal(cmd, &[("REC", rec.as_os_str())], b"", || true) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert_eq!(json_lines(&out), 0, "{out}");
    assert!(out.contains("Time:") && out.contains("Max RSS"), "{out}");
    let recs = read_records(&rec);
    let kinds: Vec<Kind> = recs.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Begin, Kind::Sample, Kind::Summary]);
    assert_eq!(summary(&recs).status, Some(Status::Ok));
}

#[test]
fn on_a_terminal_quiet_says_nothing_but_errors() {
    let Some((code, out)) = on_a_terminal(r#""$BIN" -q -- true"#, &[], b"", || true) else {
        return;
    };
    assert_eq!(code, 0);
    assert!(out.trim().is_empty(), "-q prints nothing: {out}");
    let cmd = r#""$BIN" -q -- no-such-command-timecmd-test"#;
    let Some((code, out)) = on_a_terminal(cmd, &[], b"", || true) else {
        return;
    };
    assert_eq!(code, 127);
    assert!(out.contains("command not found"), "{out}");
    assert_eq!(json_lines(&out), 0, "{out}");
}

#[test]
fn a_failed_run_on_a_terminal_says_why_once() {
    let Some((code, out)) = on_a_terminal(r#""$BIN" -- sh -c 'exit 3'"#, &[], b"", || true) else {
        return;
    };
    assert_eq!(code, 3);
    assert_eq!(out.matches("exited with status 3").count(), 1, "{out}");
    assert_eq!(json_lines(&out), 0, "{out}");
}

#[test]
fn stderr_piped_from_a_terminal_gets_the_records() {
    let d = scratch();
    let err = d.path().join("stderr");
    // stdout (the command's) stays on the terminal; stderr is a file.
    let cmd = r#""$BIN" -- echo on-the-terminal 2>"$ERR""#;
    let Some((code, out)) = on_a_terminal(cmd, &[("ERR", err.as_os_str())], b"", || true) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("on-the-terminal"), "{out}");
    assert_eq!(json_lines(&out), 0, "{out}");
    let recs = read_records(&err);
    let kinds: Vec<Kind> = recs.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [Kind::Begin, Kind::Sample, Kind::Summary]);
    assert!(!std::fs::read_to_string(&err).unwrap().contains("Max RSS"));
}
