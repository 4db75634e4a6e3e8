//! End-to-end tests of the timecmd binary against real commands (sh, sleep, dd, GNU time).
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use measure::record::{Kind, Record, Status, parse_line};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_timecmd");

/// A scratch directory for one test.
fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// Runs timecmd with records in `dir/records.jsonl`; returns the output and the records.
fn timecmd(dir: &Path, args: &[&str]) -> (Output, Vec<Record>) {
    let rec = dir.join("records.jsonl");
    let _ = std::fs::remove_file(&rec);
    let out = Command::new(BIN)
        .arg("-o")
        .arg(&rec)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (out, read_records(&rec))
}

fn read_records(p: &Path) -> Vec<Record> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("bad record {l}: {e}")))
        .collect()
}

fn of(recs: &[Record], k: Kind) -> Vec<&Record> {
    recs.iter().filter(|r| r.kind == k).collect()
}

fn summary(recs: &[Record]) -> &Record {
    let s = of(recs, Kind::Summary);
    assert_eq!(s.len(), 1, "exactly one summary: {recs:?}");
    assert_eq!(
        recs.last().unwrap().kind,
        Kind::Summary,
        "the summary is last"
    );
    s[0]
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn info_i64(r: &Record, k: &str) -> Option<i64> {
    r.info.get(k).and_then(|v| v.as_i64())
}

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
        vec!["-n", "0", "--", "true"],
        vec!["--time-limit", "5", "--", "true"],
        vec!["--bogus", "true"],
        vec![],
    ] {
        let (o, recs) = timecmd(d.path(), &args);
        assert_eq!(code(&o), 125, "{args:?}: {}", stderr(&o));
        assert!(recs.is_empty());
    }
    let (o, _) = timecmd(d.path(), &["--time-limit", "5", "--", "true"]);
    assert!(stderr(&o).contains("5s"), "names the fix: {}", stderr(&o));
    let o = Command::new(BIN).arg("--help").output().unwrap();
    assert_eq!(code(&o), 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("EXAMPLES"));
}

/// Whether a process is gone (or a zombie waiting for init).
fn gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[test]
fn time_limit_kills_the_whole_process_group() {
    let d = scratch();
    let pids = d.path().join("pids");
    let script = format!(
        "sleep 60 & echo $! >> {p}; sh -c 'sleep 60' & echo $! >> {p}; wait",
        p = pids.display()
    );
    let t = Instant::now();
    let (o, recs) = timecmd(
        d.path(),
        &["--time-limit", "500ms", "--", "sh", "-c", &script],
    );
    assert!(t.elapsed() < Duration::from_secs(30));
    assert_eq!(code(&o), 124, "{}", stderr(&o));
    assert!(stderr(&o).contains("timed out"), "{}", stderr(&o));
    let samples = of(&recs, Kind::Sample);
    assert_eq!(samples.len(), 1);
    assert!(samples[0].error.as_deref().unwrap().contains("timed out"));
    assert_eq!(samples[0].info["timed_out"], true);
    assert!(samples[0].values.is_empty());
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Failed));
    assert_eq!(s.value("timed_out_runs_count"), Some(1.0));
    let grandchildren: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(grandchildren.len(), 2);
    let t = Instant::now();
    while !grandchildren.iter().all(|&p| gone(p)) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for p in grandchildren {
        assert!(gone(p), "grandchild {p} survived the time limit");
    }

    // With --ignore-failure the series goes on; the runs that finish in time count.
    let (o, recs) = timecmd(
        d.path(),
        &[
            "--time-limit",
            "300ms",
            "--ignore-failure",
            "-n",
            "2",
            "--",
            "sleep",
            "5",
        ],
    );
    assert_eq!(code(&o), 124);
    assert_eq!(of(&recs, Kind::Sample).len(), 2);
    assert_eq!(summary(&recs).value("timed_out_runs_count"), Some(2.0));
}

