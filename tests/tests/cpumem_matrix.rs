//! cpumem's records through collate: one row per probe, named by its role, from the
//! samples, and no row of the summary's own (its headline maps to the last row's samples).

use benchmatrix_tests::{bin, ok, run};
use std::process::Command;

const ROLES: [&str; 9] = [
    "system call round trip",
    "pipe round trip between two processes",
    "process spawn and wait",
    "page fault on first touch",
    "memory read bandwidth",
    "memory write bandwidth",
    "memory copy bandwidth",
    "memory load latency, random chase",
    "monotonic clock read",
];

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
    let out = run(Command::new(bin("collate")).arg(&file));
    ok(&out, "collate");
    let text = String::from_utf8_lossy(&out.stdout);
    // The text matrix: a header line (one label level), the rows, a blank line, the notes.
    let rows: Vec<&str> = text.lines().skip(1).take_while(|l| !l.is_empty()).collect();
    assert_eq!(rows.len(), ROLES.len(), "{text}");
    for (row, role) in rows.iter().zip(ROLES) {
        assert!(row.contains(role), "{role}: {row}\n{text}");
    }
}
