//! timecmd's exit status: the command's passed on, 128+N for a signal, 125/126/127 as env(1).
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use crate::common::*;
use measure::record::{Kind, Status};
use std::process::Command;

#[test]
fn exit_status_passes_through() {
    let d = scratch();
    let (o, recs) = timecmd(d.path(), &["--", "true"]);
    assert_eq!(code(&o), 0);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.headline.as_deref(), Some("wall_median_s"));

    let (o, recs) = timecmd(d.path(), &["--", "sh", "-c", "exit 3"]);
    assert_eq!(code(&o), 3, "{}", stderr(&o));
    let samples = of(&recs, Kind::Sample);
    assert_eq!(samples.len(), 1);
    assert_eq!(info_i64(samples[0], "exit_code"), Some(3));
    assert_eq!(info_i64(samples[0], "exit_status"), Some(3));
    assert!(samples[0].value("wall_s").is_some());
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Failed));
    assert!(s.error.as_deref().unwrap().contains("status 3"));
    // The default row name is the command line joined.
    assert_eq!(s.name, "sh -c exit 3");
}

#[test]
fn signals_become_128_plus_n() {
    let d = scratch();
    for (sig, want) in [("TERM", 143), ("KILL", 137), ("SEGV", 139)] {
        let (o, recs) = timecmd(d.path(), &["--", "sh", "-c", &format!("kill -{sig} $$")]);
        assert_eq!(code(&o), want, "SIG{sig}: {}", stderr(&o));
        let s = of(&recs, Kind::Sample);
        assert_eq!(info_i64(s[0], "signal"), Some(i64::from(want - 128)));
        assert_eq!(
            s[0].info["signal_name"].as_str(),
            Some(format!("SIG{sig}").as_str())
        );
        assert_eq!(summary(&recs).status, Some(Status::Failed));
    }
}

#[test]
fn not_found_and_not_executable() {
    let d = scratch();
    let (o, recs) = timecmd(d.path(), &["--", "no-such-command-timecmd-test"]);
    assert_eq!(code(&o), 127);
    assert!(stderr(&o).contains("command not found"), "{}", stderr(&o));
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Failed));
    assert!(s.error.as_deref().unwrap().contains("not found"));
    assert!(of(&recs, Kind::Sample)[0].error.is_some());

    let (o, recs) = timecmd(d.path(), &["--", "/no/such/dir/prog"]);
    assert_eq!(code(&o), 127);
    assert_eq!(summary(&recs).status, Some(Status::Failed));

    let script = d.path().join("noexec.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    let (o, recs) = timecmd(d.path(), &["--", script.to_str().unwrap()]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("permission denied"), "{}", stderr(&o));
    assert_eq!(summary(&recs).status, Some(Status::Failed));

    let (o, _) = timecmd(d.path(), &["--", d.path().to_str().unwrap()]);
    assert_eq!(code(&o), 126);
    assert!(stderr(&o).contains("directory"), "{}", stderr(&o));

    // A #! line naming a missing interpreter is "not found", as in env(1).
    let bad = d.path().join("badinterp.sh");
    std::fs::write(&bad, "#!/no/such/interpreter\n").unwrap();
    Command::new("chmod").arg("+x").arg(&bad).status().unwrap();
    let (o, _) = timecmd(d.path(), &["--", bad.to_str().unwrap()]);
    assert_eq!(code(&o), 127);
    assert!(stderr(&o).contains("interpreter"), "{}", stderr(&o));
}

#[test]
fn usage_errors_exit_125_without_records() {
    let d = scratch();
    for args in [
        vec!["-r", "0", "--", "true"],
        vec!["--time-limit", "0", "--", "true"],
        vec!["--bogus", "true"],
        vec![],
    ] {
        let (o, recs) = timecmd(d.path(), &args);
        assert_eq!(code(&o), 125, "{args:?}: {}", stderr(&o));
        assert!(recs.is_empty());
    }
    let (o, _) = timecmd(d.path(), &["--time-limit", "0", "--", "true"]);
    assert!(stderr(&o).contains("30s"), "names the fix: {}", stderr(&o));
    // A bare number is seconds, as in every duration option.
    let (o, recs) = timecmd(d.path(), &["--time-limit", "5", "--", "true"]);
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(recs[0].info["time_limit_s"], 5.0);
    let o = Command::new(bin()).arg("--help").output().unwrap();
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("EXAMPLES"));
}

#[test]
fn failures_stop_the_series_unless_ignored() {
    let d = scratch();
    let (o, recs) = timecmd(d.path(), &["-r", "3", "--", "false"]);
    assert_eq!(code(&o), 1);
    assert_eq!(of(&recs, Kind::Sample).len(), 1);
    assert!(stderr(&o).contains("--ignore-failure"));

    let (o, recs) = timecmd(d.path(), &["-r", "3", "--ignore-failure", "--", "false"]);
    assert_eq!(code(&o), 1, "the last run's status");
    assert_eq!(of(&recs, Kind::Sample).len(), 3);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.value("runs_count"), Some(3.0));
    assert_eq!(s.value("failed_runs_count"), Some(3.0));
}