#[test]
fn prepare_runs_before_every_run_and_cleanup_once_after() {
    let d = scratch();
    let log = d.path().join("order");
    let l = log.display();
    let (o, recs) = timecmd(
        d.path(),
        &[
            "-w",
            "1",
            "-n",
            "3",
            "--setup",
            &format!("echo setup >> {l}"),
            "--prepare",
            &format!("echo prepare >> {l}; echo this stdout is discarded"),
            "--cleanup",
            &format!("echo cleanup >> {l}"),
            "--output",
            "null",
            "--",
            "sh",
            "-c",
            &format!("echo run >> {l}"),
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    let got = std::fs::read_to_string(&log).unwrap();
    let want = "setup\n".to_string() + &"prepare\nrun\n".repeat(4) + "cleanup\n";
    assert_eq!(got, want);
    // The warm-up run is not recorded.
    assert_eq!(of(&recs, Kind::Sample).len(), 3);

    // A failing --prepare stops timecmd with 125, a summary and a clear message;
    // --cleanup still runs.
    std::fs::remove_file(&log).unwrap();
    let (o, recs) = timecmd(
        d.path(),
        &[
            "-n",
            "3",
            "--prepare",
            "exit 4",
            "--cleanup",
            &format!("echo cleanup >> {l}"),
            "--",
            "true",
        ],
    );
    assert_eq!(code(&o), 125);
    assert!(stderr(&o).contains("--prepare 'exit 4' exited with status 4"));
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Failed));
    assert!(of(&recs, Kind::Sample).is_empty());
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "cleanup\n");
}

const SAMPLE_KEYS: [&str; 11] = [
    "wall_s",
    "user_s",
    "sys_s",
    "cpu_ratio",
    "max_rss_bytes",
    "minor_faults_count",
    "major_faults_count",
    "voluntary_switches_count",
    "involuntary_switches_count",
    "fs_read_bytes",
    "fs_write_bytes",
];

#[test]
fn records_for_every_run() {
    let d = scratch();
    let (o, recs) = timecmd(
        d.path(),
        &[
            "-n", "4", "--label", "bare/xfs", "--tag", "k=v", "--", "sleep", "0.05",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert_eq!(recs[0].kind, Kind::Begin);
    let b = &recs[0];
    assert_eq!(b.info["command"], serde_json::json!(["sleep", "0.05"]));
    assert_eq!(b.info["runs"], 4);
    assert!(b.info.contains_key("kernel"));
    assert!(b.info.contains_key("virtualization"));
    let samples = of(&recs, Kind::Sample);
    assert_eq!(samples.len(), 4);
    for (i, s) in samples.iter().enumerate() {
        assert_eq!(s.seq, i as u64);
        assert_eq!(info_i64(s, "run"), Some(i as i64 + 1));
        assert_eq!(info_i64(s, "exit_code"), Some(0));
        assert_eq!(s.info["ok"], true);
        for k in SAMPLE_KEYS {
            assert!(s.value(k).is_some(), "sample {i} lacks {k}: {s:?}");
        }
        let wall = s.value("wall_s").unwrap();
        assert!(wall >= 0.05, "sleep 0.05 took {wall}");
        assert!(s.value("max_rss_bytes").unwrap() > 0.0);
        assert_eq!(s.label, "bare/xfs");
        assert_eq!(s.tags["k"], "v");
        assert_eq!(s.name, "sleep 0.05");
    }
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.value("runs_count"), Some(4.0));
    for f in ["wall", "user", "sys"] {
        for st in ["mean", "median", "stddev", "min", "max"] {
            assert!(
                s.value(&format!("{f}_{st}_s")).is_some(),
                "summary lacks {f}_{st}_s"
            );
        }
    }
    let walls: Vec<f64> = samples.iter().map(|s| s.value("wall_s").unwrap()).collect();
    let min = walls.iter().copied().fold(f64::INFINITY, f64::min);
    let max = walls.iter().copied().fold(0.0, f64::max);
    assert_eq!(s.value("wall_min_s"), Some(min));
    assert_eq!(s.value("wall_max_s"), Some(max));
    let med = s.value("wall_median_s").unwrap();
    assert!(min <= med && med <= max);
    assert!(s.value("max_rss_bytes").is_some());
    assert!(s.info.contains_key("rss_floor_bytes"));
}

#[test]
fn failures_stop_the_series_unless_ignored() {
    let d = scratch();
    let (o, recs) = timecmd(d.path(), &["-n", "3", "--", "false"]);
    assert_eq!(code(&o), 1);
    assert_eq!(of(&recs, Kind::Sample).len(), 1);
    assert!(stderr(&o).contains("--ignore-failure"));

    let (o, recs) = timecmd(d.path(), &["-n", "3", "--ignore-failure", "--", "false"]);
    assert_eq!(code(&o), 1, "the last run's status");
    assert_eq!(of(&recs, Kind::Sample).len(), 3);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.value("runs_count"), Some(3.0));
    assert_eq!(s.value("failed_runs_count"), Some(3.0));
}

