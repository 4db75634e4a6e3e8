//! cpumem through its binary: the records of every probe (a row each, a sample per batch, the
//! one summary with every probe's statistics), --name, --cpu, usage errors and Ctrl-C.

use measure::{Kind, Record, Status, parse_line};
use std::process::{Command, Output, Stdio};
use std::time::Duration;
use testkit::Spawned;

fn cpumem(args: &[&str]) -> Output {
    Command::new(testkit::tool("cpumem"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cpumem")
}

fn records(out: &Output) -> Vec<Record> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn explain(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The samples that carry `key` (one probe's).
fn samples<'a>(recs: &'a [Record], key: &str) -> Vec<&'a Record> {
    recs.iter()
        .filter(|r| r.kind == Kind::Sample && r.values.contains_key(key))
        .collect()
}

/// The summary's headlines as (key, role).
fn headlines(r: &Record) -> Vec<(String, String)> {
    r.headlines
        .iter()
        .map(|h| (h.key.clone(), h.role.clone()))
        .collect()
}

/// (probe, row, sample key) of every probe, in the order they run.
const ROWS: &[(&str, &str, &str)] = &[
    ("syscall", "system call round trip", "syscall_s"),
    (
        "pipe1",
        "pipe round trip on one CPU",
        "pipe_one_cpu_round_trip_s",
    ),
    (
        "pipe2",
        "pipe round trip across two CPUs",
        "pipe_two_cpus_round_trip_s",
    ),
    ("spawn", "process spawn and wait", "spawn_s"),
    ("fault", "page fault on first touch", "page_fault_s"),
    ("memread", "memory read bandwidth", "mem_read_bytes_per_s"),
    (
        "memwrite",
        "memory write bandwidth",
        "mem_write_bytes_per_s",
    ),
    ("memcopy", "memory copy bandwidth", "mem_copy_bytes_per_s"),
    (
        "memlat",
        "memory load latency of a random chase",
        "mem_latency_s",
    ),
    ("clock", "monotonic clock read", "clock_read_s"),
];

/// `syscall_s` -> `syscall_median_s`.
fn stat(key: &str, s: &str) -> String {
    let suffix = measure::record::unit_suffix(key).expect("a unit");
    format!("{}_{s}{suffix}", &key[..key.len() - suffix.len()])
}

#[test]
fn every_probe_is_a_row_of_batches_and_the_summary_holds_their_statistics() {
    if !two_cpus() {
        testkit::skip("the pipe across two CPUs needs two CPUs to use");
        return;
    }
    let out = cpumem(&["-t", "60ms", "-c", "3", "-s", "4M", "--label", "a/b"]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let recs = records(&out);
    let begin = &recs[0];
    assert_eq!(begin.kind, Kind::Begin);
    for fact in [
        "cpu_model",
        "clocksource",
        "transparent_hugepage",
        "governor",
        "cpus_used",
        "llc_bytes",
        "kernel",
    ] {
        assert!(
            begin.info.contains_key(fact),
            "begin lacks {fact}: {:?}",
            begin.info
        );
    }
    assert_eq!(begin.info["stream_buffer_bytes"], 4 << 20);
    assert!(recs.iter().all(|r| r.name == "cpumem"), "one run, one name");
    for (probe, _, key) in ROWS {
        let s = samples(&recs, key);
        assert_eq!(
            s.len(),
            3,
            "{probe}: one sample per batch\n{}",
            explain(&out)
        );
        for r in &s {
            assert_eq!(r.values.len(), 1, "{probe}: one figure: {:?}", r.values);
            let v = r.value(key).unwrap_or_else(|| panic!("{probe}: no {key}"));
            assert!(v > 0.0 && v.is_finite(), "{probe}: {key} = {v}");
            assert!(r.info["ops"].as_u64().unwrap() >= 1);
        }
    }
    let summary = recs.last().expect("a summary");
    assert_eq!(summary.kind, Kind::Summary);
    assert_eq!(summary.status, Some(Status::Ok));
    // One run, a row per probe: "cpumem: system call round trip" and so on.
    assert_eq!(summary.headline.as_deref(), Some("syscall_median_s"));
    let want: Vec<(String, String)> = ROWS
        .iter()
        .map(|(_, row, key)| (stat(key, "median"), row.to_string()))
        .collect();
    assert_eq!(headlines(summary), want);
    for (probe, _, key) in ROWS {
        let (p10, med, p90) = (
            summary.value(&stat(key, "p10")),
            summary.value(&stat(key, "median")),
            summary.value(&stat(key, "p90")),
        );
        let (p10, med, p90) = (p10.unwrap(), med.unwrap(), p90.unwrap());
        assert!(p10 <= med && med <= p90, "{probe}: {p10} {med} {p90}");
        assert!(
            summary.info["probes"][*probe]["ops_per_batch"]
                .as_u64()
                .is_some()
        );
    }
    assert!(recs.iter().all(|r| r.label == "a/b"));
    assert_eq!(recs.iter().filter(|r| r.kind == Kind::Summary).count(), 1);
}

#[test]
fn name_names_the_run_and_each_probe_is_a_role_of_it() {
    let two = cpumem(&[
        "--only",
        "clock,syscall",
        "-t",
        "20ms",
        "-c",
        "2",
        "--name",
        "vm1",
    ]);
    assert_eq!(two.status.code(), Some(0), "{}", explain(&two));
    let recs = records(&two);
    assert!(recs.iter().all(|r| r.name == "vm1"), "{}", explain(&two));
    assert_eq!(samples(&recs, "syscall_s").len(), 2);
    assert_eq!(samples(&recs, "clock_read_s").len(), 2);
    let roles: Vec<String> = headlines(recs.last().unwrap())
        .into_iter()
        .map(|h| h.1)
        .collect();
    assert_eq!(roles, ["system call round trip", "monotonic clock read"]);
    let one = cpumem(&[
        "--only", "syscall", "-t", "20ms", "-c", "2", "--name", "vm1",
    ]);
    let recs = records(&one);
    assert!(recs.iter().all(|r| r.name == "vm1"), "{}", explain(&one));
    assert_eq!(
        recs.last().unwrap().headline.as_deref(),
        Some("syscall_median_s")
    );
}

/// Whether this process may use two CPUs or more.
pub fn two_cpus() -> bool {
    std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2)
}

#[test]
fn cpu_pins_both_pipe_processes_to_one_cpu_and_skips_the_two_cpu_row() {
    let out = cpumem(&["--only", "pipe", "--cpu", "0", "-t", "40ms", "-c", "2"]);
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    let recs = records(&out);
    assert_eq!(recs[0].info["cpus_used"], "0");
    assert_eq!(recs[0].info["pinned_cpu"], 0);
    let one = samples(&recs, "pipe_one_cpu_round_trip_s");
    assert_eq!(one.len(), 2, "{}", explain(&out));
    for r in one {
        assert_eq!(r.info["same_cpu"], true, "{:?}", r.info);
        assert_eq!(r.info["cpu"], 0);
    }
    assert!(samples(&recs, "pipe_two_cpus_round_trip_s").is_empty());
    let summary = recs.last().unwrap();
    assert_eq!(summary.info["probes"]["pipe1"]["shared_cpu"], "yes");
    let why = summary.info["skipped"]["pipe round trip across two CPUs"]
        .as_str()
        .unwrap_or_default();
    assert!(why.contains("CPU 0 only"), "{}", explain(&out));
}

#[test]
fn bad_flags_name_themselves_and_exit_2() {
    for (args, says) in [
        (
            &["--only", "syscall,disk"][..],
            "--only syscall,disk: unknown probe disk",
        ),
        (&["-t", "0"][..], "-t 0: give a time per probe"),
        (&["-t", "5x"][..], "-t 5x"),
        (
            &["--cpu", "4095"][..],
            "--cpu 4095: this process may run on CPUs",
        ),
        (&["-s", "1k"][..], "-s 1k: give at least 4k"),
        (&["-c", "0"][..], "--count"),
        (
            &["-t", "1ms", "-c", "10000"][..],
            "-t 1ms -c 10000: each batch would last 100ns",
        ),
    ] {
        let out = cpumem(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", explain(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(
            out.stdout.is_empty(),
            "{args:?}: no records on a usage error"
        );
    }
}

#[test]
fn a_probe_that_cannot_run_fails_alone_and_the_others_still_count() {
    // 300 MB of address space: the system call runs, a 512 MiB read buffer cannot be had.
    let out = Command::new("sh")
        .arg("-c")
        .arg(r#"ulimit -v 300000 && exec "$BIN" --only syscall,memread -s 512M -t 40ms -c 2"#)
        .env("BIN", testkit::tool("cpumem"))
        .stdin(Stdio::null())
        .output()
        .expect("run cpumem under ulimit -v");
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let recs = records(&out);
    assert_eq!(samples(&recs, "syscall_s").len(), 2);
    let failed: Vec<&Record> = recs
        .iter()
        .filter(|r| r.kind == Kind::Sample && r.info.get("probe").is_some_and(|p| p == "memread"))
        .collect();
    assert_eq!(failed.len(), 1, "{}", explain(&out));
    let why = failed[0].error.as_deref().unwrap_or_default();
    assert!(why.contains("536870912 bytes"), "{why}");
    assert!(failed[0].values.is_empty());
    let summary = recs.last().unwrap();
    assert_eq!(summary.status, Some(Status::Ok), "{}", summary.to_line());
    assert_eq!(summary.headline.as_deref(), Some("syscall_median_s"));
    assert_eq!(
        summary.headlines.len(),
        1,
        "a row for the probe that ran only"
    );
    assert!(summary.info["failed"]["memory read bandwidth"].is_string());
}

#[test]
fn ctrl_c_ends_with_a_partial_summary_of_the_batches_so_far() {
    let dir = std::env::temp_dir().join(format!("cpumem-int-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("r.jsonl");
    let mut child = Spawned::start(
        Command::new(testkit::tool("cpumem"))
            .args(["--only", "syscall,clock", "-t", "60s", "-c", "600", "-o"])
            .arg(&file)
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    // Until two batches are written (at most 20 s), then Ctrl-C's signal.
    let mut lines = 0;
    for _ in 0..200 {
        lines = std::fs::read_to_string(&file).map_or(0, |t| t.lines().count());
        if lines >= 3 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(lines >= 3, "no batches written");
    assert!(testkit::signal(child.pid(), libc::SIGINT));
    let status = child.wait(Duration::from_secs(20));
    let text = std::fs::read_to_string(&file).expect("records");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(status.code(), Some(130));
    let recs: Vec<Record> = text
        .lines()
        .map(|l| parse_line(l).expect("a record"))
        .collect();
    let summary = recs.last().expect("a summary");
    assert_eq!(summary.kind, Kind::Summary);
    assert_eq!(summary.status, Some(Status::Partial));
    assert_eq!(summary.error.as_deref(), Some("interrupted"));
    assert!(
        summary.value("syscall_median_s").is_some(),
        "{}",
        summary.to_line()
    );
    assert!(
        samples(&recs, "clock_read_s").is_empty(),
        "the clock probe never ran"
    );
}
