//! The series: time limits, --setup/--prepare/--cleanup, a record per run, max RSS against GNU time.
#![allow(clippy::unwrap_used)] // test helpers panic on a broken setup, as the tests do

use crate::common::*;
use measure::record::{Kind, Status};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[test]
fn time_limit_kills_the_whole_process_group() {
    let d = scratch();
    let pids = d.path().join("pids");
    let script = r#"sleep 60 & echo $! >> "$PIDS"; sh -c 'sleep 60' & echo $! >> "$PIDS"; wait"#;
    let t = Instant::now();
    let (o, recs) = timecmd_env(
        d.path(),
        &["--time-limit", "500ms", "--", "sh", "-c", script],
        &[("PIDS", pids.as_os_str())],
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
            "-r",
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
    let env = [("LOG", log.as_os_str())];
    let (o, recs) = timecmd_env(
        d.path(),
        &[
            "--warmup",
            "1",
            "-r",
            "3",
            "--setup",
            r#"echo setup >> "$LOG""#,
            "--prepare",
            r#"echo prepare >> "$LOG"; echo this stdout is discarded"#,
            "--cleanup",
            r#"echo cleanup >> "$LOG""#,
            "--stdout",
            "null",
            "--",
            "sh",
            "-c",
            r#"echo run >> "$LOG""#,
        ],
        &env,
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
    let (o, recs) = timecmd_env(
        d.path(),
        &[
            "-r",
            "3",
            "--prepare",
            "exit 4",
            "--cleanup",
            r#"echo cleanup >> "$LOG""#,
            "--",
            "true",
        ],
        &env,
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
            "-r", "4", "--label", "bare/xfs", "--tag", "k=v", "--", "sleep", "0.05",
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
    if !testkit::need_tool("time") {
        return;
    }
    let o = Command::new("time")
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
