//! Runs counted per suite invocation: every record of one `./benchmatrix` carries the same
//! invocation id, a new one each time, and after three invocations every cell of the matrix
//! pools three runs (x3), however many tool processes each step ran.

use benchmatrix_tests::suite::{folders, script};
use benchmatrix_tests::{bin, decode, ok, path_str as s, run};
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn three_invocations_are_three_runs_in_every_cell() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let [work, scratch, res] = folders(tmp.path(), ["work", "tmp", "results"]);
    let args = [
        "--only",
        "tar,disk",
        "--runs",
        "2",
        "--disk-size",
        "16M",
        "--label",
        "inv/test",
        "--results",
        s(&res),
        "--no-matrix",
    ];
    for i in 0..3 {
        let out = script(&work, &scratch, &[], &args);
        ok(&out, &format!("invocation {i}"));
    }
    let file = res.join("inv_test.jsonl");
    let recs = decode(&std::fs::read_to_string(&file).expect("the results file"));
    let ids: BTreeSet<&str> = recs
        .iter()
        .map(|r| {
            r.invocation
                .as_deref()
                .expect("every record names its invocation")
        })
        .collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    let runs: BTreeSet<&str> = recs.iter().map(|r| r.run.as_str()).collect();
    assert!(runs.len() > 6, "several tool runs per invocation: {runs:?}");
    let out = run(Command::new(bin("collate")).args(["-f", "json"]).arg(&file));
    ok(&out, "collate");
    let m: serde_json::Value = serde_json::from_slice(&out.stdout).expect("collate's JSON");
    let rows = m["rows"].as_array().expect("rows");
    assert!(rows.len() >= 4, "{m}");
    for r in rows {
        assert_eq!(
            r["cells"][0]["runs"], 3,
            "{}: {}",
            r["title"], r["cells"][0]
        );
    }
}

#[test]
fn a_tool_takes_its_invocation_from_the_environment_and_refuses_a_bad_one() {
    let out = run(Command::new(bin("timecmd"))
        .args(["-r", "1", "-q", "-o", "-", "true"])
        .env("BENCHMATRIX_INVOCATION", "nightly-2026-12-03"));
    ok(&out, "timecmd");
    let recs = decode(&String::from_utf8_lossy(&out.stdout));
    assert!(!recs.is_empty());
    assert!(
        recs.iter()
            .all(|r| r.invocation.as_deref() == Some("nightly-2026-12-03"))
    );
    let out = run(Command::new(bin("timecmd"))
        .args(["-r", "1", "-q", "-o", "-", "true"])
        .env("BENCHMATRIX_INVOCATION", "two words"));
    // A usage error: timecmd's is 125, as time(1)'s and env(1)'s are.
    assert_eq!(out.status.code(), Some(125));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("BENCHMATRIX_INVOCATION=\"two words\" is not a suite invocation id"),
        "{err}"
    );
    // Unset or empty: a run of its own, with no invocation in its records.
    let out = run(Command::new(bin("timecmd"))
        .args(["-r", "1", "-q", "-o", "-", "true"])
        .env("BENCHMATRIX_INVOCATION", ""));
    ok(&out, "timecmd");
    assert!(
        decode(&String::from_utf8_lossy(&out.stdout))
            .iter()
            .all(|r| r.invocation.is_none())
    );
}