#[test]
fn output_redirection() {
    let d = scratch();
    // Inherited: the command's stdout is timecmd's stdout, the records are elsewhere.
    let (o, _) = timecmd(d.path(), &["--", "echo", "hello"]);
    assert_eq!(String::from_utf8_lossy(&o.stdout), "hello\n");

    let (o, _) = timecmd(d.path(), &["--output", "null", "--", "echo", "hello"]);
    assert!(o.stdout.is_empty());

    // A file holds the last run's output.
    let f = d.path().join("out.txt");
    std::fs::write(&f, "old content that must go\n").unwrap();
    let (o, recs) = timecmd(
        d.path(),
        &[
            "-n",
            "3",
            "--output",
            f.to_str().unwrap(),
            "--shell",
            "echo run",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert_eq!(std::fs::read_to_string(&f).unwrap(), "run\n");
    assert_eq!(summary(&recs).name, "echo run");

    // A pipe that timecmd drains: a command that writes 64 MiB finishes.
    let (o, recs) = timecmd(
        d.path(),
        &[
            "--output",
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

    // --input: every run reads the file from its start.
    let input = d.path().join("in.txt");
    std::fs::write(&input, "abc\n").unwrap();
    let (o, _) = timecmd(
        d.path(),
        &[
            "-n",
            "3",
            "--input",
            input.to_str().unwrap(),
            "--output",
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

    // Records on stdout with -o -, the command's output elsewhere.
    let out = Command::new(BIN)
        .args(["-o", "-", "--output", "null", "--", "echo", "hello"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let recs: Vec<Record> = text.lines().map(|l| parse_line(l).unwrap()).collect();
    assert_eq!(recs.len(), 3);
    // Without -o, records go to stderr.
    let out = Command::new(BIN)
        .args(["--output", "null", "--", "true"])
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

/// The pids of the children of `parent`.
fn children(parent: u32) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            && let Some((_, rest)) = stat.rsplit_once(')')
            && rest.split_whitespace().nth(1) == Some(&parent.to_string())
        {
            out.push(pid);
        }
    }
    out
}

#[test]
fn ctrl_c_during_a_run_writes_the_summary_and_exits_130() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    let child = Command::new(BIN)
        .arg("-o")
        .arg(&rec)
        .args(["-n", "5", "--", "sleep", "30"])
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
    // SAFETY: a signal to the process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
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
    let mut child = Command::new(BIN)
        .arg("-o")
        .arg(&rec)
        .args(["-n", "1000", "--", "sleep", "0.05"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while read_records(&rec).len() < 4 && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to the process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143));
    let recs = read_records(&rec);
    let s = summary(&recs);
    assert_eq!(s.status, Some(Status::Partial));
    assert!(s.value("runs_count").unwrap() >= 3.0);
    assert!(s.value("wall_median_s").is_some());
}

/// Max RSS of one dd run that reads 200 MiB into one buffer, in bytes.
fn dd_rss(d: &Path) -> f64 {
    let (o, recs) = timecmd(
        d,
        &[
            "--",
            "dd",
            "if=/dev/zero",
            "of=/dev/null",
            "bs=200M",
            "count=1",
            "status=none",
        ],
    );
    assert_eq!(code(&o), 0, "{}", stderr(&o));
    of(&recs, Kind::Sample)[0].value("max_rss_bytes").unwrap()
}

#[test]
fn max_rss_of_a_200_mib_buffer_within_5_percent() {
    let d = scratch();
    let want = 200.0 * 1024.0 * 1024.0;
    let got = dd_rss(d.path());
    assert!(
        (got - want).abs() / want < 0.05,
        "max RSS {got} bytes for a 200 MiB buffer"
    );
    // GNU time sees the same figure (it counts KiB).
    if !Path::new("/usr/bin/time").exists() {
        eprintln!("skipped: /usr/bin/time is not installed");
        return;
    }
    let o = Command::new("/usr/bin/time")
        .args([
            "-f",
            "%M",
            "dd",
            "if=/dev/zero",
            "of=/dev/null",
            "bs=200M",
            "count=1",
            "status=none",
        ])
        .output()
        .unwrap();
    let gnu_kib: f64 = String::from_utf8_lossy(&o.stderr)
        .trim()
        .lines()
        .last()
        .unwrap()
        .parse()
        .unwrap();
    let gnu = gnu_kib * 1024.0;
    assert!(
        (got - gnu).abs() / gnu < 0.05,
        "timecmd {got} vs GNU time {gnu}"
    );
}

#[test]
fn appends_records_to_an_existing_file() {
    let d = scratch();
    let rec: PathBuf = d.path().join("keep.jsonl");
    std::fs::write(&rec, "").unwrap();
    for _ in 0..2 {
        let st = Command::new(BIN)
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
fn ctrl_c_during_prepare_exits_130() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    let child = Command::new(BIN)
        .arg("-o")
        .arg(&rec)
        .args(["-n", "3", "--prepare", "sleep 30", "--", "true"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while children(child.id()).is_empty() && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: a signal to the process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let recs = read_records(&rec);
    assert_eq!(summary(&recs).status, Some(Status::Failed));
    assert!(of(&recs, Kind::Sample).is_empty());
}

/// Runs `shell_cmd` under script(1) on a new pseudo-terminal, feeding `input` once `ready`
/// holds; kills it after 30 s. Returns its exit code and output.
fn on_a_terminal(shell_cmd: &str, input: &[u8], ready: impl Fn() -> bool) -> Option<(i32, String)> {
    use std::io::{Read, Write};
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: script(1) from util-linux is not installed");
        return None;
    }
    let mut child = Command::new("script")
        .args(["-qec", shell_cmd, "/dev/null"])
        // The same shell whoever runs the tests.
        .env("SHELL", "/bin/sh")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t = Instant::now();
    while !ready() && t.elapsed() < Duration::from_secs(15) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(30) {
            child.kill().unwrap();
            panic!("timecmd on a terminal did not finish: {shell_cmd}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    Some((status.code().unwrap_or(-1), out))
}

#[test]
fn on_a_terminal_the_run_gets_the_foreground() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    // Without the hand-off, the run (in its own process group) would stop on its read.
    let cmd = format!(
        "{BIN} -o {} -- sh -c 'read x; echo got $x'; echo rc=$?",
        rec.display()
    );
    let Some((code, out)) = on_a_terminal(&cmd, b"hello\n", || rec.exists()) else {
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

/// Whether a process whose command line is `cmdline` (NUL-terminated arguments) runs.
fn process_runs(cmdline: &[u8]) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == cmdline))
}

#[test]
fn ctrl_c_typed_on_the_terminal_ends_the_series() {
    let d = scratch();
    let rec = d.path().join("records.jsonl");
    // `exec`: the ^C reaches the whole foreground group, and whether a shell waiting
    // around timecmd survives it depends on the shell (bash does, dash does not), so
    // timecmd's own status comes back through script(1)'s -e. The argument 23.25 is one no
    // other test uses, to find this run's process.
    let cmd = format!("exec {BIN} -o {} -n 5 -- sleep 23.25", rec.display());
    let ready = || process_runs(b"sleep\x0023.25\x00");
    let Some((code, out)) = on_a_terminal(&cmd, b"\x03", ready) else {
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
