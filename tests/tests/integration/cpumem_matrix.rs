//! cpumem's records through collate: one row per probe, "cpumem: ROLE" (a headline each of
//! the one summary), its cell from the probe's samples.

use benchmatrix_tests::{bin, cpumem_rows, ok, run};
use std::process::Command;

#[test]
fn every_probe_is_one_row_of_the_matrix() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("r.jsonl");
    for label in ["vm-a", "vm-b"] {
        let out = run(Command::new(bin("cpumem"))
            .args([
                "-t", "30ms", "-c", "3", "-s", "4M", "-q", "--label", label, "-o",
            ])
            .arg(&file));
        ok(&out, "cpumem");
    }
    let out = run(Command::new(bin("collate")).args(["-f", "csv"]).arg(&file));
    ok(&out, "collate");
    // The tidy table: a line per (row, column) cell, the row's name first.
    let text = String::from_utf8_lossy(&out.stdout);
    let cells: Vec<(&str, &str)> = text
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split(',');
            Some((f.next()?, f.next()?))
        })
        .collect();
    let mut rows: Vec<&str> = cells.iter().map(|c| c.0).collect();
    rows.dedup();
    let roles = cpumem_rows();
    assert_eq!(rows, roles, "{text}");
    for role in &roles {
        let labels: Vec<&str> = cells.iter().filter(|c| c.0 == role).map(|c| c.1).collect();
        assert_eq!(labels, ["vm-a", "vm-b"], "{role}\n{text}");
    }
}
