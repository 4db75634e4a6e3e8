//! A known slowdown must show: under a tracer (`strace -f`, which stops the process at every
//! system call's entry and exit) the system call row grows many times over, while the memory
//! rows, whose passes make no system call, stay where they are. Plain and traced runs
//! alternate, so that a busy machine weighs on both alike.

use measure::{Kind, Record, parse_line};
use std::path::Path;
use std::process::{Command, Stdio};

const ARGS: &[&str] = &[
    "--only",
    "syscall,memread,memcopy",
    "-t",
    "300ms",
    "-c",
    "5",
    "-s",
    "64M",
    "-q",
];

/// The summary of one run, plain or under `strace -f`, its records appended to `file`.
fn run_once(traced: bool, file: &Path) -> Record {
    let _ = std::fs::remove_file(file);
    let exe = testkit::tool("cpumem");
    let mut c = if traced {
        let mut c = Command::new("strace");
        c.args(["-f", "-o", "/dev/null", exe]);
        c
    } else {
        Command::new(exe)
    };
    let out = c
        .args(ARGS)
        .arg("-o")
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .expect("run cpumem");
    assert!(
        out.status.success(),
        "cpumem (traced: {traced}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(file).expect("the records");
    let recs: Vec<Record> = text
        .lines()
        .map(|l| parse_line(l).expect("a record"))
        .collect();
    let last = recs.last().expect("a summary").clone();
    assert_eq!(last.kind, Kind::Summary);
    last
}

/// Whether strace can trace here (ptrace may be refused in a container).
fn strace_works() -> bool {
    if !testkit::need_tool("strace") {
        return false;
    }
    let ok = Command::new("strace")
        .args(["-f", "-o", "/dev/null", "true"])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        testkit::skip("strace cannot trace here (ptrace refused)");
    }
    ok
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    measure::stats::quantile_sorted(&v, 0.5)
}

#[test]
fn a_tracer_slows_the_system_call_and_not_the_memory() {
    if !strace_works() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("cpumem-strace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let file = dir.join("r.jsonl");
    let mut plain = Vec::new();
    let mut traced = Vec::new();
    for _ in 0..3 {
        plain.push(run_once(false, &file));
        traced.push(run_once(true, &file));
    }
    let _ = std::fs::remove_dir_all(&dir);
    let ratio = |key: &str| {
        let m = |rs: &[Record]| median(rs.iter().map(|r| r.value(key).expect(key)).collect());
        m(&traced) / m(&plain)
    };
    let syscall = ratio("syscall_median_s");
    let read = ratio("mem_read_median_bytes_per_s");
    let copy = ratio("mem_copy_median_bytes_per_s");
    let all =
        format!("traced/plain: syscall {syscall:.1}x, memread {read:.2}x, memcopy {copy:.2}x");
    eprintln!("{all}");
    // A traced system call costs two tracer stops (tens of microseconds against a fraction
    // of one): far more than 5x.
    assert!(syscall > 5.0, "{all}");
    // A pass over memory makes no system call: the tracer leaves it alone (the band is wide
    // for a busy machine, far narrower than the system call's move).
    for r in [read, copy] {
        assert!((1.0 / 3.0..3.0).contains(&r), "{all}");
    }
}
