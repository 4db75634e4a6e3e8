//! A row whose values fall in two modes apart is marked ‖ in its cell and its two modes named
//! under the matrix (and given in JSON); a unimodal row beside it is not.

#![allow(clippy::unwrap_used)]

use crate::common::*;
use serde_json::{Value, json};

/// Ten values a cell: `bimodal`'s seven near 5 us and three near 65 us (a pipe round trip
/// whose processes shared a CPU in some batches), `unimodal`'s all near 7 us.
fn input() -> String {
    let mut s = String::new();
    let cells: [(&str, &[f64]); 2] = [
        (
            "bimodal",
            &[5.1, 4.9, 5.3, 65.0, 5.0, 66.0, 5.2, 64.0, 5.05, 4.95],
        ),
        (
            "unimodal",
            &[7.1, 7.0, 7.3, 7.2, 6.9, 7.05, 7.15, 7.25, 6.95, 7.1],
        ),
    ];
    for (label, v) in cells {
        for (i, us) in v.iter().enumerate() {
            s.push_str(&sample(
                label,
                "pipe",
                json!({ "rtt_s": us * 1e-6 }),
                i as u64,
            ));
            s.push('\n');
        }
    }
    complete(&s)
}

#[test]
fn a_two_cluster_row_is_marked_with_its_modes_and_a_unimodal_one_is_not() {
    let text = stdout(&run(&[], &input()));
    let row = text.lines().find(|l| l.starts_with("pipe")).unwrap();
    // The bimodal column first, then the unimodal one: one mark, on the first.
    assert_eq!(row.matches('‖').count(), 1, "{text}");
    let (first, second) = row.split_once('‖').unwrap();
    assert!(first.contains("5.15"), "{text}");
    assert!(second.contains("7.10") && !second.contains('‖'), "{text}");
    let note = text.lines().find(|l| l.starts_with("‖ ")).unwrap();
    assert!(
        note.contains("in bimodal: two modes: 5.05 us (7 values) and 65.0 us (3 values)"),
        "{note}"
    );
    assert!(!note.contains("unimodal"), "{note}");
    let j: Value = serde_json::from_slice(&run(&["-f", "json"], &input()).stdout).unwrap();
    let cells = &j["rows"][0]["cells"];
    assert_eq!(cells[0]["modes"]["n_low"], 7);
    assert_eq!(cells[0]["modes"]["n_high"], 3);
    assert!((cells[0]["modes"]["high"].as_f64().unwrap() - 65e-6).abs() < 1e-9);
    assert_eq!(cells[1]["modes"], Value::Null);
}
