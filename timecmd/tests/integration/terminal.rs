//! timecmd on a real terminal (script(1) gives it a pseudo-terminal): job control and Ctrl-C typed.
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use crate::common::*;
use measure::record::Status;

#[test]
fn on_a_terminal_the_run_gets_the_foreground() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    // Without the hand-off, the run (in its own process group) would stop on its read.
    let cmd = r#""$BIN" -o "$REC" -- sh -c 'read x; echo got $x'; echo rc=$?"#;
    let env = [("REC", rec.as_os_str())];
    let Some((code, out)) = on_a_terminal(cmd, &env, b"hello\n", || rec.exists()) else {
        return;
    };
    assert_eq!(code, 0);
    assert!(out.contains("got hello"), "{out}");
    assert!(out.contains("rc=0"), "{out}");
    let recs = read_records(&rec);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.info["terminal_handoff"], true);
    // The human summary goes to the terminal.
    assert!(out.contains("Max RSS"), "{out}");
}

#[test]
fn ctrl_c_typed_on_the_terminal_ends_the_series() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    // `exec`: the ^C reaches the whole foreground group, and whether a shell waiting
    // around timecmd survives it depends on the shell (bash does, dash does not), so
    // timecmd's own status comes back through script(1)'s -e. The argument 23.25 is one no
    // other test uses, to find this run's process.
    let cmd = r#"exec "$BIN" -o "$REC" -r 5 -- sleep 23.25"#;
    let ready = || process_runs(b"sleep\x0023.25\x00");
    let env = [("REC", rec.as_os_str())];
    let Some((code, out)) = on_a_terminal(cmd, &env, b"\x03", ready) else {
        return;
    };
    assert_eq!(code, 130, "{out}");
    assert!(
        out.contains("interrupted by SIGINT after 0 of 5 runs"),
        "{out}"
    );
    let recs = read_records(&rec);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Failed));
    assert!(s.error.as_deref().unwrap().contains("SIGINT"));
}
