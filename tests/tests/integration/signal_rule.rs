//! The signal rule of every tool (measure::signal, ARCHITECTURE.md): a signal that was ignored
//! when the tool started stays ignored. Under `nohup` a SIGHUP leaves each tool running to an
//! ok summary; as a background job of a script (SIGINT ignored) SIGINT is ignored too, and
//! SIGTERM still ends the run with its summary.

use crate::signal_runs::{Case, Ended, Run, Start};
use std::path::Path;

/// Every tool but netpipe (which takes two processes), in a run that ends by itself (`long`
/// false) or that goes on until a signal ends it.
fn cases(dir: &Path, long: bool) -> Vec<Case> {
    let at = |name: &str| dir.join(name).display().to_string();
    let rec = |name: &str| dir.join(format!("{name}.jsonl"));
    std::fs::create_dir_all(dir.join("fs")).expect("a directory for fsmeta");
    let (w, r, fs) = (at("w"), at("r"), at("fs"));
    let demo = std::process::Command::new(testkit::release::bin("lifecycle_demo"))
        .args(["-c", "3"])
        .output()
        .expect("lifecycle_demo")
        .stdout;
    let ping = std::fs::read(
        testkit::release::workspace_root().join("ingest/tests/data/ping-busybox.txt"),
    )
    .expect("ingest's ping sample");
    // A long run's stdin stays open and empty until the signals have ended it.
    let feed = |data: Vec<u8>| if long { Vec::new() } else { data };
    let c = |bin: &str, short: &[&str], lasting: &[&str]| {
        Case::new(bin, if long { lasting } else { short }, Some(&rec(bin)))
    };
    vec![
        c(
            "pingrt",
            &["-c", "3", "-i", "200ms", "127.0.0.1"],
            &["-c", "100000", "-i", "200ms", "127.0.0.1"],
        ),
        c(
            "cpumem",
            &["--only", "syscall", "-t", "600ms", "-c", "3"],
            &["--only", "syscall", "-t", "600s"],
        ),
        c(
            "blkwrite",
            &["-s", "8M", "-b", "1M", &w],
            &["--dsync", "-s", "1G", "-b", "4k", "-t", "60s", &w],
        ),
        c(
            "blkread",
            &["--create", "8M", &r],
            &["--create", "16M", "--random", "-t", "60s", &r],
        ),
        c("fsmeta", &["-n", "2000", &fs], &["-n", "400000", &fs]),
        c(
            "timecmd",
            &["-r", "2", "--", "sleep", "0.2"],
            &["-r", "100", "--", "sleep", "1"],
        ),
        Case::new("ingest", &[], Some(&rec("ingest"))).fed(feed(ping)),
        Case::new("collate", &[], None).fed(feed(demo)),
    ]
}

/// netpipe's receiver and sender on a free loopback port.
fn netpipe(dir: &Path, long: bool) -> (Case, Case) {
    let port = testkit::free_port().to_string();
    let listen = format!("127.0.0.1:{port}");
    let mut recv = vec!["recv", "--listen", &listen];
    let mut send = vec!["send", "--connect", &listen];
    if long {
        recv.push("--keep-open");
    } else {
        send.extend(["--time", "1s"]);
    }
    (
        Case::new("netpipe", &recv, Some(&dir.join("recv.jsonl"))),
        Case::new("netpipe", &send, Some(&dir.join("send.jsonl"))),
    )
}

/// Starts `case` as `how` says, waits until it has set up its signals, and says (into
/// `wrong`) when the kernel does not have `sig` ignored for it; then sends `sig`.
fn start_and_signal(case: &Case, how: Start, sig: i32, dir: &Path, wrong: &mut Vec<String>) -> Run {
    let mut run = Run::start(case, how, dir);
    run.ready();
    if !run.ignores(sig) {
        wrong.push(format!(
            "{}: signal {sig} is not ignored (SigIgn)",
            run.what
        ));
    }
    if !run.signal(sig) {
        wrong.push(format!("{}: gone before signal {sig}", run.what));
    }
    run
}

/// What is wrong with a run that should have ended by itself, ok.
fn not_ok(e: &Ended) -> Option<String> {
    let ok = match e.records.is_empty() && e.code == 0 {
        true => !e.text.trim().is_empty(),
        false => e.code == 0 && e.status() == "ok",
    };
    (!ok).then(|| {
        format!(
            "{}: exit {}, {}; {}",
            e.what,
            e.code,
            e.text.lines().last().unwrap_or(""),
            e.stderr
        )
    })
}

#[test]
fn a_tool_started_with_sighup_ignored_keeps_it_ignored_and_ends_ok() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wrong = Vec::new();
    let mut ended = Vec::new();
    for case in cases(dir.path(), false) {
        let run = start_and_signal(&case, Start::Nohup, libc::SIGHUP, dir.path(), &mut wrong);
        ended.push(run.finish());
    }
    let (recv, send) = netpipe(dir.path(), false);
    let r = start_and_signal(&recv, Start::Nohup, libc::SIGHUP, dir.path(), &mut wrong);
    let s = start_and_signal(&send, Start::Nohup, libc::SIGHUP, dir.path(), &mut wrong);
    ended.push(s.finish());
    ended.push(r.finish());
    wrong.extend(ended.iter().filter_map(not_ok));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Checks (into `wrong`) that the tool still runs after the SIGINT it ignores, then ends it
/// with SIGTERM, which alone ends it (its input, if any, stays open until it has ended).
fn terminate(run: Run, wrong: &mut Vec<String>) -> Ended {
    // An ignored signal is dropped when it is sent: the tool still runs.
    if !run.alive() || !run.signal(libc::SIGTERM) {
        wrong.push(format!("{}: ended by SIGINT", run.what));
    } else if !run.ends() {
        wrong.push(format!("{}: still runs after SIGTERM", run.what));
    }
    run.finish()
}

#[test]
fn a_background_job_ignores_sigint_and_sigterm_ends_it_with_its_summary() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut wrong = Vec::new();
    let mut ended = Vec::new();
    for case in cases(dir.path(), true) {
        let run = start_and_signal(
            &case,
            Start::Background,
            libc::SIGINT,
            dir.path(),
            &mut wrong,
        );
        ended.push(terminate(run, &mut wrong));
    }
    let (recv, send) = netpipe(dir.path(), true);
    let r = start_and_signal(
        &recv,
        Start::Background,
        libc::SIGINT,
        dir.path(),
        &mut wrong,
    );
    let s = start_and_signal(
        &send,
        Start::Background,
        libc::SIGINT,
        dir.path(),
        &mut wrong,
    );
    ended.push(terminate(s, &mut wrong));
    ended.push(terminate(r, &mut wrong));
    for e in &ended {
        let collate = e.what.starts_with("collate");
        // collate writes no records: SIGTERM's default action ends it; timecmd passes its
        // command's status on, which the SIGTERM it forwarded ended (both 128+15).
        let code = match collate || e.what.starts_with("timecmd") {
            true => 143,
            false => 130,
        };
        let summary = e.records.iter().any(|r| r["type"] == "summary");
        if e.code != code || (!collate && !summary) {
            let last = e.text.lines().last().unwrap_or("no records");
            wrong.push(format!("{}: exit {}, {last}; {}", e.what, e.code, e.stderr));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
