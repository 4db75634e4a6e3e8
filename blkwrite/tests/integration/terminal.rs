//! blkwrite on a real terminal (a pty from script(1)): no JSON there, a progress line that is
//! cleared before a summary a person reads; records when stdout is a pipe, with -o or --json.

#![allow(clippy::unwrap_used)]

use crate::common::bin;
use std::path::Path;

/// Runs `line` (constant shell text, blkwrite as `"$BIN"`) on a pty with each of `paths` in
/// its environment: the exit status and what the terminal showed.
fn on_terminal(line: &str, paths: &[(&str, &Path)]) -> Option<(i32, String)> {
    testkit::tool_on_terminal(bin(), line, paths)
}

/// A scratch directory whose path has a space and a quote, which reach the shell as
/// variables, never as code.
fn tmp() -> tempfile::TempDir {
    testkit::odd_tempdir("blkwrite-tty")
}

fn json_lines(shown: &str) -> Vec<serde_json::Value> {
    shown
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn a_terminal_gets_a_summary_to_read_and_no_json() {
    let d = tmp();
    let f = d.path().join("t");
    let Some((code, shown)) = on_terminal(r#""$BIN" -s 3M -b 256k --verify "$F""#, &[("F", &f)])
    else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains('{'), "no JSON on a terminal: {shown}");
    let lines: Vec<&str> = shown.lines().collect();
    assert!(
        lines[0].ends_with("write 3M bs=256k buffered seq fsync-end: ok"),
        "{shown}"
    );
    for (label, word) in [
        ("written", "3145728 bytes (3.15 MB, 3.00 MiB) in"),
        ("write phase", "12 writes"),
        ("flush", "(fsync)"),
        ("latency", "p99.9"),
        ("verified", "0 bad blocks"),
    ] {
        assert!(
            lines
                .iter()
                .any(|l| l.trim_start().starts_with(label) && l.contains(word)),
            "{label} ... {word}: {shown}"
        );
    }
    assert!(!f.exists());
}

#[test]
fn the_progress_line_is_cleared_before_the_summary() {
    let d = tmp();
    let f = d.path().join("p");
    // 4k O_DSYNC writes of 1 GiB take longer than --time 3s allows: a tick each second.
    let line = r#""$BIN" --dsync -b 4k -s 1G -t 3s "$F""#;
    let Some((code, shown)) = on_terminal(line, &[("F", &f)]) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    let progress = shown.find("blkwrite: ").expect("a progress line");
    assert!(
        shown[progress..].contains(" of 1.00 GiB ("),
        "progress says how far: {shown}"
    );
    let summary = shown.find("dsync fsync-end: ok").expect("the summary");
    assert!(progress < summary, "{shown}");
    assert!(
        shown[progress..summary].contains("\r\x1b[K"),
        "the progress line is cleared before the summary: {shown:?}"
    );
    assert!(shown.contains("stopped at the --time limit"), "{shown}");
    assert!(!shown.contains('{'), "{shown}");
}

#[test]
fn piped_or_with_output_or_json_the_records_are_written() {
    let d = tmp();
    let f = d.path().join("j");
    // stdout a pipe: the records, as before. The human summary goes to stderr, the terminal,
    // where it would land among the piped lines at any point: it is sent away here.
    let Some((code, shown)) = on_terminal(r#""$BIN" -s 1M "$F" 2>/dev/null | cat"#, &[("F", &f)])
    else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    let kinds: Vec<String> = json_lines(&shown)
        .iter()
        .map(|r| r["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds, ["begin", "sample", "summary"], "{shown}");
    // --json: the records on the terminal itself, and no human summary among them.
    let (code, shown) = on_terminal(r#""$BIN" --json -s 1M "$F""#, &[("F", &f)]).unwrap();
    assert_eq!(code, 0, "{shown}");
    assert_eq!(json_lines(&shown).len(), 3, "{shown}");
    assert!(!shown.contains("write phase"), "{shown}");
    // -o FILE: the records appended to FILE, the terminal gets the summary.
    let rec = d.path().join("r.jsonl");
    for _ in 0..2 {
        let line = r#""$BIN" -o "$REC" -s 1M "$F""#;
        let (code, shown) = on_terminal(line, &[("F", &f), ("REC", &rec)]).unwrap();
        assert_eq!(code, 0, "{shown}");
        assert!(!shown.contains('{'), "{shown}");
        assert!(shown.contains("write phase"), "{shown}");
    }
    let text = std::fs::read_to_string(&rec).unwrap();
    for l in text.lines() {
        measure::parse_line(l).unwrap();
    }
    assert_eq!(text.lines().count(), 6, "appended: {text}");
}

#[test]
fn quiet_on_a_terminal_prints_nothing_but_errors() {
    let d = tmp();
    let f = d.path().join("q");
    let line = r#""$BIN" -q -s 1M "$F""#;
    let Some((code, shown)) = on_terminal(line, &[("F", &f)]) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert_eq!(shown.trim(), "", "{shown:?}");
    std::fs::write(&f, b"precious").unwrap();
    let (code, shown) = on_terminal(line, &[("F", &f)]).unwrap();
    assert_eq!(code, 2);
    assert!(
        shown.contains("blkwrite: ") && shown.contains("--force"),
        "{shown}"
    );
    assert!(!shown.contains('{'), "{shown}");
    assert_eq!(std::fs::read(&f).unwrap(), b"precious");
}
