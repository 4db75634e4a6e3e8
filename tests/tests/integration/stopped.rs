//! A run that was stopped (SIGSTOP) and continued (SIGCONT) has the pause inside its figures:
//! its summary is partial and says why (measure::signal::watch_stops); an undisturbed run of
//! the same tools stays ok.

use crate::signal_runs::{Case, Ended, Run, Start};
use std::path::Path;

/// Runs of a few seconds: fsmeta and cpumem write their summaries through the session,
/// pingrt from its writer thread.
fn cases(dir: &Path) -> Vec<Case> {
    let fs = dir.join("fs");
    std::fs::create_dir_all(&fs).expect("a directory for fsmeta");
    let fs = fs.display().to_string();
    let rec = |name: &str| dir.join(format!("{name}.jsonl"));
    vec![
        Case::new("fsmeta", &["-n", "5000", &fs], Some(&rec("fsmeta"))),
        Case::new(
            "cpumem",
            &["--only", "syscall", "-t", "1s", "-c", "2"],
            Some(&rec("cpumem")),
        ),
        Case::new(
            "pingrt",
            &["-c", "10", "-i", "200ms", "127.0.0.1"],
            Some(&rec("pingrt")),
        ),
    ]
}

/// Each case run to its end, stopped and continued once it has set up its signals when
/// `stop`.
fn runs(dir: &Path, stop: bool) -> Vec<Ended> {
    cases(dir)
        .iter()
        .map(|case| {
            let mut run = Run::start(case, Start::Plain, dir);
            run.ready();
            if stop {
                run.stop_and_continue();
            }
            run.finish()
        })
        .collect()
}

#[test]
fn a_run_stopped_and_continued_is_partial_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    for e in runs(dir.path(), true) {
        let s = e.summary();
        assert_eq!(e.code, 0, "{}: {}", e.what, e.stderr);
        assert_eq!(e.status(), "partial", "{}: {s}", e.what);
        let error = s["error"].as_str().unwrap_or("");
        assert!(
            error.contains("stopped for a while (SIGSTOP/SIGCONT)"),
            "{}: {error}",
            e.what
        );
        assert_eq!(s["info"]["stopped"], true, "{}: {s}", e.what);
    }
}

#[test]
fn an_undisturbed_run_stays_ok() {
    let dir = tempfile::tempdir().expect("tempdir");
    for e in runs(dir.path(), false) {
        let s = e.summary();
        assert_eq!((e.code, e.status()), (0, "ok"), "{}: {s}", e.what);
        assert!(s["info"].get("stopped").is_none(), "{}: {s}", e.what);
    }
}
