//! `./benchmatrix --max-load LOAD`: on a machine that CPU hogs keep busy it says it waits and
//! refuses the run (exit 2, nothing measured) after `--max-load-wait`; under a load it
//! allows it starts at once; from a load file (BENCHMATRIX_LOADAVG_FILE, for tests) it waits
//! until the load falls, then runs; bad values are refused before anything runs.

use benchmatrix_tests::explain;
use benchmatrix_tests::suite::{folders, script, script_env, script_path};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};
use testkit::{Captured, Spawned, free_port};

/// The 1-minute load average, as /proc/loadavg says it.
fn load() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next().and_then(|l| l.parse().ok()))
        .expect("/proc/loadavg")
}

/// A CPU hog: a shell loop that ends by itself after 120 s, and is killed by its pid when
/// the test ends (the guard's drop), whatever the test's outcome.
fn hog() -> Spawned {
    Spawned::start(Command::new("sh").args([
        "-c",
        "end=$(($(date +%s) + 120)); while [ \"$(date +%s)\" -lt \"$end\" ]; do i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; done",
    ]))
}

/// The records files in `res`.
fn records(res: &Path) -> Vec<String> {
    std::fs::read_dir(res)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".jsonl"))
        .collect()
}

#[test]
fn beside_cpu_hogs_it_waits_then_refuses_and_measures_nothing() {
    let tmp = tempfile::tempdir().expect("scratch");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let _hogs = [hog(), hog()];
    // The hogs lift the load average (a minute's exponential average) to at least 0.5,
    // whatever else the machine runs; bounded at 90 s.
    let started = Instant::now();
    while load() < 0.5 && started.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(500));
    }
    let now = load();
    assert!(now >= 0.5, "two CPU hogs for 90 s left the load at {now}");
    // A limit below the load that the load cannot reach in the run's few seconds: with no
    // task running at all, a 1-minute average takes 30 s to fall by 40%.
    let limit = format!("{:.2}", now * 0.6);
    let out = script(
        &work,
        &scratch,
        &[],
        &[
            "--max-load",
            &limit,
            "--max-load-wait",
            "2s",
            "--only",
            "cpu",
            "--results",
            &res.to_string_lossy(),
            "--no-matrix",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    assert!(
        err.contains("waiting for the 1-minute load average ")
            && err.contains(&format!(" to fall to {limit} or below (")),
        "the line that says it waits: {err}"
    );
    assert!(
        err.contains(&format!(
            "--max-load {limit}: the 1-minute load average is still "
        )) && err.contains("after waiting 2s")
            && err.contains("nothing was measured"),
        "the refusal: {err}"
    );
    assert!(records(&res).is_empty(), "records of a refused run");
}

#[test]
fn under_a_limit_above_the_load_it_starts_at_once() {
    let tmp = tempfile::tempdir().expect("scratch");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let port = free_port().to_string();
    let out = script(
        &work,
        &scratch,
        &[],
        &[
            "--max-load",
            "100000",
            "--only",
            "net",
            "--runs",
            "1",
            "--net-time",
            "250ms",
            "--port",
            &port,
            "--results",
            &res.to_string_lossy(),
            "--no-matrix",
        ],
    );
    assert!(out.status.success(), "{}", explain(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("waiting for"), "{err}");
    assert_eq!(records(&res).len(), 1, "{err}");
}

#[test]
fn it_waits_until_the_load_falls_then_runs() {
    let tmp = tempfile::tempdir().expect("scratch");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let file = tmp.path().join("loadavg");
    std::fs::write(&file, "9.00 8.00 7.00 3/200 4242\n").expect("the load file");
    let port = free_port().to_string();
    let mut c = Command::new("sh");
    c.arg(script_path()).args([
        "--max-load",
        "1.5",
        "--max-load-wait",
        "10m",
        "--only",
        "net",
        "--runs",
        "1",
        "--net-time",
        "250ms",
        "--port",
        &port,
        "--results",
        &res.to_string_lossy(),
        "--no-matrix",
    ]);
    script_env(&mut c, &work, &scratch).env("BENCHMATRIX_LOADAVG_FILE", &file);
    let run = Captured::start(&mut c);
    // Its stderr is a file of Captured's; the line that says it waits is read from /proc.
    let said = || std::fs::read_to_string(format!("/proc/{}/fd/2", run.pid())).unwrap_or_default();
    let started = Instant::now();
    while !said().contains("waiting for the 1-minute load average 9 to fall to 1.5 or below")
        && started.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        said().contains("CPUs; checking every 5 s, at most 10m)..."),
        "the line that says it waits: {}",
        said()
    );
    assert!(records(&res).is_empty(), "it measured while it waited");
    std::fs::write(&file, "0.50 8.00 7.00 1/200 4242\n").expect("the load file");
    let (st, _, err) = run.wait_output(Duration::from_secs(300));
    assert!(st.success(), "{st}: {err}");
    assert!(
        err.contains("the 1-minute load average is 0.5, at most 1.5: starting"),
        "{err}"
    );
    assert_eq!(records(&res).len(), 1, "{err}");
}

#[test]
fn bad_max_load_values_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().expect("scratch");
    let [work, scratch] = folders(tmp.path(), ["work", "tmp"]);
    for (args, want) in [
        (
            &["--max-load", "lots"][..],
            "--max-load lots: give a load average",
        ),
        (
            &["--max-load", "0"][..],
            "--max-load 0: give a load above 0",
        ),
        (
            &["--max-load", "1.2.3"][..],
            "--max-load 1.2.3: give a load average",
        ),
        (
            &["--max-load-wait", "10s"][..],
            "--max-load-wait needs --max-load",
        ),
        (
            &["--max-load", "2", "--max-load-wait", "soon"][..],
            "--max-load-wait soon: give a duration",
        ),
        (
            &["--max-load", "2", "--serve"][..],
            "--max-load: --serve runs no step",
        ),
    ] {
        let out = script(&work, &scratch, &[], args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}
