//! Runs `bench/run --smoke` with the debug binaries and checks that every benchmark ran (or said
//! why it was skipped) and that its records decode strictly with both impls in every comparison.

use benchmatrix_tests::{bin_dir, decode, skip, target_dir, workspace_root};
use measure::{Kind, Record};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::Duration;
use testkit::Spawned;

const BENCHES: [&str; 8] = [
    "netpipe", "blkwrite", "blkread", "fsmeta", "timecmd", "pingrt", "cpumem", "collate",
];

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
        skip(&format!("{} is missing", script.display()));
        return;
    }
    // Scratch on the target directory's file system (O_DIRECT works there where /tmp is tmpfs).
    let scratch = Scratch(target_dir().join(format!("bench-smoke-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0).unwrap();
    let results = scratch.0.join("results.jsonl");
    let blk_dir = scratch.0.join("blk");

    let (status, stdout, stderr) = run_smoke(&script, &scratch.0, &results, &blk_dir);
    assert!(
        status.success(),
        "bench/run --smoke failed ({status}):\n{stdout}\n{stderr}"
    );
    // bench/run's own skips (a peer not installed) join the list CI prints at the end.
    for why in stderr.lines().filter_map(|l| l.strip_prefix("skipped: ")) {
        skip(&format!("bench/run: {why}"));
    }

    let text = std::fs::read_to_string(&results).unwrap_or_default();
    let impls = impls_by_bench(&decode(&text));
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

/// The impls measured per (bench, name), from the records that carry a measurement; each
/// record checked for its tags and its label.
fn impls_by_bench(recs: &[Record]) -> BTreeMap<(String, String), BTreeSet<String>> {
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
    impls
}

/// `bench/run --smoke` with the harness's binaries, writing its records to `results` and its
/// block files under `blk_dir`; its exit status, stdout and stderr.
fn run_smoke(
    script: &Path,
    scratch: &Path,
    results: &Path,
    blk_dir: &Path,
) -> (ExitStatus, String, String) {
    // Output into files, not pipes: nobody reads a pipe while the run goes on.
    let (out_path, err_path) = (scratch.join("stdout"), scratch.join("stderr"));
    let file = |p: &PathBuf| std::fs::File::create(p).expect("output file");
    let mut child = Spawned::start(
        Command::new("sh")
            .arg(script)
            .arg("--smoke")
            .arg("-o")
            .arg(results)
            .arg("--dir")
            .arg(blk_dir)
            // The binaries the harness builds, in place of bench/run's release build.
            .env("BENCH_BIN", bin_dir())
            .env("BENCH_LABEL", "smoke")
            .current_dir(scratch)
            .stdout(file(&out_path))
            .stderr(file(&err_path)),
    );
    // Bounded: the smoke run takes seconds; give up (and end it) after 5 minutes.
    let status = child.wait(Duration::from_secs(300));
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    (status, stdout, stderr)
}
