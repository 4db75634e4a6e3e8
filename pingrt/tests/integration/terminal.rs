//! pingrt's output policy through a real pseudo-terminal (script(1)): on a terminal ping's
//! lines and summary and no JSON; with stdout piped or in a file, or with --json, JSON.

use crate::common::*;
use std::ffi::OsStr;

/// What a person sees when `cmd` (constant shell text) runs on a terminal, with pingrt's path
/// in `$BIN` and each of `env` in its environment.
fn on_a_terminal(cmd: &str, env: &[(&str, &OsStr)]) -> String {
    let mut vars = vec![("BIN", OsStr::new(bin()))];
    vars.extend_from_slice(env);
    let (code, text) = testkit::on_terminal(cmd, &vars).expect("script(1) is installed");
    assert_eq!(code, 0, "{cmd}: {text}");
    text
}

fn has_json(text: &str) -> bool {
    text.contains("\"schema\":\"benchmatrix/1\"")
}

#[test]
fn a_terminal_gets_ping_lines_and_no_json() {
    if !can_run("a terminal", &["script"]) {
        return;
    }
    let text = on_a_terminal(r#""$BIN" -c 2 -i 0.05 127.0.0.1"#, &[]);
    assert!(!has_json(&text), "{text}");
    assert!(
        text.contains("PING 127.0.0.1 (127.0.0.1) 56(84) bytes of data."),
        "{text}"
    );
    assert!(
        text.contains("64 bytes from 127.0.0.1: icmp_seq=2 ttl=64 time="),
        "{text}"
    );
    assert!(
        text.contains("2 packets transmitted, 2 received, 0% packet loss"),
        "{text}"
    );
    assert!(text.contains("rtt min/avg/max/mdev = "), "{text}");
    // ping's summary is the run's own: no second, generic one.
    assert_eq!(text.matches("packets transmitted").count(), 1, "{text}");
}

#[test]
fn a_flood_on_a_terminal_shows_the_summary_and_no_json() {
    if !can_run("a terminal flood", &["script"]) {
        return;
    }
    let text = on_a_terminal(r#""$BIN" -f -c 2000 127.0.0.1"#, &[]);
    assert!(!has_json(&text), "{text}");
    assert!(
        text.contains("2000 packets transmitted, 2000 received"),
        "{text}"
    );
    assert!(!text.contains("bytes from"), "no per-probe lines: {text}");
}

#[test]
fn piped_or_in_a_file_the_records_are_json() {
    if !can_run("a terminal with stdout elsewhere", &["script"]) {
        return;
    }
    // A space and a quote in the path: it reaches the shell as a variable, not as code.
    let dir = std::env::temp_dir().join(format!("pingrt-tty a b'c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("records.jsonl");
    let text = on_a_terminal(
        r#""$BIN" -c 2 -i 0.05 127.0.0.1 > "$FILE""#,
        &[("FILE", file.as_os_str())],
    );
    let records = std::fs::read_to_string(&file).expect("records");
    std::fs::remove_dir_all(&dir).expect("remove temp dir");
    // The records are in the file; the terminal (stderr) still gets ping's lines.
    assert_eq!(records.lines().count(), 4, "{records}");
    assert!(records.lines().all(|l| measure::parse_line(l).is_ok()));
    assert!(!has_json(&text), "{text}");
    assert!(text.contains("2 packets transmitted"), "{text}");
    // Through a pipe: JSON.
    let text = on_a_terminal(r#""$BIN" -c 1 127.0.0.1 | cat"#, &[]);
    assert!(has_json(&text), "{text}");
    assert!(text.contains("\"type\":\"summary\""), "{text}");
}

#[test]
fn json_on_a_terminal_is_records_without_ping_lines() {
    if !can_run("--json on a terminal", &["script"]) {
        return;
    }
    let text = on_a_terminal(r#""$BIN" --json -c 1 127.0.0.1"#, &[]);
    assert!(text.contains("\"type\":\"begin\""), "{text}");
    assert!(text.contains("\"type\":\"summary\""), "{text}");
    assert!(!text.contains("PING 127.0.0.1 ("), "{text}");
    assert!(!text.contains("packets transmitted"), "{text}");
    // -q on a terminal without -o: nothing at all.
    let text = on_a_terminal(r#""$BIN" -q -c 1 127.0.0.1"#, &[]);
    assert!(text.trim().is_empty(), "{text}");
}
