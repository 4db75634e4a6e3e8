//! Runs `bench/run --smoke` with the debug binaries and checks that every benchmark ran (or said
//! why it was skipped) and that its records decode strictly with both impls in every comparison.

use benchmatrix_tests::{bin_dir, decode, target_dir, workspace_root};
use measure::Kind;
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;
use testkit::Spawned;

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
    let bin_dir = bin_dir();
    // Scratch on the target directory's file system (O_DIRECT works there where /tmp is tmpfs).
    let scratch = Scratch(target_dir().join(format!("bench-smoke-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let results = scratch.0.join("results.jsonl");
    let blk_dir = scratch.0.join("blk");

    // Output into files, not pipes: nobody reads a pipe while the run goes on.
    let (out_path, err_path) = (scratch.0.join("stdout"), scratch.0.join("stderr"));
    let file = |p: &PathBuf| std::fs::File::create(p).expect("output file");
    let mut child = Spawned::start(
        Command::new("sh")
            .arg(&script)
            .arg("--smoke")
            .arg("-o")
            .arg(&results)
            .arg("--dir")
            .arg(&blk_dir)
            .env("BENCH_BIN", &bin_dir)
            .env("BENCH_LABEL", "smoke")
            .current_dir(&scratch.0)
            .stdout(file(&out_path))
            .stderr(file(&err_path)),
    );
    // Bounded: the smoke run takes seconds; give up (and end it) after 5 minutes.
    let status = child.wait(Duration::from_secs(300));
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
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
