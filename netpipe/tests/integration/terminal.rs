//! What a person sees: both modes on a real terminal (a pty from `script -qec`) get lines to
//! read and a summary, and no JSON; piped, the records come as JSON lines.
#![allow(clippy::unwrap_used)]

use crate::common::*;
use std::path::Path;
use std::process::{Command, Stdio};

/// Runs `line` (shell text, netpipe as `"$BIN"`) on a pty with each of `paths` in its
/// environment: its exit status and what the terminal showed.
fn on_terminal(line: &str, paths: &[(&str, &Path)]) -> Option<(i32, String)> {
    testkit::tool_on_terminal(bin(), line, paths)
}

/// A scratch directory whose path has a space and a quote, which reach the shell as
/// variables, never as code.
fn tmp() -> tempfile::TempDir {
    testkit::odd_tempdir("netpipe-tty")
}

fn no_json(text: &str) {
    assert!(!text.contains("\"schema\""), "JSON on the terminal: {text}");
}

#[test]
fn send_on_a_terminal_prints_intervals_and_a_summary() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &["--keep-open"]);
    let send = format!(r#""$BIN" send --connect 127.0.0.1:{port} --bytes 20M"#);
    let Some((code, text)) = on_terminal(&format!("{send} -i 0.05"), &[]) else {
        return;
    };
    assert_eq!(code, 0, "{text}");
    no_json(&text);
    assert!(text.contains("tcp send to 127.0.0.1: ok"), "{text}");
    assert!(text.contains("sent 20.0 MiB"), "{text}");
    assert!(text.contains("[0] ") && text.contains(" retr "), "{text}");
    // Piped stdout: the records, while the terminal on stderr still gets the summary.
    let (_, piped) = on_terminal(&format!("{send} | cat"), &[]).unwrap();
    let recs_piped = records(&piped);
    assert_eq!(summary(&recs_piped)["status"], "ok");
    assert!(piped.contains("sent 20.0 MiB"), "{piped}");
    // --json: records on the terminal, and no human lines.
    let (_, json) = on_terminal(&format!("{send} --json"), &[]).unwrap();
    assert_eq!(
        num(summary(&records(&json)), "sent_bytes"),
        20.0 * 1048576.0
    );
    assert!(!json.contains("sent 20.0 MiB"), "{json}");
    // -q: nothing at all.
    let (_, quiet) = on_terminal(&format!("{send} -q"), &[]).unwrap();
    assert!(quiet.trim().is_empty(), "{quiet}");
    l.signal(libc::SIGINT);
    assert_eq!(l.wait_output(LIMIT).0.code(), Some(130));
}

#[test]
fn a_terminal_gets_a_progress_line_without_intervals() {
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let (l, port) = listener("recv", &recs, &[]);
    let line = format!(r#""$BIN" send --connect 127.0.0.1:{port} --time 1.5"#);
    let Some((code, text)) = on_terminal(&line, &[]) else {
        return;
    };
    assert_eq!(code, 0, "{text}");
    no_json(&text);
    // Written over itself with \r, and cleared before the summary.
    assert!(text.contains("over 1 stream(s)\x1b[K"), "{text:?}");
    assert!(text.contains("\r\x1b[Ktcp send to"), "{text:?}");
    assert!(l.wait_output(LIMIT).0.success());
}

#[test]
fn recv_listening_on_a_terminal_with_records_to_a_file() {
    if !need_tool("script") {
        return;
    }
    let d = tmp();
    let recs = path(&d, "l.jsonl");
    let term = path(&d, "term");
    // The listener's terminal is script's; what it shows lands in `term`.
    let mut l = Spawned::start(
        Command::new("script")
            .args([
                "-qec",
                r#""$BIN" recv --listen 127.0.0.1:0 -o "$REC""#,
                "/dev/null",
            ])
            .env("BIN", bin())
            .env("REC", &recs)
            .stdin(Stdio::null())
            .stdout(file(&term)),
    );
    let port = listen_port(&recs);
    let (st, out, err) = run(
        np().args([
            "send",
            "--connect",
            &format!("127.0.0.1:{port}"),
            "--bytes",
            "3M",
        ]),
        LIMIT,
    );
    assert!(st.success(), "{err}");
    assert_eq!(summary(&records(&out))["status"], "ok");
    assert!(l.wait(LIMIT).success());
    let text = std::fs::read_to_string(&term).unwrap();
    no_json(&text);
    assert!(
        text.contains(&format!("listening on 127.0.0.1:{port} as the receiver")),
        "{text}"
    );
    assert!(text.contains("connection from 127.0.0.1:"), "{text}");
    assert!(text.contains("received 3.00 MiB"), "{text}");
    assert_eq!(
        num(summary(&read_records(&recs)), "received_bytes"),
        3.0 * 1048576.0
    );
}

#[test]
fn netcat_mode_on_a_terminal_keeps_json_off_it() {
    let d = tmp();
    let input = path(&d, "in");
    let want = random_file(&input, 1_000_003);
    let out = path(&d, "out");
    let recs = path(&d, "r.jsonl");
    let mut l = Spawned::start(
        np().args(["-l", "127.0.0.1", "0", "-o"])
            .arg(&recs)
            .stdin(Stdio::null())
            .stdout(file(&out)),
    );
    let port = listen_port(&recs);
    let client = format!(r#""$BIN" 127.0.0.1 {port} < "$IN" > /dev/null"#);
    let Some((code, text)) = on_terminal(&client, &[("IN", &input)]) else {
        return;
    };
    assert_eq!(code, 0, "{text}");
    assert!(l.wait(LIMIT).success());
    assert!(std::fs::read(&out).unwrap() == want);
    // stderr is the terminal: a summary, and the records go nowhere.
    no_json(&text);
    assert!(text.contains("nc to 127.0.0.1: ok"), "{text}");
    assert!(text.contains("sent 977 KiB"), "{text}");
    // stderr piped (the terminal is only stdout's): the records come on stderr as JSON.
    let recs = path(&d, "r2.jsonl");
    let mut l = Spawned::start(
        np().args(["-l", "127.0.0.1", "0", "-o"])
            .arg(&recs)
            .stdin(Stdio::null())
            .stdout(Stdio::null()),
    );
    let port = listen_port(&recs);
    let err = path(&d, "err");
    let client = format!(r#""$BIN" 127.0.0.1 {port} < "$IN" 2> "$ERR""#);
    let (code, text) = on_terminal(&client, &[("IN", &input), ("ERR", &err)]).unwrap();
    assert_eq!(code, 0, "{text}");
    assert!(l.wait(LIMIT).success());
    no_json(&text);
    let r = records(&std::fs::read_to_string(&err).unwrap());
    assert_eq!(num(summary(&r), "sent_bytes"), 1_000_003.0);
}
