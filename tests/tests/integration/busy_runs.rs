//! The same measurement twice, once beside CPU hogs: each run's begin and summary name the
//! load the kernel reported (the load average, the runnable tasks, the CPU count, the steal
//! over the run, the tool's involuntary switches), and collate shows it: a `load` line in
//! the facts block and the hog run's cells marked †, each mark following the recorded
//! numbers (the machine's own load decides nothing in this test).

use benchmatrix_tests::{bin, decode, need_tool, ok, run};
use measure::{Kind, Record};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use testkit::Spawned;

/// Busy loops, each bounded by timeout(1), ended by their pids when dropped (on failure too):
/// SIGTERM to each timeout, which passes it to its loop, then SIGKILL to any left.
struct Hogs(Vec<Spawned>);

impl Hogs {
    fn start(n: usize) -> Hogs {
        let hogs = (0..n)
            .map(|_| {
                Spawned::start(
                    Command::new("timeout")
                        .args(["20", "sh", "-c", "while :; do :; done"])
                        .stdout(Stdio::null())
                        .stderr(Stdio::null()),
                )
            })
            .collect();
        Hogs(hogs)
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for h in &self.0 {
            h.signal(libc::SIGTERM);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// procs_running of /proc/stat now.
fn procs_running() -> u64 {
    std::fs::read_to_string("/proc/stat")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("procs_running ")?.trim().parse().ok())
        .unwrap_or(0)
}

/// cpumem's system call probe, briefly, under `label`, appending to `file`.
fn measure(label: &str, file: &Path) {
    let out = run(Command::new(bin("cpumem"))
        .args([
            "--only", "syscall", "-t", "200ms", "-c", "5", "-q", "--label", label, "-o",
        ])
        .arg(file));
    ok(&out, "cpumem");
}

/// A number of a record's info.
fn num(r: &Record, key: &str) -> f64 {
    r.info.get(key).and_then(Value::as_f64).unwrap_or_else(|| {
        panic!(
            "{:?} of {}'s {:?} has no number {key}",
            r.kind, r.label, r.info
        )
    })
}

/// Whether the run of these begin and summary was busy, by the rule collate documents.
fn busy_by_the_numbers(b: &Record, s: &Record) -> bool {
    let cpus = num(b, "cpu_count");
    let load = num(b, "load_1m").max(num(s, "load_1m_end"));
    let runnable = num(b, "procs_running_count").max(num(s, "procs_running_end_count")) - 1.0;
    load > cpus || runnable > cpus || num(s, "steal_ratio") > 0.05
}

#[test]
fn a_run_beside_cpu_hogs_names_its_load_and_its_cells_are_marked() {
    if !need_tool("timeout") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("r.jsonl");
    measure("alone", &file);
    let cpus = measure::envfacts::Probe::system().cpu_count();
    let n = 3 * cpus;
    let hogs = Hogs::start(n);
    let until = Instant::now() + Duration::from_secs(5);
    while procs_running() < n as u64 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    measure("hogs", &file);
    drop(hogs);

    let records = decode(&std::fs::read_to_string(&file).expect("the records"));
    let of = |label: &str, kind: Kind| {
        records
            .iter()
            .find(|r| r.label == label && r.kind == kind)
            .unwrap_or_else(|| panic!("no {kind:?} of {label}"))
    };
    let (b, s) = (of("hogs", Kind::Begin), of("hogs", Kind::Summary));
    // The kernel counted the hogs among the runnable tasks at begin and at the end.
    assert!(num(b, "procs_running_count") >= n as f64, "{:?}", b.info);
    assert!(
        num(s, "procs_running_end_count") >= n as f64,
        "{:?}",
        s.info
    );
    assert_eq!(num(b, "cpu_count"), cpus as f64);
    assert!(num(b, "cpu_usable_count") >= 1.0);
    for label in ["alone", "hogs"] {
        assert!(num(of(label, Kind::Begin), "load_1m") >= 0.0);
        assert!(num(of(label, Kind::Summary), "load_1m_end") >= 0.0);
    }
    let steal = num(s, "steal_ratio");
    assert!((0.0..=1.0).contains(&steal), "{steal}");
    num(s, "tool_involuntary_switches_count");
    assert!(busy_by_the_numbers(b, s), "{:?} {:?}", b.info, s.info);

    // collate: each column's cells marked as its numbers say, and the load line.
    let alone_busy = busy_by_the_numbers(of("alone", Kind::Begin), of("alone", Kind::Summary));
    check_json(&file, alone_busy);
    let text = run(Command::new(bin("collate")).arg(&file));
    ok(&text, "collate");
    let text = String::from_utf8_lossy(&text.stdout);
    let facts = text.split("facts that differ:").nth(1).unwrap_or("");
    assert!(
        facts.lines().any(|l| l.trim_start().starts_with("load ")),
        "{text}"
    );
}

/// collate's JSON of `file`: the cells of the alone column marked as `alone_busy` says, the
/// hog column's all marked, and the load fact of each column busy or quiet to match.
fn check_json(file: &Path, alone_busy: bool) {
    let out = run(Command::new(bin("collate")).args(["-f", "json"]).arg(file));
    ok(&out, "collate");
    let v: Value = serde_json::from_slice(&out.stdout).expect("collate's JSON");
    let labels: Vec<&str> = v["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["key"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(labels, ["alone", "hogs"]);
    for row in v["rows"].as_array().expect("rows") {
        let cells = row["cells"].as_array().expect("cells");
        for (c, busy) in cells.iter().zip([alone_busy, true]) {
            let text = c["text"].as_str().unwrap_or("");
            assert_eq!(c["busy"].as_u64().is_some_and(|b| b > 0), busy, "{c}");
            assert_eq!(text.contains('†'), busy, "{text}");
        }
    }
    let loads: Vec<&str> = v["columns"]
        .as_array()
        .expect("columns")
        .iter()
        .map(|c| c["facts"]["load"].as_str().unwrap_or(""))
        .collect();
    assert!(loads[1].starts_with("busy: "), "{loads:?}");
    assert!(
        loads[0].starts_with(if alone_busy { "busy: " } else { "quiet: " }),
        "{loads:?}"
    );
}
