//! A matrix cell of one run is the figure the tool itself reports: fsmeta's phase rates (the
//! mean of equal-time slices, which is the work over the time), cpumem's probe medians and
//! blkread's throughput, each headline of the summary against its row's cell.

use benchmatrix_tests::{bin, ok, run};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The summary of the records in `file`.
fn summary(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).expect("records");
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["type"] == "summary")
        .expect("a summary")
}

/// Checks every headline of the summary in `file` against its row's cell in collate's JSON:
/// equal (to 1e-9 of the value), and inside the cell's interval where it has one.
fn cells_are_the_tools_figures(file: &Path) {
    let s = summary(file);
    assert_eq!(s["status"], "ok", "{s}");
    let out = run(Command::new(bin("collate")).args(["-f", "json"]).arg(file));
    ok(&out, "collate");
    let m: Value = serde_json::from_slice(&out.stdout).expect("collate's JSON");
    let name = s["name"].as_str().expect("name");
    for h in s["headlines"].as_array().expect("headlines") {
        let (key, role) = (
            h["key"].as_str().unwrap_or(""),
            h["role"].as_str().unwrap_or(""),
        );
        let own = s["values"][key].as_f64().expect("the headline's value");
        let title = format!("{name}: {role} (");
        let row = m["rows"]
            .as_array()
            .and_then(|r| {
                r.iter()
                    .find(|r| r["title"].as_str().is_some_and(|t| t.starts_with(&title)))
            })
            .unwrap_or_else(|| panic!("no row {title}: {m}"));
        let c = &row["cells"][0];
        let value = c["value"].as_f64().expect("a cell");
        assert!(
            (value - own).abs() <= 1e-9 * own.abs(),
            "{title}: the cell {value} is not the tool's {own} ({key})"
        );
        if let (Some(lo), Some(hi)) = (c["ci_low"].as_f64(), c["ci_high"].as_f64()) {
            assert!(lo <= own && own <= hi, "{title}: {own} outside {lo}..{hi}");
        }
    }
}

#[test]
fn fsmeta_cpumem_and_blkread_cells_are_their_own_figures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let d = dir.path();
    let work = d.join("work");
    std::fs::create_dir(&work).expect("work dir");
    let runs: [(&str, Vec<String>); 3] = [
        (
            "fsmeta",
            vec!["-n".into(), "3000".into(), work.display().to_string()],
        ),
        (
            "cpumem",
            [
                "-t",
                "30ms",
                "-c",
                "6",
                "-s",
                "4M",
                "--only",
                "syscall,memread",
            ]
            .map(String::from)
            .to_vec(),
        ),
        (
            "blkread",
            vec![
                "--create".into(),
                "8M".into(),
                "--random".into(),
                "-t".into(),
                "300ms".into(),
                work.join("scratch").display().to_string(),
            ],
        ),
    ];
    for (tool, args) in runs {
        let file = d.join(format!("{tool}.jsonl"));
        let out = run(Command::new(bin(tool))
            .args(&args)
            .arg("-q")
            .arg("-o")
            .arg(&file));
        ok(&out, tool);
        cells_are_the_tools_figures(&file);
    }
}
