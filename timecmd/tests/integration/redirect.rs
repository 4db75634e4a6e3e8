//! Where things go: the command's stdin and stdout (--input, --stdout, --shell) and the records (-o, stderr).
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use crate::common::*;
use measure::record::{Record, Status, parse_line};
use std::path::PathBuf;
use std::process::Command;

#[test]
fn stdout_inherit_null_or_a_file() {
    let d = scratch();
    // Inherited: the command's stdout is timecmd's stdout, the records are elsewhere.
    let (o, _) = timecmd(d.path(), &["--", "echo", "hello"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello\n");

    let (o, _) = timecmd(d.path(), &["--stdout", "null", "--", "echo", "hello"]);
    assert!(o.stdout.is_empty());

    // A file holds the last run's output.
    let f = d.path().join("out.txt");
    std::fs::write(&f, "old content that must go\n").unwrap();
    let (o, recs) = timecmd(
        d.path(),
        &[
            "-r",
            "3",
            "--stdout",
            f.to_str().unwrap(),
            "--shell",
            "echo run",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "run\n");
    assert_eq!(summary(&recs).name, "echo run");
}

#[test]
fn stdout_pipe_is_drained() {
    let d = scratch();
    // A pipe that timecmd drains: a command that writes 64 MiB finishes.
    let (o, recs) = timecmd(
        d.path(),
        &[
            "--stdout",
            "pipe",
            "--",
            "dd",
            "if=/dev/zero",
            "bs=1M",
            "count=64",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(summary(&recs).status, Some(Status::Ok));
}

#[test]
fn input_redirection() {
    let d = scratch();
    let f = d.path().join("out.txt");
    // --input: every run reads the file from its start.
    let input = d.path().join("in.txt");
    std::fs::write(&input, "abc\n").unwrap();
    let (o, _) = timecmd(
        d.path(),
        &[
            "-r",
            "3",
            "--input",
            input.to_str().unwrap(),
            "--stdout",
            f.to_str().unwrap(),
            "--",
            "cat",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "abc\n");
    let (o, _) = timecmd(d.path(), &["--input", "null", "--shell", "cat; echo end"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "end\n");
    let (o, recs) = timecmd(d.path(), &["--input", "/no/such/input", "--", "cat"]);
    assert_eq!(code(&o), 125);
    assert!(
        stderr(&o).contains("--input /no/such/input"),
        "{}",
        stderr(&o)
    );
    assert_eq!(summary(&recs).status, Some(Status::Failed));
}

#[test]
fn records_on_stdout_with_o_dash_else_on_stderr() {
    // Records on stdout with -o -, the command's output elsewhere.
    let out = Command::new(bin())
        .args(["-o", "-", "--stdout", "null", "--", "echo", "hello"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    assert_eq!(recs.len(), 3);
    // Without -o, records go to stderr.
    let out = Command::new(bin())
        .args(["--stdout", "null", "--", "true"])
        .output()
        .unwrap();
    assert!(out.stdout.is_empty());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        err.lines().filter(|l| parse_line(l).is_ok()).count(),
        3,
        "{err}"
    );
}

#[test]
fn shell_mode() {
    let d = scratch();
    let (o, recs) = timecmd(d.path(), &["--shell", "echo a | tr a b; exit 5"]);
    assert_eq!(code(&o), 5);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "b\n");
    assert_eq!(recs[0].info["command"][0], "sh");
    let (o, _) = timecmd(d.path(), &["--shell=sh", "echo", "two", "words"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "two words\n");
}

#[test]
fn appends_records_to_an_existing_file() {
    let d = scratch();
    let rec: PathBuf = d.path().join("keep.jsonl");
    std::fs::write(&rec, "").unwrap();
    for _ in 0..2 {
        let st = Command::new(bin())
            .arg("-o")
            .arg(&rec)
            .args(["--", "true"])
            .status()
            .unwrap();
        assert!(st.success());
    }
    let recs = read_records(&rec);
    assert_eq!(recs.len(), 6);
    assert_ne!(recs[0].run, recs[3].run);
}

#[test]
fn output_and_records_append_and_never_truncate() {
    let d = scratch();
    let rec = d.path().join("results.jsonl");
    let kept = "{\"a line\":\"measured before\"}\n";
    std::fs::write(&rec, kept).unwrap();
    for flag in ["--output", "--records", "-o"] {
        let st = Command::new(bin())
            .arg(flag)
            .arg(&rec)
            .args(["--stdout", "null", "--", "true"])
            .status()
            .unwrap();
        assert!(st.success(), "{flag}");
    }
    let text = std::fs::read_to_string(&rec).unwrap();
    assert!(text.starts_with(kept), "the old line is kept: {text}");
    assert_eq!(text.lines().count(), 1 + 3 * 3);
    // The old spellings of runs and warm-up are gone; --help names the new ones only.
    for old in [["-n", "2"], ["-w", "1"]] {
        let o = Command::new(bin())
            .args(old)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(code(&o), 125, "{old:?} is a usage error");
    }
    let help = Command::new(bin()).arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(
        help.contains("-r, --runs") && help.contains("--stdout <WHERE>"),
        "{help}"
    );
    // --records is -o's other name, said where GNU time's form gives -o to its report.
    assert!(
        help.contains("-o, --output <FILE>") && help.contains("--records FILE"),
        "{help}"
    );
}
