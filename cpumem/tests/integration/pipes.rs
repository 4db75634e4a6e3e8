//! The pipe round trip as two rows: both processes on one CPU, and on two CPUs, each pinned
//! as its row says (the kernel's CPU numbers in every sample prove it); the one-CPU row the
//! faster; the two-CPU row skipped, saying why, in a cpuset of one CPU.

use crate::records::two_cpus;
use measure::{Kind, Record, Status, parse_line};
use std::process::{Command, Output, Stdio};

const ONE: &str = "pipe_one_cpu_round_trip_s";
const TWO: &str = "pipe_two_cpus_round_trip_s";

fn run(program: &str, args: &[&str]) -> (Output, Vec<Record>) {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cpumem");
    let recs = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| parse_line(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (out, recs)
}

fn explain(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The samples of `key`'s row.
fn rows<'a>(recs: &'a [Record], key: &str) -> Vec<&'a Record> {
    recs.iter()
        .filter(|r| r.kind == Kind::Sample && r.values.contains_key(key))
        .collect()
}

#[test]
fn the_pipe_is_a_row_on_one_cpu_and_a_row_across_two_and_one_cpu_is_faster() {
    if !two_cpus() {
        testkit::skip("the pipe across two CPUs needs two CPUs to use");
        return;
    }
    let cpumem = testkit::tool("cpumem");
    // Rounds, each measuring both rows one after the other, so that a load that comes and
    // goes falls on both; the one-CPU row must be the faster in most of them. Unloaded it is
    // several times faster (two context switches on one CPU against two wake-ups across).
    let mut faster = 0;
    let mut seen = Vec::new();
    for _ in 0..3 {
        let (out, recs) = run(cpumem, &["--only", "pipe", "-t", "200ms", "-c", "5"]);
        assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
        let (one, two) = (rows(&recs, ONE), rows(&recs, TWO));
        assert_eq!((one.len(), two.len()), (5, 5), "{}", explain(&out));
        // What the kernel says: the second process replied from the CPU of its row.
        for r in &one {
            assert_eq!(r.info["same_cpu"], true, "{:?}", r.info);
        }
        for r in &two {
            assert_eq!(r.info["same_cpu"], false, "{:?}", r.info);
            assert_ne!(r.info["cpu"], r.info["peer_cpu"], "{:?}", r.info);
        }
        let s = recs.last().expect("a summary");
        assert_eq!(s.status, Some(Status::Ok));
        let roles: Vec<&str> = s.headlines.iter().map(|h| h.role.as_str()).collect();
        assert_eq!(
            roles,
            [
                "pipe round trip on one CPU",
                "pipe round trip across two CPUs"
            ]
        );
        assert_eq!(s.info["probes"]["pipe1"]["shared_cpu"], "yes");
        assert_eq!(s.info["probes"]["pipe2"]["shared_cpu"], "no");
        let (m1, m2) = (
            s.value("pipe_one_cpu_round_trip_median_s")
                .unwrap_or(f64::NAN),
            s.value("pipe_two_cpus_round_trip_median_s")
                .unwrap_or(f64::NAN),
        );
        seen.push((m1, m2));
        faster += usize::from(m1 < m2);
    }
    assert!(
        faster >= 2,
        "one CPU against two, medians of each round: {seen:?}"
    );
}

#[test]
fn a_cpuset_of_one_cpu_skips_the_two_cpu_row_and_says_why() {
    if !testkit::need_tool("taskset") {
        return;
    }
    let cpumem = testkit::tool("cpumem");
    let (out, recs) = run(
        "taskset",
        &["-c", "0", cpumem, "--only", "pipe", "-t", "40ms", "-c", "2"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", explain(&out));
    assert_eq!(rows(&recs, ONE).len(), 2, "{}", explain(&out));
    assert!(rows(&recs, TWO).is_empty(), "{}", explain(&out));
    let s = recs.last().expect("a summary");
    assert_eq!(s.status, Some(Status::Ok));
    assert_eq!(s.headlines.len(), 1);
    let why = s.info["skipped"]["pipe round trip across two CPUs"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("CPU 0 only") && why.contains("no second CPU"),
        "{}",
        explain(&out)
    );
    // Asked for the two-CPU row alone, the run measured nothing: exit 1, failed, saying why.
    let (out, recs) = run(
        "taskset",
        &[
            "-c", "0", cpumem, "--only", "pipe2", "-t", "40ms", "-c", "2",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", explain(&out));
    let s = recs.last().expect("a summary");
    assert_eq!(s.status, Some(Status::Failed));
    let error = s.error.as_deref().unwrap_or_default();
    assert!(
        error.contains("skipped") && error.contains("CPU 0 only"),
        "{error}"
    );
}
