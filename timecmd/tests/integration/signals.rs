//! Ctrl-C and SIGTERM sent to timecmd by PID: forwarded to the run, summary written, 128+N.
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use crate::common::*;
use measure::record::{Kind, Status};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_during_a_run_writes_the_summary_and_exits_130() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    let child = Command::new(bin())
        .arg("-o")
        .arg(&rec)
        .args(["-r", "5", "--", "sleep", "30"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let mut kids = Vec::new();
    while kids.is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
        kids = children(child.id());
    }
    assert_eq!(kids.len(), 1, "timecmd started sleep");
    signal(child.id(), Signal::SIGINT);
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130));
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted by SIGINT"));
    let recs = read_records(&rec);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Failed));
    assert!(s.error.as_deref().unwrap().contains("SIGINT"));
    let samples = of(&recs, Kind::Sample);
    assert_eq!(samples.len(), 1);
    assert_eq!(samples[0].info["interrupted"], true);
    assert!(gone(kids[0]), "the run got the SIGINT too");
}

#[test]
fn ctrl_c_after_some_runs_is_partial() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    let mut child = Command::new(bin())
        .arg("-o")
        .arg(&rec)
        .args(["-r", "1000", "--", "sleep", "0.05"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while read_records(&rec).len() < 4 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(child.id(), Signal::SIGTERM);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let recs = read_records(&rec);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Partial));
    assert!(s.value("runs_count").unwrap() >= 3.0);
    assert!(s.value("wall_median_s").is_some());
}

#[test]
fn ctrl_c_during_prepare_exits_130() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    let child = Command::new(bin())
        .arg("-o")
        .arg(&rec)
        .args(["-r", "3", "--prepare", "sleep 30", "--", "true"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while children(child.id()).is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(child.id(), Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let recs = read_records(&rec);
    assert_eq!(summary(&recs).status, Some(Status::Failed));
    assert!(of(&recs, Kind::Sample).is_empty());
}

#[test]
fn a_signal_the_parent_ignores_stays_ignored() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    // As `nohup` or `cmd &` in a script do: SIGINT ignored before timecmd starts, for it
    // and for its runs.
    let script = r#"trap '' INT; exec "$BIN" -o "$REC" -r 2 -- sh -c 'kill -INT $$; sleep 0.3'"#;
    let child = Command::new("sh")
        .args(["-c", script])
        .env("BIN", bin())
        .env("REC", &rec)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while children(child.id()).is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    signal(child.id(), Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let recs = read_records(&rec);
    assert_eq!(summary(&recs).status, Some(Status::Ok));
    assert_eq!(of(&recs, Kind::Sample).len(), 2);
}

#[test]
fn after_ctrl_c_timecmd_returns_once_the_runs_whole_group_is_gone() {
    // perl plays a compiler that cleans up on SIGINT.
    if !testkit::need_tool("perl") {
        return;
    }
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    let ids = d.path().join("group ids");
    // The run's leader ends at once on SIGINT; a process it started in the background (as a
    // shell starts a compiler) takes 1.5 s to clean up after it: timecmd waits for it. The
    // helper's output goes elsewhere, so that reading timecmd's stderr does not wait for it.
    let helper = r#"open my $f, ">", $ARGV[0] or die; $SIG{INT} = sub { $got = 1 };
        print $f getpgrp(), "\n"; close $f; sleep 30; select(undef, undef, undef, 1.5) if $got"#;
    let child = Command::new(bin())
        .arg("-o")
        .arg(&rec)
        .args([
            "--",
            "sh",
            "-c",
            "perl -e \"$1\" \"$2\" >/dev/null 2>&1 & exec sleep 30",
            "sh",
        ])
        .arg(helper)
        .arg(&ids)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    let group = || {
        std::fs::read_to_string(&ids)
            .ok()
            .filter(|s| s.ends_with('\n'))
    };
    while group().is_none() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let pgrp: i32 = group().expect("the helper started").trim().parse().unwrap();
    signal(child.id(), Signal::SIGINT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let left = in_group(pgrp);
    assert!(left.is_empty(), "still in the run's group {pgrp}: {left:?}");
    assert_eq!(summary(&read_records(&rec)).status, Some(Status::Failed));
}

/// Sends `sig` to the timecmd this test started.
fn signal(pid: u32, sig: Signal) {
    kill(Pid::from_raw(pid as i32), sig).unwrap();
}
