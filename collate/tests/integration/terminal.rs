//! collate on a real terminal (a pty from script(1)): the same matrix a pipe gets, no JSON
//! unless asked for, the hint when it reads JSON lines from the terminal itself, and Ctrl-C
//! ending it at once.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::*;
use std::ffi::OsStr;
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Runs collate with `args` (constant shell text after the binary, `"$FILE"` being `file`) on
/// a pty: the exit status and what the terminal showed.
fn on_terminal(args: &str, file: &str) -> Option<(i32, String)> {
    let env = [("BIN", OsStr::new(bin())), ("FILE", OsStr::new(file))];
    testkit::on_terminal(&format!(r#""$BIN" {args}"#), &env)
}

/// The fixture as a file of records, in a directory whose path has a space and a quote (they
/// reach the shell as a variable, never as code).
fn fixture_file() -> (tempfile::TempDir, String) {
    let d = testkit::odd_tempdir("collate-tty");
    let f = d.path().join("records.jsonl");
    std::fs::write(&f, fixture()).unwrap();
    let path = f.to_str().unwrap().to_string();
    (d, path)
}

#[test]
fn a_terminal_gets_the_matrix_a_pipe_gets() {
    let (_d, file) = fixture_file();
    let Some((code, shown)) = on_terminal(r#""$FILE""#, &file) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(!shown.contains('{'), "no JSON on a terminal: {shown}");
    let piped = run(&[&file], "");
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(shown, stdout(&piped), "the terminal shows what a pipe gets");
    assert!(
        shown.contains("network throughput domU->dom0 (Mb/s)"),
        "{shown}"
    );
}

#[test]
fn json_when_asked_for_on_a_terminal_and_piped() {
    let (_d, file) = fixture_file();
    let piped = run(&["-f", "json", &file], "");
    assert!(piped.status.success(), "{}", stderr(&piped));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&piped)).unwrap();
    assert!(doc["rows"].as_array().is_some_and(|r| !r.is_empty()));
    let Some((code, shown)) = on_terminal(r#"-f json "$FILE""#, &file) else {
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert_eq!(shown, stdout(&piped));
}

#[test]
fn reading_from_the_terminal_says_so() {
    // script's stdin is /dev/null: the pty sees an end of input right away.
    let Some((code, shown)) = on_terminal("", "") else {
        return;
    };
    assert!(
        shown.starts_with(
            "collate: reading JSON lines from the terminal (give FILEs or a pipe; Ctrl-D ends)\n"
        ),
        "{shown}"
    );
    assert!(shown.contains("collate: no records: 0 lines"), "{shown}");
    assert_eq!(code, 1, "{shown}");
}

#[test]
fn a_pipe_gets_no_hint() {
    let out = run(&[], "");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        !stderr(&out).contains("from the terminal"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ctrl_c_ends_collate_while_it_waits_for_input() {
    // stdin is a pipe that stays open, so collate waits for lines until the signal.
    let mut child = Command::new(bin())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn collate");
    std::thread::sleep(Duration::from_millis(200));
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill -INT");
    assert!(kill.success());
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break Some(st);
        }
        if Instant::now() > end {
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("collate still runs 20 s after SIGINT");
    };
    assert_eq!(status.signal(), Some(2), "ended by SIGINT: {status:?}");
}
