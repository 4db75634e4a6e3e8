//! Runs `bench/run --smoke` with the debug binaries and checks that every benchmark ran (or said
//! why it was skipped) and that its records decode strictly with both impls in every comparison.

use benchmatrix_tests::{bin, decode, workspace_root};
use measure::Kind;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BENCHES: [&str; 5] = ["netpipe", "blkwrite", "timecmd", "pingrt", "collate"];

/// Removes the scratch directory even when the test fails.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn bench_run_smoke() {
    let root = workspace_root();
    let script = root.join("bench/run");
    if !script.exists() {
        eprintln!("skipped: {} is missing", script.display());
        return;
    }
    // The binaries the harness builds, in place of bench/run's release build.
    let bin_dir = bin("timecmd")
        .parent()
        .map(PathBuf::from)
        .expect("binary directory");
    for tool in ["collate", "netpipe", "blkwrite", "pingrt"] {
        let _ = bin(tool);
    }
    // Scratch on the target directory's file system (O_DIRECT works there where /tmp is tmpfs).
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let scratch = Scratch(target.join(format!("bench-smoke-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let results = scratch.0.join("results.jsonl");
    let blk_dir = scratch.0.join("blk");

    let mut child = Command::new("sh")
        .arg(&script)
        .arg("--smoke")
        .arg("-o")
        .arg(&results)
        .arg("--dir")
        .arg(&blk_dir)
        .env("BENCH_BIN", &bin_dir)
        .env("BENCH_LABEL", "smoke")
        .current_dir(&scratch.0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot run sh bench/run");
    // Bounded: the smoke run takes seconds; give up (and end it) after 5 minutes.
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("bench/run --smoke did not finish in 5 minutes");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        status.success(),
        "bench/run --smoke failed ({status}):\n{stdout}\n{stderr}"
    );
    for line in stderr.lines().filter(|l| l.starts_with("skipped:")) {
        eprintln!("{line}");
    }

    let text = std::fs::read_to_string(&results).unwrap_or_default();
    let recs = decode(&text);
    // impls per (bench, name), from the records that carry a measurement.
    let mut impls: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for r in recs
        .iter()
        .filter(|r| matches!(r.kind, Kind::Sample | Kind::Summary))
    {
        let bench = r.tags.get("bench").cloned().unwrap_or_default();
        let imp = r
            .tags
            .get("impl")
            .unwrap_or_else(|| panic!("a record without tag impl: {}", r.to_line()));
        assert!(
            BENCHES.contains(&bench.as_str()),
            "record with tag bench={bench}: {}",
            r.to_line()
        );
        assert_eq!(r.label, "smoke", "BENCH_LABEL reaches every record");
        impls
            .entry((bench, r.name.clone()))
            .or_default()
            .insert(imp.clone());
    }
    for ((bench, name), set) in &impls {
        assert!(
            set.len() >= 2,
            "{bench} / {name}: only {set:?} measured; a comparison needs the tool and a peer\n{stderr}"
        );
    }
    for bench in BENCHES {
        let ran = impls.keys().any(|(b, _)| b == bench);
        let skipped = stderr
            .lines()
            .any(|l| l.starts_with(&format!("skipped: {bench}")));
        assert!(
            ran || skipped,
            "{bench}: no records and no `skipped: {bench}...` line\n{stderr}"
        );
        if ran {
            // The report printed its comparison for it.
            assert!(
                stdout.contains(&format!("== {bench}: ")),
                "{bench}: no comparison in the report\n{stdout}"
            );
        }
    }
    // What ran compared our tool with a peer (every tool's own impl name is in its bench).
    for ((bench, name), set) in &impls {
        assert!(
            set.iter().any(|i| i.starts_with(bench.as_str())),
            "{bench} / {name}: the tool itself is missing from {set:?}"
        );
    }
    assert!(
        !blk_dir.join("bench.dat").exists(),
        "bench/run left its scratch file behind"
    );
}
